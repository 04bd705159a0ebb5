/*
** rd_leak.c — reading a snapshot's leak check (meminst-snapshot.h:
** leak_check, one row per checked snapshot, leak_block, the class of each
** block that is not still reachable, leak_clique, the indirectly lost
** bytes hanging from each definitely lost block, leak_cpu, the scan's CPU
** time).  Files from before the leak check have none of the tables: they
** hold no checked snapshot; files from before the cliques lack the last
** two (no indirect bytes by site, CPU not known).
**
** And the sums that inspect leaks, report and html show: bytes and blocks
** per class and per class and site, with the suppressions applied.
** Blocks that glibc and the loader keep for the life of the process
** (locale, name service, stdio buffers, the loader's and the threads'
** DTVs) are suppressed by default, as glibc's __libc_freeres hides them
** from memcheck: judged by the innermost glibc frames of the site's stack,
** so that a site_depth stack named after the program's caller is judged as
** a one-frame site is.  The user adds names (globs), matched against the
** site and every frame of its stack.
*/
#include "rd_int.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static bool leak_table(rd_db_t *db, const char *names, int want)
{
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (%s)", names);
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	bool there = st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == want;
	sqlite3_finalize(st);
	return there;
}

static bool leak_tables(rd_db_t *db)
{
	return leak_table(db, "'leak_check', 'leak_block'", 2);
}

/* The checked snapshot a query of one integer parameter picks, 0 if none. */
static int leak_pick(rd_db_t *db, const char *sql, int64_t arg, int64_t *snap)
{
	*snap = 0;
	if (!leak_tables(db))
		return 0;
	sqlite3_stmt *st = rd_db_prepare(db, sql);
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, arg);
	if (sqlite3_step(st) == SQLITE_ROW)
		*snap = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int rd_leak_latest(rd_db_t *db, int64_t pid, int64_t *snap)
{
	return leak_pick(db, "SELECT coalesce(max(l.snapshot), 0) FROM leak_check l JOIN snapshot s ON "
			     "s.id = l.snapshot WHERE ?1 = 0 OR s.pid = ?1", pid, snap);
}

int rd_leak_previous(rd_db_t *db, int64_t snap, int64_t *prev)
{
	return leak_pick(db, "SELECT coalesce(max(snapshot), 0) FROM leak_check WHERE snapshot < ?1", snap, prev);
}

static int leak_row(rd_db_t *db, struct rd_leak_check *c)
{
	sqlite3_stmt *st = rd_db_prepare(
		db, "SELECT definite_bytes, definite_blocks, indirect_bytes, indirect_blocks, possible_bytes,"
		    " possible_blocks, reachable_bytes, reachable_blocks, scanned_bytes, threads,"
		    " threads_unstopped, scan_ns FROM leak_check WHERE snapshot = ?");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		static const int order[] = {RD_LEAK_DEFINITE, RD_LEAK_INDIRECT, RD_LEAK_POSSIBLE,
					    RD_LEAK_REACHABLE};
		for (int i = 0; i < 4; i++) {
			c->bytes[order[i]] = (uint64_t)sqlite3_column_int64(st, 2 * i);
			c->blocks[order[i]] = (uint64_t)sqlite3_column_int64(st, 2 * i + 1);
		}
		c->scanned_bytes = (uint64_t)sqlite3_column_int64(st, 8);
		c->threads = sqlite3_column_int64(st, 9);
		c->threads_unstopped = sqlite3_column_int64(st, 10);
		c->scan_ns = sqlite3_column_int64(st, 11);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? RD_EXIT_NOTFOUND : rd_db_fail(db, "cannot read the leak check");
}

/* Each block's class, from leak_block, in address order. */
static int leak_blocks(rd_db_t *db, struct rd_leak_check *c)
{
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT addr, class FROM leak_block WHERE snapshot = ? ORDER BY addr");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cls = sqlite3_column_int64(st, 1);
		if (cls < RD_LEAK_DEFINITE || cls > RD_LEAK_POSSIBLE) {
			sqlite3_finalize(st);
			fprintf(rd_db_opts(db)->err, "inspect: %s: leak_block: class %lld is none of 1..3 (damaged)\n",
				rd_db_path(db), (long long)cls);
			return RD_EXIT_DB;
		}
		if (c->n == cap) {
			cap = cap ? 2 * cap : 256;
			c->addr = rd_xrealloc(c->addr, cap * sizeof *c->addr);
			c->cls = rd_xrealloc(c->cls, cap);
		}
		c->addr[c->n] = (uint64_t)sqlite3_column_int64(st, 0);
		c->cls[c->n++] = (unsigned char)cls;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "cannot read leak_block");
}

