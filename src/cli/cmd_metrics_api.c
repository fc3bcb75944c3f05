/*
 * cli/cmd_metrics_api.c - `gpufleet metrics-api`: argument parsing and
 * wiring only.
 *
 * Builds the source (the agents scraper, or the Prometheus URL and rules),
 * the optional API server connection (pod-label selectors), the
 * gf_metrics_api handler and a gfhttp server (HTTPS with the front-proxy CA
 * as client CA, or plain HTTP with --insecure-http), then waits for
 * SIGINT/SIGTERM (blocked before any thread starts, taken with
 * sigtimedwait) and stops in reverse order.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/files.h"
#include "core/build_info.h"
#include "core/duration.h"
#include "http/server.h"
#include "k8s/conn.h"
#include "metricsapi/agents.h"
#include "metricsapi/authcfg.h"
#include "metricsapi/metricsapi.h"

#define MAX_LIST 4096

/* Long options without a short letter. */
enum { OPT_LISTEN = 256, OPT_SCRAPE_INTERVAL, OPT_FORECAST_HISTORY };

struct opts {
	const char *bind, *cert, *key, *client_ca, *source, *prom_url, *kubeconfig, *agents_file;
	char *dns_host;
	unsigned long dns_port;
	unsigned long port, interval_ms, threads;
	bool insecure_http, no_kube, all_ns, log_requests, allowed_set;
	unsigned long forecast_horizon_s, forecast_history_min; /* 0: the server's defaults */
	char listen_host[64]; /* --listen's host part; o->bind points here once set */
	const char *agents[MAX_LIST];
	size_t nagents;
	struct gf_ma_rule rules[256];
	size_t nrules;
	const char *allowed[64];
	size_t nallowed;
	const char *sans[64];
	size_t nsans;
	char *owned[MAX_LIST]; /* strings split off comma lists and files */
	size_t nowned;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet metrics-api [options]\n"
		"Serve the Kubernetes external metrics API (external.metrics.k8s.io/v1beta1) so a\n"
		"stock HorizontalPodAutoscaler scales on GPU metrics (docs/metrics-api.md).\n\n"
		"  --listen [ADDR]:PORT             listen address: IPv4 address (default all) and\n"
		"                                   port (default :6443; port 0 = any free port)\n"
		"  --tls-cert-file PATH             serving certificate (PEM; default: self-signed)\n"
		"  --tls-private-key-file PATH      its key (PEM)\n"
		"  --tls-san NAME[,NAME...]         DNS names of the self-signed certificate (default\n"
		"                                   gpufleet-metrics-api.gpufleet-system.svc,localhost)\n"
		"  --requestheader-client-ca-file PATH  CA of the aggregator's client certificate\n"
		"                                   (default: from ConfigMap kube-system/\n"
		"                                   extension-apiserver-authentication)\n"
		"  --requestheader-allowed-names A,B    CNs accepted (default: from that ConfigMap,\n"
		"                                   else any the CA signed)\n"
		"  --insecure-http                  plain HTTP, no authentication (local tests only)\n"
		"  --source agents|prometheus       where the values come from (default agents)\n"
		"  --agents URL[,URL...]            agent /metrics URLs (repeatable)\n"
		"  --agents-file PATH               agent URLs, one per line\n"
		"  --agents-dns HOST[:PORT]         agents found by resolving HOST every scrape (the\n"
		"                                   agents' headless Service; port default 9400)\n"
		"  --scrape-interval D              agents scrape period (default 5s)\n"
		"  --prometheus-url URL             Prometheus server (source prometheus)\n"
		"  --prometheus-rule NAME=PROMQL    serve NAME with this template (repeatable;\n"
		"                                   <<.LabelMatchers>> becomes the selector)\n"
		"  --kubeconfig PATH                API server access for pod-label selectors\n"
		"                                   (default: in-cluster when available)\n"
		"  --no-kubernetes                  no API server access (pod-label selectors: 400)\n"
		"  --all-namespaces                 do not restrict series to the HPA's namespace\n"
		"  --threads N                      HTTP worker threads (default 4)\n"
		"  --log-requests                   one line per metric request on stderr\n"
		"  --forecast-horizon D             <metric>_forecast looks this far ahead (default\n"
		"                                   10m: the replicas' cold start; docs/serving.md)\n"
		"  --forecast-history D             history kept per forecast series, in memory, whole\n"
		"                                   minutes (1h..60d, default 8d)\n"
		"  -h, --help                       this text\n"
		"  --version                        the version and commit\n"
		"GET /metrics (no authentication) serves gpufleet_build_info.\n"
		"Durations: 30s, 5m, 1h30m (a plain number is seconds).  Deprecated spellings, still\n"
		"read: --secure-port N and --bind-address ADDR (--listen), --scrape-interval-ms MS\n"
		"(--scrape-interval), --forecast-history-minutes N (--forecast-history).  docs/cli.md.\n");
}

