/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * allow.c - the egress allow-list: parsing "HOST[:PORT]" entries, classifying addresses, and
 * the decision on a request (cd_allow_decide): its host and port against the entries, and a
 * name's addresses against the DNS-rebinding rule. Pure: the proxy (supervisor) calls it, and so
 * do the unit tests and the fuzzers.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "util.h"

#define STEP "allow-net"

void cd_allow_free(struct cd_allow *a)
{
	free(a->spec);
	free(a->name);
	*a = (struct cd_allow){ 0 };
}

int cd_allow_normalize_name(const char *in, char *out, size_t size)
{
	size_t len = strlen(in), label = 0;
	bool digits_only = true;

	if (len && in[len - 1] == '.')
		len--;
	if (len == 0 || len > 253 || len >= size)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char ch = (char)tolower((unsigned char)in[i]);

		if (ch == '.') {
			if (label == 0 || out[i - 1] == '-')
				return -EINVAL;
			label = 0;
		} else if (isalnum((unsigned char)ch) || ch == '-' || ch == '_') {
			if ((label == 0 && ch == '-') || ++label > 63)
				return -EINVAL;
			digits_only = digits_only && (isdigit((unsigned char)ch) != 0);
		} else {
			return -EINVAL;
		}
		out[i] = ch;
	}
	if (label == 0 || out[len - 1] == '-')
		return -EINVAL;
	out[len] = '\0';
	/* "1.2.3", "300.1.1.1": meant as an address, and not one */
	return digits_only ? -EINVAL : 0;
}

static int parse_port(const char *s, const char *spec, uint16_t *port, struct cordon_error *err)
{
	unsigned long v = 0;

	if (!*s)
		return cd_fail(err, 0, STEP, "\"%s\": empty port after ':'", spec);
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return cd_fail(err, 0, STEP, "\"%s\": \"%s\" is not a port number", spec, s);
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 65535)
			break;
	}
	if (v == 0 || v > 65535)
		return cd_fail(err, 0, STEP, "\"%s\": port %s is not in 1-65535", spec, s);
	*port = (uint16_t)v;
	return 0;
}

bool cd_addr_parse(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		return true;
	}
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return true;
	}
	memset(ss, 0, sizeof(*ss));
	return false;
}

/* The host part of an entry: an address, a name or a wildcard. */
static int parse_host(const char *host, bool v6, const char *spec, struct cd_allow *a,
		      struct cordon_error *err)
{
	char name[256];
	bool wildcard = strncmp(host, "*.", 2) == 0;

	if (v6) {
		if (!cd_addr_parse(host, &a->addr) || a->addr.ss_family != AF_INET6)
			return cd_fail(err, 0, STEP, "\"%s\": \"%s\" is not an IPv6 address", spec, host);
		return 0;
	}
	if (!*host)
		return cd_fail(err, 0, STEP, "\"%s\": no host name", spec);
	if (cd_addr_parse(host, &a->addr))
		return 0; /* IPv4: no colon, so never IPv6 here */
	if (strcmp(host, "*") == 0)
		return cd_fail(err, 0, STEP, "\"%s\": a wildcard must name a domain, as in "
				   "*.example.com (for all of the network, use the host's network)",
			       spec);
	if (strchr(host + (wildcard ? 1 : 0), '*'))
		return cd_fail(err, 0, STEP, "\"%s\": '*' is allowed only as a leading \"*.\"", spec);
	if (cd_allow_normalize_name(host + (wildcard ? 2 : 0), name, sizeof(name)) < 0)
		return cd_fail(err, 0, STEP, "\"%s\": \"%s\" is neither a host name nor an IPv4 "
				   "address (IPv6: [2001:db8::1]:443)", spec, host);
	if (wildcard && !strchr(name, '.'))
		return cd_fail(err, 0, STEP, "\"%s\": a wildcard over a whole top-level domain is "
				   "too broad", spec);
	a->wildcard = wildcard;
	a->name = strdup(name);
	return a->name ? 0 : cd_fail(err, ENOMEM, STEP, "out of memory");
}

