/*
 * k8s/live.h - the scheduler's view of a live cluster, fed by watches.
 *
 * gf_live holds every Node and Pod the watches deliver, keeps the engine's
 * gf_cluster in step with them (nodes and bound pods) and makes the
 * decisions: the standalone scheduler's placements and the extender's
 * filter / prioritize / bind.  It does no I/O and reads no clock, so the
 * whole scheduling logic runs in unit tests without an API server; the
 * daemon (k8s/scheduler.c) serialises calls with one mutex.
 *
 * Pod states: IGNORED (not ours and not bound, or finished), PENDING (ours,
 * unbound: in the queue or parked after an unschedulable attempt),
 * ASSUMED (placed here, binding in flight: resources already reserved),
 * BOUND (spec.nodeName set: resources accounted).  A bound pod's GPUs are
 * the ones its assignment annotations name (GF_ANN_*) when they are for its
 * node; a pod bound by someone else gets the GPUs the engine would give it.
 * Annotations are the only memory: a new gf_live fed the same objects
 * rebuilds the same allocation, so a restart never double-assigns a GPU.
 *
 * Nodes joining, leaving or changing rebuild the engine cluster (and the
 * policy state) lazily, before the next decision: O(nodes + bound pods).
 *
 * Target workload (FGD): the shapes of all pods seen (bound, assumed,
 * pending; CPU-only pods too, as the simulator counts every pod of a trace),
 * rebuilt when that population has doubled since the last build or the
 * node set changed; before any pod is seen, one whole GPU.
 */
#ifndef GF_K8S_LIVE_H
#define GF_K8S_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/whynot.h"
#include "k8s/codec.h"
#include "policy/policy.h"
#include "policy/topology.h"

typedef struct gf_live gf_live;

struct gf_live_opts {
	const struct gf_policy_ops *policy;	/* NULL = FGD */
	const char *scheduler_name;		/* NULL = "gpufleet" */
	uint64_t seed;				/* random policies and ties */
	int target_pct;				/* FGD target coverage; 0 = 95 */
	/*
	 * The loop's queue policy (enum gf_queue_policy, queue/loop.h); 0 =
	 * kube: one pod a cycle, a pod that does not fit backs off here.  The
	 * others: pods stay in the loop's queue (priority, then arrival) until
	 * placed, deleted or changed; one FailedScheduling decision each.
	 */
	int queue_policy;
	/*
	 * Quotas from Queue objects (gf_live_queue_set; not in kube mode): a
	 * pod charged to a Queue (k8s/queues.h: its label, else its
	 * namespace's) is admitted within that Queue's quota, its bound pods
	 * counting against it; a pod naming a Queue that does not exist (or
	 * was refused) waits with an Event saying so; pods charged to none
	 * (Kueue's among them) are not limited.
	 */
	bool queues;
	/*
	 * Preemption (not in kube mode; live.c, "preemption"): a pod that
	 * fits only by evicting running pods of lower priority (or, with
	 * queues, of Queues borrowing from its cohort while its own is within
	 * its nominal quota) has the loop choose them (the cheapest, gangs
	 * whole); they are handed out by gf_live_evictions(), the preemptor's
	 * decision is NOMINATED (its room held), and PLACED once every evicted
	 * pod on its node is gone, or UNSCHEDULABLE when they are not gone
	 * within preempt_wait_s (0: 120 s; the room goes back to them).  A pod
	 * with preemptionPolicy: Never evicts nobody.
	 */
	bool preemption;
	double preempt_wait_s;
};

gf_err gf_live_create(const struct gf_live_opts *o, gf_live **out);
void gf_live_destroy(gf_live *l);

/* ---- feeding it (watch events) ---- */

/* Add or update a node / pod (copied). */
void gf_live_node_set(gf_live *l, const struct gf_k8s_node *n);
void gf_live_node_delete(gf_live *l, const char *name);
void gf_live_pod_set(gf_live *l, const struct gf_k8s_pod *p);
void gf_live_pod_delete(gf_live *l, const char *uid);

