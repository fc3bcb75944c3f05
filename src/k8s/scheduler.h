/*
 * k8s/scheduler.h - `gpufleet schedule`: the standalone scheduler and the
 * kube-scheduler extender, as one daemon around gf_live (k8s/live.h).
 *
 * Threads: a reflector (LIST + WATCH) for nodes and one for pods, each
 * with its own API client; one scheduling thread taking pods from the
 * queue; `binders` binder threads doing the API writes (bindings, events,
 * status conditions); the HTTP server thread (/metrics, /healthz and the
 * extender verbs).  One mutex guards gf_live and the counters; no API call
 * is made while holding it.
 *
 * Nothing is scheduled before both reflectors have completed their first
 * LIST: the bound pods' annotations must all be in before any decision,
 * so a restarted scheduler never gives out a GPU twice.
 *
 * A binding carries the assignment annotations in its metadata; the API
 * server copies them onto the pod in the same write that sets
 * spec.nodeName, so a bound pod always has its annotations.
 *
 * Two listeners (docs/security.md): /metrics and /healthz on `port`; the
 * extender verbs on their own, loopback by default, and beyond loopback
 * only with mutual TLS (a client certificate that verifies against
 * ext_client_ca_pem, its CN one of ext_allowed_cns when given).  The
 * extender binds only pods whose schedulerName is one of ext_profiles,
 * pending and unbound; the API calls of a bind run on a binder thread, the
 * HTTP thread waits for them at most ext_bind_wait_s seconds (keep it below
 * kube-scheduler's extender httpTimeout, or the answer comes too late to
 * be read: docs/scheduler.md).
 */
#ifndef GF_K8S_SCHEDULER_H
#define GF_K8S_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "k8s/conn.h"
#include "policy/policy.h"

struct gf_kube_sched_opts {
	const struct gf_kube_conn *conn;
	const char *scheduler_name;	/* NULL = "gpufleet" */
	const struct gf_policy_ops *policy;	/* NULL = FGD */
	const char *listen_addr;	/* NULL = all interfaces */
	uint16_t port;			/* HTTP port (metrics, healthz); 0 = any */
	const char *extender_prefix;	/* e.g. "/gpusched"; NULL = "/gpusched"; at most
					 * GF_EXT_PREFIX_MAX bytes, printable, no '?' '#' '%' */
	const char *ext_addr;		/* extender listener: IPv4 literal; NULL = "127.0.0.1" */
	uint16_t ext_port;		/* 0 = any free port */
	const char *ext_tls_cert_pem;	/* mutual TLS: serving cert, key, client CA (all three or none) */
	const char *ext_tls_key_pem;
	const char *ext_client_ca_pem;
	const char *const *ext_allowed_cns; /* client certificate CNs accepted; none = any the CA signed */
	size_t n_ext_allowed_cns;
	const char *const *ext_profiles; /* schedulerNames the extender may bind; none = "default-scheduler" */
	size_t n_ext_profiles;
	int ext_bind_wait_s;		/* a bind's answer within this; 0 = GF_EXT_BIND_WAIT_S */
	int binders;			/* 0 = 16 */
	bool unordered_binds;		/* --bind-order none: gf_kube_bind_node_order(false) */
	bool standalone;		/* schedule pods with our schedulerName */
	uint64_t seed;
	int target_pct;			/* 0 = 95 */
	int queue_policy;		/* enum gf_queue_policy (queue/loop.h); 0 = kube */
	bool verbose;			/* one log line per placement */
	volatile int *stop;		/* set non-zero (e.g. by a signal handler) to stop */
	/* Leader election on a Lease (k8s/lease.h): lease_name NULL = none, this
	 * replica always leads.  With it, only the leader binds (standalone
	 * queue and the extender's bind verb); a standby keeps its watches
	 * and answers /metrics, /healthz, filter and prioritize.  On becoming
	 * leader it reads every bound pod from the API server before its first
	 * decision.  Durations in seconds, <= 0: 15, 10, 2. */
	const char *lease_name, *lease_namespace, *identity;
	int lease_s, renew_s, retry_s;
	/* Watch coscheduling PodGroups (scheduling.x-k8s.io/v1alpha1; the CRD
	 * must exist) into a gang store (k8s/gangs.h) for the engine loop, whose
	 * gang-aware queue policies place each gang all or nothing.  Off: not
	 * watched. */
	bool pod_groups;
	/* Watch the Workload API's PodGroups (scheduling.k8s.io/v1alpha2, KEP-4671;
	 * the API server needs the GenericWorkload feature gate and that API
	 * version) into the same store; read only. */
	bool workload_groups;
	/* Quotas (issue 12): watch Queue objects (gpufleet.io/v1alpha1; the
	 * CRD must exist) and namespaces' gpufleet.io/queue labels, and admit
	 * pods within their Queue's quota (k8s/live.h, opts.queues).  Needs a
	 * queue policy other than kube. */
	bool queues;
	/* Preemption (issue 12; k8s/live.h, opts.preemption): victims evicted
	 * (DisruptionTarget, graceful delete, Event Preempted), the preemptor
	 * nominated (status.nominatedNodeName) and bound once they are gone,
	 * or released after preempt_wait_s (0: 120).  Needs a queue policy
	 * other than kube. */
	bool preemption;
	int preempt_wait_s;
};

#define GF_EXT_PREFIX_MAX 127
#define GF_EXT_BIND_WAIT_S 10
#define GF_EXT_BIND_WAIT_MAX_S 60

/*
 * Run until *o->stop.  Returns GF_OK after a clean stop; GF_INVAL (a bad
 * option: a prefix too long, TLS half given, plain HTTP beyond loopback),
 * GF_UNAVAILABLE (a port could not be bound), GF_NOMEM; err says what.
 */
gf_err gf_kube_scheduler_run(const struct gf_kube_sched_opts *o, char *err, size_t errlen);

#endif /* GF_K8S_SCHEDULER_H */
