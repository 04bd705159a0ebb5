/*
** demo.c — a small program that shows what libmeminst reports.
**
** It builds a word index over generated text: the words go into blocks of a
** registered type "word" and the index into "bucket", both in the class
** "index"; two worker threads allocate scratch buffers with no type of their
** own, so those are typed automatically by allocation site.  At the end it
** prints the status by class, then by type.
**
** Build: cc demo.c $(pkg-config --cflags --libs meminst) -lpthread
** Run:   MEMINST=mim ./demo
*/
#include <meminst.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct entry {
	struct entry *next;
	char *word;
	unsigned count;
};

#define NBUCKETS 4096
static struct entry **buckets;
static meminst_type_t type_word, type_bucket;

static unsigned hash(const char *s)
{
	unsigned h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

static void add_word(const char *w)
{
	unsigned h = hash(w);
	for (struct entry *e = buckets[h]; e; e = e->next)
		if (strcmp(e->word, w) == 0) {
			e->count++;
			return;
		}
	struct entry *e = meminst_malloc_typed(sizeof *e, type_bucket);
	meminst_type_t prev = meminst_type_push(type_word); /* a scope */
	e->word = strdup(w);
	meminst_type_pop(prev);
	e->count = 1;
	e->next = buckets[h];
	buckets[h] = e;
}

static void *worker(void *arg)
{
	size_t n = (size_t)arg;
	char **scratch = calloc(n, sizeof *scratch);
	for (size_t i = 0; i < n; i++)
		scratch[i] = malloc(64 + i % 512);
	for (size_t i = 0; i < n; i += 2)
		free(scratch[i]);
	for (size_t i = 1; i < n; i += 2)
		free(scratch[i]);
	free(scratch);
	return NULL;
}

int main(void)
{
	int cls = meminst_class_register("index");
	type_word = meminst_type_register("word", cls);
	type_bucket = meminst_type_register("bucket", cls);
	buckets = calloc(NBUCKETS, sizeof *buckets);

	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(size_t)(20000 * (i + 1)));
	char word[16];
	unsigned seed = 1;
	for (int i = 0; i < 200000; i++) {
		seed = seed * 1103515245 + 12345;
		snprintf(word, sizeof word, "w%u", (seed >> 16) % 30000);
		add_word(word);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	if (meminst_mode() == MEMINST_MODE_OFF) {
		fprintf(stderr, "demo: meminst is off; run with MEMINST=mis or MEMINST=mim\n");
		return 0;
	}
	fflush(stdout);
	meminst_status_print(MEMINST_STATUS_CLASSES, STDOUT_FILENO);
	printf("\n");
	meminst_status_print(MEMINST_STATUS_TYPES, STDOUT_FILENO);
	return 0;
}
