// SPDX-License-Identifier: MIT
/*
 * The scheduler's cost model (seed 002's three-bound pipeline model): core
 * counts, placement on the mesh, channel loads under XY routing, and the
 * compute, memory and network bounds.  See npu_plan.h for the equations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "plan/npu_plan.h"

/*
 * Relative tolerance for "equal" times.  Seed 002's Pipelined preset is
 * built so that T_comp and T_net coincide, and core-count scores tie;
 * rounding must not decide either, or results would depend on the order
 * in which floating-point terms happen to be summed.
 */
#define PLAN_REL_EPS 1e-9

static unsigned per_node(const struct npu_plan_machine *m)
{
	return m->cores_per_node ? m->cores_per_node : 1;
}

static unsigned mesh_nodes(const struct npu_plan_machine *m)
{
	return m->mesh_w * m->mesh_h;
}

static bool positive(double v)
{
	return isfinite(v) && v > 0;
}

static bool non_negative(double v)
{
	return isfinite(v) && v >= 0;
}

/* ---- validation ---- */

static npu_status check_rates(const struct npu_plan_machine *m)
{
	if (!positive(m->core_flops))
		return npu_fail(NPU_ERR_INVALID_ARG, "core rate %g FLOP/s must be positive",
				m->core_flops);
	if (!positive(m->link_bw))
		return npu_fail(NPU_ERR_INVALID_ARG, "link bandwidth %g B/s must be positive",
				m->link_bw);
	if (!positive(m->offchip_bw))
		return npu_fail(NPU_ERR_INVALID_ARG,
				"off-chip bandwidth %g B/s must be positive", m->offchip_bw);
	if (!positive(m->sram_bytes))
		return npu_fail(NPU_ERR_INVALID_ARG, "SRAM per core (%g bytes) must be positive",
				m->sram_bytes);
	/* B >= S would make M/n + B - S count more spill than there are weights. */
	if (!non_negative(m->buffer_bytes) || m->buffer_bytes >= m->sram_bytes)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"stream buffers (%g bytes) must be at least 0 and smaller than SRAM per core (%g bytes)",
				m->buffer_bytes, m->sram_bytes);
	return NPU_OK;
}

/* Mark the nodes that hold cores in ok[]; returns how many there are. */
static npu_status usable_map(const struct npu_plan_machine *m, bool *ok, unsigned *count)
{
	unsigned nodes = mesh_nodes(m);

	if (!m->usable) {
		if (m->n_usable)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"%u usable nodes announced but no list given", m->n_usable);
		for (unsigned i = 0; i < nodes; i++)
			ok[i] = true;
		*count = nodes;
		return NPU_OK;
	}
	memset(ok, 0, nodes * sizeof(*ok));
	for (unsigned i = 0; i < m->n_usable; i++) {
		unsigned id = m->usable[i];

		if (id >= nodes)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"usable node %u is outside the %ux%u mesh (nodes 0-%u)",
					id, m->mesh_w, m->mesh_h, nodes - 1);
		if (ok[id])
			return npu_fail(NPU_ERR_INVALID_ARG, "usable node %u listed twice", id);
		ok[id] = true;
	}
	*count = m->n_usable;
	return NPU_OK;
}

