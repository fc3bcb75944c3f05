/*
 * cli/simulate_mig.c - `gpufleet simulate --mig`: wiring of the MIG experiment.
 *
 * Reads the node and pod lists, drops the pods' GPU-model constraints (every
 * GPU is taken as one MIG model, H100 80GB), prepares the openb experiment
 * once (gf_openb_create) for the attempt order and the target workload, and
 * runs, per seed: every static layout mig-parted ships for the model, the
 * two dynamic modes (sim/mig_exp.h), and milli sharing without isolation
 * (the openb run with FGD, the live scheduler's default policy).  Runs are
 * independent and spread over threads; each writes only its own slot, so
 * the output does not depend on the thread count.  The table and the CSV
 * are rendered after every run succeeded; the CSV is written all or none.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/experiment.h"
#include "cli/files.h"
#include "cli/simulate_mig.h"
#include "core/obuf.h"
#include "sim/mig_exp.h"
#include "sim/openb.h"

#define MIG_MODEL GF_MIG_H100_80GB
#define CSV_HEADER "layout,seed,mem_placed_pct_100,mem_placed_pct_130,pods_placed_130\n"

/* One row of the table: a static layout, dynamic-first, dynamic or milli. */
struct lay {
	char name[48];
	enum gf_mig_mode mode;
	int layout;
	bool milli;
};

struct run {
	const struct lay *lay;
	uint64_t seed;
	const struct gf_pod_spec *pods;	/* the seed's attempts */
	size_t npods;
	/* shared, read-only */
	const gf_openb *x;
	const struct gf_cli_trace *t;
	const struct gf_mig_target *tgt;
	struct gf_openb_config cfg;
	/* out */
	double at100, at130, held;
	int64_t placed;
	gf_err err;
};

static void run_one(void *ctx, size_t i)
{
	struct run *r = (struct run *)ctx + i;

	if (r->lay->milli) {
		struct gf_openb_result res;

		r->err = gf_openb_run(r->x, gf_policy_find("fgd"), &r->cfg, &res);
		if (r->err)
			return;
		r->at100 = gf_openb_at(&res, res.alloc, 100);
		r->at130 = gf_openb_at(&res, res.alloc, 130);
		r->held = NAN;
		r->placed = res.placed;
		gf_openb_result_release(&res);
		return;
	}
	struct gf_mig_exp_config c = { .model = MIG_MODEL, .mode = r->lay->mode, .layout = r->lay->layout,
				       .seed = r->seed };
	struct gf_mig_exp_result res;

	r->err = gf_mig_exp_run(r->t->nodes, r->t->nnodes, r->pods, r->npods, r->tgt, &c, &res);
	if (r->err)
		return;
	r->at100 = res.placed_at_100;
	r->at130 = res.placed_at_130;
	r->held = res.held_end;
	r->placed = res.placed;
}

struct progress {
	size_t n;
	double last;
};

static void show_progress(void *pctx, size_t done, double t)
{
	struct progress *pr = pctx;

	if (t > 1.0 && t - pr->last >= 5.0) {
		fprintf(stderr, "simulate --mig: %zu/%zu runs, %.0f s\n", done, pr->n, t);
		pr->last = t;
	}
}

static double mean_of(const struct run *rs, size_t n, size_t k, int what)
{
	double s = 0;

	for (size_t i = 0; i < n; i++) {
		const struct run *r = &rs[k * n + i];

		s += what == 0 ? r->at100 : what == 1 ? r->at130 : what == 2 ? (double)r->placed : r->held;
	}
	return s / (double)n;
}

