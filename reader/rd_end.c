/*
** rd_end.c — how a process ended and which of its snapshots is the last:
** the "end" table of `inspect status` and `inspect report`.
**
** The exit status is known only for the program the launcher started (its
** wait status, session_run); that it was the OOM killer, from the note the
** launcher adds when its memory cgroup's oom_kill count rose during the
** run (session_note, RD_OOM_NOTE).  Otherwise an exit snapshot says the
** process went through meminst's exit; a file whose last snapshot of the
** process is another (snapshot_at=rss:, cgroup:, interval=) has no exit
** record: the process was killed, or is still running, or had no exit in
** snapshot_at.
*/
#include "rd_int.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

static const struct rd_col end_cols[] = {
	{"pid", "pid", RD_K_INT, 0},
	{"ended", "ended", RD_K_STR, 0},
	{"exit_code", "exit status", RD_K_INT, RD_C_OPTIONAL},
	{"signal", "signal", RD_K_INT, RD_C_OPTIONAL},
	{"oom_killed", "OOM killer", RD_K_BOOL, RD_C_OPTIONAL},
	{"last_snapshot", "last snapshot", RD_K_INT, 0},
	{"last_trigger", "its trigger", RD_K_STR, 0},
	{"last_time", "taken at", RD_K_TIME, 0},
	{"last_elapsed_ms", "after", RD_K_DUR, 0},
	{"last_bytes", "live then", RD_K_SIZE, 0},
	{"last_map", "last map", RD_K_INT, RD_C_OPTIONAL},
	{"last_map_trigger", "map trigger", RD_K_STR, RD_C_OPTIONAL},
	{"last_map_time", "map taken at", RD_K_TIME, RD_C_OPTIONAL},
};

static int64_t end_int(rd_db_t *db, const char *sql, int64_t pid, int64_t none)
{
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	if (!st)
		return none;
	sqlite3_bind_int64(st, 1, pid);
	if (sqlite3_bind_parameter_count(st) == 3) { /* the OOM note's beginning */
		sqlite3_bind_int(st, 2, (int)strlen(RD_OOM_NOTE));
		sqlite3_bind_text(st, 3, RD_OOM_NOTE, -1, SQLITE_STATIC);
	}
	int64_t v = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL
		    ? sqlite3_column_int64(st, 0) : none;
	sqlite3_finalize(st);
	return v;
}

/* The program's exit status or signal, when pid is the launcher's child
** (-1 each when unknown); whether the launcher noted an OOM kill. */
static void end_status(rd_db_t *db, int64_t pid, int64_t *code, int64_t *sig, bool *oom)
{
	*code = *sig = -1;
	*oom = false;
	if (end_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'session_run' AND ?1 = ?1", pid, 0) <= 0)
		return;
	*code = end_int(db, "SELECT exit_code FROM session_run WHERE pid = ?1", pid, -1);
	*sig = end_int(db, "SELECT exit_signal FROM session_run WHERE pid = ?1", pid, -1);
	*oom = end_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'session_note' AND ?1 = ?1", pid, 0) > 0 &&
	       end_int(db, "SELECT count(*) FROM session_note WHERE pid = ?1 AND substr(line, 1, ?2) = ?3", pid, 0) > 0;
}

int rd_end_table(rd_doc_t *d, rd_db_t *db, int64_t pid)
{
	/* live bytes: of the map, or of the status total (a status snapshot) */
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT s.id, s.trigger, s.time_ns, s.elapsed_ns, CASE WHEN "
		"s.content = 'map' THEN s.bytes ELSE coalesce((SELECT sizes_current FROM status t WHERE "
		"t.snapshot = s.id AND t.kind = 'total'), s.bytes) END, m.id, m.trigger, m.time_ns FROM snapshot s "
		"LEFT JOIN (SELECT id, trigger, time_ns FROM snapshot WHERE pid = ?1 AND content = 'map' "
		"ORDER BY id DESC LIMIT 1) m WHERE s.pid = ?1 ORDER BY s.id DESC LIMIT 1");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the last snapshot");
	}
	int64_t code, sig;
	bool oom;
	end_status(db, pid, &code, &sig, &oom);
	const char *trigger = rd_col_text(db, st, 1);
	char ended[160];
	if (code >= 0)
		snprintf(ended, sizeof ended, "exited with status %lld", (long long)code);
	else if (sig > 0 && oom)
		snprintf(ended, sizeof ended, "killed by the kernel's OOM killer (signal %lld, SIGKILL)", (long long)sig);
	else if (sig > 0)
		snprintf(ended, sizeof ended, "killed by signal %lld (SIG%s)", (long long)sig,
			 sigabbrev_np((int)sig) ? sigabbrev_np((int)sig) : "?");
	else if (!strcmp(trigger, "exit"))
		snprintf(ended, sizeof ended, "exited (its exit snapshot is the last)");
	else
		snprintf(ended, sizeof ended, "no exit record: the process ended without meminst's exit (killed?)");
	rd_table_t *t = rd_doc_table(d, "end", end_cols, NCOLS(end_cols), RD_T_SINGLE);
	rd_table_title(t, "end:");
	rd_row(t);
	rd_put_int(t, pid);
	rd_put_str(t, ended);
	if (code >= 0)
		rd_put_int(t, code);
	else
		rd_put_null(t);
	if (sig > 0)
		rd_put_int(t, sig);
	else
		rd_put_null(t);
	if (sig > 0)
		rd_put_int(t, oom);
	else
		rd_put_null(t);
	rd_put_int(t, sqlite3_column_int64(st, 0));
	rd_put_str(t, trigger);
	rd_put_int(t, sqlite3_column_int64(st, 2));
	rd_put_int(t, sqlite3_column_int64(st, 3));
	rd_put_uint(t, (uint64_t)sqlite3_column_int64(st, 4));
	/* the last map, when the last snapshot has none (the launcher's
	** timeline snapshots are status only) */
	bool other = sqlite3_column_type(st, 5) != SQLITE_NULL &&
		     sqlite3_column_int64(st, 5) != sqlite3_column_int64(st, 0);
	for (int c = 5; c <= 7; c++)
		if (!other)
			rd_put_null(t);
		else if (c == 6)
			rd_put_str(t, rd_col_text(db, st, c));
		else
			rd_put_int(t, sqlite3_column_int64(st, c));
	sqlite3_finalize(st);
	return 0;
}
