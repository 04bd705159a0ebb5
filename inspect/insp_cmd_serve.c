/*
** insp_cmd_serve.c — `inspect serve --pid PID [--listen HOST:PORT]`: the
** paths Go's net/http/pprof serves, answered for a live process started
** with control=on, by a separate process (the target runs no HTTP server
** and no thread of ours).  Each scrape of heap or allocs asks the target
** through its control channel for a map snapshot (a status one in mis)
** in a new temporary file, writes Go's heap profile of it with export's
** writer (exp_heap_write) and removes the file: the target keeps nothing
** of it, no descriptor and no thread.  The modules' symbols are read once
** and kept with every site they named (rd_syms_keep): a scrape of the same
** modules names its sites from memory.
**
**   /debug/pprof/          an index of what is served
**   /debug/pprof/heap      live memory by allocation site (and thread, in
**                          mim), with the allocation counters
**   /debug/pprof/allocs    the same profile, alloc_space its default
**   /debug/pprof/profile   501: sampling cannot be switched on in a
**                          running process through the control channel
**
** The HTTP server is insp_http.c; the control channel's client
** insp_control.c, which checks that the socket is the target's and that
** it runs as our user.
*/
#include "insp_int.h"
#include "exp_cmds.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SERVE_O_LISTEN = RD_ID_OWN, SERVE_O_ALLOW_REMOTE };

static const struct rd_option serve_options[] = {
	RD_OPTION_PID("the process (started with MEMINST=...,control=on)"),
	{"listen", 0, RD_OT_STR, "HOST:PORT", "the address to serve on (default 127.0.0.1:6060; a\n"
	 "port 0 picks a free one, printed at start)", SERVE_O_LISTEN, 0, 0, NULL},
	{"allow-remote", 0, RD_OT_FLAG, NULL, "allow an address other than loopback (anyone who\n"
	 "reaches it reads the profiles)", SERVE_O_ALLOW_REMOTE, 0, 0, NULL},
	RD_OPTION_NO_SYMBOLS("name functions module+offset, without reading module files"),
	RD_OPTION_END,
};

static const struct rd_cmd_spec serve_spec = {
	"serve", "--pid PID [--listen HOST:PORT] [options]",
	"Serve the live process PID's memory profiles over HTTP on the paths of Go's\n"
	"net/http/pprof, for go tool pprof and the fleet profilers that scrape them\n"
	"(Grafana Alloy, Pyroscope, Parca):\n"
	"  /debug/pprof/heap    live memory by allocation site (and thread in mim)\n"
	"                       with the allocation counters: alloc_objects,\n"
	"                       alloc_space, inuse_objects, inuse_space\n"
	"  /debug/pprof/allocs  the same, alloc_space the default\n"
	"  /debug/pprof/        an index\n"
	"  /debug/pprof/profile 501: CPU sampling cannot be switched on in a\n"
	"                       running process yet (run it under meminst --sample)\n"
	"Each scrape takes a snapshot through the control channel into a\n"
	"temporary file, removed once answered.  One request at a time; SIGINT or\n"
	"SIGTERM stops the server, as does the process's end (exit status 4).\n",
	serve_options, 0, 0,
};

struct serve {
	const struct rd_opts *o;
	int64_t pid;
	bool gone;
	char url[128];
};

/* ---------------------------------------------------------- handlers -- */

static void serve_index(struct serve *s, struct insp_http_resp *r)
{
	insp_http_text(r, 200,
		       "<html><head><title>/debug/pprof/</title></head><body>\n"
		       "<p>/debug/pprof/ of process %lld, served by meminst's inspect serve</p>\n"
		       "<p>Types of profiles available:</p>\n<table>\n"
		       "<tr><td><a href=\"allocs\">allocs</a></td><td>the allocations since the start and the "
		       "live memory by allocation site, alloc_space first</td></tr>\n"
		       "<tr><td><a href=\"heap\">heap</a></td><td>the live memory by allocation site (and "
		       "thread), with the allocation counters</td></tr>\n"
		       "<tr><td>profile</td><td>not served: CPU sampling cannot be switched on in a running "
		       "process (run it under meminst --sample)</td></tr>\n"
		       "</table>\n<p>go tool pprof %s/debug/pprof/heap</p>\n</body></html>\n",
		       (long long)s->pid, s->url);
	r->type = "text/html; charset=utf-8";
}

