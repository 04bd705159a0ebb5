// inline_target.cc — CPU time and allocations inside inlined code, for the
// exports of samples (tests/export/inline.sh): built -O1 -g by the test with
// g++ and clang++.  mix_step and make_buffer are always inlined, so their
// samples' addresses are inside churn and fill: the exports must show them
// as frames of their own, like perf and pprof do.
#include <cstdint>
#include <cstdlib>
#include <vector>

static volatile uint64_t sink;

__attribute__((always_inline)) static inline uint64_t mix_step(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull; // line of the hot loop
	return x;
}

__attribute__((noinline)) static uint64_t churn(long n)
{
	uint64_t x = 1;
	for (long i = 0; i < n; i++)
		x ^= mix_step(x + (uint64_t)i); // line of the call of mix_step
	return x;
}

__attribute__((always_inline)) static inline char *make_buffer(size_t n)
{
	char *p = static_cast<char *>(malloc(n)); // line of the allocation
	p[0] = 1;
	return p;
}

__attribute__((noinline)) static void fill(std::vector<char *> &v, int n)
{
	for (int i = 0; i < n; i++)
		v.push_back(make_buffer(4096)); // line of the call of make_buffer
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000000;
	sink = churn(n);
	std::vector<char *> v;
	fill(v, 20000);
	for (char *p : v)
		free(p);
	return 0;
}
