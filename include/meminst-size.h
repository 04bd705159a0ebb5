/*
** meminst-size.h — a byte count for people: "512 B", "13.7 MiB".
**
** Internal (not installed): shared by the runtime's status printout
** (meminst_status_print) and inspect's text output, so that a size reads
** the same in both.  The caller gives its own snprintf-like function (the
** runtime's allocation-free alloc_fmt, the commands' snprintf).
*/
#ifndef MEMINST_SIZE_H
#define MEMINST_SIZE_H

#include <stddef.h>
#include <stdint.h>

typedef int meminst_fmt_fn(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* v in the largest binary unit it reaches, rounded to the nearest tenth
** (14,320,000 B is 13.7 MiB, not 13.6): the tenths are counted from the
** whole value, not from the last step's remainder. */
static inline void meminst_fmt_size(meminst_fmt_fn *fmt, uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	unsigned u = 0;
	uint64_t scale = 1;
	while (u < 6 && v / scale >= 1024)
		scale *= 1024, u++;
	if (u == 0) {
		fmt(buf, len, "%llu B", (unsigned long long)v);
		return;
	}
	/* (v % scale) < 2^60, so ten times it fits */
	uint64_t tenths = v / scale * 10 + ((v % scale) * 10 + scale / 2) / scale;
	if (tenths >= 10240 && u < 6) /* 1023.96 KiB rounds to 1.0 MiB */
		tenths = (tenths + 512) / 1024, u++;
	fmt(buf, len, "%llu.%u %s", (unsigned long long)(tenths / 10), (unsigned)(tenths % 10), unit[u]);
}

#endif
