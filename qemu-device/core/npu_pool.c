// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "npu_pool.h"

struct batch {
	void (*fn)(void *arg, unsigned i);
	void *arg;
	unsigned n, next, done;
	struct batch *link;
};

struct npu_pool {
	/* lock protects the batch list, each batch's next/done, and stop. */
	pthread_mutex_t lock;
	pthread_cond_t work;	/* a batch has items left, or stop */
	pthread_cond_t finished;	/* some batch completed an item */
	struct batch *head;
	bool stop;
	unsigned nthreads;
	pthread_t *threads;
};

static _Thread_local unsigned worker_index;

unsigned npu_pool_worker_index(void)
{
	return worker_index;
}

unsigned npu_pool_size(const struct npu_pool *pool)
{
	return pool ? pool->nthreads : 0;
}

/* Take one item from the first batch that has any; lock held. */
static struct batch *take(struct npu_pool *pool, unsigned *item)
{
	for (struct batch *b = pool->head; b; b = b->link) {
		if (b->next < b->n) {
			*item = b->next++;
			return b;
		}
	}
	return NULL;
}

static void run_item(struct npu_pool *pool, struct batch *b, unsigned item)
{
	pthread_mutex_unlock(&pool->lock);
	b->fn(b->arg, item);
	pthread_mutex_lock(&pool->lock);
	if (++b->done == b->n)
		pthread_cond_broadcast(&pool->finished);
}

static void *worker(void *arg)
{
	struct npu_pool *pool = arg;
	unsigned item;

	pthread_mutex_lock(&pool->lock);
	for (unsigned i = 0; i < pool->nthreads; i++)
		if (pthread_equal(pool->threads[i], pthread_self()))
			worker_index = i + 1;
	for (;;) {
		struct batch *b = take(pool, &item);

		if (b) {
			run_item(pool, b, item);
			continue;
		}
		if (pool->stop)
			break;
		pthread_cond_wait(&pool->work, &pool->lock);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

struct npu_pool *npu_pool_create(unsigned nthreads)
{
	struct npu_pool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return NULL;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->work, NULL);
	pthread_cond_init(&pool->finished, NULL);
	pool->threads = calloc(nthreads ? nthreads : 1, sizeof(pthread_t));
	if (!pool->threads) {
		free(pool);
		return NULL;
	}
	/* Hold the lock so workers see the full thread array when they start. */
	pthread_mutex_lock(&pool->lock);
	for (unsigned i = 0; i < nthreads; i++) {
		if (pthread_create(&pool->threads[i], NULL, worker, pool))
			break;
		pool->nthreads++;
	}
	pthread_mutex_unlock(&pool->lock);
	return pool;
}

void npu_pool_destroy(struct npu_pool *pool)
{
	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->stop = true;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	for (unsigned i = 0; i < pool->nthreads; i++)
		pthread_join(pool->threads[i], NULL);
	pthread_cond_destroy(&pool->work);
	pthread_cond_destroy(&pool->finished);
	pthread_mutex_destroy(&pool->lock);
	free(pool->threads);
	free(pool);
}

void npu_pool_run(struct npu_pool *pool, unsigned n,
		  void (*fn)(void *arg, unsigned i), void *arg)
{
	struct batch b = { .fn = fn, .arg = arg, .n = n };
	struct batch **pp;
	unsigned item;

	if (!pool || !pool->nthreads || n < 2) {
		for (unsigned i = 0; i < n; i++)
			fn(arg, i);
		return;
	}
	pthread_mutex_lock(&pool->lock);
	b.link = pool->head;
	pool->head = &b;
	pthread_cond_broadcast(&pool->work);
	/* The caller works on its own batch too. */
	while (b.next < b.n) {
		item = b.next++;
		run_item(pool, &b, item);
	}
	while (b.done < b.n)
		pthread_cond_wait(&pool->finished, &pool->lock);
	for (pp = &pool->head; *pp != &b; pp = &(*pp)->link)
		;
	*pp = b.link;
	pthread_mutex_unlock(&pool->lock);
}
