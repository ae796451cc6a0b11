/* SPDX-License-Identifier: MIT */
/*
 * Decoded programs kept from one task to the next.
 *
 * A model's tasks run the same programs at the same addresses again and
 * again; decoding one costs far more than reading it.  A task still reads
 * every instruction from guest memory (same accesses, same faults) and
 * takes the cached records only if each raw instruction read is
 * byte-for-byte the one they were decoded from: a program rewritten in
 * place is always decoded again, whatever wrote it.
 *
 * The key holds everything decoding depends on besides the raw bytes.
 * A task takes its entry out of the cache and gives it back when it ends,
 * so a record is never shared: two tasks running one program at once
 * simply both decode it.
 */
#ifndef NPU_PROG_CACHE_H
#define NPU_PROG_CACHE_H

#include <pthread.h>
#include <stdint.h>

#define NPU_PROG_CACHE_SETS 64
#define NPU_PROG_CACHE_WAYS 8
/* At most this many instructions are kept in all (~1.1 KiB each). */
#define NPU_PROG_CACHE_MAX_INSNS 32768u

struct npu_dinsn;

struct npu_prog_key {
	uint64_t va;			/* program header's device address */
	uint32_t insn_offset, insn_count;
	uint32_t nclusters, tpbs;	/* partition the operands were checked for */
	uint32_t sram_size, hbsm_size;
};

struct npu_prog_entry {
	struct npu_prog_key key;
	struct npu_dinsn *insns;	/* NULL: free way */
	uint64_t stamp;			/* when it was last given back */
};

struct npu_prog_cache {
	pthread_mutex_t lock;
	struct npu_prog_entry set[NPU_PROG_CACHE_SETS][NPU_PROG_CACHE_WAYS];
	uint64_t clock;
	uint32_t insns;			/* instructions held */
	uint64_t hits, misses;		/* takes that found / did not find */
};

void npu_prog_cache_init(struct npu_prog_cache *c);
/* Frees every entry. */
void npu_prog_cache_destroy(struct npu_prog_cache *c);
/*
 * The records decoded for @key, removed from the cache (the caller owns
 * them and must still compare each raw instruction), or NULL.
 */
struct npu_dinsn *npu_prog_cache_take(struct npu_prog_cache *c,
				      const struct npu_prog_key *key);
/* Keep @insns, fully decoded for @key; takes ownership (may free them). */
void npu_prog_cache_give(struct npu_prog_cache *c,
			 const struct npu_prog_key *key, struct npu_dinsn *insns);

#endif /* NPU_PROG_CACHE_H */
