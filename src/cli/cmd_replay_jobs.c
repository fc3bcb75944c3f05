/*
 * cli/cmd_replay_jobs.c - `gpufleet replay` (jobs): argument parsing and wiring.
 *
 * Reads the node list and a timed pod list, prepares the experiment
 * (sim/replay.h), runs one replay per (queue policy, seed) on a small pool
 * of threads (runs share the prepared experiment read-only and are
 * independent, so the output does not depend on the thread count), then
 * prints the per-class table (means over seeds) and writes the files asked
 * for (the HTML report through core/htmlrep: the table, allocation and
 * pending jobs over time, the burst's waits, a sentence per chart).
 * Nothing is printed as a result unless every run succeeded.  Wall
 * time and events per second go to stderr (not part of the result).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/experiment.h"
#include "cli/files.h"
#include "core/duration.h"
#include "core/htmlrep.h"
#include "core/obuf.h"
#include "yaml/queues.h"
#include "sim/replay.h"
#include "sim/trace.h"

#define MAX_SEEDS 1000

/* Long options without a short letter. */
enum { OPT_PREEMPTION_AFTER = 256, OPT_PREEMPTION_GRACE, OPT_THREADS };

static const char usage_text[] =
	"usage: gpufleet replay [options]\n"
	"\n"
	"Replay jobs in virtual time through the engine's queue and compare queue\n"
	"policies: waits per class, completion times, GPU allocation, partially\n"
	"placed gangs.  With no options: the bundled Alibaba openb default trace at\n"
	"90% offered GPU load for 12 h, the weekly validation burst at 4 h (24\n"
	"training jobs of 8-GPU pods, 8 of them gangs of 4 pods), FGD placement,\n"
	"queue policies kube, strict-fifo, best-effort-fifo and backfill, seeds 42-51.\n"
	"\n"
	"options:\n"
	"  --serving               replay an inference trace against autoscalers instead\n"
	"                          (gpufleet replay --serving --help)\n"
	"  --spot, --spot-trace FILE  replay on spot pools with notices: on-demand only, kube,\n"
	"                          drain and gpufleet compared (gpufleet replay --spot --help)\n"
	"  --autoscale             buy nodes on request: never, gpufleet, every pending pod\n"
	"                          compared (gpufleet replay --autoscale --help)\n"
	"  --nodes FILE            node list CSV [data/openb/openb_node_list_gpu_node.csv]\n"
	"  --pods FILE             pod list CSV with creation_time,deletion_time[,scheduled_time][,qos]\n"
	"                          [data/openb/openb_pod_list_default.csv]\n"
	"  --load X                offered GPU load, fraction of capacity, (0, 2] [0.9]\n"
	"  --horizon T             how long the replay runs (arrivals and statistics), e.g.\n"
	"                          12h, 90m, 1h30m, 3600 [12h]\n"
	"  --burst off|T           the validation burst's time, or off [4h]\n"
	"  --queue-policy LIST     kube, strict-fifo, best-effort-fifo, backfill (EASY),\n"
	"                          conservative-backfill, per-queue (each --queues queue's\n"
	"                          ordering) [the first four]\n"
	"  --policy NAME           placement policy [fgd]\n"
	"  --seeds LIST            e.g. 42-51, 42, 1,5,7-9 [42-51]; --seed N: one\n"
	"  --estimate MODE         run-time estimates for reservations: exact, overestimate:F\n"
	"                          (F >= 1: run time x uniform[1, F]) or history (the mean run\n"
	"                          time of the class's finished jobs; 1 h before any) [exact]\n"
	"  --summary-csv FILE      one row per queue policy, seed and class\n"
	"  --timeline-csv FILE     allocation, pending and running every minute, per policy and seed\n"
	"  --report FILE.html      self-contained HTML report (inline SVG charts)\n"
	"  --threads N             runs in parallel [number of CPUs]\n"
	"  --quiet                 no progress or timing on stderr\n"
	"  -h, --help              this text\n"
	"  --version               the version and commit\n"
	"\n"
	"  --preemption[=on|off]   a job evicts lower priorities when that is the only way it\n"
	"                          fits soon (backfill: its reservation is later than now +\n"
	"                          --preemption-after; the FIFOs: at once; never with kube) [on]\n"
	"  --preemption-after T    the \"soon\" of --preemption [30s]\n"
	"  --preemption-grace T    victims' termination grace: a preemptor starts this much\n"
	"                          after evicting [30s]\n"
	"  --order draw|trace      arrivals: pods drawn uniformly from the trace, or the\n"
	"                          trace's pods in creation_time order, cycling [draw]\n"
	"  --queues FILE           quotas: GPUQueue objects in YAML (docs/replay.md); each job class\n"
	"                          goes to the queue of its name (burst, ls, be) unless --queue-map\n"
	"  --queue-map LIST        e.g. burst=training,LS=serving,BE=batch\n"
	"  --forecast-at T         ask every pending job \"when will I start?\" at T and report\n"
	"                          how far the answers were from the real starts\n"
	"  --as-listed             run --pods's rows as written, each one job (a gang of its\n"
	"                          optional `pods` column), arriving at creation_time, running\n"
	"                          deletion_time - creation_time once bound; no warm start, no\n"
	"                          burst, nodes in --nodes's order; prints each job's start and\n"
	"                          nodes (to compare with a live run: docs/replay.md)\n"
	"  --jobs-csv FILE         with --as-listed: queue_policy,seed,job,pods,arrival_s,\n"
	"                          start_s,end_s,nodes (nodes ';'-separated, in member order)\n"
	"Durations: 30s, 5m, 1h30m (a plain number is seconds).  Deprecated spellings, still\n"
	"read: --jobs N (--threads), --preempt-wait (--preemption-after), --preempt-grace\n"
	"(--preemption-grace).  docs/cli.md.\n"
	"Data files are looked up in $GPUFLEET_DATA, else in the source tree's data/.\n";

