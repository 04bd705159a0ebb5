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
**   /debug/pprof/profile   CPU samples of ?seconds=N (1 to 300, 30 by
**                          default): the process's sampler switched on at
**                          SERVE_PROFILE_HZ for that time through the
**                          control channel, then off (also when the client
**                          goes away or serve is stopped; the process stops
**                          it itself a little later if serve dies); the
**                          samples read from the process's samples file,
**                          opened through /proc/PID/fd while it samples (its
**                          name is removed at once, and the process closes
**                          it at the stop), and answered as Go's CPU profile
**
** The HTTP server is insp_http.c; the control channel's client
** insp_control.c, which checks that the socket is the target's and that
** it runs as our user.
*/
#include "insp_int.h"
#include "exp_cmds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
	"  /debug/pprof/profile CPU samples for ?seconds=N (1 to 300, default 30):\n"
	"                       the process's sampler switched on at 100 Hz for\n"
	"                       that time, then off again\n"
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
		       "<tr><td><a href=\"profile?seconds=30\">profile</a></td><td>CPU samples for ?seconds=N "
		       "(1 to 300, 30 by default): the process's sampler switched on for that time</td></tr>\n"
		       "</table>\n<p>go tool pprof %s/debug/pprof/heap</p>\n</body></html>\n",
		       (long long)s->pid, s->url);
	r->type = "text/html; charset=utf-8";
}

/* One answer being made: the body, and the lines said meanwhile (the
** failure's, answered and copied to serve's stderr). */
struct serve_job {
	struct rd_opts o;
	char *msg;
	size_t mlen;
	FILE *body;
};

static int serve_job_begin(struct serve *s, struct serve_job *j, struct insp_http_resp *r)
{
	*j = (struct serve_job){.o = *s->o};
	j->o.progress = false;
	j->o.err = open_memstream(&j->msg, &j->mlen);
	j->body = j->o.err ? open_memstream(&r->body, &r->len) : NULL;
	return j->body ? 0 : RD_EXIT_DB;
}

/* The answer: 200 with the body named filename, or status with the line
** said; a process gone meanwhile stops serve. */
static void serve_job_end(struct serve *s, struct serve_job *j, int e, int status, const char *filename,
			  struct insp_http_resp *r)
{
	if (j->body)
		fclose(j->body);
	if (j->o.err)
		fclose(j->o.err);
	if (!e) {
		r->status = 200;
		r->type = "application/octet-stream";
		r->filename = filename;
	} else {
		fputs(j->msg ? j->msg : "inspect: out of memory\n", s->o->err);
		insp_http_text(r, status, "%s", j->msg && *j->msg ? j->msg : "inspect: the profile could not be made\n");
	}
	free(j->msg);
	if (e == RD_EXIT_LIVE && kill((pid_t)s->pid, 0) != 0 && errno == ESRCH)
		s->gone = true;
}

enum { SERVE_PROFILE_HZ = 100, SERVE_PROFILE_MAX_S = 300, SERVE_PROFILE_DEFAULT_S = 30 };

/* The sampler on for a new profile: 0 with *fd our descriptor of the
** process's samples file (it closes its own at the stop), or an exit code
** (the line in o->err). */
static int serve_sample_start(struct serve *s, const struct rd_opts *o, int64_t seconds, int *fd)
{
	char path[PATH_MAX], line[PATH_MAX + 64];
	int64_t theirs = -1;
	int e = insp_control_tempfile(o, path, sizeof path);
	if (e)
		return e;
	snprintf(line, sizeof line, "sample start %d %lld %s", SERVE_PROFILE_HZ, (long long)seconds, path);
	e = insp_control_sample(o, s->pid, line, &theirs);
	insp_control_tempfile_remove(path); /* the process holds it open (or another of its own) */
	if (!e) {
		snprintf(path, sizeof path, "/proc/%lld/fd/%lld", (long long)s->pid, (long long)theirs);
		if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			rd_errf(o->err, "inspect: %s: cannot open the process's samples file: %s\n", path,
				strerror(errno));
			insp_control_sample(o, s->pid, "sample stop", &theirs);
			e = RD_EXIT_LIVE;
		}
	}
	return e;
}

/* /debug/pprof/profile: the sampler on for `seconds`, off, the samples as
** Go's CPU profile; 503 with the process's reason when it cannot sample. */
static void serve_profile(struct serve *s, int64_t seconds, const struct insp_http_req *q,
			  struct insp_http_resp *r)
{
	struct serve_job j;
	int64_t stopped;
	int fd = -1;
	int e = serve_job_begin(s, &j, r);
	if (!e)
		e = serve_sample_start(s, &j.o, seconds, &fd);
	int status = e ? 503 : 500; /* the process cannot sample; else ours */
	if (!e) {
		struct timespec wall;
		clock_gettime(CLOCK_REALTIME, &wall);
		double t0 = rd_now();
		bool whole = insp_http_wait(q, seconds * 1000);
		uint64_t start_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
		uint64_t took_ns = (uint64_t)((rd_now() - t0) * 1e9);
		e = insp_control_sample(&j.o, s->pid, "sample stop", &stopped); /* whatever came */
		if (!e && !whole) {
			rd_errf(j.o.err, "inspect: the profile was cut short (the client went away or serve stops)\n");
			e = RD_EXIT_LIVE;
		}
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		if (!e)
			e = exp_cpu_write(path, SERVE_PROFILE_HZ, start_ns, took_ns, &j.o, j.body);
	}
	if (fd >= 0)
		close(fd);
	serve_job_end(s, &j, e, status, "profile", r);
}

