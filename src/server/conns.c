/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * conns.c - who holds the server's connection slots, so that clients without credentials cannot
 * take the slots of tenants, nor one tenant all of them. Runs in the server: libmicrohttpd's
 * accept thread (a connection starts, closes), the connection threads (a request authenticated,
 * a request done) and a deadline thread of its own.
 *
 * A connection is "waiting" from its accept until a request on it is authenticated (an API key,
 * an access token, a signed URL); from then on it is that tenant's (the key's on the control
 * plane, the sandbox's on the data plane) until it closes. With M = --max-connections:
 *  - waiting connections hold at most M/4 slots once they have waited SRV_CONN_GRACE_MS (a burst
 *    of new clients may hold more meanwhile): past that, or when all M are held, a new
 *    connection takes the slot of the oldest waiting one, whose socket is shut down
 *    (libmicrohttpd then drops it);
 *  - a waiting connection is closed SRV_HEAD_DEADLINE_S after its accept (or the end of its last
 *    request), however slowly it trickles its request's head (libmicrohttpd's own timeout
 *    only counts silence);
 *  - from one peer that is not the server's own (an address that is not loopback; a uid other
 *    than the server's on --socket) at most M/16 waiting connections: past that its new one is
 *    closed, so one remote peer cannot push out the others' waiting connections;
 *  - a tenant holds at most M/4 connections: past that its request is answered 429.
 * Loopback clients all share one address, so no cap applies to an address there: the deadline,
 * the budget of waiting connections and the per-tenant cap keep M/2 of the slots or more for
 * every other tenant whatever one client does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "conns.h"
#include "opts.h"
#include "util.h"

enum { WAITING, TENANT, GONE };

struct conn {
	int fd;
	int state;	   /* WAITING, TENANT (in one list) or GONE (shut down, in none) */
	uint64_t since_ns; /* monotonic: the accept, or the end of the last request */
	char peer[48];	   /* "" for a peer without a cap (loopback, the server's uid) */
	char tenant[40];   /* "k<index>", "s<sandbox id>" */
	struct conn *prev, *next;
};

struct list {
	struct conn *head, *tail; /* waiting: oldest first */
	unsigned n;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* the waiting list changed: the deadline thread looks again */
	struct list waiting, tenants;
	struct srv_conn_limits lim;
	uid_t uid;
} conns = {.lock = PTHREAD_MUTEX_INITIALIZER};

void srv_conns_limits(unsigned max, struct srv_conn_limits *ret)
{
	ret->max = max;
	ret->wait_max = max / 4 ? max / 4 : 1;
	ret->peer_max = ret->wait_max / 4 ? ret->wait_max / 4 : 1;
	ret->tenant_max = max / 4 ? max / 4 : 1;
}

/* A full server frees the oldest waiting connection's slot for the new one (which may be a
 * tenant's: the oldest is never a connection that just came); over the budget of waiting ones
 * only a connection waiting for SRV_CONN_GRACE_MS already is closed, so that a burst of clients
 * whose heads are on their way does not push out its own first ones. */
enum srv_conn_verdict srv_conns_decide(const struct srv_conn_limits *l,
				       const struct srv_conn_counts *c)
{
	if (c->peer_capped && c->peer_waiting >= l->peer_max)
		return SRV_CONN_REFUSE;
	if (c->waiting + c->tenants >= l->max)
		return c->waiting ? SRV_CONN_EVICT_OLDEST : SRV_CONN_REFUSE;
	if (c->waiting >= l->wait_max && c->oldest_ms >= SRV_CONN_GRACE_MS)
		return SRV_CONN_EVICT_OLDEST;
	return SRV_CONN_ACCEPT;
}

static void list_add(struct list *l, struct conn *c)
{
	c->prev = l->tail;
	c->next = NULL;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	l->n++;
}

static void list_del(struct list *l, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	l->n--;
}

static struct list *list_of(struct conn *c)
{
	return c->state == WAITING ? &conns.waiting : c->state == TENANT ? &conns.tenants : NULL;
}

/* Out of the lists, and its socket shut down: libmicrohttpd's thread for it sees the end and
 * closes it. Under the lock, which CLOSED takes before libmicrohttpd closes the descriptor: the
 * number cannot be another socket's yet. */
static void drop(struct conn *c)
{
	struct list *l = list_of(c);

	if (l)
		list_del(l, c);
	c->state = GONE;
	shutdown(c->fd, SHUT_RDWR);
}

/* The peer a cap applies to, or "" (loopback: every local client shares it; a unix socket
 * client of the server's own uid). */
static void peer_of(struct MHD_Connection *mc, int fd, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	buf[0] = '\0';
	if (!sa || sa->sa_family == AF_UNIX) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
		    cred.uid != conns.uid)
			snprintf(buf, size, "uid %u", (unsigned)cred.uid);
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		if ((ntohl(s4->sin_addr.s_addr) >> 24) != 127)
			inet_ntop(AF_INET, &s4->sin_addr, buf, (socklen_t)size);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		const uint8_t *b = s6->sin6_addr.s6_addr;

		if (!IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) &&
		    !(IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && b[12] == 127))
			inet_ntop(AF_INET6, &s6->sin6_addr, buf, (socklen_t)size);
	}
}

static unsigned count_peer(const char *peer)
{
	unsigned n = 0;

	for (struct conn *c = conns.waiting.head; c; c = c->next)
		n += strcmp(c->peer, peer) == 0;
	return n;
}

