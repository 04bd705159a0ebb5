/*
** cxx_containers.cc — C++ allocation under libmeminst, for the integration
** tests (tests/integration/cxx.sh): std::vector, std::map,
** std::unordered_map, std::string, std::shared_ptr, new/delete,
** new[]/delete[], aligned new (an alignas(64) type, plain and array),
** nothrow new, and a failing nothrow new; a failing nothrow new runs the
** new-handler as libstdc++'s does (a handler freeing a reserve is how a
** program gets its block on the retry).
**
** stdout is the same with and without libmeminst.  When it is preloaded
** and on, the probes (probe.h) also check that new and new[] are counted
** under their own allocators with exact sizes, and that everything adds up.
*/
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "probe.h"

struct alignas(64) line {
	unsigned char bytes[64];
	unsigned long sum() const { return std::accumulate(bytes, bytes + 64, 0ul); }
};

struct node {
	std::string name;
	std::vector<int> values;
	std::shared_ptr<node> next;
};

/*
** Every pointer from new goes through here: stored in a volatile, it
** escapes, so the compiler may not drop a new/delete pair (C++14 lets it).
** Blocks of 16 bytes or more must be 16-aligned; smaller ones only 8 (as
** jemalloc, used directly in `off` mode, gives them).
*/
static void *volatile sink;

static bool misaligned(void *p, std::uintptr_t a)
{
	sink = p;
	return (reinterpret_cast<std::uintptr_t>(p) & (a - 1)) != 0;
}

static unsigned long containers()
{
	std::vector<std::string> words;
	std::map<std::string, int> ordered;
	std::unordered_map<int, std::vector<long>> hashed;
	for (int i = 0; i < 50000; i++) {
		words.push_back("word-" + std::to_string(i * 7919 % 50021));
		ordered[words.back()] += i;
		hashed[i % 1000].push_back(i);
	}
	unsigned long h = words.size() + ordered.size() + hashed.size();
	for (auto &kv : ordered)
		h = h * 31 + kv.first.size() + (unsigned long)kv.second;
	for (int i = 0; i < 1000; i += 7)
		h += std::accumulate(hashed[i].begin(), hashed[i].end(), 0l);
	std::shared_ptr<node> list;
	for (int i = 0; i < 2000; i++)
		list = std::make_shared<node>(node{std::string(i % 50, 'x'), std::vector<int>(i % 30, i), list});
	for (auto *n = list.get(); n; n = n->next.get())
		h += n->name.size() + n->values.size();
	while (list) /* unlink iteratively: a 2000-deep destructor chain is avoidable */
		list = std::move(list->next);
	return h;
}

static int raw_new(unsigned long *h)
{
	int bad = 0;
	for (int i = 0; i < 1000; i++) {
		int *one = new int(i);
		double *many = new double[(unsigned)i % 100 + 1];
		line *l = new line();
		line *ls = new line[(unsigned)i % 5 + 1];
		char *nt = new (std::nothrow) char[(unsigned)i + 1];
		bad += misaligned(l, 64) + misaligned(ls, 64) + misaligned(many, i % 100 ? 16 : 8) +
		       misaligned(one, 4) + (!nt || misaligned(nt, 1));
		l->bytes[63] = (unsigned char)i;
		*h += (unsigned long)*one + l->sum();
		delete one;
		delete[] many;
		delete l;
		delete[] ls;
		delete[] nt;
	}
	volatile size_t too_much = SIZE_MAX / 4; /* at run time: clang rejects a constant this big */
	char *huge = new (std::nothrow) char[too_much];
	sink = huge;
	bad += huge != nullptr;
	return bad;
}

/* How many times a failing nothrow new (plain, array, aligned) called the
** new-handler: 3 each, the handler removing itself at its third call. */
static int handler_calls;
static void counting_handler()
{
	if (++handler_calls >= 3)
		std::set_new_handler(nullptr);
}
static void nothrow_handler()
{
	volatile size_t too_much = SIZE_MAX / 4;
	int calls[4];
	for (int k = 0; k < 4; k++) {
		handler_calls = 0;
		std::set_new_handler(counting_handler);
		void *p = k == 0   ? ::operator new(too_much, std::nothrow)
			  : k == 1 ? ::operator new[](too_much, std::nothrow)
			  : k == 2 ? ::operator new(too_much, std::align_val_t(128), std::nothrow)
				   : ::operator new[](too_much, std::align_val_t(128), std::nothrow);
		sink = p;
		calls[k] = handler_calls;
	}
	std::printf("nothrow new-handler calls %d %d %d %d\n", calls[0], calls[1], calls[2], calls[3]);
}

/* new and new[] go to their own allocators, with the requested sizes. */
static void probe_new_counts()
{
	int bad = 0;
	if (!probe_on())
		return;
	struct probe_table before = probe_table_read(MEMINST_STATUS_ALLOCATORS);
	uint64_t s5 = before.e[5].sizes.current, s6 = before.e[6].sizes.current;
	uint64_t b5 = before.e[5].blocks.current, b6 = before.e[6].blocks.current;
	probe_table_free(&before);
	long *one = new long(1);
	int *arr = new int[100];
	line *l = new line;
	bad += misaligned(one, 8) + misaligned(arr, 16) + misaligned(l, 64);
	struct probe_table after = probe_table_read(MEMINST_STATUS_ALLOCATORS);
	if (after.e[5].sizes.current - s5 != sizeof(long) + sizeof(line) || after.e[5].blocks.current - b5 != 2)
		probe_fail("new grew by %llu bytes in %llu blocks, expected %zu in 2",
			   (unsigned long long)(after.e[5].sizes.current - s5),
			   (unsigned long long)(after.e[5].blocks.current - b5), sizeof(long) + sizeof(line));
	if (after.e[6].sizes.current - s6 != 100 * sizeof(int) || after.e[6].blocks.current - b6 != 1)
		probe_fail("new[] grew by %llu bytes in %llu blocks, expected %zu in 1",
			   (unsigned long long)(after.e[6].sizes.current - s6),
			   (unsigned long long)(after.e[6].blocks.current - b6), 100 * sizeof(int));
	probe_table_free(&after);
	delete one;
	delete[] arr;
	delete l;
	if (bad)
		probe_fail("misaligned blocks from new");
}

int main(int argc, char **argv)
{
	(void)argc;
	probe_reader();
	unsigned long h = containers();
	int bad = raw_new(&h);
	nothrow_handler();
	probe_new_counts();
	probe_check_own_class_empty(argv[0], 1000);
	probe_check_sums("at the end");
	std::printf("hash %lu, %d bad blocks\n", h, bad);
	return bad != 0;
}
