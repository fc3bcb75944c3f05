/*
 * cli/cmd_simulate.c - `gpufleet simulate`: argument parsing and wiring.
 *
 * Reads the trace files, hands their bytes to the engine's parsers, runs one
 * experiment per (policy, seed) on a small pool of threads (runs share the
 * prepared experiment read-only and are independent, so the output does not
 * depend on the thread count), then prints the table and writes the CSV and
 * HTML files asked for.  Progress goes to stderr once a run takes longer than
 * a moment.  Nothing is printed or written as a result unless every run
 * succeeded: the output files are rendered first and written together
 * (gf_write_files: all or none), and the table is printed after them.
 */
#include <errno.h>
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
#include "cli/simulate_mig.h"
#include "sim/openb.h"
#include "sim/reference.h"
#include "sim/report.h"
#include "sim/trace.h"
#include "sim/trace_cost.h"

#define MAX_SEEDS 10000
#define MAX_POLICIES 32

static const char usage_text[] =
	"usage: gpufleet simulate [options]\n"
	"\n"
	"Replay a pod trace against a cluster under placement policies, as in the\n"
	"openb experiment of the FGD paper (USENIX ATC'23), and compare GPU allocation\n"
	"and fragmentation.  With no options: the bundled Alibaba openb default trace,\n"
	"every policy, the paper's setting (tune 1.3, seeds 42-51), the paper's\n"
	"figures beside ours.\n"
	"\n"
	"options:\n"
	"  --nodes FILE         node list CSV (sn,cpu_milli,memory_mib,gpu,model)\n"
	"                       [data/openb/openb_node_list_gpu_node.csv]\n"
	"  --pods FILE          pod list CSV (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec])\n"
	"                       [data/openb/openb_pod_list_default.csv]\n"
	"  --policy NAME[,...]  policies to run [all]: %s\n"
	"  --seeds LIST         seeds, e.g. 42-51 or 42 or 1,5,7-9 [42-51]; --seed N: one\n"
	"  --tune X             append pods until the GPU request is X times the GPU capacity [1.3]\n"
	"  --curves-csv FILE    write the allocation curves, one row per policy and seed\n"
	"                       (workload,sc_policy,tune,seed,total_gpus,0,1,...,130; values in %%)\n"
	"  --report FILE.html   write a self-contained HTML report with charts\n"
	"  --reproduce          for every bundled workload with published results, run the paper's\n"
	"                       six policies (and ours) over seeds 42-51 and compare alloc@130 with the paper;\n"
	"                       counts the means within 0.5 points of the paper's; exits 1 unless\n"
	"                       every mean lies inside the paper's range over seeds and FGD beats BestFit\n"
	"  --mig                the same cluster with every GPU taken as an H100 80GB in MIG mode:\n"
	"                       GPU memory placed at 100 %% and 130 %% load under mig-parted's static\n"
	"                       layouts, dynamic-first, dynamic (gpufleet's slot choice) and milli\n"
	"                       sharing without isolation (docs/mig.md)\n"
	"  --mig-csv FILE       with --mig: one row per layout and seed\n"
	"                       (layout,seed,mem_placed_pct_100,mem_placed_pct_130,pods_placed_130)\n"
	"  --threads N          runs in parallel [number of CPUs] (--jobs N: deprecated)\n"
	"  --feature NAME=on|off  switch an engine feature (benchmarks): %s\n"
	"  --prices FILE        price sheet for the trace's cost section (its '*' row; see\n"
	"                       data/prices/example.csv) [1 per GPU-hour: costs are GPU-hours]\n"
	"  --no-cost            no cost section (GPU-hours by class, idle, saved by sharing)\n"
	"  --quiet              no progress on stderr\n"
	"  -h, --help           this text\n"
	"  --version            the version and commit\n"
	"\n"
	"docs/cli.md: the options every command shares.\n"
	"Data files are looked up in $GPUFLEET_DATA, else in the source tree's data/.\n";

struct job {
	const gf_openb *x;
	const struct gf_policy_ops *ops;
	struct gf_openb_config cfg;
	struct gf_openb_result res;
	gf_err err;
};

/* One run of policy ops on x with the paper's setting but tune, seed and features. */
static struct job job_for(const gf_openb *x, const struct gf_policy_ops *ops, double tune,
			  uint64_t seed, struct gf_features feat)
{
	struct job j = { .x = x, .ops = ops, .cfg = gf_openb_config_default() };

	j.cfg.tune = tune;
	j.cfg.seed = seed;
	j.cfg.features = feat;
	return j;
}

