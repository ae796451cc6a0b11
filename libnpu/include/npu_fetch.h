/* SPDX-License-Identifier: MIT */
/*
 * libnpu: fetching model files by URL, with a local cache.
 *
 * URLs: http://, https:// (downloaded with libcurl, redirects followed,
 * only to http and https) and file:// (file:///abs/path or
 * file://localhost/abs/path, %XX escapes decoded; read in place, never
 * cached).  Any other scheme is NPU_ERR_INVALID_ARG.
 *
 * The cache: one directory (see npu_fetch_options.cache_dir) holding, per
 * URL, a data file named by the lowercase hex sha256 of the URL string and
 * a text sidecar "<name>.meta" (URL, sha256 and size of the content).
 * Downloads go to a temporary file in that directory and are renamed into
 * place only once complete and checked, so a reader never sees a partial
 * file, and several threads or processes may share one cache.  Entries
 * are never evicted: delete files by hand to reclaim space.
 *
 * Errors (npu_last_error() has the details):
 *   NPU_ERR_INVALID_ARG  bad URL, unsupported scheme, malformed sha256,
 *                        bad options
 *   NPU_ERR_NETWORK      DNS, connection or TLS failure (curl's message),
 *                        or an HTTP status >= 400 (the status and the URL)
 *   NPU_ERR_TIMEOUT      connect_timeout_ms or timeout_ms ran out
 *   NPU_ERR_CHECKSUM     the content does not match opts->sha256 (the
 *                        message shows both); a bad download is deleted
 *                        and no cache entry is left for the URL (a
 *                        file:// file is left alone)
 *   NPU_ERR_NOT_FOUND    offline and the URL is not in the cache (or the
 *                        cached copy does not match opts->sha256); a
 *                        file:// URL naming no file
 *   NPU_ERR_IO           cache directory or file errors; also a download
 *                        cancelled by the progress callback (the message
 *                        says "cancelled")
 *   NPU_ERR_NO_MEMORY    out of memory
 *
 * Thread safety: the functions may be called from any number of threads
 * at once.  libcurl is initialised once, on first use, with
 * curl_global_init(CURL_GLOBAL_DEFAULT); a program that uses libcurl
 * itself should call curl_global_init() before starting threads, as
 * libcurl asks.
 */
#ifndef NPU_FETCH_H
#define NPU_FETCH_H

#include "npu.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Progress of a download: @received bytes of the body so far, @total the
 * expected size from Content-Length, or 0 if unknown.  Called from the
 * fetching thread, only while a download is under way (not for cache hits
 * or file:// URLs): as data arrives, and about once a second while none
 * does, so @received never decreases and may repeat.  Return non-zero to
 * cancel: the call then fails with NPU_ERR_IO ("cancelled") and nothing is
 * cached.
 */
typedef int (*npu_fetch_progress_fn)(void *user, uint64_t received, uint64_t total);

typedef struct npu_fetch_options {
	size_t struct_size;		/* sizeof(npu_fetch_options) */
	/*
	 * Cache directory, created if missing.  NULL or "": $NPU_CACHE_DIR if set
	 * and not empty, else $XDG_CACHE_HOME/npu/models if that is an
	 * absolute path, else $HOME/.cache/npu/models.
	 */
	const char *cache_dir;
	/* Expected sha256 of the content, 64 hex digits (either case), or
	 * NULL to accept any content. */
	const char *sha256;
	npu_fetch_progress_fn progress;	/* NULL: none */
	void *progress_user;		/* passed to progress as @user */
	/* Limit on resolving and connecting, in ms; 0: no limit of our own
	 * (libcurl's default, 300 s, applies).  Default 30000. */
	uint32_t connect_timeout_ms;
	/* Limit on the whole download, in ms; 0 (the default): none. */
	uint32_t timeout_ms;
	/* Non-zero: ignore any cached copy and download again; the new
	 * content replaces the cache entry. */
	int no_cache;
	/* Non-zero: never use the network, only the cache (file:// URLs
	 * still work).  Cannot be combined with no_cache. */
	int offline;
} npu_fetch_options;

/* Fills @opts with the defaults above and sets struct_size. */
NPU_API void npu_fetch_options_init(npu_fetch_options *opts);

/*
 * Fetch @url into memory: from the cache if it holds the URL (and, when
 * opts->sha256 is set, the cached content matches it), else from the
 * network, then stored in the cache.  @opts NULL: the defaults.  On
 * success *@data holds *@size bytes, to be freed with npu_free(); on
 * failure *@data is NULL and *@size 0.
 */
NPU_API npu_status npu_fetch(const char *url, const npu_fetch_options *opts,
			     void **data, size_t *size);

/*
 * Like npu_fetch(), but leaves the content in the cache and writes that
 * file's path (NUL terminated) to @path, which holds @path_len bytes; for a
 * file:// URL the path is the local file's.  The cached file may be
 * replaced by a later download of the same URL (by rename, so an open
 * descriptor keeps seeing the old content).  A path longer than @path_len
 * is NPU_ERR_INVALID_ARG.  On failure @path is "" (if @path_len > 0).
 */
NPU_API npu_status npu_fetch_path(const char *url, const npu_fetch_options *opts,
				  char *path, size_t path_len);

/* Frees memory that libnpu returned to the caller (npu_fetch()'s data).
 * NULL is ignored. */
NPU_API void npu_free(void *p);

/*
 * Load a model from @url (http, https or file): npu_fetch() with @fetch
 * (NULL: defaults), then npu_model_load_memory() with @dev and @opts.
 */
NPU_API npu_status npu_model_load_url(const char *url, const npu_fetch_options *fetch,
				      npu_device *dev, const npu_compile_options *opts,
				      npu_model **out);

#ifdef __cplusplus
}
#endif

#endif /* NPU_FETCH_H */
