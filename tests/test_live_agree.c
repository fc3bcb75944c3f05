/*
 * tests/test_live_agree.c - the live scheduler (k8s/live.c, the code the
 * daemon runs) and the replay (the engine's loop driven in virtual time)
 * make the same decisions from the same events.
 *
 * A scenario (made from a seed) is a list of events: nodes at the start,
 * pods arriving (whole GPUs, milli shares, CPU-only; priorities;
 * activeDeadlineSeconds as the loop's estimate), gangs (coscheduling
 * PodGroups), Queues with quotas in a cohort, one PodDisruptionBudget,
 * nodes joining and draining (cordon, their pods deleted, the node deleted
 * a second later), a Queue's quota and the budget's count changing (both
 * in place on both sides), pods whose first binding fails.  A pod runs for its
 * duration from its bind, then ends; an evicted pod is deleted (a bare pod:
 * nothing recreates it).
 *
 * Two sides are driven in lock-step over one clock (milliseconds; the live
 * side's clock is the seconds passed to gf_live_requeue_due, exactly as
 * k8s/scheduler.c passes its clock):
 *   - the replay: a gf_loop over the same nodes with the configuration
 *     live.c gives its loop (seed 42, preemption wait and grace 0, the same
 *     quotas from the same Queue definitions through gf_queues_to_quota),
 *     every pod a job submitted when it arrives (a gang one job of its
 *     members) with an open duration, gf_loop_end when it ends or is evicted,
 *     gf_loop_unbind when its binding fails, node verbs for nodes, and a
 *     gf_loop_cycle at every time anything happens or the loop asks for one
 *     (gf_loop_next_event), again while a binding failed;
 *   - live: decoded objects (gf_k8s_pod_decode_text, gf_k8s_node_decode_text)
 *     fed to gf_live_node_set / gf_live_pod_set / gf_live_pod_delete, Queue
 *     objects (gf_live_queue_set), the PodGroup store (gf_live_set_gangs),
 *     the budget (gf_live_pdb_set); at each time gf_live_requeue_due, then
 *     gf_live_schedule_next until it has nothing: a PLACED pod is bound (its
 *     bound copy echoed back, as the watch does) or, for a failing binding,
 *     gf_live_forget(uid, true) as scheduler.c does; evictions
 *     (gf_live_evictions) are deleted at once (grace 0).
 * Each side records every bind (time, pod, node name, GPUs) and eviction
 * (time, pod); the records, sorted by (time, kind, pod), must be equal.  A
 * pod's start is its bind's time, so starts are compared with the binds.
 *
 * families[] are what agrees today and is asserted; known_disagreements[]
 * are run and their mismatches counted and printed, never failing: the
 * places where live.c still does something the replay cannot model (its
 * own FIFO and backoff in kube mode, gang members re-placed alone, a new
 * loop past 64 pods).  Moving a family
 * from the second list to the first is the proof that such a difference is
 * gone.
 *
 * Investigating, from the environment: GF_AGREE_SEEDS=n runs seeds [0, n)
 * (default 200; 50 for the known list), GF_AGREE_FIRST=s starts at seed s,
 * GF_AGREE_VERBOSE=1 prints every disagreeing run, GF_AGREE_TRACE=1 prints
 * a disagreeing run's scenario and both records side by side,
 * GF_AGREE_LIVELOG=1 every live decision, GF_AGREE_FEAT=<flags>
 * [GF_AGREE_QP=<policy>] runs a family of one's own (chosen_family), and
 * GF_AGREE_RMASK=1 makes the replay cordon through an admission mask
 * (config.admit) as live does instead of gf_loop_node_cordon.
 *
 * Cost: O(seeds x families x policies x events x cycle): about 11 s of CPU
 * for the asserted families at 200 seeds, 3 s for the known list at 50.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cluster/model.h"
#include "core/features.h"
#include "core/rng.h"
#include "k8s/codec.h"
#include "k8s/gangs.h"
#include "k8s/live.h"
#include "k8s/pdb.h"
#include "policy/policy.h"
#include "queue/loop.h"
#include "queue/queuedef.h"

/* ---- scenarios -------------------------------------------------------------- */

#define MAXP 96		/* pods */
#define MAXN 8		/* nodes, the joining ones included */
#define MAXEV 12	/* node, Queue and budget events */
#define MAXQ 3		/* Queues */
#define UNIT_MS 20000	/* one scenario time unit: 20 s (past kube mode's 10 s backoff) */
#define MODEL "A100"

/* What a scenario family has (flags). */
enum {
	F_PRIO = 1 << 0,	/* priorities 0..2 (and preemptionPolicy: Never on some) */
	F_DEADLINE = 1 << 1,	/* activeDeadlineSeconds on some pods: the loop's estimates */
	F_NODES = 1 << 2,	/* nodes join and drain */
	F_FAILBIND = 1 << 3,	/* some single pods' first binding fails */
	F_GANGS = 1 << 4,	/* PodGroups of 2-3 identical pods */
	F_QUOTAS = 1 << 5,	/* Queues in a cohort; pods charged to them or to none */
	F_PDB = 1 << 6,		/* a PodDisruptionBudget covering some pods */
	F_GANG_FAIL = 1 << 7,	/* a gang member's first binding fails */
	F_NO_DRAIN = 1 << 9,	/* with F_NODES: nodes only join */
	F_CHANGES = 1 << 10,	/* with F_QUOTAS / F_PDB: a Queue's quota and the budget's count change */
	F_MANY = 1 << 8,	/* up to 90 pods, more than 64: live makes a new loop as its population grows */
};

struct spod {
	int64_t at, dur;	/* ms */
	int gpus, milli;	/* milli < 1000: a share of one GPU; gpus 0: CPU-only */
	int64_t cpu;		/* milli-CPU */
	int32_t prio;
	bool never;		/* preemptionPolicy: Never */
	int64_t deadline_s;	/* activeDeadlineSeconds, 0 none */
	int gang;		/* -1: none */
	int queue;		/* -1: none */
	bool guarded;		/* covered by the budget */
	bool failbind;		/* its first binding fails */
};

enum { EV_JOIN, EV_DRAIN, EV_REMOVE, EV_QUOTA, EV_PDB };

struct sev {
	int64_t at;
	int node;		/* EV_QUOTA: the Queue */
	int kind;
	int64_t val;		/* EV_QUOTA: its new nominal quota; EV_PDB: the budget's new count */
};

