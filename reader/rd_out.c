/*
** rd_out.c — results as tables, rendered in one of three ways.
**
** A command fills a document with named tables (columns with a key, a
** heading and a kind; rows of cells) and prints it once at the end, so the
** same figures come out as:
**   text   aligned columns under a title, sizes human-readable; a table
**          flagged RD_T_SINGLE prints as "label: value" lines;
**   --json one JSON object whose keys are the table names: a single table
**          is an object, any other an array of objects; sizes and
**          addresses are numbers in bytes, times in milliseconds;
**   --csv  each table as a header line of keys and its rows, tables
**          separated by an empty line.
** --table NAME keeps only that table (in all three forms).
**
** In JSON and CSV the last table may be streamed (rd_doc_stream): its
** rows are printed as they are completed and dropped, so that a listing of
** millions of blocks does not stay in memory.
*/
#include "rd_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct rd_cell {
	union {
		int64_t i;
		double d;
		const char *s;
	} v;
	bool null;
};

#define OUT_MAX_TABLES 16
#define OUT_MAX_COLS 32

struct rd_table {
	rd_doc_t *doc;
	const char *key, *title, *note;
	const struct rd_col *cols;
	int ncols, col;
	unsigned flags;
	struct rd_vec cells;
	unsigned char vis[OUT_MAX_COLS]; /* 0 not known yet, 1 shown, 2 not */
};


struct rd_doc {
	const struct rd_opts *o;
	const char *cmd;     /* for the message on an unknown --table */
	enum rd_format fmt;
	const char *only;
	rd_table_t *t[OUT_MAX_TABLES];
	int nt;
	const char *heading; /* text only: the line above everything */
	struct rd_pool pool;
	int printed;         /* tables printed so far                */
	rd_table_t *stream;
	size_t streamed;     /* rows of the streamed table printed   */
};

rd_doc_t *rd_doc_new(const struct rd_opts *o, const struct rd_args *a)
{
	rd_doc_t *d = rd_xcalloc(1, sizeof *d);
	d->o = o;
	d->fmt = a ? a->format : RD_FMT_TEXT;
	d->only = a ? a->table : NULL;
	d->cmd = a && a->cmd ? a->cmd : "inspect";
	return d;
}

rd_table_t *rd_doc_table(rd_doc_t *d, const char *key, const struct rd_col *cols,
			     int ncols, unsigned flags)
{
	if (d->nt == OUT_MAX_TABLES || ncols > OUT_MAX_COLS)
		abort(); /* a programming error: commands have a fixed set of tables */
	rd_table_t *t = rd_xcalloc(1, sizeof *t);
	*t = (rd_table_t){.doc = d, .key = key, .cols = cols, .ncols = ncols, .flags = flags};
	rd_vec_init(&t->cells, sizeof(struct rd_cell));
	d->t[d->nt++] = t;
	return t;
}

/* A title or note: the text of fmt, up to 511 bytes, kept in the pool. */
static const char *out_line(rd_table_t *t, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	return rd_pool_str(&t->doc->pool, buf);
}

void rd_table_title(rd_table_t *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	t->title = out_line(t, fmt, ap);
	va_end(ap);
}

