/*
 * cli/cmd_cost.c - `gpufleet cost`: argument parsing and wiring only.
 *
 * Without --serve: one query (window, aggregate, step) against Prometheus,
 * printed as a table (or, with --json, as OpenCost's /allocation answer);
 * exit 0, 1 when Prometheus or the accounting failed, 2 for bad options.
 * With --serve: the same as GET /allocation on the shared HTTP server (TLS
 * and client-certificate or bearer-token authentication as the metrics API)
 * until SIGINT/SIGTERM (blocked before any thread starts, taken with
 * sigwaitinfo).
 */
#include <curl/curl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/files.h"
#include "core/build_info.h"
#include "core/duration.h"
#include "costapi/costapi.h"
#include "http/server.h"
#include "metricsapi/authcfg.h"

struct opts {
	const char *prom, *window, *from, *to, *aggregate, *step, *resolution, *prices, *bind, *cert,
		*key, *client_ca, *token_file, *max_window;
	bool json, no_idle, serve, insecure, log_requests, recorded;
	unsigned long port, threads, timeout_ms, max_queries, cache_mb;
	char *allowed_copy;
	char listen_host[64]; /* --listen's host part; bind points here once set */
	const char *allowed[64];
	size_t nallowed;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet cost --prometheus-url URL (--window W | --from T --to T) [options]\n"
		"       gpufleet cost --serve --prometheus-url URL [options]\n"
		"What GPUs cost per namespace, pod, node, model or label, shares counted by their\n"
		"share, with idle capacity, efficiency, and what sharing and spot saved, from the\n"
		"scheduler's allocation record in Prometheus (docs/cost.md).\n\n"
		"  --prometheus-url URL      Prometheus server (e.g. http://prometheus:9090)\n"
		"  --window W                7d, 24h, 30m, today, yesterday, week, lastweek, month,\n"
		"                            lastmonth, or START,END (RFC3339 UTC or Unix seconds)\n"
		"  --from T --to T           the window as two times (RFC3339 UTC or Unix seconds)\n"
		"  --aggregate A             namespace (default), pod, node, model, cluster,\n"
		"                            label:KEY, or a comma list\n"
		"  --step D                  one report per D of the window (default: one)\n"
		"  --resolution D            sampling step of the record (default 5m)\n"
		"  --recorded                read the hourly recording rules of\n"
		"                            data/prometheus/gpufleet-cost.rules.yml (fast for long\n"
		"                            windows; whole hours)\n"
		"  --prices FILE             price sheet (default data/prices/example.csv)\n"
		"  --no-idle                 no __idle__ row\n"
		"  --json                    print OpenCost's /allocation JSON instead of a table\n"
		"  --timeout D               per Prometheus query (default 30s)\n"
		"  --serve                   serve GET /allocation (OpenCost's shape) instead\n"
		"  --listen [ADDR]:PORT      listen address: IPv4 address (default all) and port\n"
		"                            (default :9003; port 0 = any free port)\n"
		"  --tls-cert-file PATH      serving certificate (PEM; default: self-signed)\n"
		"  --tls-private-key-file P  its key (PEM)\n"
		"  --client-ca-file PATH     accept client certificates this CA signed\n"
		"  --allowed-names A,B       ... only with these CNs (default: any it signed)\n"
		"  --token-file PATH         accept \"Authorization: Bearer <the file's first line>\"\n"
		"  --insecure-http           plain HTTP, no authentication (local tests only)\n"
		"  --threads N               HTTP worker threads (default 4)\n"
		"  --max-window D            longest window answered (default 92d)\n"
		"  --max-queries N           --serve: requests reading Prometheus at once; more\n"
		"                            get 429 (default 2; 0 = no limit)\n"
		"  --cache-mb N              --serve: answers kept for repeated requests, completed\n"
		"                            windows until evicted, recent ones for a minute\n"
		"                            (default 64; 0 = none)\n"
		"  --log-requests            one line per request on stderr, with timings\n"
		"  -h, --help                this text\n"
		"  --version                 the version and commit\n"
		"--serve also answers GET /metrics (no authentication): gpufleet_build_info.\n"
		"Durations: 30s, 5m, 1h30m, 7d.  Deprecated spellings, still read: --prometheus\n"
		"(--prometheus-url), --timeout-ms MS (--timeout), --port N and --bind-address ADDR\n"
		"(--listen).  docs/cli.md.\n");
}

