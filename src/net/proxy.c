/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proxy.c - the egress proxy: one epoll loop in the supervisor. A connection goes
 *   HEAD     read the request head (bounded, CD_HTTP_HEAD_MAX), decide on the allow-list
 *   RESOLVE  c-ares looks the name up; addresses a name may not reach are dropped (rebinding)
 *   CONNECT  non-blocking connect() to each address in turn
 *   TUNNEL   bytes both ways with splice() through a pipe per direction (bounded, no copies)
 *   LINGER   a refusal was sent: read and drop what the client still sends, so that closing
 *            does not reset the connection before the client has read the answer
 * Both decisions, before the lookup and on its addresses, are cd_allow_decide's (allow.c, pure):
 * this file only carries them out. Refusals answer one line, "cordon: <why>". Each connection
 * ends in one audit event.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cares.h"
#include "hostaddr.h"
#include "httpreq.h"
#include "socks.h"
#include "proxy.h"
#include "util.h"

#define PIPE_SIZE   (256 << 10)
#define CLIENT_SNDBUF (256 << 10)
#define MAX_ARES_FD 16
#define TICK_NS     (NSEC_PER_SEC / 4)
#define LINGER_NS   (NSEC_PER_SEC)
#define CONNECT_NS  (10 * NSEC_PER_SEC) /* each address; then the next one */
#define ACCEPT_BATCH 64

enum ev_kind { EV_LISTEN, EV_TIMER, EV_ARES, EV_CLIENT, EV_SERVER };
enum state { ST_HEAD, ST_RESOLVE, ST_CONNECT, ST_TUNNEL, ST_LINGER };

struct conn;

struct ev {
	enum ev_kind kind;
	struct conn *c;
	int fd;
};

struct dir {
	int pipe[2];
	size_t cap; /* the pipe's size */
	size_t queued;
	bool eof, shut;
	uint64_t bytes;
};

struct conn {
	struct cd_proxy *p;
	struct conn *prev, *next;
	enum state st;
	int cfd, sfd;
	struct ev cev, sev;
	uint32_t cmask, smask; /* epoll interest now */
	bool socks, socks_greeted; /* SOCKS5 instead of HTTP (the first byte is 5) */
	uint8_t socks_code;        /* the SOCKS5 reply of a refusal; 0: from the HTTP status */
	bool cfd_done, sfd_done;   /* out of the epoll set: both its directions finished */
	char head[CD_HTTP_HEAD_MAX];
	size_t hlen;
	struct cd_http_req req;
	char name[256];
	char *out; /* bytes for the server before the tunnel: the rewritten head, early data */
	size_t out_len, out_off;
	struct sockaddr_storage addrs[CD_ALLOW_MAX_DIAL];
	size_t n_addrs, next_addr;
	int connect_errno;
	struct dir up, down;
	uint64_t t_start, t_active;
	bool resolving; /* a lookup will call back: not to be freed before */
	bool closed;    /* in the graveyard, freed at the end of the batch */
	int status;
	const char *decision;
	char reason[256];
	char client[64];
	char address[INET6_ADDRSTRLEN];
};

struct cd_proxy {
	struct cd_proxy_opts o;
	int epfd, lfd, tfd;
	struct ev lev, tev;
	struct ev ares_ev[MAX_ARES_FD];
	struct cd_addr_list own; /* the host's own addresses, read at the start (rebinding) */
	const struct cd_cares *ca; /* c-ares, loaded by start_resolver() */
	ares_channel ares;
	bool ares_up;
	struct conn *conns, *graveyard;
	unsigned n_conns;     /* open, lingering ones included: each holds fds */
	unsigned n_lookups;   /* lookups in flight, of closed connections too: they count */
	unsigned cap;         /* max_conns, or fewer when RLIMIT_NOFILE allows fewer */
	bool accept_paused;   /* at the cap, or out of fds: the listener is out of the loop */
	bool ticking;
	struct cordon_proxy_counts st;
	char **noticed;       /* HOST:PORT already told of a refusal */
	size_t n_noticed;
	bool notice_full;
};

#define MAX_NOTICED 1024 /* refused hosts told of; past them, one last line says so */

/* A refusal the user must see without -v (a tool may turn a 403 into a misleading message of
 * its own): one line per host and port. */