struct run {
	const gf_replay *x;
	const struct gf_policy_ops *ops;
	struct gf_replay_config cfg;
	struct gf_replay_result res;
	gf_err err;
};

static void run_one(void *ctx, size_t i)
{
	struct run *r = (struct run *)ctx + i;

	r->err = gf_replay_run(r->x, r->ops, &r->cfg, &r->res);
}

static int run_all(struct run *runs, size_t n, int nthreads)
{
	gf_cli_run_parallel(n, nthreads, run_one, runs, NULL, NULL);
	for (size_t i = 0; i < n; i++) {
		if (runs[i].err) {
			fprintf(stderr, "gpufleet replay: run of %s, seed %llu failed: %s\n",
				gf_queue_policy_name(runs[i].cfg.qp), (unsigned long long)runs[i].cfg.seed,
				gf_strerror(runs[i].err));
			return -1;
		}
	}
	return 0;
}

/* "12h", "90m", "1h30m", "3600", "3600s" -> whole seconds (core/duration.h); false if malformed. */
static bool parse_duration(const char *s, int64_t *out)
{
	int64_t ms;

	if (!gf_duration_parse(s, GF_MS_PER_S, &ms) || ms % GF_MS_PER_S)
		return false;
	*out = ms / GF_MS_PER_S;
	return true;
}

static bool parse_queue_policies(const char *arg, enum gf_queue_policy *out, int *n)
{
	const char *p = arg;

	*n = 0;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t l = comma ? (size_t)(comma - p) : strlen(p);
		char name[32];

		if (l == 0 || l >= sizeof(name) || *n == GF_QP_COUNT_)
			return false;
		memcpy(name, p, l);
		name[l] = '\0';
		if (!gf_queue_policy_find(name, &out[*n]))
			return false;
		(*n)++;
		p += l;
		if (*p == ',')
			p++;
	}
	return *n > 0;
}

static bool parse_estimate(const char *s, struct gf_replay_config *cfg)
{
	char *e;

	if (!strcmp(s, "exact") || !strcmp(s, "history")) {
		cfg->estimate = s[0] == 'e' ? GF_EST_EXACT : GF_EST_HISTORY;
		return true;
	}
	if (strncmp(s, "overestimate:", 13))
		return false;
	errno = 0;
	cfg->over = strtod(s + 13, &e);
	if (errno || e == s + 13 || *e || !(cfg->over >= 1.0) || cfg->over > 100)
		return false;
	cfg->estimate = GF_EST_OVER;
	return true;
}

struct inputs {
	struct gf_cli_trace t;
	gf_replay *x;
};

static void inputs_release(struct inputs *in)
{
	gf_replay_destroy(in->x);
	in->x = NULL;
	gf_cli_trace_release(&in->t);
}

static int load_inputs(const char *nodes_path, const char *pods_path, struct inputs *in)
{
	gf_err err;

	in->x = NULL;
	if (gf_cli_trace_load("replay", nodes_path, pods_path, true, &in->t))
		return -1;
	err = gf_replay_create(in->t.nodes, in->t.nnodes, in->t.pods, in->t.times, in->t.npods, &in->t.cat,
			       &in->x);
	if (err == GF_INVAL)
		fprintf(stderr, "gpufleet replay: %s: no pod asks for a GPU for a positive run time, so no load can be offered\n",
			pods_path);
	else if (err)
		fprintf(stderr, "gpufleet replay: cannot prepare the experiment: %s\n", gf_strerror(err));
	if (err) {
		inputs_release(in);
		return -1;
	}
	return 0;
}

/* Mean over seeds of one class's statistics for queue policy q. */
static struct gf_replay_class_stats mean_stats(const struct run *runs, int nseeds, int q, int c)
{
	struct gf_replay_class_stats m;

	memset(&m, 0, sizeof(m));
	for (int i = 0; i < nseeds; i++) {
		const struct gf_replay_class_stats *s = &runs[q * nseeds + i].res.cls[c];

		m.jobs += s->jobs;
		m.started += s->started;
		m.wait_p50 += s->wait_p50 / nseeds;
		m.wait_p95 += s->wait_p95 / nseeds;
		m.wait_max += s->wait_max / nseeds;
		m.jct_mean += s->jct_mean / nseeds;
		m.gpu_alloc_avg_pct += s->gpu_alloc_avg_pct / nseeds;
		m.partial_gangs += s->partial_gangs;
		m.preemptions += s->preemptions;
		m.preempted_gpu_h += s->preempted_gpu_h / nseeds;
	}
	return m;
}

static void print_table(struct gf_obuf *b, const struct run *runs, const enum gf_queue_policy *qps,
			int nqp, int nseeds)
{
	gf_obuf_printf(b, "%-21s %-9s %8s %8s %9s %9s %9s %10s %7s %8s %6s %9s\n", "queue policy",
		       "class", "jobs", "started", "wait p50", "wait p95", "wait max", "JCT mean",
		       "GPU %", "partial", "preem", "preem GPUh");
	for (int q = 0; q < nqp; q++) {
		for (int c = 0; c < GF_RC_COUNT; c++) {
			struct gf_replay_class_stats m = mean_stats(runs, nseeds, q, c);

			gf_obuf_printf(b, "%-21s %-9s %8.1f %8.1f %9.0f %9.0f %9.0f %10.0f %7.2f %8.1f %6.1f %9.2f\n",
				       gf_queue_policy_name(qps[q]), gf_replay_class_name((enum gf_replay_class)c),
				       (double)m.jobs / nseeds, (double)m.started / nseeds, m.wait_p50,
				       m.wait_p95, m.wait_max, m.jct_mean, m.gpu_alloc_avg_pct,
				       (double)m.partial_gangs / nseeds, (double)m.preemptions / nseeds,
				       m.preempted_gpu_h);
		}
	}
}