static void run_job(void *ctx, size_t i)
{
	struct job *j = (struct job *)ctx + i;

	j->err = gf_openb_run(j->x, j->ops, &j->cfg, &j->res);
}

/* Progress on stderr after the first second: a live line on a terminal, else a line every 5 s. */
struct progress {
	const char *what;
	size_t n;
	bool tty, shown;
	double last;
};

static void show_progress(void *pctx, size_t done, double t)
{
	struct progress *pr = pctx;

	if (t > 1.0 && t - pr->last >= (pr->tty ? 0.2 : 5.0)) {
		fprintf(stderr, pr->tty ? "\rsimulate: %s: %zu/%zu runs, %.0f s " :
					  "simulate: %s: %zu/%zu runs, %.0f s\n",
			pr->what, done, pr->n, t);
		pr->shown = pr->tty;
		pr->last = t;
	}
}

/* Run all jobs on n threads; progress on stderr after the first second unless quiet. */
static gf_err run_jobs(struct job *jobs, size_t njobs, int nthreads, bool quiet, const char *what)
{
	struct progress pr = { .what = what, .n = njobs, .tty = isatty(STDERR_FILENO) };

	gf_cli_run_parallel(njobs, nthreads, run_job, jobs, quiet ? NULL : show_progress, &pr);
	if (pr.shown)
		fputc('\n', stderr);
	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].err) {
			fprintf(stderr, "gpufleet simulate: run of %s, seed %llu failed: %s\n",
				jobs[i].ops->label, (unsigned long long)jobs[i].cfg.seed,
				gf_strerror(jobs[i].err));
			return jobs[i].err;
		}
	}
	return GF_OK;
}

/*
 * A run that placed no pod at all measured nothing: every pod fits no node
 * even in the empty cluster (the policies only choose among nodes that fit,
 * so one run placing nothing means every run does).  Said on stderr; true.
 */
static bool placed_nothing(const struct job *jobs, size_t njobs, const char *pods_path,
			   const char *nodes_path)
{
	for (size_t i = 0; i < njobs; i++) {
		if (jobs[i].res.placed > 0)
			continue;
		fprintf(stderr, "gpufleet simulate: no pod was placed (run of %s, seed %llu: 0 of %lld pods): "
			"no pod of %s fits any node of %s; compare the pods' cpu_milli, memory_mib, "
			"num_gpu and gpu_spec with the nodes' cpu_milli, memory_mib, gpu and model\n",
			jobs[i].ops->label, (unsigned long long)jobs[i].cfg.seed,
			(long long)jobs[i].res.attempts, pods_path, nodes_path);
		return true;
	}
	return false;
}

struct inputs {
	struct gf_cli_trace t;
	gf_openb *x;
};

static void inputs_release(struct inputs *in)
{
	gf_openb_destroy(in->x);
	in->x = NULL;
	gf_cli_trace_release(&in->t);
}

static int load_inputs(const char *nodes_path, const char *pods_path, struct inputs *in)
{
	gf_err err;

	in->x = NULL;
	if (gf_cli_trace_load("simulate", nodes_path, pods_path, false, &in->t))
		return -1;
	err = gf_openb_create(in->t.nodes, in->t.nnodes, in->t.pods, in->t.npods, &in->t.cat, &in->x);
	if (err) {
		fprintf(stderr, "gpufleet simulate: cannot prepare the experiment: %s\n", gf_strerror(err));
		inputs_release(in);
		return -1;
	}
	return 0;
}

/*
 * The cost section after the table: the trace's GPU-hours by class, idle and
 * saved-by-sharing (sim/trace_cost.h).  Nothing when the pods carry no times.
 */