/* A live snapshot in a temporary file, Go's heap profile of it as the
** body; a failure is 500 with the line it said (also on stderr). */
static void serve_heap(struct serve *s, bool allocs, struct insp_http_resp *r)
{
	char *msg = NULL, path[PATH_MAX];
	size_t mlen = 0;
	struct rd_opts o = *s->o;
	o.progress = false;
	o.err = open_memstream(&msg, &mlen);
	FILE *body = o.err ? open_memstream(&r->body, &r->len) : NULL;
	int64_t id = 0;
	int e = !body ? RD_EXIT_DB : insp_control_tempfile(&o, path, sizeof path);
	if (!e) {
		if (!(e = insp_control_snapshot(&o, s->pid, path, "map", &id)))
			e = exp_heap_write(path, id, allocs, &o, body);
		insp_control_tempfile_remove(path);
	}
	if (body)
		fclose(body);
	if (o.err)
		fclose(o.err);
	if (!e) {
		r->status = 200;
		r->type = "application/octet-stream";
		r->filename = allocs ? "allocs" : "heap";
	} else {
		fputs(msg ? msg : "inspect: out of memory\n", s->o->err);
		insp_http_text(r, 500, "%s", msg && *msg ? msg : "inspect: the profile could not be made\n");
	}
	free(msg);
	if (e == RD_EXIT_LIVE && kill((pid_t)s->pid, 0) != 0 && errno == ESRCH)
		s->gone = true;
}

static void serve_handle(void *ctx, const struct insp_http_req *q, struct insp_http_resp *r)
{
	struct serve *s = ctx;
	char v[64];
	bool heap = !strcmp(q->path, "/debug/pprof/heap"), allocs = !strcmp(q->path, "/debug/pprof/allocs");
	if (!strcmp(q->path, "/debug/pprof/") || !strcmp(q->path, "/debug/pprof") || !strcmp(q->path, "/"))
		serve_index(s, r);
	else if ((heap || allocs) && insp_http_param(q, "debug", v, sizeof v) && strcmp(v, "0") != 0)
		insp_http_text(r, 400, "debug=%s: only the binary profile (debug=0) is served; read it with "
			       "go tool pprof\n", v);
	else if ((heap || allocs) && insp_http_param(q, "seconds", v, sizeof v))
		insp_http_text(r, 400, "seconds=%s: delta profiles are not served; the counters are since the "
			       "start (scrapers take the differences)\n", v);
	else if (heap || allocs)
		serve_heap(s, allocs, r);
	else if (!strcmp(q->path, "/debug/pprof/profile"))
		insp_http_text(r, 501, "CPU profiles are not served: meminst's control channel cannot switch "
			       "sampling on in a running process; run the program under meminst --sample=HZ "
			       "and read the session with inspect export --format pprof\n");
	else
		insp_http_text(r, 404, "%s: not found; served: /debug/pprof/, /debug/pprof/heap, "
			       "/debug/pprof/allocs\n", q->path);
}

static bool serve_stop(void *ctx)
{
	struct serve *s = ctx;
	if (!s->gone && kill((pid_t)s->pid, 0) != 0 && errno == ESRCH)
		s->gone = true;
	return s->gone;
}

/* ----------------------------------------------------------- command -- */

int insp_cmd_serve(int argc, char **argv, const struct rd_opts *o)
{
	const char *listen_at = "127.0.0.1:6060";
	bool remote = false;
	int64_t pid = 0;
	struct rd_opts so = *o;
	struct rd_getopt g;
	rd_getopt_init(&g, &serve_spec, argc, argv, o);
	int r;
	while ((r = rd_getopt(&g)) == RD_OPTION)
		switch (g.opt->id) {
		case RD_ID_PID: pid = g.num; break;
		case SERVE_O_LISTEN: listen_at = g.value; break;
		case SERVE_O_ALLOW_REMOTE: remote = true; break;
		case RD_ID_NO_SYMBOLS: so.no_symbols = true; break;
		}
	if (r != RD_CONTINUE)
		return r;
	if (!pid)
		return rd_usage_error(o, "serve", "needs --pid PID (a process started with MEMINST=mim,control=on)");
	struct serve s = {.o = &so, .pid = pid};
	int lfd;
	if ((r = insp_http_listen(o, listen_at, remote, &lfd, s.url, sizeof s.url)))
		return r;
	if ((r = insp_control_check(o, pid))) {
		close(lfd);
		return r;
	}
	fprintf(o->out, "inspect: serving process %lld at %s/debug/pprof/\n", (long long)pid, s.url);
	fflush(o->out);
	rd_syms_keep(true); /* the same modules every scrape: their symbols read once */
	int sig = insp_http_serve(lfd, serve_handle, serve_stop, &s);
	rd_syms_keep(false);
	close(lfd);
	if (s.gone && !sig) {
		rd_errf(o->err, "inspect: process %lld has ended: serve stops\n", (long long)pid);
		return RD_EXIT_LIVE;
	}
	return 0;
}
