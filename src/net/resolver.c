/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * resolver.c - the sandbox's resolver (resolver.h): answers each query on 127.0.0.1:53 inside
 * with an error and tells the names once. Runs in the supervisor, on a socket of the sandbox's
 * network namespace: every byte it reads is the sandbox's, so it reads a bounded number of
 * bounded datagrams per call, keeps a bounded set of names, and sends back no more than came.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns.h"
#include "resolver.h"
#include "util.h"

#define MAX_QUERY 4096   /* an EDNS query's usual ceiling; a longer one is dropped */
#define PER_RUN   64     /* datagrams read per call: the supervisor has other work */
#define MAX_TCP   8      /* TCP connections at once: a ninth closes the oldest */

enum { EV_UDP = MAX_TCP, EV_LISTEN }; /* epoll's data: a connection's slot, or these */

#define TCP_BUF   (2 + MAX_QUERY) /* a TCP query: its 2-byte length, then itself */

/* A connection's buffer is taken when it is accepted and given back when it closes: an idle
 * session's supervisor holds none (the resolver lives as long as the sandbox, in each one) */
struct tconn {
	int fd;          /* -1: a free slot */
	size_t have;     /* bytes read: the 2-byte length, then the message */
	uint8_t *buf;    /* TCP_BUF bytes while fd is open */
	uint64_t serial; /* its accept's number: the lowest open one is the oldest */
};

struct cd_resolver {
	struct cd_resolver_opts o;
	int fd;          /* UDP */
	int lfd;         /* TCP, listening; -1 */
	int ep;
	struct tconn tcp[MAX_TCP];
	uint64_t accepted; /* connections accepted so far (the next one's serial) */
	char *seen[CD_RESOLVER_MAX_NAMES]; /* names met, told (or logged, when allowed) once */
	size_t n_seen;
	uint64_t more;   /* lookups of names past the set */
	uint64_t queries;
};

/* Does the allow-list let this name through on any port of its entries (the proxy is where it
 * goes)? name is in presentation form: one with escapes is no host name and matches nothing. */
static bool name_allowed(const struct cd_resolver *r, const char *name)
{
	for (size_t i = 0; i < r->o.n_allow; i++) {
		const struct cd_allow *a = &r->o.allow[i];
		struct cd_decision d;

		if (a->name && cd_allow_decide(r->o.allow, r->o.n_allow, NULL, name, false,
					       a->port ? a->port : 443, NULL, &d) ==
				       CD_VERDICT_RESOLVE)
			return true;
	}
	return false;
}

static bool is_reverse(const char *name)
{
	size_t n = strlen(name);

	return strcmp(name, "arpa") == 0 || (n > 5 && strcmp(name + n - 5, ".arpa") == 0);
}

static bool host_name(const char *name)
{
	char norm[256];

	return cd_allow_normalize_name(name, norm, sizeof(norm)) == 0;
}

static void audit_name(const struct cd_resolver *r, const char *name, uint16_t qtype,
		       const char *answer)
{
	struct cd_json j;

	if (!r->o.audit || !cd_audit_on(r->o.audit))
		return;
	cd_audit_begin(r->o.audit, &j, "dns");
	cd_json_kv_string(&j, "name", name);
	cd_json_kv_uint(&j, "qtype", qtype);
	cd_json_kv_string(&j, "answer", answer);
	cd_audit_end(r->o.audit, &j);
}

/* The first lookup of a name: -v's line, the audit's event, and the notice when it is refused
 * (a reverse lookup or a bad name gets no advice: no --allow-net would help). */
static void tell(const struct cd_resolver *r, const char *name, uint16_t qtype, bool allowed)
{
	char line[CD_DNS_NAME_MAX + 256];

	if (r->o.log) {
		snprintf(line, sizeof(line), "net: dns: %s (type %u): %s", name, qtype,
			 allowed ? "allowed: REFUSED here, the proxy looks it up"
				 : "NXDOMAIN, not looked up");
		r->o.log(r->o.log_data, line);
	}
	audit_name(r, name, qtype, allowed ? "refused" : "nxdomain");
	if (allowed || !r->o.notice || is_reverse(name))
		return;
	if (!host_name(name))
		snprintf(line, sizeof(line), "%s: looked up %s (not a host name)",
			 r->o.n_allow ? "not on the allow-list" : "no network", name);
	else if (r->o.n_allow)
		snprintf(line, sizeof(line), "not on the allow-list: looked up %s "
			 "(another --allow-net %s lets it through)", name, name);
	else
		snprintf(line, sizeof(line), "no network: looked up %s "
			 "(--allow-net %s lets it through)", name, name);
	r->o.notice(r->o.notice_data, line);
}

