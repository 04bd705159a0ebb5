/*
** sess_run.c — run the program and wait for it, as `time` and `env` do.
**
** The program is a child in the launcher's process group, so a Ctrl-C
** typed at the terminal reaches both: the launcher does not die of SIGINT
** or SIGQUIT while the program runs (it must outlive it to write the
** session); one from the terminal (si_code SI_KERNEL) has reached the
** program already, one sent to the launcher alone (kill -INT PID) is
** passed on, as is every other catchable signal sent to it alone.  The launcher's exit status is the program's; a
** program killed by a signal is reported by the caller, who re-raises that
** signal once the session is written.
*/
#include "sess_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t run_child;

static void run_forward(int sig)
{
	if (run_child > 0)
		kill(run_child, sig);
}

/* SIGINT, SIGQUIT: the terminal sent it to the whole group already. */
static void run_forward_unless_tty(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code != SI_KERNEL)
		run_forward(sig);
}

static int64_t run_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Signals passed on to the program; the rest keep their defaults. */
static const int run_forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM,
				    SIGCONT, SIGWINCH, SIGPIPE};

static void run_signals(bool during)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | (during ? SA_SIGINFO : 0);
	if (during)
		sa.sa_sigaction = run_forward_unless_tty;
	else
		sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = during ? run_forward : SIG_DFL;
	for (size_t i = 0; i < sizeof run_forwarded / sizeof run_forwarded[0]; i++)
		sigaction(run_forwarded[i], &sa, NULL);
}

/*
** The oom_kill count of the memory cgroup the launcher (and so the program,
** which inherits it) is in: v1's memory.oom_control, v2's memory.events
** (it and its descendants); -1 when none is readable.  Read before and
** after the run: a program killed by SIGKILL while it rose was the OOM
** killer's (another process of the cgroup could have been the one, which
** the count does not tell; inspect(1) says so).
*/
static long run_oom_kills(void)
{
	char line[4096], file[4400];
	long n = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");
	file[0] = 0;
	while (f && !file[0] && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *path = strrchr(line, ':');
		if (path && path - line >= 7 && !strncmp(path - 7, ":memory", 7))
			snprintf(file, sizeof file, "/sys/fs/cgroup/memory%s/memory.oom_control", path + 1);
		else if (path && !strncmp(line, "0::", 3))
			snprintf(file, sizeof file, "/sys/fs/cgroup%s/memory.events", path + 1);
	}
	if (f)
		fclose(f);
	if (file[0] && (f = fopen(file, "r"))) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "oom_kill %ld", &n) == 1)
				break;
		fclose(f);
	}
	return n;
}

int sess_run(char **argv, struct sess_result *res)
{
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		sess_error("cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	res->oom_before = run_oom_kills();
	res->start_ns = run_clock(CLOCK_REALTIME);
	int64_t t0 = run_clock(CLOCK_MONOTONIC);
	pid_t pid = fork();
	if (pid < 0) {
		sess_error("cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(errpipe[0]);
		execvp(argv[0], argv);
		int e = errno; /* the parent reports it: our stderr may be the user's */
		if (write(errpipe[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	run_child = pid;
	run_signals(true);
	close(errpipe[1]);
	int exec_errno = 0;
	ssize_t got;
	while ((got = read(errpipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
		;
	close(errpipe[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	run_signals(false);
	run_child = 0;
	res->pid = pid;
	res->duration_ns = run_clock(CLOCK_MONOTONIC) - t0;
	if (got == (ssize_t)sizeof exec_errno) {
		sess_error("cannot run %s: %s", argv[0], strerror(exec_errno));
		res->exit_code = exec_errno == ENOENT ? 127 : 126;
		res->exit_signal = 0;
		return -1;
	}
	res->oom_after = run_oom_kills();
	if (WIFSIGNALED(status)) {
		res->exit_code = -1;
		res->exit_signal = WTERMSIG(status);
	} else {
		res->exit_code = WEXITSTATUS(status);
		res->exit_signal = 0;
	}
	return 0;
}

/*
** Why the loader would run prog in secure-execution mode (AT_SECURE), where
** it ignores LD_PRELOAD: set-user-ID to another user, set-group-ID to
** another group, or file capabilities.  NULL when none holds (a root-owned
** setuid program run by root gets no AT_SECURE).  prog is found as execvp
** finds it.
*/
const char *sess_secure_exec(const char *prog)
{
	char path[4096];
	struct stat st;
	const char *dirs = getenv("PATH");
	bool found = false;
	if (strchr(prog, '/') || !dirs) {
		found = snprintf(path, sizeof path, "%s", prog) < (int)sizeof path && stat(path, &st) == 0;
	} else {
		for (const char *d = dirs; !found && d;) {
			const char *end = strchr(d, ':');
			int len = end ? (int)(end - d) : (int)strlen(d);
			found = snprintf(path, sizeof path, "%.*s/%s", len, len ? d : ".", prog) < (int)sizeof path &&
				stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
			d = end ? end + 1 : NULL;
		}
	}
	if (!found || !S_ISREG(st.st_mode))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		return "a set-user-ID program";
	if ((st.st_mode & S_ISGID) && st.st_gid != getegid() && (st.st_mode & S_IXGRP))
		return "a set-group-ID program";
	if (getxattr(path, "security.capability", NULL, 0) > 0)
		return "a program with file capabilities";
	return NULL;
}
