/*
** prof_report.c — `inspect report`: time and memory of one run side by
** side, from a session database written by meminst(1).
**
**   run        the command, its duration and exit status, the settings
**   peak       the highest total of live bytes (max-ever, exact) and the
**              snapshot that came nearest to it, with its time
**   classes,   what was live at the peak, by class and by type (the
**   types      snapshot of the process with the highest total)
**   functions  the top functions by own time, with their accumulated time
**              and the bytes and blocks they allocated themselves (own)
**              and with everything they called (acc): exact from the trace
**              (calls and <alloc> events), else estimated from the timer
**              and allocation samples (prof_report_fns.c)
**   tracer     with an exact trace: the tracer's own cost per call or
**              return (measured at the program's start), its share of the
**              profile, what was taken off <alloc>, and the pauses kept
**              out of the program's functions (<preempted>, ...)
**              (prof_report_fns.c)
**
** Memory figures come from the snapshots (the timeline, the peak and exit
** snapshots); time and allocation per function from the trace the session
** stores.  A part the session does not have is said in one line.  A
** session of several processes is summarised first (prof_procs.c), and
** its parts are of the heaviest process, by memory and by time.
*/
#include "prof_int.h"

#include <stdlib.h>
#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))
#define REPORT_TOP 15

static const struct rd_option report_options[] = {
	RD_OPTION_PID("the process (default: the session's program; a session of\nseveral: each one's weight, then the heaviest)"),
	RD_OPTION_IMAGE,
	RD_OPTION_LIMIT("N rows per table (default 15)"),
	RD_OPTION_STACKS("the frames of the first N sites of each table under them\n"
			   "(text default 5; JSON and CSV: every row)"),
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec report_spec = {
	"report", "[options] SESSION",
	"Time and memory of one run side by side, from a session written by\n"
	"meminst(1): the run, the peak of live memory and when it came, what was\n"
	"live at the peak by class and by type, and the top functions by own time\n"
	"with the bytes they allocated themselves (own) and with their callees (acc);\n"
	"with an exact trace, what tracing cost per call and what was taken off or\n"
	"kept out of the functions' times.\n",
	report_options, 1, 1,
};

static const struct rd_col run_cols[] = {
	{"command", "command", RD_K_STR, 0},
	{"pid", "pid", RD_K_INT, 0},
	{"duration_ms", "duration", RD_K_DUR, 0},
	{"exit_code", "exit code", RD_K_INT, RD_C_OPTIONAL},
	{"exit_signal", "killed by signal", RD_K_INT, RD_C_OPTIONAL},
	{"mode", "mode", RD_K_STR, 0},
	{"backend", "backend", RD_K_STR, 0},
	{"trace_clock", "trace clock", RD_K_STR, RD_C_OPTIONAL},
	{"sample_hz", "sampling (Hz)", RD_K_INT, RD_C_OPTIONAL},
	{"processes", "processes", RD_K_INT, 0},
};

static const struct rd_col peak_cols[] = {
	{"max_ever_bytes", "peak live bytes", RD_K_SIZE, 0},
	{"snapshot", "nearest snapshot", RD_K_INT, 0},
	{"snapshot_bytes", "live then", RD_K_SIZE, 0},
	{"snapshot_blocks", "blocks then", RD_K_INT, 0},
	{"elapsed_ms", "taken at", RD_K_DUR, 0},
	{"exit_bytes", "live at exit", RD_K_SIZE, RD_C_OPTIONAL},
	{"snapshots", "snapshots stored", RD_K_INT, 0},
	{"snapshot_pause_ms", "their pauses", RD_K_DUR, 0},
	{"since_ms", "counting since", RD_K_TIME, RD_C_OPTIONAL}, /* started dormant: its first switch on */
};

static const struct rd_col live_cols[] = {
	{"id", "no", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"share", "share", RD_K_PCT, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
	{"inlined", "inlined", RD_K_STR, RD_C_DATA_ONLY},
	{"stack", "stack", RD_K_STACK, 0},
};

/* ---------------------------------------------------------------- run -- */

/* Column c of the row st is on as a cell: a null for SQL's NULL, else its
** text (str) or its integer. */
static void report_put_col(rd_table_t *t, rd_db_t *db, sqlite3_stmt *st, int c, bool str)
{
	if (sqlite3_column_type(st, c) == SQLITE_NULL)
		rd_put_null(t);
	else if (str)
		rd_put_str(t, rd_col_text(db, st, c));
	else
		rd_put_int(t, sqlite3_column_int64(st, c));
}

/* The run, or with --pid another process of it: that process's command
** line, and no duration or exit status (the session has the program's
** only). */
static int report_run(rd_doc_t *d, rd_db_t *db, int64_t pid)
{
	sqlite3_stmt *st = rd_db_prepare(db,
	    "SELECT CASE WHEN r.pid = ?1 THEN r.argv ELSE coalesce((SELECT CASE WHEN p.cmdline <> '' THEN "
	    " p.cmdline ELSE p.exe END FROM session_process p WHERE p.pid = ?1), r.argv) END, "
	    " CASE WHEN r.pid = ?1 THEN r.duration_ns END, CASE WHEN r.pid = ?1 THEN r.exit_code END, "
	    " CASE WHEN r.pid = ?1 THEN r.exit_signal END, mode, backend, trace_clock, sample_hz, "
	    " (SELECT count(*) FROM session_process) FROM session_run r");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		rd_table_t *t = rd_doc_table(d, "run", run_cols, NCOLS(run_cols), RD_T_SINGLE);
		rd_table_title(t, "run:");
		rd_row(t);
		rd_put_str(t, rd_col_text(db, st, 0));
		rd_put_int(t, pid);
		for (int c = 1; c <= 3; c++)
			report_put_col(t, db, st, c, false);
		rd_put_str(t, rd_col_text(db, st, 4));
		rd_put_str(t, rd_col_text(db, st, 5));
		report_put_col(t, db, st, 6, true);
		report_put_col(t, db, st, 7, false);
		rd_put_int(t, sqlite3_column_int64(st, 8));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the run");
}

static const struct rd_col note_cols[] = {
	{"pid", "pid", RD_K_INT, 0},
	{"message", "message", RD_K_STR, 0},
};

/* What libmeminst could not say on the program's stderr (it was closed or
** replaced): a snapshot that failed, a seccomp filter.  Sessions written
** before session_note existed have none. */
static int report_notes(rd_doc_t *d, rd_db_t *db, bool *sampling_off)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
					       "name = 'session_note'");
	int have = st && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (!have)
		return st ? 0 : RD_EXIT_DB;
	if (!(st = rd_db_prepare(db, "SELECT pid, line FROM session_note ORDER BY pid, seq")))
		return RD_EXIT_DB;
	rd_table_t *t = NULL;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!t) {
			t = rd_doc_table(d, "notes", note_cols, NCOLS(note_cols), 0);
			rd_table_title(t, "notes of meminst (lines the program's stderr may not have shown):");
		}
		rd_row(t);
		rd_put_int(t, sqlite3_column_int64(st, 0));
		const char *line = rd_col_text(db, st, 1);
		*sampling_off |= strstr(line, "sampling") != NULL;
		rd_put_str(t, line);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "reading the notes");
}

