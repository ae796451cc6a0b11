// SPDX-License-Identifier: MIT
/*
 * Class labels from a text file, one per line (npu_post.h).
 *
 * The file is read into one buffer whose line ends become NULs; the
 * handle keeps that buffer and a table of pointers into it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_post.h"

struct npu_labels {
	char *text;		/* the file, line ends replaced by NUL */
	const char **lines;	/* count pointers into text */
	size_t count;
};

/* Read all of @f into a NUL-terminated heap buffer. */
static npu_status read_all(FILE *f, const char *path, char **text, size_t *len)
{
	size_t cap = 4096, used = 0;
	char *buf = malloc(cap);

	if (!buf)
		return npu_fail(NPU_ERR_NO_MEMORY, "labels file %s: out of memory", path);
	for (;;) {
		size_t got;

		if (cap - used < 2) {
			char *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);

			if (!bigger) {
				free(buf);
				return npu_fail(NPU_ERR_NO_MEMORY,
						"labels file %s: out of memory", path);
			}
			buf = bigger;
			cap *= 2;
		}
		got = fread(buf + used, 1, cap - used - 1, f);
		used += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int err = errno;

		free(buf);
		return npu_fail(NPU_ERR_IO, "cannot read labels file %s: %s", path,
				strerror(err ? err : EIO));
	}
	buf[used] = '\0';
	*text = buf;
	*len = used;
	return NPU_OK;
}

npu_status npu_labels_load(const char *path, npu_labels **out)
{
	npu_labels *l;
	FILE *f;
	char *text = NULL, *p, *end;
	size_t len = 0, lines = 0;
	npu_status st;

	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_labels_load: out is NULL");
	*out = NULL;
	if (!path)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_labels_load: path is NULL");
	f = fopen(path, "rb");
	if (!f)
		return npu_fail(NPU_ERR_IO, "cannot open labels file %s: %s", path,
				strerror(errno));
	st = read_all(f, path, &text, &len);
	fclose(f);
	if (st != NPU_OK)
		return st;

	/* Skip a UTF-8 byte order mark. */
	p = text;
	if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	end = text + len;

	/* One label per line; a last line without '\n' still counts. */
	for (const char *q = p; q < end; q++)
		lines += *q == '\n';
	if (end > p && end[-1] != '\n')
		lines++;

	l = calloc(1, sizeof(*l));
	if (l)
		l->lines = calloc(lines ? lines : 1, sizeof(*l->lines));
	if (!l || !l->lines) {
		free(l);
		free(text);
		return npu_fail(NPU_ERR_NO_MEMORY, "labels file %s: out of memory", path);
	}
	l->text = text;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *stop = nl ? nl : end;

		if (stop > p && stop[-1] == '\r')
			stop[-1] = '\0';
		*stop = '\0';	/* end == text + len holds the final NUL */
		l->lines[l->count++] = p;
		p = stop + 1;
	}
	*out = l;
	return NPU_OK;
}

void npu_labels_free(npu_labels *labels)
{
	if (!labels)
		return;
	free(labels->lines);
	free(labels->text);
	free(labels);
}

size_t npu_labels_count(const npu_labels *labels)
{
	return labels ? labels->count : 0;
}

const char *npu_labels_get(const npu_labels *labels, size_t index)
{
	if (!labels || index >= labels->count)
		return NULL;
	return labels->lines[index];
}
