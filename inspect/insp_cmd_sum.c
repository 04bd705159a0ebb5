/*
** insp_cmd_sum.c — `inspect sum` (Erlang's sum_blocks) and `inspect descr`
** (Erlang's descr of a sorted map: every block with its numbers replaced
** by names), both over the blocks that pass the filters.
*/
#include "insp_int.h"

#include <string.h>

#define NCOLS(c) ((int)(sizeof c / sizeof c[0]))

/* "type list_node, thread 2": the filters in words, for titles. */
static const char *filter_words(char *buf, size_t len, const struct insp_filter *f)
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
static int open_filtered(struct insp_session *s, const struct insp_opts *o,
			 const struct insp_args *a, struct insp_filter_ids *f)
{
	int r = insp_session_open(s, o, a, a->pos[0], INSP_NEED_MAP);
	return r ? r : insp_session_filter(s, a, f);
}

/* ------------------------------------------------------------------ sum -- */

static const struct insp_option sum_options[] = {
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	INSP_OPTIONS_FILTER,
	INSP_OPTIONS_FORMAT,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec sum_spec = {
	"sum", "[options] DB",
	"The number of blocks and their total size (Erlang's sum_blocks), of all\n"
	"blocks or of those that pass the filters.  Sizes are the sizes asked for;\n"
	"'with headers' adds the meminst header of each block.\n",
	sum_options, 1, 1,
};

static const struct insp_col sum_cols[] = {
	{"filter", "blocks of", INSP_K_STR, 0},
	{"blocks", "blocks", INSP_K_INT, 0},
	{"bytes", "bytes", INSP_K_SIZE, 0},
	{"header_bytes", "in headers", INSP_K_SIZE, 0},
	{"with_headers_bytes", "with headers", INSP_K_SIZE, 0},
};

struct sum_figures {
	uint64_t blocks, bytes;
};

static void sum_add(void *ctx, const struct insp_block *b)
{
	struct sum_figures *sum = ctx;
	sum->blocks++;
	sum->bytes += b->size;
}

int insp_cmd_sum(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&sum_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct insp_session s;
	struct insp_filter_ids f;
	struct sum_figures sum = {0, 0};
	if (!(r = open_filtered(&s, o, &a, &f)) && !(r = insp_blocks_each(s.db, o, &f, sum_add, &sum))) {
		uint64_t head = sum.blocks * (uint64_t)insp_db_snap(s.db)->header_size;
		char words[512];
		insp_doc_t *d = insp_doc_new(o, &a);
		insp_doc_snapshot(d, "snapshot", a.pos[0], insp_db_snap(s.db));
		insp_table_t *t = insp_doc_table(d, "sum", sum_cols, NCOLS(sum_cols), INSP_T_SINGLE);
		insp_row(t);
		insp_put_str(t, insp_filter_any(&a.filter) ? filter_words(words, sizeof words, &a.filter) : "all");
		insp_put_uint(t, sum.blocks);
		insp_put_uint(t, sum.bytes);
		insp_put_uint(t, head);
		insp_put_uint(t, sum.bytes + head);
		r = insp_doc_print(d);
		insp_doc_free(d);
	}
	insp_session_close(&s);
	return r;
}

/* ---------------------------------------------------------------- descr -- */

static const struct insp_option descr_options[] = {
	INSP_OPTION_LIMIT("only the first N blocks"),
	INSP_OPTION_SNAPSHOT("read snapshot N (default: the latest that fits)"),
	INSP_OPTIONS_FILTER,
	INSP_OPTIONS_FORMAT,
	INSP_OPTIONS_SYMBOLS,
	INSP_OPTION_END,
};

static const struct insp_cmd_spec descr_spec = {
	"descr", "[options] DB",
	"The map: every block by address, with the names of its type, class, thread\n"
	"and allocator in place of their numbers (Erlang's descr of a sorted map).\n"
	"Automatic types (allocation sites) are resolved from the module files the\n"
	"snapshot lists when they are still there and unchanged.\n",
	descr_options, 1, 1,
};

static const struct insp_col descr_cols[] = {
	{"addr", "address", INSP_K_ADDR, 0},
	{"bytes", "size", INSP_K_SIZE, 0},
	{"seq", "seq", INSP_K_INT, 0},
	{"allocator", "", INSP_K_INT, INSP_C_DATA_ONLY},
	{"allocator_name", "allocator", INSP_K_STR, 0},
	{"thread", "", INSP_K_INT, INSP_C_DATA_ONLY},
	{"thread_name", "thread", INSP_K_STR, 0},
	{"class", "", INSP_K_INT, INSP_C_DATA_ONLY},
	{"class_name", "class", INSP_K_STR, 0},
	{"type", "", INSP_K_INT, INSP_C_DATA_ONLY},
	{"type_name", "type", INSP_K_STR, 0},
	{"location", "", INSP_K_LOC, INSP_C_DATA_ONLY},
};

static void descr_row(insp_table_t *t, struct insp_session *s, const struct insp_block *b)
{
	struct insp_tags *tags = &s->tags;
	const struct insp_name *ty = insp_name_find(&tags->types, b->type);
	const char *where;
	const char *label = insp_type_label(s->db, tags, b->type, &where);
	insp_row(t);
	insp_put_uint(t, b->addr);
	insp_put_uint(t, b->size);
	insp_put_int(t, b->seq);
	insp_put_int(t, b->allocator);
	insp_put_const(t, insp_tag_name(s->db, tags, INSP_TAG_ALLOCATOR, b->allocator));
	insp_put_int(t, b->thread);
	insp_put_const(t, insp_thread_label(s->db, tags, b->thread));
	if (ty) {
		insp_put_int(t, ty->class_);
		insp_put_const(t, insp_tag_name(s->db, tags, INSP_TAG_CLASS, ty->class_));
	} else {
		insp_put_null(t);
		insp_put_null(t);
	}
	insp_put_int(t, b->type);
	insp_put_const(t, label);
	insp_put_const(t, where);
}

int insp_cmd_descr(int argc, char **argv, const struct insp_opts *o)
{
	struct insp_args a;
	int r = insp_args_parse(&descr_spec, argc, argv, o, &a);
	if (r != INSP_CONTINUE)
		return r;
	struct insp_session s;
	struct insp_filter_ids f;
	insp_blocks_t it;
	if (!(r = open_filtered(&s, o, &a, &f)) && !(r = insp_blocks_open(s.db, &f, &it))) {
		insp_doc_t *d = insp_doc_new(o, &a);
		insp_doc_snapshot(d, "snapshot", a.pos[0], insp_db_snap(s.db));
		insp_table_t *t = insp_doc_table(d, "blocks", descr_cols, NCOLS(descr_cols), 0);
		r = insp_doc_stream(d, t);
		struct insp_progress p;
		insp_progress_start(&p, o, "reading blocks", (uint64_t)insp_db_snap(s.db)->blocks);
		struct insp_block b;
		uint64_t n = 0;
		while (!r && (a.limit < 0 || n < (uint64_t)a.limit) && (r = insp_blocks_next(&it, &b)) == 1) {
			r = 0;
			descr_row(t, &s, &b);
			insp_progress_step(&p, ++n);
		}
		insp_progress_end(&p);
		insp_blocks_close(&it);
		if (!r)
			r = insp_doc_print(d);
		insp_doc_free(d);
	}
	insp_session_close(&s);
	return r;
}
