/*
 * bench/bench_http_floor.c - the extender round trip's floor: the same HTTP
 * server (gfhttp on libmicrohttpd) answering filter and prioritize with
 * canned bodies of the sizes gpufleet's answers have, doing no work.
 *
 *   bench_http_floor FILTER_BYTES PRIORITIZE_BYTES
 *
 * Prints the port it listens on (127.0.0.1, chosen by the kernel), then
 * serves until killed.  bench/sched-extender-bench.sh times bench_extender
 * against it and against `gpufleet schedule` in the same run: the
 * difference is what the extender's own work costs.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http/server.h"

struct canned {
	char *body;
	size_t len;
};

static void answer(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	const struct canned *c = ud;
	(void)req;
	resp->content_type = "application/json";
	gf_obuf_append(&resp->body, c->body, c->len);
}

static struct canned make(long n)
{
	struct canned c = { malloc(n > 0 ? (size_t)n : 1), n > 0 ? (size_t)n : 0 };
	if (c.body)
		memset(c.body, ' ', c.len);
	return c;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench_http_floor FILTER_BYTES PRIORITIZE_BYTES\n");
		return 2;
	}
	struct canned f = make(strtol(argv[1], NULL, 10)), p = make(strtol(argv[2], NULL, 10));
	if (!f.body || !p.body)
		return 1;
	struct gf_http_route routes[] = {
		{ "POST", "/gpusched/filter", answer, &f },
		{ "POST", "/gpusched/prioritize", answer, &p },
	};
	/* the limits gpufleet schedule uses for its extender */
	struct gf_http_config cfg = { .bind_addr = "127.0.0.1", .routes = routes, .nroutes = 2,
				      .max_body = 64u << 20, .max_response = 64u << 20 };
	gf_http_server *s;
	if (gf_http_server_create(&cfg, &s)) {
		fprintf(stderr, "bench_http_floor: cannot listen\n");
		return 1;
	}
	printf("%u\n", gf_http_server_port(s));
	fflush(stdout);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sig;
	sigwait(&set, &sig);
	gf_http_server_destroy(s);
	free(f.body);
	free(p.body);
	return 0;
}