int cd_allow_parse(const char *spec, struct cd_allow *a, struct cordon_error *err)
{
	_cleanup_free_ char *copy = strdup(spec);
	char *host = copy, *port = NULL, *colon;
	bool v6 = false;
	int r;

	*a = (struct cd_allow){ 0 };
	if (!copy)
		return cd_fail(err, ENOMEM, STEP, "out of memory");
	if (!*spec)
		return cd_fail(err, 0, STEP, "empty entry (HOST[:PORT])");
	if (*host == '[') {
		char *end = strchr(host, ']');

		if (!end)
			return cd_fail(err, 0, STEP, "\"%s\": no ']' after the IPv6 address", spec);
		*end = '\0';
		host++;
		v6 = true;
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			return cd_fail(err, 0, STEP, "\"%s\": only \":PORT\" may follow ']'", spec);
	} else if ((colon = strchr(host, ':')) && strchr(colon + 1, ':')) {
		v6 = true; /* a bare IPv6 address: the default ports */
	} else if (colon) {
		*colon = '\0';
		port = colon + 1;
	}
	if (port && (r = parse_port(port, spec, &a->port, err)) < 0)
		return r;
	r = parse_host(host, v6, spec, a, err);
	if (r >= 0 && !(a->spec = strdup(spec)))
		r = cd_fail(err, ENOMEM, STEP, "out of memory");
	if (r < 0)
		cd_allow_free(a);
	return r;
}

static bool port_ok(const struct cd_allow *a, uint16_t port)
{
	return a->port ? a->port == port : port == 80 || port == 443;
}

/* The entry that lets name:port through, or NULL. name is normalized. */
static const struct cd_allow *match_name(const struct cd_allow *list, size_t n, const char *name,
					 uint16_t port)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n; i++) {
		const struct cd_allow *a = &list[i];
		size_t sl;

		if (!a->name || !port_ok(a, port))
			continue;
		if (!a->wildcard && strcmp(a->name, name) == 0)
			return a;
		sl = strlen(a->name);
		if (a->wildcard && len > sl + 1 && name[len - sl - 1] == '.' &&
		    strcmp(name + len - sl, a->name) == 0)
			return a;
	}
	return NULL;
}

static bool same_addr(const struct sockaddr_storage *e, const struct sockaddr *addr)
{
	if (e->ss_family != addr->sa_family)
		return false;
	if (addr->sa_family == AF_INET)
		return ((const struct sockaddr_in *)e)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)addr)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)e)->sin6_addr,
		      &((const struct sockaddr_in6 *)addr)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

static bool is_localhost(const char *name);
static bool is_loopback(const struct sockaddr *addr);

/* The address entry that equals addr (port ignored in addr) and takes port, or NULL. A
 * "localhost" entry is the host's loopback by name (RFC 6761): it takes every loopback address
 * on its ports, so that `--allow-net localhost:PORT` alone reaches a service of the host's
 * whichever of 127.0.0.1 and ::1 the name or the client picks. */
static const struct cd_allow *match_addr(const struct cd_allow *list, size_t n,
					 const struct sockaddr *addr, uint16_t port)
{
	for (size_t i = 0; i < n; i++) {
		if (!port_ok(&list[i], port))
			continue;
		if (!list[i].name && same_addr(&list[i].addr, addr))
			return &list[i];
		if (list[i].name && !list[i].wildcard && is_localhost(list[i].name) &&
		    is_loopback(addr))
			return &list[i];
	}
	return NULL;
}