static void notice_refusal(struct cd_proxy *p, const char *host, bool v6, unsigned port,
			   const char *why)
{
	char hp[300], line[1024];
	char **v;

	if (!p->o.notice || p->notice_full)
		return;
	snprintf(hp, sizeof(hp), "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
	for (size_t i = 0; i < p->n_noticed; i++)
		if (strcmp(p->noticed[i], hp) == 0)
			return;
	if (p->n_noticed == MAX_NOTICED) {
		p->notice_full = true;
		p->o.notice(p->o.notice_data, "egress refused: more hosts, not told one by one");
		return;
	}
	v = reallocarray(p->noticed, p->n_noticed + 1, sizeof(*v));
	if (!v)
		return;
	p->noticed = v;
	p->noticed[p->n_noticed] = strdup(hp);
	if (!p->noticed[p->n_noticed])
		return;
	p->n_noticed++;
	snprintf(line, sizeof(line), "egress refused: %s: %s", hp, why);
	p->o.notice(p->o.notice_data, line);
}

static void set_mask(struct cd_proxy *p, int fd, struct ev *ev, uint32_t *cur, uint32_t want)
{
	struct epoll_event e = { .events = want, .data.ptr = ev };

	if (*cur != want && epoll_ctl(p->epfd, EPOLL_CTL_MOD, fd, &e) == 0)
		*cur = want;
}

static unsigned busy(const struct cd_proxy *p)
{
	return p->n_conns + p->n_lookups;
}

/* Take the listener out of the loop at the cap or when out of fds; back once there is room.
 * Clients wait in the listen backlog meanwhile. */
static void pause_accept(struct cd_proxy *p, bool pause)
{
	struct epoll_event e = { .events = pause ? 0 : EPOLLIN, .data.ptr = &p->lev };

	if (p->accept_paused != pause && epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->lfd, &e) == 0)
		p->accept_paused = pause;
}

static void tick(struct cd_proxy *p, bool on)
{
	struct itimerspec its = { 0 };

	if (p->ticking == on)
		return;
	if (on)
		its.it_value.tv_nsec = its.it_interval.tv_nsec = (long)TICK_NS;
	timerfd_settime(p->tfd, 0, &its, NULL);
	p->ticking = on;
}

/* --- the end of a connection --- */

static void audit_conn(const struct conn *c)
{
	const struct cd_audit *a = c->p->o.audit;
	struct cd_json j;

	if (!a || !cd_audit_on(a))
		return;
	cd_audit_begin(a, &j, "net");
	cd_json_kv_string(&j, "client", c->client);
	cd_json_kv_string(&j, "protocol", c->socks ? "socks5" : !c->req.method[0] ? "unknown"
					  : c->req.connect ? "connect" : "http");
	if (c->req.method[0])
		cd_json_kv_string(&j, "method", c->req.method);
	if (c->req.host[0]) {
		cd_json_kv_string(&j, "host", c->req.host);
		cd_json_kv_uint(&j, "port", c->req.port);
	}
	if (c->address[0])
		cd_json_kv_string(&j, "address", c->address);
	cd_json_kv_string(&j, "decision", c->decision ? c->decision : "closed");
	if (c->status)
		cd_json_kv_int(&j, "status", c->status);
	if (c->reason[0])
		cd_json_kv_string(&j, "reason", c->reason);
	cd_json_kv_uint(&j, "bytes_up", c->up.bytes);
	cd_json_kv_uint(&j, "bytes_down", c->down.bytes);
	cd_json_kv_uint(&j, "duration_ms", (cd_now_ns() - c->t_start) / 1000000);
	cd_audit_end(a, &j);
}

static void log_conn(const struct conn *c)
{
	const struct cd_proxy_opts *o = &c->p->o;
	char line[1024];

	if (!o->log)
		return;
	snprintf(line, sizeof(line), "net: %s %s%s%s:%u: %s%s%s (%llu bytes up, %llu down)",
		 c->socks ? "SOCKS5" : c->req.method[0] ? c->req.method : "?",
		 c->req.host_is_v6 ? "[" : "", c->req.host[0] ? c->req.host : "-",
		 c->req.host_is_v6 ? "]" : "", c->req.port, c->decision ? c->decision : "closed",
		 c->reason[0] ? ": " : "", c->reason, (unsigned long long)c->up.bytes,
		 (unsigned long long)c->down.bytes);
	o->log(o->log_data, line);
}

