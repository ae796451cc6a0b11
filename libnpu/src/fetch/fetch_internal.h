/* SPDX-License-Identifier: MIT */
/*
 * Internals of npu_fetch(): the HTTP(S) transfer, kept apart from the
 * cache logic so the latter does not see libcurl.
 */
#ifndef NPU_FETCH_INTERNAL_H
#define NPU_FETCH_INTERNAL_H

#include <stdint.h>

#include "npu_fetch.h"
#include "sha256.h"

/*
 * Download @url (http or https) into @fd, an empty file opened for
 * writing (@fd_path names it in messages), obeying @o's timeouts and
 * progress callback.  On NPU_OK, @digest is the sha256 of the bytes
 * written and *@size their count.  On failure npu_fail() has been called;
 * the file holds a partial body and is the caller's to delete.
 */
npu_status npu_fetch_http(const char *url, const npu_fetch_options *o, int fd,
			  const char *fd_path, uint8_t digest[NPU_SHA256_SIZE],
			  uint64_t *size);

#endif /* NPU_FETCH_INTERNAL_H */
