/*
 * cli/cmd_replay_serving.c - `gpufleet replay --serving`: argument parsing
 * and wiring for the serving replay (autoscale/serving.h).
 *
 * Reads the trace (and the cold-start distribution, if asked), hands the
 * bytes to the engine's parsers, replays each autoscaler on the same demand,
 * prints the table and writes the CSV and HTML asked for.  A bad input is one
 * error line (file, line, column, what) and exit status 1; nothing else is
 * printed then.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/serving.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/files.h"
#include "core/duration.h"
#include "core/sort.h"

#define MAX_SCALERS 32
#define DEFAULT_SCALERS "static,oracle,hpa,warm-pool:4,predictive,adaptive:4,adaptive-rise:150:4:60"

static const char usage_text[] =
	"usage: gpufleet replay --serving [options]\n"
	"\n"
	"Replay an inference trace against autoscalers with a cold start and compare\n"
	"GPU-hours, minutes under capacity, SLO misses and replica starts.  With no\n"
	"options: the bundled 23-day GenAI request trace (Alibaba, CC BY 4.0), a 600 s\n"
	"cold start, every autoscaler.  See docs/serving.md.\n"
	"\n"
	"options:\n"
	"  --trace requests|duty|FILE  the bundled request trace (default), the bundled\n"
	"                              22.8-hour duty-cycle trace, or a CSV with timestamp\n"
	"                              (or gmt_create) and service_s (or busy_gpus)\n"
	"  --scalers LIST              comma list of static[:N], oracle, hpa, warm-pool:N,\n"
	"                              predictive, predictive+warm-pool:N, adaptive:N,\n"
	"                              adaptive-rise:P:N:T\n"
	"                              (default " DEFAULT_SCALERS ")\n"
	"  --cold-start D              replica cold start (default 600s)\n"
	"  --cold-start-from basemodel|FILE  draw each start's cold start from a latency_s\n"
	"                              CSV (basemodel: the trace's base-model switch times)\n"
	"  --model-cache D             the scheduler's served-model preference: a removed\n"
	"                              replica's node keeps the model this long, and a start\n"
	"                              there draws a warm start from the base-model switch\n"
	"                              times (default 0: off, every start cold)\n"
	"  --forecast-horizon D        predictive: forecast at now + this (default: the cold\n"
	"                              start; with a distribution its 95th percentile)\n"
	"  --target-util X             busy share per replica, (0, 1] (default 0.7)\n"
	"  --min-replicas N            (default 2)\n"
	"  --max-replicas N            (default 1000)\n"
	"  --downscale-window D        the HPA's scale-down stabilization (default 5m)\n"
	"  --slo-wait D                longest wait meeting the SLO (default: the trace's\n"
	"                              median service time)\n"
	"  --seed N                    for cold-start draws (default 42; --seeds N too)\n"
	"  --metric-window D           the HPA's metric: mean demand over the last this\n"
	"                              (15s..1h, default 1m)\n"
	"  --summary-csv FILE          scaler,gpu_hours,under_capacity_min,slo_miss_pct,starts\n"
	"  --timeline-csv FILE         per 15 s step: t,demand, then replicas and ready per scaler\n"
	"  --report FILE.html          table and charts (demand, ready, replicas over time)\n"
	"  -h, --help                  this text\n"
	"  --version                   the version and commit\n"
	"Durations: 30s, 10m, 1h30m (a plain number is seconds).  Deprecated spelling, still\n"
	"read: --horizon (--forecast-horizon; gpufleet replay's --horizon, without --serving,\n"
	"is how long the job replay runs).  docs/cli.md.\n";

/* A plain number (from 0 to max), in (0, 1] and the like: not a duration. */
static bool parse_number(const char *opt, const char *s, double max, double *out)
{
	char *e;

	*out = strtod(s, &e);
	if (e == s || *e || !(*out >= 0) || *out > max) {
		fprintf(stderr, "gpufleet replay: %s: expected a number from 0 to %.0f, found \"%s\"\n", opt, max, s);
		return false;
	}
	return true;
}

