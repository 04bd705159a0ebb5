/*
** prof_db.c — the profile database (<meminst-profile.h>, meminst-profile(5)):
** written by `inspect profile -o`, read by `inspect analyse`.
**
** The file is written beside its final name and renamed over it once
** complete, so a failed write never leaves half a profile; an existing file
** is replaced only when it is itself a meminst profile.
*/
#include "prof_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meminst-profile.h"

static int db_sqlerr(const struct rd_opts *o, const char *path, sqlite3 *db, const char *what)
{
	rd_errf(o->err, "inspect: %s: %s: %s\n", path, what, rd_sql_msg(db));
	return RD_EXIT_DB;
}

/* 1: a profile of ours, 0: something else, -1: cannot be opened as SQLite. */
int prof_db_is_profile(const char *path)
{
	sqlite3 *db = NULL;
	int r = -1;
	if ((db = rd_sqlite_connect(path)) && sqlite3_errcode(db) == SQLITE_OK) {
		sqlite3_stmt *st = NULL;
		int64_t app = 0, ver = 0;
		r = 0;
		if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			app = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		st = NULL;
		if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			ver = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		r = (uint32_t)app == MEMINST_PROFILE_APP_ID && MEMINST_PROFILE_USER_FAMILY(ver);
	}
	sqlite3_close(db);
	return r;
}

/* ------------------------------------------------------------ writing -- */

static int db_exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static void db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static int db_meta(sqlite3 *db, const struct prof_model *m)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "INSERT INTO profile_meta VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	const char *texts[][2] = {{"source", m->source}, {"clock", prof_clock_name(m->clock)},
				  {"exe", m->exe}, {"cmdline", m->cmdline}};
	const struct { const char *k; int64_t v; } ints[] = {
		{"schema", MEMINST_PROFILE_VERSION}, {"pid", m->pid}, {"events", (int64_t)m->events},
		{"lost", (int64_t)m->lost}, {"untraced", (int64_t)m->untraced},
		{"threads", (int64_t)m->nthreads}, {"cnt", (int64_t)m->cnt}, {"acc_ns", m->acc},
		{"own_ns", m->own}};
	int rc = 0;
	for (size_t i = 0; i < 4 && !rc; i++) {
		db_bind_text(st, 1, texts[i][0]);
		db_bind_text(st, 2, texts[i][1]);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st);
	}
	for (size_t i = 0; i < sizeof ints / sizeof ints[0] && !rc; i++) {
		db_bind_text(st, 1, ints[i].k);
		sqlite3_bind_int64(st, 2, ints[i].v);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st);
	}
	const struct prof_tcost *c = &m->cost;
	const struct { const char *k; double v; } reals[] = {
		{"ns_per_tick", m->ns_per_tick}, {"tracer_call_ns", c->call_ns}, {"tracer_alloc_ns", c->alloc_ns},
		{"tracer_calls", (double)c->calls}, {"tracer_allocs", (double)c->allocs},
		{"tracer_hooks_ns", (double)c->hooks_ns}, {"tracer_alloc_taken_ns", (double)c->alloc_taken_ns},
		{"tracer_alloc_out_ns", c->alloc_out_ns}, {"tracer_taken_ns", (double)c->taken_ns},
		{"tracer_raw_own_ns", (double)c->raw_own_ns}, {"tracer_compensated", c->compensated},
		{"tracer_failed", c->failed}, {"tracer_mi_apart", c->mi_apart}, {"tracer_mi_calls", (double)c->mi_calls},
		{"tracer_mi_ns", (double)c->mi_ns}, {"tracer_scale", c->scale}};
	/* the tracer's cost only when the trace said it */
	for (size_t i = 0; i < (c->known ? sizeof reals / sizeof reals[0] : 1) && !rc; i++) {
		sqlite3_bind_text(st, 1, reals[i].k, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 2, reals[i].v);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int db_functions(sqlite3 *db, const struct prof_model *m)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "INSERT INTO profile_function VALUES(?, ?, ?, ?, ?, ?)", -1, &st, NULL))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < m->nfuncs && !rc; i++) {
		const struct prof_func *f = &m->funcs[i];
		sqlite3_bind_int64(st, 1, (int64_t)i);
		sqlite3_bind_int64(st, 2, (int64_t)f->addr);
		db_bind_text(st, 3, f->name);
		db_bind_text(st, 4, f->file);
		if (f->file)
			sqlite3_bind_int(st, 5, f->line);
		else
			sqlite3_bind_null(st, 5);
		db_bind_text(st, 6, f->module);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* The four memory columns from column `col` on. */
static void db_bind_mem(sqlite3_stmt *st, int col, const struct eng_mem *m)
{
	sqlite3_bind_int64(st, col, (int64_t)m->own_bytes);
	sqlite3_bind_int64(st, col + 1, (int64_t)m->own_blocks);
	sqlite3_bind_int64(st, col + 2, (int64_t)m->acc_bytes);
	sqlite3_bind_int64(st, col + 3, (int64_t)m->acc_blocks);
}

static struct eng_mem db_column_mem(sqlite3_stmt *st, int col)
{
	return (struct eng_mem){(uint64_t)sqlite3_column_int64(st, col),
				 (uint64_t)sqlite3_column_int64(st, col + 1),
				 (uint64_t)sqlite3_column_int64(st, col + 2),
				 (uint64_t)sqlite3_column_int64(st, col + 3)};
}

static int db_thread(sqlite3 *db, sqlite3_stmt *const st[3], const struct prof_mthread *t)
{
	sqlite3_bind_int64(st[0], 1, t->thread);
	sqlite3_bind_int64(st[0], 2, t->tid);
	sqlite3_bind_int64(st[0], 3, t->parent);
	db_bind_text(st[0], 4, t->name);
	sqlite3_bind_int64(st[0], 5, (int64_t)t->cnt);
	sqlite3_bind_int64(st[0], 6, t->acc);
	sqlite3_bind_int64(st[0], 7, t->own);
	int rc = sqlite3_step(st[0]) == SQLITE_DONE ? 0 : -1;
	sqlite3_reset(st[0]);
	for (size_t i = 0; i < t->nrows && !rc; i++) {
		const struct prof_row *r = &t->rows[i];
		sqlite3_bind_int64(st[1], 1, t->thread);
		sqlite3_bind_int64(st[1], 2, r->fn);
		sqlite3_bind_int64(st[1], 3, (int64_t)r->cnt);
		sqlite3_bind_int64(st[1], 4, r->acc);
		sqlite3_bind_int64(st[1], 5, r->own);
		db_bind_mem(st[1], 6, &r->mem);
		rc = sqlite3_step(st[1]) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st[1]);
	}
	for (size_t i = 0; i < t->npairs && !rc; i++) {
		const struct prof_pair *p = &t->pairs[i];
		sqlite3_bind_int64(st[2], 1, t->thread);
		sqlite3_bind_int64(st[2], 2, p->caller);
		sqlite3_bind_int64(st[2], 3, p->called);
		sqlite3_bind_int64(st[2], 4, (int64_t)p->cnt);
		sqlite3_bind_int64(st[2], 5, p->acc);
		sqlite3_bind_int64(st[2], 6, p->own);
		db_bind_mem(st[2], 7, &p->mem);
		rc = sqlite3_step(st[2]) == SQLITE_DONE ? 0 : -1;
		sqlite3_reset(st[2]);
	}
	(void)db;
	return rc;
}

