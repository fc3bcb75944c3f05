/*
 * k8s/sched_metrics.c - the scheduler's /metrics (Prometheus text format
 * 0.0.4) and /healthz.
 *
 * Every figure is read under d->mu in one pass, so a scrape sees one
 * consistent state: counters the other files keep in struct daemon
 * (attempts, bindings, extender calls, writes, watch events), gf_live's
 * own (gf_live_stats: pods by state, GPUs, fragmentation), the Queues'
 * usage, the allocation record (k8s/costrec.h) and the PodGroups'
 * (k8s/gangs.h).  Latencies are cumulative histograms with fixed buckets
 * from 100 us to 10 s; an observation is O(buckets).  A scrape is
 * O(series); its size is bounded by the HTTP server's response cap.
 * /healthz is 200 once nodes and pods have listed, 503 before.
 */
#include <stdio.h>

#include "core/build_info.h"
#include "k8s/codec.h"
#include "k8s/costrec.h"
#include "k8s/sched_impl.h"

static const char *const attempt_names[A_COUNT] = { "scheduled", "unschedulable", "invalid", "error" };
const char *const gf_ksched_bind_names[B_COUNT] = { "ok", "conflict_already_bound", "conflict_retry",
						 "pod_gone", "error" };
static const char *const verb_names[V_COUNT] = { "filter", "prioritize", "bind" };
static const char *const ext_codes[3] = { "200", "400", "403" };

static const double bucket_le[NBUCKETS] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
					    0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
					    1,      2.5,     5,      10 };

void gf_ksched_histo_add(struct histo *h, double v)
{
	for (int i = 0; i < NBUCKETS; i++)
		if (v <= bucket_le[i])
			h->b[i]++;
	h->count++;
	h->sum += v;
}

static void histo_render(struct gf_obuf *o, const char *name, const char *help, const struct histo *h)
{
	gf_obuf_printf(o, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (int i = 0; i < NBUCKETS; i++)
		gf_obuf_printf(o, "%s_bucket{le=\"%g\"} %llu\n", name, bucket_le[i], (unsigned long long)h->b[i]);
	gf_obuf_printf(o, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.9f\n%s_count %llu\n", name,
		       (unsigned long long)h->count, name, h->sum, name, (unsigned long long)h->count);
}

/* One gpufleet_queue_used_milli series (a refused Queue's name may be anything: left out). */
static void queue_metric(void *ud, const char *name, int64_t used, int64_t nominal, const char *err)
{
	(void)nominal;
	if (!gf_k8s_dns_subdomain(name))
		return;
	gf_obuf_printf(ud, "gpufleet_queue_used_milli{queue=\"%s\",refused=\"%s\"} %lld\n", name,
		       err[0] ? "true" : "false", (long long)used);
}

void gf_ksched_h_healthz(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)req;
	struct daemon *d = ud;
	pthread_mutex_lock(&d->mu);
	bool ok = d->synced[0] && d->synced[1];
	pthread_mutex_unlock(&d->mu);
	if (!ok)
		gf_http_response_error(resp, 503, "syncing with the API server");
	else
		gf_obuf_puts(&resp->body, "ok\n");
}