int gf_cli_simulate_mig(const struct gf_cli_mig_opts *o)
{
	const struct gf_mig_model_info *mi = gf_mig_model(MIG_MODEL);
	struct gf_mig_layout layouts[GF_MIG_MAX_LAYOUTS];
	struct lay lays[GF_MIG_MAX_LAYOUTS + 3];
	struct gf_cli_trace t;
	struct gf_mig_target *tgt = NULL;
	gf_openb *x = NULL;
	struct gf_pod_spec **att = NULL;
	size_t *natt = NULL;
	struct run *rs = NULL;
	size_t nseeds = (size_t)o->nseeds, nl = 0;
	struct gf_obuf b, c;
	int rc = 2;
	gf_err err;

	if (gf_cli_trace_load("simulate", o->nodes_path, o->pods_path, false, &t))
		return 2;
	gf_obuf_init(&b, 1u << 20);
	gf_obuf_init(&c, 16u << 20);
	for (size_t i = 0; i < t.npods; i++)
		t.pods[i].spec = 0;	/* one GPU model: constraints on the old models drop */
	err = gf_openb_create(t.nodes, t.nnodes, t.pods, t.npods, &t.cat, &x);
	if (err) {
		fprintf(stderr, "gpufleet simulate: cannot prepare the experiment: %s\n", gf_strerror(err));
		goto out;
	}
	for (size_t i = 0; i < t.nnodes; i++) {
		if (t.nodes[i].ngpus > GF_MAX_GPUS) {
			fprintf(stderr, "gpufleet simulate: --mig: node %s has %d GPUs (at most %d)\n",
				t.nodes[i].name, t.nodes[i].ngpus, GF_MAX_GPUS);
			goto out;
		}
	}
	tgt = malloc(sizeof(*tgt));
	if (!tgt)
		goto oom;
	err = gf_mig_exp_target(gf_openb_target(x), MIG_MODEL, tgt);
	if (err) {
		fprintf(stderr, "gpufleet simulate: --mig: the target workload: %s\n", gf_strerror(err));
		goto out;
	}

	int nlay = gf_mig_layouts(MIG_MODEL, layouts, GF_MIG_MAX_LAYOUTS);

	for (int k = 0; k < nlay; k++) {
		lays[nl] = (struct lay){ .mode = GF_MIG_STATIC, .layout = k };
		snprintf(lays[nl].name, sizeof(lays[nl].name), "static:%.31s", layouts[k].name);
		nl++;
	}
	lays[nl++] = (struct lay){ .name = "dynamic-first", .mode = GF_MIG_DYNAMIC_FIRST };
	lays[nl++] = (struct lay){ .name = "dynamic", .mode = GF_MIG_DYNAMIC };
	lays[nl++] = (struct lay){ .name = "milli", .milli = true };

	att = calloc(nseeds, sizeof(*att));
	natt = calloc(nseeds, sizeof(*natt));
	rs = calloc(nl * nseeds, sizeof(*rs));
	if (!att || !natt || !rs)
		goto oom;
	for (size_t s = 0; s < nseeds; s++) {
		struct gf_openb_config cfg = gf_openb_config_default();

		cfg.tune = o->tune;
		cfg.seed = o->seeds[s];
		cfg.features = o->feat;
		err = gf_openb_attempts(x, &cfg, &att[s], &natt[s]);
		if (err) {
			fprintf(stderr, "gpufleet simulate: --mig: %s\n", gf_strerror(err));
			goto out;
		}
		for (size_t k = 0; k < nl; k++)
			rs[k * nseeds + s] = (struct run){ .lay = &lays[k], .seed = o->seeds[s],
							    .pods = att[s], .npods = natt[s], .x = x, .t = &t,
							    .tgt = tgt, .cfg = cfg };
	}
	struct progress pr = { .n = nl * nseeds };

	gf_cli_run_parallel(nl * nseeds, o->threads, run_one, rs, o->quiet ? NULL : show_progress, &pr);
	for (size_t i = 0; i < nl * nseeds; i++) {
		if (rs[i].err) {
			fprintf(stderr, "gpufleet simulate: --mig: run of %s, seed %llu failed: %s\n",
				rs[i].lay->name, (unsigned long long)rs[i].seed, gf_strerror(rs[i].err));
			goto out;
		}
	}

	/* The table. */
	char workload[GF_NAME_MAX], cluster[GF_NAME_MAX];

	gf_trace_file_name(o->pods_path, workload, sizeof(workload));
	gf_trace_file_name(o->nodes_path, cluster, sizeof(cluster));
	gf_obuf_printf(&b,
		       "MIG experiment: cluster %s (%zu nodes, %lld GPUs) with every GPU taken as an %s\n"
		       "(MIG: %d compute and %d memory slices, %lld MiB), workload %s, GPU-model constraints\n"
		       "dropped, tune %.2f, seeds %s.  A pod asking a share m of a GPU asks m x %lld MiB of\n"
		       "GPU memory and gets the smallest profile holding it; whole GPUs get %s each.\n"
		       "mem@X: GPU memory the placed pods asked, %% of the cluster's, at X %% arrived load;\n"
		       "held: memory of the instances given to them at the end; means over seeds.\n\n",
		       cluster, t.nnodes, (long long)t.ngpus, mi->name, mi->ncompute, mi->nslices,
		       (long long)mi->mem_mib, workload, o->tune, o->seeds_arg, (long long)mi->mem_mib,
		       mi->profiles[mi->nprofiles - 1].name);
	gf_obuf_printf(&b, "%-22s %8s %8s %9s %8s\n", "layout", "mem@100", "mem@130", "pods@130", "held");
	for (size_t k = 0; k < nl; k++) {
		double held = mean_of(rs, nseeds, k, 3);

		gf_obuf_printf(&b, "%-22s %8.2f %8.2f %9.1f ", lays[k].name, mean_of(rs, nseeds, k, 0),
			       mean_of(rs, nseeds, k, 1), mean_of(rs, nseeds, k, 2));
		if (isnan(held))
			gf_obuf_printf(&b, "%8s  (no isolation: FGD on milli shares)\n", "-");
		else
			gf_obuf_printf(&b, "%8.2f\n", held);
	}
	size_t best = 0, dyn = nl - 2, mil = nl - 1;

	for (size_t k = 1; k < (size_t)nlay; k++)
		if (mean_of(rs, nseeds, k, 1) > mean_of(rs, nseeds, best, 1))
			best = k;
	for (int w = 0; w < 2; w++) {
		double bs = mean_of(rs, nseeds, best, w), d = mean_of(rs, nseeds, dyn, w),
		       m = mean_of(rs, nseeds, mil, w);
		double gain = bs > 0 ? 100.0 * (d / bs - 1.0) : INFINITY;

		gf_obuf_printf(&b,
			       "\nat %d %%: dynamic %.2f vs best static (%s) %.2f: %+.1f %% (goal >= +10 %%: %s)",
			       w ? 130 : 100, d, lays[best].name, bs, gain, gain >= 10.0 ? "met" : "missed");
		gf_obuf_printf(&b, "; vs milli %.2f: %+.2f points (goal within 5: %s)", m, d - m,
			       m - d <= 5.0 ? "met" : "missed");
	}
	gf_obuf_puts(&b, "\n");

	/* The CSV. */
	if (o->csv_path) {
		gf_obuf_puts(&c, CSV_HEADER);
		for (size_t k = 0; k < nl; k++)
			for (size_t s = 0; s < nseeds; s++) {
				const struct run *r = &rs[k * nseeds + s];

				gf_obuf_printf(&c, "%s,%llu,%.2f,%.2f,%lld\n", lays[k].name,
					       (unsigned long long)r->seed, r->at100, r->at130, (long long)r->placed);
			}
		if (gf_rendered("simulate", o->csv_path, &c) || gf_write_file(o->csv_path, c.data, c.len))
			goto out;
	}
	if (gf_obuf_error(&b))
		goto oom;
	fputs(b.data, stdout);
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "gpufleet simulate: out of memory\n");
out:
	for (size_t s = 0; att && s < nseeds; s++)
		free(att[s]);
	free(att);
	free(natt);
	free(rs);
	free(tgt);
	gf_openb_destroy(x);
	gf_cli_trace_release(&t);
	gf_obuf_release(&b);
	gf_obuf_release(&c);
	return rc;
}
