/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* http.c - the HTTP transport, libmicrohttpd glue: the daemon, a request's head handed to the
 * router (routes.c, which picks the handler), its body gathered or streamed within its limit,
 * its end told to the router; replies and streams. Runs in the server: one thread per
 * connection (handlers may block). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "conns.h"
#include "http.h"
#include "opts.h"
#include "util.h"

/* One request's exchange: what the transport keeps of it, never seen by the router or the
 * handlers (they ask through the functions below). */
struct srv_http {
	struct MHD_Connection *conn;
	const char *method;
	char *url;
	char *uri; /* as the client wrote it: the path and its query string (a port's request) */
	char *body; /* gathered (NUL-terminated), unless body_fn takes it */
	size_t body_len, body_cap;
	srv_http_body_fn body_fn; /* streaming body (uploads): body_ctx's */
	void *body_ctx;
	bool answered; /* a response was queued already (an early error) */
	bool too_big;  /* the body passed its limit (SRV_JSON_BODY_MAX, --max-upload): dropped, then
			* 413 */
	bool no_body;  /* the router said it takes none (what anyone may ask: /health) */
	bool has_body; /* the head announced one (a length above 0, or chunked) */
	bool body_end; /* its end was seen (the request's last call) */
	bool close;    /* the connection is not kept for another request */
	void *req;     /* the router's */
};

static const struct srv_http_router *router; /* set at the start, before any request */

const char *srv_http_method(struct srv_http *h)
{
	return h->method;
}

const char *srv_http_url(struct srv_http *h)
{
	return h->url;
}

const char *srv_http_uri(struct srv_http *h)
{
	return h->uri ? h->uri : h->url;
}

void srv_http_each_header(struct srv_http *h, MHD_KeyValueIterator fn, void *ctx)
{
	MHD_get_connection_values(h->conn, MHD_HEADER_KIND, fn, ctx);
}

enum MHD_Result srv_http_respond(struct srv_http *h, unsigned status, struct MHD_Response *resp)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	if (h->close)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(h->conn, status, resp);
	MHD_destroy_response(resp);
	h->answered = true;
	return ret;
}

const char *srv_http_body(struct srv_http *h, size_t *ret_len)
{
	*ret_len = h->body_len;
	return h->body;
}

void srv_http_body_to(struct srv_http *h, srv_http_body_fn fn, void *ctx)
{
	h->body_fn = fn;
	h->body_ctx = ctx;
}

void srv_http_no_body(struct srv_http *h)
{
	h->no_body = true;
}

void srv_http_close(struct srv_http *h)
{
	h->close = true;
}

bool srv_http_answered(struct srv_http *h)
{
	return h->answered;
}

struct MHD_PostProcessor *srv_http_post_processor(struct srv_http *h, size_t buffer_size,
						  MHD_PostDataIterator iter, void *cls)
{
	return MHD_create_post_processor(h->conn, buffer_size, iter, cls);
}

const char *srv_http_header(struct srv_http *h, const char *name)
{
	return MHD_lookup_connection_value(h->conn, MHD_HEADER_KIND, name);
}

const char *srv_http_query(struct srv_http *h, const char *name)
{
	return MHD_lookup_connection_value(h->conn, MHD_GET_ARGUMENT_KIND, name);
}

int srv_http_conn_fd(struct srv_http *h)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(h->conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
}

/* The client closed its side (or reset): a stream's writer stops instead of blocking. */
bool srv_http_peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	if (fd < 0)
		return false;
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

bool srv_http_tenant(struct srv_http *h, const char *tenant)
{
	return srv_conns_tenant(h->conn, tenant);
}

static enum MHD_Result queue(struct srv_http *h, unsigned status, struct MHD_Response *resp)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (h->too_big || h->close) /* a body drained to answer it, a tenant at its cap */
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(h->conn, status, resp);
	MHD_destroy_response(resp);
	h->answered = true;
	return ret;
}

enum MHD_Result srv_http_text(struct srv_http *h, unsigned status, const char *ctype,
			      const char *text, size_t len)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);

	if (resp && ctype)
		MHD_add_response_header(resp, "Content-Type", ctype);
	return queue(h, status, resp);
}