void rd_table_note(rd_table_t *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	t->note = out_line(t, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- cells -- */

static void out_stream_row(rd_doc_t *d);

/* Rows are filled left to right; a short row is padded with nulls.  In a
** streamed table the row just completed is printed and dropped. */
void rd_row(rd_table_t *t)
{
	while (t->cells.n % (size_t)t->ncols)
		((struct rd_cell *)rd_vec_push(&t->cells))->null = true;
	t->col = 0;
	if (t == t->doc->stream && t->cells.n)
		out_stream_row(t->doc);
}

static struct rd_cell *out_cell(rd_table_t *t)
{
	if (t->col >= t->ncols)
		abort(); /* more cells than columns: a programming error */
	t->col++;
	return rd_vec_push(&t->cells);
}

void rd_put_int(rd_table_t *t, int64_t v) { out_cell(t)->v.i = v; }
void rd_put_uint(rd_table_t *t, uint64_t v) { out_cell(t)->v.i = (int64_t)v; }
void rd_put_pct(rd_table_t *t, double v) { out_cell(t)->v.d = v; }
void rd_put_null(rd_table_t *t) { out_cell(t)->null = true; }

void rd_put_const(rd_table_t *t, const char *s)
{
	struct rd_cell *c = out_cell(t);
	c->v.s = s;
	c->null = !s;
}

void rd_put_str(rd_table_t *t, const char *s)
{
	struct rd_cell *c = out_cell(t);
	if (s)
		c->v.s = rd_pool_str(&t->doc->pool, s);
	else
		c->null = true;
}

static size_t out_rows(const rd_table_t *t)
{
	return (t->cells.n + (size_t)t->ncols - 1) / (size_t)t->ncols;
}

static const struct rd_cell *out_at(const rd_table_t *t, size_t row, int col)
{
	static const struct rd_cell none = {.null = true};
	size_t i = row * (size_t)t->ncols + (size_t)col;
	return i < t->cells.n ? (const struct rd_cell *)t->cells.v + i : &none;
}

static bool out_all_null(const rd_table_t *t, const struct rd_col *c)
{
	int col = (int)(c - t->cols);
	for (size_t r = 0, rows = out_rows(t); r < rows; r++)
		if (!out_at(t, r, col)->null)
			return false;
	return true;
}

static bool out_visible(const rd_table_t *t, const struct rd_col *c)
{
	if (t->doc->fmt != RD_FMT_TEXT)
		return !(c->flags & RD_C_TEXT_ONLY);
	if ((c->flags & RD_C_DATA_ONLY) || c->kind == RD_K_STACK) /* stacks: under the row */
		return false;
	return !(c->flags & RD_C_OPTIONAL) || (t->flags & RD_T_SINGLE) || !out_all_null(t, c);
}

/* Whether a column is printed, worked out once per column (the cells are
** all in place by the time anything is printed). */
static bool out_shown_in(const rd_table_t *t, const struct rd_col *c)
{
	rd_table_t *w = (rd_table_t *)t;
	size_t i = (size_t)(c - t->cols);
	if (!w->vis[i])
		w->vis[i] = out_visible(t, c) ? 1 : 2;
	return w->vis[i] == 1;
}

/* ----------------------------------------------------------------- text -- */

/* unit: the duration unit of the cell's column, or -1 for a value alone. */
static void text_cell(const struct rd_col *col, const struct rd_cell *c, int unit,
		      char *buf, size_t len, size_t *width)
{
	char tmp[64];
	*width = 0;
	if (c->null) {
		snprintf(buf, len, "-");
		*width = 1;
		return;
	}
	switch (col->kind) {
	case RD_K_STR: case RD_K_LOC: case RD_K_STACK: rd_text_str(c->v.s, buf, len, width); return;
	case RD_K_INT: snprintf(tmp, sizeof tmp, "%lld", (long long)c->v.i); break;
	case RD_K_SIZE: rd_fmt_size((uint64_t)c->v.i, tmp, sizeof tmp); break;
	case RD_K_DELTA: rd_fmt_delta(c->v.i, tmp, sizeof tmp); break;
	case RD_K_ADDR: snprintf(tmp, sizeof tmp, "0x%llx", (unsigned long long)c->v.i); break;
	case RD_K_TIME: rd_fmt_time(c->v.i, tmp, sizeof tmp); break;
	case RD_K_DUR:
		if (unit < 0)
			rd_fmt_dur(c->v.i, tmp, sizeof tmp);
		else
			rd_fmt_dur_in(c->v.i, unit, tmp, sizeof tmp);
		break;
	case RD_K_PCT: snprintf(tmp, sizeof tmp, "%.1f%%", c->v.d); break;
	case RD_K_BOOL: snprintf(tmp, sizeof tmp, "%s", c->v.i ? "yes" : "no"); break;
	}
	snprintf(buf, len, "%s", tmp);
	*width = rd_text_width(buf);
}

static void text_single(const rd_table_t *t, FILE *f)
{
	size_t lw = 0, w;
	char buf[1024];
	for (int c = 0; c < t->ncols; c++)
		if (out_shown_in(t, &t->cols[c]) && rd_text_width(t->cols[c].head) > lw)
			lw = rd_text_width(t->cols[c].head);
	for (int c = 0; c < t->ncols; c++) {
		if (!out_shown_in(t, &t->cols[c]))
			continue;
		text_cell(&t->cols[c], out_at(t, 0, c), -1, buf, sizeof buf, &w);
		size_t width = t->doc->o->columns > 0 ? (size_t)t->doc->o->columns : 0;
		if (width > lw + 2 && lw + 2 + w > width) /* a long value (a command line) */
			rd_text_cut(buf, &w, width - lw - 2);
		fprintf(f, "%s:%*s %s\n", t->cols[c].head,
			(int)(lw - rd_text_width(t->cols[c].head)), "", buf);
	}
}

/* One line of a table, built in memory so that trailing blanks (an empty
** last column) can be cut. */
static void text_line(const rd_table_t *t, FILE *f, const size_t *wid, const int *unit,
		      size_t row)
{
	char buf[1024];
	size_t w;
	char *line = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&line, &len);
	if (!out)
		abort();
	int last = t->ncols - 1;
	while (last > 0 && !out_shown_in(t, &t->cols[last]))
		last--;
	bool first = true;
	for (int c = 0; c <= last; c++) {
		const struct rd_col *col = &t->cols[c];
		if (!out_shown_in(t, col))
			continue;
		if (row == SIZE_MAX)
			rd_text_str(col->head, buf, sizeof buf, &w);
		else
			text_cell(col, out_at(t, row, c), unit[c], buf, sizeof buf, &w);
		if (w > wid[c] && (col->kind == RD_K_STR || col->kind == RD_K_LOC))
			rd_text_cut(buf, &w, wid[c]);
		size_t pad = wid[c] > w ? wid[c] - w : 0;
		bool left = col->kind == RD_K_STR || col->kind == RD_K_LOC || col->kind == RD_K_TIME;
		fprintf(out, "%s%*s%s%*s", first ? "" : "  ", left ? 0 : (int)pad, "", buf,
			left && c != last ? (int)pad : 0, "");
		first = false;
	}
	fclose(out);
	while (len && line[len - 1] == ' ')
		len--;
	fwrite(line, 1, len, f);
	fputc('\n', f);
	free(line);
}

/* A duration column is read down, so all its values share one unit: the
** one that suits its largest value. */
static int column_dur_unit(const rd_table_t *t, int c, size_t rows)
{
	if (t->cols[c].kind != RD_K_DUR)
		return -1;
	uint64_t most = 0;
	for (size_t r = 0; r < rows; r++) {
		const struct rd_cell *cell = out_at(t, r, c);
		uint64_t mag = cell->null ? 0 : cell->v.i < 0 ? (uint64_t)0 - (uint64_t)cell->v.i
							     : (uint64_t)cell->v.i;
		most = mag > most ? mag : most;
	}
	return rd_dur_unit_of(most);
}

/* With a width (the terminal's, or $COLUMNS: rd_text_columns), narrow
** the text columns (names, locations) to fit; without one cut nothing. */
static void out_fit(const rd_table_t *t, size_t *wid)
{
	size_t width = t->doc->o->columns > 0 ? (size_t)t->doc->o->columns : 0;
	if (!width)
		return;
	size_t *shown = rd_xcalloc((size_t)t->ncols, sizeof *shown);
	bool *can_cut = rd_xcalloc((size_t)t->ncols, sizeof *can_cut);
	for (int c = 0; c < t->ncols; c++) {
		shown[c] = out_shown_in(t, &t->cols[c]) ? wid[c] : 0;
		can_cut[c] = t->cols[c].kind == RD_K_STR || t->cols[c].kind == RD_K_LOC;
	}
	rd_fit_widths(shown, can_cut, t->ncols, width);
	for (int c = 0; c < t->ncols; c++)
		if (shown[c])
			wid[c] = shown[c];
	free(can_cut);
	free(shown);
}

/* Text that is not a table's row (a title, a note, the snapshot heading)
** in lines of at most `width` columns, broken at spaces (a word wider than
** that on a line of its own, cut in the middle); whole without a width. */
static void text_wrapped(FILE *f, const char *s, size_t width)
{
	if (!width) {
		fprintf(f, "%s\n", s);
		return;
	}
	while (*s) {
		size_t nl = strcspn(s, "\n"), cols = 0, brk = 0, i = 0;
		for (; i < nl; i++) { /* columns: bytes that start a character */
			if (s[i] == ' ' && cols <= width)
				brk = i;
			if (((unsigned char)s[i] & 0xc0) != 0x80 && ++cols > width)
				break;
		}
		size_t take = i == nl ? nl : brk ? brk : nl;
		char *line = strndup(s, take);
		if (!line)
			abort();
		size_t w = rd_text_width(line);
		rd_text_cut(line, &w, width);
		fprintf(f, "%s\n", line);
		free(line);
		s += take;
		while (*s == ' ')
			s++;
		if (take == nl && *s == '\n')
			s++;
	}
}

/* The natural width of each column shown (its widest cell or heading). */
static void text_widths(const rd_table_t *t, size_t rows, const int *unit, size_t *wid)
{
	char buf[1024];
	size_t w;
	for (int c = 0; c < t->ncols; c++) {
		wid[c] = rd_text_width(t->cols[c].head);
		for (size_t r = 0; r < rows; r++) {
			text_cell(&t->cols[c], out_at(t, r, c), unit[c], buf, sizeof buf, &w);
			wid[c] = w > wid[c] ? w : wid[c];
		}
	}
}

static size_t text_total(const rd_table_t *t, const size_t *wid)
{
	size_t total = 0, shown = 0;
	for (int c = 0; c < t->ncols; c++)
		if (out_shown_in(t, &t->cols[c]))
			total += wid[c], shown++;
	return total + (shown > 1 ? 2 * (shown - 1) : 0);
}

/* The column text leaves out next: the rightmost spare one (RD_C_SPARE)
** shown, else the rightmost shown but the first; -1 none. */
static int text_next_left_out(const rd_table_t *t)
{
	int last = -1;
	for (int c = t->ncols - 1; c > 0; c--) {
		if (!out_shown_in(t, &t->cols[c]))
			continue;
		if (t->cols[c].flags & RD_C_SPARE)
			return c;
		last = last < 0 ? c : last;
	}
	return last;
}

/*
** Fit the table to the width: narrow its text columns (out_fit), and when
** its figures alone are still wider, leave out columns, the spare ones
** first, then from the right (never the first) until it fits.  Returns
** the headings left out, for a note ("" none).
*/
static const char *text_fit(rd_table_t *t, size_t rows, const int *unit, size_t *wid)
{
	size_t width = t->doc->o->columns > 0 ? (size_t)t->doc->o->columns : 0;
	const char *left_out = "";
	text_widths(t, rows, unit, wid);
	out_fit(t, wid);
	while (width && text_total(t, wid) > width) {
		int last = text_next_left_out(t);
		if (last <= 0)
			break;
		t->vis[last] = 2; /* not shown in text */
		left_out = rd_pool_fmt(&t->doc->pool, "%s%s%s", t->cols[last].head, *left_out ? ", " : "", left_out);
		text_widths(t, rows, unit, wid);
		out_fit(t, wid);
	}
	return left_out;
}

/* The frames of a row's stack cells, indented under it. */
static void text_stacks(const rd_table_t *t, FILE *f, size_t row, size_t width)
{
	for (int c = 0; c < t->ncols; c++) {
		const struct rd_cell *cell = out_at(t, row, c);
		if (t->cols[c].kind == RD_K_STACK && !cell->null && !(t->cols[c].flags & RD_C_DATA_ONLY))
			rd_stack_text(f, cell->v.s, width);
	}
}

static void text_table(const rd_table_t *t, FILE *f)
{
	size_t width = t->doc->o->columns > 0 ? (size_t)t->doc->o->columns : 0;
	if (t->title)
		text_wrapped(f, t->title, width);
	size_t rows = out_rows(t);
	const char *left_out = "";
	if (t->flags & RD_T_SINGLE) {
		if (rows)
			text_single(t, f);
	} else if (!rows) {
		fputs("(none)\n", f);
	} else {
		size_t *wid = rd_xcalloc((size_t)t->ncols, sizeof *wid);
		int *unit = rd_xcalloc((size_t)t->ncols, sizeof *unit);
		for (int c = 0; c < t->ncols; c++)
			unit[c] = column_dur_unit(t, c, rows);
		left_out = text_fit((rd_table_t *)t, rows, unit, wid);
		text_line(t, f, wid, unit, SIZE_MAX);
		for (size_t r = 0; r < rows; r++) {
			text_line(t, f, wid, unit, r);
			text_stacks(t, f, r, width);
		}
		free(unit);
		free(wid);
	}
	if (*left_out)
		text_wrapped(f, rd_pool_fmt(&t->doc->pool, "(left out at %zu columns: %s; a wider terminal or --json "
					      "shows them)", width, left_out), width);
	if (t->note)
		text_wrapped(f, t->note, width);
}

/* ------------------------------------------------------------ json, csv -- */

static void data_cell(FILE *f, const struct rd_col *col, const struct rd_cell *c, bool json)
{
	char buf[64];
	if (c->null) {
		fputs(json ? "null" : "", f);
		return;
	}
	switch (col->kind) {
	case RD_K_STR: case RD_K_LOC:
		(json ? rd_json_str : rd_csv_str)(f, c->v.s);
		return;
	case RD_K_STACK:
		(json ? rd_stack_json : rd_stack_csv)(f, c->v.s);
		return;
	case RD_K_INT: case RD_K_DELTA:
		fprintf(f, "%lld", (long long)c->v.i);
		return;
	case RD_K_SIZE: case RD_K_ADDR:
		fprintf(f, "%llu", (unsigned long long)c->v.i);
		return;
	case RD_K_TIME: case RD_K_DUR:
		rd_fmt_ms(c->v.i, buf, sizeof buf);
		fputs(buf, f);
		return;
	case RD_K_BOOL:
		fputs(c->v.i ? "true" : "false", f);
		return;
	case RD_K_PCT:
		if (c->v.d == c->v.d && c->v.d < 1e300 && c->v.d > -1e300)
			fprintf(f, "%.2f", c->v.d);
		else
			fputs(json ? "null" : "", f);
		return;
	}
}

/* A location "file:line" as its two fields: the line is the number after
** the last colon; without one (a module+offset) the line is absent. */
static void loc_fields(FILE *f, const struct rd_cell *c, bool json)
{
	const char *s = c->null ? NULL : c->v.s;
	const char *colon = s ? strrchr(s, ':') : NULL;
	bool has_line = colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1);
	char *file = s ? strndup(s, has_line ? (size_t)(colon - s) : strlen(s)) : NULL;
	if (s && !file)
		abort();
	const char *none = json ? "null" : "";
	if (file)
		(json ? rd_json_str : rd_csv_str)(f, file);
	else
		fputs(none, f);
	fprintf(f, json ? ", \"line\": %s" : ",%s", has_line ? colon + 1 : none);
	free(file);
}

