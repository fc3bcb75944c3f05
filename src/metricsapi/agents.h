/*
 * metricsapi/agents.h - the agents source: the gpufleet agents' (or
 * dcgm-exporter's) /metrics scraped directly and aggregated here, so a
 * cluster without Prometheus can autoscale on GPU metrics.
 *
 * A scraper thread GETs every agent URL in parallel (curl multi) every
 * interval_ms and keeps, per agent, the series the catalog reads (parsed,
 * with the labels the selector vocabulary needs).  A failed scrape keeps
 * the agent's previous series until they are stale_ms old; then that
 * agent's GPUs disappear from the answers.  Queries read the latest series
 * under a mutex: their cost does not depend on the agents' latency.
 *
 * Discovery: with dns_name set, every round first resolves it
 * (getaddrinfo; in a cluster the agents' headless Service, e.g.
 * gpufleet-agent.gpufleet-system.svc, has one address per agent pod) and
 * scrapes http://<address>:<dns_port>/metrics of each, besides the static
 * URLs.  An agent that disappears from DNS disappears from the answers; a
 * failed lookup keeps the previous list.
 *
 * Errors of gf_ma_agents_query: GF_UNAVAILABLE before the first scrape
 * round has finished (the server answers 503), GF_IO when no agent has
 * fresh series (500), GF_NOMEM.
 *
 * Thread-safety: every function except _create/_destroy may be called from
 * any thread.
 */
#ifndef GF_METRICSAPI_AGENTS_H
#define GF_METRICSAPI_AGENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "metricsapi/query.h"

typedef struct gf_ma_agents gf_ma_agents;

struct gf_ma_agents_config {
	const char *const *urls; /* agent /metrics URLs (copied) */
	size_t nurls;
	unsigned interval_ms;    /* scrape period (0 = 5000) */
	unsigned timeout_ms;     /* per scrape round (0 = 3000) */
	unsigned stale_ms;       /* drop an agent's series after this (0 = max(3 x interval, 15000)) */
	bool no_thread;          /* no scraper: the caller feeds gf_ma_agents_ingest (tests, bench) */
	const char *dns_name;    /* resolve every round into more agents (copied; NULL: none) */
	unsigned dns_port;       /* their port (0 = 9400) */
};

/* Start (the scraper thread runs until _destroy).  GF_INVAL, GF_NOMEM. */
gf_err gf_ma_agents_create(const struct gf_ma_agents_config *cfg, gf_ma_agents **out);

/* Stop the scraper and free.  NULL is a no-op. */
void gf_ma_agents_destroy(gf_ma_agents *a);

/* Replace agent idx's series with those of text (Prometheus text), scraped
 * at now (Unix seconds), and count one finished scrape round.  GF_INVAL (idx
 * out of range), GF_PARSE/GF_TOOBIG (err: "line N: ..."; the previous series
 * are kept), GF_NOMEM. */
gf_err gf_ma_agents_ingest(gf_ma_agents *a, size_t idx, const char *text, size_t len, int64_t now,
			   char *err, size_t errlen);

/* Answer q at time now: one item, the metric's combination over the distinct
 * GPUs that match (no item when none does); labels = the vocabulary labels
 * (gpu, node, namespace, pod, container) all matched GPUs share. */
gf_err gf_ma_agents_query(gf_ma_agents *a, const struct gf_ma_query *q, int64_t now,
			  struct gf_ma_result *out, char *err, size_t errlen);

/* Has a scrape round finished? */
bool gf_ma_agents_ready(gf_ma_agents *a);

/* Agents whose last scrape failed, and the number of agents. */
size_t gf_ma_agents_failing(gf_ma_agents *a, size_t *nagents);

#endif /* GF_METRICSAPI_AGENTS_H */