static npu_status check_machine(const struct npu_plan_machine *m, bool *ok)
{
	unsigned usable = 0;
	npu_status s;

	if (!m)
		return npu_fail(NPU_ERR_INVALID_ARG, "no machine description");
	if (m->cores == 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "the machine has 0 cores");
	if (m->cores > NPU_PLAN_MAX_CORES)
		return npu_fail(NPU_ERR_INVALID_ARG, "%u cores, at most %d supported",
				m->cores, NPU_PLAN_MAX_CORES);
	if (m->mesh_w == 0 || m->mesh_h == 0 || m->mesh_w > NPU_PLAN_MAX_NODES ||
	    m->mesh_h > NPU_PLAN_MAX_NODES || mesh_nodes(m) > NPU_PLAN_MAX_NODES)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"mesh %ux%u: needs 1 to %d nodes", m->mesh_w, m->mesh_h,
				NPU_PLAN_MAX_NODES);
	if (per_node(m) > NPU_PLAN_MAX_CORES_PER_NODE)
		return npu_fail(NPU_ERR_INVALID_ARG, "%u cores per node, at most %d supported",
				per_node(m), NPU_PLAN_MAX_CORES_PER_NODE);
	s = check_rates(m);
	if (s != NPU_OK)
		return s;
	s = usable_map(m, ok, &usable);
	if (s != NPU_OK)
		return s;
	if ((uint64_t)usable * per_node(m) < m->cores)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the %ux%u mesh has room for %u cores (%u usable nodes x %u), fewer than the %u asked for",
				m->mesh_w, m->mesh_h, usable * per_node(m), usable, per_node(m),
				m->cores);
	return NPU_OK;
}

static npu_status check_chain(const struct npu_plan_layer *layers, unsigned n,
			      const struct npu_plan_machine *m)
{
	if (!layers || n == 0)
		return npu_fail(NPU_ERR_INVALID_ARG, "the chain has no layers");
	if (n > NPU_PLAN_MAX_LAYERS)
		return npu_fail(NPU_ERR_INVALID_ARG, "%u layers, at most %d supported", n,
				NPU_PLAN_MAX_LAYERS);
	if (n > m->cores)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"%u layers but only %u cores: every layer needs a core", n,
				m->cores);
	for (unsigned i = 0; i < n; i++) {
		const struct npu_plan_layer *l = &layers[i];

		if (!non_negative(l->flops) || !non_negative(l->weight_bytes) ||
		    !non_negative(l->act_bytes))
			return npu_fail(NPU_ERR_INVALID_ARG,
					"layer %u (%.*s): W, M and A must be finite and not negative",
					i, NPU_PLAN_NAME_MAX, l->name);
	}
	return NPU_OK;
}

npu_status npu_plan_check(const struct npu_plan_layer *layers, unsigned n,
			  const struct npu_plan_machine *m)
{
	bool ok[NPU_PLAN_MAX_NODES];
	npu_status s = check_machine(m, ok);

	return s != NPU_OK ? s : check_chain(layers, n, m);
}

/* Counts of a mapping or a placement request: >= 1 each, within the machine. */
static npu_status check_counts(const unsigned *counts, unsigned n,
			       const struct npu_plan_machine *m, unsigned *total)
{
	unsigned sum = 0;

	if (!counts || n == 0 || n > NPU_PLAN_MAX_LAYERS)
		return npu_fail(NPU_ERR_INVALID_ARG, "%u layers: need 1 to %d", n,
				NPU_PLAN_MAX_LAYERS);
	for (unsigned i = 0; i < n; i++) {
		if (counts[i] == 0)
			return npu_fail(NPU_ERR_INVALID_ARG, "layer %u has 0 cores", i);
		if (counts[i] > m->cores || sum + counts[i] > m->cores)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"the layers ask for more than the machine's %u cores",
					m->cores);
		sum += counts[i];
	}
	*total = sum;
	return NPU_OK;
}

/* Every core on a usable node, no node holding more than cores_per_node. */
static npu_status check_mapping(const struct npu_plan_mapping *map, unsigned n,
				const struct npu_plan_machine *m, const bool *ok)
{
	unsigned used[NPU_PLAN_MAX_NODES] = { 0 };
	unsigned total;
	npu_status s;

	if (!map)
		return npu_fail(NPU_ERR_INVALID_ARG, "no mapping");
	if (map->n_layers != n)
		return npu_fail(NPU_ERR_INVALID_ARG, "the mapping has %u layers, the chain %u",
				map->n_layers, n);
	s = check_counts(map->cores, n, m, &total);
	if (s != NPU_OK)
		return s;
	for (unsigned c = 0; c < total; c++) {
		unsigned id = map->node[c];

		if (id >= mesh_nodes(m) || !ok[id])
			return npu_fail(NPU_ERR_INVALID_ARG, "core %u sits on node %u, not usable",
					c, id);
		if (++used[id] > per_node(m))
			return npu_fail(NPU_ERR_INVALID_ARG, "node %u holds more than %u cores",
					id, per_node(m));
	}
	return NPU_OK;
}