static void summary_csv(struct gf_obuf *b, const struct run *runs, size_t nruns)
{
	gf_obuf_puts(b, "queue_policy,placement,seed,class,jobs,started,wait_p50_s,wait_p95_s,wait_max_s,"
			"jct_mean_s,gpu_alloc_avg_pct,partial_gangs,preemptions,preempted_gpu_h\n");
	for (size_t r = 0; r < nruns; r++) {
		for (int c = 0; c < GF_RC_COUNT; c++) {
			const struct gf_replay_class_stats *s = &runs[r].res.cls[c];

			gf_obuf_printf(b, "%s,%s,%llu,%s,%lld,%lld,%.0f,%.0f,%.0f,%.1f,%.3f,%lld,%lld,%.3f\n",
				       gf_queue_policy_name(runs[r].cfg.qp), runs[r].ops->name,
				       (unsigned long long)runs[r].cfg.seed,
				       gf_replay_class_name((enum gf_replay_class)c), (long long)s->jobs,
				       (long long)s->started, s->wait_p50, s->wait_p95, s->wait_max,
				       s->jct_mean, s->gpu_alloc_avg_pct, (long long)s->partial_gangs,
				       (long long)s->preemptions, s->preempted_gpu_h);
		}
	}
}

static void timeline_csv(struct gf_obuf *b, const struct run *runs, size_t nruns, int64_t ngpus)
{
	gf_obuf_puts(b, "queue_policy,seed,time_s,gpu_alloc_pct,pending,running\n");
	for (size_t r = 0; r < nruns; r++) {
		const struct gf_replay_result *res = &runs[r].res;

		for (size_t k = 0; k < res->ntimeline; k++)
			gf_obuf_printf(b, "%s,%llu,%lld,%.3f,%u,%u\n", gf_queue_policy_name(runs[r].cfg.qp),
				       (unsigned long long)runs[r].cfg.seed, (long long)res->timeline[k].time,
				       (double)res->timeline[k].gpu_used / 10.0 / (double)ngpus,
				       res->timeline[k].pending, res->timeline[k].running);
	}
}

static const char *const colors[GF_QP_COUNT_] = { "#d62728", "#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b" };

/*
 * Policy q's timeline of allocation (% of capacity) or pending jobs: the
 * mean over seeds when every seed sampled the same times, else the first
 * seed's.  xs (hours) and ys hold n = the first seed's ntimeline values.
 * Returns the number of seeds averaged.
 */
static int timeline_mean(const struct run *runs, int nseeds, int q, int64_t ngpus, bool pending, double *xs,
			 double *ys)
{
	const struct gf_replay_result *r0 = &runs[q * nseeds].res;
	int used = 1;

	for (int i = 1; i < nseeds; i++) {
		const struct gf_replay_result *r = &runs[q * nseeds + i].res;

		if (r->ntimeline != r0->ntimeline)
			break;
		size_t k = 0;

		while (k < r->ntimeline && r->timeline[k].time == r0->timeline[k].time)
			k++;
		if (k < r->ntimeline)
			break;
		used = i + 1;
	}
	for (size_t k = 0; k < r0->ntimeline; k++) {
		double sum = 0;

		for (int i = 0; i < used; i++) {
			const struct gf_loop_sample *t = &runs[q * nseeds + i].res.timeline[k];

			sum += pending ? (double)t->pending : (double)t->gpu_used / 10.0 / (double)ngpus;
		}
		xs[k] = (double)r0->timeline[k].time / 3600.0;
		ys[k] = sum / used;
	}
	return used;
}

/* One line chart over time, a line per queue policy; the sentence compares the time averages. */
static void html_timeline(struct gf_obuf *b, const struct run *runs, int nqp, int nseeds, int64_t ngpus,
			  bool pending)
{
	size_t n = 0;
	struct gf_chart_line lines[GF_QP_COUNT_];
	double avg[GF_QP_COUNT_];
	double *buf;
	int used = nseeds, best = 0, worst = 0;
	char summary[512] = "";

	for (int q = 0; q < nqp; q++)
		if (runs[q * nseeds].res.ntimeline > n)
			n = runs[q * nseeds].res.ntimeline;
	buf = malloc(2 * (n ? n : 1) * (size_t)nqp * sizeof(*buf));
	if (!buf) {
		b->err = b->err ? b->err : GF_NOMEM;
		return;
	}
	for (int q = 0; q < nqp; q++) {
		const struct run *run = &runs[q * nseeds];
		double *xs = buf + 2 * n * (size_t)q, *ys = xs + n;
		size_t m = run->res.ntimeline;
		int u = timeline_mean(runs, nseeds, q, ngpus, pending, xs, ys);

		used = u < used ? u : used;
		avg[q] = 0;
		for (size_t k = 0; k < m; k++)
			avg[q] += ys[k] / (double)m;
		lines[q] = (struct gf_chart_line){ .label = gf_queue_policy_name(run->cfg.qp),
						   .colour = colors[run->cfg.qp], .n = m, .x = xs, .y = ys };
		/* allocation: the highest is best; pending: the lowest */
		if (pending ? avg[q] < avg[best] : avg[q] > avg[best])
			best = q;
		if (pending ? avg[q] > avg[worst] : avg[q] < avg[worst])
			worst = q;
	}
	if (nqp > 1 && !pending)
		snprintf(summary, sizeof(summary), "%s keeps allocation highest, %.2f %% on average over the run, "
						   "%.2f points above %s (%.2f %%).",
			 lines[best].label, avg[best], avg[best] - avg[worst], lines[worst].label, avg[worst]);
	else if (nqp > 1)
		snprintf(summary, sizeof(summary), "%s keeps the fewest jobs pending, %.1f on average over the run, "
						   "against %.1f under %s.",
			 lines[best].label, avg[best], avg[worst], lines[worst].label);
	char title[160];

	snprintf(title, sizeof(title), "%s over time (%s)", pending ? "Pending jobs" : "GPU allocation",
		 used > 1 ? "mean over seeds" : "first seed");
	struct gf_line_chart ch = {
		.title = title, .summary = summary[0] ? summary : NULL, .x_label = "time since the start, hours",
		.y_label = pending ? "pending jobs" : "allocated GPU, % of capacity", .x_unit = " h",
		.y_unit = pending ? " jobs" : " %", .x_decimals = 2, .y_decimals = pending ? 1 : 2,
		.y_zero = pending, .y_floor = 0, .y_ceil = pending ? NAN : 100, .nlines = nqp, .lines = lines,
	};

	gf_html_line_chart(b, &ch);
	free(buf);
}

