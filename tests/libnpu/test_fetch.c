// SPDX-License-Identifier: MIT
/*
 * npu_fetch(): SHA-256 test vectors, then downloads from a loopback HTTP
 * server run by each test on 127.0.0.1 (ephemeral port, one thread, one
 * connection at a time), into a fresh cache directory per test.
 *
 * Server paths:
 *   /model.bin   MODEL_SIZE bytes of a known pattern, with Content-Length
 *   /slow.bin    the same, sent in SLOW_CHUNK pieces SLOW_DELAY_US apart
 *   /nolen.bin   the same, without Content-Length (ends at close)
 *   /wrong.bin   the same size with one byte changed
 *   /redirect    302 to /model.bin
 *   /noloc       302 without a Location
 *   /stall       never answers (until the client hangs up)
 *   anything else: 404
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fetch/sha256.h"
#include "npu_fetch.h"
#include "npu_test.h"

#define MODEL_SIZE (256 * 1024 + 123)
#define SLOW_CHUNK (16 * 1024)
#define SLOW_DELAY_US 10000
#define STALL_MAX_MS 10000

static struct {
	int lfd;
	int port;
	pthread_t thread;
	atomic_int stop;
	atomic_int requests;
} srv;

static uint8_t *model;			/* the served content */
static char model_sha[NPU_SHA256_HEX_SIZE];
static char tmpdir[64];			/* this test's scratch directory */
static char cache[128];			/* tmpdir/cache */

/* ---- The loopback server ---- */

static int send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void send_body(int fd, const char *status, const char *headers, const void *body,
		      size_t len, int with_length, size_t chunk, unsigned delay_us)
{
	char head[512];
	int n;

	if (with_length)
		n = snprintf(head, sizeof(head),
			     "HTTP/1.1 %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
			     status, len, headers);
	else
		n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nConnection: close\r\n%s\r\n",
			     status, headers);
	if (send_all(fd, head, (size_t)n))
		return;
	for (size_t off = 0; off < len; off += chunk) {
		size_t k = len - off < chunk ? len - off : chunk;

		if (send_all(fd, (const char *)body + off, k))
			return;
		if (delay_us && off + k < len)
			usleep(delay_us);
	}
}

/* Waits until the client hangs up (or the test ends). */
static void stall(int fd)
{
	char buf[256];

	for (int waited = 0; waited < STALL_MAX_MS && !atomic_load(&srv.stop); waited += 20) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 20) > 0 && recv(fd, buf, sizeof(buf), 0) <= 0)
			return;
	}
}

static void serve(int fd)
{
	char req[4096], path[256];
	size_t n = 0;

	/* Read the request head. */
	while (n < sizeof(req) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 2000) <= 0)
			return;
		r = recv(fd, req + n, sizeof(req) - 1 - n, 0);
		if (r <= 0)
			return;
		n += (size_t)r;
		req[n] = '\0';
		if ((uint8_t)req[0] == 0x16)
			return;		/* a TLS handshake: hang up */
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	if (sscanf(req, "GET %255s HTTP/1.", path) != 1)
		return;
	atomic_fetch_add(&srv.requests, 1);

	if (!strcmp(path, "/model.bin")) {
		send_body(fd, "200 OK", "", model, MODEL_SIZE, 1, MODEL_SIZE, 0);
	} else if (!strcmp(path, "/slow.bin")) {
		send_body(fd, "200 OK", "", model, MODEL_SIZE, 1, SLOW_CHUNK, SLOW_DELAY_US);
	} else if (!strcmp(path, "/nolen.bin")) {
		send_body(fd, "200 OK", "", model, MODEL_SIZE, 0, SLOW_CHUNK, 1000);
	} else if (!strcmp(path, "/wrong.bin")) {
		uint8_t *bad = malloc(MODEL_SIZE);

		memcpy(bad, model, MODEL_SIZE);
		bad[MODEL_SIZE / 2] ^= 0x40;
		send_body(fd, "200 OK", "", bad, MODEL_SIZE, 1, MODEL_SIZE, 0);
		free(bad);
	} else if (!strcmp(path, "/redirect")) {
		send_body(fd, "302 Found", "Location: /model.bin\r\n", "", 0, 1, 1, 0);
	} else if (!strcmp(path, "/noloc")) {
		send_body(fd, "302 Found", "", "moved\n", 6, 1, 6, 0);
	} else if (!strcmp(path, "/stall")) {
		stall(fd);
	} else {
		send_body(fd, "404 Not Found", "", "not found\n", 10, 1, 10, 0);
	}
}

