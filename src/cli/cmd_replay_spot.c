/*
 * cli/cmd_replay_spot.c - `gpufleet replay --spot` / `--spot-trace FILE`:
 * argument parsing and wiring for the spot replay (sim/spot.h).
 *
 * Reads the node and pod lists and the availability traces (cli/spottrace.h),
 * runs one replay per (mode, seed) on a pool of threads (independent runs
 * over one prepared experiment: the output does not depend on the thread
 * count), prints the per-mode, per-class table (means over seeds) and
 * writes the summary CSV and the HTML report (cost rate and lost work over
 * time, a line per mode).  Wall time goes to stderr.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/experiment.h"
#include "cli/files.h"
#include "cli/spottrace.h"
#include "core/htmlrep.h"
#include "core/obuf.h"
#include "queue/spot.h"
#include "sim/spot.h"

#define MAX_SEEDS 1000
#define MAX_TRACES 16

static const char usage_text[] =
	"usage: gpufleet replay --spot [options]\n"
	"       gpufleet replay --spot-trace FILE [--spot-trace FILE...] [options]\n"
	"\n"
	"Replay the openb scenario on a cluster split into an on-demand part and spot\n"
	"pools whose capacity follows availability traces (the \"Can't Be Late\" JSON\n"
	"format: metadata.gap_seconds, data[] = instances available per tick), and\n"
	"compare four ways of handling spot notices on the same jobs: on-demand (no\n"
	"spot), kube (notices ignored), drain (cordon and evict on the notice) and\n"
	"gpufleet (checkpoint-aware stops, place in the queue kept).  docs/spot.md.\n"
	"\n"
	"options:\n"
	"  --spot                  the bundled traces (data/spot/zone-a.json, zone-b.json)\n"
	"  --spot-trace FILE       one spot pool per file (repeatable; replaces --spot's)\n"
	"  --notice T              notice before a reclaim [120s]\n"
	"  --drain-grace T         drain: an evicted pod's grace period [30s]\n"
	"  --kube-restart K        kube: a killed job resumes from its last periodic\n"
	"                          checkpoint (checkpoint) or from zero (zero) [checkpoint]\n"
	"  --modes LIST            on-demand,kube,drain,gpufleet [all four]\n"
	"  --price-on-demand X     price per GPU-hour on on-demand nodes [2.50]\n"
	"  --price-spot X          price per GPU-hour on spot nodes [1.00]\n"
	"  --training-load X       GPU load offered by the training stream, [0, 1] [0.08]\n"
	"  --deadline-factor F     training and burst deadline: arrival + F x run time [3]\n"
	"  --spot-until T          trace events and accounting stop then [36h]\n"
	"  --nodes FILE, --pods FILE, --load X [0.8], --horizon T [12h], --burst off|T [4h],\n"
	"  --seeds LIST [42-51], --seed N, --threads N, --quiet: as gpufleet replay\n"
	"  --summary-csv FILE      mode,seed,class,jobs,wait_p95_s,jct_mean_s,gpu_hours_spot,\n"
	"                          gpu_hours_on_demand,cost,lost_gpu_hours,restarts,deadline_misses\n"
	"  --report FILE.html      self-contained HTML report\n"
	"  -h, --help              this text\n";

enum { O_SPOT = 256, O_TRACE, O_NOTICE, O_GRACE, O_MODES, O_POD, O_PSPOT, O_TLOAD, O_DLF, O_UNTIL, O_NODES,
       O_PODS, O_LOAD, O_HORIZON, O_BURST, O_SEEDS, O_SEED, O_THREADS, O_QUIET, O_CSV, O_REPORT, O_KUBE };

struct run {
	const gf_replay *x;
	struct gf_spot_replay_config cfg;
	struct gf_spot_result res;
	gf_err err;
};

static void run_one(void *ctx, size_t i)
{
	struct run *r = (struct run *)ctx + i;

	r->err = gf_spot_replay_run(r->x, &gf_policy_fgd, &r->cfg, &r->res);
}

static int bad(const char *opt, const char *what, const char *found)
{
	fprintf(stderr, "gpufleet replay: %s: expected %s, got '%s'\n", opt, what, found);
	return 2;
}

static bool num_in(const char *s, double lo, double hi, double *out)
{
	char *e;
	double v = strtod(s, &e);

	if (e == s || *e || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

static bool parse_modes(const char *arg, bool *on)
{
	char buf[128];
	const char *names[GF_SPOT_MODE_COUNT + 1];
	size_t n;

	if (strlen(arg) >= sizeof(buf))
		return false;
	memcpy(buf, arg, strlen(arg) + 1);
	if (!gf_cli_parse_list(buf, names, &n, GF_SPOT_MODE_COUNT + 1) || n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		int m = 0;

		while (m < GF_SPOT_MODE_COUNT && strcmp(names[i], gf_spot_mode_name((enum gf_spot_mode)m)))
			m++;
		if (m == GF_SPOT_MODE_COUNT)
			return false;
		on[m] = true;
	}
	return true;
}

static struct gf_spot_class_stats mean_of(const struct run *runs, int nseeds, int m, int c)
{
	struct gf_spot_class_stats a;

	memset(&a, 0, sizeof(a));
	for (int i = 0; i < nseeds; i++) {
		const struct gf_spot_class_stats *s = &runs[m * nseeds + i].res.cls[c];

		a.jobs += s->jobs;
		a.wait_p95_s += s->wait_p95_s / nseeds;
		a.jct_mean_s += s->jct_mean_s / nseeds;
		a.gpu_h_spot += s->gpu_h_spot / nseeds;
		a.gpu_h_on_demand += s->gpu_h_on_demand / nseeds;
		a.cost += s->cost / nseeds;
		a.lost_gpu_h += s->lost_gpu_h / nseeds;
		a.restarts += s->restarts;
		a.deadline_misses += s->deadline_misses;
	}
	return a;
}

static void summary_csv(struct gf_obuf *b, const struct run *runs, size_t nruns)
{
	gf_obuf_puts(b, "mode,seed,class,jobs,wait_p95_s,jct_mean_s,gpu_hours_spot,gpu_hours_on_demand,cost,"
			"lost_gpu_hours,restarts,deadline_misses\n");
	for (size_t r = 0; r < nruns; r++)
		for (int c = 0; c < GF_SC_COUNT; c++) {
			const struct gf_spot_class_stats *s = &runs[r].res.cls[c];

			gf_obuf_printf(b, "%s,%llu,%s,%lld,%.0f,%.1f,%.3f,%.3f,%.2f,%.3f,%lld,%lld\n",
				       gf_spot_mode_name(runs[r].cfg.mode), (unsigned long long)runs[r].cfg.base.seed,
				       gf_spot_class_name((enum gf_spot_class)c), (long long)s->jobs, s->wait_p95_s,
				       s->jct_mean_s, s->gpu_h_spot, s->gpu_h_on_demand, s->cost, s->lost_gpu_h,
				       (long long)s->restarts, (long long)s->deadline_misses);
		}
}

static void print_table(struct gf_obuf *b, const struct run *runs, const int *modes, int nm, int nseeds)
{
	gf_obuf_printf(b, "%-10s %-9s %7s %9s %9s %9s %9s %10s %8s %8s %7s\n", "mode", "class", "jobs", "wait p95",
		       "JCT mean", "spot GPUh", "OD GPUh", "cost", "lost GPUh", "restarts", "missed");
	for (int m = 0; m < nm; m++)
		for (int c = 0; c < GF_SC_COUNT; c++) {
			struct gf_spot_class_stats a = mean_of(runs, nseeds, m, c);

			gf_obuf_printf(b, "%-10s %-9s %7.1f %9.0f %9.0f %9.1f %9.1f %10.2f %8.2f %8.1f %7.1f\n",
				       gf_spot_mode_name((enum gf_spot_mode)modes[m]),
				       gf_spot_class_name((enum gf_spot_class)c), (double)a.jobs / nseeds, a.wait_p95_s,
				       a.jct_mean_s, a.gpu_h_spot, a.gpu_h_on_demand, a.cost, a.lost_gpu_h,
				       (double)a.restarts / nseeds, (double)a.deadline_misses / nseeds);
		}
}

/* A line per mode over the first seed's timeline: cost rate (lost false) or lost work so far. */
static void html_chart(struct gf_obuf *b, const struct run *runs, const int *modes, int nm, int nseeds, bool lost)
{
	struct gf_chart_line lines[GF_SPOT_MODE_COUNT];
	size_t n = 0;
	double *buf;

	for (int m = 0; m < nm; m++)
		n = runs[m * nseeds].res.ntimeline > n ? runs[m * nseeds].res.ntimeline : n;
	if (!(buf = malloc(2 * (n ? n : 1) * (size_t)nm * sizeof(*buf)))) {
		b->err = b->err ? b->err : GF_NOMEM;
		return;
	}
	for (int m = 0; m < nm; m++) {
		const struct gf_spot_result *r = &runs[m * nseeds].res;
		double *xs = buf + 2 * n * (size_t)m, *ys = xs + n;

		for (size_t k = 0; k < r->ntimeline; k++) {
			xs[k] = (double)r->timeline[k].time / 3600.0;
			ys[k] = lost ? r->timeline[k].lost_gpu_h : r->timeline[k].cost_per_h;
		}
		lines[m] = (struct gf_chart_line){ .label = gf_spot_mode_name((enum gf_spot_mode)modes[m]),
						   .n = r->ntimeline, .x = xs, .y = ys };
	}
	struct gf_line_chart ch = {
		.title = lost ? "Lost work so far (first seed)" : "Cost rate over time (first seed)",
		.x_label = "time since the start, hours", .y_label = lost ? "lost GPU-hours" : "cost per hour",
		.x_unit = " h", .y_unit = lost ? " GPU-h" : " /h", .x_decimals = 2, .y_decimals = 1, .y_zero = true,
		.y_floor = 0, .y_ceil = NAN, .nlines = nm, .lines = lines,
	};

	gf_html_line_chart(b, &ch);
	free(buf);
}