/* GET /metrics: the build's identity (the API's own figures are in its answers and request log). */
static void h_build_metrics(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	gf_build_info_render(&resp->body);
}

static bool num(const char *name, const char *v, unsigned long max, unsigned long *dst)
{
	if (gf_cli_parse_ulong(v, max, dst))
		return true;
	fprintf(stderr, "gpufleet cost: %s: '%s' is not 0..%lu\n", name, v, max);
	return false;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "prometheus-url", required_argument, NULL, 'U' }, { "listen", required_argument, NULL, 'L' },
		{ "timeout", required_argument, NULL, 'O' },
		{ "prometheus", required_argument, NULL, 'P' }, { "window", required_argument, NULL, 'w' },
		{ "from", required_argument, NULL, 'F' },       { "to", required_argument, NULL, 'T' },
		{ "aggregate", required_argument, NULL, 'a' },  { "step", required_argument, NULL, 's' },
		{ "resolution", required_argument, NULL, 'r' }, { "prices", required_argument, NULL, 'p' },
		{ "no-idle", no_argument, NULL, 'I' },          { "json", no_argument, NULL, 'j' },
		{ "timeout-ms", required_argument, NULL, 'o' }, { "serve", no_argument, NULL, 'S' },
		{ "port", required_argument, NULL, 'n' },       { "bind-address", required_argument, NULL, 'b' },
		{ "tls-cert-file", required_argument, NULL, 'c' },
		{ "tls-private-key-file", required_argument, NULL, 'k' },
		{ "client-ca-file", required_argument, NULL, 'C' },
		{ "allowed-names", required_argument, NULL, 'A' },
		{ "token-file", required_argument, NULL, 't' }, { "insecure-http", no_argument, NULL, 'i' },
		{ "threads", required_argument, NULL, 'x' },    { "log-requests", no_argument, NULL, 'l' },
		{ "recorded", no_argument, NULL, 'R' },
		{ "max-window", required_argument, NULL, 'W' }, { "max-queries", required_argument, NULL, 'Q' },
		{ "cache-mb", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },             { NULL, 0, NULL, 0 },
	};
	o->port = 9003;
	o->threads = 4;
	o->timeout_ms = 30000;
	o->max_queries = 2;
	o->cache_mb = 64;
	optind = 1;
	opterr = 0;
	for (;;) {
		int at = optind;
		int opt = getopt_long(argc, argv, ":h", longopts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 'h': usage(stdout); return -1;
		case 'P':
			gf_cli_deprecated("cost", "--prometheus", "--prometheus-url");
			/* fall through */
		case 'U': o->prom = optarg; break;
		case 'L': {
			uint16_t port;
			if (!gf_cli_parse_address(optarg, o->listen_host, sizeof(o->listen_host), &port)) {
				fprintf(stderr, "gpufleet cost: --listen: '%s' is not [ADDR]:PORT\n", optarg);
				return 2;
			}
			o->bind = o->listen_host[0] ? o->listen_host : NULL;
			o->port = port;
			break;
		}
		case 'O': {
			int64_t ms;
			if (!gf_cli_duration("cost", "--timeout", optarg, GF_MS_PER_S, 0, GF_MS_PER_H, &ms))
				return 2;
			o->timeout_ms = (unsigned long)ms;
			break;
		}
		case 'w': o->window = optarg; break;
		case 'F': o->from = optarg; break;
		case 'T': o->to = optarg; break;
		case 'a': o->aggregate = optarg; break;
		case 's': o->step = optarg; break;
		case 'r': o->resolution = optarg; break;
		case 'p': o->prices = optarg; break;
		case 'I': o->no_idle = true; break;
		case 'j': o->json = true; break;
		case 'S': o->serve = true; break;
		case 'b':
			gf_cli_deprecated("cost", "--bind-address", "--listen ADDR:PORT");
			o->bind = optarg;
			break;
		case 'c': o->cert = optarg; break;
		case 'k': o->key = optarg; break;
		case 'C': o->client_ca = optarg; break;
		case 't': o->token_file = optarg; break;
		case 'i': o->insecure = true; break;
		case 'l': o->log_requests = true; break;
		case 'R': o->recorded = true; break;
		case 'o': {
			int64_t ms;
			gf_cli_deprecated("cost", "--timeout-ms", "--timeout (e.g. 30s)");
			if (!gf_cli_duration("cost", "--timeout-ms", optarg, 1, 0, GF_MS_PER_H, &ms))
				return 2;
			o->timeout_ms = (unsigned long)ms;
			break;
		}
		case 'n':
			gf_cli_deprecated("cost", "--port", "--listen ADDR:PORT");
			if (!num("--port", optarg, 65535, &o->port))
				return 2;
			break;
		case 'x': if (!num("--threads", optarg, 64, &o->threads)) return 2; break;
		case 'Q': if (!num("--max-queries", optarg, 64, &o->max_queries)) return 2; break;
		case 'M': if (!num("--cache-mb", optarg, 65536, &o->cache_mb)) return 2; break;
		case 'W': o->max_window = optarg; break;
		case 'A': {
			free(o->allowed_copy);
			o->nallowed = 0;
			if (!(o->allowed_copy = strdup(optarg)))
				return 2;
			if (!gf_cli_parse_list(o->allowed_copy, o->allowed, &o->nallowed, 64)) {
				fprintf(stderr, "gpufleet cost: --allowed-names: more than 64 names\n");
				return 2;
			}
			break;
		}
		default: return gf_cli_option_error("cost", opt, argv, at);
		}
	}
	if (gf_cli_operands("cost", argc, argv))
		return 2;
	if (!o->prom) {
		fprintf(stderr, "gpufleet cost: --prometheus-url URL is required\n");
		return 2;
	}
	if (!o->serve && !o->window == !(o->from || o->to)) {
		fprintf(stderr, "gpufleet cost: give --window, or --from and --to\n");
		return 2;
	}
	if (!o->serve && !o->window && (!o->from || !o->to)) {
		fprintf(stderr, "gpufleet cost: --from and --to go together\n");
		return 2;
	}
	if (!o->cert != !o->key) {
		fprintf(stderr, "gpufleet cost: --tls-cert-file and --tls-private-key-file go together\n");
		return 2;
	}
	if (o->serve && !o->insecure && !o->client_ca && !o->token_file) {
		fprintf(stderr, "gpufleet cost: --serve needs --client-ca-file or --token-file (or "
				"--insecure-http for local tests)\n");
		return 2;
	}
	return 0;
}