struct scen {
	uint64_t seed;
	unsigned feat;
	int nnodes;		/* all nodes; the first ninit at the start */
	int ninit;
	int ngpus[MAXN];
	int np;
	struct spod p[MAXP];
	int ngangs;
	int gang_size[MAXP];
	int gang_first[MAXP];
	int nq;
	struct gf_queue_def q[MAXQ];
	int32_t pdb_allowed;
	int nev;
	struct sev ev[MAXEV];
	/* decoded once */
	struct gf_k8s_node nodes[MAXN];
	struct gf_k8s_pod pods[MAXP];
};

static int64_t rb(struct gf_rng *r, uint64_t n)
{
	return (int64_t)gf_rng_below(r, n);
}

static struct gf_k8s_node mknode(int i, int gpus)
{
	char json[1024], err[256];
	struct gf_k8s_node n;

	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"n%d\",\"labels\":{\"nvidia.com/gpu.product\":\"" MODEL "\"}},"
		 "\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"nvidia.com/gpu\":\"%d\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}", i, gpus);
	if (gf_k8s_node_decode_text(json, strlen(json), &n, err, sizeof(err)))
		fail_msg("node: %s", err);
	return n;
}

static struct gf_k8s_pod mkpod(const struct scen *sc, int k)
{
	const struct spod *s = &sc->p[k];
	char json[2048], labels[512] = "", res[256] = "", extra[128] = "", err[256];
	struct gf_k8s_pod p;
	int n = 0;

	if (s->gang >= 0)
		n += snprintf(labels + n, sizeof(labels) - (size_t)n, "%s\"" GF_LABEL_POD_GROUP "\":\"g%d\"",
			      n ? "," : "", s->gang);
	if (s->queue >= 0)
		n += snprintf(labels + n, sizeof(labels) - (size_t)n, "%s\"" GF_LABEL_QUEUE "\":\"%s\"",
			      n ? "," : "", sc->q[s->queue].name);
	if (s->guarded)
		n += snprintf(labels + n, sizeof(labels) - (size_t)n, "%s\"app\":\"guarded\"", n ? "," : "");
	if (s->gpus && s->milli == 1000)
		snprintf(res, sizeof(res), ",\"nvidia.com/gpu\":\"%d\"", s->gpus);
	else if (s->gpus)
		snprintf(res, sizeof(res), ",\"" GF_RES_MILLI "\":\"%d\"", s->milli);
	if (s->deadline_s)
		snprintf(extra, sizeof(extra), "\"activeDeadlineSeconds\":%lld,", (long long)s->deadline_s);
	snprintf(json, sizeof(json),
		 "{\"metadata\":{\"name\":\"p%02d\",\"namespace\":\"t\",\"uid\":\"u%02d\",\"resourceVersion\":\"1\","
		 "\"labels\":{%s}},\"spec\":{\"schedulerName\":\"gpufleet\",\"priority\":%d,%s%s"
		 "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"%lldm\",\"memory\":\"1Gi\"},"
		 "\"limits\":{\"cpu\":\"%lldm\",\"memory\":\"1Gi\"%s}}}]}}",
		 k, k, labels, s->prio, s->never ? "\"preemptionPolicy\":\"Never\"," : "", extra,
		 (long long)s->cpu, (long long)s->cpu, res);
	if (gf_k8s_pod_decode_text(json, strlen(json), &p, err, sizeof(err)))
		fail_msg("pod: %s (%s)", err, json);
	if (p.invalid[0])
		fail_msg("pod p%02d invalid: %s", k, p.invalid);
	return p;
}

static void sort_events(struct scen *sc)
{
	for (int i = 1; i < sc->nev; i++) {
		struct sev e = sc->ev[i];
		int k = i;

		for (; k > 0 && sc->ev[k - 1].at > e.at; k--)
			sc->ev[k] = sc->ev[k - 1];
		sc->ev[k] = e;
	}
}