/* A short answer to the client: it fits in an empty socket buffer, or the client is gone. */
static void say(const struct conn *c, const void *buf, size_t n)
{
	send(c->cfd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void conn_close(struct conn *c)
{
	struct cd_proxy *p = c->p;

	audit_conn(c);
	log_conn(c);
	p->st.bytes_up += c->up.bytes;
	p->st.bytes_down += c->down.bytes;
	c->cfd = cd_safe_close(c->cfd); /* close() takes them out of the epoll set */
	c->sfd = cd_safe_close(c->sfd);
	for (int i = 0; i < 2; i++) {
		c->up.pipe[i] = cd_safe_close(c->up.pipe[i]);
		c->down.pipe[i] = cd_safe_close(c->down.pipe[i]);
	}
	free(CD_TAKE_PTR(c->out));
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->n_conns--;
	if (!busy(p))
		tick(p, false);
	if (busy(p) < p->cap)
		pause_accept(p, false);
	/* events of this batch may still name it: freed by reap() after the batch */
	c->closed = true;
	c->prev = NULL;
	c->next = p->graveyard;
	p->graveyard = c;
}

static void reap(struct cd_proxy *p)
{
	struct conn **pp = &p->graveyard;

	while (*pp) {
		struct conn *c = *pp;

		if (c->resolving) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		free(c);
	}
}

/* SOCKS5 has no text: the reply code closest to the HTTP status (the reason is audited). */
static void socks_refuse(struct conn *c, int status)
{
	uint8_t reply[10];
	uint8_t code = status == 403 ? CD_SOCKS_NOT_ALLOWED
		       : status == 502 || status == 504 ? CD_SOCKS_UNREACHABLE : CD_SOCKS_FAILURE;

	if (status == 502 && c->connect_errno == ECONNREFUSED)
		code = CD_SOCKS_REFUSED;
	if (c->socks_code)
		code = c->socks_code;
	if (!c->socks_greeted)
		return; /* no request yet: nothing to answer */
	cd_socks_reply(code, reply);
	say(c, reply, sizeof(reply));
}

/* Answer the client with status and one line (SOCKS5: a reply code), then linger until it
 * closes. */
static void refuse(struct conn *c, int status, const char *fmt, ...) _printf_(3, 4);
static void refuse(struct conn *c, int status, const char *fmt, ...)
{
	static const struct {
		int status;
		const char *text, *decision;
		size_t counter; /* in struct cordon_proxy_counts */
	} codes[] = {
		{ 400, "Bad Request", "malformed", offsetof(struct cordon_proxy_counts, malformed) },
		{ 403, "Forbidden", "refused", offsetof(struct cordon_proxy_counts, refused) },
		{ 408, "Request Timeout", "timeout", offsetof(struct cordon_proxy_counts, timed_out) },
		{ 502, "Bad Gateway", "failed", offsetof(struct cordon_proxy_counts, failed) },
		{ 504, "Gateway Timeout", "failed", offsetof(struct cordon_proxy_counts, failed) },
	};
	struct cd_proxy *p = c->p;
	size_t k = 0;
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	while (k + 1 < CD_ELEMENTSOF(codes) && codes[k].status != status)
		k++;
	c->status = status;
	c->decision = codes[k].decision;
	*(uint64_t *)((char *)&p->st + codes[k].counter) += 1;
	if (c->socks)
		socks_refuse(c, status);
	else {
		n = snprintf(msg, sizeof(msg),
			     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			     "Connection: close\r\n\r\ncordon: %s\n",
			     status, codes[k].text, strlen(c->reason) + 9, c->reason);
		say(c, msg, (size_t)n);
	}
	shutdown(c->cfd, SHUT_WR);
	c->sfd = cd_safe_close(c->sfd);
	c->st = ST_LINGER;
	c->t_active = cd_now_ns();
	set_mask(p, c->cfd, &c->cev, &c->cmask, EPOLLIN);
}

/* --- the tunnel --- */

static int make_pipe(struct dir *d)
{
	int size;

	if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -errno;
	fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_SIZE); /* a smaller one works too */
	size = fcntl(d->pipe[1], F_GETPIPE_SZ);
	d->cap = size > 0 ? (size_t)size : 4096;
	return 0;
}

/* Move what can be moved from -> to, reading while the pipe has room and writing while it has
 * data, so that neither side waits for the other; sets *need_in / *need_out for what it waits
 * on. Bounded: at most 16 rounds a call (the loop is level-triggered: it comes back). */
static int move(struct conn *c, struct dir *d, int from, int to, bool *need_in, bool *need_out)
{
	bool in_blocked = false, out_blocked = false;

	for (int i = 0; i < 16; i++) {
		bool progress = false;
		ssize_t n;

		if (d->queued && !out_blocked) {
			n = splice(d->pipe[0], NULL, to, NULL, d->queued,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0) {
				d->queued -= (size_t)n, d->bytes += (uint64_t)n;
				c->t_active = cd_now_ns();
				progress = true;
			} else if (n < 0 && errno == EAGAIN) {
				out_blocked = true;
			} else {
				return n < 0 ? -errno : -EPIPE;
			}
		}
		if (!d->eof && !in_blocked && d->queued < d->cap) {
			n = splice(from, NULL, d->pipe[1], NULL, d->cap - d->queued,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0) {
				d->queued += (size_t)n;
				progress = true;
			} else if (n == 0) {
				d->eof = true;
				progress = true;
			} else if (errno == EAGAIN) {
				in_blocked = true;
			} else {
				return -errno;
			}
		}
		if (!progress)
			break;
	}
	*need_out = d->queued > 0; /* blocked, or stopped for fairness: wait for room */
	*need_in = !d->eof && d->queued < d->cap;
	if (d->eof && !d->queued && !d->shut) {
		shutdown(to, SHUT_WR);
		d->shut = true;
	}
	return 0;
}

/* What the proxy still owes the server before the tunnel proper: 0 once sent. */
static int flush_out(struct conn *c)
{
	while (c->out && c->out_off < c->out_len) {
		ssize_t n = send(c->sfd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN ? 1 : -errno;
		c->out_off += (size_t)n;
		c->up.bytes += (uint64_t)n;
	}
	return 0;
}

static void pump(struct conn *c)
{
	bool up_in = false, up_out = false, down_in = false, down_out = false;
	int r = flush_out(c);

	if (r == 1)
		up_out = true;
	else if (r == 0)
		r = move(c, &c->up, c->cfd, c->sfd, &up_in, &up_out);
	if (r >= 0)
		r = move(c, &c->down, c->sfd, c->cfd, &down_in, &down_out);
	if (r < 0 || (c->up.shut && c->down.shut)) {
		conn_close(c);
		return;
	}
	if (!c->cfd_done)
		set_mask(c->p, c->cfd, &c->cev, &c->cmask,
			 (up_in ? EPOLLIN : 0) | (down_out ? EPOLLOUT : 0));
	if (!c->sfd_done)
		set_mask(c->p, c->sfd, &c->sev, &c->smask,
			 (down_in ? EPOLLIN : 0) | (up_out ? EPOLLOUT : 0));
}

/* A side whose both directions are finished leaves the epoll set (else its EPOLLHUP would
 * come back forever); an error, or a hang-up while there is still something to move through
 * that side, ends the connection. */
static void tunnel_event(struct conn *c, bool server, uint32_t events)
{
	int fd = server ? c->sfd : c->cfd;
	bool done;

	if (events & EPOLLERR) {
		snprintf(c->reason, sizeof(c->reason), "the %s reset the connection",
			 server ? "server" : "client");
		conn_close(c);
		return;
	}
	pump(c);
	if (c->closed || !(events & EPOLLHUP))
		return;
	done = server ? c->down.eof && c->up.shut : c->up.eof && c->down.shut;
	if (!done) {
		snprintf(c->reason, sizeof(c->reason), "the %s hung up", server ? "server" : "client");
		conn_close(c);
		return;
	}
	epoll_ctl(c->p->epfd, EPOLL_CTL_DEL, fd, NULL);
	*(server ? &c->sfd_done : &c->cfd_done) = true;
}

static void start_tunnel(struct conn *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	int r = make_pipe(&c->up);

	if (r == 0)
		r = make_pipe(&c->down);
	if (r < 0) {
		refuse(c, 502, "out of resources for %s:%u: %s", c->req.host, c->req.port,
		       strerror(-r));
		return;
	}
	c->st = ST_TUNNEL;
	c->decision = "allowed";
	c->status = c->req.connect ? 200 : 0;
	c->p->st.allowed++;
	c->t_active = cd_now_ns();
	if (c->socks) {
		uint8_t reply[10];

		cd_socks_reply(CD_SOCKS_OK, reply);
		say(c, reply, sizeof(reply));
	} else if (c->req.connect) {
		say(c, ok, sizeof(ok) - 1);
	}
	pump(c);
}

/* --- connecting --- */

static void connect_next(struct conn *c)
{
	struct cd_proxy *p = c->p;

	while (c->next_addr < c->n_addrs) {
		struct sockaddr_storage *a = &c->addrs[c->next_addr++];
		socklen_t len = a->ss_family == AF_INET ? sizeof(struct sockaddr_in)
							: sizeof(struct sockaddr_in6);
		struct epoll_event e = { .events = EPOLLOUT, .data.ptr = &c->sev };

		c->sfd = cd_safe_close(c->sfd);
		cd_addr_str((struct sockaddr *)a, c->address, sizeof(c->address));
		c->sfd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->sfd < 0 || (connect(c->sfd, (struct sockaddr *)a, len) < 0 &&
				   errno != EINPROGRESS)) {
			c->connect_errno = errno;
			continue;
		}
		if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, c->sfd, &e) < 0) {
			c->connect_errno = errno;
			continue;
		}
		c->smask = EPOLLOUT;
		c->st = ST_CONNECT;
		c->t_active = cd_now_ns();
		return;
	}
	refuse(c, 502, "cannot connect to %s:%u (%s): %s", c->req.host, c->req.port, c->address,
	       strerror(c->connect_errno ? c->connect_errno : ECONNREFUSED));
}

