// cxx_sites.cc — a C++ program whose allocations all go through the
// standard headers: std::string keys of a std::map filled in build_cache
// (the string is built in key_of, inlined), the map's nodes, a std::vector
// grown in main, and a thread that fills the map too.  Built -O1 -g by
// tests/inspect/cxx_sites.sh with g++ and clang++.  It ends with exit() so
// that the map and the vector are live in the exit snapshot.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

static std::map<std::string, int> *cache;

static std::string key_of(int i)
{
	char buf[64];
	snprintf(buf, sizeof buf, "a-key-long-enough-for-the-heap-%08d", i);
	return std::string(buf);
}

__attribute__((noinline)) static void build_cache(int from, int n)
{
	for (int i = from; i < from + n; i++)
		(*cache)[key_of(i)] = i; // line of the insertion
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000;
	cache = new std::map<std::string, int>;
	build_cache(0, n);
	std::thread t([n] { build_cache(n, n); });
	t.join();
	std::vector<long> v;
	for (long i = 0; i < 100000; i++)
		v.push_back(i); // line of the vector
	printf("%zu %zu\n", cache->size(), v.size());
	fflush(stdout);
	exit(0);
}