static void *server_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&srv.stop)) {
		struct pollfd p = { .fd = srv.lfd, .events = POLLIN };
		int fd;

		if (poll(&p, 1, 20) <= 0)
			continue;
		fd = accept4(srv.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve(fd);
		close(fd);
	}
	return NULL;
}

static void server_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(srv.lfd, 0);
	ck_assert_int_eq(bind(srv.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(srv.lfd, 16), 0);
	ck_assert_int_eq(getsockname(srv.lfd, (struct sockaddr *)&a, &len), 0);
	srv.port = ntohs(a.sin_port);
	atomic_store(&srv.stop, 0);
	atomic_store(&srv.requests, 0);
	ck_assert_int_eq(pthread_create(&srv.thread, NULL, server_main, NULL), 0);
}

static void server_stop(void)
{
	atomic_store(&srv.stop, 1);
	pthread_join(srv.thread, NULL);
	close(srv.lfd);
}

/* ---- Fixture and helpers ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void setup(void)
{
	model = malloc(MODEL_SIZE);
	ck_assert_ptr_nonnull(model);
	for (size_t i = 0; i < MODEL_SIZE; i++)
		model[i] = (uint8_t)(i * 31 + (i >> 9));
	{
		uint8_t d[NPU_SHA256_SIZE];

		ck_assert_int_eq(npu_sha256(model, MODEL_SIZE, d), NPU_OK);
		npu_sha256_hex(d, model_sha);
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/npu-fetch-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	/* A proxy from the environment must not see loopback requests. */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	server_start();
}

static void teardown(void)
{
	server_stop();
	nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(model);
	model = NULL;
}

static const char *url(const char *path)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "http://127.0.0.1:%d%s", srv.port, path);
	return buf;
}

static npu_fetch_options opts(void)
{
	npu_fetch_options o;

	npu_fetch_options_init(&o);
	o.cache_dir = cache;
	o.connect_timeout_ms = 5000;
	o.timeout_ms = 10000;
	return o;
}

