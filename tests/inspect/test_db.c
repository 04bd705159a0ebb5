/*
** test_db.c — the reader (rd_db.c) and the name tables (rd_names.c):
** every way a file can be refused, with its message and exit code, the
** choice of snapshot, the tables of a snapshot and the filters.
*/
#include "ui.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meminst-snapshot.h"

/* Open path; returns the exit code and the message written. */
static int try_open(const char *path, char **msg)
{
	size_t n;
	FILE *err = open_memstream(msg, &n);
	struct rd_opts o = {.out = stdout, .err = err};
	rd_db_t *db = NULL;
	int r = rd_db_open(path, &o, &db);
	fclose(err);
	rd_db_close(db);
	return r;
}

static void expect_refused(const char *path, const char *why)
{
	char *msg;
	cr_assert_eq(try_open(path, &msg), RD_EXIT_DB, "%s: %s", path, msg);
	UI_HAS(msg, path);
	UI_HAS(msg, why);
	cr_assert_eq(strchr(msg, '\n'), msg + strlen(msg) - 1, "one line: %s", msg);
	free(msg);
}

Test(open, accepts_a_valid_database)
{
	char *msg;
	cr_assert_eq(try_open(ui_fixture("basic"), &msg), 0, "%s", msg);
	cr_assert_str_empty(msg);
	free(msg);
}

Test(open, refuses_a_missing_file_without_creating_it)
{
	const char *path = ui_path("missing.db");
	expect_refused(path, "No such file or directory");
	cr_assert_neq(access(path, F_OK), 0, "the file was created");
}

Test(open, refuses_a_directory)
{
	expect_refused(ui_path(""), "is a directory");
}

Test(open, refuses_a_file_that_is_not_sqlite)
{
	const char *path = ui_path("text.db");
	FILE *f = fopen(path, "w");
	for (int i = 0; i < 200; i++)
		fputs("this is not a database, just some text\n", f);
	fclose(f);
	expect_refused(path, "not an SQLite database");
}

Test(open, refuses_an_empty_file)
{
	const char *path = ui_path("empty.db");
	close(open(path, O_CREAT | O_WRONLY, 0644));
	expect_refused(path, "an empty file: no snapshot was stored in it");
}

Test(open, refuses_another_application_database)
{
	struct fx_opts o = FX_OPTS_DEFAULT;
	o.app_id = 0x12345678;
	expect_refused(ui_db("basic", &o), "not a meminst snapshot database (application_id 0x12345678, expected 0x4d454d49)");
}

Test(open, refuses_a_newer_schema)
{
	struct fx_opts o = FX_OPTS_DEFAULT;
	o.user_version = MEMINST_SNAPSHOT_VERSION + 1;
	char want[128];
	snprintf(want, sizeof want, "written by a newer meminst (schema %d, this inspect reads %d up to %d)",
		 MEMINST_SNAPSHOT_VERSION + 1, MEMINST_SNAPSHOT_MIN_READABLE, MEMINST_SNAPSHOT_VERSION);
	expect_refused(ui_db("basic", &o), want);
}

Test(open, refuses_schema_zero)
{
	struct fx_opts o = FX_OPTS_DEFAULT;
	o.user_version = 0;
	expect_refused(ui_db("basic", &o), "schema version not readable (schema 0");
}

Test(open, refuses_a_database_without_our_tables)
{
	struct fx_opts o = FX_OPTS_DEFAULT;
	o.no_schema = true;
	expect_refused(ui_db(NULL, &o), "no table 'meminst_meta'");
}

Test(open, refuses_a_view_in_place_of_a_table)
{
	const char *path = ui_fixture("basic");
	char err[256];
	cr_assert_eq(fx_exec(path, "DROP TABLE block_chunk; CREATE VIEW block_chunk AS SELECT * FROM segment",
			     err, sizeof err), 0, "%s", err);
	expect_refused(path, "'block_chunk' is a view");
}

static void copy_prefix(const char *from, const char *to, long bytes)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	cr_assert(in && out);
	for (long i = 0; i < bytes; i++) {
		int c = getc(in);
		if (c == EOF)
			break;
		putc(c, out);
	}
	fclose(in);
	fclose(out);
}

Test(open, refuses_a_truncated_database)
{
	const char *path = ui_fixture("basic"), *cut = ui_path("cut.db");
	struct stat st;
	stat(path, &st);
	copy_prefix(path, cut, st.st_size / 2);
	expect_refused(cut, "damaged");
}