/* The program's pid from session_run (a session without snapshots). */
static int report_session_pid(rd_db_t *db, int64_t *pid)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT pid FROM session_run");
	if (!st)
		return RD_EXIT_DB;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*pid = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rd_db_fail(db, "reading the run");
}

/* Whether pid is one of the session's processes (--pid names one). */
static bool report_known_pid(rd_db_t *db, int64_t pid)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT 1 FROM session_process WHERE pid = ?1 UNION ALL "
					       "SELECT 1 FROM session_run WHERE pid = ?1");
	if (!st)
		return false;
	sqlite3_bind_int64(st, 1, pid);
	bool known = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return known;
}

/* --------------------------------------------------------------- peak -- */

/* Where the peak is read from: the snapshot nearest to it (the highest
** total), and whether that one holds it (90% or more of the max-ever);
** if not, the process's last snapshot, whose max-ever figures are used. */
struct report_peak {
	int64_t nearest, last;
	uint64_t bytes, max_ever;
	bool held;
};

static int64_t report_last_snapshot(rd_db_t *db, int64_t pid)
{
	return rd_db_int(db, "SELECT max(id) FROM snapshot WHERE pid = ?1", pid, 0);
}

/* The snapshot of pid with the highest total, and the exact max-ever. */
static int report_peak(rd_doc_t *d, rd_db_t *db, int64_t pid, const char *of, struct report_peak *pk)
{
	sqlite3_stmt *st = rd_db_prepare(db,
	    "SELECT s.id, s.elapsed_ns, t.sizes_current, t.blocks_current, "
	    " (SELECT max(u.sizes_max_ever) FROM status u JOIN snapshot v ON v.id = u.snapshot "
	    "  WHERE v.pid = s.pid AND u.kind = 'total'), "
	    " (SELECT u.sizes_current FROM status u JOIN snapshot v ON v.id = u.snapshot "
	    "  WHERE v.pid = s.pid AND u.kind = 'total' AND v.trigger = 'exit' ORDER BY v.id DESC LIMIT 1), "
	    " (SELECT count(*) FROM snapshot v WHERE v.pid = s.pid), "
	    " (SELECT coalesce(sum(v.pause_ns), 0) FROM snapshot v WHERE v.pid = s.pid) "
	    "FROM snapshot s JOIN status t ON t.snapshot = s.id AND t.kind = 'total' AND t.id = 0 "
	    "WHERE s.pid = ? ORDER BY t.sizes_current DESC, s.id LIMIT 1");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, pid);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		pk->nearest = sqlite3_column_int64(st, 0);
		pk->bytes = (uint64_t)sqlite3_column_int64(st, 2);
		uint64_t max_ever = pk->max_ever = (uint64_t)sqlite3_column_int64(st, 4);
		pk->held = pk->bytes >= max_ever - max_ever / 10;
		pk->last = report_last_snapshot(db, pid);
		rd_table_t *t = rd_doc_table(d, "peak", peak_cols, NCOLS(peak_cols), RD_T_SINGLE);
		rd_table_title(t, "memory%s:", of);
		rd_row(t);
		rd_put_uint(t, max_ever);
		rd_put_int(t, pk->nearest);
		rd_put_uint(t, pk->bytes);
		rd_put_int(t, sqlite3_column_int64(st, 3));
		rd_put_int(t, sqlite3_column_int64(st, 1));
		report_put_col(t, db, st, 5, false);
		/* what the snapshots cost the program (in a trace: <snapshot>) */
		rd_put_int(t, sqlite3_column_int64(st, 6));
		rd_put_int(t, sqlite3_column_int64(st, 7));
		int64_t since = rd_since_of_pid(rd_db_sqlite(db), pid);
		if (since)
			rd_put_int(t, since);
		else
			rd_put_null(t);
		/* a peak snapshot is taken when the total comes down from its top
		** (5% below it at most by default): one holds 90% or more of the
		** peak unless the run ended at its top or stored none */
		if (!pk->held)
			rd_table_note(t, "(no snapshot holds the peak: the one that came nearest holds %.0f%% of "
				       "it; a shorter --interval catches more)",
				       max_ever ? 100.0 * (double)pk->bytes / (double)max_ever : 0.0);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		pk->nearest = 0;
		rd_table_t *t = rd_doc_table(d, "peak", peak_cols, NCOLS(peak_cols), RD_T_SINGLE);
		rd_table_title(t, "memory%s:", of);
		rd_table_note(t, "(no snapshot of this process: the run was made with --no-memory, or the "
			       "process stored none)");
		return 0;
	}
	return rc == SQLITE_ROW ? 0 : rd_db_fail(db, "reading the peak");
}

