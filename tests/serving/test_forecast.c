/*
 * tests/serving/test_forecast.c - the forecaster on synthetic series with
 * known answers: a repeating day is forecast exactly, a shifted day by its
 * shift, a ramp without a day of history by its line, the peak hold, and the
 * per-call cost does not depend on the history's length.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "autoscale/forecast.h"

#define DAY 1440 /* minutes */

/* The daily shape at minute m: a smooth day/night wave, 2 at night, 10 at the peak. */
static double shape(size_t m)
{
	return 6.0 - 4.0 * cos(2.0 * 3.14159265358979323846 * (double)(m % DAY) / DAY);
}

static struct gf_forecast_params plain(void)
{
	struct gf_forecast_params p = gf_forecast_params_default();

	p.spread_s = 0;
	p.peak_s = 0;
	return p;
}

static void repeating_day_is_forecast_exactly(void **state)
{
	size_t n = 7 * DAY + 333;
	double *x = malloc(n * sizeof(*x));
	struct gf_forecast_params p = plain();

	(void)state;
	assert_non_null(x);
	for (size_t i = 0; i < n; i++)
		x[i] = shape(i);
	for (int h = 1; h <= 600; h += 37) {
		/* width 0: the value at minute n - 1 + h */
		double f = gf_forecast_peak(x, n, &p, h * 60, 0);
		double want = shape(n - 1 + (size_t)h);

		if (fabs(f - want) > 1e-9)
			fail_msg("h=%d: forecast %.12f, expected %.12f", h, f, want);
	}
	free(x);
}

static void todays_shift_is_added(void **state)
{
	size_t n = 3 * DAY + 600;
	double *x = malloc(n * sizeof(*x));
	struct gf_forecast_params p = plain();

	(void)state;
	assert_non_null(x);
	/* three plain days, then today runs 1.5 above them */
	for (size_t i = 0; i < n; i++)
		x[i] = shape(i) + (i >= 3 * DAY ? 1.5 : 0);
	double f = gf_forecast_peak(x, n, &p, 600, 0);
	double want = shape(n - 1 + 10) + 1.5;
	assert_true(fabs(f - want) < 1e-9);
	free(x);
}

static void spread_takes_each_days_max(void **state)
{
	size_t n = 2 * DAY + 100;
	double *x = calloc(n, sizeof(*x));
	struct gf_forecast_params p = plain();

	(void)state;
	assert_non_null(x);
	/* a spike of 8 once a day at minute 200; flat 0 otherwise; forecast for minute 195 */
	x[200] = 8;
	x[DAY + 200] = 8;
	p.spread_s = 0;
	/* h chosen so the target index n - 1 + h lands on minute 195 of day 2 */
	int h = (int)(2 * DAY + 195 - (n - 1));
	assert_true(gf_forecast_peak(x, n, &p, h * 60, 0) < 1e-9);
	p.spread_s = 300; /* +-5 minutes reaches the spike */
	assert_true(fabs(gf_forecast_peak(x, n, &p, h * 60, 0) - 8.0) < 1e-9);
	free(x);
}

static void ramp_without_a_day_follows_its_line(void **state)
{
	double x[600];
	struct gf_forecast_params p = plain();

	(void)state;
	for (size_t i = 0; i < 600; i++)
		x[i] = 1.0 + 0.01 * (double)i;
	/* value at index 599 + 10 */
	assert_true(fabs(gf_forecast_peak(x, 600, &p, 600, 0) - (1.0 + 0.01 * 609)) < 1e-9);
	/* a falling series is not extrapolated down: the level of the last 15 minutes */
	for (size_t i = 0; i < 600; i++)
		x[i] = 10.0 - 0.01 * (double)i;
	double level = 0;
	for (size_t i = 585; i < 600; i++)
		level += x[i] / 15;
	assert_true(fabs(gf_forecast_peak(x, 600, &p, 600, 0) - level) < 1e-9);
}

static void peak_hold_and_floor(void **state)
{
	double x[120] = { 0 };
	struct gf_forecast_params p = plain();

	(void)state;
	x[100] = 5; /* 19 minutes ago */
	p.peak_s = 1800;
	assert_true(fabs(gf_forecast_peak(x, 120, &p, 600, 0) - 5.0) < 1e-9);
	p.peak_s = 600; /* 10 minutes: the spike is out of reach */
	assert_true(gf_forecast_peak(x, 120, &p, 600, 0) < 5.0);
	assert_true(gf_forecast_peak(x, 0, &p, 600, 0) == 0);
}

static void window_takes_the_peak_over_the_width(void **state)
{
	size_t n = 7 * DAY;
	double *x = malloc(n * sizeof(*x));
	struct gf_forecast_params p = plain();

	(void)state;
	assert_non_null(x);
	for (size_t i = 0; i < n; i++)
		x[i] = shape(i);
	/* from midnight, over the next 24 h the peak is the day's max, 10 at noon */
	assert_true(fabs(gf_forecast_peak(x, n, &p, 60, 86400) - 10.0) < 1e-9);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(repeating_day_is_forecast_exactly),
		cmocka_unit_test(todays_shift_is_added),
		cmocka_unit_test(spread_takes_each_days_max),
		cmocka_unit_test(ramp_without_a_day_follows_its_line),
		cmocka_unit_test(peak_hold_and_floor),
		cmocka_unit_test(window_takes_the_peak_over_the_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