Test(open, refuses_a_corrupted_database)
{
	const char *path = ui_fixture("basic");
	struct stat st;
	stat(path, &st);
	int fd = open(path, O_WRONLY);
	char junk[512];
	memset(junk, 0x5a, sizeof junk);
	/* the middle of every page but the first: b-tree pages full of junk */
	for (off_t page = 4096; page < st.st_size; page += 4096)
		cr_assert_eq(pwrite(fd, junk, sizeof junk, page + 8), (ssize_t)sizeof junk);
	close(fd);
	expect_refused(path, "damaged");
}

/* ---------------------------------------------------------- selection -- */

static rd_db_t *open_basic(void)
{
	static struct rd_opts o;
	o = (struct rd_opts){.out = stdout, .err = stderr};
	rd_db_t *db;
	cr_assert_eq(rd_db_open(ui_fixture("basic"), &o, &db), 0);
	return db;
}

Test(select, latest_of_each_need)
{
	rd_db_t *db = open_basic();
	cr_assert_eq(rd_db_select(db, 0, RD_NEED_ANY), 0);
	cr_assert_eq(rd_db_snap(db)->id, 3);
	cr_assert_eq(rd_db_select(db, 0, RD_NEED_MAP), 0);
	cr_assert_eq(rd_db_snap(db)->id, 3);
	cr_assert_eq(rd_db_select(db, 0, RD_NEED_STATUS), 0);
	cr_assert_eq(rd_db_snap(db)->id, 2, "snapshot 3 has no status rows");
	cr_assert_eq(rd_db_select(db, 1, RD_NEED_MAP), 0);
	const struct rd_snap *s = rd_db_snap(db);
	cr_assert_eq(s->header_size, 32);
	cr_assert_eq(s->blocks, 7);
	cr_assert_eq(s->bytes, 5364);
	cr_assert_str_eq(s->cmdline, "app --run");
	int64_t prev;
	cr_assert_eq(rd_db_previous_map(db, 3, &prev), 0);
	cr_assert_eq(prev, 1, "snapshot 2 is status only");
	cr_assert_eq(rd_db_previous_map(db, 1, &prev), 0);
	cr_assert_eq(prev, 0);
	rd_db_close(db);
}

Test(select, missing_and_wrong_content)
{
	char *msg;
	size_t n;
	struct rd_opts o = {.out = stdout, .err = open_memstream(&msg, &n)};
	rd_db_t *db;
	cr_assert_eq(rd_db_open(ui_fixture("basic"), &o, &db), 0);
	cr_assert_eq(rd_db_select(db, 9, RD_NEED_ANY), RD_EXIT_NOTFOUND);
	cr_assert_eq(rd_db_select(db, 2, RD_NEED_MAP), RD_EXIT_NOTFOUND);
	fclose(o.err);
	UI_HAS(msg, "no snapshot 9 (the file has 3 snapshots, numbered 1 to 3)");
	UI_HAS(msg, "snapshot 2 holds 'status' only, not a block map");
	free(msg);
	rd_db_close(db);
}

Test(select, a_file_without_snapshots)
{
	char *msg;
	size_t n;
	struct rd_opts o = {.out = stdout, .err = open_memstream(&msg, &n)};
	rd_db_t *db;
	cr_assert_eq(rd_db_open(ui_db(NULL, &(struct fx_opts)FX_OPTS_DEFAULT), &o, &db), 0);
	cr_assert_eq(rd_db_select(db, 0, RD_NEED_MAP), RD_EXIT_NOTFOUND);
	fclose(o.err);
	UI_HAS(msg, "no map snapshot (the file has no snapshot");
	free(msg);
	rd_db_close(db);
}

Test(select, list_and_segments)
{
	rd_db_t *db = open_basic();
	struct rd_snap *v;
	size_t n;
	cr_assert_eq(rd_db_list(db, &v, &n), 0);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(v[1].content, "status");
	cr_assert_str_eq(v[2].trigger, "exit");
	free(v);
	cr_assert_eq(rd_db_select(db, 1, RD_NEED_ANY), 0);
	struct rd_seg *segs;
	cr_assert_eq(rd_db_segments(db, &segs, &n), 0);
	cr_assert_eq(n, 3);
	cr_assert_eq(segs[0].start, 0x10000);
	cr_assert_str_eq(segs[0].path, "[heap]");
	cr_assert_str_eq(segs[1].path, "");
	free(segs);
	rd_db_close(db);
}

