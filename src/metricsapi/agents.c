/*
 * metricsapi/agents.c - scrape the agents, keep their GPU series, answer
 * queries by combining the matching GPUs.
 *
 * Data: per agent one immutable "node set" (series array + string arena,
 * labels stored as arena offsets, NONE = absent).  Ingest parses a body
 * into a new set outside the lock and swaps it in under the lock; queries
 * scan the sets under the lock.  Only the series the catalog reads are
 * kept (a family index per series).
 *
 * Query: a series matches when its family is the metric's, it is fresh,
 * its namespace is the request namespace (when the query has one), it
 * satisfies every series requirement of the selector and its pod is one of
 * the workload's pods (when the selector named pod labels).  Matches are
 * sorted by GPU identity (node, UUID, MIG instance) and duplicates (one
 * series per pod on a shared GPU) collapse to their max; the metric's
 * combination (avg, sum, max, min, count) runs over the distinct GPUs.
 * O(S + M log M) for S stored series and M matches.
 */
#include "core/sort.h"
#include "metricsapi/agents.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/obuf.h"
#include "metricsapi/promtext.h"

#define NONE UINT32_MAX
#define MAX_SERIES_PER_AGENT 200000u
#define ARENA_CAP (32u << 20)
#define BODY_CAP (32u << 20)
#define MAX_FAMILIES 64
#define MAX_DNS_AGENTS 4096

enum { L_GPU_INDEX, L_UUID, L_MODEL_LV, L_NODE, L_NS, L_POD, L_CONTAINER, L_MIG, NL };

struct series {
	unsigned fam;
	double v;
	uint32_t lab[NL];
};

struct nodeset {
	struct series *v;
	size_t n, alloc;
	struct gf_obuf arena;
};

struct agent {
	char *url;
	struct nodeset *set; /* NULL until the first good scrape */
	int64_t last_ok;
	bool failing;
	char last_err[256];
	/* scraper only */
	CURL *h;
	struct gf_obuf body;
};

struct gf_ma_agents {
	struct gf_ma_agents_config cfg;
	struct agent *agents; /* replaced (under mu) only by the scraper thread */
	size_t n;
	size_t nstatic;       /* the first nstatic agents are the configured URLs */
	char *dns_name;
	const char *fams[MAX_FAMILIES];
	size_t nfams;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, ready, thread_started;
	pthread_t thread;
};

static void nodeset_free(struct nodeset *s)
{
	if (!s)
		return;
	free(s->v);
	gf_obuf_release(&s->arena);
	free(s);
}

static const char *lab(const struct nodeset *s, const struct series *r, int l)
{
	return r->lab[l] == NONE ? NULL : s->arena.data + r->lab[l];
}

/* ---- ingest -------------------------------------------------------------------- */

struct build {
	gf_ma_agents *a;
	struct nodeset *s;
};

static uint32_t intern(struct nodeset *s, const char *v)
{
	if (!v)
		return NONE;
	uint32_t off = (uint32_t)s->arena.len;
	gf_obuf_append(&s->arena, v, strlen(v) + 1);
	return gf_obuf_error(&s->arena) ? NONE : off;
}

/* The Kubernetes label-value form of a model name (same rule as the
 * agent's node labels): runs of other characters become one '-', trimmed
 * to alphanumeric ends, at most 63 bytes. */
static void label_value(char out[64], const char *in)
{
	size_t k = 0;
	bool dash = false;
	for (; *in && k < 63; in++) {
		unsigned char ch = (unsigned char)*in;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
		if (ok) {
			out[k++] = (char)ch;
			dash = false;
		} else if (!dash && k) {
			out[k++] = '-';
			dash = true;
		}
	}
#define ALNUM(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9'))
	while (k && !ALNUM(out[k - 1]))
		k--;
	size_t st = 0;
	while (st < k && !ALNUM(out[st]))
		st++;
#undef ALNUM
	memmove(out, out + st, k - st);
	out[k - st] = '\0';
}