static int load_prices(const char *path, struct gf_cost_prices *p)
{
	char def[4096], *data, err[512];
	size_t len;
	if (!path) {
		snprintf(def, sizeof(def), "%s/prices/example.csv", gf_data_dir());
		path = def;
	}
	if (gf_read_file(path, &data, &len))
		return 2;
	gf_err e = gf_cost_prices_parse(data, len, path, p, err, sizeof(err));
	free(data);
	if (e) {
		fprintf(stderr, "gpufleet cost: %s\n", err);
		return 2;
	}
	return 0;
}

/* The token: the file's first line, without its line ending. */
static int read_token(const char *path, char **tok)
{
	size_t len;
	if (gf_read_file(path, tok, &len))
		return 2;
	(*tok)[strcspn(*tok, "\r\n")] = '\0';
	if (!**tok) {
		fprintf(stderr, "gpufleet cost: %s: the token is empty\n", path);
		return 2;
	}
	return 0;
}

static int run_once(gf_costapi *api, const struct opts *o)
{
	char window[256], err[1024];
	if (!o->window)
		snprintf(window, sizeof(window), "%s,%s", o->from, o->to);
	struct gf_cost_request r = { .window = o->window ? o->window : window, .aggregate = o->aggregate,
				     .step = o->step, .resolution = o->resolution,
				     .include_idle = o->no_idle ? "false" : "true", .now = (int64_t)time(NULL) };
	struct gf_obuf out;
	gf_obuf_init(&out, 1u << 30);
	struct gf_cost_timing t;
	unsigned code = gf_costapi_run(api, &r, o->json ? GF_COST_JSON : GF_COST_TABLE, &out, err, sizeof(err), &t);
	if (code != 200) {
		fprintf(stderr, "gpufleet cost: %s\n", err);
		gf_obuf_release(&out);
		return code == 400 ? 2 : 1;
	}
	fwrite(out.data, 1, out.len, stdout);
	if (o->json)
		fputc('\n', stdout);
	if (o->log_requests)
		fprintf(stderr, "gpufleet cost: prometheus %.3f s, accounting %.3f s, %zu allocation series, %zu GPUs\n",
			t.prom_seconds, t.ours_seconds, t.uses, t.gpus);
	gf_obuf_release(&out);
	return 0;
}