static int db_threads(sqlite3 *db, const struct prof_model *m)
{
	static const char *const sql[3] = {
		"INSERT INTO profile_thread VALUES(?, ?, ?, ?, ?, ?, ?)",
		"INSERT INTO profile_stat VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
		"INSERT INTO profile_pair VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"};
	sqlite3_stmt *st[3] = {NULL, NULL, NULL};
	int rc = 0;
	for (int i = 0; i < 3 && !rc; i++)
		rc = sqlite3_prepare_v2(db, sql[i], -1, &st[i], NULL) == SQLITE_OK ? 0 : -1;
	for (size_t i = 0; i < m->nthreads && !rc; i++)
		rc = db_thread(db, st, &m->threads[i]);
	for (int i = 0; i < 3; i++)
		sqlite3_finalize(st[i]);
	return rc;
}

static int db_fill(sqlite3 *db, const struct prof_model *m)
{
	char pragma[96];
	snprintf(pragma, sizeof pragma, "PRAGMA application_id=%d; PRAGMA user_version=%d;",
		 MEMINST_PROFILE_APP_ID, MEMINST_PROFILE_USER_VERSION);
	if (db_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;") || db_exec(db, pragma) ||
	    db_exec(db, "BEGIN") || db_exec(db, MEMINST_PROFILE_SCHEMA) || db_meta(db, m) ||
	    db_functions(db, m) || db_threads(db, m) || db_exec(db, "COMMIT"))
		return -1;
	return 0;
}

