/*
** test_cmds.c — the commands, run in process on the basic fixture
** (tests/inspect/fixtures/basic.sql, whose comments work out every figure
** checked here), through their --json output.
*/
#include "ui.h"

#include <stdlib.h>
#include <string.h>

#define RUN(...) ui_inspect(__VA_ARGS__, NULL)

static struct ui_run ok(struct ui_run r)
{
	cr_assert_eq(r.rc, 0, "exit %d, stderr: %s", r.rc, r.err);
	return r;
}

Test(cmds, holes_inside_and_between_segments)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("holes", db, "--snapshot", "1", "--json"));
	UI_HAS(r.out, "\"summary\": {\"header_bytes\": 32, \"blocks\": 7, \"bytes\": 5364, \"holes\": 4, "
		      "\"hole_bytes\": 8888, \"largest_bytes\": 4096, \"between\": 1, \"between_bytes\": 194552, \"min_bytes\": 0}");
	UI_HAS(r.out, "{\"start\": 65536, \"end\": 131072, \"perms\": \"rw-p\", \"blocks\": 4, \"bytes\": 1192, "
		      "\"holes\": 2, \"hole_bytes\": 736, \"largest_bytes\": 672, \"path\": \"[heap]\"}");
	UI_HAS(r.out, "\"blocks\": 3, \"bytes\": 4172, \"holes\": 2, \"hole_bytes\": 8152, \"largest_bytes\": 4096");
	UI_HAS(r.out, "{\"from\": 67592, \"to\": 262144, \"bytes\": 194552, \"from_segment\": \"0x10000 [heap]\", "
		      "\"to_segment\": \"0x40000 (anonymous)\"}");
	UI_HAS(r.out, "{\"min_bytes\": 4096, \"max_bytes\": 8191, \"holes\": 1, \"bytes\": 4096}");
	UI_HAS(r.out, "\"holes\": [\n  {\"addr\": 266240, \"bytes\": 4096,");
	ui_free(&r);
}

Test(cmds, holes_min_limit_and_all)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("holes", db, "--snapshot", "1", "--min", "4000", "--json"));
	UI_HAS(r.out, "\"holes\": 2, \"hole_bytes\": 8152, \"largest_bytes\": 4096, \"between\": 1");
	UI_HAS(r.out, "\"min_bytes\": 4000}");
	ui_free(&r);
	r = ok(RUN("holes", db, "--snapshot", "1", "--limit", "1", "--csv", "--table", "holes"));
	cr_assert_str_eq(r.out, "addr,bytes,segment\n266240,4096,0x40000 (anonymous)\n");
	ui_free(&r);
	r = ok(RUN("holes", db, "--snapshot", "1", "--all", "--csv", "--table", "holes"));
	cr_assert_str_eq(r.out, "addr,bytes,segment\n"
				"65728,64,0x10000 [heap]\n"
				"65888,672,0x10000 [heap]\n"
				"266240,4096,0x40000 (anonymous)\n"
				"270376,4056,0x40000 (anonymous)\n");
	ui_free(&r);
}

Test(cmds, holes_of_the_latest_map)
{
	struct ui_run r = ok(RUN("holes", ui_fixture("basic"), "--json", "--table", "summary"));
	UI_HAS(r.out, "\"blocks\": 7, \"bytes\": 1992, \"holes\": 4, \"hole_bytes\": 4468, \"largest_bytes\": 3964, "
		      "\"between\": 1, \"between_bytes\": 206840");
	ui_free(&r);
}

Test(cmds, limits_with_and_without_filter)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("limits", db, "--snapshot", "1", "--json"));
	UI_HAS(r.out, "\"limits\": {\"blocks\": 7, \"bytes\": 5364, \"low\": 65536, \"high\": 274564, \"span_bytes\": 209028}");
	UI_HAS(r.out, "\"low\": 65536, \"high\": 67592, \"span_bytes\": 2056, \"path\": \"[heap]\"");
	ui_free(&r);
	r = ok(RUN("limits", db, "--snapshot", "1", "--thread", "2", "--json", "--table", "limits"));
	UI_HAS(r.out, "{\"blocks\": 3, \"bytes\": 4228, \"low\": 65792, \"high\": 274564");
	ui_free(&r);
}

