/*
** bench_gen.c — make a large snapshot database for bench/inspect.sh:
**
**   bench_gen [-n BLOCKS] [-t TYPES] [-s SEGMENTS] [-2] [-r] OUT.db
**
** One map snapshot of BLOCKS blocks (default 1,000,000) over TYPES types
** (default 1,000, half of them automatic) and SEGMENTS segments (default
** 20), 8 threads, the 7 allocators, with every status kind.  With -2 a
** second map snapshot follows, as the same process later: about 90% of the
** blocks kept (same address and seq), the others freed or reallocated, so
** that `inspect diff` has real work.  The blocks are stored as libmeminst
** stores them (schema 2: chunks of MEMINST_SNAPSHOT_CHUNK in address
** order, encoded with meminst_snapshot_put_block); a temporary table of
** one row per block serves the status rows' sums (-r fills it in random
** order, which changes nothing in the file).
** The numbers come from a fixed pseudo-random sequence: the same options
** give the same file.
*/
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "meminst-snapshot.h"

struct gen {
	sqlite3 *db;
	long blocks, types, segs;
	bool second, shuffle;
	uint64_t rng;
};

struct gblock {
	int64_t addr, size, type, thread, allocator, seq;
};

static uint64_t rnd(struct gen *g)
{
	g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
	return g->rng >> 33;
}

static void die(struct gen *g, const char *what)
{
	fprintf(stderr, "bench_gen: %s: %s\n", what, g->db ? sqlite3_errmsg(g->db) : "?");
	exit(1);
}

