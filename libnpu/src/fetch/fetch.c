// SPDX-License-Identifier: MIT
/*
 * npu_fetch(): URLs to bytes or to a local path, through the on-disk
 * cache described in npu_fetch.h.  The network part is fetch_http.c.
 *
 * Cache entry for URL u in directory D, k = hex sha256(u):
 *   D/k                the content
 *   D/k.meta           "npu-fetch-cache 1\nurl u\nsha256 <hex>\nsize <n>\n"
 *   D/k.tmp.XXXXXX     a download under way (or left by a crash)
 * A download is written to a temporary file, checked, fsync'ed, renamed to
 * D/k, and then D/k.meta is written the same way.  A lookup trusts an
 * entry only if the sidecar names the same URL and the file has the
 * recorded size; when the caller gives a sha256, the content is hashed
 * as well.  A reader racing a writer may see the new content with the
 * old sidecar: the size (or hash) check then makes it a miss, never a
 * wrong answer when a sha256 is given.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch_internal.h"
#include "npu_internal.h"

#define FETCH_PATH_MAX PATH_MAX
#define DEFAULT_CONNECT_TIMEOUT_MS 30000
#define META_MAGIC "npu-fetch-cache 1"
#define META_MAX 65536			/* a sidecar larger than this is corrupt */
#define HASH_CHUNK (1 << 20)		/* read size when only hashing a file */
/* The first npu_fetch_options ended with offline; a smaller struct_size
 * means the caller did not initialise the struct. */
#define OPTIONS_V1_SIZE (offsetof(npu_fetch_options, offline) + sizeof(int))

enum scheme { SCHEME_HTTP, SCHEME_FILE };

struct request {
	const char *url;
	npu_fetch_options o;
	enum scheme scheme;
	int check;				/* o.sha256 given */
	char want[NPU_SHA256_HEX_SIZE];		/* o.sha256, lowercase */
	char dir[FETCH_PATH_MAX];		/* cache directory */
	char data_path[FETCH_PATH_MAX];		/* D/k, or a file:// URL's path */
	char meta_path[FETCH_PATH_MAX];		/* D/k.meta */
	char why[2 * FETCH_PATH_MAX + 256];	/* why the cache missed */
};

void npu_free(void *p)
{
	free(p);
}

void npu_fetch_options_init(npu_fetch_options *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->struct_size = sizeof(*opts);
	opts->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
}

/* ---- Arguments ---- */

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static npu_status parse_scheme(const char *url, enum scheme *out)
{
	size_t n = 0;

	if (isalpha((unsigned char)url[0])) {
		n = 1;
		while (isalnum((unsigned char)url[n]) || url[n] == '+' ||
		       url[n] == '-' || url[n] == '.')
			n++;
	}
	if (n == 0 || url[n] != ':') {
		if (url[0] == '/')
			return npu_fail(NPU_ERR_INVALID_ARG,
					"'%s' is not a URL: for a local file use file://%s", url, url);
		return npu_fail(NPU_ERR_INVALID_ARG,
				"'%s' is not a URL: expected http://, https:// or file://", url);
	}
	if ((n == 4 && !strncasecmp(url, "http", 4)) || (n == 5 && !strncasecmp(url, "https", 5))) {
		*out = SCHEME_HTTP;
		return NPU_OK;
	}
	if (n == 4 && !strncasecmp(url, "file", 4)) {
		*out = SCHEME_FILE;
		return NPU_OK;
	}
	return npu_fail(NPU_ERR_INVALID_ARG,
			"unsupported URL scheme '%.*s' in %s: use http, https or file",
			(int)n, url, url);
}

