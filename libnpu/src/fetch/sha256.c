// SPDX-License-Identifier: MIT
/*
 * SHA-256 through OpenSSL's EVP interface.  libcurl on Debian is built
 * against OpenSSL (libcurl4-openssl-dev), so libcrypto is already in every
 * process that downloads; using its digest instead of our own removes code
 * we would otherwise have to keep correct and fast (OpenSSL picks the
 * SHA-NI / AVX2 implementation the CPU has).
 *
 * EVP can fail: allocating the context, or fetching the algorithm from the
 * providers OpenSSL's configuration enables (OPENSSL_CONF).  Each failure
 * becomes a libnpu status with OpenSSL's own reason appended.
 */
#include <openssl/err.h>
#include <openssl/evp.h>

#include "npu_internal.h"
#include "sha256.h"

/* npu_fail() with OpenSSL's oldest queued reason and what to do, then the
 * queue cleared so that it does not leak into a later, unrelated failure. */
static npu_status evp_fail(npu_status s, const char *what, const char *todo)
{
	char reason[256] = "no reason given";
	unsigned long e = ERR_get_error();

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	return npu_fail(s, "%s: OpenSSL says: %s; %s", what, reason, todo);
}

#define REPORT "please report it with OpenSSL's version (openssl version)"

npu_status npu_sha256_init(npu_sha256_ctx *c)
{
	c->evp = EVP_MD_CTX_new();
	if (!c->evp)
		return evp_fail(NPU_ERR_NO_MEMORY, "cannot allocate an OpenSSL digest context for SHA-256",
				"free some memory and retry");
	if (EVP_DigestInit_ex(c->evp, EVP_sha256(), NULL) != 1) {
		npu_sha256_free(c);
		return evp_fail(NPU_ERR_UNSUPPORTED, "OpenSSL has no usable SHA-256",
				"check that OpenSSL's configuration ($OPENSSL_CONF, else its openssl.cnf) activates a provider with it, such as 'default'");
	}
	return NPU_OK;
}

npu_status npu_sha256_update(npu_sha256_ctx *c, const void *data, size_t n)
{
	if (!c->evp)
		return npu_fail(NPU_ERR_INTERNAL, "SHA-256 update on a context not initialised");
	if (n && EVP_DigestUpdate(c->evp, data, n) != 1)
		return evp_fail(NPU_ERR_INTERNAL, "OpenSSL's SHA-256 update failed", REPORT);
	return NPU_OK;
}

npu_status npu_sha256_final(npu_sha256_ctx *c, uint8_t out[NPU_SHA256_SIZE])
{
	unsigned int len = 0;
	npu_status s = NPU_OK;

	if (!c->evp)
		return npu_fail(NPU_ERR_INTERNAL, "SHA-256 final on a context not initialised");
	if (EVP_DigestFinal_ex(c->evp, out, &len) != 1)
		s = evp_fail(NPU_ERR_INTERNAL, "OpenSSL's SHA-256 final step failed", REPORT);
	else if (len != NPU_SHA256_SIZE)
		s = npu_fail(NPU_ERR_INTERNAL, "OpenSSL's SHA-256 gave %u bytes, not %d", len,
			     NPU_SHA256_SIZE);
	npu_sha256_free(c);
	return s;
}

void npu_sha256_free(npu_sha256_ctx *c)
{
	EVP_MD_CTX_free(c->evp);	/* NULL is a no-op */
	c->evp = NULL;
}

npu_status npu_sha256(const void *data, size_t n, uint8_t out[NPU_SHA256_SIZE])
{
	npu_sha256_ctx c;
	npu_status s = npu_sha256_init(&c);

	if (s == NPU_OK)
		s = npu_sha256_update(&c, data, n);
	if (s == NPU_OK)
		return npu_sha256_final(&c, out);
	npu_sha256_free(&c);
	return s;
}

void npu_sha256_hex(const uint8_t digest[NPU_SHA256_SIZE], char out[NPU_SHA256_HEX_SIZE])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < NPU_SHA256_SIZE; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[2 * NPU_SHA256_SIZE] = '\0';
}