static void exec(struct gen *g, const char *sql)
{
	if (sqlite3_exec(g->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(g, sql);
}

static sqlite3_stmt *prep(struct gen *g, const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(g->db, sql, -1, &st, NULL) != SQLITE_OK)
		die(g, sql);
	return st;
}

static void run(struct gen *g, sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		die(g, "insert");
	sqlite3_reset(st);
}

/* ------------------------------------------------------------- blocks -- */

/* Segment i spans [base_i, base_i + span); blocks fill them in turn. */
static struct gblock *gen_blocks(struct gen *g, int64_t *seq)
{
	struct gblock *v = malloc((size_t)g->blocks * sizeof *v);
	long per_seg = (g->blocks + g->segs - 1) / g->segs;
	for (long i = 0; i < g->blocks; i++) {
		long s = i / per_seg;
		int64_t base = 0x7f0000000000ll + s * 0x10000000ll;
		int64_t prev_end = (i % per_seg) ? v[i - 1].addr + v[i - 1].size : base;
		int64_t size = 16 + (int64_t)(rnd(g) % 512) * ((rnd(g) % 16) ? 1 : 8);
		int64_t gap = 16 + (int64_t)(rnd(g) % 4) * 16 + ((rnd(g) % 64) ? 0 : (int64_t)(rnd(g) % 65536));
		v[i] = (struct gblock){.addr = (prev_end + gap + 32 + 15) & ~15ll, .size = size,
				       .type = (int64_t)(rnd(g) % (uint64_t)g->types),
				       .thread = 1 + (int64_t)(rnd(g) % 8), .allocator = (int64_t)(rnd(g) % 7),
				       .seq = ++*seq};
	}
	return v;
}

/* The later snapshot: 10% of the blocks freed, 5% reallocated in place
** (same address, new seq), as many new ones past the end of each segment. */
static struct gblock *gen_later(struct gen *g, const struct gblock *a, int64_t *seq, long *n)
{
	struct gblock *v = malloc((size_t)g->blocks * 2 * sizeof *v);
	long k = 0;
	for (long i = 0; i < g->blocks; i++) {
		uint64_t r = rnd(g) % 100;
		if (r < 10)
			continue;
		v[k] = a[i];
		if (r < 15)
			v[k].seq = ++*seq;
		k++;
	}
	int64_t top = a[g->blocks - 1].addr + 0x1000000;
	for (long i = 0; i < g->blocks / 10; i++)
		v[k++] = (struct gblock){top + i * 256, 64 + (int64_t)(rnd(g) % 128), (int64_t)(rnd(g) % (uint64_t)g->types),
					 1 + (int64_t)(rnd(g) % 8), 0, ++*seq};
	*n = k;
	return v;
}

static int by_addr(const void *a, const void *b)
{
	int64_t x = ((const struct gblock *)a)->addr, y = ((const struct gblock *)b)->addr;
	return x < y ? -1 : x > y;
}

/* The blocks in address order, in chunks, as libmeminst writes them. */
static void put_chunks(struct gen *g, int snap, struct gblock *v, long n)
{
	static unsigned char buf[MEMINST_SNAPSHOT_CHUNK * MEMINST_SNAPSHOT_BLOCK_MAX_BYTES];
	qsort(v, (size_t)n, sizeof *v, by_addr);
	sqlite3_stmt *st = prep(g, "INSERT INTO block_chunk VALUES(?,?,?,?)");
	for (long i = 0; i < n; i += MEMINST_SNAPSHOT_CHUNK) {
		long k = n - i < MEMINST_SNAPSHOT_CHUNK ? n - i : MEMINST_SNAPSHOT_CHUNK;
		struct meminst_snapshot_block prev = {.addr = (uint64_t)v[i].addr};
		unsigned char *p = buf;
		for (long j = i; j < i + k; j++) {
			struct meminst_snapshot_block b = {(uint64_t)v[j].addr, (uint64_t)v[j].size,
							   (uint64_t)v[j].type, (uint64_t)v[j].thread,
							   (uint64_t)v[j].allocator, (uint64_t)v[j].seq};
			p = meminst_snapshot_put_block(p, &prev, &b);
		}
		sqlite3_bind_int64(st, 1, snap);
		sqlite3_bind_int64(st, 2, v[i].addr);
		sqlite3_bind_int64(st, 3, k);
		sqlite3_bind_blob(st, 4, buf, (int)(p - buf), SQLITE_STATIC);
		run(g, st);
	}
	sqlite3_finalize(st);
}

static void put_blocks(struct gen *g, int snap, struct gblock *v, long n, int64_t *bytes)
{
	if (g->shuffle)
		for (long i = n - 1; i > 0; i--) {
			long j = (long)(rnd(g) % (uint64_t)(i + 1));
			struct gblock t = v[i];
			v[i] = v[j];
			v[j] = t;
		}
	sqlite3_stmt *st = prep(g, "INSERT INTO temp.block VALUES(?,?,?,?,?,?,?)");
	*bytes = 0;
	for (long i = 0; i < n; i++) {
		int64_t vals[] = {snap, v[i].addr, v[i].size, v[i].type, v[i].thread, v[i].allocator, v[i].seq};
		for (int c = 0; c < 7; c++)
			sqlite3_bind_int64(st, c + 1, vals[c]);
		run(g, st);
		*bytes += v[i].size;
	}
	sqlite3_finalize(st);
	put_chunks(g, snap, v, n);
}

/* --------------------------------------------------------------- names -- */

static void put_names(struct gen *g, int snap)
{
	static const char *const allocators[] = {"malloc", "calloc", "realloc", "aligned", "valloc", "new", "new[]"};
	char sql[256];
	for (int i = 0; i < 7; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO allocator VALUES(%d, %d, '%s')", snap, i, allocators[i]);
		exec(g, sql);
	}
	for (int c = 0; c < 20; c++) {
		snprintf(sql, sizeof sql, "INSERT INTO class VALUES(%d, %d, 'class%d', %s)", snap, c, c,
			 c % 2 ? "'/usr/lib/libbench.so'" : "NULL");
		exec(g, sql);
	}
	sqlite3_stmt *st = prep(g, "INSERT INTO type VALUES(?, ?, ?, ?, ?)");
	for (long t = 0; t < g->types; t++) {
		snprintf(sql, sizeof sql, t % 2 ? "fn%ld+0x%lx (libbench.so)" : "type%ld", t, t * 16);
		sqlite3_bind_int(st, 1, snap);
		sqlite3_bind_int64(st, 2, t);
		sqlite3_bind_text(st, 3, sql, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, t % 20);
		if (t % 2)
			sqlite3_bind_int64(st, 5, 0x7e0000000000ll + t * 64);
		else
			sqlite3_bind_null(st, 5);
		run(g, st);
		sqlite3_clear_bindings(st);
	}
	sqlite3_finalize(st);
	for (int t = 1; t <= 8; t++) {
		snprintf(sql, sizeof sql, "INSERT INTO thread VALUES(%d, %d, %d, 'worker%d')", snap, t, 1000 + t, t);
		exec(g, sql);
	}
	snprintf(sql, sizeof sql, "INSERT INTO module VALUES(%d, %lld, '/nonexistent/libbench.so', NULL)",
		 snap, 0x7e0000000000ll);
	exec(g, sql);
	for (long s = 0; s < g->segs; s++) {
		snprintf(sql, sizeof sql, "INSERT INTO segment(snapshot, start, end, perms, offset, path) VALUES(%d, %lld, %lld, 'rw-p', 0, '')", snap,
			 0x7f0000000000ll + s * 0x10000000ll, 0x7f0000000000ll + (s + 1) * 0x10000000ll - 0x1000000);
		exec(g, sql);
	}
}

/* Status rows: the current figures summed from the blocks, per kind. */
static void put_status(struct gen *g, int snap)
{
	char sql[1024];
	static const char *const kinds[][2] = {
		{"total", "0"}, {"allocators", "allocator"}, {"types", "type"}, {"threads", "thread"}};
	for (int k = 0; k < 4; k++) {
		snprintf(sql, sizeof sql,
			 "INSERT INTO status SELECT %d, '%s', %s, sum(size), sum(size), sum(size), count(*), "
			 "count(*), count(*) FROM block WHERE snapshot = %d GROUP BY 3",
			 snap, kinds[k][0], kinds[k][1], snap);
		exec(g, sql);
	}
	snprintf(sql, sizeof sql,
		 "INSERT INTO status SELECT %d, 'classes', t.class, sum(b.size), sum(b.size), sum(b.size), "
		 "count(*), count(*), count(*) FROM block b JOIN type t ON t.snapshot = b.snapshot AND t.id = b.type "
		 "WHERE b.snapshot = %d GROUP BY t.class", snap, snap);
	exec(g, sql);
}

static void put_snapshot(struct gen *g, int snap, long n, int64_t bytes, int64_t seq)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "INSERT INTO snapshot VALUES(%d, 'map', '%s', 4242, 1, '/nonexistent/bench', 'bench', 'mim', "
		 "'system', 32, %lld, %lld, 50000000, %lld, %ld, %lld)",
		 snap, snap == 1 ? "api" : "exit", 1700000000000000000ll + snap * 1000000000ll,
		 snap * 1000000000ll, (long long)seq, n, (long long)bytes);
	exec(g, sql);
}

