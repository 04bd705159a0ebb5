// cxx_sites.cc — a C++ program whose allocations all go through the
// standard headers: std::string keys of a std::map filled in build_cache
// (the string is built in key_of, inlined into it), the map's nodes, a std::vector
// grown in main, vectors grown by two functions alike, and a thread that
// fills the map too.  Built -O1 -g by
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
	return std::string(buf); // line of the key
}

__attribute__((noinline)) static void build_cache(int from, int n)
{
	for (int i = from; i < from + n; i++)
		(*cache)[key_of(i)] = i; // line of the insertion
}

// Two callers of the same std::vector<int>::_M_realloc_insert, called
// from the same place at the same depth: site_depth=user must tell them
// apart (its cache of caller chains checks the return addresses).
__attribute__((noinline)) static std::vector<int> *grow_a(int n)
{
	std::vector<int> *v = new std::vector<int>;
	for (int i = 0; i < n; i++)
		v->push_back(i * 2); // line of grow_a
	return v;
}

__attribute__((noinline)) static std::vector<int> *grow_b(int n)
{
	std::vector<int> *v = new std::vector<int>;
	for (int i = 0; i < n; i++)
		v->push_back(i * 3); // line of grow_b
	return v;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000;
	cache = new std::map<std::string, int>;
	build_cache(0, n);
	std::thread t([n] { build_cache(n, n); }); // line of the thread
	t.join();
	std::vector<std::vector<int> *> kept;
	kept.reserve(60);
	for (int i = 0; i < 30; i++) {
		kept.push_back(i % 3 ? grow_a(100) : grow_b(100));
	}
	std::vector<long> v;
	for (long i = 0; i < 100000; i++)
		v.push_back(i); // line of the vector
	printf("%zu %zu\n", cache->size(), v.size());
	fflush(stdout);
	exit(0);
}
