/*
** insp_cmd_sum.c — `inspect sum` (Erlang's sum_blocks) and `inspect descr`
** (Erlang's descr of a sorted map: every block with its numbers replaced
** by names), both over the blocks that pass the filters.
*/
#include "insp_int.h"

#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

/* "type list_node, thread 2": the filters in words, for titles. */
static const char *filter_words(char *buf, size_t len, const struct rd_filter *f)
{
	buf[0] = 0;
	const char *const names[] = {"type", "class", "thread", "allocator"};
	const char *const vals[] = {f->type, f->class_, f->thread, f->allocator};
	for (int i = 0; i < 4; i++) {
		if (!vals[i])
			continue;
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s %s", n ? ", " : "", names[i], vals[i]);
	}
	return buf;
}

/* Open the session, load the tags and resolve the filters. */
static int open_filtered(struct rd_session *s, const struct rd_opts *o,
			 const struct rd_args *a, struct rd_filter_ids *f)
{
	int r = rd_session_open(s, o, a, a->pos[0], RD_NEED_MAP);
	return r ? r : rd_session_filter(s, a, f);
}

/* ------------------------------------------------------------------ sum -- */

static const struct rd_option sum_options[] = {
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FILTER,
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec sum_spec = {
	"sum", "[options] DB",
	"The number of blocks and their total size (Erlang's sum_blocks), of all\n"
	"blocks or of those that pass the filters.  Sizes are the sizes asked for;\n"
	"'with headers' adds the meminst header of each block.\n",
	sum_options, 1, 1,
};

static const struct rd_col sum_cols[] = {
	{"filter", "blocks of", RD_K_STR, 0},
	{"blocks", "blocks", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"header_bytes", "in headers", RD_K_SIZE, 0},
	{"with_headers_bytes", "with headers", RD_K_SIZE, 0},
};

struct sum_figures {
	uint64_t blocks, bytes;
};

static void sum_add(void *ctx, const struct rd_block *b)
{
	struct sum_figures *sum = ctx;
	sum->blocks++;
	sum->bytes += b->size;
}

int insp_cmd_sum(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&sum_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_session s;
	struct rd_filter_ids f;
	struct sum_figures sum = {0, 0};
	if (!(r = open_filtered(&s, o, &a, &f)) && !(r = rd_blocks_each(s.db, o, &f, sum_add, &sum))) {
		uint64_t head = sum.blocks * (uint64_t)rd_db_snap(s.db)->header_size;
		char words[512];
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], rd_db_snap(s.db));
		rd_table_t *t = rd_doc_table(d, "sum", sum_cols, NCOLS(sum_cols), RD_T_SINGLE);
		rd_row(t);
		rd_put_str(t, rd_filter_any(&a.filter) ? filter_words(words, sizeof words, &a.filter) : "all");
		rd_put_uint(t, sum.blocks);
		rd_put_uint(t, sum.bytes);
		rd_put_uint(t, head);
		rd_put_uint(t, sum.bytes + head);
		r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}

/* ---------------------------------------------------------------- descr -- */

static const struct rd_option descr_options[] = {
	RD_OPTION_LIMIT("only the first N blocks"),
	RD_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	RD_OPTIONS_FILTER,
	RD_OPTIONS_FORMAT,
	RD_OPTIONS_SYMBOLS,
	RD_OPTION_END,
};

static const struct rd_cmd_spec descr_spec = {
	"descr", "[options] DB",
	"The map: every block by address, with the names of its type, class, thread\n"
	"and allocator in place of their numbers (Erlang's descr of a sorted map).\n"
	"Automatic types (allocation sites) are resolved from the module files the\n"
	"snapshot lists when they are still there and unchanged.\n",
	descr_options, 1, 1,
};

static const struct rd_col descr_cols[] = {
	{"addr", "address", RD_K_ADDR, 0},
	{"bytes", "size", RD_K_SIZE, 0},
	{"seq", "seq", RD_K_INT, 0},
	{"allocator", "", RD_K_INT, RD_C_DATA_ONLY},
	{"allocator_name", "allocator", RD_K_STR, 0},
	{"thread", "", RD_K_INT, RD_C_DATA_ONLY},
	{"thread_name", "thread", RD_K_STR, 0},
	{"class", "", RD_K_INT, RD_C_DATA_ONLY},
	{"class_name", "class", RD_K_STR, 0},
	{"type", "", RD_K_INT, RD_C_DATA_ONLY},
	{"type_name", "type", RD_K_STR, 0},
	{"location", "", RD_K_LOC, RD_C_DATA_ONLY},
};

static void descr_row(rd_table_t *t, struct rd_session *s, const struct rd_block *b)
{
	struct rd_tags *tags = &s->tags;
	const struct rd_name *ty = rd_name_find(&tags->types, b->type);
	const char *where;
	const char *label = rd_type_label(s->db, tags, b->type, &where);
	rd_row(t);
	rd_put_uint(t, b->addr);
	rd_put_uint(t, b->size);
	rd_put_int(t, b->seq);
	rd_put_int(t, b->allocator);
	rd_put_const(t, rd_tag_name(s->db, tags, RD_TAG_ALLOCATOR, b->allocator));
	rd_put_int(t, b->thread);
	rd_put_const(t, rd_thread_label(s->db, tags, b->thread));
	if (ty) {
		rd_put_int(t, ty->class_);
		rd_put_const(t, rd_tag_name(s->db, tags, RD_TAG_CLASS, ty->class_));
	} else {
		rd_put_null(t);
		rd_put_null(t);
	}
	rd_put_int(t, b->type);
	rd_put_const(t, label);
	rd_put_const(t, where);
}

int insp_cmd_descr(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&descr_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	struct rd_session s;
	struct rd_filter_ids f;
	rd_blocks_t it;
	if (!(r = open_filtered(&s, o, &a, &f)) && !(r = rd_blocks_open(s.db, &f, &it))) {
		rd_doc_t *d = rd_doc_new(o, &a);
		rd_doc_snapshot(d, "snapshot", a.pos[0], rd_db_snap(s.db));
		rd_table_t *t = rd_doc_table(d, "blocks", descr_cols, NCOLS(descr_cols), 0);
		r = rd_doc_stream(d, t);
		struct rd_progress p;
		rd_progress_start(&p, o, "reading blocks", (uint64_t)rd_db_snap(s.db)->blocks);
		struct rd_block b;
		uint64_t n = 0;
		while (!r && (a.limit < 0 || n < (uint64_t)a.limit) && (r = rd_blocks_next(&it, &b)) == 1) {
			r = 0;
			descr_row(t, &s, &b);
			rd_progress_step(&p, ++n);
		}
		rd_progress_end(&p);
		rd_blocks_close(&it);
		if (!r)
			r = rd_doc_print(d);
		rd_doc_free(d);
	}
	rd_session_close(&s);
	return r;
}