/* A snapshot without segment rows (a writer stores unchanged mappings
** once): its mappings are those of the latest earlier snapshot of the
** same process that has some, never another process's. */
Test(select, segments_of_an_earlier_snapshot)
{
	const char *path = ui_fixture("basic");
	char err[256];
	cr_assert_eq(fx_exec(path, "DELETE FROM segment WHERE snapshot IN (2, 3);"
				   "UPDATE segment SET path = 'first' WHERE snapshot = 1 AND start = 0x40000;"
				   "INSERT INTO snapshot SELECT 4, content, trigger, 4343, ppid, exe, cmdline, mode, "
				   "backend, header_size, time_ns + 1, elapsed_ns, pause_ns, seq, blocks, bytes "
				   "FROM snapshot WHERE id = 2",
			     err, sizeof err),
		     0, "%s", err);
	static struct rd_opts o;
	o = (struct rd_opts){.out = stdout, .err = stderr};
	rd_db_t *db;
	cr_assert_eq(rd_db_open(path, &o, &db), 0);
	struct rd_seg *segs;
	size_t n;
	for (int64_t id = 2; id <= 3; id++) {
		cr_assert_eq(rd_db_select(db, id, RD_NEED_ANY), 0);
		cr_assert_eq(rd_db_segments(db, &segs, &n), 0);
		cr_assert_eq(n, 3, "snapshot %lld: %zu segments", (long long)id, n);
		cr_assert_str_eq(segs[1].path, "first");
		free(segs);
	}
	cr_assert_eq(rd_db_select(db, 4, RD_NEED_ANY), 0);
	cr_assert_eq(rd_db_segments(db, &segs, &n), 0);
	cr_assert_eq(n, 0, "another process's snapshot took %zu segments of pid 4242", n);
	free(segs);
	rd_db_close(db);
}

/* Snapshots whose segment rows are only the changes (segment_delta): a
** reader rebuilds the list from the latest snapshot of the process with
** them all, a row replacing the mapping at its start, end = start one
** gone; a later whole list starts again, and the snapshots before a
** change keep their own list. */
static void expect_segments(rd_db_t *db, int64_t id, size_t want, const char *const *paths)
{
	struct rd_seg *segs;
	size_t n;
	cr_assert_eq(rd_db_select(db, id, RD_NEED_ANY), 0);
	cr_assert_eq(rd_db_segments(db, &segs, &n), 0);
	cr_assert_eq(n, want, "snapshot %lld: %zu segments, not %zu", (long long)id, n, want);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(segs[i].path, paths[i], "snapshot %lld, segment %zu", (long long)id, i);
	free(segs);
}

Test(select, segments_as_changes)
{
	const char *path = ui_fixture("basic");
	char err[512];
	cr_assert_eq(fx_exec(path, "DELETE FROM segment WHERE snapshot IN (2, 3);"
				   "INSERT INTO segment(snapshot, start, end, perms, offset, path) VALUES"
				   " (2, 0x10000, 0x10000, '', 0, ''), (2, 0x40000, 0x60000, 'rw-p', 0, 'grown'),"
				   " (2, 0x90000, 0xa0000, 'r--p', 0, 'new');"
				   "INSERT INTO segment_delta VALUES (2);"
				   "INSERT INTO snapshot SELECT id + 2, content, trigger, pid, ppid, exe, cmdline, mode, "
				   "backend, header_size, time_ns + 9, elapsed_ns, pause_ns, seq, blocks, bytes "
				   "FROM snapshot WHERE id IN (2, 3);"
				   "INSERT INTO segment(snapshot, start, end, perms, offset, path) VALUES"
				   " (4, 0x40000, 0x50000, 'rw-p', 0, 'whole'), (5, 0x90000, 0xa0000, 'r--p', 0, 'added');"
				   "INSERT INTO segment_delta VALUES (5);",
			     err, sizeof err),
		     0, "%s", err);
	static struct rd_opts o;
	o = (struct rd_opts){.out = stdout, .err = stderr};
	rd_db_t *db;
	cr_assert_eq(rd_db_open(path, &o, &db), 0);
	expect_segments(db, 1, 3, (const char *const[]){"[heap]", "", "/nonexistent/libglib-2.0.so.0"});
	for (int64_t id = 2; id <= 3; id++)
		expect_segments(db, id, 3, (const char *const[]){"grown", "new", "/nonexistent/libglib-2.0.so.0"});
	expect_segments(db, 4, 1, (const char *const[]){"whole"});
	expect_segments(db, 5, 2, (const char *const[]){"whole", "added"});
	struct rd_seg *segs;
	size_t n;
	cr_assert_eq(rd_db_segments_of(db, 2, &segs, &n), 0);
	cr_assert_eq(segs[0].end, 0x60000);
	free(segs);
	rd_db_close(db);
}