/* The cache file of @u in the test's cache directory. */
static const char *cache_file(const char *u)
{
	static char buf[256];
	uint8_t d[NPU_SHA256_SIZE];
	char hex[NPU_SHA256_HEX_SIZE];

	ck_assert_int_eq(npu_sha256(u, strlen(u), d), NPU_OK);
	npu_sha256_hex(d, hex);
	snprintf(buf, sizeof(buf), "%s/%s", cache, hex);
	return buf;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Entries in the cache directory (0 if it does not exist). */
static int cache_entries(void)
{
	DIR *d = opendir(cache);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static void assert_model(const void *data, size_t size)
{
	ck_assert_ptr_nonnull(data);
	ck_assert_uint_eq(size, MODEL_SIZE);
	ck_assert(memcmp(data, model, MODEL_SIZE) == 0);
}

static void assert_file_is_model(const char *path)
{
	struct stat st;
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(MODEL_SIZE);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	ck_assert_int_eq(st.st_size, MODEL_SIZE);
	ck_assert_uint_eq(fread(buf, 1, MODEL_SIZE, f), MODEL_SIZE);
	ck_assert(memcmp(buf, model, MODEL_SIZE) == 0);
	free(buf);
	fclose(f);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* ---- SHA-256 ---- */

static void assert_sha(const void *data, size_t n, const char *want)
{
	uint8_t d[NPU_SHA256_SIZE];
	char hex[NPU_SHA256_HEX_SIZE];

	ck_assert_int_eq(npu_sha256(data, n, d), NPU_OK);
	npu_sha256_hex(d, hex);
	ck_assert_str_eq(hex, want);
}

START_TEST(sha256_vectors)
{
	/* FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf"). */
	static const char m448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	static const char m896[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
				   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	uint8_t d[NPU_SHA256_SIZE];
	char hex[NPU_SHA256_HEX_SIZE];
	npu_sha256_ctx c;
	char *million;

	assert_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_sha(m448, strlen(m448),
		   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_sha(m896, strlen(m896),
		   "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

	/* A million 'a': in one call, then in uneven pieces. */
	million = malloc(1000000);
	ck_assert_ptr_nonnull(million);
	memset(million, 'a', 1000000);
	assert_sha(million, 1000000,
		   "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	ck_assert_int_eq(npu_sha256_init(&c), NPU_OK);
	for (size_t off = 0, step = 1; off < 1000000; off += step, step = step * 7 % 1000 + 1)
		ck_assert_int_eq(npu_sha256_update(&c, million + off,
						   off + step <= 1000000 ? step : 1000000 - off),
				 NPU_OK);
	ck_assert_int_eq(npu_sha256_final(&c, d), NPU_OK);
	npu_sha256_hex(d, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);

	/* Padding edges: 55, 56 and 64 bytes. */
	assert_sha("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 55,
		   "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	assert_sha("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 56,
		   "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	assert_sha("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64,
		   "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}
END_TEST

/*
 * The context's lifetime: final frees it (ASan's leak check sees a context
 * left behind), free after final and a second free are no-ops, and a
 * context used after final fails with a status instead of crashing.
 */
START_TEST(sha256_context_lifetime)
{
	uint8_t d[NPU_SHA256_SIZE];
	char hex[NPU_SHA256_HEX_SIZE];
	npu_sha256_ctx c;

	ck_assert_int_eq(npu_sha256_init(&c), NPU_OK);
	ck_assert_int_eq(npu_sha256_update(&c, "ab", 2), NPU_OK);
	ck_assert_int_eq(npu_sha256_update(&c, NULL, 0), NPU_OK);
	ck_assert_int_eq(npu_sha256_update(&c, "c", 1), NPU_OK);
	ck_assert_int_eq(npu_sha256_final(&c, d), NPU_OK);
	npu_sha256_hex(d, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	ck_assert_ptr_null(c.evp);
	npu_sha256_free(&c);

	ck_assert_int_eq(npu_sha256_update(&c, "x", 1), NPU_ERR_INTERNAL);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "not initialised"));
	ck_assert_int_eq(npu_sha256_final(&c, d), NPU_ERR_INTERNAL);

	/* Abandoned half way (a failed download): free, twice. */
	ck_assert_int_eq(npu_sha256_init(&c), NPU_OK);
	ck_assert_int_eq(npu_sha256_update(&c, "abc", 3), NPU_OK);
	npu_sha256_free(&c);
	npu_sha256_free(&c);
	ck_assert_ptr_null(c.evp);
}
END_TEST

/* ---- Downloads and the cache ---- */

START_TEST(download_content)
{
	npu_fetch_options o = opts();
	const char *u = url("/model.bin");
	void *data;
	size_t size;
	char meta[300];

	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_eq(atomic_load(&srv.requests), 1);
	/* The content and its sidecar, and no temporary file. */
	assert_file_is_model(cache_file(u));
	snprintf(meta, sizeof(meta), "%s.meta", cache_file(u));
	ck_assert(exists(meta));
	ck_assert_int_eq(cache_entries(), 2);
}
END_TEST

START_TEST(cache_hit_no_request)
{
	npu_fetch_options o = opts();
	const char *u = url("/model.bin");
	char path[4096];
	void *data;
	size_t size;

	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	npu_free(data);
	ck_assert_int_eq(atomic_load(&srv.requests), 1);

	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_OK);
	ck_assert_str_eq(path, cache_file(u));
	ck_assert_int_eq(atomic_load(&srv.requests), 1);

	/* no_cache goes to the network again. */
	o.no_cache = 1;
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_eq(atomic_load(&srv.requests), 2);
	ck_assert_int_eq(cache_entries(), 2);
}
END_TEST

START_TEST(sha256_match)
{
	npu_fetch_options o = opts();
	const char *u = url("/model.bin");
	char upper[NPU_SHA256_HEX_SIZE];
	void *data;
	size_t size;

	for (int i = 0; i < NPU_SHA256_HEX_SIZE; i++)
		upper[i] = (char)(model_sha[i] >= 'a' ? model_sha[i] - 32 : model_sha[i]);
	o.sha256 = upper;	/* either case */
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	/* A hit whose content matches: no request. */
	o.sha256 = model_sha;
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_eq(atomic_load(&srv.requests), 1);
}
END_TEST

START_TEST(sha256_mismatch)
{
	npu_fetch_options o = opts();
	const char *u = url("/wrong.bin");
	char path[4096] = "x";
	uint8_t d[NPU_SHA256_SIZE];
	char actual[NPU_SHA256_HEX_SIZE];
	void *data = (void *)1;
	size_t size = 1;

	model[MODEL_SIZE / 2] ^= 0x40;	/* what /wrong.bin serves */
	ck_assert_int_eq(npu_sha256(model, MODEL_SIZE, d), NPU_OK);
	model[MODEL_SIZE / 2] ^= 0x40;
	npu_sha256_hex(d, actual);

	o.sha256 = model_sha;
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_CHECKSUM);
	ck_assert_ptr_null(data);
	ck_assert_uint_eq(size, 0);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), model_sha));
	ck_assert_ptr_nonnull(strstr(npu_last_error(), actual));
	ck_assert(!exists(cache_file(u)));
	ck_assert_int_eq(cache_entries(), 0);

	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_ERR_CHECKSUM);
	ck_assert_str_eq(path, "");
	ck_assert_int_eq(cache_entries(), 0);
	ck_assert_int_eq(atomic_load(&srv.requests), 2);
}
END_TEST

START_TEST(stale_cache_redownloaded)
{
	npu_fetch_options o = opts();
	const char *u = url("/model.bin");
	char path[4096];
	uint8_t *bad;
	void *data;
	size_t size;

	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_OK);
	assert_file_is_model(path);
	/* Corrupt the cached copy, keeping its size: without a sha256 it is
	 * still a hit; with one it is fetched again. */
	bad = malloc(MODEL_SIZE);
	memcpy(bad, model, MODEL_SIZE);
	bad[7] ^= 1;
	write_file(path, bad, MODEL_SIZE);
	free(bad);
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	ck_assert_uint_eq(size, MODEL_SIZE);
	npu_free(data);
	ck_assert_int_eq(atomic_load(&srv.requests), 1);

	o.sha256 = model_sha;
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_eq(atomic_load(&srv.requests), 2);
	assert_file_is_model(path);

	/* A truncated copy is a miss even without a sha256. */
	o.sha256 = NULL;
	ck_assert_int_eq(truncate(path, 100), 0);
	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_OK);
	ck_assert_int_eq(atomic_load(&srv.requests), 3);
	assert_file_is_model(path);
}
END_TEST

