// SPDX-License-Identifier: MIT
/*
 * The guest's static npu-run has no libcurl (Debian has no static curl
 * with its TLS stack): this stands in for libnpu's HTTP transport, so
 * file:// URLs and the cache still work and http(s) fails by name.
 */
#include "fetch/fetch_internal.h"
#include "npu_internal.h"

npu_status npu_fetch_http(const char *url, const npu_fetch_options *o, int fd,
			  const char *fd_path, uint8_t digest[NPU_SHA256_SIZE],
			  uint64_t *size)
{
	(void)o;
	(void)fd;
	(void)fd_path;
	(void)digest;
	*size = 0;
	return npu_fail(NPU_ERR_UNSUPPORTED,
			"%s: this build of libnpu has no HTTP support (a static guest binary); use a file:// URL or a path",
			url);
}