/* One row as a JSON object or a CSV line: the cells of the columns shown
** in data output, each written by its kind. */
static void data_row(const rd_table_t *t, FILE *f, size_t row, bool json)
{
	bool first = true;
	if (json)
		fputc('{', f);
	for (int c = 0; c < t->ncols; c++) {
		if (!out_shown_in(t, &t->cols[c]))
			continue;
		bool loc = t->cols[c].kind == RD_K_LOC;
		if (json)
			fprintf(f, "%s\"%s\": ", first ? "" : ", ", loc ? "file" : t->cols[c].key);
		else if (!first)
			fputc(',', f);
		if (loc)
			loc_fields(f, out_at(t, row, c), json);
		else
			data_cell(f, &t->cols[c], out_at(t, row, c), json);
		first = false;
	}
	fputc(json ? '}' : '\n', f);
}

void rd_table_json(const rd_table_t *t, FILE *f)
{
	size_t rows = out_rows(t);
	fprintf(f, "\"%s\": ", t->key);
	if (t->flags & RD_T_SINGLE) {
		if (rows)
			data_row(t, f, 0, true);
		else
			fputs("null", f);
		return;
	}
	fputc('[', f);
	for (size_t r = 0; r < rows; r++) {
		fputs(r ? ",\n  " : "\n  ", f);
		data_row(t, f, r, true);
	}
	fputs(rows ? "\n]" : "]", f);
}

