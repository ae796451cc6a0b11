// SPDX-License-Identifier: MIT
/*
 * npu_model_load_url: fetching, then loading.  Kept apart from model.c so
 * programs that never download (static guest tests) do not pull libcurl.
 */
#include <stdio.h>

#include "model/npu_model_priv.h"

npu_status npu_model_load_url(const char *url, const npu_fetch_options *fetch,
			      npu_device *dev, const npu_compile_options *opts,
			      npu_model **out)
{
	void *data = NULL;
	size_t size = 0;
	npu_status st;

	if (out)
		*out = NULL;
	if (!url || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_model_load_url: NULL argument");
	st = npu_fetch(url, fetch, &data, &size);
	if (st)
		return st;
	st = npu_model_load_memory(data, size, dev, opts, out);
	npu_free(data);
	if (st) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", npu_last_error());
		npu_fail(st, "%s: %s", url, msg);
	}
	return st;
}
