/*
** alloc_seccomp.c — seccomp filters known before they bite.
**
** A sandboxed program locks itself in a seccomp filter that allows only the
** system calls it needs; any other kills it (SIGSYS) or fails with an
** error.  meminst's own calls (its exit snapshot, the print= tables, the
** trace) come after the program's last one, and a kill there lost the
** program's buffered output and exit status.  So the libc ways of
** installing a filter are interposed here — prctl(PR_SET_SECCOMP, ...) and
** syscall(SYS_seccomp, ...), the one libseccomp's seccomp_load uses — and
** with the filter program in hand, before it takes effect, it is run (a
** classic BPF interpreter over struct seccomp_data) for each system call
** meminst may still make.  Each feature that needs a call the filter would
** kill on or refuse is switched off (alloc_sc_refused, alloc_sys.c), and
** that is said once, in one line naming the feature and the call.
**
** SECCOMP_MODE_STRICT leaves read, write, _exit and sigreturn: everything
** but messages goes.  A filter present at start (inherited from a sandbox,
** /proc/self/status "Seccomp: 2") cannot be read back without privileges:
** that is said, and meminst runs as usual (meminst(7), BUGS).  A filter
** installed by the raw system call (not through libc) is not seen.
** Only x86_64's system call numbers are known here; on other machines the
** libc calls are not interposed and filters are not seen.
**
** A filter holds the thread that installs it and the threads it makes
** later; with SECCOMP_FILTER_FLAG_TSYNC, every thread of the process, so
** meminst's own threads (the service thread's poll and its once-a-second
** look at /proc, the wall-clock sampler's) too.  Their calls (`own` in
** the table) are run through the filter as well: one a TSYNC filter
** refuses ends meminst's threads before it takes effect, as a refused
** futex does; one any other filter refuses keeps meminst from making
** threads later (a child of fork would make them under the filter).
** Other calls the program's threads make in meminst's code (membarrier,
** sched_yield, a thread's name and stack, read-only opens) are tried
** too, each with a way to do without (ALLOC_SC_* in alloc_int_sys.h).
*/
#include "alloc_int.h"
#include "../trace/trace_int.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define SC_ARCH AUDIT_ARCH_X86_64

/* One system call meminst may make after the program's filter, with the
** arguments a filter might look at, and what needs it. */
struct sc_call {
	int nr;
	const char *name;
	unsigned need; /* ALLOC_SC_* */
	uint64_t args[6];
	bool error_harmless; /* refused with an error (not killed), the feature works */
	bool own;            /* made by meminst's own threads (see the head comment) */
};

