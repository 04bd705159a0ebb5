/*
** alloc_hooks_ids.c — the set*uid family, interposed (alloc_ids.c: the
** files of a process that switches to another user).  libc's own does the
** work (its call on every thread), looked up on the first call.
*/
#include "alloc_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static long ids_call(void **fn, const char *name, long a, long b, long c)
{
	void *f = alloc_hooks_real(fn, name);
	if (!f)
		return errno = ENOSYS, -1;
	int (*g)(long, long, long);
	memcpy(&g, &f, sizeof g);
	return g(a, b, c);
}

#define IDS_HOOK(name)                                             \
	static long ids_real_##name(long a, long b, long c)        \
	{                                                          \
		static void *fn;                                   \
		return ids_call(&fn, #name, a, b, c);              \
	}
IDS_HOOK(setuid)
IDS_HOOK(seteuid)
IDS_HOOK(setreuid)
IDS_HOOK(setresuid)

/* The effective user a call makes: setuid's for root sets all three
** (an unprivileged caller's is its own euid's, unchanged or not). */
ALLOC_EXPORT int setuid(uid_t uid)
{
	return (int)alloc_ids_switch_user(uid, ids_real_setuid, (long)uid, 0, 0);
}

ALLOC_EXPORT int seteuid(uid_t euid)
{
	return (int)alloc_ids_switch_user(euid, ids_real_seteuid, (long)euid, 0, 0);
}

ALLOC_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	return (int)alloc_ids_switch_user(euid, ids_real_setreuid, (long)ruid, (long)euid, 0);
}

ALLOC_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	return (int)alloc_ids_switch_user(euid, ids_real_setresuid, (long)ruid, (long)euid, (long)suid);
}
