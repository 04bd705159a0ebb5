/*
** sess_parts.c — reading the files of the parts directory (sess_store.c):
** a part's file opened safely, and what a trace file's headers say
** (meminst-trace(5)): whether it was written to its end, when it began.
*/
#include "sess_int.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meminst-trace.h"

/* A part's file for reading: a regular file, never through a symbolic
** link, never a FIFO to wait on (a user's directory, uid.N, is that
** user's to fill).  -1 when it is not one. */
int sess_open_part(const char *file)
{
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
** Was the trace written to its end?  A file whose header promises an END
** record (MEMINST_TRACE_F_ENDS) and has none was cut: a write failed (a
** full disk), or the process was killed or still runs.  Only the chunk
** headers are read (meminst-trace(5)), and the first word of thread 0's
** two-word chunks, where END is.  *whole: the bytes up to the last
** complete chunk.  True when it ended, or promised nothing.
*/
bool sess_trace_ended(int fd, int64_t *whole)
{
	struct meminst_trace_header h;
	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.magic, MEMINST_TRACE_MAGIC, 8) != 0 ||
	    !(h.flags & MEMINST_TRACE_F_ENDS) || h.header_size < sizeof h)
		return true;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return true;
	int64_t off = h.header_size;
	*whole = off;
	struct meminst_trace_chunk c;
	while (pread(fd, &c, sizeof c, off) == (ssize_t)sizeof c && c.magic == MEMINST_TRACE_CHUNK_MAGIC) {
		int64_t next = off + (int64_t)sizeof c + 8 * (int64_t)c.words;
		if (next > st.st_size)
			break;
		uint64_t w;
		if (c.thread == 0 && c.stream == MEMINST_TRACE_STREAM_EVENTS && c.words == 2 &&
		    pread(fd, &w, sizeof w, off + (int64_t)sizeof c) == (ssize_t)sizeof w &&
		    MEMINST_TREC_KIND(w) == MEMINST_TREC_END)
			return true;
		off = *whole = next;
	}
	return false;
}

/* When the trace at path began (its header's t0_mono_ns): the order of
** the images of a pid.  UINT64_MAX when it cannot be read. */
uint64_t sess_trace_t0(const char *path)
{
	struct meminst_trace_header h;
	int fd = sess_open_part(path);
	bool ok = fd >= 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
		  memcmp(h.magic, MEMINST_TRACE_MAGIC, 8) == 0;
	if (fd >= 0)
		close(fd);
	return ok ? h.t0_mono_ns : UINT64_MAX;
}

/* The bytes of the trace's signal streams (its samples, timer and
** allocation): what the program did, for the image readers take first
** (session_image).  Only the chunk headers are read. */
int64_t sess_trace_sample_bytes(int fd)
{
	struct meminst_trace_header h;
	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.magic, MEMINST_TRACE_MAGIC, 8) != 0 ||
	    h.header_size < sizeof h)
		return 0;
	int64_t off = h.header_size, bytes = 0;
	struct meminst_trace_chunk c;
	while (pread(fd, &c, sizeof c, off) == (ssize_t)sizeof c && c.magic == MEMINST_TRACE_CHUNK_MAGIC) {
		if (c.stream == MEMINST_TRACE_STREAM_SIGNAL)
			bytes += 8 * (int64_t)c.words;
		off += (int64_t)sizeof c + 8 * (int64_t)c.words;
	}
	return bytes;
}