/* GET /metrics: the build's identity (the API's own counters are on its requests' log lines). */
static void h_build_metrics(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	gf_build_info_render(&resp->body);
}

static int add_list(struct opts *o, const char *what, const char *v, const char **arr, size_t *n,
		    size_t max)
{
	char *copy = strdup(v);
	if (!copy || o->nowned == MAX_LIST) {
		free(copy);
		fprintf(stderr, "gpufleet metrics-api: %s: out of memory or too many values\n", what);
		return 2;
	}
	o->owned[o->nowned++] = copy;
	if (!gf_cli_parse_list(copy, arr, n, max)) {
		fprintf(stderr, "gpufleet metrics-api: %s: more than %zu values\n", what, max);
		return 2;
	}
	return 0;
}

/* A number option's value in 0..max; false (said on stderr) otherwise. */
static bool parse_num(const char *name, const char *v, unsigned long max, unsigned long *dst)
{
	if (gf_cli_parse_ulong(v, max, dst))
		return true;
	fprintf(stderr, "gpufleet metrics-api: %s: '%s' is not 0..%lu\n", name, v, max);
	return false;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "scrape-interval", required_argument, NULL, OPT_SCRAPE_INTERVAL },
		{ "forecast-history", required_argument, NULL, OPT_FORECAST_HISTORY },
		{ "secure-port", required_argument, NULL, 'p' },
		{ "bind-address", required_argument, NULL, 'b' },
		{ "tls-cert-file", required_argument, NULL, 'c' },
		{ "tls-private-key-file", required_argument, NULL, 'k' },
		{ "tls-san", required_argument, NULL, 's' },
		{ "requestheader-client-ca-file", required_argument, NULL, 'C' },
		{ "requestheader-allowed-names", required_argument, NULL, 'A' },
		{ "insecure-http", no_argument, NULL, 'i' },
		{ "source", required_argument, NULL, 'S' },
		{ "agents", required_argument, NULL, 'a' },
		{ "agents-file", required_argument, NULL, 'f' },
		{ "agents-dns", required_argument, NULL, 'd' },
		{ "scrape-interval-ms", required_argument, NULL, 'I' },
		{ "prometheus-url", required_argument, NULL, 'u' },
		{ "prometheus-rule", required_argument, NULL, 'r' },
		{ "kubeconfig", required_argument, NULL, 'K' },
		{ "no-kubernetes", no_argument, NULL, 'N' },
		{ "all-namespaces", no_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "log-requests", no_argument, NULL, 'l' },
		{ "forecast-horizon", required_argument, NULL, 'F' },
		{ "forecast-history-minutes", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	o->port = 6443;
	o->interval_ms = 5000;
	o->threads = 4;
	o->source = "agents";
	optind = 1;
	opterr = 0; /* ':' and '?' below say it in the words scripts and tests know */
	for (;;) {
		int at = optind; /* for gf_cli_option_error() */
		int opt = getopt_long(argc, argv, ":h", longopts, NULL);

		if (opt == -1)
			break;
		switch (opt) {
		case 'h':
			usage(stdout);
			return -1;
		case 'b':
			gf_cli_deprecated("metrics-api", "--bind-address", "--listen ADDR:PORT");
			o->bind = optarg;
			break;
		case OPT_LISTEN: {
			uint16_t port;
			if (!gf_cli_parse_address(optarg, o->listen_host, sizeof(o->listen_host), &port)) {
				fprintf(stderr, "gpufleet metrics-api: --listen: '%s' is not [ADDR]:PORT\n", optarg);
				return 2;
			}
			o->bind = o->listen_host[0] ? o->listen_host : NULL;
			o->port = port;
			break;
		}
		case 'c': o->cert = optarg; break;
		case 'k': o->key = optarg; break;
		case 'C': o->client_ca = optarg; break;
		case 'i': o->insecure_http = true; break;
		case 'f': o->agents_file = optarg; break;
		case 'u': o->prom_url = optarg; break;
		case 'K': o->kubeconfig = optarg; break;
		case 'N': o->no_kube = true; break;
		case 'n': o->all_ns = true; break;
		case 'l': o->log_requests = true; break;
		case 'p':
			gf_cli_deprecated("metrics-api", "--secure-port", "--listen ADDR:PORT");
			if (!parse_num("--secure-port", optarg, 65535, &o->port))
				return 2;
			break;
		case 'I':
		case OPT_SCRAPE_INTERVAL: {
			int64_t ms;
			if (opt == 'I')
				gf_cli_deprecated("metrics-api", "--scrape-interval-ms", "--scrape-interval (e.g. 5s)");
			if (!gf_cli_duration("metrics-api", opt == 'I' ? "--scrape-interval-ms" : "--scrape-interval", optarg,
					     opt == 'I' ? 1 : GF_MS_PER_S, 0, GF_MS_PER_H, &ms))
				return 2;
			o->interval_ms = (unsigned long)ms;
			break;
		}
		case 't':
			if (!parse_num("--threads", optarg, 64, &o->threads))
				return 2;
			break;
		case 'F': {
			int64_t sec;
			if (!gf_cli_whole_seconds("metrics-api", "--forecast-horizon", optarg, 0, 86400, &sec))
				return 2;
			o->forecast_horizon_s = (unsigned long)sec;
			break;
		}
		case 'H':
			gf_cli_deprecated("metrics-api", "--forecast-history-minutes", "--forecast-history (e.g. 8d)");
			if (!parse_num("--forecast-history-minutes", optarg, 86400, &o->forecast_history_min))
				return 2;
			if (o->forecast_history_min < 60) {
				fprintf(stderr, "gpufleet metrics-api: --forecast-history-minutes: '%s' is not 60..86400\n", optarg);
				return 2;
			}
			break;
		case OPT_FORECAST_HISTORY: {
			int64_t ms;
			if (!gf_cli_duration("metrics-api", "--forecast-history", optarg, GF_MS_PER_S, GF_MS_PER_H,
					     86400 * GF_MS_PER_MIN, &ms))
				return 2;
			if (ms % GF_MS_PER_MIN) {
				fprintf(stderr, "gpufleet metrics-api: --forecast-history: '%s' is not whole minutes\n", optarg);
				return 2;
			}
			o->forecast_history_min = (unsigned long)(ms / GF_MS_PER_MIN);
			break;
		}
		case 's':
			if (add_list(o, "--tls-san", optarg, o->sans, &o->nsans, 64))
				return 2;
			break;
		case 'A':
			o->allowed_set = true;
			if (add_list(o, "--requestheader-allowed-names", optarg, o->allowed, &o->nallowed, 64))
				return 2;
			break;
		case 'a':
			if (add_list(o, "--agents", optarg, o->agents, &o->nagents, MAX_LIST))
				return 2;
			break;
		case 'S':
			if (strcmp(optarg, "agents") && strcmp(optarg, "prometheus")) {
				fprintf(stderr, "gpufleet metrics-api: --source: '%s' is not agents or prometheus\n", optarg);
				return 2;
			}
			o->source = optarg;
			break;
		case 'd': {
			const char *c = strrchr(optarg, ':');

			o->dns_port = 9400;
			if (c && !gf_cli_parse_ulong(c + 1, 65535, &o->dns_port)) {
				fprintf(stderr, "gpufleet metrics-api: --agents-dns: '%s' is not HOST[:PORT]\n", optarg);
				return 2;
			}
			free(o->dns_host);
			o->dns_host = c ? strndup(optarg, (size_t)(c - optarg)) : strdup(optarg);
			if (!o->dns_host || !o->dns_host[0]) {
				fprintf(stderr, "gpufleet metrics-api: --agents-dns: '%s' has no host\n", optarg);
				return 2;
			}
			break;
		}
		case 'r': {
			const char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || !eq[1] || o->nrules == 256 || o->nowned == MAX_LIST) {
				fprintf(stderr, "gpufleet metrics-api: --prometheus-rule: '%s' is not NAME=PROMQL\n", optarg);
				return 2;
			}
			char *name = strndup(optarg, (size_t)(eq - optarg));
			if (!name)
				return 2;
			o->owned[o->nowned++] = name;
			o->rules[o->nrules++] = (struct gf_ma_rule){ name, eq + 1 };
			break;
		}
		default: /* ':' no value, '?' unknown */
			return gf_cli_option_error("metrics-api", opt, argv, at);
		}
	}
	if (gf_cli_operands("metrics-api", argc, argv))
		return 2;
	return 0;
}