static npu_status request_init(struct request *r, const char *url,
			       const npu_fetch_options *opts)
{
	npu_status st;

	if (!url || !url[0])
		return npu_fail(NPU_ERR_INVALID_ARG, "the URL is %s: pass an http, https or file URL",
				url ? "empty" : "NULL");
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"the URL contains control character 0x%02x: percent-encode it",
					(unsigned char)*p);
	r->url = url;
	st = parse_scheme(url, &r->scheme);
	if (st != NPU_OK)
		return st;

	npu_fetch_options_init(&r->o);
	if (opts) {
		if (opts->struct_size < OPTIONS_V1_SIZE)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"npu_fetch_options.struct_size is %zu, at least %zu expected: initialise the options with npu_fetch_options_init()",
					opts->struct_size, OPTIONS_V1_SIZE);
		/* A newer caller's extra fields are unknown here: ignored. */
		memcpy(&r->o, opts, opts->struct_size < sizeof(r->o) ? opts->struct_size : sizeof(r->o));
		r->o.struct_size = sizeof(r->o);
	}
	if (r->o.offline && r->o.no_cache)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_fetch_options.offline and no_cache are both set: offline can only use the cache");

	r->check = r->o.sha256 != NULL;
	if (r->check) {
		size_t n = strlen(r->o.sha256);

		for (size_t i = 0; i < n && i < 64; i++)
			if (hex_value(r->o.sha256[i]) < 0)
				n = 0;
		if (n != 64)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"npu_fetch_options.sha256 '%s' is not a sha256: give 64 hex digits, or NULL to skip the check",
					r->o.sha256);
		for (size_t i = 0; i < 64; i++)
			r->want[i] = (char)tolower((unsigned char)r->o.sha256[i]);
		r->want[64] = '\0';
	}
	return NPU_OK;
}

/* file:///p or file://localhost/p to p, %XX decoded, ?query and #fragment dropped. */
static npu_status file_url_path(const char *url, char *out, size_t cap)
{
	const char *p = url + 5;	/* after "file:" */
	size_t n = 0;

	if (strncmp(p, "//", 2) != 0)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"file URL %s lacks '//': write file:///absolute/path", url);
	p += 2;
	if (*p != '/') {
		if (strncasecmp(p, "localhost/", 10) != 0)
			return npu_fail(NPU_ERR_INVALID_ARG,
					"file URL %s names a host: only local files work, as file:///absolute/path",
					url);
		p += 9;
	}
	for (; *p && *p != '?' && *p != '#'; p++) {
		int c = (unsigned char)*p;

		if (c == '%') {
			int hi = hex_value(p[1]);
			int lo = hi < 0 ? -1 : hex_value(p[2]);

			if (lo < 0 || (hi | lo) == 0)
				return npu_fail(NPU_ERR_INVALID_ARG,
						"file URL %s has a bad %%-escape at '%.3s'", url, p);
			c = hi << 4 | lo;
			p += 2;
		}
		if (n + 1 >= cap)
			return npu_fail(NPU_ERR_INVALID_ARG, "file URL %s: path too long", url);
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return NPU_OK;
}

/* ---- Files ---- */

static npu_status write_all(int fd, const void *buf, size_t n, const char *path)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return npu_fail(NPU_ERR_IO, "cannot write %s: %s", path, strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return NPU_OK;
}

/* Reads from @fd's current offset to the end: up to @cap bytes into @buf. */
static npu_status read_upto(int fd, void *buf, size_t cap, size_t *got, const char *path)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t r = read(fd, (char *)buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return npu_fail(NPU_ERR_IO, "cannot read %s: %s", path, strerror(errno));
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*got = n;
	return NPU_OK;
}

/*
 * The content of the open regular file @fd, from its current offset:
 * into a new buffer *@data if @data is not NULL, its sha256 into @digest
 * if that is not NULL, its length into *@size.
 */
