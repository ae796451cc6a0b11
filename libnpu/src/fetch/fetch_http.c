// SPDX-License-Identifier: MIT
/*
 * HTTP(S) downloads with libcurl: one easy handle per call, so calls on
 * different threads share nothing but libcurl's global state, which is
 * set up once under pthread_once.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "fetch_internal.h"
#include "npu_internal.h"

#define NPU_STR_(x) #x
#define NPU_STR(x) NPU_STR_(x)
#define NPU_FETCH_USER_AGENT "libnpu/" NPU_STR(NPU_VERSION_MAJOR) "." \
	NPU_STR(NPU_VERSION_MINOR) "." NPU_STR(NPU_VERSION_PATCH)

#define MAX_REDIRECTS 10L

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct download {
	int fd;
	npu_sha256_ctx sha;
	uint64_t received;
	int write_errno;		/* set when writing the file failed */
	int cancelled;			/* set when the progress callback said so */
	npu_status hash_status;		/* set when hashing the body failed */
	npu_fetch_progress_fn progress;
	void *user;
};

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct download *d = arg;
	size_t n = size * nmemb, done = 0;

	while (done < n) {
		ssize_t w = write(d->fd, ptr + done, n - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			d->write_errno = errno;
			return 0;	/* makes curl fail with CURLE_WRITE_ERROR */
		}
		done += (size_t)w;
	}
	/* npu_fail() has run in this thread: transfer_error() keeps its message. */
	d->hash_status = npu_sha256_update(&d->sha, ptr, n);
	if (d->hash_status != NPU_OK)
		return 0;
	d->received += n;
	return n;
}

/*
 * libcurl calls this as data arrives and about once a second while idle.
 * @received comes from on_write, not @dlnow, so it counts only the bytes
 * of the body we keep and never goes back (dlnow restarts per redirect).
 */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct download *d = arg;
	uint64_t total = dltotal > 0 ? (uint64_t)dltotal : 0;

	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (d->progress(d->user, d->received, total)) {
		d->cancelled = 1;
		return 1;
	}
	return 0;
}

static npu_status set_options(CURL *h, const char *url, const npu_fetch_options *o,
			      struct download *d, char *errbuf)
{
	CURLcode rc = CURLE_OK;

#define SET(opt, val) do { if (rc == CURLE_OK) rc = curl_easy_setopt(h, opt, val); } while (0)
	SET(CURLOPT_ERRORBUFFER, errbuf);
	SET(CURLOPT_URL, url);
	/* No signals: timeouts must not use SIGALRM in a threaded program. */
	SET(CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500	/* 7.85.0 */
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	SET(CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	SET(CURLOPT_FOLLOWLOCATION, 1L);
	SET(CURLOPT_MAXREDIRS, MAX_REDIRECTS);
	/* Status >= 400: stop at once, write no body. */
	SET(CURLOPT_FAILONERROR, 1L);
	SET(CURLOPT_USERAGENT, NPU_FETCH_USER_AGENT);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_timeout_ms);
	SET(CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, d);
	if (o->progress) {
		SET(CURLOPT_XFERINFOFUNCTION, on_progress);
		SET(CURLOPT_XFERINFODATA, d);
		SET(CURLOPT_NOPROGRESS, 0L);
	}
#undef SET
	if (rc == CURLE_OUT_OF_MEMORY)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory setting up the download of %s", url);
	if (rc != CURLE_OK)
		return npu_fail(NPU_ERR_INTERNAL, "libcurl rejected an option for %s: %s",
				url, curl_easy_strerror(rc));
	return NPU_OK;
}

/* Turns a failed transfer into a status and a message. */
static npu_status transfer_error(CURL *h, CURLcode rc, const char *url,
				 const struct download *d, const char *fd_path,
				 const char *errbuf)
{
	const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
	char *where = NULL;
	long status = 0;

	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return npu_fail(NPU_ERR_TIMEOUT,
				"download of %s timed out: %s; raise npu_fetch_options.timeout_ms or connect_timeout_ms, or check the network",
				url, why);
	case CURLE_ABORTED_BY_CALLBACK:
		if (d->cancelled)
			return npu_fail(NPU_ERR_IO,
					"download of %s cancelled by the progress callback after %llu bytes",
					url, (unsigned long long)d->received);
		break;
	case CURLE_WRITE_ERROR:
		if (d->hash_status != NPU_OK)
			return d->hash_status;
		if (d->write_errno)
			return npu_fail(NPU_ERR_IO, "cannot write the download of %s to %s: %s",
					url, fd_path, strerror(d->write_errno));
		break;
	case CURLE_HTTP_RETURNED_ERROR:
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &where);
		if (where && strcmp(where, url) != 0)
			return npu_fail(NPU_ERR_NETWORK,
					"HTTP status %ld from %s (redirected from %s): check the URL",
					status, where, url);
		return npu_fail(NPU_ERR_NETWORK, "HTTP status %ld from %s: check the URL",
				status, url);
	case CURLE_URL_MALFORMAT:
		return npu_fail(NPU_ERR_INVALID_ARG, "malformed URL %s: %s", url, why);
	case CURLE_OUT_OF_MEMORY:
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory downloading %s", url);
	default:
		break;
	}
	return npu_fail(NPU_ERR_NETWORK, "cannot download %s: %s", url, why);
}

/* A transfer that worked but did not end in a 2xx (a 3xx without a
 * Location, say) delivered no file. */
static npu_status check_status(CURL *h, const char *url)
{
	long status = 0;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299)
		return npu_fail(NPU_ERR_NETWORK,
				"HTTP status %ld from %s, not a file: check the URL", status, url);
	return NPU_OK;
}

npu_status npu_fetch_http(const char *url, const npu_fetch_options *o, int fd,
			  const char *fd_path, uint8_t digest[NPU_SHA256_SIZE],
			  uint64_t *size)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct download d = {
		.fd = fd,
		.progress = o->progress,
		.user = o->progress_user,
	};
	npu_status st;
	CURLcode rc;
	CURL *h;

	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc != CURLE_OK)
		return npu_fail(NPU_ERR_NETWORK, "cannot initialise libcurl: %s",
				curl_easy_strerror(curl_init_rc));
	h = curl_easy_init();
	if (!h)
		return npu_fail(NPU_ERR_NO_MEMORY, "cannot create a libcurl handle for %s", url);
	st = npu_sha256_init(&d.sha);
	if (st != NPU_OK) {
		curl_easy_cleanup(h);
		return st;
	}
	st = set_options(h, url, o, &d, errbuf);
	if (st == NPU_OK) {
		rc = curl_easy_perform(h);
		if (rc != CURLE_OK)
			st = transfer_error(h, rc, url, &d, fd_path, errbuf);
		else
			st = check_status(h, url);
	}
	curl_easy_cleanup(h);
	if (st != NPU_OK) {
		npu_sha256_free(&d.sha);
		return st;
	}
	st = npu_sha256_final(&d.sha, digest);
	if (st == NPU_OK)
		*size = d.received;
	return st;
}