/* ---- core counts ---- */

/* Weights that do not fit in n cores' SRAM, re-read from off-chip per input. */
static double spill_bytes(const struct npu_plan_layer *l, unsigned n,
			  const struct npu_plan_machine *m)
{
	double over = l->weight_bytes / n + m->buffer_bytes - m->sram_bytes;

	return over > 0 ? n * over : 0;
}

/*
 * Seed 002's balancing score: the layer's compute time or the time to
 * inject its output, whichever is larger, per core.  Injection counts
 * because an activation-heavy early layer needs cores for link bandwidth,
 * not just for FLOPs.
 */
static double score(const struct npu_plan_layer *l, unsigned n,
		    const struct npu_plan_machine *m)
{
	return fmax(l->flops / m->core_flops, l->act_bytes / m->link_bw) / n;
}

/* The layer that should get the next core; only spilling ones if @spilling. */
static int next_layer(const struct npu_plan_layer *layers, unsigned n,
		      const struct npu_plan_machine *m, const unsigned *counts,
		      bool spilling)
{
	int best = -1;
	double best_score = 0;

	for (unsigned i = 0; i < n; i++) {
		double s = score(&layers[i], counts[i], m);

		if (spilling && spill_bytes(&layers[i], counts[i], m) <= 0)
			continue;
		/* Strictly larger beyond rounding: ties go to the earlier layer. */
		if (best < 0 || s > best_score * (1 + PLAN_REL_EPS)) {
			best = (int)i;
			best_score = s;
		}
	}
	return best;
}

/* Fewest cores that hold a layer's weights, ceil(M / (S - B)); cores + 1 if none do. */
static unsigned min_cores(const struct npu_plan_layer *l, const struct npu_plan_machine *m)
{
	unsigned c = 1;

	/* Counting up with spill_bytes() keeps "fits" exactly what T_mem sees. */
	while (c <= m->cores && spill_bytes(l, c, m) > 0)
		c++;
	return c;
}

static double mem_time(const struct npu_plan_layer *layers, unsigned n,
		       const struct npu_plan_machine *m, const unsigned *counts)
{
	double spill = 0;

	for (unsigned i = 0; i < n; i++)
		spill += spill_bytes(&layers[i], counts[i], m);
	return spill / m->offchip_bw;
}

/*
 * When weights cannot all stay on chip, relieve whichever estimate binds:
 * a core on any spilling layer saves S - B bytes of spill (the one with
 * the largest score also gains most otherwise), a core on the top-score
 * layer cuts the compute/injection time.  Greedy on spill alone would
 * starve an activation-heavy first layer of injection bandwidth.
 */
static int relieve(const struct npu_plan_layer *layers, unsigned n,
		   const struct npu_plan_machine *m, const unsigned *counts)
{
	int top = next_layer(layers, n, m, counts, false);
	int spiller = next_layer(layers, n, m, counts, true);

	if (spiller >= 0 && mem_time(layers, n, m, counts) >= score(&layers[top], counts[top], m))
		return spiller;
	return top;
}

npu_status npu_plan_choose_cores(const struct npu_plan_layer *layers, unsigned n,
				 const struct npu_plan_machine *m, unsigned *counts,
				 bool *fits)
{
	npu_status s = npu_plan_check(layers, n, m);
	uint64_t need = 0;
	bool fit;

	if (s != NPU_OK)
		return s;
	if (!counts)
		return npu_fail(NPU_ERR_INVALID_ARG, "no array for the core counts");
	for (unsigned i = 0; i < n; i++) {
		counts[i] = min_cores(&layers[i], m);
		need += counts[i];
	}
	fit = need <= m->cores;
	if (!fit)
		for (unsigned i = 0; i < n; i++)
			counts[i] = 1;
	/* Seed step 2 when the weights fit, else the binding-bound greedy. */
	for (uint64_t used = fit ? need : n; used < m->cores; used++)
		counts[fit ? next_layer(layers, n, m, counts, false)
			   : relieve(layers, n, m, counts)]++;
	if (fits)
		*fits = fit;
	return NPU_OK;
}