static int serve(gf_costapi *api, const struct opts *o, sigset_t *sigs)
{
	char *cert = NULL, *key = NULL, *ca = NULL, err[512];
	size_t len;
	int rc = 1;
	gf_http_server *srv = NULL;
	if (!o->insecure) {
		if ((o->cert && (gf_read_file(o->cert, &cert, &len) || gf_read_file(o->key, &key, &len))) ||
		    (o->client_ca && gf_read_file(o->client_ca, &ca, &len)))
			goto out;
		if (!cert) {
			static const char *const sans[] = { "gpufleet-cost.gpufleet-system.svc", "localhost" };
			if (gf_ma_selfsigned(sans, 2, &cert, &key, err, sizeof(err))) {
				fprintf(stderr, "gpufleet cost: %s\n", err);
				goto out;
			}
			fprintf(stderr, "gpufleet cost: serving with a self-signed certificate for %s\n", sans[0]);
		}
	}
	struct gf_http_route routes[5];
	size_t nroutes = gf_costapi_routes(api, routes, 4);
	routes[nroutes++] = (struct gf_http_route){ "GET", "/metrics", h_build_metrics, NULL };
	struct gf_http_config hc = { .bind_addr = o->bind, .port = (uint16_t)o->port, .routes = routes,
				     .nroutes = nroutes, .max_body = 4096, .max_response = 256u << 20,
				     .threads = (unsigned)o->threads, .timeout_s = 120, .tls_cert_pem = cert,
				     .tls_key_pem = key, .tls_client_ca_pem = ca };
	gf_err e = gf_http_server_create(&hc, &srv);
	if (e) {
		fprintf(stderr, "gpufleet cost: cannot serve on %s:%lu: %s\n", o->bind ? o->bind : "0.0.0.0",
			o->port, gf_strerror(e));
		goto out;
	}
	fprintf(stderr, "gpufleet cost: serving on %s://%s:%u/allocation (prometheus %s)\n",
		o->insecure ? "http" : "https", o->bind ? o->bind : "0.0.0.0", gf_http_server_port(srv), o->prom);
	for (;;) {
		int sig = sigwaitinfo(sigs, NULL);
		if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	fprintf(stderr, "gpufleet cost: stopping\n");
	rc = 0;
out:
	gf_http_server_destroy(srv);
	free(cert);
	free(key);
	free(ca);
	return rc;
}

int gf_cmd_cost(int argc, char **argv)
{
	struct opts o;
	memset(&o, 0, sizeof(o));
	struct gf_cost_prices prices = { 0 };
	char *token = NULL;
	gf_costapi *api = NULL;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		goto out;
	if ((rc = load_prices(o.prices, &prices)))
		goto out;
	if (o.token_file && !o.insecure && (rc = read_token(o.token_file, &token)))
		goto out;
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	if (o.serve)
		pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	struct gf_costapi_config cc = {
		.prometheus_url = o.prom, .timeout_ms = (long)o.timeout_ms, .prices = &prices,
		.auth = { .required = !o.insecure, .client_certs = o.client_ca != NULL,
			  .allowed_cns = o.allowed, .nallowed = o.nallowed, .token = token },
		.log_requests = o.log_requests,
		.recorded = o.recorded,
		/* one-shot runs ask once: no limit, nothing kept */
		.max_queries = o.serve ? (unsigned)o.max_queries : 0,
		.cache_bytes = o.serve ? (size_t)o.cache_mb << 20 : 0,
	};
	if (o.max_window) {
		char werr[200];
		if (gf_cost_parse_duration(o.max_window, &cc.max_window, werr, sizeof(werr))) {
			fprintf(stderr, "gpufleet cost: --max-window: %s\n", werr);
			rc = 2;
			goto out;
		}
	}
	if (gf_costapi_create(&cc, &api)) {
		fprintf(stderr, "gpufleet cost: out of memory\n");
		rc = 1;
		goto out;
	}
	rc = o.serve ? serve(api, &o, &sigs) : run_once(api, &o);
out:
	gf_costapi_destroy(api);
	gf_cost_prices_release(&prices);
	free(token);
	free(o.allowed_copy);
	return rc < 0 ? 0 : rc;
}