static int trace_cost(const struct inputs *in, const char *prices_path, struct gf_obuf *b)
{
	struct gf_cost_prices prices = { 0 };
	struct gf_trace_cost tc;
	char err[512];

	if (prices_path) {
		char *data;
		size_t len;

		if (gf_read_file(prices_path, &data, &len))
			return -1;
		gf_err e = gf_cost_prices_parse(data, len, prices_path, &prices, err, sizeof(err));
		free(data);
		if (e) {
			fprintf(stderr, "gpufleet simulate: %s\n", err);
			return -1;
		}
	}
	gf_err e = gf_trace_cost(in->t.pods, in->t.npods, gf_openb_ngpus(in->x), prices_path ? &prices : NULL, &tc);
	gf_cost_prices_release(&prices);
	if (e == GF_INVAL)
		return 0; /* no timed GPU pod: nothing to report */
	if (e) {
		fprintf(stderr, "gpufleet simulate: cost of the trace: %s%s\n", gf_strerror(e),
			e == GF_NOENT ? " (the price sheet needs a '*' row)" : "");
		return -1;
	}
	gf_obuf_puts(b, "\n");
	gf_trace_cost_render(&tc, b);
	gf_trace_cost_release(&tc);
	return 0;
}

static int load_reference(const char *data_dir, struct gf_reference *ref)
{
	struct gf_trace_error terr;
	char path[4096];
	char *data;
	size_t len;
	gf_err err;

	snprintf(path, sizeof(path), "%s/openb/fgd-reference-results.csv", data_dir);
	if (gf_read_file(path, &data, &len))
		return -1;
	err = gf_reference_parse(data, len, path, ref, &terr);
	free(data);
	if (err) {
		fprintf(stderr, "gpufleet simulate: %s\n", terr.msg);
		return -1;
	}
	return 0;
}

/*
 * The files asked for (NULL: not asked), rendered first and then written
 * together (gf_write_files): a failure writes none of them.
 */
static int write_outputs(const struct gf_report *rep, const char *csv_path, const char *html_path)
{
	struct gf_obuf c, h;
	struct gf_out_file out[2];
	size_t n = 0;
	int rc = -1;

	gf_obuf_init(&c, 256u << 20);
	gf_obuf_init(&h, 64u << 20);
	if (csv_path) {
		gf_report_curves_csv(rep, &c);
		if (gf_rendered("simulate", csv_path, &c))
			goto out;
		out[n++] = (struct gf_out_file){ csv_path, c.data ? c.data : "", c.len };
	}
	if (html_path) {
		gf_report_html(rep, &h);
		if (gf_rendered("simulate", html_path, &h))
			goto out;
		out[n++] = (struct gf_out_file){ html_path, h.data ? h.data : "", h.len };
	}
	rc = n ? gf_write_files(out, n) : 0;
out:
	gf_obuf_release(&c);
	gf_obuf_release(&h);
	return rc;
}

/* --reproduce: every bundled workload with reference rows, the paper's policies, seeds 42-51. */
static int reproduce(const char *data_dir, const struct gf_reference *ref, int jobs, bool quiet,
		     struct gf_features feat)
{
	char nodes_path[4096];
	const char *seen[64];
	int nseen = 0, bad = 0, off = 0, rows = 0;
	size_t npol;
	const struct gf_policy_ops *const *all = gf_policy_all(&npol);