static npu_status read_fd(int fd, const char *path, void **data, size_t *size,
			  uint8_t *digest)
{
	npu_sha256_ctx sha;
	struct stat st;
	npu_status s;
	size_t got = 0;
	void *buf;

	if (fstat(fd, &st) != 0)
		return npu_fail(NPU_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return npu_fail(NPU_ERR_IO, "%s is not a regular file", path);
	if (data) {
		size_t cap = (size_t)st.st_size;

		if ((uint64_t)st.st_size > SIZE_MAX - 1)
			return npu_fail(NPU_ERR_NO_MEMORY, "%s is too large to load", path);
		buf = malloc(cap ? cap : 1);
		if (!buf)
			return npu_fail(NPU_ERR_NO_MEMORY,
					"cannot allocate %zu bytes to load %s", cap, path);
		s = read_upto(fd, buf, cap, &got, path);
		if (s != NPU_OK) {
			free(buf);
			return s;
		}
		if (digest) {
			s = npu_sha256(buf, got, digest);
			if (s != NPU_OK) {
				free(buf);
				return s;
			}
		}
		*data = buf;
		*size = got;
		return NPU_OK;
	}

	buf = malloc(HASH_CHUNK);
	if (!buf)
		return npu_fail(NPU_ERR_NO_MEMORY, "cannot allocate a buffer to hash %s", path);
	s = npu_sha256_init(&sha);
	*size = 0;
	while (s == NPU_OK) {
		s = read_upto(fd, buf, HASH_CHUNK, &got, path);
		if (s == NPU_OK)
			s = npu_sha256_update(&sha, buf, got);
		if (s != NPU_OK)
			break;
		*size += got;
		if (got < HASH_CHUNK)
			break;		/* end of file */
	}
	free(buf);
	if (s == NPU_OK && digest)
		return npu_sha256_final(&sha, digest);
	npu_sha256_free(&sha);
	return s;
}

/* Like read_fd() on @path; a missing file is NPU_ERR_NOT_FOUND. */
static npu_status read_file(const char *path, void **data, size_t *size, uint8_t *digest)
{
	npu_status s;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return npu_fail(NPU_ERR_NOT_FOUND, "no file %s", path);
		return npu_fail(NPU_ERR_IO, "cannot open %s: %s", path, strerror(errno));
	}
	s = read_fd(fd, path, data, size, digest);
	close(fd);
	return s;
}

/* ---- The cache ---- */

static npu_status set_path(char *dst, size_t cap, const char *what, const char *fmt,
			   const char *a, const char *b)
{
	int n = snprintf(dst, cap, fmt, a, b);

	if (n < 0 || (size_t)n >= cap)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"the %s path under %s is too long: use a shorter cache directory",
				what, a);
	return NPU_OK;
}

/* r->dir, r->data_path and r->meta_path; creates nothing. */
static npu_status cache_paths(struct request *r)
{
	uint8_t key[NPU_SHA256_SIZE];
	char hex[NPU_SHA256_HEX_SIZE];
	const char *env;
	npu_status s;
	size_t len;

	if (r->o.cache_dir && r->o.cache_dir[0])
		s = set_path(r->dir, sizeof(r->dir), "cache", "%s%s", r->o.cache_dir, "");
	else if ((env = getenv("NPU_CACHE_DIR")) && env[0])
		s = set_path(r->dir, sizeof(r->dir), "cache", "%s%s", env, "");
	else if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/')
		s = set_path(r->dir, sizeof(r->dir), "cache", "%s%s", env, "/npu/models");
	else if ((env = getenv("HOME")) && env[0])
		s = set_path(r->dir, sizeof(r->dir), "cache", "%s%s", env, "/.cache/npu/models");
	else
		return npu_fail(NPU_ERR_IO,
				"no cache directory for %s: $HOME is not set; set NPU_CACHE_DIR or npu_fetch_options.cache_dir",
				r->url);
	if (s != NPU_OK)
		return s;
	len = strlen(r->dir);
	while (len > 1 && r->dir[len - 1] == '/')
		r->dir[--len] = '\0';

	s = npu_sha256(r->url, strlen(r->url), key);
	if (s != NPU_OK)
		return s;
	npu_sha256_hex(key, hex);
	s = set_path(r->data_path, sizeof(r->data_path), "cache file", "%s/%s", r->dir, hex);
	if (s == NPU_OK)
		s = set_path(r->meta_path, sizeof(r->meta_path), "cache file", "%s/%s.meta",
			     r->dir, hex);
	return s;
}