enum MHD_Result srv_http_owned(struct srv_http *h, unsigned status, const char *ctype, char *text,
			       size_t len)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);

	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", ctype);
	return queue(h, status, resp);
}

enum MHD_Result srv_http_json(struct srv_http *h, unsigned status, json_object *j)
{
	const char *s;
	enum MHD_Result ret;

	if (!j)
		return srv_http_text(h, 500, "application/json",
				     "{\"code\":500,\"message\":\"out of memory\"}", 39);
	s = json_object_to_json_string_ext(j,
					   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	ret = srv_http_text(h, status, "application/json", s, strlen(s));
	json_object_put(j);
	return ret;
}

enum MHD_Result srv_http_json_headers(struct srv_http *h, unsigned status, json_object *j,
				      const char *const *headers)
{
	struct MHD_Response *resp;
	const char *s;

	if (!j)
		return srv_http_json(h, status, j);
	s = json_object_to_json_string_ext(j,
					   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	resp = MHD_create_response_from_buffer(strlen(s), (void *)s, MHD_RESPMEM_MUST_COPY);
	json_object_put(j);
	if (resp)
		MHD_add_response_header(resp, "Content-Type", "application/json");
	for (size_t i = 0; resp && headers && headers[i]; i += 2)
		MHD_add_response_header(resp, headers[i], headers[i + 1]);
	return queue(h, status, resp);
}

enum MHD_Result srv_http_error(struct srv_http *h, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	json_object *j = json_object_new_object();

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (srv_opts.verbose)
		srv_log("%s %s: %u %s", h->method, h->url, status, msg);
	if (j) {
		json_object_object_add(j, "code", json_object_new_int((int)status));
		json_object_object_add(j, "message", json_object_new_string(msg));
	}
	return srv_http_json(h, status, j);
}

enum MHD_Result srv_http_stream(struct srv_http *h, unsigned status, const char *ctype,
				uint64_t size, MHD_ContentReaderCallback read,
				MHD_ContentReaderFreeCallback free_st, void *st)
{
	return srv_http_stream_encoded(h, status, ctype, NULL, size, read, free_st, st);
}

enum MHD_Result srv_http_stream_encoded(struct srv_http *h, unsigned status, const char *ctype,
					const char *encoding, uint64_t size,
					MHD_ContentReaderCallback read,
					MHD_ContentReaderFreeCallback free_st, void *st)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_callback(size, 32 * 1024, read, st, free_st);

	if (!resp) {
		free_st(st);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", ctype);
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	if (encoding) {
		MHD_add_response_header(resp, "Content-Encoding", encoding);
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	}
	return queue(h, status, resp);
}

json_object *srv_http_body_json(struct srv_http *h, const char **ret_why)
{
	json_tokener *tok;
	json_object *j;

	if (h->body_len == 0)
		return json_object_new_object(); /* an empty body: no fields */
	tok = json_tokener_new_ex(32);
	if (!tok) {
		*ret_why = "out of memory";
		return NULL;
	}
	j = json_tokener_parse_ex(tok, h->body, (int)h->body_len);
	if (!j || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != h->body_len) {
		*ret_why = j ? "trailing bytes after the JSON value"
			     : json_tokener_error_desc(json_tokener_get_error(tok));
		json_object_put(j);
		j = NULL;
	} else if (!json_object_is_type(j, json_type_object)) {
		*ret_why = "the body is not a JSON object";
		json_object_put(j);
		j = NULL;
	}
	json_tokener_free(tok);
	return j;
}

static int gather(struct srv_http *h, const char *data, size_t len)
{
	if (h->body_len + len > SRV_JSON_BODY_MAX)
		return -E2BIG;
	if (h->body_len + len + 1 > h->body_cap) {
		size_t cap = h->body_cap ? h->body_cap : 4096;
		char *b;

		while (cap < h->body_len + len + 1)
			cap *= 2;
		b = realloc(h->body, cap);
		if (!b)
			return -ENOMEM;
		h->body = b;
		h->body_cap = cap;
	}
	memcpy(h->body + h->body_len, data, len);
	h->body_len += len;
	h->body[h->body_len] = '\0';
	return 0;
}

/* The 413 of a body over its limit. One sent anyway is read and dropped up to SRV_DRAIN_MAX
 * first: closing on a client still sending makes the kernel reset the connection, and the reset
 * discards the answer on its way (the client saw EPIPE or ECONNRESET instead of the 413). */
static enum MHD_Result too_large(struct srv_http *h)
{
	if (h->body_fn)
		return srv_http_error(h, 413, "the upload is larger than --max-upload (%llu bytes)",
				      (unsigned long long)srv_opts.max_upload);
	return srv_http_error(h, 413, "the body is larger than %u bytes", SRV_JSON_BODY_MAX);
}

/* A declared length over the limit: refused before the body when the client waits for
 * Expect: 100-continue (it sends nothing more) or the length is past what is worth draining;
 * otherwise the body is dropped as it comes and the 413 comes at its end, as for a chunked body
 * counted as it comes (gather()). */
static enum MHD_Result check_length(struct srv_http *h)
{
	const char *cl = srv_http_header(h, "Content-Length");
	const char *expect = srv_http_header(h, "Expect");
	unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
	unsigned long long max = h->body_fn ? srv_opts.max_upload : SRV_JSON_BODY_MAX;

	/* what anyone may ask (/health) takes no body: none is read, gathered or drained */
	if (h->no_body && h->has_body)
		return srv_http_error(h, 413, "%s takes no body", h->url);
	if (n <= max)
		return MHD_YES;
	if ((expect && strcasecmp(expect, "100-continue") == 0) || n > SRV_DRAIN_MAX)
		return too_large(h);
	h->too_big = true;
	return MHD_YES;
}

static bool announces_body(struct srv_http *h)
{
	const char *cl = srv_http_header(h, "Content-Length");

	return (cl && strtoull(cl, NULL, 10) > 0) || srv_http_header(h, "Transfer-Encoding");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct srv_http *h = *con_cls;
	int k;

	(void)cls;
	(void)version;
	if (!h || !h->conn) {
		if (!h)
			h = calloc(1, sizeof(*h));
		if (!h)
			return MHD_NO;
		h->conn = conn;
		h->method = method;
		h->url = strdup(url);
		*con_cls = h;
		if (!h->url)
			return MHD_NO;
		h->has_body = announces_body(h);
		if (router->begin(h, &h->req) == MHD_NO)
			return MHD_NO;
		return h->answered ? MHD_YES : check_length(h);
	}
	if (*data_size) {
		size_t n = *data_size;

		*data_size = 0;
		if (h->answered)
			return MHD_YES; /* an early error was queued: the rest is dropped */
		if (h->too_big) {	/* counted and dropped; the 413 comes at the end */
			h->body_len += n;
			return h->body_len > SRV_DRAIN_MAX ? MHD_NO : MHD_YES;
		}
		k = h->body_fn ? h->body_fn(h->body_ctx, data, n) : gather(h, data, n);
		if (k == -E2BIG && !h->body_fn)
			h->too_big = true;
		else if (k < 0)
			return MHD_NO; /* out of memory */
		return MHD_YES;
	}
	h->body_end = true;
	if (h->answered)
		return MHD_YES;
	if (h->too_big)
		return too_large(h);
	if (h->body_fn && h->body_fn(h->body_ctx, NULL, 0) < 0 && h->answered)
		return MHD_YES;
	return router->run(h->req);
}

/* A request answered before its body was read (no credentials, /health given one, a declared
 * length refused at once) is closed while the client may still be sending; closing a socket with
 * unread data makes the kernel reset the connection, and the reset can discard the answer before
 * the client reads it (curl saw status 000 one time in twelve). So our side ends after the
 * answer (FIN), and what still comes is read and dropped until the client closes, for at most
 * LINGER_MS and LINGER_MAX bytes: a lingering close. It holds this connection's thread and
 * socket, nothing of the request's (its sandbox, a port's buffer: let go first). */
#define LINGER_MS 2000
#define LINGER_MAX (4ull * SRV_JSON_BODY_MAX)

static void linger(int fd)
{
	char buf[16384];
	unsigned long long got = 0;
	uint64_t end = cd_now_ns() + LINGER_MS * 1000000ull, now;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	if (fd < 0 || shutdown(fd, SHUT_WR) < 0)
		return;
	while (got < LINGER_MAX && (now = cd_now_ns()) < end) {
		if (poll(&p, 1, (int)((end - now) / 1000000 + 1)) <= 0)
			return;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return;
		if (n > 0)
			got += (unsigned long long)n;
	}
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct srv_http *h = *con_cls;
	int fd;

	(void)cls;
	srv_conns_request_done(conn);
	if (!h)
		return;
	fd = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && h->answered && h->has_body &&
		     !h->body_end
		 ? srv_http_conn_fd(h)
		 : -1;
	if (h->req)
		router->end(h->req); /* the sandbox it names let go before any linger */
	free(h->body);
	free(h->url);
	free(h->uri);
	free(h);
	*con_cls = NULL;
	linger(fd);
}

/* The request's URI as it came, query string and all (the handler's url has none): kept in the
 * exchange the first on_request() then fills; a request given its first chunk without it is
 * served from the url alone. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct srv_http *h = calloc(1, sizeof(*h));

	(void)cls;
	(void)conn;
	if (h)
		h->uri = strdup(uri);
	return h;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	if (srv_opts.verbose) {
		fputs("cordon: serve: http: ", stderr);
		vfprintf(stderr, fmt, ap);
	}
}

static int listen_unix(const char *path, struct cordon_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return cd_fail(err, ENAMETOOLONG, "--socket", "%s: the path is too long", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cd_fail_errno(err, errno, "--socket", "socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return cd_fail_errno(err, errno, "--socket", "bind %s", path);
	if (listen(fd, 128) < 0)
		return cd_fail_errno(err, errno, "--socket", "listen on %s", path);
	return CD_TAKE_FD(fd);
}

static int listen_inet(struct sockaddr_storage *ss, socklen_t *ret_len, struct cordon_error *err)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, srv_opts.listen_host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)srv_opts.listen_port);
		*ret_len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, srv_opts.listen_host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)srv_opts.listen_port);
		*ret_len = sizeof(*s6);
		return 0;
	}
	return cd_fail(err, 0, "--listen", "\"%s\" is not an IP address", srv_opts.listen_host);
}

int srv_http_start(const struct srv_http_router *rt, struct MHD_Daemon **ret,
		   struct cordon_error *err)
{
	/* poll(), not select(): a descriptor past FD_SETSIZE (1024) must not refuse connections
	 * (one sandbox's followed processes could otherwise deny every other tenant) */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE;
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	int fd = -1, r;
	struct MHD_Daemon *d;

	if (srv_opts.socket_path) {
		fd = listen_unix(srv_opts.socket_path, err);
		if (fd < 0)
			return fd;
	} else {
		r = listen_inet(&ss, &sl, err);
		if (r < 0)
			return r;
		if (ss.ss_family == AF_INET6)
			flags |= MHD_USE_IPv6;
	}
	struct MHD_OptionItem listen_opt[] = {
	    fd >= 0 ? (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, fd, NULL}
		    : (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &ss},
	    {MHD_OPTION_END, 0, NULL},
	};

	router = rt;
	r = srv_conns_start(err);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	d = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_uri,
	    NULL, MHD_OPTION_NOTIFY_CONNECTION,
	    srv_conns_notify, NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
	    MHD_OPTION_CONNECTION_LIMIT, srv_conns_mhd_limit(), MHD_OPTION_THREAD_STACK_SIZE,
	    (size_t)(256 * 1024), MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
	    MHD_OPTION_ARRAY, listen_opt, MHD_OPTION_END);
	if (!d) {
		if (fd >= 0)
			close(fd);
		if (srv_opts.socket_path)
			return cd_fail(err, 0, "listen", "cannot serve on %s",
				       srv_opts.socket_path);
		return cd_fail(err, 0, "listen", "cannot listen on %s port %u (in use?)",
			       srv_opts.listen_host, srv_opts.listen_port);
	}
	*ret = d;
	return 0;
}
