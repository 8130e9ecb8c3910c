/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* files.c - envd's /files: GET downloads a file (read inside, streamed out), POST uploads one
 * or more (multipart/form-data as the SDK sends by default, or application/octet-stream,
 * either gzip-encoded or not), each written inside by the library through a pipe. Sizes are
 * bounded (--max-upload, decompressed); file contents are data only. A refusal says the cause
 * inside (the agent's errno) with envd's status. Runs in the server (connection threads). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zlib.h>

#include "files.h"
#include "http.h"
#include "opts.h"
#include "registry.h"
#include "req.h"
#include "util.h"

/* envd's statuses, which the SDK turns into its classes: 404 FileNotFoundError, 400
 * InvalidArgumentError, 507 NotEnoughSpaceError; a refusal of the sandbox's permissions is 403
 * (envd: 500), a SandboxError either way that names the cause. */
static unsigned status_of(int code)
{
	switch (code) {
	case ENOENT:
		return 404;
	case EACCES:
	case EPERM:
	case EROFS:
		return 403;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return 507;
	case EISDIR:
	case ENOTDIR:
	case EINVAL:
	case ENAMETOOLONG:
	case ELOOP:
		return 400;
	default:
		return 500;
	}
}

/* --- download --- */
/* A file read inside, sent as it is or gzip-encoded as it goes (Accept-Encoding: gzip, which
 * Node's fetch sends on every request: level 1, the cheapest; a file whose first MiB does not
 * shrink by a tenth is sent on in stored blocks, gzip's framing alone: compressing random or
 * compressed data cost 5 times the plain download's time). */
#define DOWNLOAD_IN    (64 * 1024)
#define DOWNLOAD_PROBE (1u << 20)
struct download {
	int fd;
	uint64_t left;
	z_stream *z; /* gzip: the deflater, and in its input */
	bool z_end;
	bool z_stored; /* level 0 from now on */
	char *in;
};

/* After the probe, a file that does not compress is sent stored (deflateParams() flushes what
 * it holds first: with too little room it says Z_BUF_ERROR, and is asked again next time). */
static void download_level(struct download *d)
{
	z_stream *z = d->z;

	if (d->z_stored || z->total_in < DOWNLOAD_PROBE || z->total_out * 10 < z->total_in * 9)
		return;
	if (deflateParams(z, 0, Z_DEFAULT_STRATEGY) == Z_OK)
		d->z_stored = true;
}

static ssize_t read_some(struct download *d, char *buf, size_t max)
{
	ssize_t n;

	if (max > d->left)
		max = (size_t)d->left;
	do
		n = read(d->fd, buf, max);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		d->left -= (uint64_t)n;
	return n;
}

static ssize_t download_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct download *d = arg;
	ssize_t n;

	(void)pos;
	if (d->left == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = read_some(d, buf, max);
	if (n <= 0) /* shrunk meanwhile: the length promised cannot be kept */
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return n;
}

static ssize_t download_gzip(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct download *d = arg;
	z_stream *z = d->z;

	(void)pos;
	if (d->z_end)
		return MHD_CONTENT_READER_END_OF_STREAM;
	z->next_out = (Bytef *)buf;
	z->avail_out = (uInt)max;
	while (z->avail_out == max && !d->z_end) {
		int k;

		if (z->avail_in == 0 && d->left > 0) {
			ssize_t n;

			download_level(d); /* between inputs: what it flushes fits, mostly */
			n = read_some(d, d->in, DOWNLOAD_IN);

			if (n <= 0) /* shrunk meanwhile: cut, the gzip trailer missing says so */
				return MHD_CONTENT_READER_END_WITH_ERROR;
			z->next_in = (Bytef *)d->in;
			z->avail_in = (uInt)n;
		}
		k = deflate(z, d->left == 0 && z->avail_in == 0 ? Z_FINISH : Z_NO_FLUSH);
		if (k == Z_STREAM_ERROR)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		d->z_end = k == Z_STREAM_END;
	}
	if (z->avail_out == max) /* the end, nothing more */
		return MHD_CONTENT_READER_END_OF_STREAM;
	return (ssize_t)(max - z->avail_out);
}

static void download_free(void *arg)
{
	struct download *d = arg;

	close(d->fd);
	if (d->z) {
		deflateEnd(d->z);
		free(d->z);
	}
	free(d->in);
	free(d);
}

/* Accept-Encoding names gzip, not with q=0 (as envd: "*" is taken as identity). */
static bool accepts_gzip(const char *ae)
{
	while (ae && *ae) {
		size_t len;
		const char *q;

		ae += strspn(ae, " \t,");
		len = strcspn(ae, ",");
		if (strcspn(ae, " \t;,") == 4 && strncasecmp(ae, "gzip", 4) == 0) {
			q = memchr(ae, ';', len);
			if (q)
				q += 1 + strspn(q + 1, " \t");
			return !q || strncasecmp(q, "q=", 2) != 0 || strtod(q + 2, NULL) > 0;
		}
		ae += len;
	}
	return false;
}

static int download_deflater(struct download *d)
{
	d->z = calloc(1, sizeof(*d->z));
	d->in = malloc(DOWNLOAD_IN);
	if (!d->z || !d->in)
		return -ENOMEM;
	/* 16 + MAX_WBITS: gzip's header and trailer */
	if (deflateInit2(d->z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(d->z);
		d->z = NULL;
		return -ENOMEM;
	}
	return 0;
}

enum MHD_Result srv_files_get(struct srv_req *r)
{
	struct cordon_error err = {0};
	const char *path = srv_http_query(r->http, "path");
	bool gzip = accepts_gzip(srv_http_header(r->http, "Accept-Encoding"));
	struct download *d;
	struct stat st;
	int fd;

	if (!path || !*path)
		return srv_http_error(r->http, 400, "the query parameter \"path\" is missing");
	if (cordon_session_open_read(r->sb->session, path, &fd, &err) < 0)
		return srv_http_error(r->http, status_of(err.code), "%s", err.msg);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return srv_http_error(r->http, 400, "%s is not a regular file", path);
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return srv_http_error(r->http, 500, "out of memory");
	}
	d->fd = fd;
	d->left = (uint64_t)st.st_size;
	if (gzip && download_deflater(d) < 0) {
		download_free(d);
		return srv_http_error(r->http, 500, "out of memory");
	}
	if (gzip)
		return srv_http_stream_encoded(r->http, 200, "application/octet-stream", "gzip",
					       MHD_SIZE_UNKNOWN, download_gzip, download_free, d);
	return srv_http_stream(r->http, 200, "application/octet-stream", d->left, download_read,
			       download_free, d);
}

/* --- upload --- */
/* A multipart upload's parts (each, a file made inside and an entry in the answer) and the
 * bytes of their names are bounded: --max-upload counts the body, which empty parts barely
 * grow (8,000 of them made 8,000 files and 36 MB of server memory). */
#define UPLOAD_PARTS_MAX 1000
#define UPLOAD_NAMES_MAX (256 * 1024)

struct upload {
	struct srv_req *r;
	struct MHD_PostProcessor *pp;
	struct cordon_upload *u;
	int fd;
	char *path;	     /* the file being written */
	uint64_t part_bytes; /* of that file so far */
	char *part_name;     /* its part's filename */
	uint64_t total;	     /* bytes of the body so far */
	unsigned parts;	     /* parts begun */
	size_t names;	     /* bytes of their field names, filenames, types and encodings */
	json_object *done;   /* the written files' entries */
	unsigned status;     /* an error: its HTTP status */
	uint64_t dropped;    /* bytes read and dropped since, up to SRV_DRAIN_MAX */
	struct gunzip *gz;   /* Content-Encoding: gzip */
	uint64_t plain;	     /* bytes of the body decompressed so far */
	char msg[600];
};

/* A gzip body, inflated as it comes into out (never the whole body in memory); members one
 * after the other, as gzip(1) and envd take them. */
#define GUNZIP_OUT (64 * 1024)
struct gunzip {
	z_stream z;
	bool ended; /* a member ended, and no other began */
	char out[GUNZIP_OUT];
};

static int up_fail(struct upload *up, unsigned status, const char *msg, const char *detail)
{
	if (!up->status) {
		up->status = status;
		snprintf(up->msg, sizeof(up->msg), "%s%s%s", msg, detail ? ": " : "",
			 detail ? detail : "");
	}
	return -EIO;
}

static int up_open(struct upload *up, const char *path)
{
	struct cordon_error err = {0};

	if (!path || !*path)
		return up_fail(up, 400,
			       "no path for the file (the \"path\" parameter or the part's "
			       "filename)",
			       NULL);
	free(up->path);
	up->path = strdup(path);
	if (!up->path)
		return up_fail(up, 500, "out of memory", NULL);
	up->part_bytes = 0;
	if (cordon_session_write(up->r->sb->session, path, 0644, &up->u, &up->fd, &err) < 0)
		return up_fail(up, status_of(err.code), err.msg, NULL);
	fcntl(up->fd, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Close the pipe, wait for the writer inside, note the file. */
static int up_finish(struct upload *up)
{
	struct cordon_error err = {0};
	struct cordon_file_info f = {0};
	json_object *e;
	uint64_t bytes;
	int k;

	if (!up->u)
		return 0;
	up->fd = cd_safe_close(up->fd);
	k = cordon_upload_finish(up->u, &bytes, &err);
	up->u = NULL;
	if (k < 0)
		return up_fail(up, status_of(err.code), err.msg, NULL);
	e = json_object_new_object();
	if (!e)
		return up_fail(up, 500, "out of memory", NULL);
	k = cordon_session_stat(up->r->sb->session, up->path, &f, &err);
	json_object_object_add(e, "name",
			       json_object_new_string(k >= 0 && f.name ? f.name : up->path));
	json_object_object_add(e, "type", json_object_new_string("file"));
	json_object_object_add(e, "path",
			       json_object_new_string(k >= 0 && f.path ? f.path : up->path));
	cordon_file_info_clear(&f);
	json_object_array_add(up->done, e);
	return 0;
}

/* The writer is a process of the sandbox: one that stops reading must not hold the connection
 * (and the sandbox's kill, which waits for it) forever. */
static int write_bounded(int fd, const char *data, size_t len, int dying_fd)
{
	uint64_t stall_end = cd_now_ns() + 60 * NSEC_PER_SEC;

	while (len > 0) {
		struct pollfd f[2] = {{.fd = fd, .events = POLLOUT},
				      {.fd = dying_fd, .events = POLLIN}};
		ssize_t n;

		if (poll(f, 2, 1000) < 0 && errno != EINTR)
			return -errno;
		if (f[1].revents)
			return -ECANCELED;
		if (!(f[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
			if (cd_now_ns() >= stall_end)
				return -ETIMEDOUT;
			continue;
		}
		n = write(fd, data, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
		stall_end = cd_now_ns() + 60 * NSEC_PER_SEC;
	}
	return 0;
}

/* The writer inside stopped reading: it failed (the open, a write: no space, a read-only
 * place...) and closed its end, so the pipe says EPIPE whatever the cause. Its answer, which
 * the library reads, says why. */
static int up_broken(struct upload *up, int k)
{
	struct cordon_error err = {0};

	up->fd = cd_safe_close(up->fd);
	k = cordon_upload_finish(up->u, NULL, &err) < 0 ? -err.code : k;
	up->u = NULL;
	if (k != -EPIPE && err.code)
		return up_fail(up, status_of(err.code), err.msg, NULL);
	return up_fail(up, 500, "writing the file inside", strerror(-k));
}

static int up_write(struct upload *up, const char *data, size_t len)
{
	int k;

	if (up->status || !up->u)
		return -EIO;
	up->part_bytes += len;
	k = write_bounded(up->fd, data, len, up->r->sb->dying_fd);
	if (k == -EPIPE)
		return up_broken(up, k);
	if (k < 0)
		return up_fail(up, k == -ETIMEDOUT ? 504 : 500, "writing the file inside",
			       strerror(-k));
	return 0;
}

static size_t len0(const char *s)
{
	return s ? strlen(s) : 0;
}

/* Each part counted as it begins (offset 0), a file or another field, with its names. */
static int count_part(struct upload *up, const char *key, const char *filename, const char *ctype,
		      const char *encoding)
{
	char msg[96];

	up->parts++;
	up->names += len0(key) + len0(filename) + len0(ctype) + len0(encoding);
	if (up->parts > UPLOAD_PARTS_MAX)
		snprintf(msg, sizeof(msg), "more than %u parts in one upload", UPLOAD_PARTS_MAX);
	else if (up->names > UPLOAD_NAMES_MAX)
		snprintf(msg, sizeof(msg), "the parts' names and types pass %u bytes",
			 UPLOAD_NAMES_MAX);
	else
		return 0;
	return up_fail(up, 413, msg, "send the files in several requests");
}

static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *filename, const char *ctype, const char *encoding,
			       const char *data, uint64_t off, size_t size)
{
	struct upload *up = cls;
	const char *qpath = srv_http_query(up->r->http, "path");
	bool same = up->u && up->part_bytes == 0 && up->part_name && filename &&
		    strcmp(up->part_name, filename) == 0;

	(void)kind;
	if (up->status)
		return MHD_NO;
	if (off == 0 && !same && count_part(up, key, filename, ctype, encoding) < 0)
		return MHD_NO;
	if (!filename && strcmp(key, "file") != 0)
		return MHD_YES; /* another form field: ignored */
	/* a part begins at offset 0, but its first call may carry no data: MHD then calls again
	 * at offset 0 for the same part */
	if (off == 0 && !same) {
		free(up->part_name);
		up->part_name = filename ? strdup(filename) : NULL;
		if (up_finish(up) < 0 || up_open(up, qpath && *qpath ? qpath : filename) < 0)
			return MHD_NO;
	}
	return size == 0 || up_write(up, data, size) == 0 ? MHD_YES : MHD_NO;
}

/* The body as sent, decompressed: to the multipart reader or the file. */
static void upload_plain(struct upload *up, const char *data, size_t len)
{
	up->plain += len;
	if (up->plain > srv_opts.max_upload) { /* a gzip bomb stops here */
		up_fail(up, 413, "the upload is larger than --max-upload once decompressed", NULL);
		return;
	}
	if (up->pp) {
		MHD_post_process(up->pp, data, len);
		return;
	}
	if (!up->u && !up->status)
		up_open(up, srv_http_query(up->r->http, "path"));
	up_write(up, data, len);
}

static void gunzip_fail(struct upload *up, const char *why)
{
	up_fail(up, 400, "the body is not valid gzip", why ? why : "corrupt data");
}

/* Inflate a chunk of the body; what comes out goes on as the body. */
static void gunzip_chunk(struct upload *up, const char *data, size_t len)
{
	struct gunzip *g = up->gz;

	g->z.next_in = (Bytef *)data;
	g->z.avail_in = (uInt)len;
	while (!up->status && (g->z.avail_in > 0 || g->z.avail_out == 0)) {
		int k;

		if (g->ended) { /* another member follows, or nothing yet */
			if (g->z.avail_in == 0)
				break;
			inflateReset(&g->z);
			g->ended = false;
		}
		g->z.next_out = (Bytef *)g->out;
		g->z.avail_out = GUNZIP_OUT;
		k = inflate(&g->z, Z_NO_FLUSH);
		if (k != Z_OK && k != Z_STREAM_END && k != Z_BUF_ERROR)
			return gunzip_fail(up, g->z.msg);
		if (GUNZIP_OUT - g->z.avail_out > 0)
			upload_plain(up, g->out, GUNZIP_OUT - g->z.avail_out);
		g->ended = k == Z_STREAM_END;
		if (k == Z_BUF_ERROR)
			break; /* all taken: more input needed */
	}
}

static int upload_body(void *ctx, const char *data, size_t len)
{
	struct upload *up = ctx;

	/* Answered at the end: a refusal inside (the file's place, the disk) comes while the body
	 * does, and a client still sending would take a close for a reset and lose the answer. A
	 * body within --max-upload is read to its end (no more than its acceptance would cost);
	 * past it, SRV_DRAIN_MAX more at most, then the connection is cut. */
	if (data && up->status) {
		up->dropped += len;
		return up->dropped > SRV_DRAIN_MAX && up->total + up->dropped > srv_opts.max_upload
			   ? -E2BIG
			   : 0;
	}
	up->total += len;
	if (data && up->total > srv_opts.max_upload) {
		up_fail(up, 413, "the upload is larger than --max-upload", NULL);
		return 0;
	}
	if (data) {
		if (up->gz)
			gunzip_chunk(up, data, len);
		else
			upload_plain(up, data, len);
		return 0;
	}
	if (up->gz && !up->gz->ended && !up->status) /* the end, in the middle of a member */
		gunzip_fail(up, "the body ends before the gzip stream does");
	if (up->pp) { /* the end */
		MHD_destroy_post_processor(up->pp);
		up->pp = NULL;
	} else if (!up->u && !up->status) { /* an empty octet-stream: an empty file */
		up_open(up, srv_http_query(up->r->http, "path"));
	}
	up_finish(up);
	return 0;
}

static void upload_free(void *arg)
{
	struct upload *up = arg;

	if (up->pp)
		MHD_destroy_post_processor(up->pp);
	if (up->gz) {
		inflateEnd(&up->gz->z);
		free(up->gz);
	}
	if (up->u) { /* the client went away mid-upload */
		close(up->fd);
		cordon_upload_finish(up->u, NULL, NULL);
	}
	free(up->path);
	free(up->part_name);
	json_object_put(up->done);
	free(up);
}

static int gunzip_new(struct upload *up)
{
	up->gz = calloc(1, sizeof(*up->gz));
	if (!up->gz)
		return -ENOMEM;
	/* 16 + MAX_WBITS: a gzip header and trailer (its CRC and length checked), not zlib's */
	if (inflateInit2(&up->gz->z, 16 + MAX_WBITS) != Z_OK) {
		free(up->gz);
		up->gz = NULL;
		return -ENOMEM;
	}
	return 0;
}

enum MHD_Result srv_files_post_begin(struct srv_req *r)
{
	const char *ct = srv_http_header(r->http, "Content-Type");
	const char *ce = srv_http_header(r->http, "Content-Encoding");
	struct upload *up;

	bool gzip = ce && strcasecmp(ce, "gzip") == 0;

	if (ce && !gzip && strcasecmp(ce, "identity") != 0)
		return srv_http_error(
		    r->http, 415, "Content-Encoding %s is not supported (gzip or identity)", ce);
	up = calloc(1, sizeof(*up));
	if (!up)
		return srv_http_error(r->http, 500, "out of memory");
	up->r = r;
	up->fd = -1;
	up->done = json_object_new_array();
	r->state = up;
	r->state_free = upload_free;
	if (gzip && gunzip_new(up) < 0)
		return srv_http_error(r->http, 500, "out of memory");
	srv_http_body_to(r->http, upload_body, up);
	if (ct && strncasecmp(ct, "multipart/form-data", 19) == 0) {
		up->pp = srv_http_post_processor(r->http, 64 * 1024, on_part, up);
		if (!up->pp)
			return srv_http_error(r->http, 400, "a multipart body without a boundary");
	} else if (ct && strncasecmp(ct, "application/octet-stream", 24) != 0) {
		return srv_http_error(r->http, 415,
				      "Content-Type %s: send multipart/form-data or "
				      "application/octet-stream",
				      ct);
	}
	return MHD_YES;
}

enum MHD_Result srv_files_post_end(struct srv_req *r)
{
	struct upload *up = r->state;

	if (up->status)
		return srv_http_error(r->http, up->status, "%s", up->msg);
	if (json_object_array_length(up->done) == 0)
		return srv_http_error(r->http, 400, "no file in the request");
	return srv_http_json(r->http, 200, json_object_get(up->done));
}
