/*
** insp_cmd_snapshot.c — `inspect snapshot --pid PID -o FILE`: ask a live
** process, through its control channel, to store a map snapshot in FILE
** (created with mode 0600 if missing, else added to).  The process opens
** FILE itself, so the path sent is made absolute first.
*/
#include "insp_int.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

static const struct rd_option snapshot_options[] = {
	RD_OPTION_PID("the process"),
	RD_OPTION_OUTPUT("the database to write (created if missing)"),
	RD_OPTIONS_FORMAT,
	RD_OPTION_END,
};

static const struct rd_cmd_spec snapshot_spec = {
	"snapshot", "--pid PID -o FILE [options]",
	"Ask the live process PID, started with MEMINST=mim,control=on, to store a\n"
	"map snapshot (its live blocks and its status) in the database FILE, and\n"
	"print the number of the new snapshot.  The process must run as the same\n"
	"user; inspect checks that the socket it talks to belongs to PID.\n",
	snapshot_options, 0, 0,
};

static const struct rd_col written_cols[] = {
	{"pid", "process", RD_K_INT, 0},
	{"file", "file", RD_K_STR, 0},
	{"snapshot", "snapshot", RD_K_INT, 0},
};

int insp_cmd_snapshot(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&snapshot_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	if (!a.pid || !a.output || !*a.output)
		return rd_usage_error(o, "snapshot", "needs --pid PID and -o FILE");
	char path[PATH_MAX], cwd[PATH_MAX];
	if (a.output[0] == '/')
		snprintf(path, sizeof path, "%s", a.output);
	else if (!getcwd(cwd, sizeof cwd) ||
		 (size_t)snprintf(path, sizeof path, "%s/%s", cwd, a.output) >= sizeof path)
		return rd_usage_error(o, "snapshot", "cannot make '%s' an absolute path", a.output);
	int64_t id = 0;
	if ((r = insp_control_snapshot(o, a.pid, path, "map", &id)))
		return r;
	rd_doc_t *d = rd_doc_new(o, &a);
	rd_table_t *t = rd_doc_table(d, "written", written_cols, 3, RD_T_SINGLE);
	rd_row(t);
	rd_put_int(t, a.pid);
	rd_put_str(t, path);
	rd_put_int(t, id);
	r = rd_doc_print(d);
	rd_doc_free(d);
	return r;
}
