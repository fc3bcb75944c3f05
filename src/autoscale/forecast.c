/*
 * autoscale/forecast.c - seasonal-by-day forecast with a level correction
 * (see forecast.h for the formula).
 *
 * Why this shape: GPU serving demand repeats daily (the GenAI request trace's
 * hourly arrivals correlate 0.69 at a 24 h lag), so yesterday and the days
 * before at the same minute say most of what tomorrow's minute holds; the
 * recent level says whether today runs above or below them (growth, a
 * holiday).  Taking each past day's max within +-spread instead of its point
 * value makes the forecast an upper envelope: a replica that is ready a few
 * minutes early costs little, one that is late costs the SLO.
 *
 * Every loop is bounded by the parameters, not by the history's length.
 */
#include "autoscale/forecast.h"

#include <stdbool.h>

struct gf_forecast_params gf_forecast_params_default(void)
{
	struct gf_forecast_params p = {
		.step_s = 60, .season_s = 86400, .days = 7, .spread_s = 900, .recent_s = 1800,
		.peak_s = 1800, .upper = 0,
	};
	return p;
}

static double mean(const double *x, size_t from, size_t to)
{
	double s = 0;

	for (size_t i = from; i < to; i++)
		s += x[i];
	return to > from ? s / (double)(to - from) : 0;
}

/* Max of x[c - s .. c + s] clipped to [0, n); c may lie anywhere. */
static double window_max(const double *x, size_t n, int64_t c, int64_t s)
{
	int64_t lo = c - s < 0 ? 0 : c - s, hi = c + s >= (int64_t)n ? (int64_t)n - 1 : c + s;
	double m = 0;

	for (int64_t i = lo; i <= hi; i++)
		if (x[i] > m)
			m = x[i];
	return m;
}

/* Mean (or max, upper) over the past days of the value at index i (spread 0) or of each day's window max. */
static double seasonal(const double *x, size_t n, int64_t i, int64_t S, int64_t K, int64_t s, bool upper)
{
	double sum = 0;
	int64_t used = 0;

	for (int64_t k = 1; k <= K; k++) {
		int64_t c = i - k * S;

		if (c < 0)
			break;
		if (c >= (int64_t)n)
			continue;
		double v = s ? window_max(x, n, c, s) : x[c];

		if (upper)
			sum = v > sum ? v : sum;
		else
			sum += v;
		used++;
	}
	return used ? (upper ? sum : sum / (double)used) : 0;
}

static double trend_peak(const double *x, size_t n, int64_t R, int64_t h1)
{
	int64_t half = R / 2 ? R / 2 : 1;

	if ((int64_t)n < 2 * half)
		return mean(x, n > (size_t)half ? n - (size_t)half : 0, n);
	double level = mean(x, n - (size_t)half, n);
	double before = mean(x, n - 2 * (size_t)half, n - (size_t)half);
	double slope = (level - before) / (double)half;	/* per step */

	if (slope < 0)
		slope = 0;
	/* level is the mean of the last half: centred (half - 1) / 2 steps before x[n-1] */
	return level + slope * ((double)h1 + (double)(half - 1) / 2);
}

double gf_forecast_peak(const double *x, size_t n, const struct gf_forecast_params *p,
			int32_t horizon_s, int32_t width_s)
{
	int64_t step = p->step_s > 0 ? p->step_s : 60;
	int64_t S = p->season_s / step, R = p->recent_s / step, s = p->spread_s / step;
	int64_t h0 = (horizon_s + step - 1) / step, h1 = (horizon_s + width_s + step - 1) / step;
	double best = 0;

	if (n == 0)
		return 0;
	if (h0 < 1)
		h0 = 1;
	if (h1 < h0)
		h1 = h0;
	if (R < 1)
		R = 1;
	if (p->peak_s > 0) {
		size_t P = (size_t)(p->peak_s / step);

		best = window_max(x, n, (int64_t)n - 1 - (int64_t)P / 2, (int64_t)P / 2);
	}
	if (S < 1 || (int64_t)n < S + R) {
		double f = trend_peak(x, n, R, h1);
		best = f > best ? f : best;
		return best > 0 ? best : 0;
	}
	int64_t K = (int64_t)n / S < p->days ? (int64_t)n / S : p->days;
	double actual = 0, base = 0;

	if (K < 1)
		K = 1;
	for (int64_t i = (int64_t)n - R; i < (int64_t)n; i++) {
		actual += x[i];
		base += seasonal(x, n, i, S, K, 0, false);
	}
	double delta = (actual - base) / (double)R;

	for (int64_t h = h0; h <= h1; h++) {
		double f = seasonal(x, n, (int64_t)n - 1 + h, S, K, s, p->upper) + delta;

		if (f > best)
			best = f;
	}
	return best > 0 ? best : 0;
}
