/*
** trace_suspend.c — `suspend`: the time a traced thread spends blocked.
**
** The blocking calls of libc and libpthread are interposed (exported from
** libmeminst, the real ones found with dlsym(RTLD_NEXT) on first use).  A thread that is
** not being traced goes straight through after one TLS test; a traced one
** gets a SUSPEND record [begin, end, reason] around the real call.  Locks
** are tried first and only a lock that is contended counts as suspended.
**
** Limits (see meminst(7)): calls libc makes to itself (sleep inside
** system(), the locks inside stdio), direct system calls (syscall(2),
** inline assembly) and plain read/write on pipes, sockets and terminals are
** not seen: read and write are too hot to wrap, and their blocking cannot
** be told from their work without asking the descriptor.
*/
#define _GNU_SOURCE
#include "trace_int.h"
#include "../alloc/alloc_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *susp_next(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	if (!fn) {
		alloc_log("cannot find the real %s", name);
		alloc_sys_exit(127);
	}
	return fn;
}

/* The real function, looked up on first use. */
#define REAL(name)                                                              \
	static __typeof__(name) *real_;                                         \
	if (trace_unlikely(!real_)) {                                           \
		void *fn_ = susp_next(#name);                                   \
		memcpy(&real_, &fn_, sizeof fn_);                               \
	}

/* Call expr, wrapped in a SUSPEND record with this reason when traced, and
** announced to the wall-clock sampler (no signal while blocked) when it
** runs.  Before it, the allocation layer folds this thread's pending counts
** in, so that peaks stay exact when threads take turns (alloc_thread_park:
** one TLS test when there is nothing to do). */
#define SUSPEND(type, reason, expr)                                             \
	do {                                                                    \
		alloc_thread_park();                                            \
		if (trace_likely(!trace_cur && !trace_wall_on))                 \
			return expr;                                            \
		void *wall_ = trace_wall_on ? trace_wall_block_begin((void *)real_) : NULL; \
		uint64_t begin_ = trace_suspend_begin();                        \
		type r_ = expr;                                                 \
		trace_suspend_end(begin_, reason);                              \
		trace_wall_block_end(wall_);                                    \
		return r_;                                                      \
	} while (0)

/* ------------------------------------------------------------- sleeps -- */

ALLOC_EXPORT ALLOC_EDGE int nanosleep(const struct timespec *req, struct timespec *rem)
{
	REAL(nanosleep);
	SUSPEND(int, MEMINST_TSUSPEND_SLEEP, real_(req, rem));
}

ALLOC_EXPORT ALLOC_EDGE int clock_nanosleep(clockid_t id, int flags, const struct timespec *req,
				 struct timespec *rem)
{
	REAL(clock_nanosleep);
	SUSPEND(int, MEMINST_TSUSPEND_SLEEP, real_(id, flags, req, rem));
}

ALLOC_EXPORT ALLOC_EDGE int usleep(useconds_t us)
{
	REAL(usleep);
	SUSPEND(int, MEMINST_TSUSPEND_SLEEP, real_(us));
}

ALLOC_EXPORT ALLOC_EDGE unsigned sleep(unsigned s)
{
	REAL(sleep);
	SUSPEND(unsigned, MEMINST_TSUSPEND_SLEEP, real_(s));
}

/* ------------------------------------------------------- multiplexing -- */

ALLOC_EXPORT ALLOC_EDGE int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	REAL(poll);
	SUSPEND(int, MEMINST_TSUSPEND_POLL, real_(fds, n, timeout));
}

ALLOC_EXPORT ALLOC_EDGE int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	REAL(ppoll);
	SUSPEND(int, MEMINST_TSUSPEND_POLL, real_(fds, n, t, m));
}

ALLOC_EXPORT ALLOC_EDGE int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
	REAL(select);
	SUSPEND(int, MEMINST_TSUSPEND_POLL, real_(n, r, w, e, t));
}

ALLOC_EXPORT ALLOC_EDGE int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
			 const sigset_t *m)
{
	REAL(pselect);
	SUSPEND(int, MEMINST_TSUSPEND_POLL, real_(n, r, w, e, t, m));
}

ALLOC_EXPORT ALLOC_EDGE int epoll_wait(int fd, struct epoll_event *ev, int max, int timeout)
{
	REAL(epoll_wait);
	SUSPEND(int, MEMINST_TSUSPEND_POLL, real_(fd, ev, max, timeout));
}

ALLOC_EXPORT ALLOC_EDGE int epoll_pwait(int fd, struct epoll_event *ev, int max, int timeout,
			     const sigset_t *m)
{
	REAL(epoll_pwait);
	SUSPEND(int, MEMINST_TSUSPEND_POLL, real_(fd, ev, max, timeout, m));
}

