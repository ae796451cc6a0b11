// SPDX-License-Identifier: MIT
/*
 * NPU_DEBUG: which compiler passes print what they did (npu_debug.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "npu_debug.h"
#include "npu_internal.h"

static const struct {
	const char *name;
	unsigned bit;
} topics[] = {
	{ "ir", NPU_DEBUG_IR },
	{ "rewrites", NPU_DEBUG_REWRITES },
	{ "fuse", NPU_DEBUG_FUSE },
	{ "tiles", NPU_DEBUG_TILES },
	{ "mem", NPU_DEBUG_MEM },
};

static unsigned debug_topics;
static pthread_once_t debug_once = PTHREAD_ONCE_INIT;

unsigned npu_debug_parse(const char *spec, FILE *warn)
{
	unsigned bits = 0;
	const char *p = spec;

	while (p && *p) {
		size_t len = strcspn(p, ",");
		bool found = false;

		if (len == 3 && !strncmp(p, "all", 3)) {
			for (size_t i = 0; i < NPU_ARRAY_SIZE(topics); i++)
				bits |= topics[i].bit;
			found = true;
		}
		for (size_t i = 0; i < NPU_ARRAY_SIZE(topics) && !found; i++) {
			if (strlen(topics[i].name) == len && !strncmp(p, topics[i].name, len)) {
				bits |= topics[i].bit;
				found = true;
			}
		}
		if (!found && len && warn)
			fprintf(warn, "npu: NPU_DEBUG: unknown topic '%.*s' (ignored); "
				"topics are ir, rewrites, fuse, tiles, mem or all, comma-separated\n",
				(int)len, p);
		p += len;
		if (*p == ',')
			p++;
	}
	return bits;
}

static void read_env(void)
{
	debug_topics = npu_debug_parse(getenv("NPU_DEBUG"), stderr);
}

unsigned npu_debug_topics(void)
{
	pthread_once(&debug_once, read_env);
	return debug_topics;
}

static const char *topic_name(enum npu_debug_topic t)
{
	for (size_t i = 0; i < NPU_ARRAY_SIZE(topics); i++)
		if (topics[i].bit == (unsigned)t)
			return topics[i].name;
	return "debug";
}

void npu_debug(enum npu_debug_topic t, const char *fmt, ...)
{
	va_list ap;

	if (!npu_debug_on(t))
		return;
	flockfile(stderr);
	fprintf(stderr, "npu %s: ", topic_name(t));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
