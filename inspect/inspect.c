/*
** inspect.c — main of `inspect`, the meminst snapshot reader: the table of
** commands, the overall --help and --version.  Each command parses its own
** arguments (rd_args.c) and returns the exit status.
*/
#include "insp_int.h"
#include "prof_cmds.h" /* the time commands */
#include "exp_cmds.h" /* the exports */

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "meminst-nearest.h"
#include "meminst-snapshot.h"

struct insp_cmd {
	const char *name;
	int (*run)(int argc, char **argv, const struct rd_opts *o);
	const char *summary;
};

static const struct insp_cmd insp_cmds[] = {
	{"list", insp_cmd_list, "the snapshots in a database"},
	{"holes", insp_cmd_holes, "unused space between blocks, per memory segment"},
	{"limits", insp_cmd_limits, "lowest and highest address used, per segment"},
	{"sum", insp_cmd_sum, "number and total size of blocks"},
	{"descr", insp_cmd_descr, "the map by address, with names"},
	{"top", insp_cmd_top, "largest consumers by type, class, thread or site; sites by calls..."},
	{"leaks", insp_cmd_leaks, "memcheck's leak classes: definitely, indirectly, possibly lost"},
	{"sizes", insp_cmd_sizes, "histogram of requested sizes, in total or per site"},
	{"diff", insp_cmd_diff, "growth and new blocks between two snapshots"},
	{"status", insp_cmd_status, "status counters, from a database or a live process"},
	{"timeline", insp_cmd_timeline, "memory of a process over time, with a chart"},
	{"rss", insp_cmd_rss, "the resident set explained: heap, allocator, stacks, files, code"},
	{"report", prof_cmd_report, "a session's time and memory side by side"},
	{"types", insp_cmd_types, "type number range and the table of types"},
	{"type", insp_cmd_type, "describe a type number"},
	{"class", insp_cmd_class, "describe a class number"},
	{"allocator", insp_cmd_allocator, "describe an allocator number"},
	{"header-size", insp_cmd_header_size, "the block header size of the process"},
	{"snapshot", insp_cmd_snapshot, "ask a live process for a map snapshot"},
	{"start", insp_cmd_start, "switch meminst on in a live process started dormant"},
	{"stop", insp_cmd_stop, "switch meminst off in a live process"},
	{"serve", insp_cmd_serve, "a live process's heap profiles over HTTP, as Go's /debug/pprof"},
	{"sql", insp_cmd_sql, "your own SQL query, with the blocks as meminst_blocks(N)"},
	{"profile", prof_cmd_profile, "simulate a trace file: raw profile, --dump"},
	{"analyse", prof_cmd_analyse, "fprof analysis, or sampling displays (flat, tree...)"},
	{"export", exp_cmd_export, "callgrind, folded stacks, Chrome trace JSON or pprof for other viewers"},
	{"html", exp_cmd_html, "a session as one self-contained HTML report"},
};

#define INSP_NCMDS (sizeof insp_cmds / sizeof insp_cmds[0])

static void insp_help(FILE *f)
{
	fputs("Usage: inspect COMMAND [options] DB ...\n"
	      "Read meminst snapshot databases (see inspect(1), meminst-snapshot(5)),\n"
	      "sessions (meminst(1)), trace files and profiles (meminst-trace(5),\n"
	      "meminst-profile(5)).\n\n"
	      "Commands:\n", f);
	for (size_t i = 0; i < INSP_NCMDS; i++)
		fprintf(f, "  %-12s %s\n", insp_cmds[i].name, insp_cmds[i].summary);
	fputs("\n'inspect COMMAND --help' describes a command and its options.  Most take\n"
	      "--snapshot N, --json, --csv and the filters --type, --class, --thread and\n"
	      "--allocator.\n\n"
	      "Exit status: 0 ok; 1 the snapshot, type... asked for does not exist;\n"
	      "2 usage error; 3 unreadable or invalid database; 4 live process unreachable.\n", f);
}

int main(int argc, char **argv)
{
	struct rd_opts o = {.out = stdout, .err = stderr, .progress = isatty(2) == 1,
			      .columns = rd_text_columns(stdout)};
	rd_live_fns = &prof_live_fns; /* top --live-at-exit reads the trace too */
	/* A write past the file size limit (ulimit -f) is an error to report
	** (EFBIG), not a death by SIGXFSZ that leaves a cut file behind. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		fputs("inspect: no command (see 'inspect --help')\n", stderr);
		return RD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		insp_help(stdout);
		return RD_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("inspect (%s) %s\nreads snapshot schema versions %d to %d\n", PACKAGE_NAME,
		       PACKAGE_VERSION, MEMINST_SNAPSHOT_MIN_READABLE, MEMINST_SNAPSHOT_VERSION);
		return RD_EXIT_OK;
	}
	for (size_t i = 0; i < INSP_NCMDS; i++) {
		if (strcmp(argv[1], insp_cmds[i].name) == 0) {
			int r = insp_cmds[i].run(argc - 1, argv + 1, &o);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				perror("inspect: writing the output");
				return r ? r : RD_EXIT_DB;
			}
			return r;
		}
	}
	const char *names[INSP_NCMDS];
	for (size_t i = 0; i < INSP_NCMDS; i++)
		names[i] = insp_cmds[i].name;
	const char *near = meminst_nearest(argv[1], strlen(argv[1]), names, INSP_NCMDS);
	if (near)
		rd_errf(stderr, "inspect: unknown command '%s' (did you mean '%s'?)\n", argv[1], near);
	else
		rd_errf(stderr, "inspect: unknown command '%s' (see 'inspect --help')\n", argv[1]);
	return RD_EXIT_USAGE;
}
