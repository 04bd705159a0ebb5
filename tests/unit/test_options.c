/*
** test_options.c — unit tests of the MEMINST parser (alloc/alloc_options.c).
**
** alloc_options_parse is pure: it reads a string and fills a struct, so
** these tests call it directly with every mode word, every key and its
** value forms, and every kind of malformed item.  For errors they check the
** message (one line, naming the bad item) and that nothing of a rejected
** value reaches the caller's struct, since the library must not run with
** half of what the user asked for.  alloc_options_unsupported is checked
** for each feature that parses but is not built yet.
*/
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>

#include "alloc_int.h"

/* ------------------------------------------------------------ helpers -- */

static alloc_options_t opt_ok(const char *value)
{
	alloc_options_t o;
	char err[ALLOC_OPTIONS_ERRMAX] = "";
	memset(&o, 0x5a, sizeof o);
	int rc = alloc_options_parse(value, &o, err, sizeof err);
	cr_assert_eq(rc, 0, "MEMINST='%s' was refused: %s", value ? value : "(null)", err);
	return o;
}

/*
** Parse a value that must be refused; the message must be one line that
** contains `needle` (the quoted item, or the reason), and the caller's struct
** must be left exactly as it was.
*/
static void opt_bad(const char *value, const char *needle)
{
	alloc_options_t o, before;
	char err[ALLOC_OPTIONS_ERRMAX];
	memset(&o, 0xa5, sizeof o);
	memcpy(&before, &o, sizeof o);
	memset(err, 0, sizeof err);
	int rc = alloc_options_parse(value, &o, err, sizeof err);
	cr_assert_eq(rc, -1, "MEMINST='%s' was accepted", value);
	cr_assert(strstr(err, needle), "message for '%s' lacks \"%s\": %s", value, needle, err);
	cr_assert_null(strchr(err, '\n'), "message for '%s' is not one line: %s", value, err);
	cr_assert(strncmp(err, "bad MEMINST ", 12) == 0, "message for '%s': %s", value, err);
	cr_assert(memcmp(&o, &before, sizeof o) == 0, "MEMINST='%s' changed the options", value);
}

/* The item quoted as the message quotes it: 'ITEM'. */
static void opt_bad_item(const char *value, const char *item, const char *why)
{
	char quoted[128];
	snprintf(quoted, sizeof quoted, "'%s'", item);
	opt_bad(value, quoted);
	opt_bad(value, why);
}

/* -------------------------------------------------------------- modes -- */

Test(options, modes)
{
	cr_assert_eq(opt_ok("off").mode, MEMINST_MODE_OFF);
	cr_assert_eq(opt_ok("mis").mode, MEMINST_MODE_MIS);
	cr_assert_eq(opt_ok("mim").mode, MEMINST_MODE_MIM);
	cr_assert_eq(opt_ok("mis,mim").mode, MEMINST_MODE_MIM, "the last mode word wins");
	cr_assert_eq(opt_ok("mim,off").mode, MEMINST_MODE_OFF, "the last mode word wins");
}

Test(options, empty_and_null_mean_off_with_defaults)
{
	const char *values[] = {NULL, ""};
	for (int i = 0; i < 2; i++) {
		alloc_options_t o = opt_ok(values[i]);
		cr_assert_eq(o.mode, MEMINST_MODE_OFF);
		cr_assert_eq(o.backend, ALLOC_BACKEND_SYSTEM);
		cr_assert_eq(o.print_kinds, 0);
		cr_assert_eq(o.interval_ns, 0);
		cr_assert_null(o.snapshot);
		cr_assert_not(o.quiet);
		cr_assert_not(o.on_error_abort);
	}
}

/* --------------------------------------------------------------- keys -- */

Test(options, backend)
{
	cr_assert_eq(opt_ok("mis,backend=system").backend, ALLOC_BACKEND_SYSTEM);
	cr_assert_eq(opt_ok("mis,backend=jemalloc").backend, ALLOC_BACKEND_JEMALLOC);
	cr_assert_eq(opt_ok("backend=jemalloc,backend=system").backend, ALLOC_BACKEND_SYSTEM);
}