/* ---- placement ---- */

/* splitmix64: a small, well-mixed PRNG so placements repeat across libcs. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fisher-Yates; with at most 2^16 slots a 64-bit draw's modulo bias is < 2^-48. */
static void shuffle(unsigned *v, unsigned n, uint64_t seed)
{
	uint64_t state = seed;

	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)(splitmix64(&state) % i);
		unsigned t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/*
 * Core slots column by column, down one column and up the next: runs of
 * this list form column bands, so each layer sits beside the next, and a
 * layer that spills into the next column continues at the same end of the
 * mesh rather than jumping to the far one (seed 002's preset numbers are
 * the same either way; byte-hops drop by 7%).
 */
static unsigned band_slots(const struct npu_plan_machine *m, const bool *ok,
			   unsigned *slots)
{
	unsigned k = 0;

	for (unsigned x = 0; x < m->mesh_w; x++)
		for (unsigned i = 0; i < m->mesh_h; i++) {
			unsigned y = x % 2 ? m->mesh_h - 1 - i : i;
			unsigned id = y * m->mesh_w + x;

			for (unsigned c = 0; ok[id] && c < per_node(m); c++)
				slots[k++] = id;
		}
	return k;
}

/* Core slots in node order, the deck the scattered placement shuffles. */
static unsigned node_slots(const struct npu_plan_machine *m, const bool *ok,
			   unsigned *slots)
{
	unsigned k = 0;

	for (unsigned id = 0; id < mesh_nodes(m); id++)
		for (unsigned c = 0; ok[id] && c < per_node(m); c++)
			slots[k++] = id;
	return k;
}

npu_status npu_plan_place(const unsigned *counts, unsigned n,
			  const struct npu_plan_machine *m,
			  enum npu_plan_placement kind, uint64_t seed,
			  struct npu_plan_mapping *out)
{
	bool ok[NPU_PLAN_MAX_NODES];
	unsigned *slots, total, first = 0;
	npu_status s = check_machine(m, ok);

	if (s == NPU_OK)
		s = check_counts(counts, n, m, &total);
	if (s != NPU_OK)
		return s;
	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "no mapping to fill");
	if (kind != NPU_PLAN_BANDED && kind != NPU_PLAN_SCATTERED)
		return npu_fail(NPU_ERR_INVALID_ARG, "unknown placement %d", (int)kind);
	slots = malloc((size_t)mesh_nodes(m) * per_node(m) * sizeof(*slots));
	if (!slots)
		return npu_fail(NPU_ERR_NO_MEMORY, "no memory for %u core slots",
				mesh_nodes(m) * per_node(m));
	if (kind == NPU_PLAN_SCATTERED) {
		shuffle(slots, node_slots(m, ok, slots), seed);
	} else {
		band_slots(m, ok, slots);
	}
	memset(out, 0, sizeof(*out));
	out->n_layers = n;
	for (unsigned i = 0; i < n; i++) {
		out->cores[i] = counts[i];
		memcpy(&out->node[first], &slots[first], counts[i] * sizeof(*slots));
		/* Row-major slice order, as in the seed's sim. */
		qsort(&out->node[first], counts[i], sizeof(*slots), cmp_unsigned);
		first += counts[i];
	}
	free(slots);
	return NPU_OK;
}

/* ---- channel loads ---- */