static void make_scen(uint64_t seed, unsigned feat, struct scen *sc)
{
	struct gf_rng r;

	memset(sc, 0, sizeof(*sc));
	gf_rng_init(&r, seed * 7919 + feat);
	sc->seed = seed;
	sc->feat = feat;
	sc->ninit = 2 + (int)rb(&r, 3);
	sc->nnodes = sc->ninit + ((feat & F_NODES) ? 1 + (int)rb(&r, 2) : 0);
	for (int i = 0; i < sc->nnodes; i++)
		sc->ngpus[i] = 1 + (int)rb(&r, 8);
	if (feat & F_QUOTAS) {
		sc->nq = 2 + (int)rb(&r, 2);
		for (int q = 0; q < sc->nq; q++) {
			struct gf_queue_def *d = &sc->q[q];

			snprintf(d->name, sizeof(d->name), "q%d", q);
			snprintf(d->cohort, sizeof(d->cohort), "%s", rb(&r, 4) ? "c" : "");
			d->nominal = 1000 * (1 + rb(&r, 8));
			d->borrowing_limit = rb(&r, 2) ? GF_QUOTA_UNLIMITED : 1000 * rb(&r, 4);
			d->lending_limit = rb(&r, 2) ? GF_QUOTA_UNLIMITED : d->nominal / 2;
			d->weight = 1 + (uint32_t)rb(&r, 3);
			d->ordering = (enum gf_queue_ordering)rb(&r, 3);
		}
	}
	sc->pdb_allowed = (feat & F_PDB) ? (int32_t)rb(&r, 3) : 0;
	int maxp = (feat & F_MANY) ? 90 : 24;
	int np = 10 + (int)rb(&r, (uint64_t)(maxp - 9));

	for (int k = 0; k < np && sc->np < MAXP;) {
		struct spod s;
		int shape = (int)rb(&r, 10);

		memset(&s, 0, sizeof(s));
		s.at = rb(&r, 40) * UNIT_MS;
		s.dur = (1 + rb(&r, 10)) * UNIT_MS;
		s.cpu = 1000 * (1 + rb(&r, 8));
		s.gang = -1;
		s.queue = sc->nq && rb(&r, 5) ? (int)rb(&r, (uint64_t)sc->nq) : -1;
		s.guarded = (feat & F_PDB) && rb(&r, 2);
		if (shape < 5) {
			s.gpus = 1 + (int)rb(&r, 8);
			s.milli = 1000;
		} else if (shape < 8) {
			s.gpus = 1;
			s.milli = 100 * (1 + (int)rb(&r, 9));
		} else {
			s.gpus = 0;	/* CPU-only */
		}
		if (feat & F_PRIO) {
			s.prio = (int32_t)rb(&r, 3);
			s.never = rb(&r, 8) == 0;
		}
		if ((feat & F_DEADLINE) && rb(&r, 3))
			s.deadline_s = s.dur / 1000 * (1 + rb(&r, 2));
		if ((feat & F_GANGS) && s.gpus && s.milli == 1000 && rb(&r, 3) == 0 && sc->np + 3 <= MAXP) {
			int g = sc->ngangs++, n = 2 + (int)rb(&r, 2);

			s.gpus = 1 + (int)rb(&r, 4);
			s.gang = g;
			sc->gang_size[g] = n;
			sc->gang_first[g] = sc->np;
			for (int m = 0; m < n; m++)
				sc->p[sc->np++] = s;
			if (feat & F_GANG_FAIL)
				sc->p[sc->gang_first[g] + (int)rb(&r, (uint64_t)n)].failbind = true;
			k += n;
			continue;
		}
		s.failbind = (feat & F_FAILBIND) && rb(&r, 4) == 0;
		sc->p[sc->np++] = s;
		k++;
	}
	if (feat & F_NODES) {
		for (int i = sc->ninit; i < sc->nnodes; i++)
			sc->ev[sc->nev++] = (struct sev){ rb(&r, 40) * UNIT_MS, i, EV_JOIN, 0 };
		int d = (int)rb(&r, (uint64_t)sc->ninit);	/* one of the first nodes drains */
		int64_t at = (1 + rb(&r, 40)) * UNIT_MS;

		if (!(feat & F_NO_DRAIN)) {
			sc->ev[sc->nev++] = (struct sev){ at, d, EV_DRAIN, 0 };
			sc->ev[sc->nev++] = (struct sev){ at + 1000, d, EV_REMOVE, 0 };
		}
	}
	for (int n = (feat & F_CHANGES) && sc->nq ? 1 + (int)rb(&r, 2) : 0; n > 0; n--)
		sc->ev[sc->nev++] = (struct sev){ (1 + rb(&r, 40)) * UNIT_MS, (int)rb(&r, (uint64_t)sc->nq), EV_QUOTA,
						  1000 * rb(&r, 9) };
	for (int n = (feat & F_CHANGES) && (feat & F_PDB) ? 1 + (int)rb(&r, 2) : 0; n > 0; n--)
		sc->ev[sc->nev++] = (struct sev){ (1 + rb(&r, 40)) * UNIT_MS, 0, EV_PDB, rb(&r, 3) };
	sort_events(sc);
	for (int i = 0; i < sc->nnodes; i++)
		sc->nodes[i] = mknode(i, sc->ngpus[i]);
	for (int k = 0; k < sc->np; k++)
		sc->pods[k] = mkpod(sc, k);
}

/* ---- records ---------------------------------------------------------------- */

enum { R_BIND, R_EVICT };

struct rec {
	int64_t t;
	int kind;
	int pod;
	int node;		/* bind: node index (name n<i>) */
	int ngpus;
	uint8_t gpus[GF_MAX_GPUS];
};

struct log {
	struct rec v[4 * MAXP];
	int n;
};

static void log_add(struct log *g, int64_t t, int kind, int pod, int node, int ngpus, const uint8_t *gpus)
{
	struct rec *r;

	assert_true(g->n < (int)(sizeof(g->v) / sizeof(g->v[0])));
	r = &g->v[g->n++];
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->kind = kind;
	r->pod = pod;
	r->node = node;
	r->ngpus = ngpus;
	if (gpus && ngpus > 0)
		memcpy(r->gpus, gpus, (size_t)ngpus);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return x->pod - y->pod;
}

static void rec_text(const struct rec *r, char *buf, size_t n)
{
	int k;

	if (!r) {
		snprintf(buf, n, "(none)");
		return;
	}
	if (r->kind == R_EVICT) {
		snprintf(buf, n, "t=%llds evict p%02d", (long long)(r->t / 1000), r->pod);
		return;
	}
	k = snprintf(buf, n, "t=%llds bind p%02d -> n%d gpus", (long long)(r->t / 1000), r->pod, r->node);
	for (int g = 0; g < r->ngpus && k > 0 && (size_t)k < n; g++)
		k += snprintf(buf + k, n - (size_t)k, "%s%d", g ? "," : " ", r->gpus[g]);
}

/* ---- the two sides ---------------------------------------------------------- */

struct side {
	const struct scen *sc;
	int qp;
	bool pre;
	struct log log;
	int64_t end_at[MAXP];	/* -1: not running */
	int node_of[MAXP];	/* -1: not bound */
	bool failed_once[MAXP];
	int next_arrival;	/* pods arrive in index order of at: arr[] */
	/* the replay */
	gf_loop *L;
	struct gf_catalog cat;
	struct gf_queue_quota quota[MAXQ + 1];
	struct gf_queue_def defs[MAXQ];	/* the Queues now (EV_QUOTA changes them) */
	uint32_t job_of[MAXP];
	int job_pod[MAXP];	/* job id -> first pod */
	uint32_t loop_node[MAXN];	/* scenario node -> loop index */
	int node_at[MAXN];		/* loop index -> scenario node */
	/* live */
	gf_live *lv;
	gf_gangs *gangs;
	uint64_t cordoned;	/* debug: loop indices cordoned, as an admission mask */
	uint64_t mask;
};

static const uint64_t *rep_admit(void *ud, uint32_t job)
{
	struct side *s = ud;

	(void)job;
	if (!s->cordoned)
		return NULL;
	s->mask = ~s->cordoned;
	return &s->mask;
}

/* Pods in arrival order (ties by index). */
static void arrival_order(const struct scen *sc, int *arr)
{
	for (int k = 0; k < sc->np; k++)
		arr[k] = k;
	for (int i = 1; i < sc->np; i++) {
		int x = arr[i], k = i;

		for (; k > 0 && sc->p[arr[k - 1]].at > sc->p[x].at; k--)
			arr[k] = arr[k - 1];
		arr[k] = x;
	}
}

static const uint16_t *pod_budgets(const struct spod *s, uint16_t b[GF_JOB_MAX_BUDGETS])
{
	memset(b, 0, GF_JOB_MAX_BUDGETS * sizeof(*b));
	if (s->guarded)
		b[0] = 1;
	return b;
}