/* ---------------------------------------------------------------- main -- */

static void generate(struct gen *g)
{
	int64_t seq = 0, bytes;
	struct gblock *a = gen_blocks(g, &seq);
	long na = g->blocks, nb = 0;
	struct gblock *b = g->second ? gen_later(g, a, &seq, &nb) : NULL;
	put_blocks(g, 1, a, na, &bytes);
	put_snapshot(g, 1, na, bytes, na);
	put_names(g, 1);
	put_status(g, 1);
	if (b) {
		put_blocks(g, 2, b, nb, &bytes);
		put_snapshot(g, 2, nb, bytes, seq);
		put_names(g, 2);
		put_status(g, 2);
	}
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	struct gen g = {.blocks = 1000000, .types = 1000, .segs = 20, .rng = 42};
	int c;
	while ((c = getopt(argc, argv, "n:t:s:2r")) != -1) {
		switch (c) {
		case 'n': g.blocks = atol(optarg); break;
		case 't': g.types = atol(optarg); break;
		case 's': g.segs = atol(optarg); break;
		case '2': g.second = true; break;
		case 'r': g.shuffle = true; break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || g.blocks < 1 || g.types < 1 || g.segs < 1) {
		fputs("usage: bench_gen [-n BLOCKS] [-t TYPES] [-s SEGMENTS] [-2] [-r] OUT.db\n", stderr);
		return 2;
	}
	unlink(argv[optind]);
	if (sqlite3_open(argv[optind], &g.db) != SQLITE_OK)
		die(&g, argv[optind]);
	char head[160];
	snprintf(head, sizeof head, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
		 MEMINST_SNAPSHOT_APP_ID, MEMINST_SNAPSHOT_VERSION);
	exec(&g, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
	exec(&g, head);
	exec(&g, MEMINST_SNAPSHOT_SCHEMA);
	exec(&g, "CREATE TEMP TABLE block(snapshot INTEGER, addr INTEGER, size INTEGER, type INTEGER, "
		 "thread INTEGER, allocator INTEGER, seq INTEGER)");
	exec(&g, "BEGIN");
	generate(&g);
	exec(&g, "COMMIT");
	sqlite3_close(g.db);
	return 0;
}