static void started(struct MHD_Connection *mc, void **socket_context)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *c = calloc(1, sizeof(*c));
	struct srv_conn_counts n = {0};
	enum srv_conn_verdict v;

	if (!ci || !c) { /* not counted, so not kept */
		if (ci)
			shutdown(ci->connect_fd, SHUT_RDWR);
		free(c);
		return;
	}
	c->fd = ci->connect_fd;
	c->since_ns = cd_now_ns();
	peer_of(mc, c->fd, c->peer, sizeof(c->peer));
	pthread_mutex_lock(&conns.lock);
	n.waiting = conns.waiting.n;
	n.tenants = conns.tenants.n;
	if (conns.waiting.head)
		n.oldest_ms = (c->since_ns - conns.waiting.head->since_ns) / NSEC_PER_MSEC;
	n.peer_capped = c->peer[0] != '\0';
	n.peer_waiting = n.peer_capped ? count_peer(c->peer) : 0;
	v = srv_conns_decide(&conns.lim, &n);
	if (v == SRV_CONN_EVICT_OLDEST)
		drop(conns.waiting.head);
	if (v == SRV_CONN_REFUSE) {
		c->state = GONE;
		shutdown(c->fd, SHUT_RDWR);
	} else {
		c->state = WAITING;
		list_add(&conns.waiting, c);
		pthread_cond_signal(&conns.cond);
	}
	pthread_mutex_unlock(&conns.lock);
	*socket_context = c;
	if (v != SRV_CONN_ACCEPT)
		srv_log("connections: %s (%u waiting, %u of tenants)",
			v == SRV_CONN_REFUSE ? "a new one refused"
					     : "the oldest waiting one closed",
			n.waiting, n.tenants);
}

void srv_conns_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	struct conn *c = *socket_context;
	struct list *l;

	(void)cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		started(mc, socket_context);
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&conns.lock);
	l = list_of(c);
	if (l)
		list_del(l, c);
	pthread_mutex_unlock(&conns.lock);
	free(c);
	*socket_context = NULL;
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

bool srv_conns_tenant(struct MHD_Connection *mc, const char *tenant)
{
	struct conn *c = conn_of(mc);
	unsigned held = 0;
	bool ok;

	if (!c)
		return true;
	pthread_mutex_lock(&conns.lock);
	if (c->state == TENANT && strcmp(c->tenant, tenant) == 0) {
		pthread_mutex_unlock(&conns.lock);
		return true;
	}
	for (struct conn *o = conns.tenants.head; o; o = o->next)
		held += strcmp(o->tenant, tenant) == 0;
	ok = held < conns.lim.tenant_max;
	if (ok && c->state != GONE) {
		list_del(list_of(c), c);
		snprintf(c->tenant, sizeof(c->tenant), "%s", tenant);
		c->state = TENANT;
		list_add(&conns.tenants, c);
	}
	pthread_mutex_unlock(&conns.lock);
	return ok;
}

void srv_conns_request_done(struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&conns.lock);
	if (c->state == WAITING) { /* kept alive: a new deadline, at the end of the line */
		list_del(&conns.waiting, c);
		c->since_ns = cd_now_ns();
		list_add(&conns.waiting, c);
		pthread_cond_signal(&conns.cond);
	}
	pthread_mutex_unlock(&conns.lock);
}

/* The deadline thread: sleeps until the oldest waiting connection's deadline (or, while there
 * are more waiting than their budget, the end of its grace), closes what is past it. The oldest
 * is the list's head: each joins at the tail with a later time. */
static void *deadlines(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&conns.lock);
	for (;;) {
		struct conn *c = conns.waiting.head;
		uint64_t end, now = cd_now_ns();
		struct timespec ts;

		if (!c) {
			pthread_cond_wait(&conns.cond, &conns.lock);
			continue;
		}
		end = c->since_ns + (conns.waiting.n > conns.lim.wait_max
					 ? SRV_CONN_GRACE_MS * NSEC_PER_MSEC
					 : SRV_HEAD_DEADLINE_S * NSEC_PER_SEC);
		if (now >= end) {
			drop(c);
			continue;
		}
		ts.tv_sec = (time_t)(end / NSEC_PER_SEC);
		ts.tv_nsec = (long)(end % NSEC_PER_SEC);
		pthread_cond_timedwait(&conns.cond, &conns.lock, &ts);
	}
	return NULL;
}

int srv_conns_start(struct cordon_error *err)
{
	pthread_condattr_t ca;
	pthread_t t;
	int r;

	srv_conns_limits(srv_opts.max_connections, &conns.lim);
	conns.uid = geteuid();
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* cd_now_ns()'s clock */
	pthread_cond_init(&conns.cond, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&t, NULL, deadlines, NULL);
	if (r)
		return cd_fail_errno(err, r, "listen", "a thread for the connections' deadlines");
	pthread_detach(t); /* it lives as long as the process */
	return 0;
}

unsigned srv_conns_tenant_max(void)
{
	return conns.lim.tenant_max;
}

/* libmicrohttpd's own limit: above --max-connections, so that a new connection reaches
 * started() to take an old one's slot, and shut down ones waiting for their thread to end
 * do not keep new ones out. */
unsigned srv_conns_mhd_limit(void)
{
	return conns.lim.max + conns.lim.wait_max + 16;
}