/* The loop's quotas from the Queues (live_quota.c's rule: one more, unlimited, for pods of none). */
static void rep_quotas(struct side *s)
{
	struct gf_queue_file f = { s->defs, (size_t)s->sc->nq };
	struct gf_queues_error err;

	assert_int_equal(gf_queues_to_quota(&f, &s->cat, "queues", s->quota, &err), GF_OK);
	s->quota[s->sc->nq] = (struct gf_queue_quota){ .nominal = INT64_MAX / 4, .borrowing_limit = GF_QUOTA_UNLIMITED,
						       .lending_limit = 0, .cohort = -1, .weight = 1 };
}

static void rep_open(struct side *s)
{
	const struct scen *sc = s->sc;
	struct gf_node_spec nodes[MAXN];
	struct gf_policy_env env = { .features = gf_features_default() };
	struct gf_loop_config cfg = { .policy = (enum gf_queue_policy)s->qp, .seed = 42, .horizon = INT64_MAX,
				      .preemption = s->pre && s->qp != GF_QP_KUBE };
	int model;
	int32_t allowed[1];

	assert_int_equal(gf_catalog_init(&s->cat), GF_OK);
	assert_int_equal(gf_catalog_model(&s->cat, MODEL, strlen(MODEL), &model), GF_OK);
	env.cat = &s->cat;
	for (int i = 0; i < sc->ninit; i++) {
		nodes[i] = sc->nodes[i].spec;
		nodes[i].model = model;
		s->loop_node[i] = (uint32_t)i;
		s->node_at[i] = i;
	}
	memcpy(s->defs, sc->q, sizeof(s->defs));
	if (sc->nq && s->qp != GF_QP_KUBE) {
		rep_quotas(s);
		cfg.queues = s->quota;
		cfg.nqueues = (size_t)sc->nq + 1;
	}
	if (getenv("GF_AGREE_RMASK")) {
		cfg.admit = rep_admit;
		cfg.admit_ud = s;
	}
	if (sc->feat & F_PDB) {
		allowed[0] = sc->pdb_allowed;
		cfg.budgets = allowed;
		cfg.nbudgets = 1;
	}
	assert_int_equal(gf_loop_create(nodes, (size_t)sc->ninit, &gf_policy_best_fit, &env, &cfg, &s->L), GF_OK);
}

/* The budget "guard" (app=guarded) allowing `allowed` more disruptions. */
static void live_pdb(struct side *s, int32_t allowed)
{
	struct gf_k8s_pdb b;

	memset(&b, 0, sizeof(b));
	snprintf(b.ns, sizeof(b.ns), "t");
	snprintf(b.name, sizeof(b.name), "guard");
	b.selects = true;
	memcpy(b.match, "app\0guarded\0", 12);
	b.match_len = 12;
	b.allowed = allowed;
	assert_int_equal(gf_live_pdb_set(s->lv, &b), GF_OK);
}

static void live_open(struct side *s)
{
	const struct scen *sc = s->sc;
	struct gf_live_opts o = { .policy = &gf_policy_best_fit, .queue_policy = s->qp,
				  .queues = sc->nq > 0, .preemption = s->pre };

	assert_int_equal(gf_live_create(&o, &s->lv), GF_OK);
	for (int i = 0; i < sc->ninit; i++)
		gf_live_node_set(s->lv, &sc->nodes[i]);
	for (int q = 0; q < sc->nq; q++)
		assert_int_equal(gf_live_queue_set(s->lv, &sc->q[q], NULL), GF_OK);
	memcpy(s->defs, sc->q, sizeof(s->defs));
	if (sc->feat & F_PDB)
		live_pdb(s, sc->pdb_allowed);
	if (sc->ngangs) {
		assert_int_equal(gf_gangs_create(&s->gangs), GF_OK);
		for (int g = 0; g < sc->ngangs; g++) {
			struct gf_k8s_podgroup pg;

			memset(&pg, 0, sizeof(pg));
			pg.api = GF_GANG_COSCHEDULING;
			snprintf(pg.ns, sizeof(pg.ns), "t");
			snprintf(pg.name, sizeof(pg.name), "g%d", g);
			pg.min_member = sc->gang_size[g];
			assert_int_equal(gf_gangs_set(s->gangs, &pg), GF_OK);
		}
		gf_live_set_gangs(s->lv, s->gangs);
	}
}

static void side_close(struct side *s)
{
	if (s->L)
		gf_loop_destroy(s->L);
	if (s->L)
		gf_catalog_release(&s->cat);
	if (s->lv)
		gf_live_destroy(s->lv);
	if (s->gangs)
		gf_gangs_destroy(s->gangs);
	s->L = NULL;
	s->lv = NULL;
	s->gangs = NULL;
}

/* The pods of pod k's job: a gang's members, else k alone. */
static int members(const struct scen *sc, int k, int *first)
{
	if (sc->p[k].gang < 0) {
		*first = k;
		return 1;
	}
	*first = sc->gang_first[sc->p[k].gang];
	return sc->gang_size[sc->p[k].gang];
}

static void bound(struct side *s, int64_t t, int k, int node, int ngpus, const uint8_t *gpus)
{
	log_add(&s->log, t, R_BIND, k, node, ngpus, gpus);
	s->node_of[k] = node;
	s->end_at[k] = t + s->sc->p[k].dur;
}

static void gone(struct side *s, int k)
{
	s->node_of[k] = -1;
	s->end_at[k] = -1;
}

/* ---- events, each side's way ---- */

static void rep_join(struct side *s, int i)
{
	struct gf_node_spec n = s->sc->nodes[i].spec;
	uint32_t at;

	assert_int_equal(gf_catalog_model(&s->cat, MODEL, strlen(MODEL), &n.model), GF_OK);
	assert_int_equal(gf_loop_node_add(s->L, &n, &at), GF_OK);
	s->loop_node[i] = at;
	s->node_at[at] = i;
}

static void live_join(struct side *s, int i)
{
	gf_live_node_set(s->lv, &s->sc->nodes[i]);
}

/* Pod k (and its gang) ends now. */
static void rep_end(struct side *s, int64_t t, int k)
{
	int first, n = members(s->sc, k, &first);

	assert_int_equal(gf_loop_end(s->L, s->job_of[first], t), GF_OK);
	for (int m = 0; m < n; m++)
		gone(s, first + m);
}