static const char *special4(uint32_t a)
{
	static const struct {
		uint32_t net, mask;
		const char *kind;
	} nets[] = {
		{ 0x00000000, 0xff000000, "unspecified" }, /* 0/8, "this network" */
		{ 0x0a000000, 0xff000000, "private" },     /* 10/8 */
		{ 0x64400000, 0xffc00000, "private" },     /* 100.64/10, carrier-grade NAT */
		{ 0x7f000000, 0xff000000, "loopback" },    /* 127/8 */
		{ 0xa9fe0000, 0xffff0000, "link-local" },  /* 169.254/16, cloud metadata */
		{ 0xac100000, 0xfff00000, "private" },     /* 172.16/12 */
		{ 0xc0000000, 0xffffff00, "reserved" },    /* 192.0.0/24 */
		{ 0xc0000200, 0xffffff00, "reserved" },    /* 192.0.2/24, documentation */
		{ 0xc0a80000, 0xffff0000, "private" },     /* 192.168/16 */
		{ 0xc6120000, 0xfffe0000, "reserved" },    /* 198.18/15, benchmarking */
		{ 0xc6336400, 0xffffff00, "reserved" },    /* 198.51.100/24 */
		{ 0xcb007100, 0xffffff00, "reserved" },    /* 203.0.113/24 */
		{ 0xe0000000, 0xf0000000, "multicast" },   /* 224/4 */
		{ 0xf0000000, 0xf0000000, "reserved" },    /* 240/4, broadcast */
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(nets); i++)
		if ((a & nets[i].mask) == nets[i].net)
			return nets[i].kind;
	return NULL;
}

/* The IPv4 address an IPv6 address leads to: IPv4-mapped (this host's stack connects to it),
 * NAT64 64:ff9b::/96 and 6to4 2002::/16 (a translator or a relay does, maybe this host). */
static bool embedded_v4(const struct in6_addr *a, uint32_t *ret)
{
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
	const uint8_t *b = a->s6_addr;
	uint32_t v4;

	if (IN6_IS_ADDR_V4MAPPED(a) || memcmp(b, nat64, 12) == 0)
		memcpy(&v4, b + 12, 4);
	else if (b[0] == 0x20 && b[1] == 0x02) /* 6to4: the IPv4 address in bits 16-47 */
		memcpy(&v4, b + 2, 4);
	else
		return false;
	*ret = ntohl(v4);
	return true;
}

static const char *special6(const struct in6_addr *a)
{
	const uint8_t *b = a->s6_addr;
	uint32_t v4;

	if (IN6_IS_ADDR_UNSPECIFIED(a))
		return "unspecified";
	if (IN6_IS_ADDR_LOOPBACK(a))
		return "loopback";
	if (embedded_v4(a, &v4))
		return special4(v4); /* what it reaches is an IPv4 address */
	if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1)
		return "private"; /* 64:ff9b:1::/48, local-use NAT64 (RFC 8215) */
	if (IN6_IS_ADDR_V4COMPAT(a))
		return "reserved";
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return "link-local";
	if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0))
		return "private"; /* fc00::/7 unique local, fec0::/10 site-local */
	if (b[0] == 0xff)
		return "multicast";
	if ((b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) ||
	    (b[0] == 0x01 && b[1] == 0 && !b[2] && !b[3] && !b[4] && !b[5] && !b[6] && !b[7]))
		return "reserved"; /* 2001:db8::/32 documentation, 100::/64 discard */
	return NULL;
}

const char *cd_addr_special(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return special4(ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr));
	if (addr->sa_family == AF_INET6)
		return special6(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return "unknown";
}

void cd_addr_list_free(struct cd_addr_list *l)
{
	free(l->addrs);
	free(l->bits);
	*l = (struct cd_addr_list){ 0 };
}

/* The first `bits` bits of two byte strings alike? */
static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	return memcmp(a, b, whole) == 0 &&
	       (!rest || ((a[whole] ^ b[whole]) & (uint8_t)(0xff << (8 - rest))) == 0);
}