START_TEST(fetch_path_download)
{
	npu_fetch_options o = opts();
	const char *u = url("/model.bin");
	char path[4096], small[8];

	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_OK);
	ck_assert_str_eq(path, cache_file(u));
	assert_file_is_model(path);
	ck_assert_int_eq(npu_fetch_path(u, &o, small, sizeof(small)), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "path_len"));
	ck_assert_str_eq(small, "");
	ck_assert_int_eq(npu_fetch_path(u, &o, NULL, 0), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(atomic_load(&srv.requests), 1);
}
END_TEST

START_TEST(redirect_followed)
{
	npu_fetch_options o = opts();
	void *data;
	size_t size;

	ck_assert_int_eq(npu_fetch(url("/redirect"), &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_eq(atomic_load(&srv.requests), 2);
	ck_assert(exists(cache_file(url("/redirect"))));
}
END_TEST

/* ---- Failures ---- */

START_TEST(http_404)
{
	npu_fetch_options o = opts();
	const char *u = url("/nothing-here.onnx");
	void *data;
	size_t size;

	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_NETWORK);
	ck_assert_ptr_null(data);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "404"));
	ck_assert_ptr_nonnull(strstr(npu_last_error(), u));
	ck_assert_int_eq(cache_entries(), 0);

	/* Not an error status, but not a file either. */
	ck_assert_int_eq(npu_fetch(url("/noloc"), &o, &data, &size), NPU_ERR_NETWORK);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "302"));
	ck_assert_int_eq(cache_entries(), 0);
}
END_TEST

START_TEST(connection_refused)
{
	npu_fetch_options o = opts();
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char u[64];
	void *data;
	size_t size;
	int fd;

	/* A port that was free a moment ago and has no listener. */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/model.bin", ntohs(a.sin_port));
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_NETWORK);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), u));
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "onnect"));	/* curl's words */
	ck_assert_int_eq(cache_entries(), 0);
}
END_TEST

