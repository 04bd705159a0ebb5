/*
** test_out.c — values and tables as text, JSON and CSV (rd_fmt.c,
** rd_out.c) and the argument parser's numbers (rd_args.c): sizes the
** way libmeminst prints them, escaping of hostile names, the three
** renderings of one table and --table.
*/
#include "ui.h"

#include <stdlib.h>
#include <string.h>

static char *json_of(const char *s)
{
	char *buf;
	size_t n;
	FILE *f = open_memstream(&buf, &n);
	rd_json_str(f, s);
	fclose(f);
	return buf;
}

static char *csv_of(const char *s)
{
	char *buf;
	size_t n;
	FILE *f = open_memstream(&buf, &n);
	rd_csv_str(f, s);
	fclose(f);
	return buf;
}

#define EXPECT_JSON(in, want)                                              \
	do {                                                               \
		char *got_ = json_of(in);                                  \
		cr_assert_str_eq(got_, want, "json of %s", #in);           \
		free(got_);                                                \
	} while (0)

#define EXPECT_CSV(in, want)                                               \
	do {                                                               \
		char *got_ = csv_of(in);                                   \
		cr_assert_str_eq(got_, want, "csv of %s", #in);            \
		free(got_);                                                \
	} while (0)

Test(fmt, sizes_like_libmeminst)
{
	char b[32];
	rd_fmt_size(0, b, sizeof b);
	cr_assert_str_eq(b, "0 B");
	rd_fmt_size(1023, b, sizeof b);
	cr_assert_str_eq(b, "1023 B");
	rd_fmt_size(1536, b, sizeof b);
	cr_assert_str_eq(b, "1.5 KiB");
	rd_fmt_size(33000, b, sizeof b); /* the figure of libmeminst(3)'s example */
	cr_assert_str_eq(b, "32.2 KiB");
	rd_fmt_size(3ull << 30, b, sizeof b);
	cr_assert_str_eq(b, "3.0 GiB");
	rd_fmt_size(UINT64_MAX, b, sizeof b);
	cr_assert_str_eq(b, "16.0 EiB");
	/* rounded to the nearest tenth of the whole value, not floored */
	rd_fmt_size(14320000, b, sizeof b);
	cr_assert_str_eq(b, "13.7 MiB");
	rd_fmt_size(5123456, b, sizeof b);
	cr_assert_str_eq(b, "4.9 MiB");
	rd_fmt_size((1 << 20) - 1, b, sizeof b);
	cr_assert_str_eq(b, "1.0 MiB");
	rd_fmt_delta(-4064, b, sizeof b);
	cr_assert_str_eq(b, "-4.0 KiB");
	rd_fmt_delta(500, b, sizeof b);
	cr_assert_str_eq(b, "+500 B");
	rd_fmt_delta(0, b, sizeof b);
	cr_assert_str_eq(b, "0 B");
	rd_fmt_delta(INT64_MIN, b, sizeof b);
	cr_assert_str_eq(b, "-8.0 EiB");
}

Test(fmt, times)
{
	char b[64];
	rd_fmt_ms(1500000000, b, sizeof b);
	cr_assert_str_eq(b, "1500.000");
	rd_fmt_ms(-1234567, b, sizeof b);
	cr_assert_str_eq(b, "-1.234");
	/* alone: three significant digits, ns -> µs -> ms -> s */
	static const struct { int64_t ns; const char *text; } alone[] = {
		{0, "0 ns"}, {999, "999 ns"}, {1000, "1.00 \xc2\xb5s"}, {92149, "92.1 \xc2\xb5s"},
		{921222, "921 \xc2\xb5s"}, {999600, "1.00 ms"}, {2000000, "2.00 ms"},
		{522135000, "522 ms"}, {1500000000, "1.50 s"}, {-1234567, "-1.23 ms"},
		{4000000000000, "4000 s"},
	};
	for (size_t i = 0; i < sizeof alone / sizeof alone[0]; i++) {
		rd_fmt_dur(alone[i].ns, b, sizeof b);
		cr_assert_str_eq(b, alone[i].text, "%lld ns", (long long)alone[i].ns);
	}
	/* in a column: the unit of its largest value, three decimals */
	cr_assert_eq(rd_dur_unit_of(522135000), 2);
	cr_assert_eq(rd_dur_unit_of(999), 0);
	cr_assert_eq(rd_dur_unit_of(1000), 1);
	rd_fmt_dur_in(921222, 2, b, sizeof b);
	cr_assert_str_eq(b, "0.921 ms");
	rd_fmt_dur_in(999999500, 2, b, sizeof b);
	cr_assert_str_eq(b, "1000.000 ms");
	rd_fmt_dur_in(12, 0, b, sizeof b);
	cr_assert_str_eq(b, "12 ns");
	setenv("TZ", "UTC", 1);
	rd_fmt_time(1700000000000000000, b, sizeof b);
	cr_assert_str_eq(b, "2023-11-14 22:13:20");
}

Test(fmt, json_escaping)
{
	EXPECT_JSON("plain", "\"plain\"");
	EXPECT_JSON("say \"hi\"\\", "\"say \\\"hi\\\"\\\\\"");
	EXPECT_JSON("a\nb\tc\r\x01\x1f", "\"a\\nb\\tc\\r\\u0001\\u001f\"");
	EXPECT_JSON("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	EXPECT_JSON("bad \xff byte", "\"bad \\ufffd byte\"");
	EXPECT_JSON("cut \xe2\x82", "\"cut \\ufffd\\ufffd\"");
	EXPECT_JSON("overlong \xc0\xaf", "\"overlong \\ufffd\\ufffd\"");
	EXPECT_JSON("surrogate \xed\xa0\x80", "\"surrogate \\ufffd\\ufffd\\ufffd\"");
	EXPECT_JSON("", "\"\"");
}

Test(fmt, csv_escaping)
{
	EXPECT_CSV("plain", "plain");
	EXPECT_CSV("a,b", "\"a,b\"");
	EXPECT_CSV("say \"hi\"", "\"say \"\"hi\"\"\"");
	EXPECT_CSV("two\nlines", "two\\nlines"); /* controls escaped, as in text */
	EXPECT_CSV(" padded ", "\" padded \"");
	EXPECT_CSV("main+0x1c (app)", "main+0x1c (app)");
	EXPECT_CSV("", "");
}

Test(fmt, text_escaping_and_width)
{
	char b[64];
	size_t w;
	rd_text_str("a\nb\x01", b, sizeof b, &w);
	cr_assert_str_eq(b, "a\\nb\\x01");
	cr_assert_eq(w, 8);
	rd_text_str("caf\xc3\xa9", b, sizeof b, &w);
	cr_assert_str_eq(b, "caf\xc3\xa9");
	cr_assert_eq(w, 4, "é is one column");
	rd_text_str("x\xffy", b, sizeof b, &w);
	cr_assert_str_eq(b, "x\\xffy");
	rd_text_str("a very long name indeed", b, 10, &w);
	cr_assert_str_eq(b, "a ver", "cut to fit the buffer");
	cr_assert_eq(rd_text_width("\xe2\x82\xac\xe2\x82\xac"), 2);
}

Test(args, numbers_and_sizes)
{
	int64_t v;
	uint64_t u;
	cr_assert(rd_parse_int("42", &v) && v == 42);
	cr_assert(rd_parse_int("0x10", &v) && v == 16);
	cr_assert(rd_parse_int("-3", &v) && v == -3);
	cr_assert_not(rd_parse_int("", &v));
	cr_assert_not(rd_parse_int("4x", &v));
	cr_assert_not(rd_parse_int("99999999999999999999", &v));
	cr_assert_not(rd_parse_int(" 1", &v));
	cr_assert(rd_parse_size("4096", &u) && u == 4096);
	cr_assert(rd_parse_size("4K", &u) && u == 4096);
	cr_assert(rd_parse_size("1MiB", &u) && u == 1 << 20);
	cr_assert(rd_parse_size("2g", &u) && u == 2ull << 30);
	cr_assert(rd_parse_size("7B", &u) && u == 7);
	cr_assert_not(rd_parse_size("1.5M", &u));
	cr_assert_not(rd_parse_size("-1", &u));
	cr_assert_not(rd_parse_size("1T", &u));
	cr_assert_not(rd_parse_size("99999999999999999G", &u));
}

/* ------------------------------------------------------------ documents -- */

static const struct rd_col cols[] = {
	{"name", "name", RD_K_STR, 0},
	{"size", "size", RD_K_SIZE, 0},
	{"addr", "address", RD_K_ADDR, 0},
	{"id", "", RD_K_INT, RD_C_DATA_ONLY},
	{"bar", "bar", RD_K_STR, RD_C_TEXT_ONLY},
};

static char *render(enum rd_format fmt, const char *only, int *rc)
{
	char *buf, *err;
	size_t n, ne;
	struct rd_opts o = {.out = open_memstream(&buf, &n), .err = open_memstream(&err, &ne)};
	struct rd_args a = {.cmd = "out", .format = fmt, .table = only};
	rd_doc_t *d = rd_doc_new(&o, &a);
	rd_table_t *t = rd_doc_table(d, "rows", cols, 5, 0);
	rd_table_title(t, "two rows:");
	rd_row(t);
	rd_put_str(t, "a,\"b\"");
	rd_put_uint(t, 1536);
	rd_put_uint(t, 0x10000);
	rd_put_int(t, -1);
	rd_put_str(t, "##");
	rd_row(t);
	rd_put_str(t, "caf\xc3\xa9");
	rd_put_null(t);
	rd_table_note(t, "(a note)");
	t = rd_doc_table(d, "one", cols, 2, RD_T_SINGLE);
	rd_row(t);
	rd_put_str(t, "x");
	rd_put_uint(t, 7);
	*rc = rd_doc_print(d);
	rd_doc_free(d);
	fclose(o.out);
	fclose(o.err);
	if (*rc) {
		free(buf);
		return err;
	}
	free(err);
	return buf;
}

Test(doc, text)
{
	int rc;
	char *s = render(RD_FMT_TEXT, NULL, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(s, "two rows:\n"
			    "name      size  address  bar\n"
			    "a,\"b\"  1.5 KiB  0x10000  ##\n"
			    "caf\xc3\xa9         -        -  -\n"
			    "(a note)\n"
			    "\n"
			    "name: x\n"
			    "size: 7 B\n");
	free(s);
}

Test(doc, json)
{
	int rc;
	char *s = render(RD_FMT_JSON, NULL, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(s, "{\n"
			    "\"rows\": [\n"
			    "  {\"name\": \"a,\\\"b\\\"\", \"size\": 1536, \"addr\": 65536, \"id\": -1},\n"
			    "  {\"name\": \"caf\xc3\xa9\", \"size\": null, \"addr\": null, \"id\": null}\n"
			    "],\n"
			    "\"one\": {\"name\": \"x\", \"size\": 7}\n"
			    "}\n");
	free(s);
}

Test(doc, csv)
{
	int rc;
	char *s = render(RD_FMT_CSV, NULL, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(s, "name,size,addr,id\n"
			    "\"a,\"\"b\"\"\",1536,65536,-1\n"
			    "caf\xc3\xa9,,,\n"
			    "\n"
			    "name,size\n"
			    "x,7\n");
	free(s);
}

Test(doc, one_table)
{
	int rc;
	char *s = render(RD_FMT_CSV, "one", &rc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(s, "name,size\nx,7\n");
	free(s);
	s = render(RD_FMT_JSON, "nope", &rc);
	cr_assert_eq(rc, RD_EXIT_USAGE);
	cr_assert_str_eq(s, "inspect: out: --table takes rows or one, not 'nope' (see 'inspect out --help')\n");
	free(s);
}

/* On a terminal a long name is cut in its middle to its column's width. */
Test(fmt, text_cut_in_the_middle)
{
	char buf[128] = "std::_Rb_tree<>::_M_emplace_hint_unique<>(x)+0x23 (app)";
	size_t w = rd_text_width(buf);
	rd_text_cut(buf, &w, 21);
	cr_assert_eq(w, 21);
	cr_assert_eq(rd_text_width(buf), 21, "'%s'", buf);
	cr_assert_str_eq(buf, "std::_Rb_t…0x23 (app)");
	char short_one[16] = "main+0x1c";
	w = rd_text_width(short_one);
	rd_text_cut(short_one, &w, 21);
	cr_assert_str_eq(short_one, "main+0x1c", "what fits is left alone");
	char utf[64] = "αβγδεζηθικλμνξοπρστυφχψω";
	w = rd_text_width(utf);
	rd_text_cut(utf, &w, 9);
	cr_assert_eq(rd_text_width(utf), 9, "whole characters: '%s'", utf);
}

/* The widest text columns give way first, down to 16, to fit the width. */
Test(fmt, columns_fit_the_terminal)
{
	size_t wid[] = {2, 9, 180, 44};
	bool cut[] = {false, false, true, true};
	rd_fit_widths(wid, cut, 4, 100);
	cr_assert_eq(wid[0] + wid[1] + wid[2] + wid[3] + 3 * 2, 100);
	cr_assert_eq(wid[0], 2);
	cr_assert_eq(wid[1], 9);
	cr_assert(wid[2] + 1 >= wid[3] && wid[3] + 1 >= wid[2], "both text columns narrowed: %zu %zu", wid[2], wid[3]);
	size_t narrow[] = {30, 200};
	bool only_second[] = {false, true};
	rd_fit_widths(narrow, only_second, 2, 40);
	cr_assert_eq(narrow[1], 16, "never below 16: the line stays long");
	size_t hidden[] = {10, 0, 300};
	bool all[] = {true, true, true};
	rd_fit_widths(hidden, all, 3, 80);
	cr_assert_eq(hidden[0] + hidden[2] + 2, 80, "a hidden column (0) takes no room");
}
