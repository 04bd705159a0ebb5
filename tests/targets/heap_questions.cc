/*
** heap_questions.cc — a program whose allocation events are known in
** advance, for tests/session/heaptrack.sh (meminst's counters against
** heaptrack's): several sites, temporaries in a loop, a few leaks,
** realloc, new/delete, threads.
**
** Events, all from main's thread unless said (plus what the C++ runtime
** and stdio allocate themselves):
**   temp_loop      1000 malloc(48)+free pairs: 1000 calls, 1000 temporary
**   keep_many      200 new int[8] kept, then deleted: 200 calls, 0 temporary
**   grow           malloc(16), then 9 reallocs doubling it, then free:
**                  10 calls (heaptrack and meminst count realloc as one),
**                  1 temporary (the first realloc releases the block just
**                  allocated), 9 reallocs
**   leak_some      5 malloc(1000) never freed: 5 calls, 5000 bytes leaked
**   strings        300 std::string of 40 characters built and dropped:
**                  300 calls, 300 temporary
**   workers        2 threads, 500 malloc(24)+free pairs each
**                  (heaptrack orders every thread's events in one stream;
**                  the workers run one after the other so that both tools
**                  see each pair back to back)
**   peak           a 1 MiB block, live with the rest at the peak
**
** With an argument N (default 1), temp_loop makes 1000 * N pairs,
** leak_some leaks 5 * N blocks and peak's block is N MiB: two runs with
** different N differ in those three sites only (the diff of two runs).
*/
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <string>

static void *volatile sink;
static int scale = 1;

__attribute__((noinline)) static void temp_loop(void)
{
	for (int i = 0; i < 1000 * scale; i++) {
		void *p = malloc(48);
		sink = p;
		free(p);
	}
}

__attribute__((noinline)) static void keep_many(void)
{
	int *v[200];
	for (int i = 0; i < 200; i++)
		v[i] = new int[8];
	sink = v[199];
	for (int i = 0; i < 200; i++)
		delete[] v[i];
}

__attribute__((noinline)) static void grow(void)
{
	char *p = (char *)malloc(16);
	size_t n = 16;
	for (int i = 0; i < 9; i++) {
		n *= 2;
		p = (char *)realloc(p, n);
		memset(p, 1, n);
	}
	sink = p;
	free(p);
}

__attribute__((noinline)) static void leak_some(void)
{
	for (int i = 0; i < 5 * scale; i++)
		sink = malloc(1000);
}

__attribute__((noinline)) static void strings(void)
{
	for (int i = 0; i < 300; i++) {
		std::string s(40, 'a' + i % 26);
		sink = &s[0];
	}
}

static void *worker(void *)
{
	for (int i = 0; i < 500; i++) {
		void *p = malloc(24);
		sink = p;
		free(p);
	}
	return nullptr;
}

__attribute__((noinline)) static void workers(void)
{
	for (int i = 0; i < 2; i++) {
		pthread_t t;
		if (pthread_create(&t, nullptr, worker, nullptr) != 0)
			exit(3);
		pthread_join(t, nullptr);
	}
}

__attribute__((noinline)) static void peak(void)
{
	size_t n = (size_t)scale << 20;
	void *p = malloc(n);
	memset(p, 2, n);
	sink = p;
	free(p);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (scale = atoi(argv[1])) < 1)
		return 2;
	temp_loop();
	keep_many();
	grow();
	leak_some();
	strings();
	workers();
	peak();
	return 0;
}