static void csv_table(const rd_table_t *t, FILE *f)
{
	bool first = true;
	for (int c = 0; c < t->ncols; c++) {
		if (!out_shown_in(t, &t->cols[c]))
			continue;
		fprintf(f, "%s%s", first ? "" : ",",
			t->cols[c].kind == RD_K_LOC ? "file,line" : t->cols[c].key);
		first = false;
	}
	fputc('\n', f);
	for (size_t r = 0, rows = out_rows(t); r < rows; r++)
		data_row(t, f, r, false);
}

/* -------------------------------------------------------------- document -- */

/* Tables flagged RD_T_DATA (the snapshot row) stay out of text output
** unless asked for by name: there the heading line says the same. */
static bool out_selected(const rd_doc_t *d, const rd_table_t *t)
{
	if (d->only)
		return strcmp(d->only, t->key) == 0;
	return d->fmt != RD_FMT_TEXT || !(t->flags & RD_T_DATA);
}

/* The usage error of every bad value: the values it could take. */
static int out_no_such_table(const rd_doc_t *d)
{
	char keys[512];
	size_t n = 0;
	keys[0] = 0;
	for (int i = 0; i < d->nt && n < sizeof keys; i++)
		n += (size_t)snprintf(keys + n, sizeof keys - n, "%s%s",
				      i == 0 ? "" : i == d->nt - 1 ? " or " : ", ", d->t[i]->key);
	return rd_usage_error(d->o, d->cmd, "--table takes %s, not '%s'", keys, d->only);
}

