/*
** insp_cmd_switch.c — `inspect start --pid PID [--mis|--mim]` and `inspect
** stop --pid PID`: switch meminst on and off in a live process started
** dormant (MEMINST=off,control=on, or meminst --dormant), through its
** control channel: no restart, no ptrace.  Counting starts at the first
** switch on; the process's snapshots say since when (meminst(7), "Dormant,
** then on").
*/
#include "insp_int.h"

enum { SWITCH_ID_MIS = RD_ID_OWN, SWITCH_ID_MIM };

static const struct rd_option start_options[] = {
	RD_OPTION_PID("the process, started dormant"),
	{"mis", 0, RD_OT_FLAG, NULL, "status counters only (the default)", SWITCH_ID_MIS, 0, 0, NULL},
	{"mim", 0, RD_OT_FLAG, NULL, "status counters and the map of live blocks", SWITCH_ID_MIM, 0, 0, NULL},
	RD_OPTION_END,
};

static const struct rd_option stop_options[] = {
	RD_OPTION_PID("the process, switched on by inspect start"),
	RD_OPTION_END,
};

static const struct rd_cmd_spec start_spec = {
	"start", "--pid PID [--mis|--mim]",
	"Switch meminst on in the live process PID, started dormant (MEMINST=off,\n"
	"control=on, or meminst --dormant): from now on its allocations are\n"
	"counted (--mis) and mapped (--mim), with no restart and no ptrace.  Blocks\n"
	"made before are freed as usual and never counted.  A process switched on\n"
	"again after inspect stop keeps its first mode and counts on.\n",
	start_options, 0, 0,
};

static const struct rd_cmd_spec stop_spec = {
	"stop", "--pid PID",
	"Switch meminst off in the live process PID (switched on by inspect\n"
	"start): new blocks are no longer counted; those counted before are\n"
	"counted out when freed, so that a later start goes on from there.\n",
	stop_options, 0, 0,
};

static int switch_own(struct rd_getopt *g, void *ctx)
{
	const char **mode = ctx;
	const char *m = g->opt->id == SWITCH_ID_MIM ? "mim" : "mis";
	if (*mode && m != *mode)
		return rd_cmd_error(g->o, g->spec, "--mis and --mim exclude each other");
	*mode = m;
	return RD_CONTINUE;
}

int insp_cmd_start(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	const char *mode = NULL;
	int r = rd_args_parse_own(&start_spec, argc, argv, o, &a, switch_own, &mode);
	if (r != RD_CONTINUE)
		return r;
	if (!a.pid)
		return rd_usage_error(o, "start", "needs --pid PID");
	char req[16];
	snprintf(req, sizeof req, "start %s", mode ? mode : "mis");
	if ((r = insp_control_switch(o, a.pid, req)))
		return r;
	fprintf(o->out, "process %lld: meminst on (%s)\n", (long long)a.pid, mode ? mode : "mis");
	return RD_EXIT_OK;
}

int insp_cmd_stop(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	int r = rd_args_parse(&stop_spec, argc, argv, o, &a);
	if (r != RD_CONTINUE)
		return r;
	if (!a.pid)
		return rd_usage_error(o, "stop", "needs --pid PID");
	if ((r = insp_control_switch(o, a.pid, "stop")))
		return r;
	fprintf(o->out, "process %lld: meminst off\n", (long long)a.pid);
	return RD_EXIT_OK;
}
