/*
** crshim.c — the runner of the Criterion stand-in (criterion/criterion.h)
** used by the ThreadSanitizer build of `make check-sanitize`.
**
** Like Criterion, the runner calls the PRE_ALL hook, then starts every test
** (every parameter of a parameterized one) in a fresh execution of the
** binary, so each begins with its own constructors run in the runner's
** environment (tests/unit/ut.c relies on that); CRSHIM_RUN=INDEX/PARAM
** tells that execution which test to run.  A test passes when its process
** exits with status 0; TSan makes a process that raced exit otherwise.
*/
#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static struct crshim_test *tests, **tail = &tests;
void (*crshim_pre_all)(struct criterion_test_set *set);

/* Constructors run in file order; keep the tests in that order. */
void crshim_register(struct crshim_test *t)
{
	*tail = t;
	tail = &t->next;
}

void crshim_check(bool ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
	if (ok)
		return;
	fprintf(stderr, "%s:%d: assertion failed: %s", file, line, expr);
	if (*fmt) {
		va_list ap;
		va_start(ap, fmt);
		fputs(": ", stderr);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
	exit(1);
}

static size_t count_params(const struct crshim_test *t)
{
	return t->params ? t->params().count : 1;
}

static void run_one(unsigned index, size_t param)
{
	struct crshim_test *t = tests;
	while (t && index--)
		t = t->next;
	if (!t) {
		fprintf(stderr, "crshim: no test %u\n", index);
		exit(2);
	}
	void *arg = NULL;
	if (t->params) {
		struct crshim_params p = t->params();
		arg = (char *)p.items + param * p.size;
	}
	t->run(arg);
	exit(0);
}

/* Status of the child that ran test `index` with parameter `param`. */
static int spawn(char **argv, unsigned index, size_t param)
{
	char run[64];
	snprintf(run, sizeof run, "%u/%zu", index, param);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setenv("CRSHIM_RUN", run, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *run = getenv("CRSHIM_RUN");
	unsigned index;
	size_t param;
	if (run && sscanf(run, "%u/%zu", &index, &param) == 2)
		run_one(index, param);
	if (crshim_pre_all)
		crshim_pre_all(NULL);
	unsigned n = 0, failed = 0, i = 0;
	for (struct crshim_test *t = tests; t; t = t->next, i++)
		for (size_t p = 0; p < count_params(t); p++, n++) {
			int st = spawn(argv, i, p);
			bool ok = st == 0;
			failed += !ok;
			printf("[%s] %s::%s (param %zu)", ok ? "PASS" : "FAIL", t->suite, t->name, p);
			if (!ok && st != -1 && WIFSIGNALED(st))
				printf(": signal %d", WTERMSIG(st));
			else if (!ok && st != -1)
				printf(": exit status %d", WEXITSTATUS(st));
			putchar('\n');
			fflush(stdout);
		}
	printf("Synthesis: Tested: %u | Passing: %u | Failing: %u\n", n, n - failed, failed);
	return failed ? 1 : 0;
}