static npu_status make_dirs(const char *dir)
{
	char tmp[FETCH_PATH_MAX];
	struct stat st;

	if (stat(dir, &st) != 0) {
		snprintf(tmp, sizeof(tmp), "%s", dir);
		for (char *p = tmp + 1;; p++) {
			char c = *p;

			if (c != '/' && c != '\0')
				continue;
			*p = '\0';
			if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
				return npu_fail(NPU_ERR_IO,
						"cannot create the cache directory %s: %s; set NPU_CACHE_DIR or npu_fetch_options.cache_dir to a writable directory",
						tmp, strerror(errno));
			*p = c;
			if (!c)
				break;
		}
		if (stat(dir, &st) != 0)
			return npu_fail(NPU_ERR_IO, "cannot use the cache directory %s: %s",
					dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return npu_fail(NPU_ERR_IO,
				"the cache directory %s is not a directory: set NPU_CACHE_DIR or npu_fetch_options.cache_dir",
				dir);
	return NPU_OK;
}

/*
 * Reads r->meta_path: 0 and the recorded sha256 and size if it is a
 * valid sidecar for r->url, else -1.
 */
static int read_meta(const struct request *r, char sha[NPU_SHA256_HEX_SIZE], uint64_t *size)
{
	size_t ulen = strlen(r->url), got = 0;
	int have_url = 0, have_sha = 0, have_size = 0;
	char *buf, *line, *next;
	int fd, ok = -1;

	fd = open(r->meta_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	buf = malloc(META_MAX + 1);
	if (!buf || read_upto(fd, buf, META_MAX, &got, r->meta_path) != NPU_OK ||
	    got == META_MAX)
		goto out;
	buf[got] = '\0';
	line = buf;
	next = strchr(line, '\n');
	if (!next || (size_t)(next - line) != strlen(META_MAGIC) ||
	    strncmp(line, META_MAGIC, strlen(META_MAGIC)) != 0)
		goto out;
	for (line = next + 1; (next = strchr(line, '\n')); line = next + 1) {
		size_t n = (size_t)(next - line);

		if (n == 4 + ulen && !strncmp(line, "url ", 4) && !strncmp(line + 4, r->url, ulen)) {
			have_url = 1;
		} else if (n == 7 + 64 && !strncmp(line, "sha256 ", 7)) {
			memcpy(sha, line + 7, 64);
			sha[64] = '\0';
			have_sha = 1;
		} else if (n > 5 && !strncmp(line, "size ", 5)) {
			char *end;

			errno = 0;
			*size = strtoull(line + 5, &end, 10);
			have_size = end == next && errno == 0;
		}
	}
	if (have_url && have_sha && have_size)
		ok = 0;
out:
	free(buf);
	close(fd);
	return ok;
}

static npu_status write_meta(const struct request *r, const char *sha, uint64_t size)
{
	char tmp[FETCH_PATH_MAX + 16];
	size_t cap = strlen(r->url) + 128;
	char *text = malloc(cap);
	npu_status s;
	int fd, n;

	if (!text)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory writing the cache entry of %s", r->url);
	n = snprintf(text, cap, "%s\nurl %s\nsha256 %s\nsize %llu\n", META_MAGIC, r->url, sha,
		     (unsigned long long)size);
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", r->meta_path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		s = npu_fail(NPU_ERR_IO, "cannot create a file in the cache directory %s: %s",
			     r->dir, strerror(errno));
		free(text);
		return s;
	}
	s = write_all(fd, text, (size_t)n, tmp);
	free(text);
	if (s == NPU_OK && fchmod(fd, 0644) != 0)
		s = npu_fail(NPU_ERR_IO, "cannot chmod %s: %s", tmp, strerror(errno));
	close(fd);
	if (s == NPU_OK && rename(tmp, r->meta_path) != 0)
		s = npu_fail(NPU_ERR_IO, "cannot rename %s to %s: %s", tmp, r->meta_path,
			     strerror(errno));
	if (s != NPU_OK)
		unlink(tmp);
	return s;
}

/*
 * A usable cache entry for r->url: NPU_OK (its content in *@data if @data
 * is not NULL), NPU_ERR_NOT_FOUND with the reason in r->why, or another
 * error that must stop the fetch.
 */
static npu_status cache_lookup(struct request *r, void **data, size_t *size)
{
	char meta_sha[NPU_SHA256_HEX_SIZE], hex[NPU_SHA256_HEX_SIZE];
	uint8_t digest[NPU_SHA256_SIZE];
	char *why = r->why;
	size_t why_len = sizeof(r->why);
	uint64_t meta_size = 0;
	struct stat st;
	size_t got = 0;
	void *buf = NULL;
	npu_status s;

	if (read_meta(r, meta_sha, &meta_size) != 0) {
		snprintf(why, why_len, "it is not in the cache %s", r->dir);
		return NPU_ERR_NOT_FOUND;
	}
	if (r->check && strcmp(meta_sha, r->want) != 0) {
		snprintf(why, why_len, "the cached copy in %s has sha256 %s, not %s",
			 r->dir, meta_sha, r->want);
		return NPU_ERR_NOT_FOUND;
	}
	if (!data && !r->check) {
		if (stat(r->data_path, &st) != 0 || !S_ISREG(st.st_mode)) {
			snprintf(why, why_len, "it is not in the cache %s", r->dir);
			return NPU_ERR_NOT_FOUND;
		}
		if ((uint64_t)st.st_size != meta_size) {
			snprintf(why, why_len, "the cached copy %s has %llu bytes, not %llu",
				 r->data_path, (unsigned long long)st.st_size,
				 (unsigned long long)meta_size);
			return NPU_ERR_NOT_FOUND;
		}
		return NPU_OK;
	}

	s = read_file(r->data_path, data ? &buf : NULL, &got, r->check ? digest : NULL);
	if (s == NPU_ERR_NO_MEMORY)
		return s;
	if (s != NPU_OK) {
		snprintf(why, why_len, "%s", npu_last_error());
		return NPU_ERR_NOT_FOUND;
	}
	if (got != meta_size) {
		snprintf(why, why_len, "the cached copy %s has %zu bytes, not %llu",
			 r->data_path, got, (unsigned long long)meta_size);
		free(buf);
		return NPU_ERR_NOT_FOUND;
	}
	if (r->check) {
		npu_sha256_hex(digest, hex);
		if (strcmp(hex, r->want) != 0) {
			snprintf(why, why_len, "the cached copy %s has sha256 %s, not %s",
				 r->data_path, hex, r->want);
			free(buf);
			return NPU_ERR_NOT_FOUND;
		}
	}
	if (data) {
		*data = buf;
		*size = got;
	}
	return NPU_OK;
}

/*
 * Downloads r->url into the cache.  On NPU_OK, if @fd_out is not NULL,
 * *@fd_out is the new cache file opened at offset 0, for the caller to
 * close.
 */
static npu_status cache_download(const struct request *r, int *fd_out)
{
	char tmp[FETCH_PATH_MAX + 16], hex[NPU_SHA256_HEX_SIZE];
	uint8_t digest[NPU_SHA256_SIZE];
	uint64_t size;
	npu_status s;
	int fd;

	s = make_dirs(r->dir);
	if (s != NPU_OK)
		return s;
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", r->data_path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return npu_fail(NPU_ERR_IO,
				"cannot create a file in the cache directory %s: %s; set NPU_CACHE_DIR or npu_fetch_options.cache_dir to a writable directory",
				r->dir, strerror(errno));
	s = npu_fetch_http(r->url, &r->o, fd, tmp, digest, &size);
	if (s != NPU_OK)
		goto fail;
	npu_sha256_hex(digest, hex);
	if (r->check && strcmp(hex, r->want) != 0) {
		/* Nothing that fails the check stays in the cache. */
		unlink(r->meta_path);
		unlink(r->data_path);
		s = npu_fail(NPU_ERR_CHECKSUM,
			     "%s has sha256 %s, expected %s; the download was deleted: check the expected checksum, or whether the file on the server changed",
			     r->url, hex, r->want);
		goto fail;
	}
	if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
		s = npu_fail(NPU_ERR_IO, "cannot save %s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (rename(tmp, r->data_path) != 0) {
		s = npu_fail(NPU_ERR_IO, "cannot rename %s to %s: %s", tmp, r->data_path,
			     strerror(errno));
		goto fail;
	}
	s = write_meta(r, hex, size);
	if (s != NPU_OK) {
		unlink(r->meta_path);
		unlink(r->data_path);
		close(fd);
		return s;
	}
	if (fd_out && lseek(fd, 0, SEEK_SET) == 0) {
		*fd_out = fd;
		return NPU_OK;
	}
	if (fd_out)
		s = npu_fail(NPU_ERR_IO, "cannot rewind %s: %s", r->data_path, strerror(errno));
	close(fd);
	return s;
fail:
	close(fd);
	unlink(tmp);
	return s;
}