/* A relist: objects set between begin and end are kept, the others deleted. */
void gf_live_sync_begin(gf_live *l, bool pods);
void gf_live_sync_end(gf_live *l, bool pods);

/* ---- quotas (opts.queues) ---- */

struct gf_queue_def;
/* Add or replace the Queue d->name (copied); err non-NULL: the object was refused (why), its pods wait.
 * GF_RANGE: more than 255 Queues; GF_NOMEM. */
gf_err gf_live_queue_set(gf_live *l, const struct gf_queue_def *d, const char *err);
void gf_live_queue_delete(gf_live *l, const char *name);
/* Namespace ns's GF_LABEL_QUEUE label (NULL or "": none).  GF_NOMEM. */
gf_err gf_live_namespace_queue(gf_live *l, const char *ns, const char *queue);
/* Queue name's usage in milli-GPU (bound, assumed and in-cycle pods); false if unknown or quotas are off. */
bool gf_live_queue_usage(gf_live *l, const char *name, int64_t *milli);

/* Each Queue held, in the order first seen: fn(ud, name, usage (milli-GPU; -1 when quotas are
 * off or there is no engine yet), nominal (milli-GPU), err ("" when the Queue can take pods)). */
void gf_live_each_queue(gf_live *l, void (*fn)(void *ud, const char *name, int64_t used, int64_t nominal,
					       const char *err), void *ud);

/* ---- disruption budgets (opts.preemption) ---- */

struct gf_k8s_pdb;
/*
 * Add or replace the PodDisruptionBudget p->ns/p->name (copied): the pods it
 * covers are victims of preemption only beyond its count (best effort:
 * queue/loop.h, live.c "disruption budgets").  GF_RANGE: more than
 * GF_LOOP_MAX_BUDGETS; GF_NOMEM.
 */
gf_err gf_live_pdb_set(gf_live *l, const struct gf_k8s_pdb *p);
void gf_live_pdb_delete(gf_live *l, const char *ns, const char *name);
/* PodDisruptionBudgets held. */
size_t gf_live_pdb_count(const gf_live *l);

/* ---- deciding ---- */

enum gf_live_result { GF_LIVE_PLACED, GF_LIVE_UNSCHEDULABLE, GF_LIVE_INVALID,
		      GF_LIVE_NOMINATED /* preempting: room held on node, bind later (opts.preemption) */ };

struct gf_live_decision {
	enum gf_live_result result;
	char node[GF_K8S_NAME_MAX];
	int ngpus;
	uint8_t gpus[GF_MAX_GPUS];
	int milli;			/* per GPU */
	int64_t mem_mib;		/* per GPU, as asked (0 = not asked) */
	char uuids[GF_MAX_GPUS * GF_K8S_UUID_MAX]; /* "GPU-a,GPU-b"; "" when unknown */
	enum gf_topo_fit fit;
	uint32_t nfeasible;
	char message[512];		/* why not (UNSCHEDULABLE, INVALID) */
	uint64_t reason;		/* why not, as an Event aggregation key (gf_live_report_due) */
};

/*
 * The next decision of the engine loop's scheduling cycle (queue/loop.h; a
 * cycle runs when the last one's decisions are handed out).  false if there
 * is none.  PLACED: the pod is ASSUMED (resources reserved) and *pod is its
 * copy for the binder, who then calls gf_live_forget() on failure.
 * NOMINATED (opts.preemption): as PLACED, but not to be bound yet: its room
 * is held on d->node until the pods evicted there are gone; its PLACED
 * decision follows then (or UNSCHEDULABLE when the wait runs out).
 * UNSCHEDULABLE / INVALID: the pod is parked until requeued
 * (gf_live_requeue_due; INVALID pods until the pod itself changes); under a
 * queue policy other than kube it waits in the loop's queue meanwhile.
 */