static int read_agents_file(struct opts *o)
{
	char *data;
	size_t len;
	if (gf_read_file(o->agents_file, &data, &len))
		return 1;
	if (o->nowned == MAX_LIST) {
		free(data);
		return 1;
	}
	o->owned[o->nowned++] = data;
	char *save = NULL;
	for (char *t = strtok_r(data, "\r\n", &save); t; t = strtok_r(NULL, "\r\n", &save)) {
		while (*t == ' ' || *t == '\t')
			t++;
		if (!*t || *t == '#')
			continue;
		if (o->nagents == MAX_LIST) {
			fprintf(stderr, "gpufleet metrics-api: %s: more than %d agents\n", o->agents_file, MAX_LIST);
			return 1;
		}
		o->agents[o->nagents++] = t;
	}
	return 0;
}

static int check_opts(const struct opts *o)
{
	bool prom = !strcmp(o->source, "prometheus");
	if (prom && !o->prom_url) {
		fprintf(stderr, "gpufleet metrics-api: --source prometheus needs --prometheus-url\n");
		return 2;
	}
	if (!prom && !o->nagents && !o->dns_host) {
		fprintf(stderr, "gpufleet metrics-api: --source agents needs --agents, --agents-file or --agents-dns\n");
		return 2;
	}
	if (!prom && o->nrules) {
		fprintf(stderr, "gpufleet metrics-api: --prometheus-rule needs --source prometheus\n");
		return 2;
	}
	if (!o->cert != !o->key) {
		fprintf(stderr, "gpufleet metrics-api: --tls-cert-file and --tls-private-key-file go together\n");
		return 2;
	}
	if (!o->insecure_http && !o->client_ca && o->no_kube) {
		fprintf(stderr, "gpufleet metrics-api: without API server access (--no-kubernetes) HTTPS needs "
				"--requestheader-client-ca-file (or --insecure-http for local tests)\n");
		return 2;
	}
	return 0;
}