/* [vsyscall] is stored with a negative start (SQLite's integers are
** signed): the segments come sorted as unsigned addresses, it last, so
** that the cursors over them (holes, rss) move on from the first. */
Test(select, segments_sorted_as_unsigned_addresses)
{
	const char *path = ui_fixture("basic");
	char err[256];
	cr_assert_eq(fx_exec(path, "INSERT INTO segment(snapshot, start, end, perms, offset, path) "
				   "VALUES(1, -10485760, -10481664, '--xp', 0, '[vsyscall]')",
			     err, sizeof err),
		     0, "%s", err);
	static struct rd_opts o;
	o = (struct rd_opts){.out = stdout, .err = stderr};
	rd_db_t *db;
	cr_assert_eq(rd_db_open(path, &o, &db), 0);
	cr_assert_eq(rd_db_select(db, 1, RD_NEED_ANY), 0);
	struct rd_seg *segs;
	size_t n;
	cr_assert_eq(rd_db_segments(db, &segs, &n), 0);
	cr_assert_eq(n, 4);
	cr_assert_eq(segs[0].start, 0x10000);
	cr_assert_str_eq(segs[3].path, "[vsyscall]");
	cr_assert_eq(segs[3].start, 0xffffffffff600000ull);
	for (size_t i = 1; i < n; i++)
		cr_assert_gt(segs[i].start, segs[i - 1].start);
	free(segs);
	rd_db_close(db);
}

/* -------------------------------------------------- blocks and filters -- */

static void sum_blocks(rd_db_t *db, const struct rd_filter_ids *f, uint64_t *n, uint64_t *bytes)
{
	rd_blocks_t it;
	struct rd_block b;
	uint64_t last = 0;
	*n = *bytes = 0;
	cr_assert_eq(rd_blocks_open(db, f, &it), 0);
	int r;
	while ((r = rd_blocks_next(&it, &b)) == 1) {
		cr_assert_geq(b.addr, last, "blocks come in address order");
		last = b.addr;
		(*n)++;
		*bytes += b.size;
	}
	cr_assert_eq(r, 0);
	rd_blocks_close(&it);
}

static int resolve(rd_db_t *db, struct rd_tags *t, struct rd_filter f, struct rd_filter_ids *ids)
{
	return rd_filter_resolve(db, t, &f, ids);
}

Test(blocks, filters_by_number_and_name)
{
	rd_db_t *db = open_basic();
	cr_assert_eq(rd_db_select(db, 1, RD_NEED_MAP), 0);
	struct rd_tags t;
	cr_assert_eq(rd_tags_load(db, &t), 0);
	struct rd_filter_ids f;
	uint64_t n, bytes;
	sum_blocks(db, NULL, &n, &bytes);
	cr_assert_eq(n, 7);
	cr_assert_eq(bytes, 5364);
	cr_assert_eq(resolve(db, &t, (struct rd_filter){.type = "1"}, &f), 0);
	sum_blocks(db, &f, &n, &bytes);
	cr_assert_eq(bytes, 228);
	cr_assert_eq(resolve(db, &t, (struct rd_filter){.class_ = "app"}, &f), 0);
	sum_blocks(db, &f, &n, &bytes);
	cr_assert_eq(bytes, 1064);
	cr_assert_eq(n, 2);
	cr_assert_eq(resolve(db, &t, (struct rd_filter){.thread = "worker", .allocator = "new"}, &f), 0);
	sum_blocks(db, &f, &n, &bytes);
	cr_assert_eq(bytes, 4064);
	cr_assert_eq(resolve(db, &t, (struct rd_filter){.type = "list_node", .thread = "2"}, &f), 0);
	sum_blocks(db, &f, &n, &bytes);
	cr_assert_eq(bytes, 100);
	cr_assert_eq(resolve(db, &t, (struct rd_filter){.allocator = "0"}, &f), 0);
	sum_blocks(db, &f, &n, &bytes);
	cr_assert_eq(bytes, 1136);
	cr_assert_eq(n, 4);
	rd_tags_free(&t);
	rd_db_close(db);
}