/* Add @bytes to every directed link of the XY route from @src to @dst. */
static void route_xy(const struct npu_plan_machine *m, unsigned src, unsigned dst,
		     double bytes, double *gamma)
{
	unsigned x = src % m->mesh_w, y = src / m->mesh_w;
	unsigned x1 = dst % m->mesh_w, y1 = dst / m->mesh_w;

	/* X first, then Y: the route never turns from Y back to X. */
	while (x != x1) {
		unsigned dir = x1 > x ? NPU_LINK_EAST : NPU_LINK_WEST;

		gamma[(y * m->mesh_w + x) * NPU_HW_LINK_DIRS + dir] += bytes;
		x = dir == NPU_LINK_EAST ? x + 1 : x - 1;
	}
	while (y != y1) {
		unsigned dir = y1 > y ? NPU_LINK_SOUTH : NPU_LINK_NORTH;

		gamma[(y * m->mesh_w + x) * NPU_HW_LINK_DIRS + dir] += bytes;
		y = dir == NPU_LINK_SOUTH ? y + 1 : y - 1;
	}
}

/*
 * Route layer i's output to layer i + 1.  In units of 1/(np * nc),
 * producer j holds [j nc, (j+1) nc) and consumer k needs [k np, (k+1) np),
 * so overlaps are exact integers and each producer visits only the
 * consumers it overlaps.
 */
static void add_layer_flows(const struct npu_plan_layer *layers, unsigned i,
			    const struct npu_plan_machine *m,
			    const struct npu_plan_mapping *map, unsigned first,
			    double *gamma)
{
	uint64_t np = map->cores[i], nc = map->cores[i + 1];
	const unsigned *prod = &map->node[first], *cons = &map->node[first + np];
	double unit = layers[i].act_bytes / (double)(np * nc);

	for (uint64_t j = 0; j < np; j++) {
		uint64_t lo = j * nc, hi = lo + nc;

		for (uint64_t k = lo / np; k < nc && k * np < hi; k++) {
			uint64_t a = k * np > lo ? k * np : lo;
			uint64_t b = (k + 1) * np < hi ? (k + 1) * np : hi;

			if (b > a)
				route_xy(m, prod[j], cons[k], unit * (double)(b - a), gamma);
		}
	}
}

static size_t link_count(const struct npu_plan_machine *m)
{
	return (size_t)mesh_nodes(m) * NPU_HW_LINK_DIRS;
}

static npu_status check_all(const struct npu_plan_layer *layers, unsigned n,
			    const struct npu_plan_machine *m,
			    const struct npu_plan_mapping *map)
{
	bool ok[NPU_PLAN_MAX_NODES];
	npu_status s = check_machine(m, ok);

	if (s == NPU_OK)
		s = check_chain(layers, n, m);
	if (s == NPU_OK)
		s = check_mapping(map, n, m, ok);
	return s;
}

npu_status npu_plan_link_loads(const struct npu_plan_layer *layers, unsigned n,
			       const struct npu_plan_machine *m,
			       const struct npu_plan_mapping *map,
			       double *gamma, size_t cap)
{
	npu_status s = check_all(layers, n, m, map);
	unsigned first = 0;

	if (s != NPU_OK)
		return s;
	if (!gamma || cap < link_count(m))
		return npu_fail(NPU_ERR_INVALID_ARG, "%zu link loads need room, %zu given",
				link_count(m), gamma ? cap : 0);
	memset(gamma, 0, link_count(m) * sizeof(*gamma));
	for (unsigned i = 0; i + 1 < n; i++) {
		add_layer_flows(layers, i, m, map, first, gamma);
		first += map->cores[i];
	}
	return NPU_OK;
}

/* ---- evaluation ---- */

/* Largest load and its link (lowest index on ties). */
static double hottest(const double *gamma, size_t links, unsigned *at)
{
	double max = 0;

	*at = 0;
	for (size_t c = 0; c < links; c++)
		if (gamma[c] > max) {
			max = gamma[c];
			*at = (unsigned)c;
		}
	return max;
}

