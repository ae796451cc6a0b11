// SPDX-License-Identifier: MIT
/*
 * npu-plan: evaluate how a chain of layers maps onto a mesh of cores with
 * the scheduler's cost model (libnpu/src/plan, seed 002's three-bound
 * model): core counts per layer, banded or scattered placement, and the
 * compute, memory and network bounds.
 *
 * Units: 1 KB = 1000 bytes and 1 GB/s = 1e9 bytes/s (SI), the convention
 * under which the seed's Pipelined preset has T_net = 33.3 us.
 *
 * Exit status: 0 ok, 1 the chain file is unreadable or malformed, 2 a bad
 * command line (including a machine the chain cannot be mapped onto).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "npu.h"
#include "opts.h"
#include "plan/npu_plan.h"

#define EXIT_USAGE 2
#define EXIT_FILE 1
#define KB 1e3
#define GBPS 1e9
#define MFLOP 1e6
#define US 1e6

struct options {
	const char *chain;
	struct npu_plan_machine m;
	unsigned usable[NPU_PLAN_MAX_NODES];
	unsigned counts[NPU_PLAN_MAX_LAYERS];
	unsigned n_counts;		/* 0: let the model choose */
	enum npu_plan_placement placement;
	uint64_t seed;
	int json;
};

struct chain {
	struct npu_plan_layer layer[NPU_PLAN_MAX_LAYERS];
	unsigned n;
};

/* What each option does, for apply()'s switch. */
enum plan_opt_id {
	OPT_CHAIN, OPT_CORES, OPT_MESH, OPT_FLOPS, OPT_BUFFER_KB, OPT_SRAM_KB, OPT_LINK_GBPS,
	OPT_OFFCHIP_GBPS, OPT_PLACEMENT, OPT_SEED, OPT_NODES, OPT_CORES_PER_NODE, OPT_COUNTS,
	OPT_JSON, OPT_HELP, OPT_VERSION,
};

/*
 * Every option, in --help's order: getopt_long's table and the help are
 * both made from it (tools/common/opts.h).  A metavar means a value.
 * Defaults are seed 002's.
 */
static const struct tool_opt plan_opts[] = {
	{ "chain", 0, "FILE", "the layers, one per line: 'name W_MFLOP M_KB A_KB'\n"
	  "(# starts a comment); required", OPT_CHAIN },
	{ "cores", 0, "N", "cores the plan may use (default 36)", OPT_CORES },
	{ "mesh", 0, "WxH", "the mesh of nodes (default 6x6)", OPT_MESH },
	{ "flops", 0, "F", "FLOP/s per core (default 1e12)", OPT_FLOPS },
	{ "buffer-kb", 0, "KB", "stream buffers reserved in each core's SRAM (default 64)",
	  OPT_BUFFER_KB },
	{ "sram-kb", 0, "KB", "SRAM per core (default 512)", OPT_SRAM_KB },
	{ "link-gbps", 0, "G", "GB/s per mesh link and direction (default 16)", OPT_LINK_GBPS },
	{ "offchip-gbps", 0, "G", "GB/s of off-chip memory (default 100)", OPT_OFFCHIP_GBPS },
	{ "placement", 0, "P", "banded or scattered (default banded)", OPT_PLACEMENT },
	{ "seed", 0, "N", "the scattered placement's seed (default 1)", OPT_SEED },
	{ "nodes", 0, "LIST", "usable mesh node ids (y * W + x), e.g. 1,2,4-15; default all",
	  OPT_NODES },
	{ "cores-per-node", 0, "N", "cores sharing a node's router (M100 TPBs: 4); default 1",
	  OPT_CORES_PER_NODE },
	{ "counts", 0, "LIST", "cores per layer, e.g. 6,9,9,9,3; default: chosen by the model",
	  OPT_COUNTS },
	{ "json", 0, NULL, "print the plan as one JSON object", OPT_JSON },
	{ "help", 'h', NULL, "this help", OPT_HELP },
	{ "version", 0, NULL, "print the version of the libnpu npu-plan runs on", OPT_VERSION },
};

#define PLAN_N_OPTS ((unsigned)(sizeof(plan_opts) / sizeof(plan_opts[0])))