/* heaptrack_print's summary from the event counters (rd_events.c);
** nothing from a file of a libmeminst without them. */
static const struct rd_col events_cols[] = {
	{"calls", "calls to allocation functions", RD_K_INT, 0},
	{"temporary", "temporary allocations", RD_K_INT, 0},
	{"allocated_bytes", "bytes allocated", RD_K_SIZE, 0},
	{"peak_bytes", "peak heap (live bytes)", RD_K_SIZE, 0},
	{"peak_rss_bytes", "peak RSS", RD_K_SIZE, RD_C_OPTIONAL},
	{"leaked_bytes", "leaked (live at exit)", RD_K_SIZE, RD_C_OPTIONAL},
};

static int report_events(rd_doc_t *d, rd_db_t *db, int64_t pid)
{
	struct rd_events_snaps p;
	struct rd_events_summary e;
	int r;
	if (!rd_events_stored(db))
		return 0;
	if ((r = rd_events_pick(db, pid, 0, &p)))
		return r == RD_EXIT_NOTFOUND ? 0 : r;
	if ((r = rd_events_summary(db, &p, &e)))
		return r;
	rd_table_t *t = rd_doc_table(d, "allocations", events_cols, NCOLS(events_cols), RD_T_SINGLE);
	rd_table_title(t, "allocations (as heaptrack_print's summary):");
	rd_row(t);
	rd_put_uint(t, e.calls);
	rd_put_uint(t, e.temporary);
	rd_put_uint(t, e.allocated);
	rd_put_uint(t, e.peak);
	if (e.has_rss)
		rd_put_uint(t, e.peak_rss);
	else
		rd_put_null(t);
	if (e.has_exit)
		rd_put_uint(t, e.leaked);
	else
		rd_put_null(t);
	return 0;
}