static void report_html(struct gf_obuf *b, const char *title, const char *table, const struct run *runs,
			const int *modes, int nm, int nseeds)
{
	gf_html_begin(b, "gpufleet replay --spot", "gpufleet replay --spot");
	gf_obuf_puts(b, "<p>");
	gf_html_text(b, title);
	gf_obuf_puts(b, "</p>\n<pre>");
	gf_html_text(b, table);
	gf_obuf_puts(b, "</pre>\n");
	html_chart(b, runs, modes, nm, nseeds, false);
	html_chart(b, runs, modes, nm, nseeds, true);
	gf_html_end(b);
}

struct opts {
	const char *traces[MAX_TRACES];
	int ntraces;
	bool spot;
	bool modes[GF_SPOT_MODE_COUNT];
	const char *nodes, *pods, *seeds, *csv, *html;
	long threads;
	bool quiet;
	struct gf_spot_replay_config cfg;
};

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "spot", no_argument, 0, O_SPOT }, { "spot-trace", required_argument, 0, O_TRACE },
		{ "notice", required_argument, 0, O_NOTICE }, { "drain-grace", required_argument, 0, O_GRACE },
		{ "modes", required_argument, 0, O_MODES }, { "price-on-demand", required_argument, 0, O_POD },
		{ "price-spot", required_argument, 0, O_PSPOT }, { "training-load", required_argument, 0, O_TLOAD },
		{ "deadline-factor", required_argument, 0, O_DLF }, { "spot-until", required_argument, 0, O_UNTIL },
		{ "nodes", required_argument, 0, O_NODES }, { "pods", required_argument, 0, O_PODS },
		{ "load", required_argument, 0, O_LOAD }, { "horizon", required_argument, 0, O_HORIZON },
		{ "burst", required_argument, 0, O_BURST }, { "seeds", required_argument, 0, O_SEEDS },
		{ "seed", required_argument, 0, O_SEED }, { "threads", required_argument, 0, O_THREADS },
		{ "quiet", no_argument, 0, O_QUIET }, { "summary-csv", required_argument, 0, O_CSV },
		{ "report", required_argument, 0, O_REPORT }, { "kube-restart", required_argument, 0, O_KUBE },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	int c;
	unsigned long ul;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_SPOT:
			o->spot = true;
			break;
		case O_TRACE:
			if (o->ntraces == MAX_TRACES)
				return bad("--spot-trace", "at most 16 traces", optarg);
			o->traces[o->ntraces++] = optarg;
			break;
		case O_NOTICE:
			if (!gf_cli_whole_seconds("replay", "--notice", optarg, 0, 86400, &o->cfg.notice))
				return 2;
			break;
		case O_GRACE:
			if (!gf_cli_whole_seconds("replay", "--drain-grace", optarg, 0, 86400, &o->cfg.drain_grace))
				return 2;
			break;
		case O_MODES:
			memset(o->modes, 0, sizeof(o->modes));
			if (!parse_modes(optarg, o->modes))
				return bad("--modes", "a list of on-demand, kube, drain, gpufleet", optarg);
			break;
		case O_POD:
			if (!num_in(optarg, 0, 1e6, &o->cfg.price_on_demand))
				return bad("--price-on-demand", "a price >= 0", optarg);
			break;
		case O_PSPOT:
			if (!num_in(optarg, 0, 1e6, &o->cfg.price_spot))
				return bad("--price-spot", "a price >= 0", optarg);
			break;
		case O_TLOAD:
			if (!num_in(optarg, 0, 1, &o->cfg.training_load))
				return bad("--training-load", "a fraction in [0, 1]", optarg);
			break;
		case O_DLF:
			if (!num_in(optarg, 1, 1000, &o->cfg.deadline_factor))
				return bad("--deadline-factor", "a factor in [1, 1000]", optarg);
			break;
		case O_UNTIL:
			if (!gf_cli_whole_seconds("replay", "--spot-until", optarg, 0, INT32_MAX, &o->cfg.spot_until))
				return 2;
			break;
		case O_NODES:
			o->nodes = optarg;
			break;
		case O_PODS:
			o->pods = optarg;
			break;
		case O_LOAD:
			if (!num_in(optarg, 1e-9, 2, &o->cfg.base.load))
				return bad("--load", "a fraction in (0, 2]", optarg);
			break;
		case O_HORIZON:
			if (!gf_cli_whole_seconds("replay", "--horizon", optarg, 1, INT32_MAX, &o->cfg.base.horizon))
				return 2;
			break;
		case O_BURST:
			if (!strcmp(optarg, "off"))
				o->cfg.base.burst = false;
			else if (!gf_cli_whole_seconds("replay", "--burst", optarg, 0, INT32_MAX, &o->cfg.base.burst_at))
				return 2;
			else
				o->cfg.base.burst = true;
			break;
		case O_SEEDS:
			o->seeds = optarg;
			break;
		case O_SEED:
			o->seeds = optarg;
			if (!gf_cli_parse_ulong(optarg, UINT32_MAX, &ul))
				return bad("--seed", "a number", optarg);
			break;
		case O_THREADS:
			if (!gf_cli_parse_ulong(optarg, 256, &ul) || ul < 1)
				return bad("--threads", "a number in 1..256", optarg);
			o->threads = (long)ul;
			break;
		case O_QUIET:
			o->quiet = true;
			break;
		case O_CSV:
			o->csv = optarg;
			break;
		case O_REPORT:
			o->html = optarg;
			break;
		case O_KUBE:
			if (strcmp(optarg, "checkpoint") && strcmp(optarg, "zero"))
				return bad("--kube-restart", "checkpoint or zero", optarg);
			o->cfg.kube_from_zero = optarg[0] == 'z';
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		default:
			return gf_cli_option_error("replay", c, argv, optind - 1);
		}
	}
	if (optind < argc)
		return bad("operands", "none", argv[optind]);
	return 0;
}