START_TEST(https_to_plain_server)
{
	npu_fetch_options o = opts();
	char u[128];
	void *data;
	size_t size;

	/* Runs libcurl's TLS code under the sanitizers; the handshake fails. */
	snprintf(u, sizeof(u), "https://127.0.0.1:%d/model.bin", srv.port);
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_NETWORK);
	ck_assert_ptr_null(data);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), u));
	ck_assert_int_eq(cache_entries(), 0);
}
END_TEST

START_TEST(timeout_bounded)
{
	npu_fetch_options o = opts();
	void *data;
	size_t size;
	double t0, dt;

	o.timeout_ms = 300;
	t0 = now_s();
	ck_assert_int_eq(npu_fetch(url("/stall"), &o, &data, &size), NPU_ERR_TIMEOUT);
	dt = now_s() - t0;
	ck_assert_ptr_null(data);
	ck_assert_msg(dt >= 0.25 && dt < 2.0, "timed out after %.3f s, wanted about 0.3 s", dt);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "timed out"));
	ck_assert_int_eq(cache_entries(), 0);
}
END_TEST

START_TEST(bad_arguments)
{
	npu_fetch_options o = opts();
	char path[256];
	void *data;
	size_t size;

	ck_assert_int_eq(npu_fetch("ftp://example.com/m.onnx", &o, &data, &size),
			 NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "'ftp'"));
	ck_assert_int_eq(npu_fetch_path("gopher://h/m", &o, path, sizeof(path)),
			 NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "'gopher'"));
	ck_assert_int_eq(npu_fetch("/models/m.onnx", &o, &data, &size), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "file:///models/m.onnx"));
	ck_assert_int_eq(npu_fetch(NULL, &o, &data, &size), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_fetch("", &o, &data, &size), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_fetch(url("/a\nb"), &o, &data, &size), NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_fetch(url("/model.bin"), &o, NULL, &size), NPU_ERR_INVALID_ARG);

	o.sha256 = "abc";
	ck_assert_int_eq(npu_fetch(url("/model.bin"), &o, &data, &size), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "64 hex digits"));
	o.sha256 = "zz5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
	ck_assert_int_eq(npu_fetch(url("/model.bin"), &o, &data, &size), NPU_ERR_INVALID_ARG);
	o.sha256 = NULL;
	o.offline = 1;
	o.no_cache = 1;
	ck_assert_int_eq(npu_fetch(url("/model.bin"), &o, &data, &size), NPU_ERR_INVALID_ARG);
	o = opts();
	o.struct_size = 0;
	ck_assert_int_eq(npu_fetch(url("/model.bin"), &o, &data, &size), NPU_ERR_INVALID_ARG);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "npu_fetch_options_init"));
	ck_assert_int_eq(atomic_load(&srv.requests), 0);
	ck_assert_int_eq(cache_entries(), 0);
}
END_TEST

START_TEST(offline_mode)
{
	npu_fetch_options o = opts();
	const char *u = url("/model.bin");
	char path[4096];
	void *data;
	size_t size;

	o.offline = 1;
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_NOT_FOUND);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "offline"));
	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_ERR_NOT_FOUND);
	ck_assert_int_eq(atomic_load(&srv.requests), 0);

	o.offline = 0;
	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_OK);
	o.offline = 1;
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	/* A cached copy that does not match the wanted sha256 is a miss. */
	o.sha256 = "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_NOT_FOUND);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), model_sha));
	ck_assert_int_eq(atomic_load(&srv.requests), 1);
}
END_TEST

/* ---- Progress and cancellation ---- */

struct progress_log {
	int calls;
	uint64_t last, total;
	int decreased;
	int cancel_after_data;
};

static int on_progress(void *user, uint64_t received, uint64_t total)
{
	struct progress_log *p = user;

	if (received < p->last)
		p->decreased = 1;
	p->last = received;
	if (total)
		p->total = total;
	p->calls++;
	return p->cancel_after_data && received > 0;
}