/* A live snapshot in a temporary file, Go's heap profile of it as the
** body; a failure is 500 with the line it said (also on stderr). */
static void serve_heap(struct serve *s, bool allocs, struct insp_http_resp *r)
{
	struct serve_job j;
	char path[PATH_MAX];
	int64_t id = 0;
	int e = serve_job_begin(s, &j, r);
	if (!e)
		e = insp_control_tempfile(&j.o, path, sizeof path);
	if (!e) {
		if (!(e = insp_control_snapshot(&j.o, s->pid, path, "map", &id)))
			e = exp_heap_write(path, id, allocs, &j.o, j.body);
		insp_control_tempfile_remove(path);
	}
	serve_job_end(s, &j, e, 500, allocs ? "allocs" : "heap", r);
}

/*
** Before the first request: the process's status snapshot (its sites, its
** module table; no copy of its blocks) answered as a heap profile thrown
** away, so that the modules' symbols and debug information are read and
** every site known so far is named now (rd_syms_keep), not in the first
** scrape: reading them is most of a first answer's CPU (the C library's
** compressed debug sections alone, bench/RESULTS.md).  A failure here says
** nothing: the scrapes that meet it say it.
*/
static void serve_warm(struct serve *s)
{
	struct rd_opts o = *s->o;
	char *msg = NULL, path[PATH_MAX];
	size_t mlen = 0;
	int64_t id = 0;
	o.progress = false;
	o.err = open_memstream(&msg, &mlen);
	FILE *sink = o.err ? fopen("/dev/null", "w") : NULL;
	if (sink && !insp_control_tempfile(&o, path, sizeof path)) {
		if (!insp_control_snapshot(&o, s->pid, path, "status", &id))
			exp_heap_write(path, id, false, &o, sink);
		insp_control_tempfile_remove(path);
	}
	if (sink)
		fclose(sink);
	if (o.err)
		fclose(o.err);
	free(msg);
}

static void serve_profile_request(struct serve *s, const struct insp_http_req *q, struct insp_http_resp *r)
{
	char v[64];
	int64_t seconds = SERVE_PROFILE_DEFAULT_S;
	if (insp_http_param(q, "seconds", v, sizeof v) &&
		 (!rd_parse_int(v, &seconds) || seconds < 1 || seconds > SERVE_PROFILE_MAX_S))
		insp_http_text(r, 400, "seconds=%s: expected a whole number of seconds from 1 to %d\n", v,
			       SERVE_PROFILE_MAX_S);
	else
		serve_profile(s, seconds, q, r);
}

static void serve_handle(void *ctx, const struct insp_http_req *q, struct insp_http_resp *r)
{
	struct serve *s = ctx;
	char v[64];
	bool heap = !strcmp(q->path, "/debug/pprof/heap"), allocs = !strcmp(q->path, "/debug/pprof/allocs");
	bool profile = !strcmp(q->path, "/debug/pprof/profile");
	if (!strcmp(q->path, "/debug/pprof/") || !strcmp(q->path, "/debug/pprof") || !strcmp(q->path, "/"))
		serve_index(s, r);
	else if ((heap || allocs || profile) && insp_http_param(q, "debug", v, sizeof v) && strcmp(v, "0") != 0)
		insp_http_text(r, 400, "debug=%s: only the binary profile (debug=0) is served; read it with "
			       "go tool pprof\n", v);
	else if ((heap || allocs) && insp_http_param(q, "seconds", v, sizeof v))
		insp_http_text(r, 400, "seconds=%s: delta profiles are not served; the counters are since the "
			       "start (scrapers take the differences)\n", v);
	else if (heap || allocs)
		serve_heap(s, allocs, r);
	else if (profile)
		serve_profile_request(s, q, r);
	else
		insp_http_text(r, 404, "%s: not found; served: /debug/pprof/, /debug/pprof/heap, "
			       "/debug/pprof/allocs, /debug/pprof/profile\n", q->path);
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
	rd_syms_keep(true); /* the same modules every scrape: their symbols read once */
	if (!so.no_symbols)
		serve_warm(&s);
	fprintf(o->out, "inspect: serving process %lld at %s/debug/pprof/\n", (long long)pid, s.url);
	fflush(o->out);
	int sig = insp_http_serve(lfd, serve_handle, serve_stop, &s);
	rd_syms_keep(false);
	close(lfd);
	if (s.gone && !sig) {
		rd_errf(o->err, "inspect: process %lld has ended: serve stops\n", (long long)pid);
		return RD_EXIT_LIVE;
	}
	return 0;
}
