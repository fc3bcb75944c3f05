/*
 * metricsapi/history.c - bounded per-series minute history for the forecast
 * metrics (see history.h).
 *
 * Each series is a ring of `cap` completed minute means plus the minute in
 * progress (sum and count).  A value for a later minute closes the one in
 * progress and fills the minutes between with its mean (at most cap of
 * them).  A forecast copies the ring oldest-first into one scratch buffer and
 * calls gf_forecast_peak: O(cap) copy plus the forecaster's bounded reads.
 * Series are found by linear search over at most GF_MA_HISTORY_KEYS keys
 * (strcmp), evicting the least recently used.
 */
#include "metricsapi/history.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale/forecast.h"

struct series {
	char *key;
	int64_t minute;   /* the minute in progress (Unix minutes) */
	double sum;
	int count;
	double *ring;     /* cap completed minutes */
	size_t head, n;   /* next write position, minutes held */
	uint64_t used;    /* LRU stamp */
};

struct gf_ma_history {
	pthread_mutex_t mu;
	size_t cap;
	uint64_t clock;
	double *scratch;
	struct series s[GF_MA_HISTORY_KEYS];
	size_t nseries;
};

gf_err gf_ma_history_create(int32_t minutes, gf_ma_history **out)
{
	*out = NULL;
	if (minutes < 60 || minutes > 60 * 1440)
		return GF_INVAL;
	gf_ma_history *h = calloc(1, sizeof(*h));
	if (!h)
		return GF_NOMEM;
	h->cap = (size_t)minutes;
	h->scratch = malloc(h->cap * sizeof(double));
	if (!h->scratch || pthread_mutex_init(&h->mu, NULL)) {
		free(h->scratch);
		free(h);
		return GF_NOMEM;
	}
	*out = h;
	return GF_OK;
}

void gf_ma_history_destroy(gf_ma_history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nseries; i++) {
		free(h->s[i].key);
		free(h->s[i].ring);
	}
	pthread_mutex_destroy(&h->mu);
	free(h->scratch);
	free(h);
}

static void push(struct series *s, size_t cap, double v)
{
	s->ring[s->head] = v;
	s->head = (s->head + 1) % cap;
	if (s->n < cap)
		s->n++;
}

static struct series *find(gf_ma_history *h, const char *key, int64_t minute)
{
	size_t lru = 0;

	for (size_t i = 0; i < h->nseries; i++) {
		if (!strcmp(h->s[i].key, key))
			return &h->s[i];
		if (h->s[i].used < h->s[lru].used)
			lru = i;
	}
	struct series fresh = { .minute = minute };
	if (!(fresh.key = strdup(key)) || !(fresh.ring = malloc(h->cap * sizeof(double)))) {
		free(fresh.key);
		return NULL;
	}
	struct series *s = h->nseries < GF_MA_HISTORY_KEYS ? &h->s[h->nseries++] : &h->s[lru];
	if (s->key) {
		free(s->key);
		free(s->ring);
	}
	*s = fresh;
	return s;
}

gf_err gf_ma_history_forecast(gf_ma_history *h, const char *key, int64_t now, double value,
			      int32_t horizon_s, double *out, size_t *held)
{
	int64_t minute = now / 60;
	struct gf_forecast_params p = gf_forecast_params_default();

	*out = value;
	*held = 0;
	if (!isfinite(value))
		return GF_OK;
	pthread_mutex_lock(&h->mu);
	struct series *s = find(h, key, minute);
	if (!s) {
		pthread_mutex_unlock(&h->mu);
		return GF_NOMEM;
	}
	s->used = ++h->clock;
	if (minute > s->minute) {
		double mean = s->count ? s->sum / s->count : value;
		int64_t gap = minute - s->minute;

		if (gap > (int64_t)h->cap)
			gap = (int64_t)h->cap;
		for (int64_t i = 0; i < gap; i++)
			push(s, h->cap, mean);
		s->minute = minute;
		s->sum = 0;
		s->count = 0;
	}
	s->sum += value;
	s->count++;
	for (size_t i = 0; i < s->n; i++)
		h->scratch[i] = s->ring[(s->head + h->cap - s->n + i) % h->cap];
	double f = gf_forecast_peak(h->scratch, s->n, &p, horizon_s, 60);
	*held = s->n;
	pthread_mutex_unlock(&h->mu);
	if (f > *out)
		*out = f;
	return GF_OK;
}
