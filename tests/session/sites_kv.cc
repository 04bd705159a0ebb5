// sites_kv.cc — sites.sh's C++ key-value cache: Cache::put, inlined into
// main, allocates on one line through several std:: paths (a map node, the
// key's and the value's copies into it, a log line), so that several sites
// share the name Cache::put and its line; only their stacks tell them apart.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

struct Cache {
	std::map<std::string, std::string> m;
	std::vector<std::string> log;
	void put(const std::string &k, const std::string &v)
	{
		m[k] = v; log.push_back(k + "=" + v); // line of the puts
	}
};

static Cache *keep;

int main()
{
	keep = new Cache;
	char k[64], v[64];
	for (int i = 0; i < 2000; i++) {
		snprintf(k, sizeof k, "key-%030d", i);
		snprintf(v, sizeof v, "value-%040d", i);
		keep->put(k, v);
	}
	printf("%zu\n", keep->m.size());
	return 0;
}
