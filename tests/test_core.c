/* tests/test_core.c - core/: error names and messages, the seeded generator, UTF-8 cuts, the CSV reader, gf_qsort,
 * FNV-1a, array growth, RFC 3339, the Kubernetes Status body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/csv.h"
#include "core/error.h"
#include "core/htmlrep.h"
#include "core/grow.h"
#include "core/hash.h"
#include "core/kstatus.h"
#include "core/obuf.h"
#include "core/rng.h"
#include "core/sort.h"
#include "core/text.h"
#include "core/time.h"
#include "core/zpack.h"

#include <stdlib.h>

static void test_error_names(void **state)
{
	(void)state;
	assert_string_equal(gf_err_name(GF_OK), "GF_OK");
	assert_string_equal(gf_err_name(GF_PARSE), "GF_PARSE");
	assert_string_equal(gf_strerror(GF_NOMEM), "out of memory");
	assert_string_equal(gf_err_name((gf_err)999), "GF_UNKNOWN");
	assert_string_equal(gf_strerror((gf_err)-1), "unknown error");
}

static void test_rng_deterministic(void **state)
{
	struct gf_rng a, b, c;

	(void)state;
	gf_rng_init(&a, 42);
	gf_rng_init(&b, 42);
	gf_rng_init(&c, 43);
	int differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = gf_rng_next(&a);
		assert_int_equal(x, gf_rng_next(&b));
		differ += x != gf_rng_next(&c);
	}
	assert_true(differ > 990);
}

static void test_rng_below_uniform(void **state)
{
	struct gf_rng r;
	int hist[7] = { 0 };

	(void)state;
	gf_rng_init(&r, 1);
	for (int i = 0; i < 70000; i++) {
		uint64_t v = gf_rng_below(&r, 7);
		assert_true(v < 7);
		hist[v]++;
	}
	for (int i = 0; i < 7; i++) {
		assert_in_range(hist[i], 9500, 10500);
	}
	assert_int_equal(gf_rng_below(&r, 1), 0);
	double d = gf_rng_double(&r);
	assert_true(d >= 0.0 && d < 1.0);
}

static void test_utf8_cut(void **state)
{
	const char *s = "ab\xC3\xA9" "c\xE2\x82\xAC" "d\xF0\x9F\x98\x80";	/* ab é c € d 😀 */
	size_t len = strlen(s);

	(void)state;
	assert_int_equal(gf_utf8_cut(s, len, 100), len);	/* short enough: all of it */
	assert_int_equal(gf_utf8_cut(s, len, 2), 2);		/* "ab" */
	assert_int_equal(gf_utf8_cut(s, len, 3), 2);		/* not half of é */
	assert_int_equal(gf_utf8_cut(s, len, 4), 4);		/* "abé" */
	assert_int_equal(gf_utf8_cut(s, len, 6), 5);		/* not the first byte of € */
	assert_int_equal(gf_utf8_cut(s, len, 7), 5);		/* nor two of its three */
	assert_int_equal(gf_utf8_cut(s, len, 8), 8);		/* "abéc€" */
	assert_int_equal(gf_utf8_cut(s, len, 12), 9);		/* not 3 bytes of the 4-byte 😀 */
	assert_int_equal(gf_utf8_cut(s, len, 0), 0);
	/* Not UTF-8 (a run of continuation bytes): cut the bytes where asked. */
	assert_int_equal(gf_utf8_cut("\x80\x80\x80\x80\x80\x80", 6, 5), 5);
	assert_int_equal(gf_utf8_bom_len("\xEF\xBB\xBFx", 4), 3);
	assert_int_equal(gf_utf8_bom_len("\xEF\xBB", 2), 0);
	assert_int_equal(gf_utf8_bom_len("sn,", 3), 0);
}

