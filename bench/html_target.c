/*
** html_target.c — a traced program for bench/html.sh: rounds of a recursive
** computation (fib, half its calls leaves) and of a linked list built with
** malloc and freed, on two threads, about 27 million trace records with
** meminst --trace.  Built -O0 -finstrument-functions.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	char text[40];
};

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static struct node *push(struct node *head, int i)
{
	struct node *n = malloc(sizeof *n);
	if (!n)
		abort();
	n->next = head;
	snprintf(n->text, sizeof n->text, "node %d", i);
	return n;
}

static size_t drop(struct node *head)
{
	size_t k = 0;
	while (head) {
		struct node *next = head->next;
		free(head);
		head = next;
		k++;
	}
	return k;
}

static void *worker(void *arg)
{
	int rounds = *(int *)arg;
	long sum = 0;
	struct node *kept = NULL;
	for (int r = 0; r < rounds; r++) {
		sum += fib(24);
		struct node *list = NULL;
		for (int i = 0; i < 20000; i++)
			list = push(list, i);
		kept = push(kept, r); /* one node a round is never freed */
		sum += (long)drop(list);
	}
	printf("%ld %s\n", sum, kept ? kept->text : "");
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	pthread_t t;
	pthread_create(&t, NULL, worker, &rounds);
	worker(&rounds);
	pthread_join(t, NULL);
	return 0;
}