/* ---- The API ---- */

static npu_status check_local(const struct request *r, const uint8_t digest[NPU_SHA256_SIZE])
{
	char hex[NPU_SHA256_HEX_SIZE];

	npu_sha256_hex(digest, hex);
	if (strcmp(hex, r->want) != 0)
		return npu_fail(NPU_ERR_CHECKSUM, "%s has sha256 %s, expected %s", r->data_path,
				hex, r->want);
	return NPU_OK;
}

static npu_status fetch_file(struct request *r, void **data, size_t *size)
{
	uint8_t digest[NPU_SHA256_SIZE];
	size_t got;
	npu_status s;

	s = file_url_path(r->url, r->data_path, sizeof(r->data_path));
	if (s != NPU_OK)
		return s;
	if (!data && !r->check) {
		/* npu_fetch_path() without a checksum: the file need only exist. */
		struct stat st;

		if (stat(r->data_path, &st) != 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				return npu_fail(NPU_ERR_NOT_FOUND, "no file %s (from %s): check the path",
						r->data_path, r->url);
			return npu_fail(NPU_ERR_IO, "cannot stat %s: %s", r->data_path,
					strerror(errno));
		}
		if (!S_ISREG(st.st_mode))
			return npu_fail(NPU_ERR_IO, "%s (from %s) is not a regular file",
					r->data_path, r->url);
		return NPU_OK;
	}
	s = read_file(r->data_path, data, data ? size : &got, r->check ? digest : NULL);
	if (s == NPU_ERR_NOT_FOUND)
		return npu_fail(s, "no file %s (from %s): check the path", r->data_path, r->url);
	if (s == NPU_OK && r->check)
		s = check_local(r, digest);
	return s;
}