static int out_begin(rd_doc_t *d)
{
	int shown = 0;
	for (int i = 0; i < d->nt; i++)
		shown += out_selected(d, d->t[i]);
	if (!shown)
		return out_no_such_table(d);
	if (d->fmt == RD_FMT_JSON)
		fputs("{\n", d->o->out);
	if (d->fmt == RD_FMT_TEXT && d->heading && !d->only) {
		text_wrapped(d->o->out, d->heading, d->o->columns > 0 ? (size_t)d->o->columns : 0);
		fputc('\n', d->o->out);
	}
	return 0;
}

/* Tables [from, to) that are selected, each after its separator. */
static void out_tables(rd_doc_t *d, int from, int to)
{
	FILE *f = d->o->out;
	for (int i = from; i < to; i++) {
		const rd_table_t *t = d->t[i];
		if (!out_selected(d, t))
			continue;
		if (d->fmt == RD_FMT_JSON) {
			fputs(d->printed ? ",\n" : "", f);
			rd_table_json(t, f);
		} else {
			fputs(d->printed ? "\n" : "", f);
			(d->fmt == RD_FMT_CSV ? csv_table : text_table)(t, f);
		}
		d->printed++;
	}
}

int rd_doc_print(rd_doc_t *d)
{
	if (d->stream) {
		rd_row(d->stream); /* the last row */
		fputs(d->fmt == RD_FMT_CSV ? "" : d->streamed ? "\n]\n}\n" : "]\n}\n", d->o->out);
		return 0;
	}
	int r = out_begin(d);
	if (r)
		return r;
	out_tables(d, 0, d->nt);
	if (d->fmt == RD_FMT_JSON)
		fputs("\n}\n", d->o->out);
	return 0;
}