/* The answer to a name, told the first time it comes (while the set has room). */
static uint8_t answer(struct cd_resolver *r, const struct cd_dns_query *q)
{
	bool allowed = name_allowed(r, q->name);

	for (size_t i = 0; i < r->n_seen; i++)
		if (strcmp(r->seen[i], q->name) == 0)
			return allowed ? CD_DNS_REFUSED : CD_DNS_NXDOMAIN;
	if (r->n_seen == CD_RESOLVER_MAX_NAMES || !(r->seen[r->n_seen] = strdup(q->name))) {
		r->more += !allowed;
	} else {
		r->n_seen++;
		tell(r, q->name, q->qtype, allowed);
	}
	return allowed ? CD_DNS_REFUSED : CD_DNS_NXDOMAIN;
}

#define REPLY_MAX (CD_DNS_HEADER + CD_DNS_NAME_WIRE_MAX + 4)

/* The reply to a query into out (REPLY_MAX bytes): its length, 0 for none. */
static size_t respond(struct cd_resolver *r, const uint8_t *msg, size_t n, uint8_t *out)
{
	struct cd_dns_query q;
	uint8_t rcode = CD_DNS_FORMERR;
	int k = cd_dns_parse_query(msg, n, &q, &rcode);

	if (k < 0)
		return 0;
	if (k > 0)
		rcode = answer(r, &q);
	return cd_dns_reply(msg, n, &q, rcode, out, REPLY_MAX);
}

static void serve_one(struct cd_resolver *r, const uint8_t *msg, size_t n,
		      const struct sockaddr_in *from)
{
	uint8_t out[REPLY_MAX];
	size_t len = respond(r, msg, n, out);

	if (len)
		(void)sendto(r->fd, out, len, MSG_DONTWAIT | MSG_NOSIGNAL,
			     (const struct sockaddr *)from, sizeof(*from));
}

static void tcp_close(struct cd_resolver *r, struct tconn *c)
{
	epoll_ctl(r->ep, EPOLL_CTL_DEL, c->fd, NULL);
	c->fd = cd_safe_close(c->fd);
	c->have = 0;
	free(CD_TAKE_PTR(c->buf));
}

/* One query per connection (RFC 7766 allows more; clients reconnect): read its length and
 * itself, answer, close. A length over MAX_QUERY, EOF or an error closes it unanswered. */