void gf_ksched_h_metrics(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)req;
	struct daemon *d = ud;
	struct gf_obuf *o = &resp->body;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	gf_build_info_render(o);
	pthread_mutex_lock(&d->mu);
	struct gf_live_stats s;
	gf_live_stats(d->live, &s);
	gf_obuf_printf(o, "# HELP gpufleet_schedule_attempts_total Scheduling decisions by result.\n"
			  "# TYPE gpufleet_schedule_attempts_total counter\n");
	for (int i = 0; i < A_COUNT; i++)
		gf_obuf_printf(o, "gpufleet_schedule_attempts_total{result=\"%s\"} %llu\n", attempt_names[i],
			       (unsigned long long)d->attempts[i]);
	gf_obuf_printf(o, "# HELP gpufleet_schedule_bindings_total Binding calls by outcome.\n"
			  "# TYPE gpufleet_schedule_bindings_total counter\n");
	for (int i = 0; i < B_COUNT; i++)
		gf_obuf_printf(o, "gpufleet_schedule_bindings_total{result=\"%s\"} %llu\n", gf_ksched_bind_names[i],
			       (unsigned long long)d->binds[i]);
	histo_render(o, "gpufleet_schedule_attempt_duration_seconds",
		     "Time to decide one pod (filter and score every node, choose GPUs).", &d->h_attempt);
	histo_render(o, "gpufleet_schedule_e2e_duration_seconds",
		     "From taking a pod off the queue to its binding being accepted.", &d->h_e2e);
	gf_obuf_printf(o, "# HELP gpufleet_extender_requests_total Extender calls by verb and outcome.\n"
			  "# TYPE gpufleet_extender_requests_total counter\n");
	for (int v = 0; v < V_COUNT; v++)
		for (int k = 0; k < 3; k++)
			gf_obuf_printf(o, "gpufleet_extender_requests_total{verb=\"%s\",code=\"%s\"} %llu\n",
				       verb_names[v], ext_codes[k], (unsigned long long)d->ext_requests[v][k]);
	gf_obuf_printf(o, "# HELP gpufleet_extender_names_reused_total Extender calls whose node list was "
			  "the last filter answer, byte for byte (not read again).\n"
			  "# TYPE gpufleet_extender_names_reused_total counter\n");
	for (int v = 0; v < V_BIND; v++)
		gf_obuf_printf(o, "gpufleet_extender_names_reused_total{verb=\"%s\"} %llu\n", verb_names[v],
			       (unsigned long long)d->ext_reused[v]);
	for (int v = 0; v < V_COUNT; v++) {
		char name[96];
		snprintf(name, sizeof(name), "gpufleet_extender_%s_duration_seconds", verb_names[v]);
		histo_render(o, name, "Extender request handling time (in the server).", &d->h_ext[v]);
	}
	if (d->o.queues) {
		gf_obuf_printf(o, "# HELP gpufleet_queue_used_milli GPU usage charged to each Queue (milli-GPU: bound, "
				  "assumed and admitted pods); -1 before the engine exists.\n"
				  "# TYPE gpufleet_queue_used_milli gauge\n");
		gf_live_each_queue(d->live, queue_metric, o);
		gf_obuf_printf(o, "# HELP gpufleet_queue_events_total Queue objects received (errors: refused).\n"
				  "# TYPE gpufleet_queue_events_total counter\n"
				  "gpufleet_queue_events_total %llu\ngpufleet_queue_events_total{result=\"refused\"} %llu\n",
			       (unsigned long long)d->queue_events, (unsigned long long)d->queue_decode_errors);
	}
	double cap = (double)s.gpu_capacity_milli;
	gf_obuf_printf(o,
		       "# HELP gpufleet_pending_pods Pods waiting: queued or parked after an unschedulable attempt.\n"
		       "# TYPE gpufleet_pending_pods gauge\n"
		       "gpufleet_pending_pods{state=\"queued\"} %zu\ngpufleet_pending_pods{state=\"unschedulable\"} %zu\n"
		       "gpufleet_pending_pods{state=\"binding\"} %zu\n"
		       "# HELP gpufleet_bound_pods Pods bound to nodes, as accounted.\n# TYPE gpufleet_bound_pods gauge\n"
		       "gpufleet_bound_pods %zu\n"
		       "# HELP gpufleet_nodes Nodes known.\n# TYPE gpufleet_nodes gauge\ngpufleet_nodes %zu\n"
		       "# HELP gpufleet_gpus GPUs in the cluster.\n# TYPE gpufleet_gpus gauge\ngpufleet_gpus %lld\n"
		       "# HELP gpufleet_gpu_capacity_milli GPU capacity in milli-GPU.\n# TYPE gpufleet_gpu_capacity_milli gauge\n"
		       "gpufleet_gpu_capacity_milli %lld\n"
		       "# HELP gpufleet_gpu_allocated_milli GPU share allocated, milli-GPU.\n# TYPE gpufleet_gpu_allocated_milli gauge\n"
		       "gpufleet_gpu_allocated_milli %lld\n"
		       "# HELP gpufleet_gpu_allocation_ratio Allocated / capacity.\n# TYPE gpufleet_gpu_allocation_ratio gauge\n"
		       "gpufleet_gpu_allocation_ratio %.6f\n"
		       "# HELP gpufleet_gpu_fragmentation_milli FGD fragmentation of the cluster w.r.t. the target workload (pods seen), milli-GPU.\n"
		       "# TYPE gpufleet_gpu_fragmentation_milli gauge\ngpufleet_gpu_fragmentation_milli %.3f\n"
		       "# HELP gpufleet_gpu_fragmentation_ratio Fragmentation / capacity.\n# TYPE gpufleet_gpu_fragmentation_ratio gauge\n"
		       "gpufleet_gpu_fragmentation_ratio %.6f\n"
		       "# HELP gpufleet_state_conflicts_total Bound pods that did not fit the accounted state (GPU given out twice by someone).\n"
		       "# TYPE gpufleet_state_conflicts_total counter\ngpufleet_state_conflicts_total %llu\n"
		       "# HELP gpufleet_engine_rebuilds_total Engine state rebuilt: the first nodes, a node GPU model or memory change, tombstone compaction (other node changes are applied in place).\n"
		       "# TYPE gpufleet_engine_rebuilds_total counter\ngpufleet_engine_rebuilds_total %llu\n"
		       "# HELP gpufleet_engine_score_resets_total Cached scores dropped (rebuilds, a new FGD target workload).\n"
		       "# TYPE gpufleet_engine_score_resets_total counter\ngpufleet_engine_score_resets_total %llu\n"
		       "# HELP gpufleet_events_total FailedScheduling events written (errors: failed writes).\n# TYPE gpufleet_events_total counter\n"
		       "gpufleet_events_total %llu\ngpufleet_event_errors_total %llu\n"
		       "# HELP gpufleet_decode_errors_total Objects from the API server that could not be decoded.\n"
		       "# TYPE gpufleet_decode_errors_total counter\ngpufleet_decode_errors_total %llu\n"
		       "# HELP gpufleet_watch_restarts_total Broken watches resumed or relisted.\n# TYPE gpufleet_watch_restarts_total counter\n"
		       "gpufleet_watch_restarts_total{resource=\"nodes\"} %llu\ngpufleet_watch_restarts_total{resource=\"pods\"} %llu\n"
		       "# HELP gpufleet_watch_events_total Objects received from the API server (lists and watches).\n"
		       "# TYPE gpufleet_watch_events_total counter\n"
		       "gpufleet_watch_events_total{resource=\"nodes\"} %llu\ngpufleet_watch_events_total{resource=\"pods\"} %llu\n",
		       s.pods_queued, s.pods_parked, s.pods_assumed, s.pods_bound, s.nodes, (long long)s.gpus,
		       (long long)s.gpu_capacity_milli, (long long)s.gpu_used_milli,
		       cap > 0 ? (double)s.gpu_used_milli / cap : 0.0, s.frag_milli,
		       cap > 0 ? s.frag_milli / cap : 0.0, (unsigned long long)s.conflicts,
		       (unsigned long long)s.rebuilds, (unsigned long long)s.resets,
		       (unsigned long long)d->events_total, (unsigned long long)d->event_errors,
		       (unsigned long long)d->decode_errors, (unsigned long long)d->watch_restarts[0],
		       (unsigned long long)d->watch_restarts[1], (unsigned long long)d->watch_events[0],
		       (unsigned long long)d->watch_events[1]);
	gf_obuf_printf(o, "# HELP gpufleet_pod_group_status_total PodGroup status writes (errors: failed writes).\n"
			  "# TYPE gpufleet_pod_group_status_total counter\ngpufleet_pod_group_status_total %llu\n"
			  "gpufleet_pod_group_status_errors_total %llu\n",
		       (unsigned long long)d->gstatus_total, (unsigned long long)d->gstatus_errors);
	gf_obuf_printf(o, "# HELP gpufleet_pod_notes_total Waiting pods' gpufleet.io/EstimatedStart conditions "
			  "written (errors: failed writes).\n# TYPE gpufleet_pod_notes_total counter\n"
			  "gpufleet_pod_notes_total %llu\ngpufleet_pod_note_errors_total %llu\n",
		       (unsigned long long)d->notes_total, (unsigned long long)d->note_errors);
	if (d->o.preemption)
		gf_obuf_printf(o, "# HELP gpufleet_preemption_victims_total Pods evicted by preemption (gone: already "
				  "deleted; error: the API refused).\n# TYPE gpufleet_preemption_victims_total counter\n"
				  "gpufleet_preemption_victims_total{result=\"evicted\"} %llu\n"
				  "gpufleet_preemption_victims_total{result=\"gone\"} %llu\n"
				  "gpufleet_preemption_victims_total{result=\"error\"} %llu\n"
				  "# HELP gpufleet_preemptors_nominated_total Preemptors nominated (bound once their victims "
				  "are gone).\n# TYPE gpufleet_preemptors_nominated_total counter\n"
				  "gpufleet_preemptors_nominated_total %llu\n",
			       (unsigned long long)d->evictions[0], (unsigned long long)d->evictions[1],
			       (unsigned long long)d->evictions[2], (unsigned long long)d->nominated);
	if (d->o.preemption)
		gf_obuf_printf(o, "# HELP gpufleet_pdb_events_total PodDisruptionBudget objects received (refused: "
				  "not decoded, protect nothing).\n# TYPE gpufleet_pdb_events_total counter\n"
				  "gpufleet_pdb_events_total %llu\ngpufleet_pdb_events_total{result=\"refused\"} %llu\n",
			       (unsigned long long)d->pdb_events, (unsigned long long)d->pdb_decode_errors);
	gf_costrec_render(d->live, o); /* the allocation record for `gpufleet cost` */
	gf_obuf_printf(o, "# HELP gpufleet_leader 1 if this replica leads (binds), 0 if a standby; 1 without leader election.\n"
			  "# TYPE gpufleet_leader gauge\ngpufleet_leader %d\n"
			  "# HELP gpufleet_leader_takeovers_total Terms begun as leader (bound pods read from the API server).\n"
			  "# TYPE gpufleet_leader_takeovers_total counter\ngpufleet_leader_takeovers_total %llu\n"
			  "# HELP gpufleet_leader_stepdowns_total Times this replica found its Lease rewritten by "
			  "someone else and stepped down for a lease duration.\n"
			  "# TYPE gpufleet_leader_stepdowns_total counter\ngpufleet_leader_stepdowns_total %lu\n",
		       gf_leader_leading(d->leader) ? 1 : 0, (unsigned long long)d->takeovers,
		       gf_leader_stepdowns(d->leader));
	if (d->gangs)
		gf_obuf_printf(o, "# HELP gpufleet_pod_groups PodGroups known, of both APIs (read only; by API: gpufleet_gangs).\n"
				  "# TYPE gpufleet_pod_groups gauge\ngpufleet_pod_groups %zu\n"
				  "# HELP gpufleet_pod_group_events_total PodGroup objects received (errors: undecodable).\n"
				  "# TYPE gpufleet_pod_group_events_total counter\ngpufleet_pod_group_events_total %llu\n"
				  "gpufleet_pod_group_decode_errors_total %llu\n",
			       gf_gangs_count(d->gangs), (unsigned long long)d->group_events,
			       (unsigned long long)d->group_decode_errors);
	if (d->gangs)
		gf_gangs_render(d->gangs, o, 1000);
	pthread_mutex_unlock(&d->mu);
}