Test(options, durations)
{
	static const struct { const char *v; uint64_t ns; } cases[] = {
		{"interval=100ms", 100000000ull}, {"interval=1s", 1000000000ull},
		{"interval=5m", 300000000000ull}, {"interval=250us", 250000ull},
		{"interval=7ns", 7ull},
		{"interval=18446744073709551605ns", 18446744073709551605ull}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_assert_eq(opt_ok(cases[i].v).interval_ns, cases[i].ns, "%s", cases[i].v);
}

/* interval=auto: the first period, doubled by the service thread; a
** duration given after it is exact again. */
Test(options, interval_auto)
{
	alloc_options_t o = opt_ok("mis,interval=auto");
	cr_assert(o.interval_auto);
	cr_assert_eq(o.interval_ns, ALLOC_INTERVAL_AUTO_FIRST_NS);
	o = opt_ok("mis,interval=auto,interval=1s");
	cr_assert_not(o.interval_auto);
	cr_assert_eq(o.interval_ns, 1000000000ull);
	cr_assert_not(opt_ok("mis,interval=1s").interval_auto);
	opt_bad_item("mis,interval=Auto", "interval=Auto", "expected a duration such as 100ms or 1s, or auto");
}

Test(options, interval_content)
{
	cr_assert_not(opt_ok("mis,interval=1s").interval_status);
	cr_assert(opt_ok("mis,interval=1s,interval_content=status").interval_status);
	cr_assert_not(opt_ok("mis,interval_content=status,interval_content=map").interval_status);
	opt_bad("mis,interval_content=blocks", "expected status or map");
}

Test(options, sizes)
{
	static const struct { const char *v; uint64_t bytes; } cases[] = {
		{"alloc_sample=512k", 524288}, {"alloc_sample=1M", 1048576},
		{"alloc_sample=524288", 524288}, {"alloc_sample=3K", 3072},
		{"alloc_sample=2KiB", 2048}, {"alloc_sample=1m", 1048576},
		{"alloc_sample=3MiB", 3145728}, {"alloc_sample=2G", 2147483648ull},
		{"alloc_sample=1GiB", 1073741824ull}, {"alloc_sample=1g", 1073741824ull},
		{"alloc_sample=9b", 9}, {"alloc_sample=9B", 9}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_assert_eq(opt_ok(cases[i].v).alloc_sample, cases[i].bytes, "%s", cases[i].v);
}

Test(options, snapshot_at)
{
	static const struct { const char *v; unsigned set; } cases[] = {
		{"snapshot_at=exit", ALLOC_SNAP_EXIT},
		{"snapshot_at=peak", ALLOC_SNAP_PEAK},
		{"snapshot_at=signal", ALLOC_SNAP_SIGNAL},
		{"snapshot_at=exit+peak", ALLOC_SNAP_EXIT | ALLOC_SNAP_PEAK},
		{"snapshot_at=signal+exit", ALLOC_SNAP_EXIT | ALLOC_SNAP_SIGNAL},
		{"snapshot_at=exit+peak+signal", ALLOC_SNAP_EXIT | ALLOC_SNAP_PEAK | ALLOC_SNAP_SIGNAL},
		{"snapshot_at=peak+peak", ALLOC_SNAP_PEAK},
		{"snapshot_at=none", 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_assert_eq(opt_ok(cases[i].v).snapshot_at, cases[i].set, "%s", cases[i].v);
}

Test(options, snapshot_at_watch)
{
	alloc_options_t o = opt_ok("mim,snapshot_at=exit+rss:90%+cgroup:2G");
	cr_assert_eq(o.snapshot_at, ALLOC_SNAP_EXIT | ALLOC_SNAP_RSS | ALLOC_SNAP_CGROUP);
	cr_assert_eq(o.watch_rss_pct, 90);
	cr_assert_eq(o.watch_rss_bytes, 0);
	cr_assert_eq(o.watch_cgroup_bytes, 2147483648ull);
	cr_assert_eq(o.watch_cgroup_pct, 0);
	o = opt_ok("mim,snapshot_at=cgroup:100%");
	cr_assert_eq(o.snapshot_at, ALLOC_SNAP_CGROUP);
	cr_assert_eq(o.watch_cgroup_pct, 100);
	cr_assert(o.snapshot, "a trigger without a path gets the default path");
	o = opt_ok("mim,snapshot_at=rss:512M");
	cr_assert_eq(o.watch_rss_bytes, 512ull << 20);
	static const char range[] = "rss: and cgroup: take a percentage from 1% to 100%, or a size such as 2G";
	opt_bad_item("mim,snapshot_at=rss:0%", "snapshot_at=rss:0%", range);
	opt_bad_item("mim,snapshot_at=rss:101%", "snapshot_at=rss:101%", range);
	opt_bad_item("mim,snapshot_at=cgroup:90", "snapshot_at=cgroup:90", range); /* a size needs its unit */
	opt_bad_item("mim,snapshot_at=cgroup:lots", "snapshot_at=cgroup:lots", range);
	opt_bad_item("mim,snapshot_at=rss:", "snapshot_at=rss:", "expected triggers joined by '+'");
	opt_bad_item("mim,snapshot_at=rss:1G+rss:2G", "snapshot_at=rss:1G+rss:2G", "at most once");
	opt_bad_item("mim,snapshot_at=memory:90%", "snapshot_at=memory:90%", "cgroup:LIMIT");
}

Test(options, snapshot_path_implies_exit)
{
	const char *v = "mim,snapshot=/tmp/s.%p.db";
	alloc_options_t o = opt_ok(v);
	cr_assert_eq(o.snapshot_len, strlen("/tmp/s.%p.db"));
	cr_assert(o.snapshot == v + 13, "the path is parsed in place, not copied");
	cr_assert_eq(o.snapshot_at, ALLOC_SNAP_EXIT);
}

Test(options, print_kinds)
{
	static const struct { const char *v; unsigned set; } cases[] = {
		{"print=total", 1u << MEMINST_STATUS_TOTAL},
		{"print=allocators", 1u << MEMINST_STATUS_ALLOCATORS},
		{"print=classes", 1u << MEMINST_STATUS_CLASSES},
		{"print=types", 1u << MEMINST_STATUS_TYPES},
		{"print=threads", 1u << MEMINST_STATUS_THREADS},
		{"print=total+types", 1u << MEMINST_STATUS_TOTAL | 1u << MEMINST_STATUS_TYPES},
		{"print=total+allocators+classes+types+threads", 0x1f}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_assert_eq(opt_ok(cases[i].v).print_kinds, cases[i].set, "%s", cases[i].v);
}

Test(options, switches_and_words)
{
	alloc_options_t o = opt_ok("mim,on_error=abort,quiet=on,control=yes,trace=cpu,"
				   "sample=99,sample_clock=wall,trace_file=t.%p");
	cr_assert(o.on_error_abort);
	cr_assert(o.quiet);
	cr_assert(o.control);
	cr_assert_eq(o.trace_clock, 2);
	cr_assert_eq(o.sample_hz, 99);
	cr_assert_eq(o.sample_clock, 1);
	cr_assert_eq(o.trace_file_len, 4);
	cr_assert(strncmp(o.trace_file, "t.%p", 4) == 0);

	o = opt_ok("on_error=abort,on_error=report,quiet=1,quiet=off,control=0,trace=wall,"
		   "sample_clock=cpu,sample=1");
	cr_assert_not(o.on_error_abort);
	cr_assert_not(o.quiet);
	cr_assert_not(o.control);
	cr_assert_eq(o.trace_clock, 1);
	cr_assert_eq(o.sample_clock, 2);
	cr_assert_eq(o.sample_hz, 1);
	cr_assert_eq(opt_ok("sample=10000").sample_hz, 10000);
	cr_assert(opt_ok("sample_counts=on").sample_counts);
	cr_assert(opt_ok("quiet=yes").quiet);
	cr_assert_not(opt_ok("quiet=on,quiet=no").quiet);
	cr_assert(opt_ok("quiet=true").quiet);
	cr_assert_not(opt_ok("quiet=true,quiet=false").quiet);
	/* notes (meminst -q): the notes alone; on: the notes too */
	alloc_options_t q = opt_ok("quiet=notes");
	cr_assert(q.quiet_notes && !q.quiet);
	q = opt_ok("quiet=on");
	cr_assert(q.quiet_notes && q.quiet);
	q = opt_ok("quiet=on,quiet=notes");
	cr_assert(q.quiet_notes && !q.quiet);
	cr_assert_not(opt_ok("quiet=notes,quiet=off").quiet_notes);
	q = opt_ok("mis,run_dir=/tmp/x,snapshot=a.db");
	cr_assert(q.run_dir_len == 6 && !strncmp(q.run_dir, "/tmp/x", 6));
	cr_assert(opt_ok("mim,control=true").control);
}

/* ------------------------------------------------------------- errors -- */

Test(options, unknown_mode_and_key)
{
	opt_bad_item("mix", "mix", "unknown mode");
	opt_bad_item("mim,MIM", "MIM", "unknown mode");
	opt_bad_item("mim,colour=red", "colour=red", "unknown key");
	opt_bad_item("=mis", "=mis", "unknown key");
}

/* A typo of a key or mode names the nearest one; anything else lists them. */
Test(options, did_you_mean)
{
	opt_bad_item("mim,snapshto=x.db", "snapshto=x.db", "did you mean 'snapshot'?");
	opt_bad_item("mim,intreval=1s", "intreval=1s", "did you mean 'interval'?");
	opt_bad_item("mim,sample_clok=wall", "sample_clok=wall", "did you mean 'sample_clock'?");
	opt_bad_item("mjm", "mjm", "did you mean 'mim'?");
	opt_bad("mim,colour=red", "known: backend, snapshot,");
	opt_bad("mim,colour=red", "leak_threshold)");
	opt_bad("mim,x=1", "known:");
}

Test(options, empty_items_and_values)
{
	opt_bad("mim,,mis", "empty item");
	opt_bad("mim,,mis", "'mim,,mis'");
	opt_bad(",mim", "empty item");
	opt_bad("mim,", "empty item");
	opt_bad(",", "empty item");
	opt_bad_item("mim,interval=", "interval=", "empty value");
	opt_bad_item("backend=", "backend=", "empty value");
	opt_bad_item("snapshot=", "snapshot=", "empty value");
}

Test(options, bad_durations)
{
	opt_bad_item("mim,interval=5x", "interval=5x", "unknown unit");
	opt_bad_item("interval=5", "interval=5", "missing unit");
	opt_bad_item("interval=0s", "interval=0s", "above zero");
	opt_bad_item("interval=0ms", "interval=0ms", "above zero");
	opt_bad_item("interval=ms", "interval=ms", "expected a duration");
	opt_bad_item("interval=-1s", "interval=-1s", "expected a duration");
	opt_bad_item("interval=1 s", "interval=1 s", "unknown unit");
	opt_bad_item("interval=1S", "interval=1S", "unknown unit");
	opt_bad_item("interval=18446744073709551605m", "interval=18446744073709551605m",
		     "too large");
	opt_bad_item("interval=99999999999999999999ns", "interval=99999999999999999999ns",
		     "expected a duration");
}

Test(options, bad_sizes)
{
	opt_bad_item("alloc_sample=99999999999999999999G", "alloc_sample=99999999999999999999G",
		     "expected a size");
	opt_bad_item("alloc_sample=17179869184G", "alloc_sample=17179869184G", "too large");
	opt_bad_item("alloc_sample=0", "alloc_sample=0", "above zero");
	opt_bad_item("alloc_sample=0k", "alloc_sample=0k", "above zero");
	opt_bad_item("alloc_sample=5x", "alloc_sample=5x", "unknown size unit");
	opt_bad_item("alloc_sample=5KB", "alloc_sample=5KB", "unknown size unit");
	opt_bad_item("alloc_sample=k", "alloc_sample=k", "expected a size");
}

Test(options, bad_words)
{
	opt_bad_item("snapshot_at=exit+never", "snapshot_at=exit+never", "exit, peak, signal");
	opt_bad_item("snapshot_at=exit+", "snapshot_at=exit+", "exit, peak, signal");
	opt_bad_item("snapshot_at=exit+none", "snapshot_at=exit+none", "exit, peak, signal");
	opt_bad_item("print=total+heap", "print=total+heap", "total, allocators");
	opt_bad_item("print=+total", "print=+total", "total, allocators");
	opt_bad_item("backend=tcmalloc", "backend=tcmalloc", "system or jemalloc");
	opt_bad_item("trace=gpu", "trace=gpu", "wall or cpu");
	opt_bad_item("sample_clock=gpu", "sample_clock=gpu", "cpu or wall");
	opt_bad_item("on_error=ignore", "on_error=ignore", "report or abort");
	opt_bad_item("quiet=maybe", "quiet=maybe", "on/off, yes/no, true/false or 1/0");
	opt_bad_item("control=2", "control=2", "on/off");
}

Test(options, sample_rate_range)
{
	opt_bad_item("sample=0", "sample=0", "from 1 to 10000");
	opt_bad_item("sample=10001", "sample=10001", "from 1 to 10000");
	opt_bad_item("sample=10hz", "sample=10hz", "from 1 to 10000");
	opt_bad_item("sample=-5", "sample=-5", "from 1 to 10000");
	opt_bad_item("sample=99999999999999999999", "sample=99999999999999999999",
		     "from 1 to 10000");
}

/* A refused value is refused whole: nothing before or after the bad item
** is applied (opt_bad checks the struct is untouched). */
Test(options, good_items_around_a_bad_one_are_not_applied)
{
	opt_bad_item("mim,interval=5x,backend=jemalloc", "interval=5x", "unknown unit");
	opt_bad_item("backend=jemalloc,print=total,quiet=on,mis,bogus", "bogus", "unknown mode");
	opt_bad_item("bogus=1,mim", "bogus=1", "unknown key");
}

Test(options, long_item_is_cut_in_the_message)
{
	char value[400], err[ALLOC_OPTIONS_ERRMAX];
	alloc_options_t o;
	memcpy(value, "snapshot_at=", 12);
	memset(value + 12, 'z', sizeof value - 13);
	value[sizeof value - 1] = 0;
	cr_assert_eq(alloc_options_parse(value, &o, err, sizeof err), -1);
	cr_assert(strstr(err, "'snapshot_at=zzz"), "%s", err);
	cr_assert(strstr(err, "...'"), "a long item is cut with '...': %s", err);
	cr_assert_lt(strlen(err), sizeof err - 1, "the reason was cut off: %s", err);
	cr_assert(strstr(err, "exit, peak, signal"), "%s", err);
}

Test(options, small_error_buffer_is_terminated)
{
	char err[16];
	alloc_options_t o;
	memset(err, 'X', sizeof err);
	cr_assert_eq(alloc_options_parse("interval=5x", &o, err, sizeof err), -1);
	cr_assert_eq(strlen(err), sizeof err - 1);
	cr_assert_str_eq(err, "bad MEMINST ite");
}

/* -------------------------------------------------------- unsupported -- */

Test(options, tracing_and_sampling_items_are_supported)
{
	static const char *const cases[] = {"trace=wall", "mim,trace=cpu", "sample=10",
					    "sample_clock=cpu", "alloc_sample=1M", "trace_file=t",
					    "trace=wall,trace_threads=family"};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		alloc_options_t o = opt_ok(cases[i]);
		char err[ALLOC_OPTIONS_ERRMAX] = "";
		cr_assert_eq(alloc_options_unsupported(&o, err, sizeof err), 0, "%s: %s", cases[i], err);
	}
	cr_assert_eq(opt_ok("trace_threads=family").trace_threads, 2);
	cr_assert_eq(opt_ok("trace_threads=all").trace_threads, 1);
	opt_bad_item("trace_threads=most", "trace_threads=most", "all or family");
}

/* trace_sites=on|off: CALL records with call sites (0: not given). */
Test(options, trace_sites)
{
	cr_assert_eq(opt_ok("trace=wall").trace_sites, 0);
	cr_assert_eq(opt_ok("trace=wall,trace_sites=on").trace_sites, 2);
	cr_assert_eq(opt_ok("trace_sites=yes,trace_sites=off").trace_sites, 1);
	opt_bad_item("trace_sites=some", "trace_sites=some", "on/off");
	alloc_options_t o = opt_ok("trace=cpu,trace_sites=on");
	char err[ALLOC_OPTIONS_ERRMAX] = "";
	cr_assert_eq(alloc_options_unsupported(&o, err, sizeof err), 0, "%s", err);
}

/* trace_output=events|profile; a profile holds no samples. */
Test(options, trace_output)
{
	cr_assert_eq(opt_ok("trace=wall").trace_output, 0);
	cr_assert_eq(opt_ok("trace=wall,trace_output=events").trace_output, 1);
	cr_assert_eq(opt_ok("trace=cpu,trace_output=profile").trace_output, 2);
	cr_assert_eq(opt_ok("trace_output=profile,trace_output=events").trace_output, 1);
	opt_bad_item("trace_output=db", "trace_output=db", "events or profile");
	const char *const mixed[] = {"trace=wall,trace_output=profile,sample=100",
				     "trace_output=profile,alloc_sample=1M",
				     "sample_counts=on,trace_output=profile"};
	for (size_t i = 0; i < sizeof mixed / sizeof mixed[0]; i++) {
		alloc_options_t o;
		char err[ALLOC_OPTIONS_ERRMAX] = "";
		cr_assert_eq(alloc_options_parse(mixed[i], &o, err, sizeof err), -1, "%s", mixed[i]);
		cr_assert(strstr(err, "bad MEMINST") == err && strstr(err, "trace_output=profile"), "%s", err);
	}
	cr_assert_eq(opt_ok("trace_output=profile,sample_counts=off").trace_output, 2);
}

/* Snapshot settings need something to snapshot: mode off refuses them. */
Test(options, snapshot_settings_need_a_mode)
{
	static const char *const values[] = {"snapshot=x.db", "snapshot_at=peak", "interval=1s",
					     "off,snapshot=x.db"};
	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		alloc_options_t o = opt_ok(values[i]);
		char err[ALLOC_OPTIONS_ERRMAX] = "";
		cr_assert_eq(alloc_options_unsupported(&o, err, sizeof err), -1, "%s", values[i]);
		cr_assert(strstr(err, "need mode mis or mim"), "%s: %s", values[i], err);
	}
}

/* off,control=on is dormant (switched on at run time), with glibc's blocks only. */
Test(options, dormant)
{
	char err[ALLOC_OPTIONS_ERRMAX] = "";
	alloc_options_t o = opt_ok("off,control=on");
	cr_assert_eq(alloc_options_unsupported(&o, err, sizeof err), 0, "%s", err);
	o = opt_ok("off,control=on,snapshot=x.db,interval=1s");
	cr_assert_eq(alloc_options_unsupported(&o, err, sizeof err), 0, "%s", err);
	o = opt_ok("control=on,backend=jemalloc");
	cr_assert_eq(alloc_options_unsupported(&o, err, sizeof err), -1);
	cr_assert(strstr(err, "needs backend=system"), "%s", err);
}

/* The snapshot path and its triggers, whatever the order of the items. */
Test(options, snapshot_triggers)
{
	alloc_options_t o = opt_ok("mim,snapshot=a.db");
	cr_assert_eq(o.snapshot_at, ALLOC_SNAP_EXIT, "a path alone means at exit");
	o = opt_ok("mim,snapshot=a.db,snapshot_at=peak");
	cr_assert_eq(o.snapshot_at, ALLOC_SNAP_PEAK);
	o = opt_ok("mim,snapshot_at=peak,snapshot=a.db");
	cr_assert_eq(o.snapshot_at, ALLOC_SNAP_PEAK, "the order of items does not matter");
	o = opt_ok("mim,snapshot_at=signal");
	cr_assert_eq(o.snapshot_len, strlen("meminst.%p.db"));
	cr_assert_eq(memcmp(o.snapshot, "meminst.%p.db", o.snapshot_len), 0, "a default path");
	o = opt_ok("mim,interval=1s");
	cr_assert_not_null(o.snapshot, "intervals store into the default path");
	o = opt_ok("mim,snapshot_at=none");
	cr_assert_null(o.snapshot);
	o = opt_ok("mim,snapshot_signal=USR1,peak_growth=25");
	cr_assert_eq(o.snapshot_signal, SIGUSR1);
	cr_assert_eq(o.peak_growth, 25);
	o = opt_ok("mim,snapshot_signal=SIGRTMIN+2");
	cr_assert_eq(o.snapshot_signal, SIGRTMIN + 2);
	o = opt_ok("mim");
	cr_assert_eq(o.snapshot_signal, SIGUSR2, "USR2 by default");
	cr_assert_eq(o.peak_growth, 10, "10%% by default");
	opt_bad("mim,snapshot_signal=KILL", "snapshot_signal=KILL");
	opt_bad("mim,snapshot_signal=9", "snapshot_signal=9");
	opt_bad("mim,peak_growth=0", "peak_growth=0");
}

/* site_depth: user, or 1 to 32 frames (1: a type per return address). */
Test(options, site_depth)
{
	alloc_options_t o = opt_ok("mim,site_depth=user");
	cr_assert_eq(o.site_depth, ALLOC_SITE_DEPTH_USER);
	o = opt_ok("mim,site_depth=4");
	cr_assert_eq(o.site_depth, 4);
	o = opt_ok("mim,site_depth=1");
	cr_assert_eq(o.site_depth, 0, "one frame is the default keying");
	o = opt_ok("mim");
	cr_assert_eq(o.site_depth, 0);
	opt_bad("mim,site_depth=0", "site_depth=0");
	opt_bad("mim,site_depth=33", "site_depth=33");
	opt_bad("mim,site_depth=users", "expected user or a number of frames from 1 to 32");
}

/* site_skip: function names joined by '+', a trailing '*' for a prefix. */
Test(options, site_skip)
{
	alloc_options_t o = opt_ok("mis,site_skip=zmalloc+ngx_alloc+g_*");
	cr_assert_eq(o.site_skip_len, strlen("zmalloc+ngx_alloc+g_*"));
	cr_assert(strncmp(o.site_skip, "zmalloc+ngx_alloc+g_*", o.site_skip_len) == 0);
	o = opt_ok("mis,site_skip=_ZN3foo5allocEm,site_depth=user");
	cr_assert_eq(o.site_skip_len, strlen("_ZN3foo5allocEm"));
	cr_assert_eq(o.site_depth, ALLOC_SITE_DEPTH_USER);
	cr_assert_eq(opt_ok("mis").site_skip_len, 0);
	static const char *const bad[] = {"mis,site_skip=a+", "mis,site_skip=+a", "mis,site_skip=a++b",
					  "mis,site_skip=*", "mis,site_skip=a*b", "mis,site_skip=a-b",
					  "mis,site_skip=a+*+b", "mis,site_skip=a b"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		opt_bad(bad[i], "expected function names joined by '+'");
	char many[200] = "mis,site_skip=f";
	for (int i = 1; i < 33; i++)
		strcat(many, "+f");
	opt_bad(many, "at most 32");
}

/* Numbers are range-checked as read, before any conversion to int. */
Test(options, signal_numbers_checked_before_conversion)
{
	opt_bad_item("mim,snapshot_signal=4294967307", "snapshot_signal=4294967307", "no such signal");
	opt_bad_item("mim,snapshot_signal=4294967305", "snapshot_signal=4294967305", "no such signal");
	opt_bad_item("mim,snapshot_signal=18446744073709551615",
		     "snapshot_signal=18446744073709551615", "no such signal");
	opt_bad("mim,snapshot_signal=99999999999999999999999", "expected USR1");
	opt_bad_item("mim,snapshot_signal=RTMIN+4294967295", "snapshot_signal=RTMIN+4294967295",
		     "RTMIN+N needs N");
	opt_bad_item("mim,snapshot_signal=RTMIN+4294967296", "snapshot_signal=RTMIN+4294967296",
		     "RTMIN+N needs N");
	char item[64];
	snprintf(item, sizeof item, "mim,snapshot_signal=RTMIN+%d", SIGRTMAX - SIGRTMIN + 1);
	opt_bad(item, "RTMIN+N needs N");
	opt_bad_item("mim,snapshot_signal=0", "snapshot_signal=0", "no such signal");
	snprintf(item, sizeof item, "mim,snapshot_signal=%d", SIGRTMAX + 1);
	opt_bad(item, "no such signal");
	opt_bad("mim,snapshot_signal=11", "reports a fault");
	opt_bad("mim,snapshot_signal=19", "cannot be caught");
	opt_bad("mim,snapshot_signal=32", "glibc reserves");
	opt_bad("mim,snapshot_signal=33", "glibc reserves");
	snprintf(item, sizeof item, "mim,snapshot_signal=RTMIN+%d", SIGRTMAX - SIGRTMIN);
	cr_assert_eq(opt_ok(item).snapshot_signal, SIGRTMAX);
	snprintf(item, sizeof item, "mim,snapshot_signal=%d", SIGRTMIN);
	cr_assert_eq(opt_ok(item).snapshot_signal, SIGRTMIN);
	cr_assert_eq(opt_ok("mim,snapshot_signal=10").snapshot_signal, 10);
}

Test(options, supported_settings_pass)
{
	static const char *const values[] = {
		NULL, "", "off", "mis", "mim", "mim,backend=jemalloc", "mis,print=total+types",
		"mim,on_error=abort,quiet=on", "control=off", "snapshot_at=none",
		"mim,snapshot=x.db,snapshot_at=exit+peak+signal,interval=1s,control=on"};
	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		alloc_options_t o = opt_ok(values[i]);
		char err[ALLOC_OPTIONS_ERRMAX] = "";
		cr_assert_eq(alloc_options_unsupported(&o, err, sizeof err), 0, "%s: %s",
			     values[i] ? values[i] : "(null)", err);
	}
}

/* Found by tests/fuzz: control bytes are escaped, so the message stays one
** line; long messages are never cut before their reason. */
Test(options, messages_stay_whole_and_on_one_line)
{
	opt_bad("mis,on_er\norabort", "'on_er\\x0aorabort'");
	opt_bad("mis,\033[2Kquiet=on", "\\x1b[2Kquiet=on");
	opt_bad("foo=1", "print, on_error, quiet, leak_check, leak_exit_code, leak_threshold)");
	char value[300];
	memset(value, 'a', sizeof value - 1);
	value[sizeof value - 1] = 0;
	memcpy(value, "mis,,", 5);
	opt_bad(value, "...': empty item");
}