static void usage(FILE *f)
{
	fputs("usage: npu-plan --chain FILE [options]\n"
	      "Evaluate how a chain of layers maps onto a mesh of cores with the scheduler's\n"
	      "cost model (seed 002's compute, memory and network bounds).\n"
	      "\n", f);
	tool_opts_usage(f, plan_opts, PLAN_N_OPTS, 22);
	fputs("\n"
	      "1 KB = 1000 bytes, 1 GB/s = 1e9 bytes/s.\n"
	      "Exit status: 0 ok, 1 the chain file is unreadable or malformed, 2 a bad\n"
	      "command line.\n", f);
}

/* "npu-plan 0.1.0": the libnpu it runs on, whose cost model it is. */
static void print_version(void)
{
	printf("npu-plan %s\n", npu_version());
	if (npu_version_number() != NPU_LIB_VERSION)
		printf("built against libnpu %d.%d.%d\n", NPU_LIB_VERSION_MAJOR,
		       NPU_LIB_VERSION_MINOR, NPU_LIB_VERSION_PATCH);
}

/* One-line usage error; returns the exit status for main to pass on. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;

	fputs("npu-plan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* ---- command line ---- */

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_uint(const char *flag, const char *s, unsigned max, unsigned *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v == 0 || v > max)
		return bad("%s: '%s' is not an integer from 1 to %u", flag, s, max);
	*out = (unsigned)v;
	return 0;
}

/* A finite number, > 0 (or >= 0 if @zero_ok). */
static int parse_num(const char *flag, const char *s, int zero_ok, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(*out) || *out < 0 || (!zero_ok && *out == 0))
		return bad("%s: '%s' is not a %s number", flag, s,
			   zero_ok ? "non-negative" : "positive");
	return 0;
}

static int parse_dim(const char *s, char **end, unsigned *out)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno || v == 0 || v > NPU_PLAN_MAX_NODES)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_mesh(const char *s, struct npu_plan_machine *m)
{
	char *end;

	if (parse_dim(s, &end, &m->mesh_w) || (*end != 'x' && *end != 'X') ||
	    parse_dim(end + 1, &end, &m->mesh_h) || *end)
		return bad("--mesh: '%s' is not WxH with W, H from 1 to %d (e.g. 6x6)", s,
			   NPU_PLAN_MAX_NODES);
	return 0;
}

/* One item of a list: N, or A-B if @ranges. */
static int parse_item(const char *flag, char *tok, int ranges, unsigned lo_min,
		      unsigned *v, unsigned cap, unsigned *n)
{
	char *dash = ranges ? strchr(tok, '-') : NULL;
	uint64_t lo, hi;

	if (dash)
		*dash = '\0';
	if (parse_u64(tok, &lo) || (dash && parse_u64(dash + 1, &hi)))
		return bad("%s: '%s%s%s' is not a number%s", flag, tok, dash ? "-" : "",
			   dash ? dash + 1 : "", ranges ? " or range A-B" : "");
	if (!dash)
		hi = lo;
	if (lo < lo_min)
		return bad("%s: %" PRIu64 " is below %u", flag, lo, lo_min);
	if (hi < lo)
		return bad("%s: range %" PRIu64 "-%" PRIu64 " runs backwards", flag, lo, hi);
	if (hi >= NPU_PLAN_MAX_NODES)
		return bad("%s: %" PRIu64 " is too large (at most %d)", flag, hi,
			   NPU_PLAN_MAX_NODES - 1);
	for (uint64_t k = lo; k <= hi; k++) {
		if (*n == cap)
			return bad("%s: more than %u entries", flag, cap);
		v[(*n)++] = (unsigned)k;
	}
	return 0;
}

static int parse_list(const char *flag, const char *s, int ranges, unsigned lo_min,
		      unsigned *v, unsigned cap, unsigned *n)
{
	char buf[4096], *save, *tok;
	int rc = 0;

	if (strlen(s) >= sizeof(buf) || !*s || s[strlen(s) - 1] == ',' || *s == ',' ||
	    strstr(s, ",,"))
		return bad("%s: '%s' is not a comma-separated list", flag, s);
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
		rc = parse_item(flag, tok, ranges, lo_min, v, cap, n);
	return rc;
}

