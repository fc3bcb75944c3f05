/*
 * metricsapi/history.h - the forecast metrics' memory: per answered series a
 * bounded history of minute means, kept in process, and the forecast from it
 * (autoscale/forecast.h).
 *
 * `<metric>_forecast` answers max(current value, forecast peak over [now +
 * horizon, now + horizon + 60 s]) where the history is what this server
 * itself answered for the same namespace, metric, selector and item: the
 * HPA asks every 15 s, so each minute gets about four values (their mean is
 * stored; minutes nobody asked carry the last mean forward).  The history
 * is in memory only: after a restart the forecast starts cold (no season:
 * trend and peak hold only, never below the current value) and learns the
 * day again; the answer's label forecast_history_min says how much it holds.
 *
 * Bounds: GF_MA_HISTORY_KEYS series (the least recently asked one is
 * forgotten for a new one), each `minutes` doubles (8 days by default:
 * 90 KiB; 256 series 23 MiB at most).  Thread-safe (one mutex).
 */
#ifndef GF_METRICSAPI_HISTORY_H
#define GF_METRICSAPI_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define GF_MA_HISTORY_KEYS 256
#define GF_MA_HISTORY_DEFAULT_MIN (8 * 1440)
#define GF_MA_FORECAST_SUFFIX "_forecast"

typedef struct gf_ma_history gf_ma_history;

/* minutes per series: 60..(60 x 1440); GF_INVAL otherwise, GF_NOMEM. */
gf_err gf_ma_history_create(int32_t minutes, gf_ma_history **out);
void gf_ma_history_destroy(gf_ma_history *h);

/*
 * Record value for key at now (Unix seconds) and return in *out the forecast
 * metric: max(value, forecast at now + horizon_s); *held = whole minutes of
 * history behind it.  GF_NOMEM (nothing recorded, *out = value).
 */
gf_err gf_ma_history_forecast(gf_ma_history *h, const char *key, int64_t now, double value,
			      int32_t horizon_s, double *out, size_t *held);

#endif /* GF_METRICSAPI_HISTORY_H */
