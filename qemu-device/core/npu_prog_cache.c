// SPDX-License-Identifier: MIT
/*
 * Decoded-program cache: set-associative on the program's address, least
 * recently given back evicted first.  See npu_prog_cache.h.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "npu_prog_cache.h"

void npu_prog_cache_init(struct npu_prog_cache *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
}

void npu_prog_cache_destroy(struct npu_prog_cache *c)
{
	for (unsigned s = 0; s < NPU_PROG_CACHE_SETS; s++)
		for (unsigned w = 0; w < NPU_PROG_CACHE_WAYS; w++)
			free(c->set[s][w].insns);
	pthread_mutex_destroy(&c->lock);
}

static unsigned set_of(uint64_t va)
{
	/* Programs are at least 64-byte aligned and often page-aligned. */
	uint64_t h = (va >> 6) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 58) % NPU_PROG_CACHE_SETS;
}

static bool same_key(const struct npu_prog_key *a, const struct npu_prog_key *b)
{
	return a->va == b->va && a->insn_offset == b->insn_offset &&
	       a->insn_count == b->insn_count && a->nclusters == b->nclusters &&
	       a->tpbs == b->tpbs && a->sram_size == b->sram_size &&
	       a->hbsm_size == b->hbsm_size;
}

struct npu_dinsn *npu_prog_cache_take(struct npu_prog_cache *c,
				      const struct npu_prog_key *key)
{
	struct npu_prog_entry *way = c->set[set_of(key->va)];
	struct npu_dinsn *insns = NULL;

	pthread_mutex_lock(&c->lock);
	for (unsigned w = 0; w < NPU_PROG_CACHE_WAYS; w++) {
		if (way[w].insns && same_key(&way[w].key, key)) {
			insns = way[w].insns;
			way[w].insns = NULL;
			c->insns -= key->insn_count;
			break;
		}
	}
	if (insns)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->lock);
	return insns;
}

/* Called with c->lock held and at least one entry in the cache. */
static void evict_oldest(struct npu_prog_cache *c)
{
	struct npu_prog_entry *old = NULL;

	for (unsigned s = 0; s < NPU_PROG_CACHE_SETS; s++)
		for (unsigned w = 0; w < NPU_PROG_CACHE_WAYS; w++) {
			struct npu_prog_entry *e = &c->set[s][w];

			if (e->insns && (!old || e->stamp < old->stamp))
				old = e;
		}
	c->insns -= old->key.insn_count;
	free(old->insns);
	old->insns = NULL;
}

void npu_prog_cache_give(struct npu_prog_cache *c,
			 const struct npu_prog_key *key, struct npu_dinsn *insns)
{
	struct npu_prog_entry *way = c->set[set_of(key->va)];
	struct npu_prog_entry *slot = NULL;
	struct npu_dinsn *drop = NULL;

	pthread_mutex_lock(&c->lock);
	for (unsigned w = 0; w < NPU_PROG_CACHE_WAYS; w++) {
		struct npu_prog_entry *e = &way[w];

		/* A copy given back by another task replaces the older one. */
		if (e->insns && same_key(&e->key, key)) {
			slot = e;
			break;
		}
		if (!slot || (slot->insns && (!e->insns || e->stamp < slot->stamp)))
			slot = e;
	}
	if (slot->insns) {
		drop = slot->insns;
		c->insns -= slot->key.insn_count;
		slot->insns = NULL;
	}
	if (key->insn_count <= NPU_PROG_CACHE_MAX_INSNS) {
		/* Over the budget: the least recently used entries go first. */
		while (key->insn_count > NPU_PROG_CACHE_MAX_INSNS - c->insns)
			evict_oldest(c);
		slot->key = *key;
		slot->insns = insns;
		slot->stamp = ++c->clock;
		c->insns += key->insn_count;
		insns = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	free(drop);
	free(insns);
}