/* The cliques (leak_clique) by address, and the scan's CPU (leak_cpu). */
static int leak_cliques(rd_db_t *db, struct rd_leak_check *c)
{
	c->scan_cpu_ns = -1;
	if (!leak_table(db, "'leak_clique', 'leak_cpu'", 2))
		return 0;
	sqlite3_stmt *st = rd_db_prepare(db, "SELECT scan_cpu_ns FROM leak_cpu WHERE snapshot = ?");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	if (sqlite3_step(st) == SQLITE_ROW)
		c->scan_cpu_ns = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = rd_db_prepare(db, "SELECT addr, indirect_bytes, indirect_blocks FROM leak_clique WHERE snapshot = ? "
			       "ORDER BY addr");
	if (!st)
		return RD_EXIT_DB;
	sqlite3_bind_int64(st, 1, rd_db_snap(db)->id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (c->nclique == cap) {
			cap = cap ? 2 * cap : 64;
			c->clique = rd_xrealloc(c->clique, cap * sizeof *c->clique);
		}
		c->clique[c->nclique++] = (struct rd_leak_clique){(uint64_t)sqlite3_column_int64(st, 0),
								  (uint64_t)sqlite3_column_int64(st, 1),
								  (uint64_t)sqlite3_column_int64(st, 2)};
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rd_db_fail(db, "cannot read leak_clique");
}

const struct rd_leak_clique *rd_leak_clique_of(const struct rd_leak_check *c, uint64_t addr)
{
	size_t lo = rd_count_upto(c->clique, c->nclique, sizeof *c->clique, addr);
	return lo && c->clique[lo - 1].addr == addr ? &c->clique[lo - 1] : NULL;
}

int rd_leak_load(rd_db_t *db, struct rd_leak_check *c)
{
	memset(c, 0, sizeof *c);
	int r = leak_tables(db) ? leak_row(db, c) : RD_EXIT_NOTFOUND;
	if (r == RD_EXIT_NOTFOUND)
		fprintf(rd_db_opts(db)->err,
			"inspect: %s: snapshot %lld has no leak check (mis mode, leak_check=off, or a snapshot "
			"other than the exit one without leak_check=on)\n",
			rd_db_path(db), (long long)rd_db_snap(db)->id);
	if (!r)
		r = leak_blocks(db, c);
	return r ? r : leak_cliques(db, c);
}

int rd_leak_class(const struct rd_leak_check *c, uint64_t addr)
{
	size_t lo = rd_count_upto(c->addr, c->n, sizeof *c->addr, addr);
	return lo && c->addr[lo - 1] == addr ? c->cls[lo - 1] : RD_LEAK_REACHABLE;
}

void rd_leak_free(struct rd_leak_check *c)
{
	free(c->addr);
	free(c->cls);
	free(c->clique);
	memset(c, 0, sizeof *c);
}

/* ------------------------------------------------ the sums by site --- */

struct leak_adder {
	struct rd_session *s;
	const struct rd_leak_check *check;
	const struct rd_leak_suppress *sup;
	struct rd_leak_sum *m;
	signed char *memo; /* by type: suppressed (1) or not (0); -1 not yet decided */
};

/*
** Which frames a suppression looks at: the site's stack (rd_type_stack:
** site_depth's frames, else the site's one frame, each with its inline
** chain), innermost first.  A registered type has none: its label is
** its only frame.
*/
static const char *leak_stack(struct leak_adder *a, int64_t type, const char **label)
{
	const char *where;
	*label = rd_type_label(a->s->db, &a->s->tags, type, &where);
	const char *stack = rd_type_stack(a->s->db, &a->s->tags, type);
	if (stack)
		return stack;
	struct rd_pool *p = rd_db_pool(a->s->db);
	size_t n;
	const char *mod = rd_name_part_module(p, *label, &n);
	return rd_stack_add(p, NULL, rd_pool_fmt(p, "%.*s", (int)n, *label), NULL, 0, mod ? mod : "", false);
}

/* A frame's function without its offset ("f+0x13" -> "f"). */
static void leak_func(const struct rd_stack_frame *fr, char *func, size_t len)
{
	const char *plus = strstr(fr->func, "+0x");
	snprintf(func, len, "%.*s", (int)(plus ? (size_t)(plus - fr->func) : strlen(fr->func)), fr->func);
}

/* A frame no symbol names: its address, or module+0xSTART of its function. */
static bool leak_frame_unnamed(const struct rd_stack_frame *fr)
{
	size_t n = strlen(fr->module);
	return !strncmp(fr->func, "0x", 2) || (n && !strncmp(fr->func, fr->module, n) && !strncmp(fr->func + n, "+0x", 3));
}

static bool leak_module_is(const char *mod, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (!strncmp(mod, names[i], strlen(names[i])))
			return true;
	return false;
}

/*
** glibc's and the loader's blocks for the life of the process, which
** glibc's __libc_freeres (and libstdc++'s __gnu_cxx::__freeres) free
** before memcheck looks: the innermost run of frames in libc, the loader
** and libstdc++ is looked at, up to the first frame elsewhere (the
** program's, another library's): suppressed when one of them is in the
** loader, or in one of libc's functions below.  Not a dlopen'ed object's
** link map, names and version table (the innermost loader frame past the
** inlined malloc _dl_new_object, __strdup or _dl_check_map_versions):
** __libc_freeres keeps them while the object stays loaded, and memcheck
** counts them (python's modules).  libstdc++'s own frames
** only let the run go on: its emergency exception pool, allocated by its
** initializer that the loader calls, is the loader's then.  A stack that
** ends in libstdc++ at a frame without a name (a site of one frame,
** MEMINST=mim alone) is that pool too: its initializer is a local
** function, the one that calls malloc itself in a stripped libstdc++;
** the program's blocks are named after the caller of operator new, which
** meminst interposes, and libstdc++'s exported functions have names.
*/
static bool leak_default_suppressed(const char *stack)
{
	static const char *const libc_funcs[] = {
		"setlocale", "_nl_*", "__nl_*", "new_composite_name", "read_alias_file", "extend_alias_table",
		"nss_*", "__nss_*", "_nss_*", "global_state_allocate", "getpw*", "getgr*", "getsp*",
		"gethost*", "getserv*", "getproto*", "getnet*", "getrpc*", "getalias*", "*_dl_*", "dl_*",
		"_dlerror_run", "_IO_*", "__libc_*", "tzset*", "__tz*", "__gconv*", "__wcsmbs_*",
		"set_binding_values*", "textdomain", "__textdomain", "bindtextdomain", "__bindtextdomain",
		"__dcigettext", "__add_to_environ", "setenv", "__setenv", "putenv", "__new_exitfn", NULL};
	static const char *const ldso[] = {"ld-linux", "ld.so", "ld-2.", NULL};
	static const char *const libc[] = {"libc.so", "libc-", NULL};
	static const char *const libstdcxx[] = {"libstdc++", NULL};
	struct rd_stack_frame fr;
	char func[512];
	bool unnamed_libstdcxx = false;
	while (rd_stack_next(&stack, &fr)) {
		if (leak_module_is(fr.module, ldso) && fr.inlined)
			continue; /* rtld-malloc.h's malloc, inlined into its caller */
		if (leak_module_is(fr.module, ldso)) {
			leak_func(&fr, func, sizeof func);
			return strcmp(func, "_dl_new_object") && strcmp(func, "__strdup") &&
			       strcmp(func, "_dl_check_map_versions");
		}
		unnamed_libstdcxx = leak_module_is(fr.module, libstdcxx) && leak_frame_unnamed(&fr);
		if (leak_module_is(fr.module, libstdcxx))
			continue;
		if (!leak_module_is(fr.module, libc))
			return false;
		leak_func(&fr, func, sizeof func);
		for (int i = 0; libc_funcs[i]; i++)
			if (!fnmatch(libc_funcs[i], func, 0))
				return true;
	}
	return unnamed_libstdcxx;
}

/* The user's names: a glob matching the function of any frame of the
** site's stack (with or without its offset), or the site's label. */
static bool leak_user_suppressed(const struct rd_leak_suppress *sup, const char *stack, const char *label)
{
	struct rd_stack_frame fr;
	char func[512];
	for (size_t i = 0; i < sup->n; i++) {
		if (!fnmatch(sup->names[i], label, 0))
			return true;
		for (const char *s = stack; rd_stack_next(&s, &fr);) {
			leak_func(&fr, func, sizeof func);
			if (!fnmatch(sup->names[i], func, 0) || !fnmatch(sup->names[i], fr.func, 0))
				return true;
		}
	}
	return false;
}

static bool leak_suppressed(struct leak_adder *a, int64_t type)
{
	if (a->memo[type] >= 0)
		return a->memo[type];
	const char *label;
	const char *stack = leak_stack(a, type, &label);
	bool sup = (!a->sup->no_default && leak_default_suppressed(stack)) ||
		   leak_user_suppressed(a->sup, stack, label);
	a->memo[type] = sup;
	return sup;
}

static void leak_add(void *ctx, const struct rd_block *b)
{
	struct leak_adder *a = ctx;
	struct rd_leak_sum *m = a->m;
	int cls = rd_leak_class(a->check, b->addr);
	bool known = b->type >= 0 && (size_t)b->type < m->nsites - 1;
	int slot = known && leak_suppressed(a, b->type) ? RD_LEAK_SUPPRESSED : cls;
	struct rd_leak_site *g = &m->site[slot][known ? (size_t)b->type : m->nsites - 1];
	g->bytes += b->size;
	g->blocks++;
	m->bytes[slot] += b->size;
	m->blocks[slot]++;
	const struct rd_leak_clique *q = cls == RD_LEAK_DEFINITE ? rd_leak_clique_of(a->check, b->addr) : NULL;
	if (q) {
		g->ind_bytes += q->bytes;
		g->ind_blocks += q->blocks;
	}
}

int rd_leak_sum(struct rd_session *s, const struct rd_opts *o, const struct rd_leak_check *c,
		const struct rd_leak_suppress *sup, struct rd_leak_sum *m)
{
	memset(m, 0, sizeof *m);
	int64_t ntypes = 0;
	for (size_t i = 0; i < s->tags.types.n; i++)
		if (s->tags.types.v[i].id >= ntypes)
			ntypes = s->tags.types.v[i].id + 1;
	m->nsites = (size_t)ntypes + 1; /* the last: a type the tags do not know */
	for (int i = 0; i <= RD_LEAK_SUPPRESSED; i++)
		m->site[i] = rd_xcalloc(m->nsites, sizeof *m->site[i]);
	struct leak_adder a = {s, c, sup, m, rd_xmalloc(m->nsites)};
	memset(a.memo, -1, m->nsites);
	int r = rd_blocks_each(s->db, o, NULL, leak_add, &a);
	free(a.memo);
	return r;
}

static int leak_site_cmp(const void *x, const void *y)
{
	const struct rd_leak_site *a = x, *b = y;
	uint64_t ta = a->bytes + a->ind_bytes, tb = b->bytes + b->ind_bytes;
	if (ta != tb)
		return ta < tb ? 1 : -1;
	return (a->type > b->type) - (a->type < b->type);
}

struct rd_leak_site *rd_leak_sites(const struct rd_leak_sum *m, int slot, size_t *n)
{
	struct rd_leak_site *v = rd_xmalloc((m->nsites + 1) * sizeof *v);
	*n = 0;
	for (size_t i = 0; i < m->nsites; i++)
		if (m->site[slot][i].blocks) {
			v[*n] = m->site[slot][i];
			v[(*n)++].type = i + 1 == m->nsites ? -1 : (int64_t)i;
		}
	qsort(v, *n, sizeof *v, leak_site_cmp);
	return v;
}

void rd_leak_sum_free(struct rd_leak_sum *m)
{
	for (int i = 0; i <= RD_LEAK_SUPPRESSED; i++)
		free(m->site[i]);
	memset(m, 0, sizeof *m);
}

int rd_leak_read(struct rd_session *s, const struct rd_opts *o, const struct rd_args *a, int64_t snap,
		 const struct rd_leak_suppress *sup, struct rd_leak_check *c, struct rd_leak_sum *m)
{
	memset(c, 0, sizeof *c);
	memset(m, 0, sizeof *m);
	if (s->tags_loaded)
		rd_tags_free(&s->tags);
	s->tags_loaded = false;
	int r = rd_db_select(s->db, snap, RD_NEED_MAP);
	if (!r)
		r = rd_leak_load(s->db, c);
	if (!r)
		r = rd_session_tags(s, a);
	return r ? r : rd_leak_sum(s, o, c, sup, m);
}
