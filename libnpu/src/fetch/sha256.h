/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4), used to name cache entries and check downloads.
 * Internal to libnpu: not exported from libnpu.so.
 */
#ifndef NPU_SHA256_H
#define NPU_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define NPU_SHA256_SIZE 32		/* digest bytes */
#define NPU_SHA256_HEX_SIZE 65		/* hex digits + NUL */

typedef struct npu_sha256_ctx {
	uint32_t h[8];
	uint64_t bytes;			/* message length so far */
	uint8_t buf[64];		/* partial block */
	size_t fill;			/* bytes in buf */
} npu_sha256_ctx;

void npu_sha256_init(npu_sha256_ctx *c);
void npu_sha256_update(npu_sha256_ctx *c, const void *data, size_t n);
/* Writes the digest; @c must be initialised again before reuse. */
void npu_sha256_final(npu_sha256_ctx *c, uint8_t out[NPU_SHA256_SIZE]);

/* One-shot digest of @n bytes. */
void npu_sha256(const void *data, size_t n, uint8_t out[NPU_SHA256_SIZE]);
/* Lowercase hex of a digest, NUL terminated. */
void npu_sha256_hex(const uint8_t digest[NPU_SHA256_SIZE], char out[NPU_SHA256_HEX_SIZE]);

#endif /* NPU_SHA256_H */