static npu_status offline_miss(const struct request *r)
{
	return npu_fail(NPU_ERR_NOT_FOUND,
			"%s is not available offline: %s; fetch it once without npu_fetch_options.offline",
			r->url, r->why);
}

npu_status npu_fetch(const char *url, const npu_fetch_options *opts, void **data, size_t *size)
{
	struct request *r;
	npu_status s;
	int fd = -1;

	if (!data || !size)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_fetch: data and size must not be NULL");
	*data = NULL;
	*size = 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory fetching %s", url ? url : "(null)");
	s = request_init(r, url, opts);
	if (s != NPU_OK)
		goto out;
	if (r->scheme == SCHEME_FILE) {
		s = fetch_file(r, data, size);
		goto out;
	}
	s = cache_paths(r);
	if (s != NPU_OK)
		goto out;
	if (!r->o.no_cache) {
		s = cache_lookup(r, data, size);
		if (s != NPU_ERR_NOT_FOUND)
			goto out;
		if (r->o.offline) {
			s = offline_miss(r);
			goto out;
		}
	}
	s = cache_download(r, &fd);
	if (s == NPU_OK) {
		s = read_fd(fd, r->data_path, data, size, NULL);
		close(fd);
	}
out:
	if (s != NPU_OK && *data) {
		free(*data);
		*data = NULL;
		*size = 0;
	}
	free(r);
	return s;
}

npu_status npu_fetch_path(const char *url, const npu_fetch_options *opts, char *path,
			  size_t path_len)
{
	struct request *r;
	npu_status s;
	size_t n;

	if (!path || !path_len)
		return npu_fail(NPU_ERR_INVALID_ARG,
				"npu_fetch_path: path is NULL or path_len 0: pass a buffer of PATH_MAX bytes");
	path[0] = '\0';
	r = calloc(1, sizeof(*r));
	if (!r)
		return npu_fail(NPU_ERR_NO_MEMORY, "out of memory fetching %s", url ? url : "(null)");
	s = request_init(r, url, opts);
	if (s != NPU_OK)
		goto out;
	if (r->scheme == SCHEME_FILE) {
		s = fetch_file(r, NULL, NULL);
		goto copy;
	}
	s = cache_paths(r);
	if (s != NPU_OK)
		goto out;
	if (!r->o.no_cache) {
		s = cache_lookup(r, NULL, NULL);
		if (s != NPU_ERR_NOT_FOUND)
			goto copy;
		if (r->o.offline) {
			s = offline_miss(r);
			goto out;
		}
	}
	s = cache_download(r, NULL);
copy:
	if (s == NPU_OK) {
		n = strlen(r->data_path);
		if (n >= path_len)
			s = npu_fail(NPU_ERR_INVALID_ARG,
				     "the path %s needs %zu bytes but path_len is %zu: pass a buffer of PATH_MAX bytes",
				     r->data_path, n + 1, path_len);
		else
			memcpy(path, r->data_path, n + 1);
	}
out:
	free(r);
	return s;
}