static int set_placement(const char *s, struct options *o)
{
	if (!strcmp(s, "banded"))
		o->placement = NPU_PLAN_BANDED;
	else if (!strcmp(s, "scattered"))
		o->placement = NPU_PLAN_SCATTERED;
	else
		return bad("--placement: '%s' is neither banded nor scattered", s);
	return 0;
}

/*
 * Apply option @opt (spelled @flag) with its value @val (NULL for a
 * switch): 0, or EXIT_USAGE with the message printed.  No default: the
 * compiler (-Wswitch) reports a table entry without its case.
 */
static int apply(struct options *o, const struct tool_opt *opt, const char *flag,
		 const char *val)
{
	struct npu_plan_machine *m = &o->m;

	switch ((enum plan_opt_id)opt->id) {
	case OPT_JSON:
		o->json = 1;
		return 0;
	case OPT_HELP:
	case OPT_VERSION:
		break;		/* parse_args answers them */

	case OPT_CHAIN:
		o->chain = val;
		return 0;
	case OPT_CORES:
		return parse_uint(flag, val, NPU_PLAN_MAX_CORES, &m->cores);
	case OPT_MESH:
		return parse_mesh(val, m);
	case OPT_FLOPS:
		return parse_num(flag, val, 0, &m->core_flops);
	case OPT_BUFFER_KB:
		return parse_num(flag, val, 1, &m->buffer_bytes);
	case OPT_SRAM_KB:
		return parse_num(flag, val, 0, &m->sram_bytes);
	case OPT_LINK_GBPS:
		return parse_num(flag, val, 0, &m->link_bw);
	case OPT_OFFCHIP_GBPS:
		return parse_num(flag, val, 0, &m->offchip_bw);
	case OPT_PLACEMENT:
		return set_placement(val, o);
	case OPT_SEED:
		return parse_u64(val, &o->seed) ?
		       bad("--seed: '%s' is not an unsigned integer", val) : 0;
	case OPT_CORES_PER_NODE:
		return parse_uint(flag, val, NPU_PLAN_MAX_CORES_PER_NODE, &m->cores_per_node);
	case OPT_NODES:
		m->usable = o->usable;
		return parse_list(flag, val, 1, 0, o->usable, NPU_PLAN_MAX_NODES, &m->n_usable);
	case OPT_COUNTS:
		return parse_list(flag, val, 0, 1, o->counts, NPU_PLAN_MAX_LAYERS, &o->n_counts);
	}
	return bad("unknown option '%s' (see --help)", flag);
}

static void defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->m = (struct npu_plan_machine){
		.cores = 36, .mesh_w = 6, .mesh_h = 6, .cores_per_node = 1,
		.core_flops = 1e12, .buffer_bytes = 64, .sram_bytes = 512,
		.link_bw = 16, .offchip_bw = 100,
	};
	o->placement = NPU_PLAN_BANDED;
	o->seed = 1;
}

/* The command line speaks KB and GB/s; the model speaks bytes and bytes/s. */
static void to_si(struct npu_plan_machine *m)
{
	m->buffer_bytes *= KB;
	m->sram_bytes *= KB;
	m->link_bw *= GBPS;
	m->offchip_bw *= GBPS;
}