static bool in_prefix(const struct sockaddr_storage *net, unsigned bits, const struct sockaddr *a)
{
	if (net->ss_family != a->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return bits <= 32 &&
		       same_prefix((const uint8_t *)&((const struct sockaddr_in *)net)->sin_addr,
				   (const uint8_t *)&((const struct sockaddr_in *)a)->sin_addr, bits);
	return bits <= 128 && same_prefix(((const struct sockaddr_in6 *)net)->sin6_addr.s6_addr,
					  ((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr, bits);
}

static bool in_list(const struct cd_addr_list *l, const struct sockaddr *addr)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->bits ? in_prefix(&l->addrs[i], l->bits[i], addr)
			    : same_addr(&l->addrs[i], addr))
			return true;
	return false;
}

bool cd_addr_list_has(const struct cd_addr_list *l, const struct sockaddr *addr)
{
	struct sockaddr_in v4 = { .sin_family = AF_INET };
	uint32_t a;

	if (!l)
		return false;
	if (in_list(l, addr))
		return true; /* first as it is: a host may have a 6to4 address of its own */
	if (addr->sa_family != AF_INET6 ||
	    !embedded_v4(&((const struct sockaddr_in6 *)addr)->sin6_addr, &a))
		return false;
	v4.sin_addr.s_addr = htonl(a);
	return in_list(l, (const struct sockaddr *)&v4);
}

/* The DNS-rebinding rule: why a name may not lead to addr on port. The address's class
 * (cd_addr_special), or CD_ADDR_OWN for one of the host's own addresses (own may be NULL);
 * NULL when it may: a public address that is not the host's, or an address entry on the list
 * that takes port. */
static const char *rebinding(const struct cd_allow *list, size_t n, const struct cd_addr_list *own,
			     const struct sockaddr *addr, uint16_t port)
{
	const char *why = cd_addr_special(addr);

	/* a public address of the host's own reaches its services bound to 0.0.0.0 or :: just as
	 * 127.0.0.1 would */
	if (!why && cd_addr_list_has(own, addr))
		why = CD_ADDR_OWN;
	if (why && match_addr(list, n, addr, port))
		return NULL;
	return why;
}

#define REBINDING_TAIL                                                                             \
	"which is not on the allow-list itself (DNS rebinding protection: allow %s too to reach it)"

/* The reason a name is refused when every address it resolves to is (why: what rebinding()
 * said of the first of them, addr). */
static void rebinding_reason(const char *name, const struct sockaddr *addr, const char *why,
			     char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	cd_addr_str(addr, a, sizeof(a));
	if (strcmp(why, CD_ADDR_OWN) == 0)
		snprintf(buf, size, "%s resolves to one of this host's own addresses (%s), "
			 REBINDING_TAIL, name, a, a);
	else
		snprintf(buf, size, "%s resolves to %s, %s %s address, " REBINDING_TAIL, name, a,
			 strchr("aeiou", why[0]) ? "an" : "a", why, a);
}

static void set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

/* The one line of a refusal; cut at the size of the line the proxy sends and audits. */
static void reasonf(struct cd_decision *d, const char *fmt, ...) _printf_(2, 3);
static void reasonf(struct cd_decision *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
}

static enum cd_verdict refuse_unlisted(struct cd_decision *d)
{
	snprintf(d->notice, sizeof(d->notice), "not on the allow-list");
	return CD_VERDICT_REFUSE;
}

/* An address the client named itself: it asked for that address, so the rebinding rule has
 * nothing to add (an address entry is the only way in). */
static enum cd_verdict decide_literal(const struct cd_allow *list, size_t n, const char *host,
				      bool host_is_v6, uint16_t port, struct sockaddr_storage *a,
				      struct cd_decision *d)
{
	snprintf(d->host, sizeof(d->host), "%s", host);
	if (!match_addr(list, n, (struct sockaddr *)a, port)) {
		reasonf(d, "%s%s%s:%u is not on the allow-list", host_is_v6 ? "[" : "", host,
			host_is_v6 ? "]" : "", port);
		return refuse_unlisted(d);
	}
	set_port(a, port);
	d->addrs[d->n_addrs++] = *a;
	return CD_VERDICT_DIAL;
}

/* The addresses an allowed name resolved to: those the rebinding rule lets it reach, or the
 * rule's reason for the first one refused when it refuses them all. */
static enum cd_verdict decide_addrs(const struct cd_allow *list, size_t n,
				    const struct cd_addr_list *own, uint16_t port,
				    const struct cd_addr_list *resolved, struct cd_decision *d)
{
	const struct sockaddr *first = NULL;

	for (size_t i = 0; i < resolved->n && d->n_addrs < CD_ALLOW_MAX_DIAL; i++) {
		const struct sockaddr *a = (const struct sockaddr *)&resolved->addrs[i];
		const char *why;

		if (a->sa_family != AF_INET && a->sa_family != AF_INET6)
			continue;
		/* a name that leads to the host's or the local network's own services only with
		 * that address allowed too: DNS rebinding */
		why = rebinding(list, n, own, a, port);
		if (why) {
			if (!first) {
				first = a;
				d->why = why;
			}
			continue;
		}
		d->addrs[d->n_addrs] = resolved->addrs[i];
		set_port(&d->addrs[d->n_addrs++], port);
	}
	if (d->n_addrs)
		return CD_VERDICT_DIAL;
	if (!first)
		return CD_VERDICT_NO_ADDRESS;
	rebinding_reason(d->host, first, d->why, d->reason, sizeof(d->reason));
	snprintf(d->notice, sizeof(d->notice), "%s", d->reason);
	return CD_VERDICT_REFUSE;
}

enum cd_verdict cd_allow_decide(const struct cd_allow *list, size_t n,
				const struct cd_addr_list *own, const char *host, bool host_is_v6,
				uint16_t port, const struct cd_addr_list *resolved,
				struct cd_decision *ret)
{
	struct sockaddr_storage a;

	*ret = (struct cd_decision){ 0 };
	if (cd_addr_parse(host, &a))
		return decide_literal(list, n, host, host_is_v6, port, &a, ret);
	if (host_is_v6 || cd_allow_normalize_name(host, ret->host, sizeof(ret->host)) < 0) {
		snprintf(ret->host, sizeof(ret->host), "%s", host);
		reasonf(ret, "\"%s\" is not a host name", host);
		return CD_VERDICT_BAD_NAME;
	}
	if (!match_name(list, n, ret->host, port)) {
		reasonf(ret, "%s:%u is not on the allow-list", ret->host, port);
		return refuse_unlisted(ret);
	}
	if (!resolved)
		return CD_VERDICT_RESOLVE; /* nothing is looked up for a name the list refuses */
	return decide_addrs(list, n, own, port, resolved, ret);
}

const char *cd_addr_str(const struct sockaddr *addr, char *buf, size_t size)
{
	const void *p = addr->sa_family == AF_INET
				? (const void *)&((const struct sockaddr_in *)addr)->sin_addr
				: (const void *)&((const struct sockaddr_in6 *)addr)->sin6_addr;

	if (!inet_ntop(addr->sa_family, p, buf, (socklen_t)size))
		snprintf(buf, size, "?");
	return buf;
}

/* "localhost" and the names below it (RFC 6761: they are loopback) */
static bool is_localhost(const char *name)
{
	size_t n = strlen(name), l = strlen("localhost");

	return strcmp(name, "localhost") == 0 ||
	       (n > l && name[n - l - 1] == '.' && strcmp(name + n - l, "localhost") == 0);
}

static bool is_loopback(const struct sockaddr *addr)
{
	const char *special = cd_addr_special(addr);

	return special && strcmp(special, "loopback") == 0;
}

bool cd_allow_has_loopback(const struct cd_allow *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (list[i].name) {
			if (is_localhost(list[i].name))
				return true;
			continue;
		}
		if (is_loopback((const struct sockaddr *)&list[i].addr))
			return true;
	}
	return false;
}