static void on_connected(struct conn *c)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (getsockopt(c->sfd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		e = errno;
	if (e == EINPROGRESS || e == EALREADY)
		return;
	if (e) {
		c->connect_errno = e;
		connect_next(c);
		return;
	}
	start_tunnel(c);
}

/* --- deciding --- */

static void resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res);

/* Carry out what cd_allow_decide (the one place that decides) said, before the lookup or on its
 * addresses. */
static void act(struct conn *c, enum cd_verdict v, const struct cd_decision *d)
{
	struct ares_addrinfo_hints hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };

	switch (v) {
	case CD_VERDICT_DIAL:
		memcpy(c->addrs, d->addrs, d->n_addrs * sizeof(d->addrs[0]));
		c->n_addrs = d->n_addrs;
		connect_next(c);
		break;
	case CD_VERDICT_RESOLVE:
		snprintf(c->name, sizeof(c->name), "%s", d->host);
		c->st = ST_RESOLVE;
		c->resolving = true;
		c->p->n_lookups++;
		/* may call back now */
		c->p->ca->getaddrinfo(c->p->ares, c->name, NULL, &hints, resolved, c);
		break;
	case CD_VERDICT_REFUSE:
		notice_refusal(c->p, d->host, c->req.host_is_v6, c->req.port, d->notice);
		refuse(c, 403, "%s", d->reason);
		break;
	case CD_VERDICT_BAD_NAME:
		refuse(c, 400, "%s", d->reason);
		break;
	case CD_VERDICT_NO_ADDRESS:
		refuse(c, 502, "cannot resolve %s: %s", c->name, c->p->ca->strerror(ARES_ENODATA));
		break;
	}
}

