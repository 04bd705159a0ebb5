/*
** prof_images.c — the programs a process ran (its images: it exec'd),
** for every reader of a session's trace.  The answer shows one image (the
** one with the most samples, else the longest, or --image K's); the
** others would be hidden without a word (a shell that exec'd the program,
** the program that exec'd echo), and a cut trace among them unseen (its
** warning comes only when that image is read).  So each command says, in
** one line made here (text, a table's title, HTML, stderr, an export's
** comment) and in one table "images" (JSON), which image is shown, the
** others with their program, samples and calls, which traces were cut,
** and that --image K picks another.
**
** The other images are read quietly, each once, when the process has
** more than one (a process that never exec'd costs nothing).
*/
#include "prof_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool prof_trace_cut(const struct prof_trace *tr)
{
	return tr->torn || (!tr->ended && (tr->h.flags & MEMINST_TRACE_F_ENDS));
}

/* One image's figures from its reading. */
static void images_fill(struct prof_image *im, const struct prof_trace *tr, uint64_t samples)
{
	im->program = tr->exe ? rd_xstrdup(tr->exe) : NULL;
	im->samples = samples;
	im->calls = prof_trace_calls(tr);
	im->cut = prof_trace_cut(tr);
	im->read = true;
}

/* Image k of pid, read quietly (its damage is said when it is read for
** itself, with --image k). */
static void images_read_one(const char *path, const struct rd_opts *o, int64_t pid, struct prof_image *im)
{
	struct rd_opts quiet = *o;
	if (!(quiet.err = fopen("/dev/null", "w")))
		return;
	quiet.progress = false;
	struct prof_trace tr;
	struct prof_samples *s = prof_samples_new();
	int64_t was = rd_strace_want_image(im->image);
	if (prof_source_read(path, pid, &quiet, &tr, NULL, NULL, NULL, s) == 0)
		images_fill(im, &tr, prof_samples_count(s));
	rd_strace_want_image(was);
	prof_trace_free(&tr);
	prof_samples_free(s);
	fclose(quiet.err);
}