static gf_err on_sample(void *ud, const char *name, const struct gf_prom_label *labels, size_t nl,
			double v)
{
	struct build *b = ud;
	size_t fam = 0;
	while (fam < b->a->nfams && strcmp(b->a->fams[fam], name))
		fam++;
	if (fam == b->a->nfams)
		return GF_OK;
	struct nodeset *s = b->s;
	if (s->n == s->alloc) {
		if (s->n >= MAX_SERIES_PER_AGENT)
			return GF_TOOBIG;
		size_t na = s->alloc ? s->alloc * 2 : 256;
		struct series *nv = realloc(s->v, na * sizeof(*nv));
		if (!nv)
			return GF_NOMEM;
		s->v = nv;
		s->alloc = na;
	}
	const char *raw[NL] = { 0 };
	const char *model = NULL;
	for (size_t i = 0; i < nl; i++) {
		const char *ln = labels[i].name, *lv = labels[i].value;
		if (!strcmp(ln, "gpu"))
			raw[L_GPU_INDEX] = lv;
		else if (!strcmp(ln, "UUID") || !strcmp(ln, "uuid"))
			raw[L_UUID] = lv;
		else if (!strcmp(ln, "modelName"))
			model = lv;
		else if (!strcmp(ln, "hostname") || (!strcmp(ln, "Hostname") && !raw[L_NODE]))
			raw[L_NODE] = lv;
		else if (!strcmp(ln, "namespace") || !strcmp(ln, "pod_namespace"))
			raw[L_NS] = lv;
		else if (!strcmp(ln, "pod") || !strcmp(ln, "pod_name"))
			raw[L_POD] = lv;
		else if (!strcmp(ln, "container") || !strcmp(ln, "container_name"))
			raw[L_CONTAINER] = lv;
		else if (!strcmp(ln, "GPU_I_ID"))
			raw[L_MIG] = lv;
	}
	/* Old exporters emit pod labels as "" for unassigned GPUs: absent. */
	for (int l = L_NS; l <= L_CONTAINER; l++)
		if (raw[l] && !raw[l][0])
			raw[l] = NULL;
	char mlv[64];
	if (model) {
		label_value(mlv, model);
		raw[L_MODEL_LV] = mlv;
	}
	struct series *r = &s->v[s->n];
	r->fam = (unsigned)fam;
	r->v = v;
	for (int l = 0; l < NL; l++)
		r->lab[l] = intern(s, raw[l]);
	if (gf_obuf_error(&s->arena))
		return gf_obuf_error(&s->arena);
	s->n++;
	return GF_OK;
}

gf_err gf_ma_agents_ingest(gf_ma_agents *a, size_t idx, const char *text, size_t len, int64_t now,
			   char *err, size_t errlen)
{
	if (idx >= a->n)
		return GF_INVAL;
	struct nodeset *s = calloc(1, sizeof(*s));
	if (!s)
		return GF_NOMEM;
	gf_obuf_init(&s->arena, ARENA_CAP);
	struct build b = { a, s };
	gf_err e = gf_promtext_parse(text, len, on_sample, &b, err, errlen);
	if (e == GF_TOOBIG && errlen && !err[0])
		snprintf(err, errlen, "more than %u series or %u bytes of labels",
			 MAX_SERIES_PER_AGENT, ARENA_CAP);
	pthread_mutex_lock(&a->mu);
	struct agent *ag = &a->agents[idx];
	if (e) {
		ag->failing = true;
		snprintf(ag->last_err, sizeof(ag->last_err), "%s", errlen ? err : gf_strerror(e));
		nodeset_free(s);
		s = NULL;
	} else {
		struct nodeset *old = ag->set;
		ag->set = s;
		ag->last_ok = now;
		ag->failing = false;
		ag->last_err[0] = '\0';
		s = old;
	}
	a->ready = true;
	pthread_mutex_unlock(&a->mu);
	nodeset_free(s);
	return e;
}

/* ---- query --------------------------------------------------------------------- */

struct match {
	const struct nodeset *s;
	const struct series *r;
};

static int cmp_opt(const char *x, const char *y)
{
	if (!x || !y)
		return (x != NULL) - (y != NULL);
	return strcmp(x, y);
}