	snprintf(nodes_path, sizeof(nodes_path), "%s/openb/openb_node_list_gpu_node.csv", data_dir);
	printf("%-26s %-14s %9s %9s %7s %s\n", "workload", "policy", "ours@130", "paper@130", "diff",
	       "paper range over seeds");
	for (size_t r = 0; r < ref->n; r++) {
		const char *w = ref->rows[r].workload;
		char pods_path[4096];
		bool dup = false;

		for (int k = 0; k < nseen; k++)
			dup |= !strcmp(seen[k], w);
		if (dup || nseen == 64)
			continue;
		seen[nseen++] = w;
		snprintf(pods_path, sizeof(pods_path), "%s/openb/%s.csv", data_dir, w);
		if (access(pods_path, R_OK))
			continue;	/* a workload the repository does not ship */

		struct inputs in;

		if (load_inputs(nodes_path, pods_path, &in))
			return 2;
		struct job *js = calloc(npol * 10, sizeof(*js));
		size_t nj = 0;

		if (!js) {
			inputs_release(&in);
			return 2;
		}

		for (size_t k = 0; k < npol; k++) {
			if (!all[k]->in_paper && !all[k]->ours)
				continue;
			for (uint64_t seed = 42; seed <= 51; seed++) {
				js[nj++] = job_for(in.x, all[k], gf_openb_config_default().tune, seed, feat);
			}
		}
		if (run_jobs(js, nj, jobs, quiet, w)) {
			free(js);
			inputs_release(&in);
			return 2;
		}
		double fgd = NAN, bestfit = NAN;

		for (size_t j = 0; j < nj; j += 10) {
			struct gf_report_series s = { .label = js[j].ops->label, .nruns = 10 };
			struct gf_openb_result runs[10];

			for (int i = 0; i < 10; i++)
				runs[i] = js[j + (size_t)i].res;
			s.runs = runs;
			double ours = gf_report_mean(&s, GF_CURVE_ALLOC, 130);
			const struct gf_reference_row *row = gf_reference_find(ref, w, s.label);

			if (!strcmp(s.label, "FGD"))
				fgd = ours;
			if (!strcmp(s.label, "BestFit"))
				bestfit = ours;
			if (!row) {
				printf("%-26s %-14s %9.2f %9s%s\n", w, s.label, ours, "-",
				       js[j].ops->ours ? "   (ours, not in the paper)" : "");
				continue;
			}
			double d = ours - row->alloc130;
			bool close = fabs(d) <= 0.5;
			bool in_range = ours >= row->alloc_min130 && ours <= row->alloc_max130;

			rows++;
			off += !close;
			bad += !in_range;
			printf("%-26s %-14s %9.2f %9.2f %+7.2f %.2f..%.2f%s%s\n", w, s.label, ours,
			       row->alloc130, d, row->alloc_min130, row->alloc_max130,
			       close ? "" : "   more than 0.5 points off",
			       in_range ? "" : "   OUTSIDE the paper's range");
		}
		if (!(fgd > bestfit)) {
			printf("%-26s FGD (%.2f) does not lead BestFit (%.2f)\n", w, fgd, bestfit);
			bad++;
		}
		for (size_t j = 0; j < nj; j++)
			gf_openb_result_release(&js[j].res);
		free(js);
		inputs_release(&in);
	}
	if (nseen == 0) {
		fprintf(stderr, "gpufleet simulate: no workloads in the reference file\n");
		return 2;
	}
	printf("\n%d of %d means within 0.5 points of the paper's mean\n", rows - off, rows);
	printf("%s: %d check(s) failed (each mean inside the paper's min..max over its seeds; "
	       "FGD ahead of BestFit on every workload)\n", bad ? "FAIL" : "OK", bad);
	return bad ? 1 : 0;
}