/* A duration (core/duration.h; a plain number is seconds, as before) from 0 to max seconds. */
static bool parse_seconds(const char *opt, const char *s, double max, double *out)
{
	int64_t ms;

	if (!gf_duration_parse(s, GF_MS_PER_S, &ms) || (double)ms > max * 1000) {
		fprintf(stderr, "gpufleet replay: %s: expected a number of seconds from 0 to %.0f, or a duration "
				"like 30s, 10m or 1h30m, found \"%s\"\n", opt, max, s);
		return false;
	}
	*out = (double)ms / 1000;
	return true;
}

/* parse_seconds, whole seconds, into an int32_t. */
static bool parse_whole_seconds(const char *opt, const char *s, unsigned long max, int32_t *out)
{
	double v;

	if (!parse_seconds(opt, s, (double)max, &v))
		return false;
	if (v != (double)(int32_t)v) {
		fprintf(stderr, "gpufleet replay: %s: expected whole seconds, found \"%s\"\n", opt, s);
		return false;
	}
	*out = (int32_t)v;
	return true;
}

static bool parse_int(const char *opt, const char *s, unsigned long max, int32_t *out)
{
	unsigned long v;

	if (!gf_cli_parse_ulong(s, max, &v)) {
		fprintf(stderr, "gpufleet replay: %s: expected an integer from 0 to %lu, found \"%s\"\n", opt, max, s);
		return false;
	}
	*out = (int32_t)v;
	return true;
}

static int parse_scalers(const char *list, struct gf_scaler *out, size_t *n)
{
	char buf[1024];
	char *save = NULL, *tok;

	if (strlen(list) >= sizeof(buf)) {
		fprintf(stderr, "gpufleet replay: --scalers: list too long\n");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_SCALERS) {
			fprintf(stderr, "gpufleet replay: --scalers: more than %d\n", MAX_SCALERS);
			return -1;
		}
		if (gf_scaler_parse(tok, &out[*n])) {
			fprintf(stderr, "gpufleet replay: --scalers: unknown scaler \"%s\"; expected static[:N], "
					"oracle, hpa, warm-pool:N, predictive, predictive+warm-pool:N, adaptive:N or "
					"adaptive-rise:P:N:T\n", tok);
			return -1;
		}
		(*n)++;
	}
	if (!*n) {
		fprintf(stderr, "gpufleet replay: --scalers: empty list\n");
		return -1;
	}
	return 0;
}

static int load_trace(const char *path, struct gf_serving_trace *tr)
{
	struct gf_serving_error err;
	char *data;
	size_t len;
	gf_err e;

	if (gf_read_file(path, &data, &len))
		return -1;
	e = gf_serving_parse(data, len, path, tr, &err);
	free(data);
	if (e) {
		fprintf(stderr, "gpufleet replay: %s\n", e == GF_NOMEM ? "out of memory" : err.msg);
		return -1;
	}
	return 0;
}