START_TEST(progress_reported)
{
	npu_fetch_options o = opts();
	struct progress_log log = { 0 };
	void *data;
	size_t size;

	o.progress = on_progress;
	o.progress_user = &log;
	ck_assert_int_eq(npu_fetch(url("/slow.bin"), &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_ge(log.calls, 2);
	ck_assert(!log.decreased);
	ck_assert_uint_eq(log.last, MODEL_SIZE);
	ck_assert_uint_eq(log.total, MODEL_SIZE);

	/* Without Content-Length the total is 0. */
	memset(&log, 0, sizeof(log));
	ck_assert_int_eq(npu_fetch(url("/nolen.bin"), &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert(!log.decreased);
	ck_assert_uint_eq(log.last, MODEL_SIZE);
	ck_assert_uint_eq(log.total, 0);

	/* A cache hit reports nothing. */
	memset(&log, 0, sizeof(log));
	ck_assert_int_eq(npu_fetch(url("/slow.bin"), &o, &data, &size), NPU_OK);
	npu_free(data);
	ck_assert_int_eq(log.calls, 0);
}
END_TEST

START_TEST(progress_cancel)
{
	npu_fetch_options o = opts();
	struct progress_log log = { .cancel_after_data = 1 };
	char path[4096];
	void *data;
	size_t size;

	o.progress = on_progress;
	o.progress_user = &log;
	ck_assert_int_eq(npu_fetch(url("/slow.bin"), &o, &data, &size), NPU_ERR_IO);
	ck_assert_ptr_null(data);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), "cancelled"));
	ck_assert_uint_gt(log.last, 0);
	ck_assert_uint_lt(log.last, MODEL_SIZE);
	ck_assert_int_eq(npu_fetch_path(url("/slow.bin"), &o, path, sizeof(path)), NPU_ERR_IO);
	ck_assert_int_eq(cache_entries(), 0);
}
END_TEST

/* ---- file:// and the default directory ---- */

START_TEST(file_url)
{
	npu_fetch_options o = opts();
	char file[128], u[256], path[4096];
	void *data;
	size_t size;

	snprintf(file, sizeof(file), "%s/a model.bin", tmpdir);
	write_file(file, model, MODEL_SIZE);
	snprintf(u, sizeof(u), "file://%s/a%%20model.bin", tmpdir);

	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);
	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_OK);
	ck_assert_str_eq(path, file);
	o.sha256 = model_sha;
	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_OK);
	snprintf(u, sizeof(u), "FILE://localhost%s/a%%20model.bin", tmpdir);
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_OK);
	assert_model(data, size);
	npu_free(data);

	/* A mismatch leaves the local file alone. */
	o.sha256 = "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_CHECKSUM);
	ck_assert_ptr_nonnull(strstr(npu_last_error(), model_sha));
	ck_assert(exists(file));
	o.sha256 = NULL;

	snprintf(u, sizeof(u), "file://%s/missing.bin", tmpdir);
	ck_assert_int_eq(npu_fetch(u, &o, &data, &size), NPU_ERR_NOT_FOUND);
	ck_assert_int_eq(npu_fetch_path(u, &o, path, sizeof(path)), NPU_ERR_NOT_FOUND);
	ck_assert_int_eq(npu_fetch("file://otherhost/x.bin", &o, &data, &size),
			 NPU_ERR_INVALID_ARG);
	ck_assert_int_eq(npu_fetch("file:///x%zz", &o, &data, &size), NPU_ERR_INVALID_ARG);
	/* Nothing touched the cache or the network. */
	ck_assert_int_eq(cache_entries(), 0);
	ck_assert_int_eq(atomic_load(&srv.requests), 0);
}
END_TEST

static void restore_env(const char *name, char *saved)
{
	if (saved) {
		setenv(name, saved, 1);
		free(saved);
	} else {
		unsetenv(name);
	}
}

static char *save_env(const char *name)
{
	const char *v = getenv(name);

	return v ? strdup(v) : NULL;
}

