/*
** ui.c — see ui.h.
*/
#include "ui.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meminst-snapshot.h"

static char ui_dir[64];

static void ui_cleanup(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", ui_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "ui: could not remove %s\n", ui_dir);
}

const char *ui_path(const char *name)
{
	if (!ui_dir[0]) {
		snprintf(ui_dir, sizeof ui_dir, "/tmp/insp-unit.XXXXXX");
		cr_assert_not_null(mkdtemp(ui_dir));
		atexit(ui_cleanup);
	}
	static char paths[16][128];
	static int next;
	char *p = paths[next++ % 16];
	snprintf(p, 128, "%s/%s", ui_dir, name);
	return p;
}

const char *ui_db(const char *fixture, const struct fx_opts *o)
{
	static int n;
	char name[64], sql[512], err[512];
	snprintf(name, sizeof name, "db%d.db", n++);
	const char *path = ui_path(name);
	snprintf(sql, sizeof sql, "%s/tests/inspect/fixtures/%s.sql", UI_SRCDIR, fixture ? fixture : "");
	const char *files[] = {sql};
	int r = fx_create(path, o, files, fixture ? 1 : 0, err, sizeof err);
	cr_assert_eq(r, 0, "fixture %s: %s", fixture, err);
	return path;
}

const char *ui_fixture(const char *fixture)
{
	struct fx_opts o = FX_OPTS_DEFAULT;
	return ui_db(fixture, &o);
}

struct ui_cmd {
	const char *name;
	int (*run)(int, char **, const struct rd_opts *);
};

static const struct ui_cmd ui_cmds[] = {
	{"list", insp_cmd_list}, {"holes", insp_cmd_holes}, {"limits", insp_cmd_limits},
	{"sum", insp_cmd_sum}, {"descr", insp_cmd_descr}, {"top", insp_cmd_top},
	{"diff", insp_cmd_diff}, {"status", insp_cmd_status}, {"types", insp_cmd_types},
	{"type", insp_cmd_type}, {"class", insp_cmd_class}, {"allocator", insp_cmd_allocator},
	{"header-size", insp_cmd_header_size}, {"snapshot", insp_cmd_snapshot},
};

struct ui_run ui_inspect(const char *arg, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	va_start(ap, arg);
	for (const char *a = arg; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	struct ui_run r = {0};
	size_t no, ne;
	struct rd_opts o = {.out = open_memstream(&r.out, &no), .err = open_memstream(&r.err, &ne),
			      .no_symbols = true};
	r.rc = -1;
	for (size_t i = 0; i < sizeof ui_cmds / sizeof ui_cmds[0]; i++)
		if (strcmp(argv[0], ui_cmds[i].name) == 0)
			r.rc = ui_cmds[i].run(argc, argv, &o);
	fclose(o.out);
	fclose(o.err);
	cr_assert_neq(r.rc, -1, "no command %s", argv[0]);
	return r;
}

void ui_free(struct ui_run *r)
{
	free(r->out);
	free(r->err);
}