/* What was live at the peak, by class or by type: the current figures of
** the snapshot nearest to the peak, or, when none came near (held), each
** entry's own max-ever in the process's last snapshot. */
static int report_live(rd_doc_t *d, struct rd_session *s, const struct rd_args *a, int64_t snap,
		       bool types, uint64_t total, size_t limit, bool held)
{
	sqlite3_stmt *st = rd_db_prepare(s->db, held
	    ? "SELECT id, sizes_current, blocks_current FROM status "
	      "WHERE snapshot = ? AND kind = ? AND sizes_current > 0 "
	      "ORDER BY sizes_current DESC, id LIMIT ?"
	    : "SELECT id, sizes_max_ever, blocks_max_ever FROM status "
	      "WHERE snapshot = ? AND kind = ? AND sizes_max_ever > 0 "
	      "ORDER BY sizes_max_ever DESC, id LIMIT ?");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, snap);
	sqlite3_bind_text(st, 2, types ? "types" : "classes", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)limit);
	rd_table_t *t = rd_doc_table(d, types ? "peak_types" : "peak_classes", live_cols,
					 NCOLS(live_cols), 0);
	if (held)
		rd_table_title(t, "live at the peak, by %s:", types ? "type" : "class");
	else
		rd_table_title(t, "peak of each %s (max-ever; no snapshot came near the total's peak):",
				 types ? "type" : "class");
	int rc;
	for (size_t row = 0; (rc = sqlite3_step(st)) == SQLITE_ROW; row++) {
		int64_t id = sqlite3_column_int64(st, 0);
		uint64_t bytes = (uint64_t)sqlite3_column_int64(st, 1);
		const char *where = NULL;
		rd_row(t);
		rd_put_int(t, id);
		rd_put_str(t, types ? rd_type_label(s->db, &s->tags, id, &where)
				      : rd_tag_name(s->db, &s->tags, RD_TAG_CLASS, id));
		rd_put_uint(t, bytes);
		rd_put_pct(t, total ? 100.0 * (double)bytes / (double)total : 0);
		rd_put_int(t, sqlite3_column_int64(st, 2));
		rd_put_str(t, where);
		rd_put_str(t, types ? rd_type_chain(s->db, &s->tags, id) : NULL);
		rd_put_str(t, types && rd_stack_row(a, row, RD_STACKS_DEFAULT)
					? rd_type_stack(s->db, &s->tags, id) : NULL);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(s->db, "reading the peak snapshot");
}

static const struct rd_col exit_cols[] = {
	{"id", "no", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"name", "name", RD_K_STR, 0},
	{"location", "location", RD_K_LOC, RD_C_OPTIONAL},
	{"inlined", "inlined", RD_K_STR, RD_C_DATA_ONLY},
	{"stack", "stack", RD_K_STACK, 0},
	RD_LIVE_COLS,
};

/*
** What was never freed, by type (an automatic type is a site, or with
** site_depth a short stack): the status of the process's last exit
** snapshot, in either mode, with the traced function that allocated
** them when the trace says (live, m).  Its tables replace the peak's in s.
*/
static int report_exit(rd_doc_t *d, struct rd_session *s, const struct rd_args *a, int64_t pid, size_t limit,
		       const struct prof_live *live, const struct prof_model *m)
{
	int64_t snap = prof_live_exit_snapshot(s->db, pid);
	sqlite3_stmt *st;
	if (!snap)
		return 0;
	if (s->tags_loaded)
		rd_tags_free(&s->tags);
	s->tags_loaded = false;
	int r = rd_db_select(s->db, snap, RD_NEED_ANY);
	if (r || (r = rd_tags_load(s->db, &s->tags)))
		return r;
	s->tags_loaded = true;
	s->tags.no_symbols = s->tags.no_symbols || rd_db_opts(s->db)->no_symbols;
	st = rd_db_prepare(s->db, "SELECT id, sizes_current, blocks_current FROM status WHERE snapshot = ? AND "
				    "kind = 'types' AND sizes_current > 0 ORDER BY sizes_current DESC, id LIMIT ?");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, snap);
	sqlite3_bind_int64(st, 2, (int64_t)limit);
	rd_table_t *t = rd_doc_table(d, "live_at_exit", exit_cols, NCOLS(exit_cols), 0);
	rd_table_title(t, "still live at exit (snapshot %lld), by site:", (long long)snap);
	int rc;
	for (size_t row = 0; (rc = sqlite3_step(st)) == SQLITE_ROW; row++) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *where;
		rd_row(t);
		rd_put_int(t, id);
		rd_put_uint(t, (uint64_t)sqlite3_column_int64(st, 1));
		rd_put_int(t, sqlite3_column_int64(st, 2));
		rd_put_str(t, rd_type_label(s->db, &s->tags, id, &where));
		rd_put_str(t, where);
		rd_put_str(t, rd_type_chain(s->db, &s->tags, id));
		rd_put_str(t, rd_stack_row(a, row, RD_STACKS_DEFAULT) ? rd_type_stack(s->db, &s->tags, id) : NULL);
		prof_live_put(t, live, m, id, rd_db_pool(s->db));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(s->db, "reading the exit snapshot");
}