/* The burst's waits: a dot per queue policy at the p95 wait (mean over seeds), a tick at the p50. */
static void html_burst(struct gf_obuf *b, const struct run *runs, const enum gf_queue_policy *qps, int nqp,
		       int nseeds)
{
	struct gf_dot_row rows[GF_QP_COUNT_];
	int best = 0, worst = 0;
	char summary[512] = "";

	for (int q = 0; q < nqp; q++) {
		struct gf_replay_class_stats m = mean_stats(runs, nseeds, q, GF_RC_BURST);

		rows[q] = (struct gf_dot_row){ .label = gf_queue_policy_name(qps[q]), .colour = colors[qps[q]],
					       .value = m.wait_p95 / 3600.0, .mark = m.wait_p50 / 3600.0 };
		if (rows[q].value < rows[best].value)
			best = q;
		if (rows[q].value > rows[worst].value)
			worst = q;
	}
	/* every policy as fast as the best, to the 0.01 h shown, is named */
	int len = 0, nbest = 0;

	for (int q = 0; q < nqp && nqp > 1; q++) {
		if (rows[q].value - rows[best].value >= 0.005 || len < 0 || (size_t)len >= sizeof(summary))
			continue;
		len += snprintf(summary + len, sizeof(summary) - (size_t)len, "%s%s", nbest ? ", " : "",
				rows[q].label);
		nbest++;
	}
	char *comma = nbest > 1 && len > 0 && (size_t)len < sizeof(summary) ? strrchr(summary, ',') : NULL;

	if (comma && (size_t)len + 4 < sizeof(summary)) {	/* "a, b, c" -> "a, b and c" */
		memmove(comma + 4, comma + 1, strlen(comma + 1) + 1);
		memcpy(comma, " and", 4);
		len += 3;
	}
	if (nbest && nbest < nqp && len > 0 && (size_t)len < sizeof(summary))
		snprintf(summary + len, sizeof(summary) - (size_t)len,
			 " start%s 95 %% of the burst's jobs within %.2f h of their arrival; %s takes %.2f h.",
			 nbest > 1 ? "" : "s", rows[best].value, rows[worst].label, rows[worst].value);
	else if (nbest)
		snprintf(summary, sizeof(summary), "Every queue policy starts 95 %% of the burst's jobs within %.2f h.",
			 rows[worst].value);
	struct gf_dot_chart ch = {
		.title = "The burst's waits", .summary = summary[0] ? summary : NULL,
		.x_label = "wait from arrival to start, hours (mean over seeds)", .unit = " h",
		.value_name = "p95 wait", .mark_name = "p50 wait", .decimals = 2, .x_zero = true,
		.x_floor = 0, .x_ceil = NAN, .nrows = nqp, .rows = rows,
	};

	gf_html_dot_chart(b, &ch);
}

static void html_table(struct gf_obuf *b, const struct run *runs, const enum gf_queue_policy *qps, int nqp,
		       int nseeds)
{
	static const char *const heads[] = { "jobs", "started", "wait p50 (s)", "wait p95 (s)", "wait max (s)",
					     "JCT mean (s)", "GPU %", "partial", "preem", "preem GPU-h" };

	gf_html_table_begin(b, "Per queue policy and job class, means over the seeds.");
	gf_html_th(b, "queue policy", 1);
	gf_html_th(b, "class", 1);
	for (size_t k = 0; k < sizeof(heads) / sizeof(heads[0]); k++)
		gf_obuf_printf(b, "<th class=\"n\">%s</th>", heads[k]);
	for (int q = 0; q < nqp; q++) {
		for (int c = 0; c < GF_RC_COUNT; c++) {
			struct gf_replay_class_stats m = mean_stats(runs, nseeds, q, c);

			gf_html_tr(b);
			if (c == 0)
				gf_obuf_printf(b, "<th class=\"rh\" rowspan=\"%d\" style=\"color:%s\">%s</th>", GF_RC_COUNT,
					       colors[qps[q]], gf_queue_policy_name(qps[q]));
			gf_html_td(b, gf_replay_class_name((enum gf_replay_class)c));
			gf_html_td_num(b, (double)m.jobs / nseeds, 1);
			gf_html_td_num(b, (double)m.started / nseeds, 1);
			gf_html_td_num(b, m.wait_p50, 0);
			gf_html_td_num(b, m.wait_p95, 0);
			gf_html_td_num(b, m.wait_max, 0);
			gf_html_td_num(b, m.jct_mean, 0);
			gf_html_td_num(b, m.gpu_alloc_avg_pct, 2);
			gf_html_td_num(b, (double)m.partial_gangs / nseeds, 1);
			gf_html_td_num(b, (double)m.preemptions / nseeds, 1);
			gf_html_td_num(b, m.preempted_gpu_h, 2);
		}
	}
	gf_html_table_end(b);
}

/* notes: the text printed under the table on stdout, one paragraph per line. */
static void report_html(struct gf_obuf *b, const char *title, const char *notes, const struct run *runs,
			const enum gf_queue_policy *qps, int nqp, int nseeds, int64_t ngpus, bool burst)
{
	gf_html_begin(b, "gpufleet replay", "gpufleet replay");
	gf_obuf_puts(b, "<p class=\"meta\">");
	gf_html_text(b, title);
	gf_obuf_puts(b, ".</p>\n<h2>Summary</h2>\n");
	html_table(b, runs, qps, nqp, nseeds);
	gf_html_paragraphs(b, notes, "note");
	gf_obuf_puts(b, "<h2>Charts</h2>\n");
	html_timeline(b, runs, nqp, nseeds, ngpus, false);
	html_timeline(b, runs, nqp, nseeds, ngpus, true);
	if (burst)
		html_burst(b, runs, qps, nqp, nseeds);
	gf_html_end(b);
}