Test(cmds, sum_with_filters)
{
	const char *db = ui_fixture("basic");
	static const struct { const char *opt, *val, *want; } cases[] = {
		{NULL, NULL, "\"blocks\": 7, \"bytes\": 5364, \"header_bytes\": 224, \"with_headers_bytes\": 5588"},
		{"--type", "list_node", "\"blocks\": 3, \"bytes\": 228,"},
		{"--class", "1", "\"blocks\": 2, \"bytes\": 1064,"},
		{"--thread", "1", "\"blocks\": 4, \"bytes\": 1136,"},
		{"--allocator", "new", "\"blocks\": 1, \"bytes\": 4064,"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ui_run r = cases[i].opt ? ok(RUN("sum", db, "--snapshot", "1", "--json", cases[i].opt, cases[i].val))
					       : ok(RUN("sum", db, "--snapshot", "1", "--json"));
		UI_HAS(r.out, cases[i].want);
		ui_free(&r);
	}
	struct ui_run r = ok(RUN("sum", db, "--snapshot", "1", "--json", "--type", "1", "--thread", "worker"));
	UI_HAS(r.out, "{\"filter\": \"type 1, thread worker\", \"blocks\": 1, \"bytes\": 100,");
	ui_free(&r);
	r = RUN("sum", db, "--type", "nosuch");
	cr_assert_eq(r.rc, RD_EXIT_NOTFOUND);
	UI_HAS(r.err, "snapshot 3 has no type 'nosuch'");
	ui_free(&r);
}

Test(cmds, descr_by_address_with_names)
{
	struct ui_run r = ok(RUN("descr", ui_fixture("basic"), "--snapshot", "1", "--csv", "--table", "blocks",
				 "--limit", "3"));
	cr_assert_str_eq(r.out,
		"addr,bytes,seq,allocator,allocator_name,thread,thread_name,class,class_name,type,type_name,file,line\n"
		"65568,96,10,0,malloc,1,1 main,2,lists,1,list_node,,\n"
		"65696,32,11,0,malloc,1,1 main,2,lists,1,list_node,,\n"
		"65824,64,5,1,calloc,2,2 worker,1,app,2,main+0x1c (app),,\n");
	ui_free(&r);
}

Test(cmds, top_by_each_key)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("top", db, "--snapshot", "1", "--by", "thread", "--csv", "--table", "top"));
	cr_assert_str_eq(r.out, "id,bytes,share,blocks,name,file,line,inlined,stack\n"
				"2,4228,78.82,3,2 worker,,,,\n"
				"1,1136,21.18,4,1 main,,,,\n");
	ui_free(&r);
	r = ok(RUN("top", db, "--snapshot", "1", "--by", "class", "--limit", "2", "--json", "--table", "top"));
	UI_HAS(r.out, "{\"id\": 3, \"bytes\": 4064, \"share\": 75.76, \"blocks\": 1, \"name\": \"libglib-2.0.so.0\"");
	UI_HAS(r.out, "{\"id\": 1, \"bytes\": 1064,");
	UI_HASNT(r.out, "lists");
	ui_free(&r);
	r = ok(RUN("top", db, "--snapshot", "1", "--by", "site", "--csv", "--table", "top"));
	UI_HAS(r.out, ",236,4.40,4,(registered types),,,,\n");
	ui_free(&r);
	r = RUN("top", db, "--by", "colour");
	cr_assert_eq(r.rc, RD_EXIT_USAGE);
	ui_free(&r);
}