static int cmp_gpu(const void *pa, const void *pb)
{
	const struct match *a = pa, *b = pb;
	static const int order[] = { L_NODE, L_UUID, L_GPU_INDEX, L_MIG };
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int c = cmp_opt(lab(a->s, a->r, order[i]), lab(b->s, b->r, order[i]));
		if (c)
			return c;
	}
	return 0;
}

struct lookup_ctx {
	const struct nodeset *s;
	const struct series *r;
};

static const char *lookup(void *ud, const char *key)
{
	struct lookup_ctx *c = ud;
	switch (gf_ma_key_of(key)) {
	case GF_MA_K_GPU: return lab(c->s, c->r, L_MODEL_LV);
	case GF_MA_K_GPU_INDEX: return lab(c->s, c->r, L_GPU_INDEX);
	case GF_MA_K_UUID: return lab(c->s, c->r, L_UUID);
	case GF_MA_K_NODE: return lab(c->s, c->r, L_NODE);
	case GF_MA_K_NAMESPACE: return lab(c->s, c->r, L_NS);
	case GF_MA_K_POD: return lab(c->s, c->r, L_POD);
	case GF_MA_K_CONTAINER: return lab(c->s, c->r, L_CONTAINER);
	}
	return NULL;
}

gf_err gf_ma_agents_query(gf_ma_agents *a, const struct gf_ma_query *q, int64_t now,
			  struct gf_ma_result *out, char *err, size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	size_t fam = 0;
	const char *want = q->metric->series;
	while (want && fam < a->nfams && strcmp(a->fams[fam], want))
		fam++;
	if (!want || fam == a->nfams) {
		if (errlen)
			snprintf(err, errlen, "metric %s has no agents series", q->metric->name);
		return GF_NOENT;
	}
	struct match *m = NULL;
	size_t nm = 0, am = 0;
	gf_err e = GF_OK;
	int64_t oldest = INT64_MAX;
	size_t fresh = 0;
	pthread_mutex_lock(&a->mu);
	if (!a->ready) {
		pthread_mutex_unlock(&a->mu);
		if (errlen)
			snprintf(err, errlen, "no scrape of the agents has finished yet");
		return GF_UNAVAILABLE;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct agent *ag = &a->agents[i];
		const struct nodeset *s = ag->set;
		if (!s || now - ag->last_ok > (int64_t)(a->cfg.stale_ms / 1000))
			continue;
		fresh++;
		bool used = false;
		for (size_t j = 0; j < s->n; j++) {
			const struct series *r = &s->v[j];
			if (r->fam != fam)
				continue;
			if (q->ns && cmp_opt(lab(s, r, L_NS), q->ns))
				continue;
			if (!gf_ma_query_pod_ok(q, lab(s, r, L_POD)))
				continue;
			struct lookup_ctx lc = { s, r };
			if (q->series_sel && !gf_selector_match(q->series_sel, lookup, &lc))
				continue;
			if (nm == am) {
				size_t na = am ? am * 2 : 64;
				struct match *nmv = realloc(m, na * sizeof(*nmv));
				if (!nmv) {
					e = GF_NOMEM;
					goto unlock;
				}
				m = nmv;
				am = na;
			}
			m[nm++] = (struct match){ s, r };
			used = true;
		}
		if (used && ag->last_ok < oldest)
			oldest = ag->last_ok;
	}
	if (!fresh) {
		e = GF_IO;
		if (errlen)
			snprintf(err, errlen, "no agent answered within %u ms (first: %s: %s)",
				 a->cfg.stale_ms, a->n ? a->agents[0].url : "-",
				 a->n && a->agents[0].last_err[0] ? a->agents[0].last_err : "no data");
		goto unlock;
	}
	if (!nm)
		goto unlock;
	gf_qsort(m, nm, sizeof(*m), cmp_gpu);
	double acc = 0;
	size_t ngpu = 0;
	for (size_t i = 0; i < nm;) {
		double v = m[i].r->v;
		size_t j = i + 1;
		for (; j < nm && !cmp_gpu(&m[i], &m[j]); j++)
			if (m[j].r->v > v)
				v = m[j].r->v;
		switch (q->metric->agg) {
		case GF_MA_AVG:
		case GF_MA_SUM: acc += v; break;
		case GF_MA_MAX: acc = ngpu ? fmax(acc, v) : v; break;
		case GF_MA_MIN: acc = ngpu ? fmin(acc, v) : v; break;
		case GF_MA_COUNT: acc += 1; break;
		}
		ngpu++;
		i = j;
	}
	if (q->metric->agg == GF_MA_AVG)
		acc /= (double)ngpu;
	cJSON *labels = cJSON_CreateObject();
	if (!labels) {
		e = GF_NOMEM;
		goto unlock;
	}
	static const struct { const char *name; int l; } common[] = {
		{ "gpu", L_MODEL_LV }, { "node", L_NODE }, { "namespace", L_NS },
		{ "pod", L_POD }, { "container", L_CONTAINER },
	};
	for (size_t c = 0; c < sizeof(common) / sizeof(common[0]); c++) {
		const char *v0 = lab(m[0].s, m[0].r, common[c].l);
		bool same = v0 != NULL;
		for (size_t i = 1; same && i < nm; i++)
			same = !cmp_opt(v0, lab(m[i].s, m[i].r, common[c].l));
		if (same)
			cJSON_AddStringToObject(labels, common[c].name, v0);
	}
	e = gf_ma_result_add(out, labels, acc, oldest);
unlock:
	pthread_mutex_unlock(&a->mu);
	free(m);
	return e;
}