static void live_end(struct side *s, int64_t t, int k)
{
	int first, n = members(s->sc, k, &first);

	(void)t;
	for (int m = 0; m < n; m++) {
		struct gf_k8s_pod p = s->sc->pods[first + m];

		if (s->node_of[first + m] >= 0) {
			snprintf(p.node, sizeof(p.node), "n%d", s->node_of[first + m]);
			p.phase = GF_PHASE_SUCCEEDED;
			gf_live_pod_set(s->lv, &p);
		}
		gf_live_pod_delete(s->lv, p.uid);
		gone(s, first + m);
	}
}

static void rep_cordon(struct side *s, int i)
{
	if (getenv("GF_AGREE_RMASK")) {
		uint32_t at = s->loop_node[i];

		s->cordoned |= 1ull << s->loop_node[i];
		assert_int_equal(gf_loop_nodes_freed(s->L, &at, 1), GF_OK);
		return;
	}
	assert_int_equal(gf_loop_node_cordon(s->L, s->loop_node[i], true), GF_OK);
}

static void live_cordon(struct side *s, int i)
{
	struct gf_k8s_node n = s->sc->nodes[i];

	n.unschedulable = true;
	gf_live_node_set(s->lv, &n);
}

/* Queue q's nominal quota changes (in place: gf_loop_set_quotas / a Queue object updated). */
static void new_nominal(struct side *s, int q, int64_t nominal)
{
	s->defs[q].nominal = nominal;
	if (s->defs[q].lending_limit != GF_QUOTA_UNLIMITED && s->defs[q].lending_limit > nominal)
		s->defs[q].lending_limit = nominal;
}

static void rep_quota(struct side *s, int q, int64_t nominal)
{
	new_nominal(s, q, nominal);
	if (s->qp == GF_QP_KUBE)
		return;
	rep_quotas(s);
	assert_int_equal(gf_loop_set_quotas(s->L, s->quota, (size_t)s->sc->nq + 1), GF_OK);
}

static void live_quota(struct side *s, int q, int64_t nominal)
{
	new_nominal(s, q, nominal);
	assert_int_equal(gf_live_queue_set(s->lv, &s->defs[q], NULL), GF_OK);
}

/* The budget's count is now `allowed` (status.disruptionsAllowed moved). */
static void rep_pdb(struct side *s, int32_t allowed)
{
	assert_int_equal(gf_loop_set_budgets(s->L, &allowed, 1), GF_OK);
}

static void rep_remove(struct side *s, int i)
{
	char why[256] = "";
	gf_err e = gf_loop_node_remove(s->L, s->loop_node[i], why, sizeof(why));

	if (e)
		fail_msg("seed %llu: replay: removing n%d: %s (%s)", (unsigned long long)s->sc->seed, i,
			 gf_err_name(e), why);
}

static void live_remove(struct side *s, int i)
{
	char name[16];

	snprintf(name, sizeof(name), "n%d", i);
	gf_live_node_delete(s->lv, name);
}

/* Pods arriving at t: the replay submits a gang once all its members are here (same arrival). */
static void rep_arrive(struct side *s, int64_t t, int k)
{
	const struct scen *sc = s->sc;
	const struct spod *p = &sc->p[k];
	int first, n = members(sc, k, &first);
	struct gf_job_spec js;
	uint32_t id;

	if (first != k)
		return;	/* the gang goes with its first member */
	memset(&js, 0, sizeof(js));
	js.pod = sc->pods[k].req;
	js.pod.spec = 0;
	js.npods = (uint32_t)n;
	js.priority = p->prio;
	js.never_preempt = p->never;
	js.arrival = t;
	js.duration = GF_LOOP_OPEN;
	js.estimate = p->deadline_s * 1000;
	js.queue = (uint16_t)(sc->nq && s->qp != GF_QP_KUBE ? (p->queue >= 0 ? p->queue : sc->nq) : 0);
	pod_budgets(p, js.budgets);
	assert_int_equal(gf_loop_submit(s->L, &js, &id), GF_OK);
	assert_true(id < MAXP);
	s->job_of[k] = id;
	s->job_pod[id] = k;
}

static void live_arrive(struct side *s, int64_t t, int k)
{
	(void)t;
	gf_live_pod_set(s->lv, &s->sc->pods[k]);
}

/* ---- deciding ---- */

static void rep_decide(struct side *s, int64_t t)
{
	for (int round = 0;; round++) {
		struct gf_loop_decisions d;
		uint32_t unbind[MAXP];
		size_t nu = 0;

		assert_true(round < 4 * MAXP);
		assert_int_equal(gf_loop_cycle(s->L, t, &d), GF_OK);
		for (size_t i = 0; i < d.nevicted; i++) {
			int first = s->job_pod[d.evicted[i]], n = members(s->sc, first, &first);

			for (int m = 0; m < n; m++) {
				log_add(&s->log, t, R_EVICT, first + m, -1, 0, NULL);
				gone(s, first + m);
			}
		}
		/* a binding that fails: the whole job is unbound (gf_loop_unbind), none of its pods bound */
		for (size_t i = 0; i < d.nbinds; i++) {
			const struct gf_loop_bind *b = &d.binds[i];
			int k = s->job_pod[b->job] + (int)b->member;

			if (s->sc->p[k].failbind && !s->failed_once[k]) {
				s->failed_once[k] = true;
				unbind[nu++] = b->job;
			}
		}
		for (size_t i = 0; i < d.nbinds; i++) {
			const struct gf_loop_bind *b = &d.binds[i];
			int k = s->job_pod[b->job] + (int)b->member;
			bool failed = false;

			for (size_t u = 0; u < nu; u++)
				failed |= unbind[u] == b->job;
			if (!failed)
				bound(s, t, k, s->node_at[b->node], s->sc->pods[k].req.gpu_count, b->gpus);
		}
		/* evicted pods are deleted: their jobs leave the queue */
		for (size_t i = 0; i < d.nevicted; i++)
			assert_int_equal(gf_loop_end(s->L, d.evicted[i], t), GF_OK);
		for (size_t i = 0; i < nu; i++)
			assert_int_equal(gf_loop_unbind(s->L, unbind[i]), GF_OK);
		if (!nu)
			return;
	}
}

static int pod_index(const char *uid)
{
	assert_true(uid[0] == 'u');
	return (int)strtol(uid + 1, NULL, 10);
}