Test(cmds, diff_of_two_snapshots)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("diff", db, "--json"));
	UI_HAS(r.out, "\"summary\": {\"blocks_a\": 7, \"bytes_a\": 5364, \"blocks_b\": 7, \"bytes_b\": 1992, "
		      "\"delta_blocks\": 0, \"delta_bytes\": -3372, \"kept_blocks\": 4, \"new_blocks\": 3, "
		      "\"new_bytes\": 800, \"gone_blocks\": 3, \"gone_bytes\": 4172, \"same_process\": true}");
	UI_HAS(r.out, "{\"key\": \"g_strdup+0x20 (libglib-2.0.so.0)\", \"delta_bytes\": -4064, \"delta_blocks\": -1,");
	UI_HAS(r.out, "{\"key\": \"new_type\", \"delta_bytes\": 500, \"delta_blocks\": 1, \"bytes_a\": 0, \"bytes_b\": 500,");
	UI_HASNT(r.out, "\"key\": \"list_node\"");
	UI_HAS(r.out, "{\"key\": \"lists\", \"delta_bytes\": 500,");
	UI_HAS(r.out, "{\"key\": \"1\", \"delta_bytes\": 192, \"delta_blocks\": 0,");
	UI_HAS(r.out, "\"new_blocks\": [\n  {\"addr\": 274464, \"bytes\": 100, \"seq\": 40,");
	ui_free(&r);
	struct ui_run same = ok(RUN("diff", "--from", "1", "--to", "3", db, "--json"));
	char a[4096], b[4096];
	snprintf(a, sizeof a, "%s:1", db);
	snprintf(b, sizeof b, "%s:3", db);
	struct ui_run two = ok(RUN("diff", a, b, "--json"));
	UI_HAS(two.out, "\"new_bytes\": 800, \"gone_blocks\": 3");
	ui_free(&same);
	ui_free(&two);
}

Test(cmds, diff_limits_the_leak_list_oldest_first)
{
	struct ui_run r = ok(RUN("diff", ui_fixture("basic"), "--limit", "1", "--csv", "--table", "new_blocks"));
	cr_assert_str_eq(r.out, "addr,bytes,seq,allocator,thread,thread_name,type,type_name,file,line\n"
				"274464,100,40,realloc,2,2 worker,1,list_node,,\n");
	ui_free(&r);
}

Test(cmds, diff_with_filters)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("diff", db, "--type", "new_type", "--csv", "--table", "summary"));
	cr_assert_str_eq(r.out, "blocks_a,bytes_a,blocks_b,bytes_b,delta_blocks,delta_bytes,kept_blocks,"
				"new_blocks,new_bytes,gone_blocks,gone_bytes,same_process\n"
				"0,0,1,500,1,500,0,1,500,0,0,true\n", "a type only B has: nothing in A");
	ui_free(&r);
	r = ok(RUN("diff", db, "--class", "lists", "--csv", "--table", "new_blocks"));
	cr_assert_str_eq(r.out, "addr,bytes,seq,allocator,thread,thread_name,type,type_name,file,line\n"
				"274464,100,40,realloc,2,2 worker,1,list_node,,\n"
				"278560,500,45,new,3,3 pool,4,new_type,,\n");
	ui_free(&r);
	r = RUN("diff", db, "--type", "nope");
	cr_assert_eq(r.rc, RD_EXIT_NOTFOUND);
	UI_HAS(r.err, "snapshot 3 has no type 'nope'");
	ui_free(&r);
}

Test(cmds, diff_refuses_a_status_snapshot)
{
	struct ui_run r = RUN("diff", "--from", "2", "--to", "3", ui_fixture("basic"));
	cr_assert_eq(r.rc, RD_EXIT_NOTFOUND);
	UI_HAS(r.err, "snapshot 2 holds 'status' only, not a block map");
	ui_free(&r);
}

Test(cmds, status_kinds)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("status", db, "--classes", "--threads", "--json"));
	UI_HAS(r.out, "\"id\": 2, \"content\": \"status\"");
	UI_HAS(r.out, "{\"id\": 2, \"name\": \"lists\", \"bytes_current\": 228, \"bytes_max_since_last\": 300, "
		      "\"bytes_max_ever\": 400, \"blocks_current\": 3, \"blocks_max_since_last\": 4, \"blocks_max_ever\": 5, "
		      "\"calls\": null, \"allocated_bytes\": null, \"frees\": null, \"temporary\": null, \"reallocs\": null}");
	UI_HAS(r.out, "{\"id\": 2, \"name\": \"worker\", \"bytes_current\": 4228,");
	UI_HASNT(r.out, "\"total\"");
	ui_free(&r);
	r = ok(RUN("status", db, "--snapshot", "1", "--csv"));
	UI_HAS(r.out, "id,name,bytes_current,bytes_max_since_last,bytes_max_ever,blocks_current,"
		      "blocks_max_since_last,blocks_max_ever,calls,allocated_bytes,frees,temporary,reallocs\n"
		      "0,total,5364,6000,9000,7,9,12,,,,,\n");
	ui_free(&r);
}

