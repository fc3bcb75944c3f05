/*
 * autoscale/forecast.h - a demand forecaster for predictive scaling: seasonal
 * by day with a level correction, from an equally spaced history.
 *
 * Pure function of the history the caller keeps (no I/O, no clock, no
 * allocation): the replay passes a prefix of its minute series, the metrics
 * API its bounded ring copied out in time order.
 */
#ifndef GF_AUTOSCALE_FORECAST_H
#define GF_AUTOSCALE_FORECAST_H

#include <stddef.h>
#include <stdint.h>

struct gf_forecast_params {
	int32_t step_s;   /* spacing of the history (60: minute samples) */
	int32_t season_s; /* 86400: one day */
	int32_t days;     /* seasons averaged, newest first (7) */
	int32_t spread_s; /* each past day contributes its max within +-spread_s of the instant (300) */
	int32_t recent_s; /* window of the level correction and of the no-season trend (1800) */
	int32_t peak_s;   /* the forecast is at least the max of the last peak_s (0: off) */
	int32_t upper;    /* 1: each instant takes the max over the past days, not their mean */
};

/* days 7, spread 900 s, recent 1800 s, peak 1800 s, mean over days, minute steps, daily season
 * (chosen on the bundled request trace: docs/serving.md). */
struct gf_forecast_params gf_forecast_params_default(void);

/*
 * The forecast peak of the series over [now + horizon_s, now + horizon_s + width_s],
 * where x[0..n-1] are samples step_s apart and x[n-1] is the latest (the
 * interval ending at now).  Returns >= 0; 0 for an empty history.
 *
 * With at least one season plus recent_s of history:
 *   F(i) = mean over past days k = 1..K of max x[i - kS - s .. i - kS + s]
 *          + (mean of the last R samples - mean of their plain seasonal means)
 * (S = season, s = spread, R = recent, K = min(days, whole seasons held));
 * with upper, the max over the days instead of the mean.
 * With less (no day to learn from): level + trend from the last R samples
 * (Holt's linear form with the trend floored at 0 so a falling series is not
 * extrapolated below its level), level = mean of the last R/2, projected from
 * the level's centre to the end of the window.
 * Either way the result is at least the max of the last peak_s (a peak hold).
 *
 * Cost: O((width/step + 1) x K x (2 s/step + 1) + R/step x K) reads; with the
 * defaults and a 60 s width about 2,400 reads, whatever the history's length.
 */
double gf_forecast_peak(const double *x, size_t n, const struct gf_forecast_params *p,
			int32_t horizon_s, int32_t width_s);

#endif /* GF_AUTOSCALE_FORECAST_H */