int gf_cmd_metrics_api(int argc, char **argv)
{
	struct opts *o = calloc(1, sizeof(*o));
	if (!o) {
		fprintf(stderr, "gpufleet metrics-api: out of memory\n");
		return 1;
	}
	int rc = parse_opts(argc, argv, o);
	if (!rc && o->agents_file)
		rc = read_agents_file(o);
	if (!rc)
		rc = check_opts(o);
	char *cert = NULL, *key = NULL, *ca = NULL;
	size_t len;
	gf_ma_agents *agents = NULL;
	gf_metrics_api *api = NULL;
	gf_http_server *srv = NULL;
	struct gf_kube_conn kc;
	bool have_kube = false;
	char err[512];
	if (rc)
		goto out;
	rc = 1;
	if (!o->insecure_http && ((o->cert && (gf_read_file(o->cert, &cert, &len) ||
					       gf_read_file(o->key, &key, &len))) ||
				  (o->client_ca && gf_read_file(o->client_ca, &ca, &len))))
		goto out;

	/* Block the stop signals before any thread exists; taken below. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	if (!o->no_kube) {
		gf_err e = gf_kube_conn_open(&kc, o->kubeconfig, err, sizeof(err));
		if (!e) {
			have_kube = true;
		} else if (o->kubeconfig || e != GF_UNAVAILABLE) {
			fprintf(stderr, "gpufleet metrics-api: API server access: %s\n", err);
			goto out;
		} else {
			fprintf(stderr, "gpufleet metrics-api: not in a cluster and no --kubeconfig: "
					"selectors on pod labels will be refused\n");
		}
	}
	if (!o->insecure_http && !ca) {
		/* The front-proxy CA and allowed names as kube-apiserver publishes them. */
		if (!have_kube) {
			fprintf(stderr, "gpufleet metrics-api: no --requestheader-client-ca-file and no API "
					"server access to read it from kube-system/extension-apiserver-authentication\n");
			goto out;
		}
		struct gf_ma_authcfg ac;
		if (gf_ma_authcfg_fetch(&kc, &ac, err, sizeof(err))) {
			fprintf(stderr, "gpufleet metrics-api: %s\n", err);
			goto out;
		}
		ca = ac.client_ca_pem;
		ac.client_ca_pem = NULL;
		if (!o->allowed_set) {
			for (size_t i = 0; i < ac.nallowed && o->nallowed < 64 && o->nowned < MAX_LIST; i++) {
				o->owned[o->nowned++] = ac.allowed_names[i];
				o->allowed[o->nallowed++] = ac.allowed_names[i];
				ac.allowed_names[i] = NULL;
			}
		}
		gf_ma_authcfg_release(&ac);
		fprintf(stderr, "gpufleet metrics-api: front-proxy CA and %zu allowed name(s) from "
				"kube-system/extension-apiserver-authentication\n", o->nallowed);
	}
	if (!o->insecure_http && !cert) {
		static const char *const defsans[] = { "gpufleet-metrics-api.gpufleet-system.svc", "localhost" };
		const char *const *sans = o->nsans ? o->sans : defsans;
		size_t nsans = o->nsans ? o->nsans : 2;
		if (gf_ma_selfsigned(sans, nsans, &cert, &key, err, sizeof(err))) {
			fprintf(stderr, "gpufleet metrics-api: %s\n", err);
			goto out;
		}
		fprintf(stderr, "gpufleet metrics-api: serving with a self-signed certificate for %s "
				"(register the APIService with insecureSkipTLSVerify, or give --tls-cert-file)\n",
			sans[0]);
	}
	bool prom = !strcmp(o->source, "prometheus");
	if (!prom) {
		struct gf_ma_agents_config ac = { .urls = o->agents, .nurls = o->nagents,
						  .interval_ms = (unsigned)o->interval_ms,
						  .dns_name = o->dns_host, .dns_port = (unsigned)o->dns_port };
		if (gf_ma_agents_create(&ac, &agents)) {
			fprintf(stderr, "gpufleet metrics-api: cannot start the agents scraper\n");
			goto out;
		}
	}
	struct gf_metrics_api_config mc = {
		.source = prom ? GF_MA_SOURCE_PROMETHEUS : GF_MA_SOURCE_AGENTS,
		.agents = agents,
		.prometheus_url = o->prom_url,
		.rules = o->rules,
		.nrules = o->nrules,
		.kube = have_kube ? &kc : NULL,
		.all_namespaces = o->all_ns,
		.authenticate = !o->insecure_http,
		.allowed_names = o->allowed,
		.nallowed = o->nallowed,
		.log_requests = o->log_requests,
		.forecast_horizon_s = (int32_t)o->forecast_horizon_s,
		.forecast_history_min = (int32_t)o->forecast_history_min,
	};
	gf_err e = gf_metrics_api_create(&mc, &api);
	if (e) {
		fprintf(stderr, "gpufleet metrics-api: %s (check the --prometheus-rule names)\n", gf_strerror(e));
		goto out;
	}
	struct gf_http_route routes[9];
	size_t nroutes = gf_metrics_api_routes(api, routes, 8);
	routes[nroutes++] = (struct gf_http_route){ "GET", "/metrics", h_build_metrics, NULL };
	struct gf_http_config hc = {
		.bind_addr = o->bind,
		.port = (uint16_t)o->port,
		.routes = routes,
		.nroutes = nroutes,
		.max_body = 4096,
		.max_response = 4u << 20,
		.threads = (unsigned)o->threads,
		.tls_cert_pem = cert,
		.tls_key_pem = key,
		.tls_client_ca_pem = ca,
	};
	e = gf_http_server_create(&hc, &srv);
	if (e) {
		fprintf(stderr, "gpufleet metrics-api: cannot serve on %s:%lu: %s\n",
			o->bind ? o->bind : "0.0.0.0", o->port, gf_strerror(e));
		goto out;
	}
	fprintf(stderr, "gpufleet metrics-api: source %s, serving on %s://%s:%u/apis/external.metrics.k8s.io/v1beta1\n",
		o->source, o->insecure_http ? "http" : "https", o->bind ? o->bind : "0.0.0.0",
		gf_http_server_port(srv));
	for (;;) {
		int sig = sigwaitinfo(&sigs, NULL);
		if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	fprintf(stderr, "gpufleet metrics-api: stopping\n");
	rc = 0;
out:
	gf_http_server_destroy(srv);
	gf_metrics_api_destroy(api);
	gf_ma_agents_destroy(agents);
	if (have_kube)
		gf_kube_conn_release(&kc);
	free(cert);
	free(key);
	free(ca);
	for (size_t i = 0; i < o->nowned; i++)
		free(o->owned[i]);
	free(o->dns_host);
	free(o);
	return rc < 0 ? 0 : rc;
}