static int load_latencies(const char *path, double **v, size_t *n)
{
	struct gf_serving_error err;
	char *data;
	size_t len;
	gf_err e;

	if (gf_read_file(path, &data, &len))
		return -1;
	e = gf_serving_parse_latencies(data, len, path, v, n, &err);
	free(data);
	if (e) {
		fprintf(stderr, "gpufleet replay: %s\n", e == GF_NOMEM ? "out of memory" : err.msg);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct options {
	const char *trace, *scalers, *cold_from, *csv, *html, *timeline;
	double horizon, slo_wait;
	struct gf_serving_config c;
};

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "serving", no_argument, NULL, 'S' },
		{ "trace", required_argument, NULL, 't' },
		{ "scalers", required_argument, NULL, 'a' },
		{ "cold-start", required_argument, NULL, 'c' },
		{ "cold-start-from", required_argument, NULL, 'C' },
		{ "forecast-horizon", required_argument, NULL, 'F' },
		{ "horizon", required_argument, NULL, 'H' },
		{ "model-cache", required_argument, NULL, 'K' },
		{ "target-util", required_argument, NULL, 'u' },
		{ "min-replicas", required_argument, NULL, 'm' },
		{ "max-replicas", required_argument, NULL, 'M' },
		{ "downscale-window", required_argument, NULL, 'd' },
		{ "slo-wait", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 's' },
		{ "seeds", required_argument, NULL, 'Z' },
		{ "summary-csv", required_argument, NULL, 'o' },
		{ "timeline-csv", required_argument, NULL, 'T' },
		{ "metric-window", required_argument, NULL, 'W' },
		{ "report", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double x;
	int32_t i;

	optind = 1;
	opterr = 0;
	for (;;) {
		int at = optind, opt = getopt_long(argc, argv, ":h", longopts, NULL);

		if (opt == -1)
			break;
		switch (opt) {
		case 'S': break;
		case 't': o->trace = optarg; break;
		case 'a': o->scalers = optarg; break;
		case 'C': o->cold_from = optarg; break;
		case 'o': o->csv = optarg; break;
		case 'T': o->timeline = optarg; break;
		case 'W':
			if (!parse_whole_seconds("--metric-window", optarg, 3600, &o->c.metric_window_s))
				return 2;
			if (o->c.metric_window_s < GF_SERVING_STEP_S)
				return fprintf(stderr, "gpufleet replay: --metric-window: expected 15..3600\n"), 2;
			break;
		case 'r': o->html = optarg; break;
		case 'c':
			if (!parse_seconds("--cold-start", optarg, 86400, &x))
				return 2;
			o->c.cold_start_s = (int32_t)x;
			break;
		case 'K':
			if (!parse_seconds("--model-cache", optarg, 30 * 86400, &x))
				return 2;
			o->c.cache_ttl_s = (int32_t)x;
			break;
		case 'H':
			gf_cli_deprecated("replay", "--serving --horizon", "--forecast-horizon");
			/* fall through */
		case 'F':
			if (!parse_seconds(opt == 'H' ? "--horizon" : "--forecast-horizon", optarg, 86400, &o->horizon))
				return 2;
			break;
		case 'w':
			if (!parse_seconds("--slo-wait", optarg, 86400, &o->slo_wait))
				return 2;
			break;
		case 'u':
			if (!parse_number("--target-util", optarg, 1, &x) || !(x > 0))
				return fprintf(stderr, "gpufleet replay: --target-util: expected (0, 1]\n"), 2;
			o->c.target_util = x;
			break;
		case 'm':
			if (!parse_int("--min-replicas", optarg, 100000, &o->c.min_replicas))
				return 2;
			break;
		case 'M':
			if (!parse_int("--max-replicas", optarg, 100000, &o->c.max_replicas))
				return 2;
			break;
		case 'd':
			if (!parse_whole_seconds("--downscale-window", optarg, 3600, &i))
				return 2;
			o->c.behavior.down.window_s = i;
			break;
		case 's':
		case 'Z': {
			uint64_t v;

			if (!gf_cli_one_seed("replay", opt == 's' ? "--seed" : "--seeds", optarg, &v))
				return 2;
			if (v > 0xffffffffUL)
				return fprintf(stderr, "gpufleet replay: %s: expected 0..4294967295, found \"%s\"\n",
					       opt == 's' ? "--seed" : "--seeds", optarg), 2;
			o->c.seed = v;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return gf_cli_option_error("replay", opt, argv, at);
		}
	}
	if (gf_cli_operands("replay", argc, argv))
		return 2;
	if (o->c.max_replicas < o->c.min_replicas || o->c.max_replicas < 1) {
		fprintf(stderr, "gpufleet replay: --max-replicas must be at least 1 and --min-replicas\n");
		return 2;
	}
	return -1;
}

static int replay(struct options *o)
{
	struct gf_scaler scalers[MAX_SCALERS];
	struct gf_serving_result rows[MAX_SCALERS];
	struct gf_serving_trace tr = { 0 };
	struct gf_serving_demand d = { 0 };
	const char *dir = gf_data_dir();
	char trace_path[4096], cold_path[4096], cold_desc[4352], warm_path[4096], warm_desc[4352];
	double *cold = NULL, *warm = NULL;
	size_t ncold = 0, nwarm = 0, nscalers = 0, nrows = 0;
	int rc = 1;

	if (parse_scalers(o->scalers, scalers, &nscalers))
		return 2;
	if (!strcmp(o->trace, "requests") || !strcmp(o->trace, "duty"))
		snprintf(trace_path, sizeof(trace_path), "%s/genai/%s.csv", dir, o->trace);
	else
		snprintf(trace_path, sizeof(trace_path), "%s", o->trace);
	if (load_trace(trace_path, &tr))
		return 1;
	snprintf(cold_desc, sizeof(cold_desc), "%d s", o->c.cold_start_s);
	o->c.horizon_s = o->c.cold_start_s;
	if (o->cold_from) {
		if (!strcmp(o->cold_from, "basemodel"))
			snprintf(cold_path, sizeof(cold_path), "%s/genai/basemodel_switch_s.csv", dir);
		else
			snprintf(cold_path, sizeof(cold_path), "%s", o->cold_from);
		if (load_latencies(cold_path, &cold, &ncold))
			goto out;
		gf_qsort(cold, ncold, sizeof(*cold), cmp_double);
		o->c.cold_dist = cold;
		o->c.ncold = ncold;
		o->c.horizon_s = (int32_t)ceil(cold[(ncold - 1) * 95 / 100]);
		snprintf(cold_desc, sizeof(cold_desc), "drawn from %s (median %.1f s, p95 %.1f s)", cold_path,
			 cold[(ncold - 1) / 2], cold[(ncold - 1) * 95 / 100]);
	}
	if (o->c.cache_ttl_s) {
		snprintf(warm_path, sizeof(warm_path), "%s/genai/basemodel_switch_s.csv", dir);
		if (load_latencies(warm_path, &warm, &nwarm))
			goto out;
		gf_qsort(warm, nwarm, sizeof(*warm), cmp_double);
		o->c.warm_dist = warm;
		o->c.nwarm = nwarm;
		snprintf(warm_desc, sizeof(warm_desc), "drawn from %s (median %.1f s)", warm_path,
			 warm[(nwarm - 1) / 2]);
	}
	if (o->horizon >= 0)
		o->c.horizon_s = (int32_t)o->horizon;
	o->c.slo_wait_s = o->slo_wait >= 0 ? o->slo_wait : gf_serving_median_service(&tr);
	if (gf_serving_demand_build(&tr, &d)) {
		fprintf(stderr, "gpufleet replay: out of memory\n");
		goto out;
	}
	for (; nrows < nscalers; nrows++) {
		if (gf_serving_run(&tr, &d, &o->c, &scalers[nrows], &rows[nrows])) {
			fprintf(stderr, "gpufleet replay: %s: out of memory\n", scalers[nrows].name);
			goto out;
		}
	}

	struct gf_serving_report rep = {
		.trace = trace_path, .tr = &tr, .d = &d, .c = &o->c, .cold_desc = cold_desc, .warm_desc = o->c.cache_ttl_s ? warm_desc : NULL,
		.rows = rows, .nrows = nrows,
	};
	struct gf_obuf b;

	gf_obuf_init(&b, 64u << 20);
	gf_serving_table(&rep, &b);
	if (gf_obuf_error(&b)) {
		fprintf(stderr, "gpufleet replay: %s\n", gf_strerror(gf_obuf_error(&b)));
		gf_obuf_release(&b);
		goto out;
	}
	fputs(b.data, stdout);
	rc = 0;
	if (o->csv) {
		gf_obuf_reset(&b);
		gf_serving_csv(&rep, &b);
		if (gf_write_rendered("replay", o->csv, &b))
			rc = 1;
	}
	if (o->timeline) {
		gf_obuf_reset(&b);
		gf_serving_timeline_csv(&rep, &b);
		if (gf_write_rendered("replay", o->timeline, &b))
			rc = 1;
	}
	if (o->html) {
		gf_obuf_reset(&b);
		gf_serving_html(&rep, &b);
		if (gf_write_rendered("replay", o->html, &b))
			rc = 1;
	}
	gf_obuf_release(&b);
out:
	for (size_t k = 0; k < nrows; k++)
		gf_serving_result_release(&rows[k]);
	gf_serving_demand_release(&d);
	gf_serving_trace_release(&tr);
	free(cold);
	free(warm);
	return rc;
}

int gf_cmd_replay_serving(int argc, char **argv)
{
	struct options o = {
		.trace = "requests", .scalers = DEFAULT_SCALERS, .horizon = -1, .slo_wait = -1,
		.c = gf_serving_config_default(),
	};
	int rc = parse_options(argc, argv, &o);

	return rc >= 0 ? rc : replay(&o);
}
