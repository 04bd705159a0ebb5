// cache.cpp — a C++ program whose memory is all allocated inside the
// standard library: the nodes and std::string keys of a std::map filled by
// build_cache, and a std::vector grown in main.  The README's C++ example
// (meminst --site-depth=user names the lines that fill them).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

// Kept until the process ends, so that the exit snapshot holds it.
static std::map<std::string, int> *cache = new std::map<std::string, int>;

static std::string key_of(int i)
{
	char buf[64];
	snprintf(buf, sizeof buf, "a-key-long-enough-for-the-heap-%08d", i);
	return std::string(buf);
}

__attribute__((noinline)) static void build_cache(int n)
{
	for (int i = 0; i < n; i++)
		(*cache)[key_of(i)] = i;
}

int main()
{
	build_cache(20000);
	std::vector<long> *squares = new std::vector<long>; // kept too
	for (long i = 0; i < 100000; i++)
		squares->push_back(i * i);
	printf("%zu keys, %zu squares\n", cache->size(), squares->size());
	return 0;
}