Test(cmds, describe_numbers)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("type", db, "3", "--json", "--table", "type"));
	UI_HAS(r.out, "{\"id\": 3, \"name\": \"g_strdup+0x20 (libglib-2.0.so.0)\", \"label\": \"g_strdup+0x20 "
		      "(libglib-2.0.so.0)\", \"file\": null, \"line\": null, \"kind\": \"automatic\", \"site\": 139637976731680, "
		      "\"class\": 3, \"class_name\": \"libglib-2.0.so.0\", \"inlined\": null}");
	ui_free(&r);
	r = RUN("type", db, "99");
	cr_assert_eq(r.rc, RD_EXIT_NOTFOUND);
	cr_assert_str_eq(r.out, "invalid_type\n");
	ui_free(&r);
	r = RUN("class", db, "7", "--json");
	cr_assert_eq(r.rc, RD_EXIT_NOTFOUND);
	UI_HAS(r.out, "\"invalid_type\": {\"kind\": \"class\", \"given\": \"7\"}");
	ui_free(&r);
	r = ok(RUN("class", db, "lists", "--csv", "--table", "class"));
	cr_assert_str_eq(r.out, "id,name,kind,module,types\n2,lists,registered,,2\n");
	ui_free(&r);
	r = ok(RUN("allocator", db, "5", "--csv", "--table", "allocator"));
	cr_assert_str_eq(r.out, "id,name\n5,new\n");
	ui_free(&r);
	r = RUN("allocator", db, "7");
	cr_assert_eq(r.rc, RD_EXIT_NOTFOUND);
	ui_free(&r);
}

Test(cmds, types_range_and_header_size)
{
	const char *db = ui_fixture("basic");
	struct ui_run r = ok(RUN("types", db, "--snapshot", "1", "--json"));
	UI_HAS(r.out, "\"range\": {\"min\": 0, \"max\": 3, \"types\": 4, \"automatic\": 2}");
	ui_free(&r);
	r = ok(RUN("header-size", db, "--csv", "--table", "header"));
	cr_assert_str_eq(r.out, "header_bytes,mode\n32,mim\n");
	ui_free(&r);
	r = ok(RUN("list", db, "--csv"));
	UI_HAS(r.out, "\n2,status,signal,4242,1,mim,system,32,1700000001000.000,2500.000,31,7,5364,/nonexistent/app,app --run\n");
	ui_free(&r);
}

Test(cmds, usage_errors)
{
	static const char *const cases[][5] = {
		{"holes", "--bogus", "x.db", NULL},
		{"holes", "--type", "1", "x.db", NULL}, /* a filter that does not apply */
		{"holes", "--min", "lots", "x.db", NULL},
		{"holes", "--snapshot", "0", "x.db", NULL},
		{"holes", NULL},
		{"holes", "a.db", "b.db", NULL},
		{"type", "x.db", NULL},
		{"status", NULL},
		{"snapshot", "--pid", "1", NULL},
		{"diff", "a.db", "b.db", "--from", "1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *const *c = cases[i];
		struct ui_run r = ui_inspect(c[0], c[1], c[2], c[3], c[4], NULL);
		cr_assert_eq(r.rc, RD_EXIT_USAGE, "case %zu: exit %d (%s)", i, r.rc, r.err);
		UI_HAS(r.err, "(see 'inspect ");
		cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
		ui_free(&r);
	}
}

Test(cmds, help_goes_to_stdout)
{
	struct ui_run r = ok(RUN("holes", "--help"));
	UI_HAS(r.out, "Usage: inspect holes [options] DB");
	UI_HAS(r.out, "--min SIZE");
	ui_free(&r);
}
