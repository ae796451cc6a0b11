/* SPDX-License-Identifier: MIT */
/*
 * A small worker pool that runs one round's independent unit iterations
 * (typically one per cluster or TPB) in parallel.  Several callers may
 * submit batches at once (one per busy task queue).
 */
#ifndef NPU_POOL_H
#define NPU_POOL_H

struct npu_pool;

/* nthreads extra workers (0: everything runs on the caller). */
struct npu_pool *npu_pool_create(unsigned nthreads);
void npu_pool_destroy(struct npu_pool *pool);
/* Number of extra workers. */
unsigned npu_pool_size(const struct npu_pool *pool);
/* Run fn(arg, i) for i in [0, n) and return when all are done. */
void npu_pool_run(struct npu_pool *pool, unsigned n,
		  void (*fn)(void *arg, unsigned i), void *arg);
/* 0 on a caller thread, 1..size on a pool worker. */
unsigned npu_pool_worker_index(void);

#endif /* NPU_POOL_H */