int prof_images_read(struct prof_images *is, const char *path, const struct rd_opts *o,
		     const struct prof_trace *tr, uint64_t samples)
{
	memset(is, 0, sizeof *is);
	struct rd_strace_read last = rd_strace_last();
	if (last.images < 2 || last.image < 0)
		return 0;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int r = rd_sqlite_open(o, path, &db);
	if (!r && sqlite3_prepare_v2(db, "SELECT DISTINCT image FROM session_trace WHERE pid = ? ORDER BY image",
				     -1, &st, NULL) != SQLITE_OK)
		r = (rd_errf(o->err, "inspect: %s: %s\n", path, rd_sql_msg(db)), RD_EXIT_DB);
	is->pid = last.pid;
	is->shown = last.image;
	is->chosen = rd_strace_wanted() >= 0;
	if (!r)
		sqlite3_bind_int64(st, 1, last.pid);
	while (!r && sqlite3_step(st) == SQLITE_ROW) {
		is->im = rd_xrealloc(is->im, (is->n + 1) * sizeof *is->im);
		struct prof_image *im = memset(&is->im[is->n++], 0, sizeof *is->im);
		im->image = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	for (size_t i = 0; !r && i < is->n; i++) {
		if (is->im[i].image == is->shown)
			images_fill(&is->im[i], tr, samples);
		else
			images_read_one(path, o, is->pid, &is->im[i]);
	}
	return r;
}

void prof_images_free(struct prof_images *is)
{
	for (size_t i = 0; i < is->n; i++)
		free(is->im[i].program);
	free(is->im);
	memset(is, 0, sizeof *is);
}

/* The program's name without its directory ("?" when its trace names none). */
static const char *images_name(const struct prof_image *im)
{
	const char *slash = im->program ? strrchr(im->program, '/') : NULL;
	return slash ? slash + 1 : im->program && *im->program ? im->program : "?";
}

/* What an image did, in a few words. */
static void images_did(const struct prof_image *im, char *buf, size_t len)
{
	if (!im->read)
		snprintf(buf, len, "unreadable");
	else if (im->samples || !im->calls)
		snprintf(buf, len, "%llu sample%s", (unsigned long long)im->samples, im->samples == 1 ? "" : "s");
	else
		snprintf(buf, len, "%llu call%s", (unsigned long long)im->calls, im->calls == 1 ? "" : "s");
}

#define IMAGES_NAMED 3 /* others named in the line; the table has them all */

void prof_images_line(const struct prof_images *is, char *buf, size_t len)
{
	size_t n = 0, named = 0, cut = 0;
	const struct prof_image *shown = NULL;
	buf[0] = 0;
	for (size_t i = 0; i < is->n; i++)
		if (is->im[i].image == is->shown)
			shown = &is->im[i];
	if (!shown)
		return;
	char did[48], name[128];
	rd_text_str(images_name(shown), name, sizeof name, NULL); /* no control character reaches the terminal */
	n += (size_t)snprintf(buf + n, len - n, "process %lld ran %zu programs; shown: image %lld (%s; %s); "
			      "%zu other%s:", (long long)is->pid, is->n, (long long)shown->image, name,
			      is->chosen ? "--image" : "default: most samples, else longest",
			      is->n - 1, is->n == 2 ? "" : "s");
	for (size_t i = 0; i < is->n && n < len; i++) {
		const struct prof_image *im = &is->im[i];
		cut += im->cut && im != shown;
		if (im == shown || named++ == IMAGES_NAMED)
			continue;
		images_did(im, did, sizeof did);
		rd_text_str(images_name(im), name, sizeof name, NULL);
		n += (size_t)snprintf(buf + n, len - n, "%s image %lld (%s: %s%s)", named > 1 ? "," : "",
				      (long long)im->image, name, did, im->cut ? ", its trace cut" : "");
	}
	if (named > IMAGES_NAMED && n < len)
		n += (size_t)snprintf(buf + n, len - n, " and %zu more", named - IMAGES_NAMED);
	if (n < len)
		snprintf(buf + n, len - n, "; --image K shows image K%s",
			 cut ? " (a cut trace is read up to where it stops)" : "");
}

static const struct rd_col images_cols[] = {
	{"pid", "pid", RD_K_INT, 0},
	{"image", "image", RD_K_INT, 0},
	{"program", "program", RD_K_STR, 0},
	{"samples", "samples", RD_K_INT, 0},
	{"calls", "calls", RD_K_INT, 0},
	{"cut", "cut", RD_K_BOOL, 0},
	{"shown", "shown", RD_K_BOOL, 0},
};

rd_table_t *prof_images_table(rd_doc_t *d, const struct prof_images *is)
{
	rd_table_t *t = rd_doc_table(d, "images", images_cols, (int)(sizeof images_cols / sizeof images_cols[0]), 0);
	char line[1024];
	prof_images_line(is, line, sizeof line);
	if (*line)
		rd_table_title(t, "%s", line);
	prof_images_rows(t, is);
	return t;
}

void prof_images_rows(rd_table_t *t, const struct prof_images *is)
{
	for (size_t i = 0; i < is->n; i++) {
		const struct prof_image *im = &is->im[i];
		rd_row(t);
		rd_put_int(t, is->pid);
		rd_put_int(t, im->image);
		if (im->program)
			rd_put_str(t, im->program);
		else
			rd_put_null(t);
		if (im->read) {
			rd_put_uint(t, im->samples);
			rd_put_uint(t, im->calls);
			rd_put_int(t, im->cut);
		} else {
			rd_put_null(t);
			rd_put_null(t);
			rd_put_null(t);
		}
		rd_put_int(t, im->image == is->shown);
	}
}

void prof_images_json(const struct prof_images *is, FILE *f)
{
	if (!is || !is->n)
		return;
	struct rd_args a = {.format = RD_FMT_JSON};
	rd_doc_t *d = rd_doc_new(NULL, &a); /* rd_table_json prints to f alone */
	fputc(',', f);
	rd_table_json(prof_images_table(d, is), f);
	rd_doc_free(d);
}

void prof_images_text(const struct prof_images *is, FILE *f)
{
	char line[1024];
	if (!is)
		return;
	prof_images_line(is, line, sizeof line);
	if (*line)
		fprintf(f, "%s\n", line);
}

void prof_images_say(const struct prof_images *is, const char *path, const struct rd_opts *o)
{
	char line[1024];
	prof_images_line(is, line, sizeof line);
	if (*line)
		rd_errf(o->err, "inspect: %s: %s\n", path, line);
}