START_TEST(default_cache_dir)
{
	char *npu = save_env("NPU_CACHE_DIR"), *xdg = save_env("XDG_CACHE_HOME");
	char *home = save_env("HOME");
	char path[4096], want[256];
	const char *u = url("/model.bin");

	snprintf(want, sizeof(want), "%s/env", tmpdir);
	setenv("NPU_CACHE_DIR", want, 1);
	ck_assert_int_eq(npu_fetch_path(u, NULL, path, sizeof(path)), NPU_OK);
	ck_assert_int_eq(strncmp(path, want, strlen(want)), 0);
	assert_file_is_model(path);

	unsetenv("NPU_CACHE_DIR");
	snprintf(want, sizeof(want), "%s/xdg", tmpdir);
	setenv("XDG_CACHE_HOME", want, 1);
	snprintf(want, sizeof(want), "%s/xdg/npu/models/", tmpdir);
	ck_assert_int_eq(npu_fetch_path(u, NULL, path, sizeof(path)), NPU_OK);
	ck_assert_int_eq(strncmp(path, want, strlen(want)), 0);

	setenv("XDG_CACHE_HOME", "relative/ignored", 1);
	snprintf(want, sizeof(want), "%s/home", tmpdir);
	setenv("HOME", want, 1);
	snprintf(want, sizeof(want), "%s/home/.cache/npu/models/", tmpdir);
	ck_assert_int_eq(npu_fetch_path(u, NULL, path, sizeof(path)), NPU_OK);
	ck_assert_int_eq(strncmp(path, want, strlen(want)), 0);
	ck_assert_int_eq(atomic_load(&srv.requests), 3);

	restore_env("NPU_CACHE_DIR", npu);
	restore_env("XDG_CACHE_HOME", xdg);
	restore_env("HOME", home);
}
END_TEST

/* ---- Threads ---- */

#define FETCH_THREADS 4

struct fetch_job {
	const char *url;
	npu_status st;
	char error[256];
};

static void *fetch_thread(void *arg)
{
	npu_fetch_options o = opts();
	struct fetch_job *j = arg;
	void *data = NULL;
	size_t size = 0;

	o.sha256 = model_sha;
	j->st = npu_fetch(j->url, &o, &data, &size);
	snprintf(j->error, sizeof(j->error), "%s", npu_last_error());
	if (j->st == NPU_OK && (size != MODEL_SIZE || memcmp(data, model, MODEL_SIZE)))
		j->st = NPU_ERR_INTERNAL;
	npu_free(data);
	return NULL;
}

START_TEST(concurrent_fetches)
{
	pthread_t t[FETCH_THREADS];
	struct fetch_job jobs[FETCH_THREADS];
	char u[128];

	snprintf(u, sizeof(u), "%s", url("/model.bin"));
	for (int i = 0; i < FETCH_THREADS; i++) {
		jobs[i].url = u;
		ck_assert_int_eq(pthread_create(&t[i], NULL, fetch_thread, &jobs[i]), 0);
	}
	for (int i = 0; i < FETCH_THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_msg(jobs[i].st == NPU_OK, "thread %d: %s: %s", i,
			      npu_status_str(jobs[i].st), jobs[i].error);
	}
	ck_assert_int_ge(atomic_load(&srv.requests), 1);
	ck_assert_int_le(atomic_load(&srv.requests), FETCH_THREADS);
	ck_assert_int_eq(cache_entries(), 2);
}
END_TEST

static Suite *fetch_suite(void)
{
	Suite *s = suite_create("npu_fetch");
	TCase *sha = tcase_create("sha256");
	TCase *tc = tcase_create("fetch");

	tcase_add_test(sha, sha256_vectors);
	tcase_add_test(sha, sha256_context_lifetime);
	suite_add_tcase(s, sha);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, download_content);
	tcase_add_test(tc, cache_hit_no_request);
	tcase_add_test(tc, sha256_match);
	tcase_add_test(tc, sha256_mismatch);
	tcase_add_test(tc, stale_cache_redownloaded);
	tcase_add_test(tc, fetch_path_download);
	tcase_add_test(tc, redirect_followed);
	tcase_add_test(tc, http_404);
	tcase_add_test(tc, connection_refused);
	tcase_add_test(tc, https_to_plain_server);
	tcase_add_test(tc, timeout_bounded);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, offline_mode);
	tcase_add_test(tc, progress_reported);
	tcase_add_test(tc, progress_cancel);
	tcase_add_test(tc, file_url);
	tcase_add_test(tc, default_cache_dir);
	tcase_add_test(tc, concurrent_fetches);
	suite_add_tcase(s, tc);
	return s;
}
NPU_TEST_SUITE(fetch_suite)
