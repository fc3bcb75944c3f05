/*
 * tests/rawclient.h - a raw TCP client for the HTTP servers' hostile-client
 * tests (include after cmocka.h): connect from a chosen loopback address
 * (the whole of 127.0.0.0/8 is local on Linux, so one test plays many
 * client addresses), send bytes one at a time, read what comes back, and
 * tell when the server has closed the connection.
 */
#ifndef GF_TESTS_RAWCLIENT_H
#define GF_TESTS_RAWCLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double rc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void rc_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A connection from src (e.g. "127.0.0.2") to 127.0.0.1:port; -1 on failure. */
static inline int rc_dial(const char *src, uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET };
	inet_pton(AF_INET, src, &a.sin_addr);
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, "127.0.0.1", &b.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || connect(fd, (struct sockaddr *)&b, sizeof(b))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send all of p; false when the peer is gone. */
static inline bool rc_send(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
		if (k <= 0)
			return false;
		c += k;
		n -= (size_t)k;
	}
	return true;
}

/* True when the server has closed fd (end of stream or reset) within
 * wait_ms; bytes it sent first are read and dropped. */
static inline bool rc_closed(int fd, int wait_ms)
{
	double end = rc_now() + wait_ms / 1000.0;
	for (;;) {
		int left = (int)((end - rc_now()) * 1000);
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, left > 0 ? left : 0) <= 0)
			return false;
		char buf[4096];
		ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
}

/* Read until the server closes (or wait_ms pass); returns the bytes read
 * (NUL-terminated, at most n-1). */
static inline size_t rc_read_all(int fd, char *buf, size_t n, int wait_ms)
{
	size_t got = 0;
	double end = rc_now() + wait_ms / 1000.0;
	while (got + 1 < n) {
		int left = (int)((end - rc_now()) * 1000);
		struct pollfd p = { fd, POLLIN, 0 };
		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		ssize_t k = recv(fd, buf + got, n - 1 - got, 0);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	buf[got] = '\0';
	return got;
}

#endif /* GF_TESTS_RAWCLIENT_H */