/*
** The session's trace of pid (time_pid: the functions part), with the
** blocks live at exit of mem_pid attached when it is the same process,
** else read a second time for them (join); *have: a trace was found.
*/
static int report_read(const char *path, const struct rd_opts *o, struct rd_session *s, int64_t time_pid,
		       int64_t mem_pid, bool no_files, struct prof_input *in, struct prof_live *live,
		       struct prof_input *join, bool *have)
{
	int64_t prog = 0;
	int64_t snap = mem_pid ? prof_live_exit_snapshot(s->db, mem_pid) : 0;
	int r = snap ? prof_live_load(live, s->db, snap) : 0;
	if (r)
		return r;
	if (!time_pid && (r = report_session_pid(s->db, &prog)))
		return r;
	bool same = (time_pid ? time_pid : prog) == mem_pid;
	in->path = path;
	in->pid = time_pid;
	in->no_files = no_files;
	in->live = same && live->n ? live : NULL;
	r = prof_input_read(in, o, PROF_IN_MODEL | PROF_IN_SAMPLES | PROF_IN_IMAGES);
	*have = r != RD_EXIT_NOTFOUND; /* no trace: said by rd_strace_open */
	if (r && (r != RD_EXIT_NOTFOUND || rd_strace_last().refused)) /* --image K the process has not */
		return r;
	return prof_live_join(live, path, o, mem_pid, no_files, same || !*have ? NULL : join);
}

/* ------------------------------------------------------------ command -- */

/*
** Which processes the parts are of.  --pid: that one for both.  A session
** of several processes: the memory part is the heaviest by peak, the time
** part the heaviest by samples (else calls), and the table of processes
** says what each one weighs; one process: the program's, as before.
*/
static int report_processes(rd_db_t *db, const char *path, const struct rd_opts *o, int64_t given,
		       struct prof_procs *ps, int64_t *mem_pid, int64_t *time_pid, bool *several)
{
	int r = 0;
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT count(*) FROM session_process");
	if (!st)
		return RD_EXIT_DB; /* said once: the run's read would say it again */
	*several = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 1;
	sqlite3_finalize(st);
	if (*several && !given && !(r = prof_procs_read(path, o, ps))) {
		const struct prof_proc *mem = prof_procs_heaviest(ps, false), *time = prof_procs_heaviest(ps, true);
		*mem_pid = mem ? mem->pid : 0;
		*time_pid = time ? time->pid : 0;
	}
	if (r)
		return r;
	if (given)
		*mem_pid = *time_pid = given;
	if (!*mem_pid && (r = rd_db_main_pid(db, 0, mem_pid)) == RD_EXIT_NOTFOUND) /* no snapshot */
		r = report_session_pid(db, mem_pid);
	return r;
}

/* The processes of the session, heaviest by peak first, and in text which
** ones the memory and time parts below are of. */
static void report_heaviest(rd_doc_t *d, const struct prof_procs *ps, size_t limit, int64_t mem_pid,
			    int64_t time_pid)
{
	rd_table_t *t = prof_procs_table(d, ps, false, limit);
	char mem[96] = "", time[96] = "";
	if (mem_pid)
		snprintf(mem, sizeof mem, "the heaviest by peak live bytes: pid %lld (memory below); ",
			 (long long)mem_pid);
	if (time_pid)
		snprintf(time, sizeof time, "by %s: pid %lld (functions below); ",
			 prof_procs_find(ps, time_pid)->samples ? "samples" : "calls", (long long)time_pid);
	rd_table_note(t, "%s%s--pid PID for one process%s", mem, time,
			limit && limit < ps->n ? ", --limit 0 for them all" : "");
}