int prof_db_write(const struct prof_model *m, const char *path, bool force, const struct rd_opts *o)
{
	struct stat stb;
	if (stat(path, &stb) == 0 && (!S_ISREG(stb.st_mode) || (!force && prof_db_is_profile(path) != 1))) {
		rd_errf(o->err, "inspect: %s: exists and is not a meminst profile database; not overwriting it "
			"(-f replaces a file)\n",
			path);
		return RD_EXIT_USAGE;
	}
	size_t len = strlen(path) + 16;
	char *tmp = rd_xmalloc(len);
	snprintf(tmp, len, "%s.tmp%d", path, (int)getpid());
	unlink(tmp);
	sqlite3 *db = NULL;
	int r = 0;
	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    db_fill(db, m) != 0)
		r = db_sqlerr(o, path, db, "cannot write the profile");
	if (sqlite3_close(db) != SQLITE_OK && !r)
		r = db_sqlerr(o, path, db, "cannot write the profile");
	if (!r && rename(tmp, path) != 0) {
		rd_errf(o->err, "inspect: %s: %s\n", path, strerror(errno));
		r = RD_EXIT_DB;
	}
	if (r)
		unlink(tmp);
	free(tmp);
	return r;
}

/* ------------------------------------------------------------ reading -- */

/* profile_meta's tracer_* keys (the tracer's cost, prof_tcost). */
static void db_read_cost(struct prof_tcost *c, const char *k, double v)
{
	if (!c->known) /* databases before the fit: used as measured */
		c->scale = 1;
	c->known = true;
	if (!strcmp(k, "call_ns")) c->call_ns = v;
	else if (!strcmp(k, "alloc_ns")) c->alloc_ns = v;
	else if (!strcmp(k, "calls")) c->calls = (uint64_t)v;
	else if (!strcmp(k, "allocs")) c->allocs = (uint64_t)v;
	else if (!strcmp(k, "hooks_ns")) c->hooks_ns = (int64_t)v;
	else if (!strcmp(k, "alloc_taken_ns")) c->alloc_taken_ns = (int64_t)v;
	else if (!strcmp(k, "alloc_out_ns")) c->alloc_out_ns = v;
	else if (!strcmp(k, "taken_ns")) c->taken_ns = (int64_t)v;
	else if (!strcmp(k, "raw_own_ns")) c->raw_own_ns = (int64_t)v;
	else if (!strcmp(k, "compensated")) c->compensated = v != 0;
	else if (!strcmp(k, "mi_apart")) c->mi_apart = v != 0;
	else if (!strcmp(k, "mi_calls")) c->mi_calls = (uint64_t)v;
	else if (!strcmp(k, "mi_ns")) c->mi_ns = (int64_t)v;
	else if (!strcmp(k, "scale")) c->scale = v;
	else if (!strcmp(k, "failed")) c->failed = v != 0, c->why = "as the profile database says";
}

static int db_read_meta(sqlite3 *db, struct prof_model *m, int64_t *schema)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT key, value FROM profile_meta", -1, &st, NULL) != SQLITE_OK)
		return -1;
	*schema = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		int64_t n = sqlite3_column_int64(st, 1);
		if (!k)
			continue;
		if (!strcmp(k, "schema")) *schema = n;
		else if (!strcmp(k, "source") && v) m->source = rd_pool_str(&m->pool, v);
		else if (!strcmp(k, "exe") && v) m->exe = rd_pool_str(&m->pool, v);
		else if (!strcmp(k, "cmdline") && v) m->cmdline = rd_pool_str(&m->pool, v);
		else if (!strcmp(k, "clock")) m->clock = v && !strcmp(v, "cpu") ? MEMINST_TRACE_CLOCK_CPU : MEMINST_TRACE_CLOCK_MONO;
		else if (!strcmp(k, "pid")) m->pid = n;
		else if (!strcmp(k, "events")) m->events = (uint64_t)n;
		else if (!strcmp(k, "lost")) m->lost = (uint64_t)n;
		else if (!strcmp(k, "untraced")) m->untraced = (uint64_t)n;
		else if (!strcmp(k, "cnt")) m->cnt = (uint64_t)n;
		else if (!strcmp(k, "acc_ns")) m->acc = n;
		else if (!strcmp(k, "own_ns")) m->own = n;
		else if (!strcmp(k, "ns_per_tick")) m->ns_per_tick = sqlite3_column_double(st, 1);
		else if (!strncmp(k, "tracer_", 7)) db_read_cost(&m->cost, k + 7, sqlite3_column_double(st, 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static const char *db_text(struct prof_model *m, sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);
	return s ? rd_pool_str(&m->pool, (const char *)s) : NULL;
}

/* Function ids must be 0..n-1: anything else is a damaged file. */
static int db_read_functions(sqlite3 *db, struct prof_model *m)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT id, addr, name, file, line, module FROM profile_function ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) != (int64_t)m->nfuncs)
			break;
		if (m->nfuncs == cap) {
			cap = cap ? 2 * cap : 256;
			m->funcs = rd_xrealloc(m->funcs, cap * sizeof *m->funcs);
		}
		struct prof_func *f = &m->funcs[m->nfuncs++];
		const char *name = db_text(m, st, 2);
		*f = (struct prof_func){(uint64_t)sqlite3_column_int64(st, 1), name ? name : "?",
					db_text(m, st, 3), sqlite3_column_int(st, 4), db_text(m, st, 5), 0};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE && m->nfuncs >= 3 ? 0 : -1;
}