/* ------------------------------------------------------------ streaming -- */

int rd_doc_stream(rd_doc_t *d, rd_table_t *t)
{
	if (d->fmt == RD_FMT_TEXT || t != d->t[d->nt - 1] || !out_selected(d, t) || (t->flags & RD_T_SINGLE))
		return 0;
	int r = out_begin(d);
	if (r)
		return r;
	out_tables(d, 0, d->nt - 1);
	FILE *f = d->o->out;
	if (d->fmt == RD_FMT_JSON) {
		fprintf(f, "%s\"%s\": [", d->printed ? ",\n" : "", t->key);
	} else {
		fputs(d->printed ? "\n" : "", f);
		csv_table(t, f); /* no rows yet: the header line */
	}
	d->stream = t;
	return 0;
}

static void out_stream_row(rd_doc_t *d)
{
	rd_table_t *t = d->stream;
	FILE *f = d->o->out;
	if (d->fmt == RD_FMT_JSON)
		fputs(d->streamed ? ",\n  " : "\n  ", f);
	data_row(t, f, 0, d->fmt == RD_FMT_JSON);
	d->streamed++;
	t->cells.n = 0;
}

void rd_doc_free(rd_doc_t *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->nt; i++) {
		rd_vec_free(&d->t[i]->cells);
		free(d->t[i]);
	}
	rd_pool_free(&d->pool);
	free(d);
}

