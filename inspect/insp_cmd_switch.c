/*
** insp_cmd_switch.c — `inspect start --pid PID [--mis|--mim] [--sample=HZ]
** [--site-depth=N|user]` and `inspect stop --pid PID`: switch meminst on
** and off in a live process started dormant (MEMINST=off,control=on, or
** meminst --dormant), through its control channel: no restart, no ptrace.
** Counting starts at the first switch on; the process's snapshots say since
** when (meminst(7), "Dormant, then on").  The options go to the process as
** MEMINST's items (site_depth=, sample=), carried out at the switch.
*/
#include "insp_int.h"

#include <string.h>

enum { SWITCH_ID_MIS = RD_ID_OWN, SWITCH_ID_MIM, SWITCH_ID_SAMPLE, SWITCH_ID_SITE_DEPTH };

static const struct rd_option start_options[] = {
	RD_OPTION_PID("the process, started dormant"),
	{"mis", 0, RD_OT_FLAG, NULL, "status counters only (the default)", SWITCH_ID_MIS, 0, 0, NULL},
	{"mim", 0, RD_OT_FLAG, NULL, "status counters and the map of live blocks", SWITCH_ID_MIM, 0, 0, NULL},
	{"sample", 0, RD_OT_INT, "HZ", "CPU samples too, HZ per second (1 to 10000), into the\n"
	 "process's trace file, until inspect stop", SWITCH_ID_SAMPLE, 1, 10000, NULL},
	{"site-depth", 0, RD_OT_STR, "N|user", "key allocation sites by N return addresses (1 to 32), or\n"
	 "up to the first frame in the program's own code; only at\n"
	 "the first switch on (default: as the process was started)", SWITCH_ID_SITE_DEPTH, 0, 0, NULL},
	RD_OPTION_END,
};

static const struct rd_option stop_options[] = {
	RD_OPTION_PID("the process, switched on by inspect start"),
	RD_OPTION_END,
};

static const struct rd_cmd_spec start_spec = {
	"start", "--pid PID [--mis|--mim] [--sample=HZ] [--site-depth=N|user]",
	"Switch meminst on in the live process PID, started dormant (MEMINST=off,\n"
	"control=on, or meminst --dormant): from now on its allocations are\n"
	"counted (--mis) and mapped (--mim), with no restart and no ptrace.  Blocks\n"
	"made before are freed as usual and never counted.  A process switched on\n"
	"again after inspect stop keeps its first mode and site depth and counts\n"
	"on.  --sample also switches the CPU sampler on, into the trace file\n"
	"MEMINST's trace_file= names (meminst --dormant: the session's), until\n"
	"inspect stop.\n",
	start_options, 0, 0,
};

static const struct rd_cmd_spec stop_spec = {
	"stop", "--pid PID",
	"Switch meminst off in the live process PID (switched on by inspect\n"
	"start): new blocks are no longer counted; those counted before are\n"
	"counted out when freed, so that a later start goes on from there.\n",
	stop_options, 0, 0,
};

struct switch_start {
	const char *mode, *site_depth;
	int64_t sample_hz;
};

static int switch_own(struct rd_getopt *g, void *ctx)
{
	struct switch_start *st = ctx;
	int64_t n;
	if (g->opt->id == SWITCH_ID_SAMPLE) {
		st->sample_hz = g->num;
	} else if (g->opt->id == SWITCH_ID_SITE_DEPTH) {
		if (strcmp(g->value, "user") && (!rd_parse_int(g->value, &n) || n < 1 || n > 32))
			return rd_cmd_error(g->o, g->spec, "--site-depth=%s: expected user or a number of "
					    "frames from 1 to 32", g->value);
		st->site_depth = g->value;
	} else {
		const char *m = g->opt->id == SWITCH_ID_MIM ? "mim" : "mis";
		if (st->mode && m != st->mode)
			return rd_cmd_error(g->o, g->spec, "--mis and --mim exclude each other");
		st->mode = m;
	}
	return RD_CONTINUE;
}

int insp_cmd_start(int argc, char **argv, const struct rd_opts *o)
{
	struct rd_args a;
	struct switch_start st = {0};
	int r = rd_args_parse_own(&start_spec, argc, argv, o, &a, switch_own, &st);
	if (r != RD_CONTINUE)
		return r;
	if (!a.pid)
		return rd_usage_error(o, "start", "needs --pid PID");
	const char *mode = st.mode ? st.mode : "mis";
	char req[64], hz[32] = "";
	if (st.sample_hz)
		snprintf(hz, sizeof hz, "sample=%lld", (long long)st.sample_hz);
	snprintf(req, sizeof req, "start %s%s%s%s%s%s", mode, st.site_depth || *hz ? " " : "",
		 st.site_depth ? "site_depth=" : "", st.site_depth ? st.site_depth : "",
		 st.site_depth && *hz ? "," : "", hz);
	if ((r = insp_control_switch(o, a.pid, req)))
		return r;
	if (*hz)
		fprintf(o->out, "process %lld: meminst on (%s), CPU samples at %s Hz\n", (long long)a.pid, mode, hz + 7);
	else
		fprintf(o->out, "process %lld: meminst on (%s)\n", (long long)a.pid, mode);
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
