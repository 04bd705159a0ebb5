/*
** worker_blocks.h — for the signal storm targets linked with libmeminst
** (sig_storm.c, sig_threads.c): the blocks still counted to threads other
** than the main one (number 1), read through meminst_status_read; 0
** without MEMINST (nothing is read).
*/
#include <meminst.h>
#include <stdint.h>

#define WORKER_BLOCKS_THREADS 4096 /* status rows read at most */

static uint64_t worker_blocks(void)
{
	static struct meminst_status_info t[WORKER_BLOCKS_THREADS];
	long n = meminst_status_read(MEMINST_STATUS_THREADS, t, WORKER_BLOCKS_THREADS);
	uint64_t live = 0;
	for (long i = 2; i < n && i < WORKER_BLOCKS_THREADS; i++)
		live += t[i].blocks.current;
	return live;
}