static int node_index(const char *name)
{
	assert_true(name[0] == 'n');
	return (int)strtol(name + 1, NULL, 10);
}

static void live_evictions(struct side *s, int64_t t)
{
	struct gf_live_eviction ev[8];
	size_t n;

	while ((n = gf_live_evictions(s->lv, ev, 8)) > 0)
		for (size_t i = 0; i < n; i++) {
			int k = pod_index(ev[i].uid);

			log_add(&s->log, t, R_EVICT, k, -1, 0, NULL);
			gone(s, k);
			gf_live_pod_delete(s->lv, ev[i].uid);
		}
}

/* The bound pod as the API server echoes it back: node and the assignment annotations. */
static struct gf_k8s_pod bound_copy(const struct gf_k8s_pod *p, const struct gf_live_decision *d)
{
	struct gf_k8s_pod b = *p;

	snprintf(b.node, sizeof(b.node), "%s", d->node);
	b.assigned = true;
	snprintf(b.assigned_node, sizeof(b.assigned_node), "%s", d->node);
	b.assigned_ngpus = d->ngpus;
	memcpy(b.assigned_gpus, d->gpus, sizeof(b.assigned_gpus));
	b.assigned_milli = d->milli;
	snprintf(b.rv, sizeof(b.rv), "2");
	return b;
}

static void live_decide(struct side *s, int64_t t)
{
	struct gf_k8s_pod pod;
	struct gf_live_decision d;
	char why[256];

	gf_live_requeue_due(s->lv, (double)t / 1000.0);
	while (gf_live_schedule_next(s->lv, &pod, &d)) {
		int k = pod_index(pod.uid);

		if (getenv("GF_AGREE_LIVELOG"))
			print_message("    live t=%llds p%02d: %d %s %s\n", (long long)(t / 1000), k, (int)d.result, d.node,
				      d.message);
		if (d.result == GF_LIVE_PLACED) {
			if (s->sc->p[k].failbind && !s->failed_once[k]) {
				s->failed_once[k] = true;
				gf_live_forget(s->lv, pod.uid, true);
			} else {
				struct gf_k8s_pod b = bound_copy(&pod, &d);

				gf_live_pod_set(s->lv, &b);
				bound(s, t, k, node_index(d.node), d.ngpus, d.gpus);
			}
		}
		live_evictions(s, t);
	}
	live_evictions(s, t);
	if (gf_live_check(s->lv, why, sizeof(why)))
		fail_msg("seed %llu: live's invariants at t=%llds: %s", (unsigned long long)s->sc->seed,
			 (long long)(t / 1000), why);
}

/* ---- one side, driven; both in lock-step ---- */

struct sideops {
	void (*join)(struct side *, int);
	void (*end)(struct side *, int64_t, int);
	void (*cordon)(struct side *, int);
	void (*remove)(struct side *, int);
	void (*arrive)(struct side *, int64_t, int);
	void (*decide)(struct side *, int64_t);
	void (*quota)(struct side *, int, int64_t);
	void (*pdb)(struct side *, int32_t);
};

static const struct sideops rep_ops = { rep_join, rep_end, rep_cordon, rep_remove, rep_arrive, rep_decide,
					rep_quota, rep_pdb };
static const struct sideops live_ops = { live_join, live_end, live_cordon, live_remove, live_arrive, live_decide,
					 live_quota, live_pdb };

/* Apply everything due at t on one side, in a fixed order, then decide. */
static void side_step(struct side *s, const struct sideops *op, int64_t t, const int *arr, int *next_ev)
{
	const struct scen *sc = s->sc;
	int e;

	for (e = *next_ev; e < sc->nev && sc->ev[e].at == t; e++)
		if (sc->ev[e].kind == EV_JOIN)
			op->join(s, sc->ev[e].node);
	for (int k = 0; k < sc->np; k++)
		if (s->end_at[k] == t && s->node_of[k] >= 0)
			op->end(s, t, k);
	for (e = *next_ev; e < sc->nev && sc->ev[e].at == t; e++) {
		if (sc->ev[e].kind == EV_DRAIN) {
			op->cordon(s, sc->ev[e].node);
			for (int k = 0; k < sc->np; k++)
				if (s->node_of[k] == sc->ev[e].node)
					op->end(s, t, k);
		}
	}
	for (e = *next_ev; e < sc->nev && sc->ev[e].at == t; e++)
		if (sc->ev[e].kind == EV_REMOVE)
			op->remove(s, sc->ev[e].node);
		else if (sc->ev[e].kind == EV_QUOTA)
			op->quota(s, sc->ev[e].node, sc->ev[e].val);
		else if (sc->ev[e].kind == EV_PDB)
			op->pdb(s, (int32_t)sc->ev[e].val);
	for (; s->next_arrival < sc->np && sc->p[arr[s->next_arrival]].at == t; s->next_arrival++)
		op->arrive(s, t, arr[s->next_arrival]);
	op->decide(s, t);
}

static int64_t side_next(const struct side *s, const int *arr)
{
	int64_t t = INT64_MAX;

	if (s->next_arrival < s->sc->np)
		t = s->sc->p[arr[s->next_arrival]].at;
	for (int k = 0; k < s->sc->np; k++)
		if (s->node_of[k] >= 0 && s->end_at[k] < t)
			t = s->end_at[k];
	return t;
}

struct outcome {
	int mismatches;		/* records that differ (0: agree) */
	char first[512];	/* the first difference */
	int binds, evictions;
};