/* The options in order; -1 when all applied, else the exit status. */
static int parse_loop(struct tool_opts *p, struct options *o)
{
	const struct tool_opt *opt;
	const char *arg;
	char flag[64];

	for (;;) {
		switch (tool_opts_next(p, &opt, &arg)) {
		case TOOL_OPTS_END:
			return -1;
		case TOOL_OPTS_POSITIONAL:
			return bad("unexpected argument '%s' (see --help)", arg);
		case TOOL_OPTS_UNKNOWN:
			return bad("unknown option '%s' (see --help)", arg);
		case TOOL_OPTS_NEEDS_VALUE:
			return bad("%s needs a value", tool_opt_flag(opt, flag, sizeof(flag)));
		case TOOL_OPTS_NO_VALUE:
			return bad("%s takes no value", tool_opt_flag(opt, flag, sizeof(flag)));
		case TOOL_OPTS_OPTION:
			if (opt->id == OPT_HELP)
				return usage(stdout), 0;
			if (opt->id == OPT_VERSION)
				return print_version(), 0;
			if (apply(o, opt, tool_opt_flag(opt, flag, sizeof(flag)), arg))
				return EXIT_USAGE;
			break;
		}
	}
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct options *o)
{
	struct tool_opts p;
	int rc;

	defaults(o);
	if (tool_opts_init(&p, plan_opts, PLAN_N_OPTS, argc, argv))
		return bad("out of memory");
	rc = parse_loop(&p, o);
	tool_opts_free(&p);
	if (rc >= 0)
		return rc;
	if (!o->chain)
		return bad("--chain FILE is required (see --help)");
	to_si(&o->m);
	return -1;
}

/* ---- chain file ---- */

static int file_error(const char *path, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int file_error(const char *path, unsigned line, const char *fmt, ...)
{
	va_list ap;

	if (line)
		fprintf(stderr, "npu-plan: %s:%u: ", path, line);
	else
		fprintf(stderr, "npu-plan: %s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FILE;
}

static int field(const char *path, unsigned line, const char *what, const char *s,
		 double scale, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v < 0)
		return file_error(path, line, "%s '%s' is not a non-negative number", what, s);
	*out = v * scale;
	return 0;
}

/* Parse one non-comment line into the next layer. */
static int parse_layer(const char *path, unsigned line, char **tok, struct chain *c)
{
	struct npu_plan_layer *l = &c->layer[c->n];

	if (strlen(tok[0]) >= NPU_PLAN_NAME_MAX)
		return file_error(path, line, "layer name '%.20s...' longer than %d bytes",
				  tok[0], NPU_PLAN_NAME_MAX - 1);
	for (unsigned i = 0; i < c->n; i++)
		if (!strcmp(c->layer[i].name, tok[0]))
			return file_error(path, line, "layer '%s' defined twice", tok[0]);
	if (c->n == NPU_PLAN_MAX_LAYERS)
		return file_error(path, line, "more than %d layers", NPU_PLAN_MAX_LAYERS);
	memset(l, 0, sizeof(*l));
	strcpy(l->name, tok[0]);
	if (field(path, line, "W_MFLOP", tok[1], MFLOP, &l->flops) ||
	    field(path, line, "M_KB", tok[2], KB, &l->weight_bytes) ||
	    field(path, line, "A_KB", tok[3], KB, &l->act_bytes))
		return EXIT_FILE;
	c->n++;
	return 0;
}

static int parse_line(const char *path, unsigned line, char *text, struct chain *c)
{
	char *tok[5], *save, *hash = strchr(text, '#');
	unsigned n = 0;

	if (hash)
		*hash = '\0';
	for (char *t = strtok_r(text, " \t\r\n\v\f", &save); t;
	     t = strtok_r(NULL, " \t\r\n\v\f", &save)) {
		if (n == 5)
			break;
		tok[n++] = t;
	}
	if (n == 0)
		return 0;
	if (n != 4)
		return file_error(path, line, "expected 'name W_MFLOP M_KB A_KB', found %s%u field%s",
				  n == 5 ? "more than " : "", n == 5 ? 4 : n, n == 1 ? "" : "s");
	return parse_layer(path, line, tok, c);
}

static int read_chain(const char *path, struct chain *c)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;
	unsigned line = 0;
	int rc = 0;

	if (!f)
		return file_error(path, 0, "cannot open: %s", strerror(errno));
	c->n = 0;
	while (!rc && getline(&text, &cap, f) >= 0)
		rc = parse_line(path, ++line, text, c);
	if (!rc && ferror(f))
		rc = file_error(path, 0, "read error: %s", strerror(errno));
	else if (!rc && c->n == 0)
		rc = file_error(path, 0, "no layers (expected lines 'name W_MFLOP M_KB A_KB')");
	free(text);
	fclose(f);
	return rc;
}

/* ---- output ---- */

/* Times and loads with 10 significant digits. */
static void put_num(struct json_writer *j, const char *key, double v)
{
	json_double(j, key, v, 10);
}