bool gf_ma_agents_ready(gf_ma_agents *a)
{
	pthread_mutex_lock(&a->mu);
	bool r = a->ready;
	pthread_mutex_unlock(&a->mu);
	return r;
}

size_t gf_ma_agents_failing(gf_ma_agents *a, size_t *nagents)
{
	size_t f = 0;
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < a->n; i++)
		f += a->agents[i].failing;
	pthread_mutex_unlock(&a->mu);
	if (nagents)
		*nagents = a->n;
	return f;
}

/* ---- scraper ------------------------------------------------------------------- */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct gf_obuf *b = ud;
	return gf_obuf_append(b, p, sz * n) ? 0 : sz * n;
}

static bool stopping(gf_ma_agents *a)
{
	pthread_mutex_lock(&a->mu);
	bool s = a->stop;
	pthread_mutex_unlock(&a->mu);
	return s;
}

static void mark_failed(gf_ma_agents *a, size_t i, const char *msg)
{
	pthread_mutex_lock(&a->mu);
	if (!a->agents[i].failing)
		fprintf(stderr, "gpufleet metrics-api: agent %s: %s\n", a->agents[i].url, msg);
	a->agents[i].failing = true;
	snprintf(a->agents[i].last_err, sizeof(a->agents[i].last_err), "%s", msg);
	a->ready = true;
	pthread_mutex_unlock(&a->mu);
}