/* ------------------------------------------------------------- snapshot -- */

static const struct rd_col out_snap_cols[] = {
	{"file", "file", RD_K_STR, 0},
	{"id", "snapshot", RD_K_INT, 0},
	{"content", "content", RD_K_STR, 0},
	{"trigger", "trigger", RD_K_STR, 0},
	{"pid", "pid", RD_K_INT, 0},
	{"ppid", "ppid", RD_K_INT, RD_C_DATA_ONLY},
	{"exe", "exe", RD_K_STR, 0},
	{"cmdline", "command line", RD_K_STR, RD_C_DATA_ONLY},
	{"mode", "mode", RD_K_STR, 0},
	{"backend", "backend", RD_K_STR, 0},
	{"header_bytes", "header size", RD_K_INT, 0},
	{"time_ms", "time", RD_K_TIME, 0},
	{"elapsed_ms", "elapsed", RD_K_DUR, 0},
	{"pause_ms", "pause", RD_K_DUR, RD_C_DATA_ONLY},
	{"seq", "allocations", RD_K_INT, RD_C_DATA_ONLY},
	{"blocks", "blocks", RD_K_INT, 0},
	{"bytes", "bytes", RD_K_SIZE, 0},
	{"since_ms", "counting since", RD_K_TIME, RD_C_DATA_ONLY},
};

/* In text, one line: "FILE: snapshot 3 (map, exit) of pid 42 /bin/app,
** 2023-11-14 22:13:20, mim/system, header 32 B". */
static void out_heading(rd_doc_t *d, const char *key, const char *file, const struct rd_snap *s)
{
	char when[64];
	const char *side = strcmp(key, "a") == 0 ? "A = " : strcmp(key, "b") == 0 ? "B = " : "";
	rd_fmt_time(s->time_ns, when, sizeof when);
	const char *h = rd_pool_fmt(&d->pool, "%s%s: snapshot %lld (%s, %s) of pid %lld %s, %s, %s/%s, header %lld B",
				      side, file, (long long)s->id, s->content, s->trigger, (long long)s->pid,
				      s->exe, when, s->mode, s->backend, (long long)s->header_size);
	if (s->since_ns) { /* started dormant: counted from its first switch on */
		rd_fmt_time(s->since_ns, when, sizeof when);
		h = rd_pool_fmt(&d->pool, "%s, counting since %s (switched on)", h, when);
	}
	char buf[1024];
	rd_text_str(h, buf, sizeof buf, NULL);
	d->heading = d->heading ? rd_pool_fmt(&d->pool, "%s\n%s", d->heading, buf)
				: rd_pool_str(&d->pool, buf);
}

void rd_doc_snapshot(rd_doc_t *d, const char *key, const char *file, const struct rd_snap *s)
{
	out_heading(d, key, file, s);
	rd_table_t *t = rd_doc_table(d, key, out_snap_cols, sizeof out_snap_cols / sizeof out_snap_cols[0],
					 RD_T_SINGLE | RD_T_DATA);
	rd_row(t);
	rd_put_str(t, file);
	rd_put_int(t, s->id);
	rd_put_str(t, s->content);
	rd_put_str(t, s->trigger);
	rd_put_int(t, s->pid);
	rd_put_int(t, s->ppid);
	rd_put_str(t, s->exe);
	rd_put_str(t, s->cmdline);
	rd_put_str(t, s->mode);
	rd_put_str(t, s->backend);
	rd_put_int(t, s->header_size);
	rd_put_int(t, s->time_ns);
	rd_put_int(t, s->elapsed_ns);
	rd_put_int(t, s->pause_ns);
	rd_put_int(t, s->seq);
	rd_put_int(t, s->blocks);
	rd_put_uint(t, (uint64_t)s->bytes);
	if (s->since_ns)
		rd_put_int(t, s->since_ns);
	else
		rd_put_null(t);
}