/* -------------------------------------------------------------- locks -- */

/* A lock counts only when it is contended: try first, then wait. */
#define LOCK_WRAP(name, tryname, type)                                          \
	ALLOC_EXPORT ALLOC_EDGE int name(type *l)                                          \
	{                                                                       \
		REAL(name);                                                     \
		if (trace_likely(!trace_cur && !trace_wall_on))                 \
			return real_(l);                                        \
		static __typeof__(tryname) *try_;                               \
		if (trace_unlikely(!try_)) {                                    \
			void *fn_ = susp_next(#tryname);                        \
			memcpy(&try_, &fn_, sizeof fn_);                        \
		}                                                               \
		int rc = try_(l);                                               \
		if (rc != EBUSY) /* taken (EOWNERDEAD too), or an error */      \
			return rc;                                              \
		void *wall = trace_wall_on ? trace_wall_block_begin((void *)real_) : NULL; \
		uint64_t begin = trace_suspend_begin();                         \
		rc = real_(l);                                                  \
		trace_suspend_end(begin, MEMINST_TSUSPEND_LOCK);                \
		trace_wall_block_end(wall);                                     \
		return rc;                                                      \
	}

LOCK_WRAP(pthread_mutex_lock, pthread_mutex_trylock, pthread_mutex_t)
LOCK_WRAP(pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, pthread_rwlock_t)
LOCK_WRAP(pthread_rwlock_wrlock, pthread_rwlock_trywrlock, pthread_rwlock_t)

ALLOC_EXPORT ALLOC_EDGE int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	REAL(pthread_cond_wait);
	SUSPEND(int, MEMINST_TSUSPEND_COND, real_(c, m));
}

ALLOC_EXPORT ALLOC_EDGE int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
					const struct timespec *t)
{
	REAL(pthread_cond_timedwait);
	SUSPEND(int, MEMINST_TSUSPEND_COND, real_(c, m, t));
}

ALLOC_EXPORT ALLOC_EDGE int sem_wait(sem_t *s)
{
	REAL(sem_wait);
	SUSPEND(int, MEMINST_TSUSPEND_LOCK, real_(s));
}

ALLOC_EXPORT ALLOC_EDGE int sem_timedwait(sem_t *s, const struct timespec *t)
{
	REAL(sem_timedwait);
	SUSPEND(int, MEMINST_TSUSPEND_LOCK, real_(s, t));
}

/* --------------------------------------------------- joins and children -- */

ALLOC_EXPORT ALLOC_EDGE int pthread_join(pthread_t th, void **ret)
{
	REAL(pthread_join);
	SUSPEND(int, MEMINST_TSUSPEND_JOIN, real_(th, ret));
}

ALLOC_EXPORT ALLOC_EDGE pid_t wait(int *status)
{
	REAL(wait);
	SUSPEND(pid_t, MEMINST_TSUSPEND_JOIN, real_(status));
}

ALLOC_EXPORT ALLOC_EDGE pid_t waitpid(pid_t pid, int *status, int options)
{
	REAL(waitpid);
	SUSPEND(pid_t, MEMINST_TSUSPEND_JOIN, real_(pid, status, options));
}

/* ------------------------------------------------------------ sockets -- */

ALLOC_EXPORT ALLOC_EDGE int accept(int fd, struct sockaddr *a, socklen_t *len)
{
	REAL(accept);
	SUSPEND(int, MEMINST_TSUSPEND_IO, real_(fd, a, len));
}

ALLOC_EXPORT ALLOC_EDGE int accept4(int fd, struct sockaddr *a, socklen_t *len, int flags)
{
	REAL(accept4);
	SUSPEND(int, MEMINST_TSUSPEND_IO, real_(fd, a, len, flags));
}

ALLOC_EXPORT ALLOC_EDGE int connect(int fd, const struct sockaddr *a, socklen_t len)
{
	REAL(connect);
	SUSPEND(int, MEMINST_TSUSPEND_IO, real_(fd, a, len));
}

ALLOC_EXPORT ALLOC_EDGE ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	REAL(recv);
	SUSPEND(ssize_t, MEMINST_TSUSPEND_IO, real_(fd, buf, n, flags));
}

ALLOC_EXPORT ALLOC_EDGE ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a,
			      socklen_t *len)
{
	REAL(recvfrom);
	SUSPEND(ssize_t, MEMINST_TSUSPEND_IO, real_(fd, buf, n, flags, a, len));
}

ALLOC_EXPORT ALLOC_EDGE ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	REAL(recvmsg);
	SUSPEND(ssize_t, MEMINST_TSUSPEND_IO, real_(fd, msg, flags));
}
