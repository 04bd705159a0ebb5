// part_new.cc — a C++ program that defines operator new (on glibc's
// __libc_malloc) and not operator delete, for
// tests/integration/part_malloc.sh: libmeminst's delete receives blocks it
// did not make.  Prints what it built; exit status 0.
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

extern "C" void *__libc_malloc(size_t size);

void *operator new(size_t size)
{
	void *p = __libc_malloc(size ? size : 1);
	if (!p)
		throw std::bad_alloc();
	return p;
}

int main()
{
	std::vector<std::string> v;
	for (int i = 0; i < 100; i++)
		v.push_back(std::string(40 + i, 'x'));
	int *a = new int[50];
	a[3] = 4;
	int *b = new int(5);
	std::printf("%zu %zu %d %d\n", v.size(), v.back().size(), a[3], *b);
	delete[] a;
	delete b;
	return 0;
}