static void json_binds(struct json_writer *j, unsigned binds)
{
	static const char *const names[] = { "compute", "network", "memory" };

	json_begin_array_inline(j, "binds");
	for (unsigned b = 0; b < 3; b++)
		if (binds & (1u << b))
			json_string(j, NULL, names[b]);
	json_end_array(j);
}

/* One layer per line. */
static void json_layer(struct json_writer *j, const struct npu_plan_layer *l,
		       const struct npu_plan_mapping *map, unsigned i, unsigned first,
		       const struct npu_plan_layer_eval *e)
{
	json_begin_object_inline(j, NULL);
	json_string(j, "name", l->name);
	json_u64(j, "cores", map->cores[i]);
	json_begin_array(j, "nodes");
	for (unsigned k = 0; k < map->cores[i]; k++)
		json_u64(j, NULL, map->node[first + k]);
	json_end_array(j);
	put_num(j, "t_comp_us", e->t_comp * US);
	put_num(j, "t_mem_us", e->t_mem * US);
	put_num(j, "t_net_us", e->t_net * US);
	json_end_object(j);
}

static void json_xy(struct json_writer *j, const char *key, unsigned x, unsigned y)
{
	json_begin_array_inline(j, key);
	json_u64(j, NULL, x);
	json_u64(j, NULL, y);
	json_end_array(j);
}

static void json_hot_link(struct json_writer *j, const struct npu_plan_machine *m,
			  const struct npu_plan_eval *e)
{
	unsigned from, to;

	if (e->hot_bytes <= 0 || !npu_plan_link_ends(m, e->hot_link, &from, &to)) {
		json_null(j, "hottest_link");
		return;
	}
	json_begin_object_inline(j, "hottest_link");
	json_u64(j, "from", from);
	json_u64(j, "to", to);
	json_xy(j, "from_xy", from % m->mesh_w, from / m->mesh_w);
	json_xy(j, "to_xy", to % m->mesh_w, to / m->mesh_w);
	json_string(j, "dir", npu_plan_dir_name(e->hot_link % NPU_HW_LINK_DIRS));
	put_num(j, "load_bytes", e->hot_bytes);
	put_num(j, "load_kb", e->hot_bytes / KB);
	json_end_object(j);
}

static int all_fit(const struct npu_plan_eval *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (e->layer[i].t_mem > 0)
			return 0;
	return 1;
}

/* Layer names are bytes from the chain file: the writer keeps valid
 * UTF-8 and replaces invalid bytes with U+FFFD, so the output is JSON. */
static void print_json(const struct options *o, const struct chain *c,
		       const struct npu_plan_mapping *map, const struct npu_plan_eval *e)
{
	const struct npu_plan_machine *m = &o->m;
	struct json_writer j;
	unsigned first = 0;

	json_init(&j, stdout, JSON_PRETTY);
	json_begin_object(&j, NULL);
	json_string(&j, "placement", o->placement == NPU_PLAN_BANDED ? "banded" : "scattered");
	if (o->placement == NPU_PLAN_SCATTERED)
		json_u64(&j, "seed", o->seed);
	json_u64(&j, "cores", m->cores);
	json_xy(&j, "mesh", m->mesh_w, m->mesh_h);
	json_u64(&j, "cores_per_node", m->cores_per_node ? m->cores_per_node : 1);
	json_bool(&j, "fits_sram", all_fit(e, c->n));
	json_begin_array(&j, "layers");
	for (unsigned i = 0; i < c->n; i++) {
		json_layer(&j, &c->layer[i], map, i, first, &e->layer[i]);
		first += map->cores[i];
	}
	json_end_array(&j);
	json_begin_object(&j, "totals");
	put_num(&j, "t_comp_us", e->t_comp * US);
	put_num(&j, "t_net_us", e->t_net * US);
	put_num(&j, "t_mem_us", e->t_mem * US);
	put_num(&j, "t_us", e->t_total * US);
	put_num(&j, "throughput", e->throughput);	/* inf (T = 0): null */
	put_num(&j, "byte_hops", e->byte_hops);
	json_hot_link(&j, m, e);
	json_binds(&j, e->binds);
	json_end_object(&j);
	json_end_object(&j);
}

