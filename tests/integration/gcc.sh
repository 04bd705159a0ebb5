# gcc.sh — Debian's gcc and g++ under the preload: the drivers and every
# child they run (cc1, cc1plus, as, collect2, ld) compile and link a C and
# a C++ program.  The case passes when the compilers exit 0, the programs
# they built print what the uninstrumented build's programs print, and the
# executables are byte for byte the same.  The built programs themselves
# run uninstrumented: what is tested is the compiler.
. "$top_srcdir/tests/integration/lib.sh"

GCC=/usr/bin/gcc GXX=/usr/bin/g++
mi_need $GCC gcc
mi_need $GXX g++
export LC_ALL=C SOURCE_DATE_EPOCH=0
# cc1 and cc1plus carry their own copy of libstdc++ (exported for plugins),
# operator new and delete included: with backend=jemalloc meminst says once
# that it uses the system allocator for them (meminst(7)).
MI_EXPECTED_NOTE='defines operator new.*backend=jemalloc is not used'

cat >"$MI_TMP/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec { unsigned key; char name[24]; };

static int by_key(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

int main(void)
{
	enum { N = 5000 };
	struct rec *r = malloc(N * sizeof *r);
	unsigned long sum = 0;
	for (unsigned i = 0; i < N; i++) {
		r[i].key = i * 2654435761u % 100003;
		snprintf(r[i].name, sizeof r[i].name, "rec-%u", i);
	}
	qsort(r, N, sizeof *r, by_key);
	for (unsigned i = 0; i < N; i++)
		sum = sum * 31 + r[i].key + strlen(r[i].name);
	printf("first %s last %s sum %lu\n", r[0].name, r[N - 1].name, sum);
	free(r);
	return 0;
}
C

cat >"$MI_TMP/prog.cc" <<'CXX'
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

template <typename T> struct node {
	T value;
	std::vector<std::unique_ptr<node>> kids;
};

template <typename T> static T total(const node<T> &n)
{
	T s = n.value;
	for (auto &k : n.kids)
		s += total(*k);
	return s;
}

int main()
{
	std::map<std::string, std::vector<int>> m;
	for (int i = 0; i < 2000; i++)
		m["k" + std::to_string(i % 97)].push_back(i);
	node<long> root{1, {}};
	for (int i = 0; i < 50; i++) {
		root.kids.push_back(std::make_unique<node<long>>(node<long>{i, {}}));
		root.kids.back()->kids.push_back(std::make_unique<node<long>>(node<long>{i * i, {}}));
	}
	auto longest = std::max_element(m.begin(), m.end(), [](auto &a, auto &b) {
		return a.second.size() < b.second.size();
	});
	std::cout << m.size() << " " << longest->first << " "
		  << std::accumulate(longest->second.begin(), longest->second.end(), 0L) << " "
		  << total(root) << "\n";
}
CXX

build() {
	rm -rf "$MI_TMP/out" && mkdir "$MI_TMP/out" && cd "$MI_TMP/out" || return
	cp ../prog.c ../prog.cc . &&
	mi_x $GCC -O2 -g -Wall -o prog prog.c &&
	mi_x $GXX -O2 -Wall -o progxx prog.cc || return
	./prog && ./progxx && cksum prog progxx
}

mi_compare gcc build
mi_finish
