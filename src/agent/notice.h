/*
 * agent/notice.h - spot and maintenance notices from the node's cloud
 * metadata service, written on the agent's own Node (`--spot-notice`).
 *
 * The contract with the scheduler (docs/agent.md, "Spot notices"):
 *   - annotation gpufleet.io/notice: the RFC 3339 UTC time the node leaves
 *     (the hard notice).  The scheduler reads this key; anyone may set it.
 *   - taint gpufleet.io/notice=<signal>:NoSchedule, set with it, so that no
 *     scheduler (kube-scheduler included) places new pods there.  A taint
 *     value cannot hold an RFC 3339 time (':' is not allowed in it): the
 *     value names the signal, the annotation carries the time.
 *   - annotation gpufleet.io/rebalance: the RFC 3339 time AWS issued a
 *     rebalance recommendation (the earlier, best-effort signal; no taint).
 *   - an Event on the Node (reason SpotNotice, Warning; RebalanceRecommendation,
 *     Normal) saying what the metadata service said and when the node leaves.
 *
 * What each cloud's signal becomes (signal = the taint value):
 *   aws  spot/instance-action {"action","time"}  -> aws-spot-itn, leaves at "time"
 *        events/recommendations/rebalance {"noticeTime"} -> gpufleet.io/rebalance
 *   gcp  instance/preempted "TRUE"                -> gcp-preempted, now + 30 s
 *        instance/maintenance-event TERMINATE_ON_HOST_MAINTENANCE
 *                                                 -> gcp-maintenance, now + 60 s
 *   azure scheduledevents, an event of type Preempt (Terminate) naming this
 *        VM in Resources -> azure-preempt (azure-terminate), leaves at NotBefore
 *        (RFC 1123 there; now when it is empty: the event has started)
 *
 * The parsers below are pure functions of the body and the time given
 * (fuzzed by fuzz/fuzz_agent_notice.c); the poller is the only part doing
 * I/O.  Every refusal names what was wrong; the poller logs it with the
 * endpoint and keeps polling.
 */
#ifndef GF_AGENT_NOTICE_H
#define GF_AGENT_NOTICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/obuf.h"
#include "k8s/conn.h"

#define GF_ANN_NOTICE "gpufleet.io/notice"
#define GF_ANN_REBALANCE "gpufleet.io/rebalance"
#define GF_TAINT_NOTICE "gpufleet.io/notice"

/* A metadata answer's size cap: a longer body is refused (GF_TOOBIG). */
#define GF_NOTICE_MAX_BODY (64 * 1024)

/* Notice lengths the metadata service does not state itself (seconds). */
#define GF_NOTICE_GCP_PREEMPT_S 30	/* GCE preemption: 30 s from the flag */
#define GF_NOTICE_GCP_MAINT_S 60	/* maintenance-event changes 60 s before */

enum gf_notice_cloud { GF_NOTICE_NONE_CLOUD = 0, GF_NOTICE_AWS, GF_NOTICE_GCP, GF_NOTICE_AZURE };

/* "aws", "gcp", "azure" to the cloud; false for anything else. */
bool gf_notice_cloud_parse(const char *s, enum gf_notice_cloud *out);

/* What one metadata answer says. */
struct gf_notice_signal {
	int64_t at;		/* hard notice: Unix seconds the node leaves; rebalance: when issued */
	char signal[24];	/* the taint value: "aws-spot-itn", "gcp-preempted", ... */
	char detail[96];	/* for the Event: "action terminate", "event Preempt 6A1B..." */
};

/*
 * The parsers.  body is n bytes (not NUL-terminated; at most
 * GF_NOTICE_MAX_BODY are looked at, a longer body is GF_TOOBIG); now is the
 * wall clock in Unix seconds.  GF_OK: *out filled, a notice; GF_NOENT: the
 * answer says there is none; GF_PARSE / GF_TOOBIG: refused, err (errlen
 * bytes) says why (never empty).  Times must lie within
 * [now - 1 day, now + 30 days] (GF_PARSE "time ... is not near now"
 * otherwise: a clock or a server gone wrong).
 */