static void print_binds(unsigned binds)
{
	static const char *const names[] = { "compute", "network", "memory" };
	int first = 1;

	for (unsigned b = 0; b < 3; b++)
		if (binds & (1u << b)) {
			printf("%s%s", first ? "" : "+", names[b]);
			first = 0;
		}
	if (first)
		printf("nothing");
}

static void print_hot_link(const struct npu_plan_machine *m, const struct npu_plan_eval *e)
{
	unsigned from, to;

	if (e->hot_bytes <= 0 || !npu_plan_link_ends(m, e->hot_link, &from, &to)) {
		printf("no mesh traffic\n");
		return;
	}
	printf("hottest link node %u (%u,%u) -> node %u (%u,%u) %s: %.2f KB per input\n",
	       from, from % m->mesh_w, from / m->mesh_w, to, to % m->mesh_w, to / m->mesh_w,
	       npu_plan_dir_name(e->hot_link % NPU_HW_LINK_DIRS), e->hot_bytes / KB);
}

static void print_table(const struct options *o, const struct chain *c,
			const struct npu_plan_mapping *map, const struct npu_plan_eval *e)
{
	unsigned used = 0;

	printf("%u layers on a %ux%u mesh, %s placement", c->n, o->m.mesh_w, o->m.mesh_h,
	       o->placement == NPU_PLAN_BANDED ? "banded" : "scattered");
	if (o->placement == NPU_PLAN_SCATTERED)
		printf(" (seed %" PRIu64 ")", o->seed);
	printf("\n%-20s %6s %11s %11s %11s\n", "layer", "cores", "t_comp_us", "t_mem_us",
	       "t_net_us");
	for (unsigned i = 0; i < c->n; i++) {
		const struct npu_plan_layer_eval *l = &e->layer[i];

		printf("%-20s %6u %11.3f %11.3f %11.3f\n", c->layer[i].name, map->cores[i],
		       l->t_comp * US, l->t_mem * US, l->t_net * US);
		used += map->cores[i];
	}
	printf("%-20s %6u %11.3f %11.3f %11.3f\n", "total", used, e->t_comp * US,
	       e->t_mem * US, e->t_net * US);
	if (isfinite(e->throughput))
		printf("throughput %.0f inferences/s (T = %.3f us), bound by ", e->throughput,
		       e->t_total * US);
	else
		printf("throughput unbounded (T = 0), bound by ");
	print_binds(e->binds);
	printf("\nbyte-hops %.3f MB x hop per input; ", e->byte_hops / 1e6);
	print_hot_link(&o->m, e);
	if (!all_fit(e, c->n))
		printf("weights do not fit in SRAM: T_mem charges the spill\n");
}

/* ---- main ---- */

static int plan(const struct options *o, const struct chain *c)
{
	static struct npu_plan_mapping map;
	static struct npu_plan_eval e;
	unsigned counts[NPU_PLAN_MAX_LAYERS];
	npu_status s;

	if (o->n_counts && o->n_counts != c->n)
		return bad("--counts has %u entries but %s has %u layers", o->n_counts, o->chain,
			   c->n);
	if (o->n_counts) {
		memcpy(counts, o->counts, c->n * sizeof(*counts));
		s = npu_plan_check(c->layer, c->n, &o->m);
	} else {
		s = npu_plan_choose_cores(c->layer, c->n, &o->m, counts, NULL);
	}
	if (s == NPU_OK)
		s = npu_plan_place(counts, c->n, &o->m, o->placement, o->seed, &map);
	if (s == NPU_OK)
		s = npu_plan_evaluate(c->layer, c->n, &o->m, &map, &e);
	if (s != NPU_OK)
		return bad("%s", npu_last_error());
	if (o->json)
		print_json(o, c, &map, &e);
	else
		print_table(o, c, &map, &e);
	return fflush(stdout) ? EXIT_FILE : 0;
}

int main(int argc, char **argv)
{
	static struct options o;
	static struct chain c;
	int rc = parse_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	rc = read_chain(o.chain, &c);
	return rc ? rc : plan(&o, &c);
}
