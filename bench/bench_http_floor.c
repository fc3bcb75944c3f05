/*
 * bench/bench_http_floor.c - the extender round trip's floor: the same HTTP
 * server (gfhttp on libmicrohttpd) answering filter and prioritize with
 * canned bodies, doing no work: the answers gpufleet gives when every one of
 * NODES nodes (NODE_PREFIX0...) passes and scores 10, byte for byte.
 *
 *   bench_http_floor NODES [NODE_PREFIX]
 *
 * Prints the port it listens on (127.0.0.1, chosen by the kernel), then
 * serves until killed.  bench/sched-extender-bench.sh times bench_extender
 * against it and against `gpufleet schedule` in the same run: the
 * difference is what the extender's own work costs.
 */
#include <signal.h>
#include <stdbool.h>
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

/* The all-pass filter answer and the all-10 prioritize answer for n nodes. */
static bool make(long n, const char *np, struct canned *f, struct canned *p)
{
	size_t cap = (size_t)n * (strlen(np) + 40) + 256;
	f->body = malloc(cap);
	p->body = malloc(cap);
	if (!f->body || !p->body)
		return false;
	size_t fl = (size_t)snprintf(f->body, cap, "{\"Nodes\":null,\"NodeNames\":[");
	size_t pl = (size_t)snprintf(p->body, cap, "[");
	for (long i = 0; i < n; i++) {
		fl += (size_t)snprintf(f->body + fl, cap - fl, "%s\"%s%ld\"", i ? "," : "", np, i);
		pl += (size_t)snprintf(p->body + pl, cap - pl, "%s{\"Host\":\"%s%ld\",\"Score\":10}", i ? "," : "",
				       np, i);
	}
	fl += (size_t)snprintf(f->body + fl, cap - fl,
			       "],\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},\"Error\":\"\"}");
	pl += (size_t)snprintf(p->body + pl, cap - pl, "]");
	f->len = fl;
	p->len = pl;
	return true;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_http_floor NODES [NODE_PREFIX]\n");
		return 2;
	}
	long n = strtol(argv[1], NULL, 10);
	struct canned f = { 0 }, p = { 0 };
	if (n <= 0 || !make(n, argc > 2 ? argv[2] : "gpu-node-", &f, &p))
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