static void tcp_read(struct cd_resolver *r, struct tconn *c)
{
	size_t want = c->have < 2 ? 2 : 2 + (size_t)(c->buf[0] << 8 | c->buf[1]);
	uint8_t out[2 + REPLY_MAX];
	ssize_t n;
	size_t len;

	if (want > TCP_BUF) {
		tcp_close(r, c);
		return;
	}
	n = recv(c->fd, c->buf + c->have, want - c->have, MSG_DONTWAIT);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			tcp_close(r, c);
		return;
	}
	c->have += (size_t)n;
	if (c->have < 2 || c->have < 2 + (size_t)(c->buf[0] << 8 | c->buf[1]))
		return;
	r->queries++;
	len = respond(r, c->buf + 2, c->have - 2, out + 2);
	if (len) {
		out[0] = (uint8_t)(len >> 8);
		out[1] = (uint8_t)len;
		/* a fresh connection's send buffer takes these few hundred bytes, or nothing */
		(void)send(c->fd, out, len + 2, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	tcp_close(r, c);
}

/* A free slot, else the oldest connection's */
static struct tconn *tcp_slot(struct cd_resolver *r)
{
	struct tconn *oldest = &r->tcp[0];

	for (unsigned k = 0; k < MAX_TCP; k++) {
		if (r->tcp[k].fd < 0)
			return &r->tcp[k];
		if (r->tcp[k].serial < oldest->serial)
			oldest = &r->tcp[k];
	}
	return oldest;
}

static void tcp_accept(struct cd_resolver *r)
{
	for (int i = 0; i < MAX_TCP; i++) {
		int fd = accept4(r->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event e = { .events = EPOLLIN };
		struct tconn *c = NULL;

		if (fd < 0)
			return;
		c = tcp_slot(r);
		if (c->fd >= 0) /* all busy: the oldest goes (one that sends nothing holds no slot long) */
			tcp_close(r, c);
		e.data.u32 = (uint32_t)(c - r->tcp);
		c->buf = malloc(TCP_BUF);
		if (!c->buf || epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &e) < 0) {
			free(CD_TAKE_PTR(c->buf));
			close(fd);
			continue;
		}
		c->fd = fd;
		c->have = 0;
		c->serial = r->accepted++;
	}
}

static void udp_read(struct cd_resolver *r)
{
	uint8_t buf[MAX_QUERY];

	for (int i = 0; i < PER_RUN; i++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(r->fd, buf, MAX_QUERY, MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);

		if (n < 0)
			return; /* EAGAIN: all read (an error: nothing else to do) */
		r->queries++;
		if ((size_t)n > MAX_QUERY || fl != sizeof(from) || from.sin_family != AF_INET)
			continue; /* cut short (MSG_TRUNC says the whole size): not a query we read */
		serve_one(r, buf, (size_t)n, &from);
	}
}

void cd_resolver_run(struct cd_resolver *r)
{
	struct epoll_event ev[MAX_TCP + 2];
	int n = epoll_wait(r->ep, ev, MAX_TCP + 2, 0);

	for (int i = 0; i < n; i++) {
		if (ev[i].data.u32 == EV_UDP)
			udp_read(r);
		else if (ev[i].data.u32 == EV_LISTEN)
			tcp_accept(r);
		else if (ev[i].data.u32 < MAX_TCP && r->tcp[ev[i].data.u32].fd >= 0)
			tcp_read(r, &r->tcp[ev[i].data.u32]);
	}
}

int cd_resolver_fd(const struct cd_resolver *r)
{
	return r->ep;
}

static int watch(struct cd_resolver *r, int fd, uint32_t what)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u32 = what };

	return epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

void cd_resolver_add_tcp(struct cd_resolver *r, int listen_fd)
{
	if (r->lfd >= 0 || watch(r, listen_fd, EV_LISTEN) < 0) {
		close(listen_fd);
		return;
	}
	r->lfd = listen_fd;
}

int cd_resolver_new(int udp_fd, const struct cd_resolver_opts *o, struct cd_resolver **ret,
		    struct cordon_error *err)
{
	struct cd_resolver *r = calloc(1, sizeof(*r));

	if (!r) {
		close(udp_fd);
		return cd_fail(err, ENOMEM, "net", "out of memory");
	}
	r->o = *o;
	r->fd = udp_fd;
	r->lfd = -1;
	for (size_t i = 0; i < MAX_TCP; i++)
		r->tcp[i].fd = -1;
	r->ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->ep < 0 || watch(r, udp_fd, EV_UDP) < 0) {
		int e = errno;

		cd_resolver_free(r);
		return cd_fail_errno(err, e, "net", "the resolver's epoll");
	}
	*ret = r;
	return 0;
}

void cd_resolver_free(struct cd_resolver *r)
{
	char line[256];

	if (!r)
		return;
	if (r->more && r->o.notice) {
		snprintf(line, sizeof(line), "%s: ... and %llu more lookups (names past the first %d "
			 "are not told one by one)", r->o.n_allow ? "not on the allow-list"
			 : "no network", (unsigned long long)r->more, CD_RESOLVER_MAX_NAMES);
		r->o.notice(r->o.notice_data, line);
	}
	for (size_t i = 0; i < r->n_seen; i++)
		free(r->seen[i]);
	for (size_t i = 0; i < MAX_TCP; i++) {
		cd_safe_close(r->tcp[i].fd);
		free(r->tcp[i].buf);
	}
	cd_safe_close(r->lfd);
	cd_safe_close(r->ep);
	cd_safe_close(r->fd);
	free(r);
}