/* The lookup's IPv4 and IPv6 addresses, in its order, for the decision (NULL: out of memory). */
static struct sockaddr_storage *gather(const struct ares_addrinfo *res, size_t *ret_n)
{
	struct sockaddr_storage *v;
	size_t n = 0, max = 1;

	for (const struct ares_addrinfo_node *a = res ? res->nodes : NULL; a; a = a->ai_next)
		max++;
	v = calloc(max, sizeof(*v));
	if (!v)
		return NULL;
	for (const struct ares_addrinfo_node *a = res ? res->nodes : NULL; a; a = a->ai_next)
		if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) &&
		    a->ai_addrlen <= sizeof(*v))
			memcpy(&v[n++], a->ai_addr, a->ai_addrlen);
	*ret_n = n;
	return v;
}

/* c-ares calls back with the name's addresses: they are gathered, and decided on. */
static void resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct conn *c = arg;
	const struct cd_proxy_opts *o = &c->p->o;
	_cleanup_free_ struct sockaddr_storage *addrs = NULL;
	struct cd_addr_list l = { 0 };
	struct cd_decision d;

	(void)timeouts;
	c->resolving = false;
	c->p->n_lookups--;
	if (busy(c->p) < c->p->cap)
		pause_accept(c->p, false);
	if (c->closed || status != ARES_SUCCESS) {
		c->p->ca->freeaddrinfo(res);
		if (!c->closed)
			refuse(c, 502, "cannot resolve %s: %s", c->name, c->p->ca->strerror(status));
		return;
	}
	addrs = gather(res, &l.n);
	c->p->ca->freeaddrinfo(res);
	if (!addrs) {
		refuse(c, 502, "out of memory");
		return;
	}
	l.addrs = addrs;
	act(c, cd_allow_decide(o->allow, o->n_allow, &c->p->own, c->req.host, c->req.host_is_v6,
			       c->req.port, &l, &d),
	    &d);
}

/* Bytes the server gets before the tunnel: the rewritten head for plain HTTP, and whatever
 * the client sent after the head. */
static int prepare_out(struct conn *c)
{
	size_t extra = c->hlen - c->req.head_len, n = 0;
	char *out = NULL;

	if (!c->req.connect && !(out = cd_http_origin_head(c->head, &c->req, &n)))
		return -ENOMEM;
	c->out = realloc(out, n + extra + 1);
	if (!c->out) {
		free(out);
		return -ENOMEM;
	}
	memcpy(c->out + n, c->head + c->req.head_len, extra);
	c->out_len = n + extra;
	return 0;
}

