/*
** meminst-nearest.h — "did you mean": the nearest of a list of words.
**
** Internal (not installed): shared by the runtime's MEMINST parser and the
** commands' argument parsers so that every typo gets the same kind of hint.
** Allocation-free (the runtime calls it on its first malloc): the distance
** is the optimal string alignment distance (Levenshtein plus transposition
** of two neighbours), computed over rows on the stack; words longer than
** MEMINST_NEAREST_MAX are never suggested.
*/
#ifndef MEMINST_NEAREST_H
#define MEMINST_NEAREST_H

#include <stddef.h>
#include <string.h>

#define MEMINST_NEAREST_MAX 40

static inline unsigned meminst_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	unsigned rows[3][MEMINST_NEAREST_MAX + 1];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++) {
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= nb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = prev[j - 1] + cost;
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1; /* two neighbours swapped */
			cur[j] = best;
		}
		unsigned *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb];
}

/*
** The word of WORDS (COUNT of them, NULL entries skipped) nearest to the
** TYPED text, or NULL when none is near enough to be a typo: at most one
** edit for short words, two for words of five letters or more, and never
** more than a third of the word.  A typed prefix of a single word (such as
** "rep" for "report") also counts.
*/
static inline const char *meminst_nearest(const char *typed, size_t n, const char *const *words,
					  size_t count)
{
	const char *best = NULL, *prefix_of = NULL;
	unsigned best_d = ~0u;
	size_t prefixes = 0;
	if (n == 0 || n > MEMINST_NEAREST_MAX)
		return NULL;
	for (size_t i = 0; i < count; i++) {
		const char *w = words[i];
		size_t nw = w ? strlen(w) : 0;
		if (nw == 0 || nw > MEMINST_NEAREST_MAX)
			continue;
		if (n >= 2 && n < nw && memcmp(typed, w, n) == 0) {
			prefixes++;
			prefix_of = w;
		}
		unsigned d = meminst_edit_distance(typed, n, w, nw);
		size_t longer = n > nw ? n : nw;
		unsigned allowed = longer >= 5 ? 2 : 1;
		if (d <= allowed && d * 3 <= longer && d < best_d) {
			best_d = d;
			best = w;
		}
	}
	if (best)
		return best;
	return prefixes == 1 ? prefix_of : NULL;
}

#endif