bool gf_live_schedule_next(gf_live *l, struct gf_k8s_pod *pod, struct gf_live_decision *d);

/*
 * Preemption (opts.preemption): the pods a cycle evicted, each once, in the
 * order chosen; up to max of them into out, returned; the rest at the next
 * call.  by_*: the pod the cycle placed on the victim's node ("": none,
 * e.g. another node of an evicted gang).
 */
struct gf_live_eviction {
	char ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX], uid[GF_K8S_UID_MAX];
	char node[GF_K8S_NAME_MAX];
	char by_ns[GF_K8S_NAME_MAX], by_name[GF_K8S_NAME_MAX], by_uid[GF_K8S_UID_MAX];
	int32_t priority, by_priority;
};
size_t gf_live_evictions(gf_live *l, struct gf_live_eviction *out, size_t max);

/*
 * Undo an assumption (binding failed): its room is free at once.  requeue:
 * back into the queue now, else after its backoff.  Under a queue policy
 * other than kube a pod placed as a job of one goes back into the loop's
 * queue at its place instead (gf_loop_unbind), tried in the next cycle.
 */
void gf_live_forget(gf_live *l, const char *uid, bool requeue);

/*
 * Gangs (not in kube mode): the PodGroup store the caller keeps (k8s/gangs.h;
 * NULL: none, every pod alone), read at each decision under the caller's
 * lock.  A pod naming a PodGroup waits until minMember members exist, then
 * the gang is one loop job placed all or nothing (live.c, "gangs").  In kube
 * mode gangs are not looked at: each pod is placed alone.
 * gf_live_gangs_changed(): a PodGroup was added, changed or deleted: gang
 * members waiting here are tried again; returns how many.
 */
struct gf_gangs;
void gf_live_set_gangs(gf_live *l, const struct gf_gangs *g);
size_t gf_live_gangs_changed(gf_live *l);

/*
 * Waiting pods' notes (not kube): for pods waiting in the loop's queue whose
 * note is due (never given, its reason changed, or its estimated start moved
 * by more than GF_LIVE_NOTE_MOVE_S or appeared or went), at most max of them
 * into out[], recorded as given.  start: when the loop expects the pod to
 * start, on the caller's clock (seconds, as gf_live_requeue_due's now); -1:
 * no estimate (gf_loop_forecast has none: behind a job that never fits, or
 * every running pod's end unknown).  The daemon writes them as the pod's
 * GF_COND_ESTIMATED_START condition (codec.h).  The
 * forecast behind them is made again only when the loop changed, and at
 * most every 10 s of the caller's clock (gf_live_requeue_due's now): a pod
 * that joined the loop since the last one gets its note with the next.
 */
#define GF_LIVE_NOTE_MOVE_S 60
struct gf_live_note {
	char uid[GF_K8S_UID_MAX], ns[GF_K8S_NAME_MAX], name[GF_K8S_NAME_MAX];
	double start;
	char reason[160];
};
size_t gf_live_notes_due(gf_live *l, struct gf_live_note *out, size_t max);

/*
 * The members of PodGroup pg (pods naming it, any scheduler, finished ones
 * too) by state: scheduled (bound or being bound; finished ones count),
 * running, succeeded, failed (status.phase).  O(members): live.c keeps
 * each gang's pods in an index.
 */
struct gf_live_gang_count {
	uint32_t members, scheduled, running, succeeded, failed;
};
void gf_live_gang_count(gf_live *l, const struct gf_k8s_podgroup *pg, struct gf_live_gang_count *out);

/* Something was freed or added since the last call (then true once). */
bool gf_live_take_freed(gf_live *l);

/* Parked (unschedulable) pods go back into the queue; returns how many. */
size_t gf_live_requeue_parked(gf_live *l);