Test(blocks, unknown_filter_is_not_found)
{
	char *msg;
	size_t len;
	struct rd_opts o = {.out = stdout, .err = open_memstream(&msg, &len)};
	rd_db_t *db;
	cr_assert_eq(rd_db_open(ui_fixture("basic"), &o, &db), 0);
	cr_assert_eq(rd_db_select(db, 1, RD_NEED_MAP), 0);
	struct rd_tags t;
	cr_assert_eq(rd_tags_load(db, &t), 0);
	struct rd_filter_ids f;
	cr_assert_eq(resolve(db, &t, (struct rd_filter){.type = "9"}, &f), RD_EXIT_NOTFOUND);
	cr_assert_eq(resolve(db, &t, (struct rd_filter){.class_ = "nope"}, &f), RD_EXIT_NOTFOUND);
	fclose(o.err);
	UI_HAS(msg, "snapshot 1 has no type '9'");
	UI_HAS(msg, "snapshot 1 has no class 'nope'");
	free(msg);
	rd_tags_free(&t);
	rd_db_close(db);
}

Test(names, tables_and_labels)
{
	rd_db_t *db = open_basic();
	cr_assert_eq(rd_db_select(db, 3, RD_NEED_ANY), 0);
	struct rd_tags t;
	cr_assert_eq(rd_tags_load(db, &t), 0);
	t.no_symbols = true;
	cr_assert_eq(t.types.n, 5);
	cr_assert_eq(t.threads.n, 3);
	cr_assert_eq(t.nmodules, 2);
	cr_assert_str_eq(rd_tag_name(db, &t, RD_TAG_ALLOCATOR, 6), "new[]");
	cr_assert_str_eq(rd_tag_name(db, &t, RD_TAG_CLASS, 99), "#99");
	cr_assert_str_eq(rd_thread_label(db, &t, 3), "3 pool");
	const char *where = "x";
	cr_assert_str_eq(rd_type_label(db, &t, 3, &where), "g_strdup+0x20 (libglib-2.0.so.0)");
	cr_assert_null(where);
	const struct rd_name *n = rd_name_find(&t.types, 2);
	cr_assert(n && n->has_site && n->site == 0x55555555511c && n->class_ == 1);
	n = rd_name_find(&t.classes, 2);
	cr_assert(n && n->module == NULL, "a registered class has no module");
	rd_tags_free(&t);
	rd_db_close(db);
}

/* A chunk damaged in each way the decoder checks: the scan stops with one
** line naming the snapshot and the chunk, exit status 3, never a crash. */
Test(blocks, damaged_chunks_are_reported)
{
	static const char *const damage[] = {
		"UPDATE block_chunk SET data = substr(data, 1, length(data) - 1)",
		"UPDATE block_chunk SET data = data || x'00'",
		"UPDATE block_chunk SET count = count + 1",
		"UPDATE block_chunk SET count = 0",
		"UPDATE block_chunk SET count = 100000",
		"UPDATE block_chunk SET count = 'many'",
		"UPDATE block_chunk SET data = x''",
		"UPDATE block_chunk SET data = 'text'",
		"UPDATE block_chunk SET data = x'ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff'",
		"UPDATE block_chunk SET data = zeroblob(length(data))"};
	for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
		const char *path = ui_fixture("basic");
		char err[256], *msg;
		cr_assert_eq(fx_exec(path, damage[i], err, sizeof err), 0, "%s", err);
		size_t len;
		FILE *out = open_memstream(&msg, &len);
		struct rd_opts o = {.out = stdout, .err = out};
		rd_db_t *db;
		cr_assert_eq(rd_db_open(path, &o, &db), 0);
		cr_assert_eq(rd_db_select(db, 1, RD_NEED_MAP), 0);
		rd_blocks_t it;
		struct rd_block b;
		cr_assert_eq(rd_blocks_open(db, NULL, &it), 0);
		int r;
		while ((r = rd_blocks_next(&it, &b)) == 1)
			;
		rd_blocks_close(&it);
		rd_db_close(db);
		fclose(out);
		cr_assert_eq(r, RD_EXIT_DB, "%s", damage[i]);
		UI_HAS(msg, "snapshot 1: the block chunk at 0x");
		UI_HAS(msg, "is damaged");
		cr_assert_eq(strchr(msg, '\n'), msg + strlen(msg) - 1, "one line: %s", msg);
		free(msg);
	}
}