static void run_one(const struct scen *sc, int qp, bool pre, struct outcome *out)
{
	static struct side rep, live;	/* big: not on the stack */
	int arr[MAXP], ev = 0;
	int64_t t;

	memset(out, 0, sizeof(*out));
	memset(&rep, 0, sizeof(rep));
	memset(&live, 0, sizeof(live));
	rep.sc = live.sc = sc;
	rep.qp = live.qp = qp;
	rep.pre = live.pre = pre;
	for (int k = 0; k < MAXP; k++) {
		rep.end_at[k] = live.end_at[k] = -1;
		rep.node_of[k] = live.node_of[k] = -1;
	}
	arrival_order(sc, arr);
	rep_open(&rep);
	live_open(&live);
	for (int steps = 0;; steps++) {
		int64_t a = side_next(&rep, arr), b = side_next(&live, arr), x;

		assert_true(steps < 100000);
		t = a < b ? a : b;
		if (ev < sc->nev && sc->ev[ev].at < t)
			t = sc->ev[ev].at;
		if (gf_loop_next_event(rep.L, &x) && x < t)
			t = x;
		if (t == INT64_MAX)
			break;
		side_step(&rep, &rep_ops, t, arr, &ev);
		int ev2 = ev;

		side_step(&live, &live_ops, t, arr, &ev2);
		while (ev < sc->nev && sc->ev[ev].at == t)
			ev++;
	}
	qsort(rep.log.v, (size_t)rep.log.n, sizeof(struct rec), rec_cmp);
	qsort(live.log.v, (size_t)live.log.n, sizeof(struct rec), rec_cmp);
	for (int i = 0; i < rep.log.n || i < live.log.n; i++) {
		const struct rec *x = i < rep.log.n ? &rep.log.v[i] : NULL;
		const struct rec *y = i < live.log.n ? &live.log.v[i] : NULL;

		if (x && y && !rec_cmp(x, y) && x->node == y->node && x->ngpus == y->ngpus &&
		    !memcmp(x->gpus, y->gpus, sizeof(x->gpus)))
			continue;
		if (!out->mismatches++) {
			char a[128], b[128];

			rec_text(x, a, sizeof(a));
			rec_text(y, b, sizeof(b));
			snprintf(out->first, sizeof(out->first), "record %d: replay %s, live %s", i, a, b);
		}
	}
	if (out->mismatches && getenv("GF_AGREE_TRACE")) {	/* both records, side by side */
		print_message("seed %llu %s%s:\n", (unsigned long long)sc->seed,
			      gf_queue_policy_name((enum gf_queue_policy)qp), pre ? " +preemption" : "");
		for (int i = 0; i < sc->nnodes; i++)
			print_message("  node n%d: %d GPUs%s\n", i, sc->ngpus[i], i < sc->ninit ? "" : " (joins)");
		for (int e = 0; e < sc->nev; e++)
			print_message("  t=%llds %d %s %lld\n", (long long)(sc->ev[e].at / 1000), sc->ev[e].node,
				      sc->ev[e].kind == EV_JOIN ? "joins" : sc->ev[e].kind == EV_DRAIN ? "drains" :
				      sc->ev[e].kind == EV_REMOVE ? "removed" : sc->ev[e].kind == EV_QUOTA ? "quota" : "budget",
				      (long long)sc->ev[e].val);
		for (int k = 0; k < sc->np; k++)
			print_message("  p%02d at %llds for %llds: %d x %d milli, cpu %lld, prio %d%s, deadline %llds, "
				      "gang %d, queue %d%s%s\n", k, (long long)(sc->p[k].at / 1000),
				      (long long)(sc->p[k].dur / 1000), sc->p[k].gpus, sc->p[k].milli,
				      (long long)sc->p[k].cpu, sc->p[k].prio, sc->p[k].never ? " never" : "",
				      (long long)sc->p[k].deadline_s, sc->p[k].gang, sc->p[k].queue,
				      sc->p[k].guarded ? ", guarded" : "", sc->p[k].failbind ? ", bind fails" : "");
		for (int q = 0; q < sc->nq; q++)
			print_message("  queue q%d: nominal %lld borrow %lld lend %lld cohort '%s' weight %u ordering %d\n", q,
				      (long long)sc->q[q].nominal, (long long)sc->q[q].borrowing_limit,
				      (long long)sc->q[q].lending_limit, sc->q[q].cohort, sc->q[q].weight,
				      (int)sc->q[q].ordering);
		for (int i = 0; i < rep.log.n || i < live.log.n; i++) {
			char a[128], b[128];

			rec_text(i < rep.log.n ? &rep.log.v[i] : NULL, a, sizeof(a));
			rec_text(i < live.log.n ? &live.log.v[i] : NULL, b, sizeof(b));
			print_message("  %-44s | %s\n", a, b);
		}
	}
	for (int i = 0; i < rep.log.n; i++) {
		out->binds += rep.log.v[i].kind == R_BIND;
		out->evictions += rep.log.v[i].kind == R_EVICT;
	}
	side_close(&rep);
	side_close(&live);
}

/* ---- the families --------------------------------------------------------- */

struct family {
	const char *name;
	unsigned feat;
	unsigned policies;	/* bit per enum gf_queue_policy; 0: all */
	int pre;		/* 0: without preemption, 1: with, 2: both (not kube) */
};

#define QP(x) (1u << (x))
#define ALL_QP 0u
#define NOT_KUBE (((1u << GF_QP_COUNT_) - 1) & ~QP(GF_QP_KUBE))

#define JOINS (F_NODES | F_NO_DRAIN)

/* What agrees today: asserted, every mismatch fails the test. */
static const struct family families[] = {
	{ "shapes", 0, NOT_KUBE, 2 },
	{ "priorities", F_PRIO | F_DEADLINE, NOT_KUBE, 2 },
	{ "joins", F_PRIO | F_DEADLINE | JOINS, NOT_KUBE, 2 },
	{ "drains", F_PRIO | F_DEADLINE | F_NODES, NOT_KUBE, 2 },
	{ "quotas", F_PRIO | F_DEADLINE | F_QUOTAS, NOT_KUBE, 2 },
	{ "budgets", F_PRIO | F_DEADLINE | F_PDB, NOT_KUBE, 1 },
	{ "gangs", F_PRIO | F_DEADLINE | F_GANGS, NOT_KUBE, 2 },
	{ "gangs+joins+budgets", F_PRIO | F_DEADLINE | JOINS | F_PDB | F_GANGS, NOT_KUBE, 2 },
	{ "gangs+drains+budgets", F_PRIO | F_DEADLINE | F_NODES | F_PDB | F_GANGS, NOT_KUBE, 2 },
	{ "all but gangs", F_PRIO | F_DEADLINE | JOINS | F_QUOTAS | F_PDB | F_CHANGES, NOT_KUBE, 2 },
	{ "all but gangs, drains", F_PRIO | F_DEADLINE | F_NODES | F_QUOTAS | F_PDB | F_CHANGES, NOT_KUBE, 2 },
	{ "failed bindings", F_PRIO | F_DEADLINE | F_FAILBIND, NOT_KUBE, 2 },
	{ "gangs with Queues", F_PRIO | F_GANGS | F_QUOTAS, NOT_KUBE, 2 },
};

