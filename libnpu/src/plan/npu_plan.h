/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's cost model: how fast a chain of layers streams through a
 * mesh of cores, for a given number of cores per layer and placement.
 * Internal to libnpu (not in the public API); the npu-plan tool and the
 * space-time scheduler use it.
 *
 * The model is seed 002's three-bound pipeline model:
 *
 *   T_comp = max_i W_i / (n_i F)
 *   T_mem  = (1/D) sum_i n_i max(0, M_i/n_i + B - S)
 *   T_net  = max_c gamma_c / b
 *   T      = max(T_comp, T_mem, T_net),   throughput = 1 / T
 *
 * gamma_c is the number of bytes per input crossing directed link c:
 * producer j of n_i holds output fraction [j/n_i, (j+1)/n_i), consumer k of
 * n_{i+1} needs input fraction [k/n_{i+1}, (k+1)/n_{i+1}), and A_i times
 * the overlap of the two is routed X first, then Y.  There is no latency,
 * no contention beyond link loads and no traffic to the chip edge.
 *
 * Units are SI throughout: bytes, FLOP, seconds, bytes/s.  Callers that
 * speak KB and GB/s (the seed does) convert with 1 KB = 1000 bytes and
 * 1 GB/s = 1e9 bytes/s: with those, the seed's Pipelined preset gives
 * exactly its T_net = 33.3 us (KiB would give 34.1 us).
 *
 * Mesh nodes are numbered as in the hardware (uapi/npu/npu_hw_geom.h):
 * node (x, y) is y * mesh_w + x, x grows east, y grows south, and directed
 * link node * NPU_HW_LINK_DIRS + dir leaves node in direction dir
 * (enum npu_hw_link_dir).  Everything here is deterministic.
 */
#ifndef NPU_PLAN_H
#define NPU_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npu.h"
#include "npu/npu_hw_geom.h"

#define NPU_PLAN_NAME_MAX	64
#define NPU_PLAN_MAX_LAYERS	128
#define NPU_PLAN_MAX_CORES	1024
#define NPU_PLAN_MAX_NODES	1024	/* mesh_w * mesh_h */
#define NPU_PLAN_MAX_CORES_PER_NODE 64

/* One layer of the chain, per input (image, token, ...). */
struct npu_plan_layer {
	char name[NPU_PLAN_NAME_MAX];
	double flops;		/* W: work, FLOP */
	double weight_bytes;	/* M: weights, split evenly over the cores */
	double act_bytes;	/* A: output activations, streamed to the next layer */
};

struct npu_plan_machine {
	unsigned cores;		/* cores the plan may use */
	unsigned mesh_w, mesh_h;
	/*
	 * Cores sharing one mesh node (and its router): 1 for a plain mesh,
	 * 4 to plan M100 TPBs inside clusters.  0 is taken as 1.  Traffic
	 * between cores of one node crosses no mesh link.
	 */
	unsigned cores_per_node;	/* at most NPU_PLAN_MAX_CORES_PER_NODE */
	double core_flops;	/* F, FLOP/s per core */
	double buffer_bytes;	/* B, stream buffers reserved in each core's SRAM */
	double sram_bytes;	/* S, SRAM per core */
	double link_bw;		/* b, bytes/s per link and direction */
	double offchip_bw;	/* D, bytes/s of off-chip memory */
	/*
	 * Nodes that hold cores, or NULL for every node.  On the M100 the CCB
	 * and the DDR port occupy two nodes of the 4 x 4 mesh and fused
	 * clusters drop out, so only the healthy clusters' nodes are listed.
	 */
	const unsigned *usable;
	unsigned n_usable;
};

/*
 * Cores per layer and where they sit.  The cores of layer i are entries
 * first_i .. first_i + cores[i] - 1 of node[], where first_i is the sum of
 * the earlier counts; core k of a layer holds slice k of its output and
 * input.  The placers list each layer's cores in row-major order (node id
 * order), as the seed's sim does.
 */
struct npu_plan_mapping {
	unsigned n_layers;
	unsigned cores[NPU_PLAN_MAX_LAYERS];
	unsigned node[NPU_PLAN_MAX_CORES];
};