/* AWS spot/instance-action: {"action": "terminate"|"stop"|"hibernate", "time": RFC 3339}. */
gf_err gf_notice_parse_aws_action(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				  char *err, size_t errlen);
/* AWS events/recommendations/rebalance: {"noticeTime": RFC 3339}. */
gf_err gf_notice_parse_aws_rebalance(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				     char *err, size_t errlen);
/* GCP instance/preempted: "TRUE" (a notice, now + 30 s) or "FALSE" (GF_NOENT). */
gf_err gf_notice_parse_gcp_preempted(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				     char *err, size_t errlen);
/* GCP instance/maintenance-event: TERMINATE_ON_HOST_MAINTENANCE (a notice, now + 60 s);
 * NONE, MIGRATE_ON_HOST_MAINTENANCE (live migration: the node stays) and any
 * other upper-case word: GF_NOENT. */
gf_err gf_notice_parse_gcp_maintenance(const char *body, size_t n, int64_t now, struct gf_notice_signal *out,
				       char *err, size_t errlen);
/* Azure scheduledevents (api-version 2020-07-01): {"DocumentIncarnation": N,
 * "Events": [{"EventId", "EventType", "EventStatus", "Resources": [...],
 * "NotBefore": RFC 1123 or ""}...]}.  The earliest Preempt or Terminate event
 * whose Resources name vm (exactly) is the notice; other types, and events
 * for other VMs of the scale set, are GF_NOENT. */
gf_err gf_notice_parse_azure(const char *body, size_t n, int64_t now, const char *vm,
			     struct gf_notice_signal *out, char *err, size_t errlen);

/* "Mon, 19 Sep 2016 18:29:47 GMT" (RFC 1123, the only form HTTP dates and
 * Azure's NotBefore take) to Unix seconds; false if s is not one. */
bool gf_notice_parse_rfc1123(const char *s, int64_t *t);

/* ---- the poller ------------------------------------------------------------------ */

typedef struct gf_notice gf_notice;

struct gf_notice_config {
	enum gf_notice_cloud cloud;
	const char *metadata_url;	/* NULL = "http://169.254.169.254" (every cloud's link-local address) */
	unsigned interval_ms;		/* between polls; 0 = 2000 */
	unsigned timeout_ms;		/* per metadata request; 0 = 2000 */
	const struct gf_kube_conn *kube;/* must outlive the poller */
	const char *node;		/* the Node to mark (a DNS subdomain) */
};

/* A poller (no thread yet).  Strings are copied.  GF_INVAL (no cloud, bad node
 * name or URL; err says which), GF_NOMEM. */
gf_err gf_notice_create(const struct gf_notice_config *cfg, gf_notice **out, char *err, size_t errlen);
/* Stops the thread if started, frees.  NULL is a no-op. */
void gf_notice_destroy(gf_notice *p);

/*
 * One poll at wall time now: ask the metadata service, and on a notice not
 * yet written, write it on the Node (annotation + taint, or the rebalance
 * annotation; then the Event).  Idempotent: a notice already on the Node (an
 * equal or earlier gpufleet.io/notice and the taint) is not written again.
 * Returns GF_OK, or the last error (logged already, with the endpoint).
 * For the thread and for tests.
 */
gf_err gf_notice_poll(gf_notice *p, int64_t now);

/* Run gf_notice_poll every interval on a thread of its own until destroy. */
gf_err gf_notice_start(gf_notice *p);

/* What the poller has written so far (for tests and logs). */
struct gf_notice_stats {
	unsigned polls, errors;		/* polls done, and those with an error */
	bool notice_written, rebalance_written;
	int64_t notice_at;		/* the time written (0 = none) */
};
void gf_notice_stats(gf_notice *p, struct gf_notice_stats *out);

/* Append the poller's Prometheus samples to out (nothing when p is NULL):
 * gpufleet_agent_spot_notice_polls_total{result="ok"|"error"} and
 * gpufleet_agent_spot_notice_deadline_seconds (the Unix time written in
 * gpufleet.io/notice, 0 before any notice).  Callable from any thread. */
void gf_notice_render_metrics(gf_notice *p, struct gf_obuf *out);

#endif /* GF_AGENT_NOTICE_H */