/* Every bound within rounding of the total binds: presets tie on purpose. */
static unsigned binding(const struct npu_plan_eval *e)
{
	double near = e->t_total * (1 - PLAN_REL_EPS);
	unsigned bits = 0;

	if (e->t_total <= 0)
		return 0;
	if (e->t_comp >= near)
		bits |= NPU_PLAN_BOUND_COMPUTE;
	if (e->t_net >= near)
		bits |= NPU_PLAN_BOUND_NETWORK;
	if (e->t_mem >= near)
		bits |= NPU_PLAN_BOUND_MEMORY;
	return bits;
}

static void totals(const struct npu_plan_machine *m, const double *gamma,
		   struct npu_plan_eval *e)
{
	size_t links = link_count(m);

	e->hot_bytes = hottest(gamma, links, &e->hot_link);
	e->t_net = e->hot_bytes / m->link_bw;
	for (size_t c = 0; c < links; c++)
		e->byte_hops += gamma[c];
	e->t_total = fmax(e->t_comp, fmax(e->t_net, e->t_mem));
	e->throughput = e->t_total > 0 ? 1 / e->t_total : INFINITY;
	e->binds = binding(e);
}

npu_status npu_plan_evaluate(const struct npu_plan_layer *layers, unsigned n,
			     const struct npu_plan_machine *m,
			     const struct npu_plan_mapping *map,
			     struct npu_plan_eval *out)
{
	npu_status s = check_all(layers, n, m, map);
	double *gamma, *mine;
	size_t links;
	unsigned first = 0, hot;

	if (s != NPU_OK)
		return s;
	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "no result to fill");
	links = link_count(m);
	gamma = calloc(2 * links, sizeof(*gamma));
	if (!gamma)
		return npu_fail(NPU_ERR_NO_MEMORY, "no memory for %zu link loads", links);
	mine = gamma + links;
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < n; i++) {
		struct npu_plan_layer_eval *le = &out->layer[i];
		unsigned c = map->cores[i];

		le->t_comp = layers[i].flops / (c * m->core_flops);
		le->t_mem = spill_bytes(&layers[i], c, m) / m->offchip_bw;
		/* This layer's own flows alone, then folded into the total. */
		memset(mine, 0, links * sizeof(*mine));
		if (i + 1 < n)
			add_layer_flows(layers, i, m, map, first, mine);
		le->t_net = hottest(mine, links, &hot) / m->link_bw;
		for (size_t k = 0; k < links; k++)
			gamma[k] += mine[k];
		out->t_comp = fmax(out->t_comp, le->t_comp);
		out->t_mem += le->t_mem;
		first += c;
	}
	totals(m, gamma, out);
	free(gamma);
	return NPU_OK;
}

bool npu_plan_link_ends(const struct npu_plan_machine *m, unsigned link,
			unsigned *from, unsigned *to)
{
	unsigned node = link / NPU_HW_LINK_DIRS, dir = link % NPU_HW_LINK_DIRS;
	unsigned x = node % m->mesh_w, y = node / m->mesh_w;

	*from = node;
	*to = node;
	if (node >= mesh_nodes(m))
		return false;
	switch (dir) {
	case NPU_LINK_EAST:
		if (x + 1 >= m->mesh_w)
			return false;
		*to = node + 1;
		break;
	case NPU_LINK_WEST:
		if (x == 0)
			return false;
		*to = node - 1;
		break;
	case NPU_LINK_NORTH:
		if (y == 0)
			return false;
		*to = node - m->mesh_w;
		break;
	default:
		if (y + 1 >= m->mesh_h)
			return false;
		*to = node + m->mesh_w;
		break;
	}
	return true;
}

const char *npu_plan_dir_name(unsigned dir)
{
	static const char *const names[NPU_HW_LINK_DIRS] = {
		[NPU_LINK_EAST] = "east",
		[NPU_LINK_WEST] = "west",
		[NPU_LINK_NORTH] = "north",
		[NPU_LINK_SOUTH] = "south",
	};

	return dir < NPU_HW_LINK_DIRS ? names[dir] : "?";
}
