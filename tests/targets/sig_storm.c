/*
** sig_storm.c — signals arriving in the middle of malloc and free: two
** threads allocate and free in a loop while the main thread sends them
** SIGUSR1 thousands of times (the handler only counts).  Everything must
** finish, nothing may be lost: every block the churning threads allocated
** is counted back out (glibc keeps a few blocks of its own per thread, made
** by the main thread in pthread_create, so the total is not the measure).
** Linked with libmeminst; prints "ok" or what is wrong (exit status 1).
*/
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "worker_blocks.h"

static _Atomic int stop;
static _Atomic long caught;

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&caught, 1);
}

static void *churn(void *arg)
{
	void *slot[256] = {0};
	unsigned r = (unsigned)(size_t)arg;
	while (!atomic_load(&stop)) {
		r = r * 1103515245 + 12345;
		unsigned k = (r >> 8) & 255;
		free(slot[k]);
		slot[k] = malloc(16 + (r >> 20) % 2000);
	}
	for (int k = 0; k < 256; k++)
		free(slot[k]);
	return NULL;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, churn, (void *)(size_t)(i + 1));
	for (int i = 0; i < 5000; i++) {
		pthread_kill(th[i & 1], SIGUSR1);
		if (i % 64 == 0)
			usleep(100);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (atomic_load(&caught) == 0) {
		printf("no signal was caught\n");
		return 1;
	}
	if (worker_blocks() != 0) {
		printf("%llu blocks of the exited threads still counted\n",
		       (unsigned long long)worker_blocks());
		return 1;
	}
	printf("ok\n");
	return 0;
}
