/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ports.c - a sandbox's own ports (E2B's `getHost(port)`): a request for any port but envd's and
 * the code interpreter's is forwarded to a server the sandbox's code runs on its own loopback,
 * through a connection the agent makes inside (cordon_session_connect()), and its answer
 * forwarded back; an `Upgrade` (a WebSocket) answered 101 becomes raw bytes both ways. Runs in
 * the server (connection threads; an upgraded connection's bytes are moved by its own thread,
 * in libmicrohttpd's upgrade handler).
 *
 * Upstream speaks HTTP/1.1, one connection per request ("Connection: close"): 1.1 because an
 * Upgrade and a body of unknown length (sent chunked) need it, and dev servers treat 1.0
 * clients as lesser ones; one connection a request, so that nothing of one client's exchange
 * (a half-read body, a pipelined request) can reach another's. The request's body is passed on
 * as it comes (Content-Length kept, else chunked); the answer's body too: by its length, its
 * chunks (decoded here, libmicrohttpd chunks it again for the client: their sizes are ours), or
 * the connection's end. Hop-by-hop headers are dropped both ways (RFC 9110 7.6.1), and so are
 * the server's own credentials (the access token, the API key, the traffic token): the
 * sandbox's code never sees what lets one drive the sandbox from outside.
 *
 * Bounds (docs/e2b.md "Ports"): the sandbox's server is silent at most SRV_PORT_IDLE_NS while
 * an answer is awaited or read, takes bytes within SRV_PORT_STALL_NS of their offer, and a
 * connection's buffer is fixed (PORT_BUF each way); every wait ends with the sandbox
 * (dying_fd). How many such connections a sandbox may have is the tenant cap of its ports
 * (routes.c: a tenant of their own, beside the sandbox's envd).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"
#include "opts.h"
#include "ports.h"
#include "procs.h"
#include "registry.h"
#include "req.h"
#include "util.h"

#define PORT_BUF      (64u * 1024) /* a head at most; each way's bytes in flight */
#define PORT_MAX_HDRS 256	   /* headers of an answer, at most */

enum body { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_CLOSE };
enum chunk { CH_SIZE, CH_DATA, CH_CRLF, CH_TRAILER, CH_DONE };

struct port {
	struct srv_req *r;
	unsigned port;
	int fd; /* to the sandbox's server */
	int dying_fd, conn_fd;
	bool chunked_up; /* the request's body goes up chunked */
	bool upgrade;	 /* the request asks for one */
	bool head_only;	 /* HEAD: an answer without a body */
	int up_error;	 /* sending the request failed (-errno): the answer may still come */
	char *buf;	 /* from the sandbox's server: buf[off..len) not handed on yet */
	size_t off, len;
	enum body body;
	enum chunk ch;
	uint64_t left; /* BODY_LENGTH: bytes to come; BODY_CHUNKED: of this chunk */
};

static void port_free(void *state)
{
	struct port *p = state;

	if (!p)
		return;
	cd_closep(&p->fd);
	free(p->buf);
	free(p);
}

/* --- the request, upstream --- */

struct head {
	char *s;
	size_t len, cap;
	int failed;
};

static void put(struct head *h, const char *a, const char *b, const char *c)
{
	const char *part[3] = {a, b, c};

	for (int i = 0; i < 3 && !h->failed; i++) {
		size_t n = part[i] ? strlen(part[i]) : 0;

		if (h->len + n + 1 > PORT_BUF) {
			h->failed = E2BIG;
			return;
		}
		memcpy(h->s + h->len, part[i] ? part[i] : "", n);
		h->len += n;
	}
}

/* A token of a comma-separated header value (Connection: keep-alive, Upgrade), any case. */
static bool has_token(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *s = list; s && *s;) {
		s += strspn(s, " \t,");
		if (strncasecmp(s, tok, n) == 0 && (s[n] == '\0' || strchr(" \t,;", s[n])))
			return true;
		s += strcspn(s, ",");
	}
	return false;
}

/* Headers never passed on: hop-by-hop ones (RFC 9110 7.6.1, and the framing we redo), and the
 * server's credentials. */
static const char *const dropped[] = {
    "Connection",
    "Keep-Alive",
    "Proxy-Connection",
    "Proxy-Authorization",
    "Proxy-Authenticate",
    "TE",
    "Trailer",
    "Transfer-Encoding",
    "Upgrade",
    "Content-Length",
    "Expect",
    "X-Access-Token",
    "E2B-Traffic-Access-Token",
    "E2b-Sandbox-Id",
    "E2b-Sandbox-Port",
    "X-API-Key",
};

static bool drop_header(const char *name, const char *connection)
{
	for (size_t i = 0; i < CD_ELEMENTSOF(dropped); i++)
		if (strcasecmp(name, dropped[i]) == 0)
			return true;
	return has_token(connection, name); /* named hop-by-hop by the sender */
}

struct head_ctx {
	struct head *h;
	const char *connection;
	bool bad; /* a header with a control byte (a bare CR: a second header for some parsers) */
};

static bool has_control(const char *s)
{
	for (; s && *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return true;
	return false;
}

static enum MHD_Result add_up_header(void *cls, enum MHD_ValueKind kind, const char *name,
				     const char *value)
{
	struct head_ctx *c = cls;

	(void)kind;
	if (has_control(name) || has_control(value))
		c->bad = true;
	else if (!drop_header(name, c->connection))
		put(c->h, name, ": ", value ? value : ""), put(c->h, "\r\n", NULL, NULL);
	return MHD_YES;
}

/* The request's head for the sandbox's server, in h (PORT_BUF at most). */
static int build_head(struct port *p, struct head *h)
{
	struct srv_http *x = p->r->http;
	const char *connection = srv_http_header(x, "Connection");
	const char *cl = srv_http_header(x, "Content-Length");
	const char *te = srv_http_header(x, "Transfer-Encoding");
	const char *upgrade = srv_http_header(x, "Upgrade");
	struct head_ctx c = {h, connection, false};

	put(h, p->r->method, " ", srv_http_uri(x));
	put(h, " HTTP/1.1\r\n", NULL, NULL);
	srv_http_each_header(x, add_up_header, &c);
	p->upgrade = upgrade && has_token(connection, "upgrade");
	if (p->upgrade)
		put(h, "Connection: Upgrade\r\nUpgrade: ", upgrade, "\r\n");
	else
		put(h, "Connection: close\r\n", NULL, NULL);
	/* a body sent chunked is decoded by libmicrohttpd and goes up chunked again, its
	 * Content-Length (if the client sent both) dropped: never two framings */
	if (te)
		p->chunked_up = true, put(h, "Transfer-Encoding: chunked\r\n", NULL, NULL);
	else if (cl)
		put(h, "Content-Length: ", cl, "\r\n");
	put(h, "\r\n", NULL, NULL);
	if (c.bad)
		return -EBADMSG;
	return h->failed ? -h->failed : 0;
}

static int send_up(struct port *p, const void *data, size_t len)
{
	return srv_write_bounded(p->fd, data, len, p->dying_fd, p->conn_fd, SRV_PORT_STALL_NS);
}

/* The request's body as it comes (data NULL: its end). A sandbox's server that stopped reading
 * (it answered early, or closed) does not fail the request: what it answered is still read. */
static int body_up(void *ctx, const char *data, size_t len)
{
	struct port *p = ctx;
	char size[24];

	if (p->up_error)
		return 0;
	if (!data) {
		if (p->chunked_up)
			p->up_error = send_up(p, "0\r\n\r\n", 5);
		return 0;
	}
	if (p->chunked_up) {
		snprintf(size, sizeof(size), "%zx\r\n", len);
		p->up_error = send_up(p, size, strlen(size));
	}
	if (!p->up_error)
		p->up_error = send_up(p, data, len);
	if (!p->up_error && p->chunked_up)
		p->up_error = send_up(p, "\r\n", 2);
	return 0;
}

static enum MHD_Result connect_error(struct srv_req *r, unsigned port, int k,
				     const struct cordon_error *err)
{
	if (k == -ECONNREFUSED)
		return srv_http_error(r->http, 502,
				      "sandbox %s: nothing listens on port %u "
				      "(127.0.0.1 or ::1 inside the sandbox)",
				      r->sb->id, port);
	if (k == -ECANCELED || k == -ESRCH)
		return srv_http_error(r->http, 502, "sandbox %s is being killed", r->sb->id);
	return srv_http_error(r->http, 502, "sandbox %s: port %u: %s", r->sb->id, port, err->msg);
}

enum MHD_Result srv_ports_begin(struct srv_req *r, unsigned port)
{
	struct cordon_error err = {0};
	struct head h = {0};
	struct port *p = calloc(1, sizeof(*p));
	int k;

	if (!p || !(p->buf = malloc(PORT_BUF))) {
		free(p);
		return srv_http_error(r->http, 500, "out of memory");
	}
	*p = (struct port){.r = r,
			   .port = port,
			   .fd = -1,
			   .dying_fd = r->sb->dying_fd,
			   .conn_fd = srv_http_conn_fd(r->http),
			   .buf = p->buf,
			   .head_only = strcmp(r->method, "HEAD") == 0};
	r->state = p;
	r->state_free = port_free;
	r->handler = srv_ports_run;
	/* a port is a server's, never a proxy: a request for a path only (not "http://host/",
	 * not CONNECT), else a sandbox's egress proxy would be anyone's */
	if (strcmp(r->method, "CONNECT") == 0 || srv_http_uri(r->http)[0] != '/')
		return srv_http_error(r->http, 400, "port %u: only a request for a path is "
				      "forwarded (no CONNECT, no absolute URL: a port is not a proxy)",
				      port);
	k = cordon_session_connect(r->sb->session, port, &p->fd, &err);
	if (k < 0)
		return connect_error(r, port, k, &err);
	h.s = p->buf; /* the answer is not read before the head is sent */
	k = build_head(p, &h);
	if (k == -EBADMSG)
		return srv_http_error(r->http, 400, "a header holds a control character");
	if (k < 0)
		return srv_http_error(r->http, 431, "the request's head is larger than %u KiB",
				      PORT_BUF / 1024);
	k = send_up(p, h.s, h.len);
	if (k < 0)
		return srv_http_error(r->http, 502, "sandbox %s: port %u took no request: %s",
				      r->sb->id, port, strerror(-k));
	srv_http_body_to(r->http, body_up, p);
	return MHD_YES;
}

/* --- the answer, back --- */

/* More bytes from the sandbox's server into buf (the unread ones moved to its start): 1, 0 at
 * its end, or -errno (-ETIMEDOUT: silent for SRV_PORT_IDLE_NS; -ECANCELED: the sandbox ends;
 * -ENOBUFS: buf is full). */
static int read_more(struct port *p)
{
	uint64_t end = cd_now_ns() + SRV_PORT_IDLE_NS;

	if (p->off) {
		memmove(p->buf, p->buf + p->off, p->len - p->off);
		p->len -= p->off;
		p->off = 0;
	}
	if (p->len == PORT_BUF)
		return -ENOBUFS;
	for (;;) {
		struct pollfd f[2] = {{p->fd, POLLIN, 0}, {p->dying_fd, POLLIN, 0}};
		/* MSG_DONTWAIT: the socket's O_NONBLOCK is the sandbox's to clear (the agent
		 * holds the same open file) */
		ssize_t n = recv(p->fd, p->buf + p->len, PORT_BUF - p->len, MSG_DONTWAIT);
		uint64_t now;

		if (n >= 0) {
			p->len += (size_t)n;
			return n > 0;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		now = cd_now_ns();
		if (now >= end)
			return -ETIMEDOUT;
		if (srv_http_peer_gone(p->conn_fd))
			return -ECONNRESET;
		if (poll(f, 2, 1000) > 0 && f[1].revents)
			return -ECANCELED;
	}
}

/* The next line of buf (CRLF or LF ended), NUL-terminated in place; NULL: none whole yet. */
static char *next_line(struct port *p)
{
	char *s = p->buf + p->off, *nl = memchr(s, '\n', p->len - p->off);

	if (!nl)
		return NULL;
	*nl = '\0';
	if (nl > s && nl[-1] == '\r')
		nl[-1] = '\0';
	p->off = (size_t)(nl + 1 - p->buf);
	return s;
}

/* A whole line, read as needed: 1, or 0/-errno as read_more() (0: the end came first) */
static int need_line(struct port *p, char **ret)
{
	int k;

	while (!(*ret = next_line(p)))
		if ((k = read_more(p)) <= 0)
			return k;
	return 1;
}

/* Up to max bytes of the body as it came (buf's first): n, 0 at the end, or -errno. */
static ssize_t take(struct port *p, char *out, size_t max)
{
	size_t n;
	int k;

	if (p->off == p->len) {
		p->off = p->len = 0;
		k = read_more(p);
		if (k <= 0)
			return k;
	}
	n = p->len - p->off < max ? p->len - p->off : max;
	memcpy(out, p->buf + p->off, n);
	p->off += n;
	return (ssize_t)n;
}

/* The chunked body decoded: n bytes of it, 0 at its end, or -errno (-EPROTO: malformed). */
static ssize_t take_chunked(struct port *p, char *out, size_t max)
{
	char *line, *end;
	int k;

	for (;;) {
		switch (p->ch) {
		case CH_SIZE:
			if ((k = need_line(p, &line)) <= 0)
				return k ? k : -EPROTO;
			p->left = strtoull(line, &end, 16);
			if (end == line || (*end && !strchr(" \t;", *end)))
				return -EPROTO;
			p->ch = p->left ? CH_DATA : CH_TRAILER;
			break;
		case CH_DATA: {
			ssize_t n = take(p, out, max < p->left ? max : (size_t)p->left);

			if (n <= 0)
				return n ? n : -EPROTO;
			p->left -= (uint64_t)n;
			if (!p->left)
				p->ch = CH_CRLF;
			return n;
		}
		case CH_CRLF:
			if ((k = need_line(p, &line)) <= 0 || *line)
				return k < 0 ? k : -EPROTO;
			p->ch = CH_SIZE;
			break;
		case CH_TRAILER: /* trailers are not passed on */
			if ((k = need_line(p, &line)) <= 0)
				return k ? k : -EPROTO;
			if (!*line)
				p->ch = CH_DONE;
			break;
		case CH_DONE:
			return 0;
		}
	}
}

static ssize_t body_down(void *cls, uint64_t pos, char *out, size_t max)
{
	struct port *p = cls;
	ssize_t n;

	(void)pos;
	switch (p->body) {
	case BODY_LENGTH:
		if (!p->left)
			return MHD_CONTENT_READER_END_OF_STREAM;
		n = take(p, out, max < p->left ? max : (size_t)p->left);
		if (n > 0)
			p->left -= (uint64_t)n;
		break;
	case BODY_CHUNKED:
		n = take_chunked(p, out, max);
		break;
	case BODY_CLOSE:
		n = take(p, out, max);
		break;
	default:
		n = 0;
	}
	if (n > 0)
		return n;
	if (n == 0 && p->body != BODY_LENGTH)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (srv_opts.verbose)
		srv_log("sandbox %s: port %u: the answer's body ended early: %s", p->r->sb->id,
			p->port, n ? strerror((int)-n) : "the connection closed");
	return MHD_CONTENT_READER_END_WITH_ERROR; /* the client sees it cut short */
}

/* An answer's head: status and headers (name, value pairs in place in buf). */
struct answer {
	unsigned status;
	const char *name[PORT_MAX_HDRS], *value[PORT_MAX_HDRS];
	size_t n;
	const char *connection, *te, *cl;
};

static int parse_header(struct answer *a, char *line)
{
	char *colon = strchr(line, ':'), *v;

	if (!colon || colon == line || strcspn(line, " \t") < (size_t)(colon - line) ||
	    a->n == PORT_MAX_HDRS)
		return -EPROTO;
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	for (char *e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t');)
		*--e = '\0';
	if (strcasecmp(line, "Connection") == 0)
		a->connection = v;
	else if (strcasecmp(line, "Transfer-Encoding") == 0)
		a->te = v;
	else if (strcasecmp(line, "Content-Length") == 0)
		a->cl = v;
	a->name[a->n] = line;
	a->value[a->n++] = v;
	return 0;
}

/* One head: 0, or -errno (-EPROTO malformed, -ENOBUFS too large, -ENODATA: the end first) */
static int read_head(struct port *p, struct answer *a)
{
	char *line;
	unsigned minor;
	int k;

	*a = (struct answer){0};
	k = need_line(p, &line);
	if (k <= 0)
		return k ? k : -ENODATA;
	if (sscanf(line, "HTTP/1.%1u %3u", &minor, &a->status) != 2 || a->status < 100 ||
	    a->status > 999)
		return -EPROTO;
	for (;;) {
		k = need_line(p, &line);
		if (k <= 0)
			return k ? k : -EPROTO;
		if (!*line)
			return 0;
		if (parse_header(a, line) < 0)
			return -EPROTO;
	}
}

/* The answer's framing (RFC 9112 6.3) */
static int framing(struct port *p, const struct answer *a)
{
	char *end;

	if (p->head_only || a->status < 200 || a->status == 204 || a->status == 304) {
		p->body = BODY_NONE;
	} else if (a->te) {
		if (!has_token(a->te, "chunked"))
			return -EPROTO;
		p->body = BODY_CHUNKED;
	} else if (a->cl) {
		p->left = strtoull(a->cl, &end, 10);
		if (end == a->cl || *end)
			return -EPROTO;
		p->body = BODY_LENGTH;
	} else {
		p->body = BODY_CLOSE;
	}
	return 0;
}

static void copy_headers(struct MHD_Response *resp, const struct answer *a, bool upgrade)
{
	for (size_t i = 0; i < a->n; i++) {
		bool keep = upgrade && strcasecmp(a->name[i], "Upgrade") == 0;

		if (keep || !drop_header(a->name[i], a->connection))
			MHD_add_response_header(resp, a->name[i], a->value[i]);
	}
}

/* --- an upgraded connection: bytes both ways --- */

struct way {
	int from, to;
	char *buf;
	size_t off, len;
	bool eof;	   /* from has ended: to is shut for writing once buf is empty */
	uint64_t since_ns; /* buf has waited for to since then */
};

/* Move what can be moved without blocking: 0, or -errno (the connection ends). */
static int move(struct way *w)
{
	ssize_t n;

	if (w->off < w->len) {
		n = send(w->to, w->buf + w->off, w->len - w->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0) {
			w->off += (size_t)n;
			w->since_ns = cd_now_ns();
		}
		if (w->off < w->len)
			return cd_now_ns() - w->since_ns > SRV_PORT_STALL_NS ? -ETIMEDOUT : 0;
		w->off = w->len = 0;
		if (w->eof)
			shutdown(w->to, SHUT_WR);
	}
	if (w->eof)
		return 0;
	n = recv(w->from, w->buf, PORT_BUF, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0) {
		w->eof = true;
		shutdown(w->to, SHUT_WR);
		return 0;
	}
	w->len = (size_t)n;
	w->since_ns = cd_now_ns();
	return move(w); /* at once: it may all go */
}

static short events(const struct way *in, const struct way *out)
{
	return (short)((!in->eof && in->off == in->len ? POLLIN : 0) |
		       (out->off < out->len ? POLLOUT : 0));
}

/* Until both ways have ended, one fails or stalls, the sandbox ends, or no byte moved either
 * way for SRV_PORT_IDLE_NS (an idle connection holds a slot: docs/e2b.md "Connections"). */
static void pump(struct port *p, int client, const char *extra, size_t extra_len)
{
	struct way up = {.from = client, .to = p->fd, .since_ns = cd_now_ns()};
	/* what came after the 101's head first (buf[off..len) of the answer) */
	struct way down = {.from = p->fd,
			   .to = client,
			   .since_ns = cd_now_ns(),
			   .buf = p->buf,
			   .off = p->off,
			   .len = p->len};

	if (down.off == down.len)
		down.off = down.len = 0;
	int k = 0;

	up.buf = malloc(PORT_BUF);
	if (!up.buf || extra_len > PORT_BUF)
		goto out;
	memcpy(up.buf, extra, extra_len);
	up.len = extra_len;
	while (k >= 0 && !(up.eof && down.eof && up.off == up.len && down.off == down.len)) {
		struct pollfd f[3] = {{client, 0, 0}, {p->fd, 0, 0}, {p->dying_fd, POLLIN, 0}};

		k = move(&up);
		if (k >= 0)
			k = move(&down);
		f[0].events = events(&up, &down);
		f[1].events = events(&down, &up);
		if (k >= 0 && poll(f, 3, 1000) < 0 && errno != EINTR)
			k = -errno;
		if (f[2].revents)
			k = -ECANCELED;
		if ((f[0].revents | f[1].revents) & POLLERR)
			k = -ECONNRESET;
		if (k >= 0 && cd_now_ns() - (up.since_ns > down.since_ns ? up.since_ns : down.since_ns) >
				  SRV_PORT_IDLE_NS)
			k = -ETIMEDOUT;
	}
	if (k < 0 && srv_opts.verbose)
		srv_log("sandbox %s: port %u: an upgraded connection ends: %s", p->r->sb->id,
			p->port, strerror(-k));
out:
	free(up.buf);
}

static void on_upgraded(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra,
			size_t extra_len, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct port *p = cls;

	(void)c;
	(void)con_cls;
	pump(p, sock, extra, extra_len);
	cd_closep(&p->fd);
	/* last: libmicrohttpd then ends the request (routes.c frees p) and closes the socket */
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

static enum MHD_Result answer_error(struct port *p, int k)
{
	const char *id = p->r->sb->id;

	if (k == -ETIMEDOUT)
		return srv_http_error(p->r->http, 504,
				      "sandbox %s: port %u did not answer in %llu s", id, p->port,
				      (unsigned long long)(SRV_PORT_IDLE_NS / NSEC_PER_SEC));
	if (k == -ECANCELED)
		return srv_http_error(p->r->http, 502, "sandbox %s is being killed", id);
	if (k == -ENODATA)
		return srv_http_error(p->r->http, 502,
				      "sandbox %s: port %u closed the connection "
				      "without an answer",
				      id, p->port);
	if (k == -EPROTO || k == -ENOBUFS)
		return srv_http_error(p->r->http, 502,
				      "sandbox %s: port %u answered no valid "
				      "HTTP/1 response%s",
				      id, p->port, k == -ENOBUFS ? " (a head over 64 KiB)" : "");
	return srv_http_error(p->r->http, 502, "sandbox %s: port %u: %s", id, p->port,
			      strerror(-k));
}

enum MHD_Result srv_ports_run(struct srv_req *r)
{
	struct port *p = r->state;
	struct answer *a = malloc(sizeof(*a));
	struct MHD_Response *resp;
	unsigned status;
	int k;

	if (!a)
		return srv_http_error(r->http, 500, "out of memory");
	p->off = p->len = 0; /* the request's head is gone: buf is the answer's now */
	do /* an interim answer (100 Continue, 103 Early Hints) is not passed on */
		k = read_head(p, a);
	while (k == 0 && a->status < 200 && a->status != 101);
	if (k == 0 && a->status == 101 && !p->upgrade)
		k = -EPROTO; /* none was asked for */
	if (k == 0)
		k = framing(p, a);
	if (k < 0) {
		free(a);
		return answer_error(p, k);
	}
	if (a->status == 101) {
		resp = MHD_create_response_for_upgrade(on_upgraded, p); /* it says Connection */
	} else if (p->body == BODY_NONE) {
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else {
		resp = MHD_create_response_from_callback(p->body == BODY_LENGTH ? p->left
										: MHD_SIZE_UNKNOWN,
							 32 * 1024, body_down, p, NULL);
	}
	if (resp)
		copy_headers(resp, a, a->status == 101);
	status = a->status;
	free(a);
	if (!resp)
		return srv_http_error(r->http, 500, "out of memory");
	return srv_http_respond(r->http, status, resp);
}