/*
 * Where live.c and the replay disagree today: run, mismatches counted and
 * printed, never failing.  Each line: what live does that the replay does
 * not.  When a change makes one agree, move its line to families[] (and
 * widen the asserted ones it was cut out of: kube, gang members' failed
 * bindings, more than 64 pods).
 */
static const struct family known_disagreements[] = {
	/* live's own FIFO: a parked pod re-enters behind pods that arrived after it, after its backoff */
	{ "kube: live's FIFO with backoff and requeue hints", 0, QP(GF_QP_KUBE), 0 },
	{ "kube, all of it", F_PRIO | F_DEADLINE | F_NODES | F_PDB | F_FAILBIND, QP(GF_QP_KUBE), 0 },
	/* gf_live_forget of one member: re-placed alone (priority INT32_MAX); the replay unbinds the whole gang */
	{ "gang member's failed binding: live re-places it alone", F_GANGS | F_GANG_FAIL, NOT_KUBE, 0 },
	/* past 64 pods live refreshes the FGD target from the pods seen (gf_loop_set_target; the replay
	 * builds it once from the whole trace): other scores, other ties */
	{ "more than 64 pods: live refreshes the FGD target", F_PRIO | F_DEADLINE | F_MANY, NOT_KUBE, 2 },
};

static int seeds_default(int dflt)
{
	const char *s = getenv("GF_AGREE_SEEDS");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? (int)v : dflt;
}

struct tally {
	long runs, bad, binds, evictions;
	uint64_t smallest;	/* smallest seed that disagrees */
	char first[512];
	char what[96];
	const char *qp;		/* the policy of the smallest seed's run */
};

static void run_family(const struct family *f, int nseeds, struct tally *t)
{
	static struct scen sc;
	bool verbose = getenv("GF_AGREE_VERBOSE") != NULL;

	memset(t, 0, sizeof(*t));
	t->smallest = UINT64_MAX;
	const char *from = getenv("GF_AGREE_FIRST");	/* investigating: start at this seed */

	for (int seed = from ? (int)strtol(from, NULL, 10) : 0; seed < nseeds; seed++) {
		make_scen((uint64_t)seed, f->feat, &sc);
		for (int qp = 0; qp < GF_QP_COUNT_; qp++) {
			if (f->policies && !(f->policies & QP(qp)))
				continue;
			for (int pre = 0; pre < 2; pre++) {
				struct outcome o;

				if ((f->pre == 0 && pre) || (f->pre == 1 && !pre) || (qp == GF_QP_KUBE && pre))
					continue;
				run_one(&sc, qp, pre, &o);
				t->runs++;
				t->binds += o.binds;
				t->evictions += o.evictions;
				if (!o.mismatches)
					continue;
				t->bad++;
				if ((uint64_t)seed < t->smallest) {
					t->smallest = (uint64_t)seed;
					snprintf(t->first, sizeof(t->first), "%s", o.first);
					snprintf(t->what, sizeof(t->what), "%s%s", gf_queue_policy_name((enum gf_queue_policy)qp),
						 pre ? " +preemption" : "");
					t->qp = gf_queue_policy_name((enum gf_queue_policy)qp);
				}
				if (verbose)
					print_message("  %s seed %d %s%s: %d mismatches, %s\n", f->name, seed,
						      gf_queue_policy_name((enum gf_queue_policy)qp), pre ? " +preemption" : "",
						      o.mismatches, o.first);
			}
		}
	}
}

static void live_agrees_with_the_replay(void **state)
{
	int nseeds = seeds_default(200);
	long runs = 0, binds = 0, evictions = 0, bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		struct tally t;

		run_family(&families[i], nseeds, &t);
		print_message("%-12s %4ld runs, %5ld binds, %4ld evictions: %ld disagree%s%s%s%s%s\n", families[i].name,
			      t.runs, t.binds, t.evictions, t.bad, t.bad ? "; smallest seed " : "",
			      t.bad ? t.what : "", t.bad ? " " : "", t.bad ? t.first : "", "");
		if (t.bad)
			print_message("  smallest: seed %llu (%s)\n", (unsigned long long)t.smallest, t.what);
		runs += t.runs;
		binds += t.binds;
		evictions += t.evictions;
		bad += t.bad;
	}
	print_message("%ld runs over %d seeds: %ld binds, %ld evictions compared\n", runs, nseeds, binds, evictions);
	assert_int_equal(bad, 0);
	assert_true(binds > 1000 * (long)sizeof(families) / (long)sizeof(families[0]) * nseeds / 200);
	assert_true(evictions > 0);
}

/* GF_AGREE_FEAT=<flags> [GF_AGREE_QP=<policy>]: one family of one's own, printed (investigating). */
static void chosen_family(void **state)
{
	const char *f = getenv("GF_AGREE_FEAT"), *q = getenv("GF_AGREE_QP");
	struct family fam = { "chosen", 0, 0, 2 };
	enum gf_queue_policy qp;
	struct tally t;

	(void)state;
	if (!f)
		return;
	fam.feat = (unsigned)strtoul(f, NULL, 0);
	if (q && gf_queue_policy_find(q, &qp))
		fam.policies = QP(qp);
	run_family(&fam, seeds_default(200), &t);
	print_message("chosen %#x: %ld binds, %ld evictions; %ld of %ld runs disagree; smallest seed %llu (%s): %s\n",
		      fam.feat, t.binds, t.evictions, t.bad, t.runs, (unsigned long long)t.smallest, t.what, t.first);
}

static void known_disagreements_are_counted(void **state)
{
	int nseeds = seeds_default(50);

	(void)state;
	for (size_t i = 0; i < sizeof(known_disagreements) / sizeof(known_disagreements[0]); i++) {
		struct tally t;

		run_family(&known_disagreements[i], nseeds, &t);
		print_message("known: %s: %ld of %ld runs disagree", known_disagreements[i].name, t.bad, t.runs);
		if (t.bad)
			print_message("; smallest seed %llu (%s): %s\n  to see it: GF_AGREE_FEAT=%#x GF_AGREE_QP=%s "
				      "GF_AGREE_FIRST=%llu GF_AGREE_SEEDS=%llu GF_AGREE_TRACE=1",
				      (unsigned long long)t.smallest, t.what, t.first, known_disagreements[i].feat,
				      t.qp, (unsigned long long)t.smallest, (unsigned long long)t.smallest + 1);
		print_message("\n");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(live_agrees_with_the_replay),
		cmocka_unit_test(known_disagreements_are_counted),
		cmocka_unit_test(chosen_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