/* Rows of one thread: profile_stat (pairs false) or profile_pair. */
static int db_read_rows(sqlite3 *db, struct prof_model *m, struct prof_mthread *t, bool pairs)
{
	sqlite3_stmt *st;
	const char *sql = pairs ? "SELECT caller, called, cnt, acc_ns, own_ns, own_bytes, own_blocks, "
				  "acc_bytes, acc_blocks FROM profile_pair WHERE thread = ?"
				: "SELECT function, function, cnt, acc_ns, own_ns, own_bytes, own_blocks, "
				  "acc_bytes, acc_blocks FROM profile_stat WHERE thread = ?";
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, t->thread);
	size_t cap = 0, n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
		if (a < 0 || b < 0 || (uint64_t)a >= m->nfuncs || (uint64_t)b >= m->nfuncs)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			if (pairs)
				t->pairs = rd_xrealloc(t->pairs, cap * sizeof *t->pairs);
			else
				t->rows = rd_xrealloc(t->rows, cap * sizeof *t->rows);
		}
		uint64_t cnt = (uint64_t)sqlite3_column_int64(st, 2);
		int64_t acc = sqlite3_column_int64(st, 3), own = sqlite3_column_int64(st, 4);
		struct eng_mem mem = db_column_mem(st, 5);
		if (pairs)
			t->pairs[n++] = (struct prof_pair){(uint32_t)a, (uint32_t)b, cnt, acc, own, mem};
		else
			t->rows[n++] = (struct prof_row){(uint32_t)a, cnt, acc, own, mem};
	}
	sqlite3_finalize(st);
	if (pairs)
		t->npairs = n;
	else
		t->nrows = n;
	return rc == SQLITE_DONE ? 0 : -1;
}

static int db_read_threads(sqlite3 *db, struct prof_model *m)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT thread, tid, parent, name, cnt, acc_ns, own_ns FROM profile_thread "
			       "ORDER BY thread", -1, &st, NULL) != SQLITE_OK)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (m->nthreads == cap) {
			cap = cap ? 2 * cap : 16;
			m->threads = rd_xrealloc(m->threads, cap * sizeof *m->threads);
		}
		struct prof_mthread *t = &m->threads[m->nthreads++];
		*t = (struct prof_mthread){.thread = (uint32_t)sqlite3_column_int64(st, 0),
					   .tid = sqlite3_column_int64(st, 1),
					   .parent = (uint32_t)sqlite3_column_int64(st, 2),
					   .name = db_text(m, st, 3),
					   .cnt = (uint64_t)sqlite3_column_int64(st, 4),
					   .acc = sqlite3_column_int64(st, 5),
					   .own = sqlite3_column_int64(st, 6)};
		if (db_read_rows(db, m, t, false) || db_read_rows(db, m, t, true)) {
			rc = SQLITE_ERROR;
			break;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int prof_db_read(const char *path, const struct rd_opts *o, struct prof_model *m)
{
	memset(m, 0, sizeof *m);
	struct stat stb;
	if (stat(path, &stb) != 0) {
		rd_errf(o->err, "inspect: %s: %s\n", path, strerror(errno));
		return RD_EXIT_DB;
	}
	if (!S_ISREG(stb.st_mode)) {
		rd_errf(o->err, "inspect: %s: not a regular file\n", path);
		return RD_EXIT_DB;
	}
	if (prof_db_is_profile(path) != 1)
		return prof_input_fail(o, path, "neither a meminst trace nor a profile database");
	sqlite3 *db = NULL;
	int64_t schema = 0;
	int r = 0;
	if ((r = rd_sqlite_open(o, path, &db)))
		return r;
	if (db_read_meta(db, m, &schema))
		r = db_sqlerr(o, path, db, "not a valid profile database");
	else if (schema < MEMINST_PROFILE_MIN_READABLE || schema > MEMINST_PROFILE_VERSION) {
		rd_errf(o->err, "inspect: %s: profile schema %lld, this inspect reads %d up to %d\n", path,
			(long long)schema, MEMINST_PROFILE_MIN_READABLE, MEMINST_PROFILE_VERSION);
		r = RD_EXIT_DB;
	} else if (db_read_functions(db, m) || db_read_threads(db, m))
		r = db_sqlerr(o, path, db, "not a valid profile database");
	sqlite3_close(db);
	return r;
}
