/* SPDX-License-Identifier: MIT */
/*
 * SHA-256, used to name cache entries and check downloads: OpenSSL's EVP
 * (libcrypto), the TLS library libcurl is built against, rather than a
 * hand-written one.  Internal to libnpu: not exported from libnpu.so.
 *
 * Every call that can fail returns a status and has called npu_fail()
 * (EVP allocates a context and may, in principle, refuse the digest).
 * A context owns an EVP_MD_CTX from npu_sha256_init() until
 * npu_sha256_final() or npu_sha256_free(), whichever comes first; both
 * may be called on any path, any number of times (the second is a no-op).
 */
#ifndef NPU_SHA256_H
#define NPU_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "npu.h"

#define NPU_SHA256_SIZE 32		/* digest bytes */
#define NPU_SHA256_HEX_SIZE 65		/* hex digits + NUL */

/* OpenSSL's EVP_MD_CTX (<openssl/types.h>), named here so that users of
 * this header need not see OpenSSL's. */
struct evp_md_ctx_st;

typedef struct npu_sha256_ctx {
	struct evp_md_ctx_st *evp;	/* NULL when not initialised or freed */
} npu_sha256_ctx;

npu_status npu_sha256_init(npu_sha256_ctx *c);
npu_status npu_sha256_update(npu_sha256_ctx *c, const void *data, size_t n);
/* Writes the digest and frees the context, also when it fails; @c must be
 * initialised again before reuse. */
npu_status npu_sha256_final(npu_sha256_ctx *c, uint8_t out[NPU_SHA256_SIZE]);
/* Frees the context of a digest abandoned before npu_sha256_final(). */
void npu_sha256_free(npu_sha256_ctx *c);

/* One-shot digest of @n bytes. */
npu_status npu_sha256(const void *data, size_t n, uint8_t out[NPU_SHA256_SIZE]);
/* Lowercase hex of a digest, NUL terminated. */
void npu_sha256_hex(const uint8_t digest[NPU_SHA256_SIZE], char out[NPU_SHA256_HEX_SIZE]);

#endif /* NPU_SHA256_H */