static gf_err agent_init(struct agent *ag, const char *url, bool with_handle)
{
	memset(ag, 0, sizeof(*ag));
	gf_obuf_init(&ag->body, BODY_CAP);
	if (!(ag->url = strdup(url)))
		return GF_NOMEM;
	if (!with_handle)
		return GF_OK;
	if (!(ag->h = curl_easy_init()))
		return GF_NOMEM;
	curl_easy_setopt(ag->h, CURLOPT_URL, ag->url);
	curl_easy_setopt(ag->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(ag->h, CURLOPT_WRITEDATA, &ag->body);
	curl_easy_setopt(ag->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(ag->h, CURLOPT_ACCEPT_ENCODING, "");
	return GF_OK;
}

static void agent_release(struct agent *ag)
{
	free(ag->url);
	nodeset_free(ag->set);
	if (ag->h)
		curl_easy_cleanup(ag->h);
	gf_obuf_release(&ag->body);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Resolve dns_name; when the set of addresses changed, rebuild the agent
 * list (static URLs first, then one agent per address, keeping the state
 * of the agents that stay).  Scraper thread only. */
static void refresh_dns(gf_ma_agents *a)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
	int r = getaddrinfo(a->dns_name, NULL, &hints, &res);
	if (r) {
		fprintf(stderr, "gpufleet metrics-api: resolving %s: %s (keeping %zu agents)\n",
			a->dns_name, gai_strerror(r), a->n - a->nstatic);
		return;
	}
	char *urls[MAX_DNS_AGENTS];
	size_t nu = 0;
	for (struct addrinfo *p = res; p && nu < MAX_DNS_AGENTS; p = p->ai_next) {
		char ip[INET6_ADDRSTRLEN], url[INET6_ADDRSTRLEN + 32];
		const void *addr = p->ai_family == AF_INET
					   ? (const void *)&((struct sockaddr_in *)p->ai_addr)->sin_addr
					   : (const void *)&((struct sockaddr_in6 *)p->ai_addr)->sin6_addr;
		if ((p->ai_family != AF_INET && p->ai_family != AF_INET6) ||
		    !inet_ntop(p->ai_family, addr, ip, sizeof(ip)))
			continue;
		snprintf(url, sizeof(url), p->ai_family == AF_INET ? "http://%s:%u/metrics"
								     : "http://[%s]:%u/metrics",
			 ip, a->cfg.dns_port);
		if (!(urls[nu] = strdup(url)))
			break;
		nu++;
	}
	freeaddrinfo(res);
	gf_qsort(urls, nu, sizeof(char *), cmp_str);
	size_t k = 0;
	for (size_t i = 0; i < nu; i++) { /* dedupe */
		if (k && !strcmp(urls[k - 1], urls[i])) {
			free(urls[i]);
			continue;
		}
		urls[k++] = urls[i];
	}
	nu = k;
	bool same = a->n - a->nstatic == nu;
	for (size_t i = 0; same && i < nu; i++)
		same = !strcmp(a->agents[a->nstatic + i].url, urls[i]);
	if (same)
		goto done;
	struct agent *nv = calloc(a->nstatic + nu ? a->nstatic + nu : 1, sizeof(*nv));
	if (!nv)
		goto done;
	bool *kept = calloc(a->n ? a->n : 1, sizeof(bool));
	if (!kept) {
		free(nv);
		goto done;
	}
	size_t nn = 0;
	for (; nn < a->nstatic; nn++) {
		nv[nn] = a->agents[nn];
		kept[nn] = true;
		curl_easy_setopt(nv[nn].h, CURLOPT_WRITEDATA, &nv[nn].body);
	}
	for (size_t i = 0; i < nu; i++) {
		size_t j = a->nstatic;
		while (j < a->n && strcmp(a->agents[j].url, urls[i]))
			j++;
		if (j < a->n) {
			nv[nn] = a->agents[j];
			kept[j] = true;
			/* the write target moved with the struct */
			curl_easy_setopt(nv[nn].h, CURLOPT_WRITEDATA, &nv[nn].body);
		} else if (agent_init(&nv[nn], urls[i], true)) {
			agent_release(&nv[nn]);
			continue;
		}
		nn++;
	}
	fprintf(stderr, "gpufleet metrics-api: %s resolves to %zu agents\n", a->dns_name, nu);
	pthread_mutex_lock(&a->mu);
	struct agent *old = a->agents;
	size_t oldn = a->n;
	a->agents = nv;
	a->n = nn;
	pthread_mutex_unlock(&a->mu);
	for (size_t j = 0; j < oldn; j++)
		if (!kept[j])
			agent_release(&old[j]);
	free(old);
	free(kept);
	/* the easy handles of moved agents point at the old array's bodies: fixed above */
done:
	for (size_t i = 0; i < nu; i++)
		free(urls[i]);
}

static void scrape_round(gf_ma_agents *a, CURLM *mh)
{
	if (a->dns_name)
		refresh_dns(a);
	for (size_t i = 0; i < a->n; i++) {
		struct agent *ag = &a->agents[i];
		gf_obuf_reset(&ag->body);
		curl_easy_setopt(ag->h, CURLOPT_TIMEOUT_MS, (long)a->cfg.timeout_ms);
		curl_multi_add_handle(mh, ag->h);
	}
	int running = 1;
	while (running && !stopping(a)) {
		if (curl_multi_perform(mh, &running) != CURLM_OK)
			break;
		if (running)
			curl_multi_poll(mh, NULL, 0, 200, NULL);
	}
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(mh, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		size_t i = 0;
		while (i < a->n && a->agents[i].h != msg->easy_handle)
			i++;
		if (i == a->n)
			continue;
		struct agent *ag = &a->agents[i];
		long code = 0;
		curl_easy_getinfo(ag->h, CURLINFO_RESPONSE_CODE, &code);
		char err[256];
		if (msg->data.result != CURLE_OK) {
			mark_failed(a, i, curl_easy_strerror(msg->data.result));
		} else if (code != 200) {
			snprintf(err, sizeof(err), "HTTP status %ld", code);
			mark_failed(a, i, err);
		} else if (gf_ma_agents_ingest(a, i, ag->body.data ? ag->body.data : "", ag->body.len,
					       (int64_t)time(NULL), err, sizeof(err))) {
			mark_failed(a, i, err);
		}
	}
	for (size_t i = 0; i < a->n; i++)
		curl_multi_remove_handle(mh, a->agents[i].h);
}

static void *scraper(void *ud)
{
	gf_ma_agents *a = ud;
	CURLM *mh = curl_multi_init();
	if (!mh)
		return NULL;
	for (;;) {
		scrape_round(a, mh);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += a->cfg.interval_ms / 1000;
		ts.tv_nsec += (long)(a->cfg.interval_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&a->mu);
		while (!a->stop && pthread_cond_timedwait(&a->cv, &a->mu, &ts) == 0)
			;
		bool stop = a->stop;
		pthread_mutex_unlock(&a->mu);
		if (stop)
			break;
	}
	curl_multi_cleanup(mh);
	return NULL;
}

/* ---- lifecycle ----------------------------------------------------------------- */

gf_err gf_ma_agents_create(const struct gf_ma_agents_config *cfg, gf_ma_agents **out)
{
	*out = NULL;
	if (!cfg || (cfg->nurls && !cfg->urls))
		return GF_INVAL;
	gf_ma_agents *a = calloc(1, sizeof(*a));
	if (!a)
		return GF_NOMEM;
	a->cfg = *cfg;
	if (!a->cfg.interval_ms)
		a->cfg.interval_ms = 5000;
	if (!a->cfg.timeout_ms)
		a->cfg.timeout_ms = 3000;
	if (!a->cfg.stale_ms)
		a->cfg.stale_ms = a->cfg.interval_ms * 3 > 15000 ? a->cfg.interval_ms * 3 : 15000;
	size_t nc;
	const struct gf_ma_metric *cat = gf_ma_catalog(&nc);
	for (size_t i = 0; i < nc; i++) {
		bool dup = false;
		for (size_t j = 0; j < a->nfams && !dup; j++)
			dup = !strcmp(a->fams[j], cat[i].series);
		if (!dup && a->nfams < MAX_FAMILIES)
			a->fams[a->nfams++] = cat[i].series;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->agents = calloc(cfg->nurls ? cfg->nurls : 1, sizeof(*a->agents));
	if (!a->agents)
		goto nomem;
	for (size_t i = 0; i < cfg->nurls; i++) {
		a->n++;
		if (agent_init(&a->agents[i], cfg->urls[i], !cfg->no_thread))
			goto nomem;
	}
	a->nstatic = a->n;
	if (cfg->dns_name && !(a->dns_name = strdup(cfg->dns_name)))
		goto nomem;
	if (!a->cfg.dns_port)
		a->cfg.dns_port = 9400;
	a->cfg.dns_name = NULL;
	a->cfg.urls = NULL;
	if (!cfg->no_thread) {
		if (pthread_create(&a->thread, NULL, scraper, a)) {
			gf_ma_agents_destroy(a);
			return GF_NOMEM;
		}
		a->thread_started = true;
	}
	*out = a;
	return GF_OK;
nomem:
	gf_ma_agents_destroy(a);
	return GF_NOMEM;
}

void gf_ma_agents_destroy(gf_ma_agents *a)
{
	if (!a)
		return;
	if (a->thread_started) {
		pthread_mutex_lock(&a->mu);
		a->stop = true;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
	}
	for (size_t i = 0; a->agents && i < a->n; i++)
		agent_release(&a->agents[i]);
	free(a->agents);
	free(a->dns_name);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
}