#define SNAP ALLOC_SC_SNAPSHOT
static const struct sc_call sc_calls[] = {
	{SYS_write, "write", ALLOC_SC_WRITE, {2}},
	{SYS_newfstatat, "newfstatat", ALLOC_SC_FSTAT, {2, 0, 0, 0x1000 /* AT_EMPTY_PATH */}},
	{SYS_getpid, "getpid", ALLOC_SC_GETPID, {0}},
	{SYS_process_vm_readv, "process_vm_readv", ALLOC_SC_VM_READV, {0}},
	{SYS_mincore, "mincore", ALLOC_SC_MINCORE, {0}},
	/* SQLite's unix VFS storing a snapshot (strace of an exit store) */
	{SYS_openat, "openat", SNAP, {(uint64_t)-100, 0, 02000102 /* O_RDWR|O_CREAT|O_CLOEXEC */, 0644}},
	{SYS_close, "close", SNAP, {3}},
	{SYS_pread64, "pread64", SNAP, {3}},
	{SYS_pwrite64, "pwrite64", SNAP, {3}},
	{SYS_lseek, "lseek", SNAP, {3}},
	{SYS_fcntl, "fcntl", SNAP, {3, 6 /* F_SETLK */}},
	{SYS_fsync, "fsync", SNAP, {3}},
	{SYS_fdatasync, "fdatasync", SNAP, {3}},
	{SYS_ftruncate, "ftruncate", SNAP, {3}},
	{SYS_unlink, "unlink", SNAP, {0}},
	{SYS_newfstatat, "newfstatat", SNAP, {(uint64_t)-100}},
	{SYS_getpid, "getpid", SNAP, {0}, true}, /* SQLite's; refused, it reseeds */
	{SYS_geteuid, "geteuid", SNAP, {0}},
	{SYS_mmap, "mmap", SNAP, {0, 1 << 20, 3 /* PROT_READ|PROT_WRITE */, 0x22 /* MAP_PRIVATE|ANONYMOUS */,
				  (uint64_t)-1}},
	{SYS_munmap, "munmap", SNAP, {0}},
	{SYS_futex, "futex", SNAP, {0, 1 /* FUTEX_WAKE */}},
	{SYS_rt_sigprocmask, "rt_sigprocmask", SNAP, {0}},
	/* the launcher's store service instead of SQLite's calls */
	{SYS_socket, "socket", ALLOC_SC_STORE_LINK, {1 /* AF_UNIX */, 01000001 /* SOCK_STREAM|SOCK_CLOEXEC */}},
	{SYS_connect, "connect", ALLOC_SC_STORE_LINK, {3}},
	{SYS_sendto, "sendto", ALLOC_SC_STORE_LINK, {3, 0, 0, 0x4000 /* MSG_NOSIGNAL */}},
	{SYS_recvfrom, "recvfrom", ALLOC_SC_STORE_LINK, {3}},
	{SYS_fcntl, "fcntl", ALLOC_SC_STORE_LINK, {3, 1030 /* F_DUPFD_CLOEXEC */}},
	{SYS_getrlimit, "getrlimit", ALLOC_SC_STORE_LINK, {7 /* RLIMIT_NOFILE */}},
	/* the capture's (an error is taken as "none" or "unknown") */
	{SYS_getppid, "getppid", SNAP, {0}, true},
	{SYS_rt_sigpending, "rt_sigpending", SNAP, {0, 8}, true},
	{SYS_getrusage, "getrusage", SNAP, {0}, true},
	/* the program's threads' too: a free of another thread's block (mim),
	** fork (mis), a capture; refused, meminst does without (sc_refuse) */
	{SYS_membarrier, "membarrier", ALLOC_SC_MEMBARRIER, {8 /* PRIVATE_EXPEDITED */}},
	/* a wait for a lock of meminst's, in any thread */
	{SYS_sched_yield, "sched_yield", ALLOC_SC_YIELD, {0}},
	/* a thread's start names its stack (pthread_getattr_np) */
	{SYS_sched_getaffinity, "sched_getaffinity", ALLOC_SC_THREAD_STACK, {0}},
	/* and its end its name (alloc_sys_thread_comm) */
	{SYS_prctl, "prctl", ALLOC_SC_THREAD_NAME, {16 /* PR_GET_NAME */}},
	{SYS_openat, "openat", ALLOC_SC_OPEN_READ, {(uint64_t)-100, 0, 02000000 /* O_RDONLY|O_CLOEXEC */}},
	/* print=types names sites in a helper process */
	{SYS_pipe2, "pipe2", ALLOC_SC_SYMBOLISE, {0}},
	{SYS_clone, "clone", ALLOC_SC_SYMBOLISE, {0x4111 /* CLONE_VM|CLONE_VFORK|SIGCHLD */}},
	{SYS_clone3, "clone3", ALLOC_SC_SYMBOLISE, {0}},
	{SYS_execve, "execve", ALLOC_SC_SYMBOLISE, {0}},
	{SYS_wait4, "wait4", ALLOC_SC_SYMBOLISE, {0}},
	{SYS_poll, "poll", ALLOC_SC_SYMBOLISE, {0}},
	{SYS_read, "read", ALLOC_SC_SYMBOLISE, {3}},
	/* the trace file and the sampling timers */
	{SYS_write, "write", ALLOC_SC_TRACE, {3}},
	{SYS_pwrite64, "pwrite64", ALLOC_SC_TRACE, {3}},
	{SYS_gettid, "gettid", ALLOC_SC_TRACE, {0}},
	{SYS_timer_create, "timer_create", ALLOC_SC_TRACE, {0}},
	{SYS_timer_settime, "timer_settime", ALLOC_SC_TRACE, {0}},
	{SYS_timer_delete, "timer_delete", ALLOC_SC_TRACE, {0}},
	{SYS_rt_sigaction, "rt_sigaction", ALLOC_SC_TRACE, {27 /* SIGPROF */}},
	{SYS_futex, "futex", ALLOC_SC_TRACE, {0, 1}},
	/* a thread of meminst's beside the program's makes its locks wait */
	{SYS_futex, "futex", ALLOC_SC_THREADS, {0, 0x80 /* FUTEX_WAIT_PRIVATE */}},
	{SYS_futex, "futex", ALLOC_SC_THREADS, {0, 0x81 /* FUTEX_WAKE_PRIVATE */}},
	/* what meminst's threads do while they run: the service thread's wait
	** and its looks at /proc (the program gone, snapshot_at=rss:), the
	** wall-clock sampler's sleeps, probes and signals (strace -f) */
	{SYS_poll, "poll", ALLOC_SC_THREADS, {0, 2}, .own = true},
	{SYS_read, "read", ALLOC_SC_THREADS, {3}, .own = true},
	{SYS_openat, "openat", ALLOC_SC_THREADS, {(uint64_t)-100, 0, 02000000 /* O_RDONLY|O_CLOEXEC */}, .own = true},
	{SYS_getdents64, "getdents64", ALLOC_SC_THREADS, {3}, .own = true},
	{SYS_close, "close", ALLOC_SC_THREADS, {3}, .own = true},
	{SYS_futex, "futex", ALLOC_SC_THREADS, {0, 0x80, 0, 1}, .own = true},
	{SYS_clock_nanosleep, "clock_nanosleep", ALLOC_SC_THREADS, {1 /* MONOTONIC */}, .own = true},
	{SYS_clock_nanosleep, "clock_nanosleep", ALLOC_SC_THREADS, {1, 1 /* TIMER_ABSTIME */}, .own = true},
	{SYS_clock_gettime, "clock_gettime", ALLOC_SC_THREADS, {1}, .own = true},
	{SYS_getpid, "getpid", ALLOC_SC_THREADS, {0}, .own = true},
	{SYS_gettid, "gettid", ALLOC_SC_THREADS, {0}, .own = true},
	{SYS_tgkill, "tgkill", ALLOC_SC_THREADS, {0, 0, 0}, .own = true},
	{SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", ALLOC_SC_THREADS, {0, 0, 27 /* SIGPROF */}, .own = true},
	{SYS_rt_sigprocmask, "rt_sigprocmask", ALLOC_SC_THREADS, {0}, .own = true},
	{SYS_madvise, "madvise", ALLOC_SC_THREADS, {0, 0, 4 /* MADV_DONTNEED */}, .own = true},
	{SYS_mmap, "mmap", ALLOC_SC_THREADS, {0, 1 << 20, 3, 0x22, (uint64_t)-1}, .own = true},
	{SYS_munmap, "munmap", ALLOC_SC_THREADS, {0}, .own = true},
	{SYS_exit, "exit", ALLOC_SC_THREADS, {0}, .own = true},
};
#undef SNAP

/* The features a user sees, by bit: what is said when one goes. */
static const char *const sc_feature[] = {
	[0] = "meminst's messages",
	[5] = "snapshots", [6] = "print=types' source lines", [7] = "tracing and sampling",
	[8] = "meminst's threads (signal, interval, peak and control snapshots; tracing and sampling)",
};

/* Is the feature of this bit in use in this run? */
static bool sc_in_use(unsigned bit)
{
	switch (1u << bit) {
	case ALLOC_SC_WRITE:
	case ALLOC_SC_FSTAT:
		return true;
	case ALLOC_SC_SNAPSHOT:
		return alloc_opts.snapshot != NULL;
	case ALLOC_SC_SYMBOLISE:
		return (alloc_opts.print_kinds >> MEMINST_STATUS_TYPES) & 1;
	case ALLOC_SC_TRACE:
		return trace_file_is_open();
	case ALLOC_SC_THREADS:
		return alloc_service_running() || trace_file_is_open();
	default:
		return false; /* the process id, process_vm_readv, mincore: meminst does without */
	}
}

/* What a filter does with one call: true if it lets it run (ALLOW, LOG). */
static bool sc_allows(uint32_t action)
{
	action &= SECCOMP_RET_ACTION_FULL;
	return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG;
}

/* Run a classic BPF seccomp program over data; its return value, or
** SECCOMP_RET_KILL_PROCESS for a program the kernel would not accept. */
static uint32_t sc_run(const struct sock_fprog *prog, const struct seccomp_data *data)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	const struct sock_filter *f = prog->filter;
	for (unsigned pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *in = &f[pc];
		uint32_t src = BPF_SRC(in->code) == BPF_X ? x : in->k;
		switch (BPF_CLASS(in->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;
			if (BPF_MODE(in->code) == BPF_ABS) {
				if (in->k > sizeof *data - 4 || (in->k & 3))
					return SECCOMP_RET_KILL_PROCESS;
				memcpy(&v, (const char *)data + in->k, 4);
			} else if (BPF_MODE(in->code) == BPF_LEN) {
				v = sizeof *data;
			} else if (BPF_MODE(in->code) == BPF_IMM) {
				v = in->k;
			} else if (BPF_MODE(in->code) == BPF_MEM && in->k < BPF_MEMWORDS) {
				v = mem[in->k];
			} else {
				return SECCOMP_RET_KILL_PROCESS;
			}
			*(BPF_CLASS(in->code) == BPF_LD ? &a : &x) = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (in->k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			mem[in->k] = BPF_CLASS(in->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(in->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (!src) return SECCOMP_RET_KILL_PROCESS; a /= src; break;
			case BPF_MOD: if (!src) return SECCOMP_RET_KILL_PROCESS; a %= src; break;
			case BPF_OR: a |= src; break;
			case BPF_AND: a &= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_JMP: {
			bool t;
			switch (BPF_OP(in->code)) {
			case BPF_JA: pc += in->k; continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			pc += t ? in->jt : in->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(in->code) == BPF_A ? a : in->k;
		case BPF_MISC:
			if (BPF_MISCOP(in->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS; /* fell off the end: the kernel refuses it */
}

/* Say in one line what a filter takes away: each feature in use, with
** the first call of it that the filter refuses (call_of NULL: strict mode). */
static void sc_say(unsigned newly, const char *const *call_of, const char *how)
{
	char list[400];
	size_t n = 0;
	list[0] = 0;
	for (unsigned b = 0; b < sizeof sc_feature / sizeof sc_feature[0]; b++)
		if ((newly & (1u << b)) && sc_feature[b] && sc_in_use(b) && n < sizeof list)
			n += (size_t)alloc_fmt(list + n, sizeof list - n, "%s%s%s%s%s", n ? ", " : "", sc_feature[b],
					       call_of ? " (" : "", call_of ? call_of[b] : "", call_of ? ")" : "");
	if (n && call_of)
		alloc_log_noted("the program's seccomp filter %s system calls meminst needs: %s off", how, list);
	else if (n)
		alloc_log_noted("the program entered seccomp's strict mode (read, write, _exit and sigreturn "
				"only): %s off", list);
}

/* Features off from now on: the trace ends at once, as at exit (its
** timers stopped, its END record written, the file closed: a complete
** trace up to the filter); the rest look at alloc_sc_refused where they
** would call. */
static void sc_refuse(unsigned what)
{
	if (what & ALLOC_SC_MEMBARRIER) /* while it still works */
		alloc_thread_membarrier_off();
	unsigned before = atomic_fetch_or(&alloc_sc_refused, what);
	if ((what & ~before & (ALLOC_SC_TRACE | ALLOC_SC_THREADS)))
		trace_at_exit();
	if ((what & ~before & ALLOC_SC_THREADS))
		alloc_service_stop();
}

/* A filter program is about to be installed: evaluate it.  `tsync`: for
** every thread of the process, meminst's too. */
static void sc_filter(const struct sock_fprog *prog, bool tsync)
{
	if (!prog || !prog->filter || !alloc_readable(prog, sizeof *prog))
		return;
	unsigned refused = 0, later = 0;
	const char *call_of[32] = {0}; /* by bit of need */
	bool killed = false;
	for (size_t i = 0; i < sizeof sc_calls / sizeof sc_calls[0]; i++) {
		const struct sc_call *c = &sc_calls[i];
		struct seccomp_data d = {.nr = c->nr, .arch = SC_ARCH};
		memcpy(d.args, c->args, sizeof d.args);
		uint32_t r = sc_run(prog, &d);
		unsigned bit = (unsigned)__builtin_ctz(c->need);
		if (sc_allows(r) || (refused & c->need) ||
		    (c->error_harmless && (r & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO))
			continue;
		if (c->own && !tsync) { /* meminst's threads made from now on */
			later = ALLOC_SC_NEW_THREADS;
			continue;
		}
		refused |= c->need;
		call_of[bit] = c->name;
		killed |= (r & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO;
	}
	atomic_fetch_or(&alloc_sc_refused, later);
	unsigned newly = refused & ~atomic_load(&alloc_sc_refused);
	if (!newly)
		return;
	/* said before the filter takes effect, while write is still allowed */
	sc_say(newly, call_of, killed ? "kills on or refuses" : "refuses");
	sc_refuse(refused);
}

/* SECCOMP_MODE_STRICT: read, write, _exit and sigreturn are left. */
static void sc_strict(void)
{
	unsigned all = ALLOC_SC_FSTAT | ALLOC_SC_GETPID | ALLOC_SC_VM_READV | ALLOC_SC_MINCORE |
		       ALLOC_SC_SNAPSHOT | ALLOC_SC_SYMBOLISE | ALLOC_SC_TRACE | ALLOC_SC_THREADS;
	sc_say(all & ~atomic_load(&alloc_sc_refused), NULL, NULL);
	sc_refuse(all);
}

/* The raw call: `syscall` and prctl are the hooks' (alloc_hooks.c). */
long alloc_seccomp_raw(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4, r8 __asm__("r8") = a5, r9 __asm__("r9") = a6;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/* seccomp(2)'s operation, flags and program, or prctl's mode and program
** (flags 0), just before the call: is it a filter, or strict mode? */
void alloc_seccomp_before(unsigned long mode, unsigned long flags, const void *prog, bool by_prctl)
{
	unsigned long filter = by_prctl ? SECCOMP_MODE_FILTER : SECCOMP_SET_MODE_FILTER;
	unsigned long strict = by_prctl ? SECCOMP_MODE_STRICT : SECCOMP_SET_MODE_STRICT;
	alloc_sys_exe_path(NULL, 0); /* kept from now on: naming sites needs it */
	alloc_sys_pid();
	if (mode == filter)
		sc_filter(prog, !by_prctl && (flags & SECCOMP_FILTER_FLAG_TSYNC));
	else if (mode == strict && (by_prctl || (!flags && !prog))) /* seccomp(2) else EINVAL: libseccomp's probe */
		sc_strict();
}
#endif /* __x86_64__ */

/*
** A file or socket of meminst's refused with ENOSYS: a seccomp filter
** meminst could not read refuses the call (one in force from the start,
** inherited: man-db's children run under libseccomp's ERRNO(ENOSYS)
** filter, which allows openat read-only); no kernel meminst runs on lacks
** openat or socket.  Snapshots (and their notes), new trace files and the
** control channel all need such calls: they go together, said once in one
** line, rather than one line a store (and one for the trace, one for the
** control channel).  True when err is ENOSYS (the caller says nothing).
*/
bool alloc_seccomp_enosys(const char *call, int err)
{
	if (err != ENOSYS)
		return false;
	unsigned before = atomic_fetch_or(&alloc_sc_refused, ALLOC_SC_SNAPSHOT | ALLOC_SC_FILES);
	if (!(before & ALLOC_SC_FILES)) {
		char list[160];
		size_t n = 0;
		list[0] = 0;
		if (alloc_opts.snapshot)
			n += (size_t)alloc_fmt(list + n, sizeof list - n, "snapshots");
		if ((alloc_opts.trace_clock || alloc_opts.sample_hz || alloc_opts.alloc_sample) && n < sizeof list)
			n += (size_t)alloc_fmt(list + n, sizeof list - n, "%sa new trace file", n ? ", " : "");
		if (alloc_opts.control && n < sizeof list)
			n += (size_t)alloc_fmt(list + n, sizeof list - n, "%sthe control channel", n ? ", " : "");
		alloc_log("a seccomp filter meminst cannot read (in force from the start) refuses %s "
			  "(Function not implemented): %s off in this process", call, n ? list : "its files");
	}
	return true;
}

/* At start: a filter already in force (a sandbox's, a container's)
** cannot be read back.  Not said on stderr, where every run in a container
** would carry the line: in the notes beside the snapshot, which the
** launcher's session shows. */
void alloc_seccomp_init(void)
{
	static const char line[] = "meminst: a seccomp filter was in force from the start (inherited): "
				   "meminst cannot read it; a system call of meminst's that it kills on "
				   "would end the program\n";
	if (!alloc_opts.snapshot || !alloc_snap_note)
		return;
	char buf[4096];
	if (alloc_sys_read_file("/proc/self/status", buf, sizeof buf) < 0)
		return;
	const char *s = strstr(buf, "\nSeccomp:");
	if (!s)
		return;
	s += 9;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '2')
		alloc_snap_note(line, sizeof line - 1);
}