struct options {
	const char *nodes, *pods, *summary, *timeline, *html, *seeds_arg, *queues, *queue_map, *jobs_csv;
	bool as_listed;
	const struct gf_policy_ops *ops;
	enum gf_queue_policy qps[GF_QP_COUNT_];
	int nqp;
	struct gf_replay_config cfg;
	long jobs;
	bool quiet;
};

static int bad(const char *opt, const char *what, const char *found)
{
	fprintf(stderr, "gpufleet replay: %s: expected %s, found \"%s\"\n", opt, what, found);
	return 2;
}

/* Parse the options into *o; 0, or the exit status (2 bad usage, -1 --help printed). */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "pods", required_argument, NULL, 'p' },
		{ "load", required_argument, NULL, 'l' },
		{ "horizon", required_argument, NULL, 'H' },
		{ "burst", required_argument, NULL, 'b' },
		{ "queue-policy", required_argument, NULL, 'Q' },
		{ "policy", required_argument, NULL, 'P' },
		{ "seeds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 's' },
		{ "estimate", required_argument, NULL, 'e' },
		{ "queues", required_argument, NULL, 'U' },
		{ "queue-map", required_argument, NULL, 'M' },
		{ "forecast-at", required_argument, NULL, 'F' },
		{ "preemption", optional_argument, NULL, 'E' },
		{ "preemption-after", required_argument, NULL, OPT_PREEMPTION_AFTER },
		{ "preemption-grace", required_argument, NULL, OPT_PREEMPTION_GRACE },
		{ "preempt-wait", required_argument, NULL, 'W' },
		{ "preempt-grace", required_argument, NULL, 'G' },
		{ "order", required_argument, NULL, 'O' },
		{ "summary-csv", required_argument, NULL, 'S' },
		{ "timeline-csv", required_argument, NULL, 'T' },
		{ "report", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "as-listed", no_argument, NULL, 'L' },
		{ "jobs-csv", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	char *e;

	optind = 1;
	opterr = 0; /* ':' and '?' below say it in the words scripts and tests know */
	for (;;) {
		int at = optind; /* for gf_cli_option_error() */

		opt = getopt_long(argc, argv, ":h", longopts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 'n': o->nodes = optarg; break;
		case 'p': o->pods = optarg; break;
		case 'S': o->summary = optarg; break;
		case 'T': o->timeline = optarg; break;
		case 'r': o->html = optarg; break;
		case 's': o->seeds_arg = optarg; break;
		case 'q': o->quiet = true; break;
		case 'L': o->as_listed = true; break;
		case 'J': o->jobs_csv = optarg; break;
		case 'l':
			errno = 0;
			o->cfg.load = strtod(optarg, &e);
			if (errno || e == optarg || *e || !(o->cfg.load > 0) || o->cfg.load > 2)
				return bad("--load", "a number in (0, 2]", optarg);
			break;
		case 'H':
			if (!parse_duration(optarg, &o->cfg.horizon) || o->cfg.horizon <= 0)
				return bad("--horizon", "a positive duration like 12h, 90m or 3600", optarg);
			break;
		case 'b':
			o->cfg.burst = strcmp(optarg, "off") != 0;
			if (o->cfg.burst && !parse_duration(optarg, &o->cfg.burst_at))
				return bad("--burst", "off or a time like 4h, 240m or 14400", optarg);
			break;
		case 'Q':
			if (!parse_queue_policies(optarg, o->qps, &o->nqp))
				return bad("--queue-policy", "a list of kube, strict-fifo, best-effort-fifo, backfill, conservative-backfill, per-queue", optarg);
			break;
		case 'P':
			o->ops = gf_policy_find(optarg);
			if (!o->ops)
				return bad("--policy", "a placement policy (see gpufleet simulate --help)", optarg);
			break;
		case 'e':
			if (!parse_estimate(optarg, &o->cfg))
				return bad("--estimate", "exact, history or overestimate:F with F in [1, 100]", optarg);
			break;
		case 'U': o->queues = optarg; break;
		case 'M': o->queue_map = optarg; break;
		case 'F':
			if (!parse_duration(optarg, &o->cfg.forecast_at))
				return bad("--forecast-at", "a time like 250m, 4h or 15000", optarg);
			break;
		case 'E': {
			bool on;
			if (!gf_cli_onoff("replay", "--preemption", optarg, argc, argv, &on))
				return 2;
			o->cfg.preemption = on;
			break;
		}
		case 'O':
			if (strcmp(optarg, "draw") && strcmp(optarg, "trace"))
				return bad("--order", "draw or trace", optarg);
			o->cfg.trace_order = !strcmp(optarg, "trace");
			break;
		case 'W':
			gf_cli_deprecated("replay", "--preempt-wait", "--preemption-after");
			/* fall through */
		case OPT_PREEMPTION_AFTER:
			if (!parse_duration(optarg, &o->cfg.preempt_wait))
				return bad(opt == 'W' ? "--preempt-wait" : "--preemption-after",
					   "a duration like 10m, 600 or 0", optarg);
			break;
		case 'G':
			gf_cli_deprecated("replay", "--preempt-grace", "--preemption-grace");
			/* fall through */
		case OPT_PREEMPTION_GRACE:
			if (!parse_duration(optarg, &o->cfg.preempt_grace))
				return bad(opt == 'G' ? "--preempt-grace" : "--preemption-grace",
					   "a duration like 30s, 30 or 0", optarg);
			break;
		case 'j':
			gf_cli_deprecated("replay", "--jobs", "--threads");
			/* fall through */
		case OPT_THREADS:
			errno = 0;
			o->jobs = strtol(optarg, &e, 10);
			if (errno || e == optarg || *e || o->jobs < 1 || o->jobs > 64)
				return bad(opt == 'j' ? "--jobs" : "--threads", "1..64", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		default:
			return gf_cli_option_error("replay", opt, argv, at);
		}
	}
	if (gf_cli_operands("replay", argc, argv))
		return 2;
	if (o->jobs_csv && !o->as_listed) {
		fprintf(stderr, "gpufleet replay: --jobs-csv needs --as-listed\n");
		return 2;
	}
	if (o->as_listed && (o->queues || o->summary || o->timeline || o->html || o->cfg.forecast_at >= 0)) {
		fprintf(stderr, "gpufleet replay: --as-listed takes none of --queues, --summary-csv, "
				"--timeline-csv, --report, --forecast-at\n");
		return 2;
	}
	if (o->cfg.burst && o->cfg.burst_at >= o->cfg.horizon) {
		fprintf(stderr, "gpufleet replay: --burst: the burst (at %lld s) must come before the end of --horizon (%lld s)\n",
			(long long)o->cfg.burst_at, (long long)o->cfg.horizon);
		return 2;
	}
	return 0;
}

/* The queue of class c: from --queue-map, else the queue named as the class. */
static int class_queue(const struct options *o, const struct gf_queue_file *qf, enum gf_replay_class c)
{
	const char *cname = gf_replay_class_name(c);
	const char *m = o->queue_map;
	size_t cl = strlen(cname);

	while (m && *m) {
		const char *end = strchr(m, ',');
		size_t len = end ? (size_t)(end - m) : strlen(m);

		if (len > cl + 1 && !strncasecmp(m, cname, cl) && m[cl] == '=') {
			char name[GF_QUEUE_NAME_MAX];
			size_t nl = len - cl - 1;

			if (nl >= sizeof(name))
				break;
			memcpy(name, m + cl + 1, nl);
			name[nl] = 0;
			return gf_queue_file_find(qf, name);
		}
		m = end ? end + 1 : m + len;
	}
	return gf_queue_file_find(qf, cname);
}

/*
 * --queues: read and parse the file, map the job classes to its queues,
 * and give the engine its quotas (in *quota).  0, or 1 after one message.
 */
static int load_queues(struct options *o, const struct gf_catalog *cat, struct gf_queue_quota **quota)
{
	struct gf_queue_file qf;
	struct gf_queues_error qe;
	char *text;
	size_t len;
	gf_err err;

	if (gf_read_file(o->queues, &text, &len))
		return 1;
	err = gf_queues_parse(text, len, o->queues, &qf, &qe);
	free(text);
	if (err) {
		fprintf(stderr, "gpufleet replay: %s\n", err == GF_NOMEM ? "out of memory" : qe.msg);
		return 1;
	}
	if (qe.note[0])
		fprintf(stderr, "gpufleet replay: note: %s\n", qe.note);
	*quota = calloc(qf.n, sizeof(**quota));
	if (!*quota || (err = gf_queues_to_quota(&qf, cat, o->queues, *quota, &qe))) {
		fprintf(stderr, "gpufleet replay: %s\n", *quota ? qe.msg : "out of memory");
		gf_queue_file_release(&qf);
		return 1;
	}
	for (int c = GF_RC_BURST; c <= GF_RC_BE; c++) {
		int q = class_queue(o, &qf, (enum gf_replay_class)c);

		if (q < 0) {
			const char *cn = gf_replay_class_name((enum gf_replay_class)c);
			char lower[16];
			size_t k;

			for (k = 0; cn[k] && k + 1 < sizeof(lower); k++)
				lower[k] = (char)(cn[k] >= 'A' && cn[k] <= 'Z' ? cn[k] - 'A' + 'a' : cn[k]);
			lower[k] = 0;
			fprintf(stderr, "gpufleet replay: %s: no queue for the job class %s (name a queue %s, or map "
					"it with --queue-map %s=QUEUE)\n",
				o->queues, cn, lower, cn);
			gf_queue_file_release(&qf);
			return 1;
		}
		o->cfg.class_queue[c] = (uint16_t)q;
	}
	o->cfg.queues = *quota;
	o->cfg.nqueues = qf.n;
	gf_queue_file_release(&qf);
	return 0;
}

static const char *job_state_name(enum gf_job_state s)
{
	switch (s) {
	case GF_JOB_DONE: return "done";
	case GF_JOB_RUNNING: return "running";
	case GF_JOB_PENDING: return "stalled";
	case GF_JOB_UNRESOLVABLE: return "never fits";
	default: return "-";
	}
}

/* One as-listed run's rows: the table (t) and the CSV (c, NULL: none). */
static void listed_rows(struct gf_obuf *t, struct gf_obuf *c, const struct gf_cli_trace *tr,
			const struct gf_replay_job *jobs, enum gf_queue_policy qp, uint64_t seed)
{
	gf_obuf_printf(t, "queue policy %s, seed %llu\n%-24s %5s %9s %9s %9s %7s  %s\n", gf_queue_policy_name(qp),
		       (unsigned long long)seed, "job", "pods", "arrival", "start", "end", "wait", "nodes");
	for (size_t i = 0; i < tr->npods; i++) {
		const struct gf_replay_job *j = &jobs[i];

		gf_obuf_printf(t, "%-24s %5u %9lld ", tr->pods[i].name, j->npods, (long long)j->arrival);
		if (j->start >= 0)
			gf_obuf_printf(t, "%9lld %9lld %7lld  ", (long long)j->start, (long long)j->end,
				       (long long)(j->start - j->arrival));
		else
			gf_obuf_printf(t, "%9s %9s %7s  %s", "-", "-", "-", job_state_name(j->state));
		if (c)
			gf_obuf_printf(c, "%s,%llu,%s,%u,%lld,%lld,%lld,", gf_queue_policy_name(qp),
				       (unsigned long long)seed, tr->pods[i].name, j->npods, (long long)j->arrival,
				       (long long)j->start, (long long)j->end);
		for (uint32_t k = 0; j->nodes && k < j->npods; k++) {
			const char *n = tr->nodes[j->nodes[k]].name;

			gf_obuf_printf(t, "%s%s", k ? "," : "", n);
			if (c)
				gf_obuf_printf(c, "%s%s", k ? ";" : "", n);
		}
		gf_obuf_puts(t, "\n");
		if (c)
			gf_obuf_puts(c, "\n");
	}
}

/*
 * --as-listed: every queue policy and seed once over the rows as written
 * (gf_replay_listed), each job's start and nodes printed (and in --jobs-csv).
 */
static int run_listed(const struct options *o, const uint64_t *seeds, int nseeds)
{
	struct gf_cli_trace tr;
	struct gf_obuf t, c;
	int rc = 1;

	if (gf_cli_trace_load("replay", o->nodes, o->pods, true, &tr))
		return 1;
	gf_obuf_init(&t, 64u << 20);
	gf_obuf_init(&c, 64u << 20);
	gf_obuf_printf(&t, "replay as listed: %zu jobs of %s on %zu nodes (%lld GPUs), placement %s, %s estimates%s\n\n",
		       tr.npods, o->pods, tr.nnodes, (long long)tr.ngpus, o->ops->label,
		       o->cfg.estimate == GF_EST_EXACT ? "exact" : o->cfg.estimate == GF_EST_HISTORY ? "history" : "over",
		       o->cfg.preemption ? ", preemption on" : "");
	gf_obuf_puts(&c, "queue_policy,seed,job,pods,arrival_s,start_s,end_s,nodes\n");
	for (int q = 0; q < o->nqp; q++) {
		for (int i = 0; i < nseeds; i++) {
			struct gf_replay_config cfg = o->cfg;
			struct gf_replay_job *jobs;
			gf_err err;

			cfg.qp = o->qps[q];
			cfg.seed = seeds[i];
			err = gf_replay_listed(tr.nodes, tr.nnodes, tr.pods, tr.times, tr.npods, &tr.cat, o->ops,
					       &cfg, &jobs);
			if (err) {
				fprintf(stderr, "gpufleet replay: %s, seed %llu: %s\n", gf_queue_policy_name(cfg.qp),
					(unsigned long long)cfg.seed, gf_strerror(err));
				goto out;
			}
			listed_rows(&t, o->jobs_csv ? &c : NULL, &tr, jobs, cfg.qp, cfg.seed);
			gf_obuf_puts(&t, "\n");
			gf_replay_jobs_free(jobs, tr.npods);
		}
	}
	if (gf_obuf_error(&t) || gf_obuf_error(&c)) {
		fprintf(stderr, "gpufleet replay: out of memory\n");
		goto out;
	}
	if (o->jobs_csv && gf_write_rendered("replay", o->jobs_csv, &c))
		goto out;
	fputs(t.data, stdout);
	rc = 0;
out:
	gf_obuf_release(&t);
	gf_obuf_release(&c);
	gf_cli_trace_release(&tr);
	return rc;
}

int gf_cmd_replay_jobs(int argc, char **argv)
{
	struct gf_queue_quota *quota = NULL;
	const char *data_dir = gf_data_dir();
	char nodes_default[4096], pods_default[4096], workload[GF_NAME_MAX], cluster[GF_NAME_MAX];
	static uint64_t seeds[MAX_SEEDS];
	struct options o = {
		.nodes = nodes_default, .pods = pods_default, .seeds_arg = "42-51",
		.ops = &gf_policy_fgd, .qps = { GF_QP_KUBE, GF_QP_STRICT_FIFO, GF_QP_BEST_EFFORT_FIFO, GF_QP_BACKFILL },
		.nqp = 4, .cfg = gf_replay_config_default(), .jobs = sysconf(_SC_NPROCESSORS_ONLN),
	};
	struct inputs in;
	struct run *runs = NULL;
	int nseeds, rc;
	struct gf_obuf table, title;

	snprintf(nodes_default, sizeof(nodes_default), "%s/openb/openb_node_list_gpu_node.csv", data_dir);
	snprintf(pods_default, sizeof(pods_default), "%s/openb/openb_pod_list_default.csv", data_dir);
	rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	nseeds = gf_cli_parse_seeds(o.seeds_arg, seeds, MAX_SEEDS);
	if (nseeds <= 0)
		return bad("--seeds", "a list like 42-51 or 1,5,7-9 (at most 1000 seeds)", o.seeds_arg);
	if (o.jobs < 1)
		o.jobs = 1;
	if (o.as_listed)
		return run_listed(&o, seeds, nseeds);
	if (load_inputs(o.nodes, o.pods, &in))
		return 1;
	if (o.queues && load_queues(&o, &in.t.cat, &quota)) {
		free(quota); /* allocated before a later check failed */
		inputs_release(&in);
		return 1;
	}
	size_t nruns = (size_t)o.nqp * (size_t)nseeds;

	rc = 1;
	runs = calloc(nruns, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "gpufleet replay: out of memory\n");
		goto out;
	}
	for (int q = 0; q < o.nqp; q++) {
		for (int i = 0; i < nseeds; i++) {
			struct run *r = &runs[q * nseeds + i];

			r->x = in.x;
			r->ops = o.ops;
			r->cfg = o.cfg;
			r->cfg.qp = o.qps[q];
			r->cfg.seed = seeds[i];
		}
	}
	double t0 = gf_cli_seconds();

	if (run_all(runs, nruns, (int)o.jobs))
		goto out;
	double wall = gf_cli_seconds() - t0;
	uint64_t events = 0;

	for (size_t r = 0; r < nruns; r++)
		events += runs[r].res.loop.events;
	if (!o.quiet)
		fprintf(stderr, "replay: %zu runs, %llu events in %.2f s wall (%.0f events/s, %ld threads)\n",
			nruns, (unsigned long long)events, wall, (double)events / wall, o.jobs);

	gf_trace_file_name(o.pods, workload, sizeof(workload));
	gf_trace_file_name(o.nodes, cluster, sizeof(cluster));
	const struct gf_replay_result *r0 = &runs[0].res;

	gf_obuf_init(&title, 4096);
	gf_obuf_printf(&title, "replay of %s on %s (%zu nodes, %lld GPUs), placement %s, offered load %.2f "
			       "(%.3f arrivals/s), %.1f h",
		       workload, cluster, in.t.nnodes, (long long)in.t.ngpus, o.ops->label, r0->offered_load,
		       r0->rate_per_s, (double)o.cfg.horizon / 3600.0);
	if (o.cfg.burst)
		gf_obuf_printf(&title, ", burst at %.2f h", (double)o.cfg.burst_at / 3600.0);
	else
		gf_obuf_puts(&title, ", no burst");
	if (o.cfg.estimate == GF_EST_EXACT)
		gf_obuf_puts(&title, ", exact estimates");
	else if (o.cfg.estimate == GF_EST_HISTORY)
		gf_obuf_puts(&title, ", history estimates (class means)");
	else
		gf_obuf_printf(&title, ", estimates run time x U[1, %g]", o.cfg.over);
	if (o.cfg.preemption)
		gf_obuf_printf(&title, ", preemption on (wait %llds, grace %llds)",
			       (long long)o.cfg.preempt_wait, (long long)o.cfg.preempt_grace);
	gf_obuf_puts(&title, o.cfg.trace_order ? ", arrivals in trace order" : "");
	gf_obuf_printf(&title, ", seeds %s (means over seeds)", o.seeds_arg);

	gf_obuf_init(&table, 1u << 20);
	print_table(&table, runs, o.qps, o.nqp, nseeds);
	size_t notes_at = table.len;
	int64_t warm = 0, dropped = 0, unres = 0, stalled = 0, late = 0, short_est = 0, reclaims = 0;
	int64_t quota_blocked = 0;
	double warm_pct = 0;

	for (size_t r = 0; r < nruns; r++) {
		warm += runs[r].res.warm_jobs;
		dropped += runs[r].res.warm_dropped;
		unres += runs[r].res.unresolvable;
		stalled += runs[r].res.loop.stalled;
		late += (int64_t)runs[r].res.loop.late;
		short_est += (int64_t)runs[r].res.loop.short_estimates;
		reclaims += (int64_t)runs[r].res.loop.reclaims;
		quota_blocked += (int64_t)runs[r].res.loop.quota_blocked;
		warm_pct += runs[r].res.warm_gpu_pct / (double)nruns;
	}
	gf_obuf_printf(&table, "\nwarm start: %.1f jobs per run already running at 0 h (GPU allocation %.2f %%; %.1f "
			       "drawn did not fit); jobs that can never fit: %lld; jobs stalled at the end: %lld; "
			       "reservations kept late: %lld\n"
			       "wait and JCT in seconds; GPU %% time-averaged over the horizon (all: every job, warm "
			       "start included); partial: gangs that held some but not all pods at a cycle's end; "
			       "preem: evictions of the class's jobs and their lost GPU-hours%s\n",
		       (double)warm / (double)nruns, warm_pct, (double)dropped / (double)nruns,
		       (long long)unres, (long long)stalled, (long long)late,
		       o.cfg.preemption ? " (kube never preempts)" : " (preemption off)");
	if (o.cfg.estimate == GF_EST_HISTORY)
		gf_obuf_printf(&table, "history estimates: %.1f running jobs per run outran their estimate (then "
				       "expected to run twice as long as they had; every plan made again)\n",
			       (double)short_est / (double)nruns);
	for (int q = 0; o.cfg.forecast_at >= 0 && q < o.nqp; q++) {
		double jobs = 0, mae = 0, bias = 0, close = 0;

		for (int i = 0; i < nseeds; i++) {
			const struct gf_replay_result *res = &runs[q * nseeds + i].res;

			jobs += (double)res->forecast_jobs / nseeds;
			mae += res->forecast_mae_s / nseeds;
			bias += res->forecast_bias_s / nseeds;
			close += res->forecast_within_10m_pct / nseeds;
		}
		gf_obuf_printf(&table, "forecast at %lld s, %s: %.1f pending jobs answered, mean error %.0f s "
				       "(bias %+.0f s), %.1f %% within 10 minutes\n",
			       (long long)o.cfg.forecast_at, gf_queue_policy_name(o.qps[q]), jobs, mae, bias, close);
	}
	if (o.queues)
		gf_obuf_printf(&table, "quotas (%s, %zu queues; kube ignores them): %.1f evictions per run reclaimed "
				       "borrowed quota, %.1f tries per run refused by a quota\n",
			       o.queues, o.cfg.nqueues, (double)reclaims / (double)nruns,
			       (double)quota_blocked / (double)nruns);
	if (gf_obuf_error(&table) || gf_obuf_error(&title)) {
		fprintf(stderr, "gpufleet replay: out of memory\n");
		goto out_bufs;
	}
	if (o.summary) {
		struct gf_obuf c;

		gf_obuf_init(&c, 256u << 20);
		summary_csv(&c, runs, nruns);
		int fail = gf_write_rendered("replay", o.summary, &c);

		gf_obuf_release(&c);
		if (fail)
			goto out_bufs;
	}
	if (o.timeline) {
		struct gf_obuf c;

		gf_obuf_init(&c, 512u << 20);
		timeline_csv(&c, runs, nruns, in.t.ngpus);
		int fail = gf_write_rendered("replay", o.timeline, &c);

		gf_obuf_release(&c);
		if (fail)
			goto out_bufs;
	}
	if (o.html) {
		struct gf_obuf h;

		gf_obuf_init(&h, 64u << 20);
		report_html(&h, title.data, table.data + notes_at, runs, o.qps, o.nqp, nseeds, in.t.ngpus,
			    o.cfg.burst);
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
		gf_replay_result_release(&runs[r].res);
	free(runs);
	free(quota);
	inputs_release(&in);
	return rc;
}
