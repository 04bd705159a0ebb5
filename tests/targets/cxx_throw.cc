/*
** cxx_throw.cc — C++ exceptions thrown across allocations, for the
** compatibility set (tests/compat/runtimes.sh): each exception object comes
** from __cxa_allocate_exception (malloc), and unwinding destroys the
** strings, vectors, maps and shared pointers of every frame it leaves.
** Covered: throws through recursive frames holding blocks, std::bad_alloc
** from a failing new and new[], nested exceptions (std::throw_with_nested),
** std::exception_ptr carried to another thread (std::promise/future), a
** constructor throwing inside vector::emplace_back (the strong guarantee),
** and catch (...) with a bare rethrow.
**
** stdout is the same with and without libmeminst; argv[1] scales the work.
*/
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct parse_error : std::runtime_error {
	std::vector<std::string> trail;
	parse_error(const std::string &what, std::vector<std::string> t)
		: std::runtime_error(what), trail(std::move(t)) {}
};

/* Recurse `depth` frames, each holding blocks, and throw at the bottom. */
static unsigned long descend(int depth, int seed, std::vector<std::string> &trail)
{
	std::map<int, std::string> local;
	for (int i = 0; i < 8; i++)
		local[i] = std::string(16 + (seed + i) % 90, char('a' + i));
	auto shared = std::make_shared<std::vector<long>>(64 + seed % 64, depth);
	trail.push_back(local[seed % 8].substr(0, 4));
	if (depth == 0)
		throw parse_error("bottom " + std::to_string(seed), trail);
	return descend(depth - 1, seed + 1, trail) + (*shared)[0];
}

/* A type whose constructor throws on every seventh value. */
struct fragile {
	std::string text;
	explicit fragile(int v) : text(40 + v % 50, 'f')
	{
		if (v % 7 == 6)
			throw std::invalid_argument("fragile " + std::to_string(v));
	}
};

static int nested(int v)
{
	try {
		std::vector<std::string> trail;
		descend(3, v, trail);
	} catch (const parse_error &) {
		std::throw_with_nested(std::logic_error("while parsing " + std::to_string(v)));
	}
	return 0;
}

/* How many exceptions a chain of nested ones holds. */
static int chain_length(const std::exception &e)
{
	try {
		std::rethrow_if_nested(e);
	} catch (const std::exception &inner) {
		return 1 + chain_length(inner);
	}
	return 1;
}

static std::exception_ptr fail_in_thread(int v)
{
	std::promise<int> p;
	std::future<int> f = p.get_future();
	std::thread t([&p, v] {
		try {
			std::vector<std::string> trail;
			descend(2 + v % 3, v, trail);
			p.set_value(0);
		} catch (...) {
			p.set_exception(std::current_exception());
		}
	});
	t.join();
	try {
		f.get();
	} catch (...) {
		return std::current_exception();
	}
	return nullptr;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	unsigned long trail_sum = 0, what_len = 0;
	int caught = 0, bad_alloc = 0, nested_total = 0, from_threads = 0;
	std::vector<fragile> kept;

	for (int r = 0; r < rounds; r++) {
		try {
			std::vector<std::string> trail;
			descend(4 + r % 6, r, trail);
		} catch (const parse_error &e) {
			caught++;
			trail_sum += e.trail.size();
			what_len += std::string(e.what()).size();
		}
		try {
			kept.emplace_back(r);
		} catch (const std::invalid_argument &e) {
			what_len += std::string(e.what()).size();
		}
		try {
			nested(r);
		} catch (const std::exception &e) {
			nested_total += chain_length(e);
		}
		try {
			try {
				throw std::out_of_range(std::string(100 + r % 100, 'o'));
			} catch (...) {
				throw;
			}
		} catch (const std::out_of_range &e) {
			what_len += std::string(e.what()).size();
		}
	}
	for (int r = 0; r < 20; r++) {
		try {
			/* beyond any address space: new fails and throws */
			volatile size_t huge = (size_t)1 << (56 + r % 4);
			char *p = new char[huge];
			p[0] = 1;
			delete[] p;
		} catch (const std::bad_alloc &) {
			bad_alloc++;
		}
	}
	for (int r = 0; r < rounds / 100 + 4; r++) {
		std::exception_ptr ep = fail_in_thread(r);
		try {
			if (ep)
				std::rethrow_exception(ep);
		} catch (const parse_error &e) {
			from_threads++;
			trail_sum += e.trail.size();
		}
	}
	unsigned long kept_len = 0;
	for (const fragile &f : kept)
		kept_len += f.text.size();
	printf("caught %d, trail %lu, what %lu, kept %zu (%lu bytes), bad_alloc %d, "
	       "nested %d, from threads %d\n",
	       caught, trail_sum, what_len, kept.size(), kept_len, bad_alloc, nested_total, from_threads);
	return 0;
}