static void decide(struct conn *c)
{
	const struct cd_proxy_opts *o = &c->p->o;
	struct cd_decision d;

	set_mask(c->p, c->cfd, &c->cev, &c->cmask, 0); /* nothing more from the client for now */
	if (prepare_out(c) < 0) {
		refuse(c, 502, "out of memory");
		return;
	}
	act(c, cd_allow_decide(o->allow, o->n_allow, &c->p->own, c->req.host, c->req.host_is_v6,
			       c->req.port, NULL, &d),
	    &d);
}

/* SOCKS5: the greeting (answered at once), then the request. */
static void socks_step(struct conn *c)
{
	static const uint8_t noauth[2] = { 5, 0 }, nomethod[2] = { 5, 0xff };
	const uint8_t *b = (const uint8_t *)c->head;
	const char *why = NULL;
	size_t used = 0;
	bool ok = false;
	int r;

	c->socks = true;
	if (!c->socks_greeted) {
		r = cd_socks_greeting(b, c->hlen, &used, &ok);
		if (r == 0)
			return;
		if (r < 0 || !ok) {
			if (r > 0)
				say(c, nomethod, sizeof(nomethod));
			refuse(c, 400, "%s", r < 0 ? "malformed SOCKS5 greeting"
						  : "the SOCKS5 client offers no \"no authentication\"");
			return;
		}
		say(c, noauth, sizeof(noauth));
		c->socks_greeted = true;
		memmove(c->head, c->head + used, c->hlen - used);
		c->hlen -= used;
	}
	r = cd_socks_request(b, c->hlen, &c->req, &used, &c->socks_code, &why);
	if (r < 0) {
		refuse(c, 400, "malformed request: %s", why);
	} else if (r > 0) {
		decide(c);
	}
}

static void read_head(struct conn *c)
{
	const char *why = NULL;
	ssize_t n = recv(c->cfd, c->head + c->hlen, sizeof(c->head) - c->hlen, MSG_DONTWAIT);
	int r;

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		conn_close(c); /* gone before asking anything */
		return;
	}
	c->hlen += (size_t)n;
	c->t_active = cd_now_ns();
	if (c->socks || (uint8_t)c->head[0] == 5) {
		socks_step(c);
		return;
	}
	r = cd_http_parse(c->head, c->hlen, &c->req, &why);
	if (r < 0) {
		c->req.method[0] = c->req.host[0] = '\0';
		refuse(c, 400, "malformed request: %s", why);
	} else if (r > 0) {
		decide(c);
	}
}

static void linger(struct conn *c)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(c->cfd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	if (n == 0 || errno != EAGAIN)
		conn_close(c);
}

/* --- the loop --- */

static void on_conn_event(struct conn *c, bool server, uint32_t events)
{
	/* the client reset the connection while we look up or connect */
	if (!server && (events & (EPOLLERR | EPOLLHUP)) &&
	    (c->st == ST_RESOLVE || c->st == ST_CONNECT)) {
		snprintf(c->reason, sizeof(c->reason), "the client went away");
		conn_close(c);
		return;
	}
	switch (c->st) {
	case ST_HEAD:
		read_head(c);
		break;
	case ST_RESOLVE:
		break;
	case ST_CONNECT:
		if (server)
			on_connected(c);
		break;
	case ST_TUNNEL:
		tunnel_event(c, server, events);
		break;
	case ST_LINGER:
		linger(c);
		break;
	}
}

/* Over the cap: answer 503 and close at once (nothing read yet: the answer is not reset). */
static void over_cap(struct cd_proxy *p, int fd, const char *client)
{
	char body[96], msg[256];
	int b = snprintf(body, sizeof(body),
			 "cordon: more connections at once than the proxy allows (%u)\n", p->cap);
	int n = snprintf(msg, sizeof(msg),
			 "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
			 b, body);
	struct conn c = { .p = p, .decision = "over-cap", .status = 503 };

	send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	snprintf(c.client, sizeof(c.client), "%s", client);
	snprintf(c.reason, sizeof(c.reason), "more than %u connections at once", p->cap);
	c.t_start = cd_now_ns();
	audit_conn(&c);
	p->st.connections++;
	p->st.over_cap++;
}