/* Bits of npu_plan_eval.binds. */
enum npu_plan_bound {
	NPU_PLAN_BOUND_COMPUTE = 1u << 0,
	NPU_PLAN_BOUND_NETWORK = 1u << 1,
	NPU_PLAN_BOUND_MEMORY = 1u << 2,
};

enum npu_plan_placement {
	NPU_PLAN_BANDED,	/* column bands in layer order: what the scheduler uses */
	NPU_PLAN_SCATTERED,	/* seeded random: for comparison */
};

/* Seconds per input. */
struct npu_plan_layer_eval {
	double t_comp;	/* W_i / (n_i F) */
	double t_mem;	/* this layer's share of T_mem */
	double t_net;	/* hottest link counting only this layer's output flows */
};

struct npu_plan_eval {
	struct npu_plan_layer_eval layer[NPU_PLAN_MAX_LAYERS];
	double t_comp;		/* max over layers */
	double t_mem;		/* sum over layers: one off-chip port serves them all */
	double t_net;		/* hottest link of all flows together / b */
	double t_total;		/* max of the three */
	double throughput;	/* inputs/s: 1 / t_total, INFINITY if t_total is 0 */
	double byte_hops;	/* sum_c gamma_c, bytes x hops per input */
	double hot_bytes;	/* max_c gamma_c, bytes per input */
	unsigned hot_link;	/* argmax, lowest index on ties; 0 if no traffic */
	unsigned binds;		/* enum npu_plan_bound bits within 1e-9 of t_total */
};

/* Validate a chain against a machine: every failure says what is wrong. */
npu_status npu_plan_check(const struct npu_plan_layer *layers, unsigned n,
			  const struct npu_plan_machine *m);

/*
 * Choose cores per layer (seed 002, section 5): give each layer the fewest
 * cores that hold its weights, ceil(M_i / (S - B)), then hand the rest out
 * one at a time to the layer with the largest max(W_i / F, A_i / b) / n_i
 * (ties: the earlier layer).  Uses all of m->cores.  If the minimums do
 * not fit (*fits, may be NULL, says false), layers start at one core and
 * each core goes to relieve the larger of that score and the estimated
 * T_mem, so the result streams weights from off-chip but stays balanced.
 */
npu_status npu_plan_choose_cores(const struct npu_plan_layer *layers, unsigned n,
				 const struct npu_plan_machine *m, unsigned *counts,
				 bool *fits);

/*
 * Place layers with counts[] cores on the usable nodes.  Banded: walk the
 * usable core slots column by column, down the first column, up the
 * second and so on, and give each layer the next counts[i], so each
 * layer's slices sit beside the matching slices of the next.  Scattered:
 * all usable slots shuffled by a PRNG (splitmix64) seeded with @seed, the
 * layers taking consecutive runs.  Either way each layer's cores are then
 * listed in row-major order, which fixes the slices.
 */
npu_status npu_plan_place(const unsigned *counts, unsigned n,
			  const struct npu_plan_machine *m,
			  enum npu_plan_placement kind, uint64_t seed,
			  struct npu_plan_mapping *out);

/*
 * Channel loads: gamma[link] = bytes per input on each directed link,
 * mesh_w * mesh_h * NPU_HW_LINK_DIRS entries (@cap must be at least that).
 */
npu_status npu_plan_link_loads(const struct npu_plan_layer *layers, unsigned n,
			       const struct npu_plan_machine *m,
			       const struct npu_plan_mapping *map,
			       double *gamma, size_t cap);

/* Evaluate a mapping: per-layer and overall bounds, throughput, traffic. */
npu_status npu_plan_evaluate(const struct npu_plan_layer *layers, unsigned n,
			     const struct npu_plan_machine *m,
			     const struct npu_plan_mapping *map,
			     struct npu_plan_eval *out);

/* The nodes a directed link joins; false if it would leave the mesh. */
bool npu_plan_link_ends(const struct npu_plan_machine *m, unsigned link,
			unsigned *from, unsigned *to);

/* "east", "west", "north", "south" for enum npu_hw_link_dir. */
const char *npu_plan_dir_name(unsigned dir);

#endif /* NPU_PLAN_H */