int prof_cmd_report(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&report_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	if (a.image)
		rd_strace_want_image(a.image - 1);
	if ((r = rd_input_check(o, a.pos[0])))
		return r;
	if (prof_is_trace(a.pos[0]) == 1) {
		rd_errf(o->err, "inspect: %s: a trace file; inspect report reads a session (meminst -o FILE), "
			"inspect analyse reads traces\n", a.pos[0]);
		return RD_EXIT_USAGE;
	}
	size_t limit = a.limit >= 0 ? (size_t)a.limit : REPORT_TOP;
	struct rd_session s = {0};
	struct report_peak pk = {0};
	/* not rd_session_open: a time-only session (--no-memory) has no snapshot */
	if ((r = rd_db_open(a.pos[0], o, &s.db)))
		return r;
	if (!rd_is_session(a.pos[0])) {
		rd_errf(o->err, "inspect: %s: a snapshot database, not a session (inspect status and timeline "
			"read it; meminst -o FILE writes sessions)\n", a.pos[0]);
		rd_session_close(&s);
		return RD_EXIT_DB;
	}
	if ((r = rd_session_run_check(s.db))) {
		rd_session_close(&s);
		return r;
	}
	if (a.pid && !report_known_pid(s.db, a.pid)) {
		rd_errf(o->err, "inspect: %s: no process %lld in this session\n", a.pos[0], (long long)a.pid);
		rd_session_close(&s);
		return RD_EXIT_NOTFOUND;
	}
	rd_doc_t *d = rd_doc_new(o, &a);
	int64_t mem_pid = 0, time_pid = 0, run_pid = a.pid;
	bool several = false, summary;
	char of[96] = "";
	struct prof_procs ps = {0};
	struct prof_input in = {0}, join = {0};
	struct prof_live live = {0};
	bool have_trace = false;
	r = report_processes(s.db, a.pos[0], o, a.pid, &ps, &mem_pid, &time_pid, &several);
	if (!r)
		r = report_read(a.pos[0], o, &s, time_pid, mem_pid, a.no_symbols || o->no_symbols, &in, &live, &join,
				&have_trace);
	summary = several && !a.pid;
	if (summary)
		snprintf(of, sizeof of, " of pid %lld", (long long)mem_pid);
	if (!r && !run_pid)
		r = report_session_pid(s.db, &run_pid);
	if (!r)
		r = report_run(d, s.db, run_pid);
	if (!r && mem_pid) /* killed? and the last map it left */
		r = rd_end_table(d, s.db, mem_pid);
	bool sampling_off = false;
	if (!r)
		r = report_notes(d, s.db, &sampling_off);
	if (!r && summary)
		report_heaviest(d, &ps, limit, mem_pid, time_pid);
	if (!r)
		prof_procs_images(d, &in.images, summary ? &ps : NULL);
	if (!r && !(r = report_peak(d, s.db, mem_pid, of, &pk)) && pk.nearest &&
	    !(r = report_events(d, s.db, mem_pid))) {
		int64_t snap = pk.held ? pk.nearest : pk.last;
		uint64_t total = pk.held ? pk.bytes : pk.max_ever;
		if (!(r = rd_db_select(s.db, snap, RD_NEED_ANY)) && !(r = rd_session_tags(&s, &a)) &&
		    !(r = report_live(d, &s, &a, snap, false, total, limit, pk.held)) &&
		    !(r = report_live(d, &s, &a, snap, true, total, limit, pk.held)))
			r = report_exit(d, &s, &a, mem_pid, limit, &live, join.have_model ? &join.model : &in.model);
		if (!r)
			r = prof_report_leaks(d, &s, &a, mem_pid, limit);
	}
	if (!r && mem_pid)
		r = rd_rss_section(d, s.db, o, mem_pid, (int64_t)limit);
	if (!r && have_trace)
		prof_report_functions(d, a.pos[0], o, limit, &in, sampling_off);
	if (!r)
		r = rd_doc_print(d);
	prof_input_free(&in);
	prof_input_free(&join);
	prof_live_free(&live);
	prof_procs_free(&ps);
	rd_doc_free(d);
	rd_session_close(&s);
	return r;
}