static void accept_all(struct cd_proxy *p)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct sockaddr_storage peer;
		socklen_t len = sizeof(peer);
		int fd = accept4(p->lfd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event e = { .events = EPOLLIN };
		char addr[INET6_ADDRSTRLEN], client[64];
		struct conn *c;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				pause_accept(p, true); /* until a connection closes */
			return;
		}
		/* the host's kernel memory a client that does not read can pin: loopback needs no
		 * large send buffer (the kernel doubles this for its bookkeeping) */
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ CLIENT_SNDBUF }, sizeof(int));
		snprintf(client, sizeof(client), "%s:%u",
			 cd_addr_str((struct sockaddr *)&peer, addr, sizeof(addr)),
			 ntohs(((struct sockaddr_in *)&peer)->sin_port));
		if (busy(p) >= p->cap) {
			over_cap(p, fd, client);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		*c = (struct conn){ .p = p, .cfd = fd, .sfd = -1, .cev = { EV_CLIENT, c, fd },
				    .sev = { EV_SERVER, c, -1 }, .cmask = EPOLLIN,
				    .up.pipe = { -1, -1 }, .down.pipe = { -1, -1 } };
		c->t_start = c->t_active = cd_now_ns();
		snprintf(c->client, sizeof(c->client), "%s", client);
		e.data.ptr = &c->cev;
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		p->n_conns++;
		p->st.connections++;
		tick(p, true);
		if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
			conn_close(c);
	}
}

static void on_tick(struct cd_proxy *p)
{
	uint64_t now, expired;
	struct conn *next;

	if (read(p->tfd, &expired, sizeof(expired)) < 0)
		return;
	p->ca->process_fd(p->ares, ARES_SOCKET_BAD, ARES_SOCKET_BAD); /* the resolver's timeouts */
	now = cd_now_ns(); /* after: what the resolver's callbacks started is younger */
	for (struct conn *c = p->conns; c; c = next) {
		/* the request head must be whole within the timeout, not merely keep trickling */
		uint64_t since = c->st == ST_HEAD ? c->t_start : c->t_active;
		uint64_t idle = now > since ? now - since : 0;
		uint64_t limit = c->st == ST_CONNECT && CONNECT_NS < p->o.idle_ns ? CONNECT_NS
										  : p->o.idle_ns;

		next = c->next;
		if (c->st == ST_LINGER && idle > LINGER_NS) {
			conn_close(c);
		} else if (c->st == ST_RESOLVE || c->st == ST_LINGER || idle <= limit) {
			continue;
		} else if (c->st == ST_HEAD) {
			refuse(c, 408, "no whole request within %gs", (double)p->o.idle_ns / 1e9);
		} else if (c->st == ST_CONNECT) {
			c->connect_errno = ETIMEDOUT;
			if (c->next_addr < c->n_addrs)
				connect_next(c); /* this address does not answer: the next one */
			else
				refuse(c, 504, "connecting to %s:%u (%s) took more than %gs", c->req.host,
				       c->req.port, c->address, (double)limit / 1e9);
		} else {
			snprintf(c->reason, sizeof(c->reason), "idle for %gs",
				 (double)p->o.idle_ns / 1e9);
			p->st.timed_out++;
			conn_close(c);
		}
	}
}

/* c-ares tells which of its sockets to watch. */
static void ares_sock(void *data, ares_socket_t fd, int readable, int writable)
{
	struct cd_proxy *p = data;
	struct ev *slot = NULL;
	struct epoll_event e = { .events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0) };

	for (int i = 0; i < MAX_ARES_FD && !slot; i++)
		if (p->ares_ev[i].fd == fd)
			slot = &p->ares_ev[i];
	if (!readable && !writable) {
		if (slot) {
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL);
			slot->fd = -1;
		}
		return;
	}
	if (slot) {
		e.data.ptr = slot;
		epoll_ctl(p->epfd, EPOLL_CTL_MOD, fd, &e);
		return;
	}
	for (int i = 0; i < MAX_ARES_FD && !slot; i++)
		if (p->ares_ev[i].fd < 0)
			slot = &p->ares_ev[i];
	if (!slot)
		return; /* the query times out */
	*slot = (struct ev){ EV_ARES, NULL, fd };
	e.data.ptr = slot;
	epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e);
}

void cd_proxy_run(struct cd_proxy *p)
{
	struct epoll_event evs[64];
	int n = epoll_wait(p->epfd, evs, 64, 0);

	for (int i = 0; i < n; i++) {
		struct ev *ev = evs[i].data.ptr;

		switch (ev->kind) {
		case EV_LISTEN:
			accept_all(p);
			break;
		case EV_TIMER:
			on_tick(p);
			break;
		case EV_ARES:
			p->ca->process_fd(p->ares,
					evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? ev->fd
											: ARES_SOCKET_BAD,
					evs[i].events & EPOLLOUT ? ev->fd : ARES_SOCKET_BAD);
			break;
		case EV_CLIENT:
		case EV_SERVER:
			/* closed by an earlier event of this batch: its fds are closed, and epoll
			 * reports no more for them after this batch */
			if (ev->c->closed)
				break;
			on_conn_event(ev->c, ev->kind == EV_SERVER, evs[i].events);
			break;
		}
	}
	reap(p);
}