int gf_cmd_simulate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "pods", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "seeds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 's' },
		{ "tune", required_argument, NULL, 't' },
		{ "curves-csv", required_argument, NULL, 'c' },
		{ "report", required_argument, NULL, 'r' },
		{ "reproduce", no_argument, NULL, 'R' },
		{ "threads", required_argument, NULL, 'T' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "feature", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "prices", required_argument, NULL, 'C' },
		{ "no-cost", no_argument, NULL, 'N' },
		{ "mig", no_argument, NULL, 'M' },
		{ "mig-csv", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prices_path = NULL;
	bool no_cost = false;
	const char *data_dir = gf_data_dir();
	char nodes_default[4096], pods_default[4096];
	const char *nodes_path = nodes_default, *pods_path = pods_default;
	const char *policy_arg = NULL, *seeds_arg = "42-51", *csv_path = NULL, *html_path = NULL;
	double tune = 1.3;
	bool do_reproduce = false, quiet = false, do_mig = false;
	const char *mig_csv = NULL;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	struct gf_features feat = gf_features_default();
	static uint64_t seeds[MAX_SEEDS];
	int nseeds, opt;
	const struct gf_policy_ops *pols[MAX_POLICIES];
	size_t npols = 0, nall;
	const struct gf_policy_ops *const *all = gf_policy_all(&nall);
	int rc = 2;

	snprintf(nodes_default, sizeof(nodes_default), "%s/openb/openb_node_list_gpu_node.csv", data_dir);
	snprintf(pods_default, sizeof(pods_default), "%s/openb/openb_pod_list_default.csv", data_dir);
	optind = 1;
	opterr = 0; /* ':' and '?' below say it in the words scripts and tests know */
	for (;;) {
		int at = optind; /* for gf_cli_option_error() */
		char *e;

		if ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) == -1)
			break;
		switch (opt) {
		case 'n': nodes_path = optarg; break;
		case 'p': pods_path = optarg; break;
		case 'P': policy_arg = optarg; break;
		case 's': seeds_arg = optarg; break;
		case 'c': csv_path = optarg; break;
		case 'r': html_path = optarg; break;
		case 'R': do_reproduce = true; break;
		case 'q': quiet = true; break;
		case 'C': prices_path = optarg; break;
		case 'N': no_cost = true; break;
		case 'M': do_mig = true; break;
		case 'G': mig_csv = optarg; break;
		case 't':
			errno = 0;
			tune = strtod(optarg, &e);
			if (errno || e == optarg || *e || !(tune > 0) || tune > 100) {
				fprintf(stderr, "gpufleet simulate: --tune: expected a number in (0, 100], found \"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'j':
			gf_cli_deprecated("simulate", "--jobs", "--threads");
			/* fall through */
		case 'T':
			errno = 0;
			jobs = strtol(optarg, &e, 10);
			if (errno || e == optarg || *e || jobs < 1 || jobs > 64) {
				fprintf(stderr, "gpufleet simulate: %s: expected 1..64, found \"%s\"\n",
					opt == 'j' ? "--jobs" : "--threads", optarg);
				return 2;
			}
			break;
		case 'f': {
			char name[64];
			const char *eq = strchr(optarg, '=');
			enum gf_feature f;
			size_t l = eq ? (size_t)(eq - optarg) : 0;

			if (!eq || l >= sizeof(name) || (strcmp(eq + 1, "on") && strcmp(eq + 1, "off"))) {
				fprintf(stderr, "gpufleet simulate: --feature: expected NAME=on or NAME=off, found \"%s\"\n", optarg);
				return 2;
			}
			memcpy(name, optarg, l);
			name[l] = '\0';
			if (!gf_feature_lookup(name, &f)) {
				fprintf(stderr, "gpufleet simulate: --feature: unknown feature \"%s\"\n", name);
				return 2;
			}
			feat.on[f] = !strcmp(eq + 1, "on");
			break;
		}
		case 'h': {
			char names[512] = "", feats[256] = "";

			for (size_t k = 0; k < nall; k++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
					 k ? ", " : "", all[k]->name);
			for (int k = 0; k < GF_FEAT_COUNT_; k++)
				snprintf(feats + strlen(feats), sizeof(feats) - strlen(feats), "%s%s",
					 k ? ", " : "", gf_feature_name((enum gf_feature)k));
			printf(usage_text, names, feats);
			return 0;
		}
		default: /* ':' no value, '?' unknown */
			return gf_cli_option_error("simulate", opt, argv, at);
		}
	}
	if (gf_cli_operands("simulate", argc, argv))
		return 2;

	if (mig_csv && !do_mig) {
		fprintf(stderr, "gpufleet simulate: --mig-csv needs --mig\n");
		return 2;
	}
	if (do_mig) {
		if (do_reproduce || policy_arg || csv_path || html_path) {
			fprintf(stderr, "gpufleet simulate: --mig runs its own layouts: it does not combine with "
					"--reproduce, --policy, --curves-csv or --report\n");
			return 2;
		}
		nseeds = gf_cli_parse_seeds(seeds_arg, seeds, MAX_SEEDS);
		if (nseeds <= 0) {
			fprintf(stderr, "gpufleet simulate: --seeds: expected a list like 42-51 or 1,5,7-9 (at most %d seeds), found \"%s\"\n",
				MAX_SEEDS, seeds_arg);
			return 2;
		}
		struct gf_cli_mig_opts mo = {
			.nodes_path = nodes_path, .pods_path = pods_path, .seeds = seeds, .nseeds = nseeds,
			.seeds_arg = seeds_arg, .tune = tune, .threads = (int)jobs, .quiet = quiet,
			.csv_path = mig_csv, .feat = feat,
		};
		return gf_cli_simulate_mig(&mo);
	}

	struct gf_reference ref = { 0 };

	if (load_reference(data_dir, &ref))
		fprintf(stderr, "gpufleet simulate: (the paper's figures will not be shown)\n");
	if (do_reproduce) {
		rc = reproduce(data_dir, &ref, (int)jobs, quiet, feat);
		gf_reference_release(&ref);
		return rc;
	}

	if (policy_arg) {
		const char *p = policy_arg;

		while (*p) {
			const char *comma = strchr(p, ',');
			size_t l = comma ? (size_t)(comma - p) : strlen(p);
			char name[64];
			const struct gf_policy_ops *ops;

			if (l == 0 || l >= sizeof(name) || npols == MAX_POLICIES) {
				fprintf(stderr, "gpufleet simulate: --policy: bad list \"%s\"\n", policy_arg);
				goto out_ref;
			}
			memcpy(name, p, l);
			name[l] = '\0';
			ops = gf_policy_find(name);
			if (!ops) {
				fprintf(stderr, "gpufleet simulate: --policy: unknown policy \"%s\"; known: ", name);
				for (size_t k = 0; k < nall; k++)
					fprintf(stderr, "%s%s", k ? ", " : "", all[k]->name);
				fputc('\n', stderr);
				goto out_ref;
			}
			pols[npols++] = ops;
			p += l;
			if (*p == ',')
				p++;
		}
	} else {
		for (size_t k = 0; k < nall && k < MAX_POLICIES; k++)
			pols[npols++] = all[k];
	}
	nseeds = gf_cli_parse_seeds(seeds_arg, seeds, MAX_SEEDS);
	if (nseeds <= 0) {
		fprintf(stderr, "gpufleet simulate: --seeds: expected a list like 42-51 or 1,5,7-9 (at most %d seeds), found \"%s\"\n",
			MAX_SEEDS, seeds_arg);
		goto out_ref;
	}

	struct inputs in;

	if (load_inputs(nodes_path, pods_path, &in))
		goto out_ref;

	size_t nj = npols * (size_t)nseeds;
	struct job *js = calloc(nj, sizeof(*js));
	struct gf_report_series *series = calloc(npols, sizeof(*series));
	struct gf_openb_result *runs = calloc(nj, sizeof(*runs));
	char workload[GF_NAME_MAX], cluster[GF_NAME_MAX];

	if (!js || !series || !runs) {
		fprintf(stderr, "gpufleet simulate: out of memory\n");
		goto out_jobs;
	}
	for (size_t k = 0; k < npols; k++) {
		for (int i = 0; i < nseeds; i++) {
			js[k * (size_t)nseeds + (size_t)i] = job_for(in.x, pols[k], tune, seeds[i], feat);
		}
	}
	if (run_jobs(js, nj, (int)jobs, quiet, "replaying"))
		goto out_jobs;
	if (placed_nothing(js, nj, pods_path, nodes_path)) {
		rc = 1;	/* it ran, and the answer is empty: as --reproduce's failed check */
		goto out_jobs;
	}

	gf_trace_file_name(pods_path, workload, sizeof(workload));
	gf_trace_file_name(nodes_path, cluster, sizeof(cluster));
	for (size_t k = 0; k < npols; k++) {
		for (int i = 0; i < nseeds; i++)
			runs[k * (size_t)nseeds + (size_t)i] = js[k * (size_t)nseeds + (size_t)i].res;
		series[k].label = pols[k]->label;
		series[k].ours = pols[k]->ours;
		series[k].nruns = nseeds;
		series[k].runs = &runs[k * (size_t)nseeds];
		series[k].seeds = seeds;
		series[k].paper = gf_reference_figures(
			fabs(tune - 1.3) < 1e-9 ? gf_reference_find(&ref, workload, pols[k]->label) : NULL);
	}
	struct gf_report rep = {
		.workload = workload, .cluster = cluster, .nnodes = in.t.nnodes,
		.ngpus = gf_openb_ngpus(in.x), .tune = tune, .seeds = seeds_arg,
		.nseries = (int)npols, .series = series,
	};
	struct gf_obuf b;

	gf_obuf_init(&b, 64u << 20);
	gf_report_table(&rep, &b);
	if (!no_cost && trace_cost(&in, prices_path, &b)) {
		gf_obuf_release(&b);
		goto out_jobs;
	}
	if (gf_obuf_error(&b)) {
		gf_obuf_release(&b);
		goto out_jobs;
	}
	if (write_outputs(&rep, csv_path, html_path)) {
		gf_obuf_release(&b);
		goto out_jobs;
	}
	fputs(b.data, stdout);
	gf_obuf_release(&b);
	rc = 0;
out_jobs:
	for (size_t j = 0; js && j < nj; j++)
		gf_openb_result_release(&js[j].res);
	free(js);
	free(series);
	free(runs);
	inputs_release(&in);
out_ref:
	gf_reference_release(&ref);
	return rc;
}