/*
 * Requeueing without storms (queue/requeue.h), at time now (seconds, the
 * caller's clock; also the time of the attempts that follow): a parked pod
 * goes back into the queue when a node changed since its last attempt
 * (resources freed there, its admission changed, nodes came or went) and
 * its backoff (1 s doubling to 10 s) has passed, or when it has not been
 * tried for GF_LIVE_SWEEP_S.  gf_live_schedule_next() then skips, without
 * an attempt, a pod that none of those changed nodes admits and fits.
 * Cheap when nothing changed and nothing is due: call it every loop; a scan
 * of the pods (O(pods)) runs when a backoff or sweep is due, and for changes
 * at most every GF_LIVE_SCAN_S.  Returns how many pods went back.
 */
#define GF_LIVE_SWEEP_S 300.0	/* kube-scheduler's podMaxInUnschedulablePodsDuration */
#define GF_LIVE_SCAN_S 0.1
size_t gf_live_requeue_due(gf_live *l, double now);

/*
 * Should a FailedScheduling event be written for pod uid, whose attempt
 * failed for reason (gf_live_decision.reason), at time now?  Yes when the
 * reason differs from the last one reported for the pod or `every` seconds
 * have passed; records the report.  The reason is the set of refusal kinds,
 * not the message: node counts in the message do not make a new Event.
 * Unknown pods: yes.
 */
bool gf_live_report_due(gf_live *l, const char *uid, uint64_t reason, double now, double every);

/*
 * Should a FailedScheduling event be written for pod uid with message msg
 * at time now (seconds, the caller's clock)?  Yes when the message differs
 * from the last one reported for the pod or `every` seconds have passed;
 * records the report.  Unknown pods: yes.
 */
bool gf_live_should_report(gf_live *l, const char *uid, const char *msg, double now, double every);

/* The pod with this uid (copied into *out); false if unknown. */
bool gf_live_pod_get(const gf_live *l, const char *uid, struct gf_k8s_pod *out);

/* ---- extender ---- */

/*
 * The extender's filter and prioritize, in steps, for callers that judge one
 * list of nodes more than once (filter, then prioritize of its answer):
 *
 * gf_live_resolve() gives each of names[0..n) (lengths lens[i]; lens NULL:
 * strlen) its index in the current numbering of the nodes (-1: not known)
 * and that numbering's epoch.  gf_live_filter_at() judges pod p on each:
 * reasons[i] = NULL if it fits, else a static phrase ("Insufficient GPU
 * milli", "node not known to gpufleet"); GF_INVAL when the pod's request is
 * invalid (msg says why).  gf_live_prioritize_at() gives the policy's score
 * for p on each, 0..10 (MaxExtenderPriority), 0 where it does not fit.  Both
 * answer GF_STATE when nodes came or went since the epoch (resolve again).
 * gf_live_epoch() tells the current epoch.  Every call here brings the
 * engine up to date first.
 */
gf_err gf_live_epoch(gf_live *l, uint64_t *epoch);
gf_err gf_live_resolve(gf_live *l, const char *const *names, const size_t *lens, size_t n,
			int32_t *ci, uint64_t *epoch);
gf_err gf_live_filter_at(gf_live *l, const struct gf_k8s_pod *p, uint64_t epoch, const int32_t *ci,
			 size_t n, const char **reasons, char *msg, size_t msglen);
gf_err gf_live_prioritize_at(gf_live *l, const struct gf_k8s_pod *p, uint64_t epoch,
			     const int32_t *ci, size_t n, uint64_t fit_state, int64_t *scores);

/*
 * The state of the nodes' resources (changes with every bind and unbind and
 * with the epoch).  A caller that saw every node in ci fit p at state S may
 * pass fit_state S to gf_live_prioritize_at: while the state is still S the
 * fit check is skipped; 0 = check.
 */
uint64_t gf_live_state(const gf_live *l);