int cd_proxy_fd(const struct cd_proxy *p)
{
	return p->epfd;
}

static int add(struct cd_proxy *p, int fd, struct ev *ev)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = ev };

	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

static int start_resolver(struct cd_proxy *p, struct cordon_error *err)
{
	/* no search domains: an allowed name is looked up as it is, never as name.corp.internal */
	struct ares_options opts = { .flags = ARES_FLAG_NOSEARCH, .sock_state_cb = ares_sock,
				     .sock_state_cb_data = p, .timeout = 3000, .tries = 2 };
	int r;

	p->ca = cd_cares(err);
	if (!p->ca)
		return -ELIBACC;
	r = p->ca->library_init(ARES_LIB_INIT_ALL);
	if (r != ARES_SUCCESS)
		return cd_fail(err, EIO, "net", "start the resolver (c-ares): %s",
			       p->ca->strerror(r));
	r = p->ca->init_options(&p->ares, &opts,
			      ARES_OPT_FLAGS | ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS |
				      ARES_OPT_TRIES);
	if (r != ARES_SUCCESS) {
		p->ca->library_cleanup();
		return cd_fail(err, EIO, "net", "start the resolver (c-ares): %s",
			       p->ca->strerror(r));
	}
	p->ares_up = true;
	return 0;
}

/* Six fds a connection (two sockets, two pipes): raise our soft limit toward the hard one.
 * The cap: max_conns, or as many as the fds allow. */
static unsigned raise_nofile(unsigned max_conns)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max_conns * 6 + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return max_conns;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= want)
		return max_conns;
	return rl.rlim_cur > 70 ? (unsigned)((rl.rlim_cur - 64) / 6) : 1;
}

static int setup(struct cd_proxy *p, struct cordon_error *err)
{
	sigset_t pipe_set;
	int r;

	p->cap = raise_nofile(p->o.max_conns);
	/* splice() into a socket the peer closed raises SIGPIPE: keep it pending, never fatal
	 * (cd_proxy_free takes it back before the caller's mask returns) */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->tfd = p->tev.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->epfd < 0 || p->tfd < 0)
		return cd_fail_errno(err, errno, "net", "start the proxy's event loop");
	r = add(p, p->lfd, &p->lev);
	if (r == 0)
		r = add(p, p->tfd, &p->tev);
	if (r < 0)
		return cd_fail_errno(err, -r, "net", "start the proxy's event loop");
	/* here, in the network namespace the proxy connects out from */
	r = cd_hostaddr_read(&p->own, err);
	if (r < 0)
		return r;
	return start_resolver(p, err);
}

int cd_proxy_new(int listen_fd, const struct cd_proxy_opts *o, struct cd_proxy **ret,
		 struct cordon_error *err)
{
	struct cd_proxy *p = calloc(1, sizeof(*p));

	*ret = NULL;
	if (!p) {
		close(listen_fd);
		return cd_fail(err, ENOMEM, "net", "out of memory");
	}
	*p = (struct cd_proxy){ .o = *o, .lfd = listen_fd, .lev = { EV_LISTEN, NULL, listen_fd },
				.tev = { EV_TIMER, NULL, -1 }, .epfd = -1, .tfd = -1 };
	for (int i = 0; i < MAX_ARES_FD; i++)
		p->ares_ev[i].fd = -1;
	if (setup(p, err) < 0) {
		cd_proxy_free(p, NULL); /* nothing half-built stays in the loop */
		return -EIO;
	}
	*ret = p;
	return 0;
}

void cd_proxy_free(struct cd_proxy *p, struct cordon_proxy_counts *stats)
{
	sigset_t pipe_set;
	struct timespec zero = { 0 };

	if (!p)
		return;
	while (p->conns) {
		if (!p->conns->decision && p->conns->st != ST_HEAD)
			snprintf(p->conns->reason, sizeof(p->conns->reason), "the sandbox ended");
		conn_close(p->conns);
	}
	if (p->ares_up) {
		p->ca->destroy(p->ares); /* calls back each pending lookup */
		p->ca->library_cleanup();
	}
	for (struct conn *c = p->graveyard; c; c = c->next)
		c->resolving = false;
	reap(p);
	cd_addr_list_free(&p->own);
	for (size_t i = 0; i < p->n_noticed; i++)
		free(p->noticed[i]);
	free(p->noticed);
	p->lfd = cd_safe_close(p->lfd);
	p->tfd = cd_safe_close(p->tfd);
	p->epfd = cd_safe_close(p->epfd);
	if (stats)
		*stats = p->st;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
		;
	free(p);
}
