/*
 * cli/cmd_replay_autoscale.c - `gpufleet replay --autoscale`: argument
 * parsing and wiring for the replay with capacity bought on request
 * (sim/autoscale.h).
 *
 * Reads the node and pod lists, runs one replay per (mode, seed) on a pool
 * of threads (independent runs over one prepared experiment: the output
 * does not depend on the thread count), prints the per-mode, per-class
 * table (means over seeds) with the GPU-hours bought, and writes the
 * summary CSV: the columns of `gpufleet replay --summary-csv`, then
 * scaling and autoscaled_gpu_h.  Wall time goes to stderr.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/experiment.h"
#include "cli/files.h"
#include "core/obuf.h"
#include "sim/autoscale.h"

#define MAX_SEEDS 1000

static const char usage_text[] =
	"usage: gpufleet replay --autoscale [options]\n"
	"\n"
	"Replay the openb scenario on a cluster that can buy on-demand nodes of its GPU\n"
	"node type, joining after a provisioning delay, and compare three ways of asking\n"
	"for them on the same jobs: never, gpufleet (a job whose forecast start is later\n"
	"than --autoscale-after asks once for its whole gang; the nodes are held for it)\n"
	"and every-pod (cluster-autoscaler: nodes for every pending job, anyone may use\n"
	"them).  docs/replay.md, \"Capacity on request\".\n"
	"\n"
	"options:\n"
	"  --autoscale             this mode\n"
	"  --provision-delay T     from the request to the nodes joining [10m]\n"
	"  --autoscale-after T     gpufleet asks for a job whose forecast start is later\n"
	"                          than now + T [30m]\n"
	"  --scale-down-delay T    a bought node leaves after being idle this long [10m]\n"
	"  --price X               price per GPU-hour of a bought node [2.00]\n"
	"  --modes LIST            never,gpufleet,every-pod [all three]\n"
	"  --nodes FILE, --pods FILE, --load X [0.9], --horizon T [12h], --burst off|T [4h],\n"
	"  --seeds LIST [42-51], --seed N, --threads N, --quiet: as gpufleet replay\n"
	"  --summary-csv FILE      gpufleet replay's columns (queue policy backfill), then\n"
	"                          scaling,autoscaled_gpu_h\n"
	"  -h, --help              this text\n";

enum { O_AS = 256, O_DELAY, O_AFTER, O_DOWN, O_PRICE, O_MODES, O_NODES, O_PODS, O_LOAD, O_HORIZON, O_BURST,
       O_SEEDS, O_SEED, O_THREADS, O_QUIET, O_CSV };

struct run {
	const gf_replay *x;
	struct gf_as_config cfg;
	struct gf_as_result res;
	gf_err err;
};

static void run_one(void *ctx, size_t i)
{
	struct run *r = (struct run *)ctx + i;

	r->err = gf_as_replay_run(r->x, &gf_policy_fgd, &r->cfg, &r->res);
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
	const char *names[GF_AS_MODE_COUNT + 1];
	size_t n;

	if (strlen(arg) >= sizeof(buf))
		return false;
	memcpy(buf, arg, strlen(arg) + 1);
	if (!gf_cli_parse_list(buf, names, &n, GF_AS_MODE_COUNT + 1) || n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		int m = 0;

		while (m < GF_AS_MODE_COUNT && strcmp(names[i], gf_as_mode_name((enum gf_as_mode)m)))
			m++;
		if (m == GF_AS_MODE_COUNT)
			return false;
		on[m] = true;
	}
	return true;
}

struct opts {
	bool modes[GF_AS_MODE_COUNT];
	const char *nodes, *pods, *seeds, *csv;
	long threads;
	bool quiet;
	struct gf_as_config cfg;
};

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "autoscale", no_argument, 0, O_AS }, { "provision-delay", required_argument, 0, O_DELAY },
		{ "autoscale-after", required_argument, 0, O_AFTER },
		{ "scale-down-delay", required_argument, 0, O_DOWN }, { "price", required_argument, 0, O_PRICE },
		{ "modes", required_argument, 0, O_MODES }, { "nodes", required_argument, 0, O_NODES },
		{ "pods", required_argument, 0, O_PODS }, { "load", required_argument, 0, O_LOAD },
		{ "horizon", required_argument, 0, O_HORIZON }, { "burst", required_argument, 0, O_BURST },
		{ "seeds", required_argument, 0, O_SEEDS }, { "seed", required_argument, 0, O_SEED },
		{ "threads", required_argument, 0, O_THREADS }, { "quiet", no_argument, 0, O_QUIET },
		{ "summary-csv", required_argument, 0, O_CSV }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
	};
	int c;
	unsigned long ul;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_AS:
			break;
		case O_DELAY:
			if (!gf_cli_whole_seconds("replay", "--provision-delay", optarg, 0, 7 * 86400, &o->cfg.delay))
				return 2;
			break;
		case O_AFTER:
			if (!gf_cli_whole_seconds("replay", "--autoscale-after", optarg, 0, 7 * 86400,
						  &o->cfg.threshold))
				return 2;
			break;
		case O_DOWN:
			if (!gf_cli_whole_seconds("replay", "--scale-down-delay", optarg, 0, 7 * 86400,
						  &o->cfg.scale_down))
				return 2;
			break;
		case O_PRICE:
			if (!num_in(optarg, 0, 1e6, &o->cfg.price))
				return bad("--price", "a price >= 0", optarg);
			break;
		case O_MODES:
			memset(o->modes, 0, sizeof(o->modes));
			if (!parse_modes(optarg, o->modes))
				return bad("--modes", "a list of never, gpufleet, every-pod", optarg);
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
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			fprintf(stderr, "gpufleet replay: %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "gpufleet replay: unknown option '%s' with --autoscale (see --autoscale --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpufleet replay: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (o->cfg.base.burst && o->cfg.base.burst_at >= o->cfg.base.horizon) {
		fprintf(stderr, "gpufleet replay: --burst: the burst (at %lld s) must come before the end of --horizon "
				"(%lld s)\n",
			(long long)o->cfg.base.burst_at, (long long)o->cfg.base.horizon);
		return 2;
	}
	return 0;
}

static void summary_csv(struct gf_obuf *b, const struct run *runs, size_t nruns)
{
	gf_obuf_puts(b, "queue_policy,placement,seed,class,jobs,started,wait_p50_s,wait_p95_s,wait_max_s,"
			"jct_mean_s,gpu_alloc_avg_pct,partial_gangs,preemptions,preempted_gpu_h,scaling,"
			"autoscaled_gpu_h\n");
	for (size_t r = 0; r < nruns; r++)
		for (int c = 0; c < GF_RC_COUNT; c++) {
			const struct gf_replay_class_stats *s = &runs[r].res.cls[c];

			gf_obuf_printf(b, "%s,%s,%llu,%s,%lld,%lld,%.0f,%.0f,%.0f,%.1f,%.3f,%lld,%lld,%.3f,%s,%.3f\n",
				       gf_queue_policy_name(runs[r].cfg.base.qp), gf_policy_fgd.name,
				       (unsigned long long)runs[r].cfg.base.seed,
				       gf_replay_class_name((enum gf_replay_class)c), (long long)s->jobs,
				       (long long)s->started, s->wait_p50, s->wait_p95, s->wait_max, s->jct_mean,
				       s->gpu_alloc_avg_pct, (long long)s->partial_gangs, (long long)s->preemptions,
				       s->preempted_gpu_h, gf_as_mode_name(runs[r].cfg.mode),
				       runs[r].res.autoscaled_gpu_h);
		}
}

static void print_table(struct gf_obuf *b, const struct run *runs, const int *modes, int nm, int nseeds)
{
	gf_obuf_printf(b, "%-10s %-9s %7s %9s %9s %9s %9s\n", "scaling", "class", "jobs", "started", "wait p50",
		       "wait p95", "wait max");
	for (int m = 0; m < nm; m++)
		for (int c = 0; c < GF_RC_COUNT; c++) {
			double jobs = 0, st = 0, p50 = 0, p95 = 0, mx = 0;

			for (int i = 0; i < nseeds; i++) {
				const struct gf_replay_class_stats *s = &runs[m * nseeds + i].res.cls[c];

				jobs += (double)s->jobs / nseeds;
				st += (double)s->started / nseeds;
				p50 += s->wait_p50 / nseeds;
				p95 += s->wait_p95 / nseeds;
				mx += s->wait_max / nseeds;
			}
			gf_obuf_printf(b, "%-10s %-9s %7.1f %9.1f %9.0f %9.0f %9.0f\n",
				       gf_as_mode_name((enum gf_as_mode)modes[m]),
				       gf_replay_class_name((enum gf_replay_class)c), jobs, st, p50, p95, mx);
		}
	gf_obuf_printf(b, "\n%-10s %12s %10s %9s %9s %9s %9s %12s %12s\n", "scaling", "GPU-h bought", "cost",
		       "requests", "nodes", "max nodes", "gave up", "burst p95 max", "stalled");
	for (int m = 0; m < nm; m++) {
		double gh = 0, cost = 0, req = 0, nodes = 0, mx = 0, gave = 0, worst = 0, stalled = 0;

		for (int i = 0; i < nseeds; i++) {
			const struct gf_as_result *r = &runs[m * nseeds + i].res;

			gh += r->autoscaled_gpu_h / nseeds;
			cost += r->cost / nseeds;
			req += (double)r->requests / nseeds;
			nodes += (double)r->nodes_bought / nseeds;
			mx += (double)r->nodes_max / nseeds;
			gave += (double)r->gave_up / nseeds;
			stalled += (double)r->stalled / nseeds;
			worst = r->cls[GF_RC_BURST].wait_p95 > worst ? r->cls[GF_RC_BURST].wait_p95 : worst;
		}
		gf_obuf_printf(b, "%-10s %12.1f %10.2f %9.1f %9.1f %9.1f %9.1f %12.0f %12.1f\n",
			       gf_as_mode_name((enum gf_as_mode)modes[m]), gh, cost, req, nodes, mx, gave, worst, stalled);
	}
}

int gf_cmd_replay_autoscale(int argc, char **argv)
{
	static uint64_t seeds[MAX_SEEDS];
	char nodes_default[4096], pods_default[4096];
	struct opts o = { .seeds = "42-51", .cfg = gf_as_config_default(), .threads = sysconf(_SC_NPROCESSORS_ONLN) };
	struct gf_cli_trace t;
	gf_replay *x = NULL;
	struct run *runs = NULL;
	int modes[GF_AS_MODE_COUNT], nm = 0, nseeds, rc;
	struct gf_obuf table, title;

	for (int m = 0; m < GF_AS_MODE_COUNT; m++)
		o.modes[m] = true;
	snprintf(nodes_default, sizeof(nodes_default), "%s/openb/openb_node_list_gpu_node.csv", gf_data_dir());
	snprintf(pods_default, sizeof(pods_default), "%s/openb/openb_pod_list_default.csv", gf_data_dir());
	o.nodes = nodes_default;
	o.pods = pods_default;
	rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	for (int m = 0; m < GF_AS_MODE_COUNT; m++)
		if (o.modes[m])
			modes[nm++] = m;
	nseeds = gf_cli_parse_seeds(o.seeds, seeds, MAX_SEEDS);
	if (nseeds <= 0)
		return bad("--seeds", "a list like 42-51 or 1,5,7-9 (at most 1000 seeds)", o.seeds);
	if (gf_cli_trace_load("replay", o.nodes, o.pods, true, &t))
		return 1;
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
			r->cfg.mode = (enum gf_as_mode)modes[m];
			r->cfg.base.seed = seeds[i];
		}
	double t0 = gf_cli_seconds();

	gf_cli_run_parallel(nruns, (int)o.threads, run_one, runs, NULL, NULL);
	for (size_t r = 0; r < nruns; r++)
		if (runs[r].err) {
			fprintf(stderr, "gpufleet replay: autoscale run %s, seed %llu failed: %s\n",
				gf_as_mode_name(runs[r].cfg.mode), (unsigned long long)runs[r].cfg.base.seed,
				gf_strerror(runs[r].err));
			goto out;
		}
	if (!o.quiet)
		fprintf(stderr, "replay --autoscale: %zu runs in %.2f s wall (%ld threads)\n", nruns,
			gf_cli_seconds() - t0, o.threads);
	char workload[GF_NAME_MAX];

	gf_trace_file_name(o.pods, workload, sizeof(workload));
	gf_obuf_init(&title, 4096);
	gf_obuf_printf(&title, "replay --autoscale of %s on %zu nodes (%lld GPUs), backfill, load %.2f, %.1f h, "
			       "provisioning delay %llds, gpufleet asks after %llds, scale-down after %llds idle, "
			       "$%.2f per GPU-hour bought, seeds %s (means over seeds)",
		       workload, t.nnodes, (long long)t.ngpus, o.cfg.base.load, (double)o.cfg.base.horizon / 3600.0,
		       (long long)o.cfg.delay, (long long)o.cfg.threshold, (long long)o.cfg.scale_down, o.cfg.price,
		       o.seeds);
	gf_obuf_init(&table, 1u << 20);
	print_table(&table, runs, modes, nm, nseeds);
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
	printf("%s\n\n%s", title.data, table.data);
	rc = 0;
out_bufs:
	gf_obuf_release(&table);
	gf_obuf_release(&title);
out:
	free(runs);
	gf_replay_destroy(x);
	gf_cli_trace_release(&t);
	return rc;
}