/* The CSV line reader: blank lines skipped but counted, \r\n, fields as slices, each error's line. */
static void test_csv_reader(void **state)
{
	const char *text = "a,b,,c\r\n\n\nx,,\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaé,z";
	struct gf_csv r;
	char msg[128], q[64];
	gf_err code = GF_OK;

	(void)state;
	gf_csv_init(&r, text, strlen(text), "f.csv", 100, msg, sizeof(msg));
	assert_int_equal(gf_csv_next(&r, &code), 1);
	assert_int_equal(r.lineno, 1);
	assert_int_equal(r.nfields, 4);
	assert_int_equal(r.field[2].len, 0);
	assert_int_equal(r.field[3].len, 1);
	assert_memory_equal(r.field[3].p, "c", 1);	/* the \r is not part of the field */
	assert_int_equal(gf_csv_find(&r, "c"), 3);
	assert_int_equal(gf_csv_find(&r, "d"), -1);
	assert_int_equal(gf_csv_next(&r, &code), 1);
	assert_int_equal(r.lineno, 4);			/* two blank lines counted */
	assert_int_equal(r.nfields, 3);
	assert_int_equal(gf_csv_next(&r, &code), 1);
	assert_string_equal(gf_csv_quote(&r.field[0], q, sizeof(q)),	/* cut before the é at byte 40 */
			    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"");
	assert_string_equal(gf_csv_quote(&r.field[1], q, sizeof(q)), "\"z\"");
	assert_int_equal(gf_csv_fail(&r, GF_PARSE, "column %d: bad", 2), GF_PARSE);
	assert_string_equal(msg, "f.csv:5: column 2: bad");
	assert_int_equal(gf_csv_next(&r, &code), 0);

	gf_csv_init(&r, "ok\n12345678901\n", 15, "g.csv", 10, msg, sizeof(msg));
	assert_int_equal(gf_csv_next(&r, &code), 1);
	assert_int_equal(gf_csv_next(&r, &code), -1);
	assert_int_equal(code, GF_TOOBIG);
	assert_string_equal(msg, "g.csv:2: line is 11 bytes long; the limit is 10");
	gf_csv_init(&r, "a\0b\n", 4, "h.csv", 10, msg, sizeof(msg));
	assert_int_equal(gf_csv_next(&r, &code), -1);
	assert_int_equal(code, GF_PARSE);
	assert_string_equal(msg, "h.csv:1: line contains a NUL byte");

	char many[2 * GF_CSV_MAX_FIELDS + 2];

	memset(many, ',', sizeof(many) - 1);
	many[sizeof(many) - 1] = '\0';
	gf_csv_init(&r, many, strlen(many), "m.csv", 1000, msg, sizeof(msg));
	assert_int_equal(gf_csv_next(&r, &code), -1);
	assert_string_equal(msg, "m.csv:1: more than 64 columns");
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* gf_qsort sorts as qsort, and takes an empty array as NULL (the sanitizer build aborts on qsort(NULL, 0)). */
static void test_qsort_empty(void **state)
{
	int v[] = { 5, -1, 3, 3, 0 }, one = 7;

	(void)state;
	gf_qsort(v, 5, sizeof(*v), cmp_int);
	assert_int_equal(v[0], -1);
	assert_int_equal(v[1], 0);
	assert_int_equal(v[2], 3);
	assert_int_equal(v[3], 3);
	assert_int_equal(v[4], 5);
	gf_qsort(&one, 1, sizeof(one), cmp_int);
	assert_int_equal(one, 7);
	gf_qsort(NULL, 0, sizeof(int), cmp_int);	/* no call to qsort: nothing to report */
}

/* Zero-run packing: lossless on mixed, all-zero, no-zero and long-run inputs; bad input refused. */
static void test_zpack_roundtrip(void **state)
{
	enum { N = 150000 };	/* runs longer than the 16-bit lengths */
	uint8_t *src = calloc(N, 1), *back = malloc(N), *packed;
	size_t len;
	struct gf_rng rng;

	(void)state;
	assert_non_null(src);
	assert_non_null(back);
	gf_rng_init(&rng, 7);
	for (int shape = 0; shape < 4; shape++) {
		for (size_t i = 0; i < N; i++) {
			uint8_t v = (uint8_t)(gf_rng_next(&rng) | 1);
			src[i] = shape == 0 ? 0 : shape == 1 ? v
				: shape == 2 ? (i % 1000 < 7 || i % 1000 > 990 ? v : 0) /* short and long zero runs */
				: (i > 70000 && i < 140000 ? v : 0);	/* one literal over 65535 */
		}
		assert_int_equal(gf_zpack(src, N, &packed, &len), GF_OK);
		if (shape == 0 || shape == 2)
			assert_true(len < N / 10);
		assert_int_equal(gf_zunpack(packed, len, back, N), GF_OK);
		assert_memory_equal(src, back, N);
		assert_int_equal(gf_zunpack(packed, len, back, N - 1), GF_PARSE); /* does not fit */
		if (len > 4)
			assert_int_equal(gf_zunpack(packed, len - 1, back, N), GF_PARSE); /* cut short */
		/* the head alone: its bytes, and not one byte past it */
		static const size_t heads[] = { 1, 7, 999, 1000, 65536, 70001, N };
		for (size_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
			memset(back, 0xee, N);
			assert_int_equal(gf_zunpack_head(packed, len, back, heads[h]), GF_OK);
			assert_memory_equal(src, back, heads[h]);
			if (heads[h] < N)
				assert_int_equal(back[heads[h]], 0xee);
		}
		free(packed);
	}
	free(src);
	free(back);
}

/*
 * The report charts: the y axis is zoomed to the data (two lines between 90
 * and 96 % get ticks 88-98, not 0-100), each line is named beside its end,
 * points carry hover titles, text is escaped, and the bytes are the same
 * every time.
 */
static void render_chart(struct gf_obuf *b)
{
	static const double x[] = { 0, 1, 2 }, ya[] = { 90, 93, 96 }, yb[] = { 91, 91.5, 92 };
	const struct gf_chart_line lines[] = {
		{ .label = "A<b>", .n = 3, .x = x, .y = ya },
		{ .label = "B", .n = 3, .x = x, .y = yb },
	};
	const struct gf_line_chart c = {
		.title = "t", .summary = "A ends 4 points above B.", .x_label = "time, hours",
		.y_label = "allocated, %", .x_unit = " h", .y_unit = " %", .y_decimals = 2,
		.y_floor = 0, .y_ceil = 100, .nlines = 2, .lines = lines,
	};

	gf_html_line_chart(b, &c);
}

static void test_html_line_chart(void **state)
{
	struct gf_obuf a, b;

	(void)state;
	gf_obuf_init(&a, 1 << 20);
	gf_obuf_init(&b, 1 << 20);
	render_chart(&a);
	render_chart(&b);
	assert_int_equal(gf_obuf_error(&a), GF_OK);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	/* zoomed: 89.52..96.48 with the 8 % margins, nice step 2: ticks 88..98, no 0 or 100 tick */
	assert_non_null(strstr(a.data, "text-anchor=\"end\">88</text>"));
	assert_non_null(strstr(a.data, "text-anchor=\"end\">98</text>"));
	assert_null(strstr(a.data, "text-anchor=\"end\">0</text>"));
	assert_null(strstr(a.data, "text-anchor=\"end\">100</text>"));
	/* labels beside the ends, escaped; hover values; the sentence */
	assert_non_null(strstr(a.data, "<text class=\"lb\""));
	assert_non_null(strstr(a.data, ">A&lt;b&gt;</text>"));
	assert_null(strstr(a.data, "A<b>"));
	assert_non_null(strstr(a.data, "<title>B: 92.00 % at 2 h</title>"));
	assert_non_null(strstr(a.data, "<p class=\"s\">A ends 4 points above B.</p>"));
	assert_null(strstr(a.data, "<script"));
	gf_obuf_release(&a);
	gf_obuf_release(&b);
	/* the cap holds */
	gf_obuf_init(&a, 100);
	render_chart(&a);
	assert_int_equal(gf_obuf_error(&a), GF_TOOBIG);
	gf_obuf_release(&a);
}

/* FNV-1a 64 against the reference vectors (Fowler/Noll/Vo's test suite). */
static void test_fnv1a_vectors(void **state)
{
	(void)state;
	assert_int_equal(gf_fnv1a_str(GF_FNV64_OFFSET, ""), 0xcbf29ce484222325ull);
	assert_int_equal(gf_fnv1a_str(GF_FNV64_OFFSET, "a"), 0xaf63dc4c8601ec8cull);
	assert_int_equal(gf_fnv1a_str(GF_FNV64_OFFSET, "foobar"), 0x85944171f73967e8ull);
	assert_int_equal(gf_fnv1a(GF_FNV64_OFFSET, "foobar", 6), 0x85944171f73967e8ull);
	/* chaining: "foo" then "bar" is "foobar" */
	assert_int_equal(gf_fnv1a_str(gf_fnv1a_str(GF_FNV64_OFFSET, "foo"), "bar"), 0x85944171f73967e8ull);
}

static void test_grow(void **state)
{
	(void)state;
	int *a = NULL;
	size_t cap = 0;
	assert_int_equal(gf_grow(&a, &cap, 0, sizeof(*a), 8), GF_OK); /* nothing needed: no allocation */
	assert_null(a);
	assert_int_equal(gf_grow(&a, &cap, 1, sizeof(*a), 8), GF_OK);
	assert_int_equal(cap, 8);
	for (int i = 0; i < 8; i++)
		a[i] = i;
	assert_int_equal(gf_grow(&a, &cap, 9, sizeof(*a), 8), GF_OK);
	assert_int_equal(cap, 16);
	assert_int_equal(gf_grow(&a, &cap, 100, sizeof(*a), 8), GF_OK);
	assert_int_equal(cap, 128);
	for (int i = 0; i < 8; i++)
		assert_int_equal(a[i], i); /* kept */
	/* sizes that would wrap: refused, the array and its capacity untouched */
	int *before = a;
	assert_int_equal(gf_grow(&a, &cap, SIZE_MAX / 2 + 2, sizeof(*a), 8), GF_NOMEM);
	assert_int_equal(gf_grow(&a, &cap, SIZE_MAX / sizeof(*a) + 1, sizeof(*a), 8), GF_NOMEM);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, 128);
	free(a);
}

