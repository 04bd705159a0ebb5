/*
** tool_fuzz_db.c — a libFuzzer target for the snapshot reader: the input is
** written to a scratch file and every read-only command runs on it, with
** its output thrown away.  Built by `make fuzz-inspect` (clang with
** -fsanitize=fuzzer,address,undefined), never by `make`; `make check` runs
** its seeds once (tests/fuzz/replay.sh).
**
** An input that starts with "SQL:" is not a database but SQL text: it is
** run on a fresh database of the current schema (errors ignored, a step
** budget against endless statements), its block rows encoded into chunks
** as the fixtures' are (tests/inspect/fx.c), and the commands read that.  This
** reaches odd values in valid files (NULLs, text in number columns,
** negative sizes, duplicate ids) that random bytes rarely get past
** PRAGMA quick_check with.
**
** Symbols (module files named by the input) and the control channel are
** switched off: the fuzzer must exercise the reader, not open whatever
** paths an input names.  Anything a command can hit on a damaged file is
** a message and an exit code; a crash, a leak or undefined behaviour here
** is a bug.
*/
#include "insp_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meminst-snapshot.h"
#include "fx.h"

static char fuzz_path[64];

static void fuzz_cleanup(void)
{
	unlink(fuzz_path);
}

static int fuzz_budget(void *arg)
{
	return ++*(int *)arg > 2000; /* x 1000 virtual machine steps */
}

static int fuzz_sql(const uint8_t *data, size_t size)
{
	char *sql = malloc(size + 1);
	memcpy(sql, data, size);
	sql[size] = 0;
	unlink(fuzz_path);
	sqlite3 *db = NULL;
	int steps = 0, r = -1;
	if (sqlite3_open(fuzz_path, &db) == SQLITE_OK) {
		sqlite3_progress_handler(db, 1000, fuzz_budget, &steps);
		char head[192];
		snprintf(head, sizeof head, "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; "
			 "PRAGMA application_id = %d; PRAGMA user_version = %d;",
			 MEMINST_SNAPSHOT_APP_ID, MEMINST_SNAPSHOT_VERSION);
		sqlite3_exec(db, head, NULL, NULL, NULL);
		sqlite3_exec(db, MEMINST_SNAPSHOT_SCHEMA, NULL, NULL, NULL);
		sqlite3_exec(db, FX_TEMP_BLOCK_TABLE, NULL, NULL, NULL);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		char err[256]; /* the fixtures' block rows, encoded as libmeminst does */
		fx_encode_blocks(db, err, sizeof err);
		r = 0;
	}
	sqlite3_close(db);
	free(sql);
	return r;
}

static int fuzz_write(const uint8_t *data, size_t size)
{
	if (!fuzz_path[0]) {
		snprintf(fuzz_path, sizeof fuzz_path, "/tmp/inspect-fuzz-%d.db", (int)getpid());
		atexit(fuzz_cleanup);
	}
	if (size >= 4 && memcmp(data, "SQL:", 4) == 0)
		return fuzz_sql(data + 4, size - 4);
	FILE *f = fopen(fuzz_path, "wb");
	if (!f)
		return -1;
	size_t n = fwrite(data, 1, size, f);
	return fclose(f) == 0 && n == size ? 0 : -1;
}

/* Each command line is run as given, by the command beside it; "@" stands
** for the scratch file.  One table, so a line cannot be run by another
** line's command (two lines added without theirs once shifted the rest). */
static const struct {
	int (*cmd)(int, char **, const struct rd_opts *);
	const char *argv[10];
} fuzz_lines[] = {
	{insp_cmd_list, {"list", "@", "--json"}},
	{insp_cmd_holes, {"holes", "@", "--all"}},
	{insp_cmd_holes, {"holes", "@", "--snapshot", "1", "--json", "--min", "16", "--limit", "3"}},
	{insp_cmd_limits, {"limits", "@", "--csv"}},
	{insp_cmd_limits, {"limits", "@", "--thread", "1", "--json"}},
	{insp_cmd_sum, {"sum", "@", "--type", "1"}},
	{insp_cmd_sum, {"sum", "@", "--class", "1", "--allocator", "0", "--csv"}},
	{insp_cmd_descr, {"descr", "@", "--json", "--limit", "200"}},
	{insp_cmd_top, {"top", "@", "--by", "class"}},
	{insp_cmd_top, {"top", "@", "--by", "site", "--json"}},
	{insp_cmd_top, {"top", "@", "--by", "thread", "--csv"}},
	{insp_cmd_top, {"top", "@", "--by", "leaked", "--json"}},
	{insp_cmd_sizes, {"sizes", "@", "--by", "site", "--csv"}},
	{insp_cmd_diff, {"diff", "@"}},
	{insp_cmd_diff, {"diff", "@", "--from", "1", "--to", "2", "--json"}},
	{insp_cmd_status, {"status", "@"}},
	{insp_cmd_status, {"status", "@", "--snapshot", "1", "--json"}},
	{insp_cmd_types, {"types", "@", "--csv"}},
	{insp_cmd_type, {"type", "@", "1"}},
	{insp_cmd_class, {"class", "@", "1", "--json"}},
	{insp_cmd_allocator, {"allocator", "@", "0"}},
	{insp_cmd_header_size, {"header-size", "@"}},
	{insp_cmd_sql, {"sql", "@", "SELECT snapshot, count(*), sum(size), max(seq) FROM meminst_blocks GROUP BY 1"}},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_write(data, size) != 0)
		return 0;
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	struct rd_opts o = {.out = null, .err = null, .no_symbols = true, .no_control = true};
	for (size_t i = 0; i < sizeof fuzz_lines / sizeof fuzz_lines[0]; i++) {
		char *argv[11] = {0};
		int argc = 0;
		for (; argc < 10 && fuzz_lines[i].argv[argc]; argc++) {
			const char *a = fuzz_lines[i].argv[argc];
			argv[argc] = (char *)(strcmp(a, "@") ? a : fuzz_path);
		}
		int r = fuzz_lines[i].cmd(argc, argv, &o);
		/* every exit code is one inspect(1) documents, and these command
		** lines are valid whatever the file holds: no usage error */
		if (r < 0 || r > RD_EXIT_LIVE || r == RD_EXIT_USAGE)
			abort();
	}
	fclose(null);
	return 0;
}