/*
 * Resolve and filter one list on several threads: gf_live_judge_begin
 * brings the engine up to date and reads the pod's request once (GF_INVAL
 * with msg like gf_live_filter_at); then gf_live_judge_names resolves and judges
 * one part of the list, reading l only, so threads may each take a part at
 * the same time as long as nothing changes l meanwhile (the caller's lock).
 */
struct gf_live_judge {
	struct gf_pod_spec eff;
	int r;
	uint64_t epoch;		/* the node numbering the indices are in */
};
gf_err gf_live_judge_begin(gf_live *l, const struct gf_k8s_pod *p, struct gf_live_judge *j, char *msg,
			   size_t msglen);
void gf_live_judge_names(const gf_live *l, const struct gf_live_judge *j, const char *const *names,
			 const size_t *lens, size_t n, int32_t *ci, const char **reasons);

/* Choose the GPUs for p on the given node and assume it there (extender bind). */
gf_err gf_live_assume_on(gf_live *l, const struct gf_k8s_pod *p, const char *node,
			 struct gf_live_decision *d);

/* ---- observing ---- */

struct gf_live_stats {
	size_t nodes, pods_bound, pods_assumed, pods_queued, pods_parked;
	int64_t gpus, gpu_capacity_milli, gpu_used_milli;
	double frag_milli;		/* FGD fragmentation of the cluster w.r.t. the target */
	uint64_t conflicts;		/* bound pods that did not fit their node's state */
	uint64_t rebuilds;		/* engine rebuilt: the first nodes, or a node change it could not apply in place */
	uint64_t node_verbs;		/* nodes joined, left or changed resources in place (no rebuild) */
	uint64_t loops_made;		/* engine loops made (the first nodes, a rebuild) */
	uint64_t resets;		/* placement state (score cache) started afresh: rebuilds, new target */
	uint64_t requeue_skips;		/* requeued pods not tried: no changed node lets them fit */
	uint64_t loop_tries;		/* placements the engine's loop tried (every policy; all loops) */
	size_t pod_records;		/* pods held (any state) */
	size_t pod_bytes;		/* their memory: slots (engine record, uid) and packed objects */
	size_t loop_jobs;		/* job records the loop holds (ended ones until compacted) */
	size_t running_pods;		/* bound pods in the loop's running jobs (every bound pod it holds) */
	size_t node_slots;		/* node slots held: nodes present, absent ones pods still name, spare */
	size_t index_slots;		/* hash table slots: node names, pod uids, gangs */
	uint64_t cycles;		/* scheduling cycles of the engine's loop run */
	uint64_t idle_skips;		/* cycles not run (not kube): nothing changed since the last one */
	uint64_t forecasts;		/* forecasts made for the notes (gf_live_notes_due) */
};

void gf_live_stats(gf_live *l, struct gf_live_stats *s);

/* ---- the allocation record (cost, k8s/costrec.h) ---- */

/* One pod's share of one GPU, as accounted.  Strings point into l: valid
 * until l next changes. */
struct gf_live_share {
	const char *ns, *pod, *node, *model, *uuid; /* uuid "" when the node published none */
	int gpu;		/* index on the node */
	int milli;		/* the share, milli-GPU (memory requests already turned into milli) */
};

/* One GPU of a node in the engine cluster. */
struct gf_live_gpu {
	const char *node, *model, *uuid;
	int gpu;
	const struct gf_k8s_node *n; /* for its labels (spot) */
};

/*
 * Bring the engine up to date, then call share() for every GPU share of
 * every ASSUMED or BOUND pod accounted in it, and gpu() for every GPU of
 * every node in it (either may be NULL), in slot order.
 */
void gf_live_each_allocation(gf_live *l, void (*share)(void *ud, const struct gf_live_share *s),
			     void (*gpu)(void *ud, const struct gf_live_gpu *g), void *ud);

/* Check the engine's invariants (tests).  GF_STATE with why. */
gf_err gf_live_check(gf_live *l, char *why, size_t whylen);

#endif /* GF_K8S_LIVE_H */