static void test_rfc3339(void **state)
{
	(void)state;
	char ts[GF_RFC3339_LEN];
	gf_rfc3339(0, ts);
	assert_string_equal(ts, "1970-01-01T00:00:00Z");
	gf_rfc3339(1796149800, ts);
	assert_string_equal(ts, "2026-12-01T18:30:00Z");
	gf_rfc3339(951782400, ts); /* a leap day in a year divisible by 400 */
	assert_string_equal(ts, "2000-02-29T00:00:00Z");
	gf_rfc3339(-1, ts);
	assert_string_equal(ts, "1969-12-31T23:59:59Z");
	gf_rfc3339(INT64_C(400000000000), ts); /* past year 9999: clamped */
	assert_string_equal(ts, "9999-12-31T23:59:59Z");
	char us[GF_RFC3339_US_LEN];
	gf_rfc3339_us(INT64_C(1796149800) * 1000000 + 123456, us);
	assert_string_equal(us, "2026-12-01T18:30:00.123456Z");
	gf_rfc3339_us(7, us);
	assert_string_equal(us, "1970-01-01T00:00:00.000007Z");
	gf_rfc3339_us(-1, us); /* floor, not truncation */
	assert_string_equal(us, "1969-12-31T23:59:59.999999Z");
	int64_t t = 7;
	assert_true(gf_rfc3339_parse("2026-12-01T18:30:00Z", &t));
	assert_int_equal(t, 1796149800);
	assert_true(gf_rfc3339_parse("2026-12-01t18:30:00.125+00:00", &t));
	assert_int_equal(t, 1796149800);
	t = 7;
	assert_false(gf_rfc3339_parse("2026-02-29T00:00:00Z", &t)); /* not a leap year */
	assert_false(gf_rfc3339_parse("2026-12-01T18:30:00+01:00", &t));
	assert_false(gf_rfc3339_parse("2026-12-01T18:30:00.Z", &t));
	assert_int_equal(t, 7);
}

/* The Status body: the bytes cJSON_PrintUnformatted writes for the same object. */
static void test_kstatus(void **state)
{
	(void)state;
	struct gf_obuf o;
	gf_obuf_init(&o, 4096);
	gf_kstatus_render(&o, 400, "BadRequest", "q\"b\\s\b\f\n\r\t\x01 \xc3\xa9/");
	assert_string_equal(o.data, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
				    "\"message\":\"q\\\"b\\\\s\\b\\f\\n\\r\\t\\u0001 \xc3\xa9/\",\"reason\":\"BadRequest\","
				    "\"code\":400}");
	gf_obuf_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_names),
		cmocka_unit_test(test_rng_deterministic),
		cmocka_unit_test(test_rng_below_uniform),
		cmocka_unit_test(test_utf8_cut),
		cmocka_unit_test(test_csv_reader),
		cmocka_unit_test(test_qsort_empty),
		cmocka_unit_test(test_zpack_roundtrip),
		cmocka_unit_test(test_html_line_chart),
		cmocka_unit_test(test_fnv1a_vectors),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_kstatus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