static int load_traces(const struct opts *o, struct gf_spot_trace *tr, struct gf_spot_pool *pools, char paths[][4096],
		       int *n)
{
	const char *data_dir = gf_data_dir();

	*n = 0;
	if (o->ntraces) {
		for (int i = 0; i < o->ntraces; i++)
			snprintf(paths[i], 4096, "%s", o->traces[i]);
		*n = o->ntraces;
	} else {
		snprintf(paths[0], 4096, "%s/spot/zone-a.json", data_dir);
		snprintf(paths[1], 4096, "%s/spot/zone-b.json", data_dir);
		*n = 2;
	}
	for (int i = 0; i < *n; i++) {
		char *data, err[512];
		size_t len;
		gf_err e;

		if (gf_read_file(paths[i], &data, &len))
			return -1;
		e = gf_spot_trace_parse(data, len, paths[i], &tr[i], err, sizeof(err));
		free(data);
		if (e) {
			fprintf(stderr, "gpufleet replay: %s\n", err[0] ? err : gf_strerror(e));
			return -1;
		}
		pools[i] = (struct gf_spot_pool){ .avail = tr[i].avail, .n = tr[i].n, .gap = tr[i].gap };
	}
	return 0;
}

int gf_cmd_replay_spot(int argc, char **argv)
{
	static uint64_t seeds[MAX_SEEDS];
	static char paths[MAX_TRACES][4096];
	char nodes_default[4096], pods_default[4096];
	struct gf_spot_trace tr[MAX_TRACES];
	struct gf_spot_pool pools[MAX_TRACES];
	struct opts o = { .seeds = "42-51", .cfg = gf_spot_replay_config_default(),
			  .threads = sysconf(_SC_NPROCESSORS_ONLN) };
	struct gf_cli_trace t;
	gf_replay *x = NULL;
	struct run *runs = NULL;
	int modes[GF_SPOT_MODE_COUNT], nm = 0, nseeds, ntr = 0, rc;
	struct gf_obuf table, title;

	memset(tr, 0, sizeof(tr));
	for (int m = 0; m < GF_SPOT_MODE_COUNT; m++)
		o.modes[m] = true;
	snprintf(nodes_default, sizeof(nodes_default), "%s/openb/openb_node_list_gpu_node.csv", gf_data_dir());
	snprintf(pods_default, sizeof(pods_default), "%s/openb/openb_pod_list_default.csv", gf_data_dir());
	o.nodes = nodes_default;
	o.pods = pods_default;
	rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	for (int m = 0; m < GF_SPOT_MODE_COUNT; m++)
		if (o.modes[m])
			modes[nm++] = m;
	nseeds = gf_cli_parse_seeds(o.seeds, seeds, MAX_SEEDS);
	if (nseeds <= 0)
		return bad("--seeds", "a list like 42-51 or 1,5,7-9 (at most 1000 seeds)", o.seeds);
	if (load_traces(&o, tr, pools, paths, &ntr))
		goto fail_traces;
	o.cfg.pools = pools;
	o.cfg.npools = (size_t)ntr;
	if (gf_cli_trace_load("replay", o.nodes, o.pods, true, &t))
		goto fail_traces;
	rc = 1;
	gf_err e = gf_replay_create(t.nodes, t.nnodes, t.pods, t.times, t.npods, &t.cat, &x);

	if (e) {
		fprintf(stderr, "gpufleet replay: cannot prepare the experiment: %s\n", gf_strerror(e));
		goto out;
	}
	size_t nruns = (size_t)nm * (size_t)nseeds;

	if (!(runs = calloc(nruns, sizeof(*runs)))) {
		fprintf(stderr, "gpufleet replay: out of memory\n");
		goto out;
	}
	for (int m = 0; m < nm; m++)
		for (int i = 0; i < nseeds; i++) {
			struct run *r = &runs[m * nseeds + i];

			r->x = x;
			r->cfg = o.cfg;
			r->cfg.mode = (enum gf_spot_mode)modes[m];
			r->cfg.base.seed = seeds[i];
		}
	double t0 = gf_cli_seconds();

	gf_cli_run_parallel(nruns, (int)o.threads, run_one, runs, NULL, NULL);
	for (size_t r = 0; r < nruns; r++)
		if (runs[r].err) {
			fprintf(stderr, "gpufleet replay: spot run %s, seed %llu failed: %s%s\n",
				gf_spot_mode_name(runs[r].cfg.mode), (unsigned long long)runs[r].cfg.base.seed,
				gf_strerror(runs[r].err),
				runs[r].err == GF_INVAL ? " (more spot nodes than the cluster has 8-GPU nodes?)" : "");
			goto out;
		}
	if (!o.quiet)
		fprintf(stderr, "replay --spot: %zu runs in %.2f s wall (%ld threads)\n", nruns,
			gf_cli_seconds() - t0, o.threads);
	gf_obuf_init(&title, 4096);
	gf_obuf_printf(&title, "spot replay on %zu nodes (%lld GPUs), %d spot pool(s):", t.nnodes, (long long)t.ngpus,
		       ntr);
	for (int i = 0; i < ntr; i++) {
		char name[GF_NAME_MAX];

		gf_trace_file_name(paths[i], name, sizeof(name));
		gf_obuf_printf(&title, " %s", name);
	}
	gf_obuf_printf(&title, "; kube restarts from %s", o.cfg.kube_from_zero ? "zero" : "the last checkpoint");
	gf_obuf_printf(&title, "; notice %llds, load %.2f + training %.2f, %.1f h, seeds %s (means over seeds), "
			       "$%.2f on-demand / $%.2f spot per GPU-hour",
		       (long long)o.cfg.notice, o.cfg.base.load, o.cfg.training_load,
		       (double)o.cfg.base.horizon / 3600.0, o.seeds, o.cfg.price_on_demand, o.cfg.price_spot);
	gf_obuf_init(&table, 1u << 20);
	print_table(&table, runs, modes, nm, nseeds);
	for (int m = 0; m < nm; m++) {
		double notices = 0, reclaimed = 0, added = 0, fit = 0, preem = 0, stalled = 0, kind[3] = { 0, 0, 0 };

		for (int i = 0; i < nseeds; i++) {
			const struct gf_spot_result *r = &runs[m * nseeds + i].res;

			notices += (double)r->notices / nseeds;
			reclaimed += (double)r->reclaimed / nseeds;
			added += (double)r->added / nseeds;
			fit += r->lost_fit_gpu_h / nseeds;
			preem += (double)r->preemptions / nseeds;
			stalled += (double)r->stalled / nseeds;
			for (int k = 0; k < 3; k++)
				kind[k] += r->lost_by_kind_gpu_h[k] / nseeds;
		}
		gf_obuf_printf(&table, "%s: %.1f notices, %.1f nodes reclaimed, %.1f added per run; lost GPU-h of signal "
				       "jobs whose checkpoint fits the notice %.3f (by kind: signal %.1f, periodic %.1f, none "
				       "%.1f); priority preemptions %.1f; stalled %.1f\n",
			       gf_spot_mode_name((enum gf_spot_mode)modes[m]), notices, reclaimed, added, fit,
			       kind[GF_CKPT_SIGNAL], kind[GF_CKPT_PERIODIC], kind[GF_CKPT_NONE], preem, stalled);
	}
	if (gf_obuf_error(&table) || gf_obuf_error(&title)) {
		fprintf(stderr, "gpufleet replay: out of memory\n");
		goto out_bufs;
	}
	if (o.csv) {
		struct gf_obuf c;

		gf_obuf_init(&c, 64u << 20);
		summary_csv(&c, runs, nruns);
		int fail = gf_write_rendered("replay", o.csv, &c);

		gf_obuf_release(&c);
		if (fail)
			goto out_bufs;
	}
	if (o.html) {
		struct gf_obuf h;

		gf_obuf_init(&h, 64u << 20);
		report_html(&h, title.data, table.data, runs, modes, nm, nseeds);
		int fail = gf_write_rendered("replay", o.html, &h);

		gf_obuf_release(&h);
		if (fail)
			goto out_bufs;
	}
	printf("%s\n\n%s", title.data, table.data);
	rc = 0;
out_bufs:
	gf_obuf_release(&table);
	gf_obuf_release(&title);
out:
	for (size_t r = 0; runs && r < nruns; r++)
		gf_spot_result_release(&runs[r].res);
	free(runs);
	gf_replay_destroy(x);
	gf_cli_trace_release(&t);
	for (int i = 0; i < ntr; i++)
		gf_spot_trace_release(&tr[i]);
	return rc;
fail_traces:
	for (int i = 0; i < ntr; i++)
		gf_spot_trace_release(&tr[i]);
	return 1;
}
