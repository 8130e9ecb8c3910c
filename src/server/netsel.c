/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * netsel.c - the network a create asks for, as an egress allow-list within the server's
 * --allow-net (the ceiling): E2B's semantics (allowOut takes precedence over denyOut;
 * "0.0.0.0/0" is all traffic; allow_internet_access false is denyOut 0.0.0.0/0) carried onto
 * cordon's proxy, which lets through the hosts on a list and nothing else. What the proxy
 * cannot enforce is refused, never widened; docs/e2b.md "Network" has the mapping row by row.
 * Pure: no I/O (tests/unit/test-netsel.c). Runs in the server (connection threads).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netsel.h"
#include "util.h"

enum kind { K_NAME, K_WILD, K_V4, K_V6, K_ALL };

struct ent {
	enum kind kind;
	char name[256];	     /* K_NAME, K_WILD (the suffix): lower case, no trailing dot */
	unsigned char a[16]; /* K_V4 (4 bytes), K_V6 */
	unsigned bits;	     /* the prefix: 32 or 128 for one address */
	unsigned port;	     /* 0: the proxy's default, 80 and 443 */
};

static bool name_ok(const char *s)
{
	size_t label = 0, n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (isalnum((unsigned char)*p) || *p == '-' || *p == '_') {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label > 0;
}

static int parse_name(const char *s, struct ent *e)
{
	size_t n;

	e->kind = K_NAME;
	if (strncmp(s, "*.", 2) == 0) {
		e->kind = K_WILD;
		s += 2;
	}
	n = strlen(s);
	if (n >= sizeof(e->name))
		return -EINVAL;
	for (size_t i = 0; i <= n; i++)
		e->name[i] = (char)tolower((unsigned char)s[i]);
	if (n > 1 && e->name[n - 1] == '.')
		e->name[n - 1] = '\0';
	return name_ok(e->name) ? 0 : -EINVAL;
}

/* An address, with "/BITS" when bits_ok. */
static int parse_addr(const char *s, bool bits_ok, struct ent *e)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	char *end;

	if (n >= sizeof(buf) || (slash && !bits_ok))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, e->a) == 1)
		e->kind = K_V4, e->bits = 32;
	else if (inet_pton(AF_INET6, buf, e->a) == 1)
		e->kind = K_V6, e->bits = 128;
	else
		return -EINVAL;
	if (slash) {
		unsigned long b = strtoul(slash + 1, &end, 10);

		if (!isdigit((unsigned char)slash[1]) || *end || b > e->bits)
			return -EINVAL;
		e->bits = (unsigned)b;
	}
	if (e->bits == 0)
		e->kind = K_ALL;
	return 0;
}

static int parse_port(const char *s, unsigned *ret)
{
	char *end;
	unsigned long p = strtoul(s, &end, 10);

	if (!isdigit((unsigned char)*s) || *end || p == 0 || p > 65535)
		return -EINVAL;
	*ret = (unsigned)p;
	return 0;
}

/* "0.0.0.0/0", an address or CIDR block, "[v6]:PORT", "HOST[:PORT]", "*.NAME[:PORT]" */
static int parse_ent(const char *s, struct ent *e)
{
	char host[256];
	const char *colon;

	*e = (struct ent){0};
	if (parse_addr(s, true, e) == 0)
		return 0;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || (size_t)(close - s - 1) >= sizeof(host))
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(close - s - 1), s + 1);
		if (parse_addr(host, false, e) < 0 || e->kind != K_V6)
			return -EINVAL;
		return close[1] == '\0'	 ? 0
		       : close[1] == ':' ? parse_port(close + 2, &e->port)
					 : -EINVAL;
	}
	colon = strrchr(s, ':');
	if (!colon)
		return parse_addr(s, false, e) == 0 ? 0 : parse_name(s, e);
	if ((size_t)(colon - s) >= sizeof(host) || parse_port(colon + 1, &e->port) < 0)
		return -EINVAL;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - s), s);
	if (parse_addr(host, false, e) == 0)
		return e->kind == K_V4 ? 0 : -EINVAL;
	return parse_name(host, e);
}

static bool in_prefix(const unsigned char *net, unsigned bits, const unsigned char *a)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(net, a, whole) != 0)
		return false;
	return rest == 0 || ((net[whole] ^ a[whole]) & (0xff00 >> rest) & 0xff) == 0;
}

/* a (one address, or a block) lies wholly inside the block net */
static bool within(const struct ent *net, const struct ent *a)
{
	return net->kind == a->kind && a->bits >= net->bits && in_prefix(net->a, net->bits, a->a);
}

static bool below(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s + 1 && name[n - s - 1] == '.' && strcmp(name + n - s, suffix) == 0;
}

/* The host of want covered by the ceiling's entry c (ports apart)? */
static bool host_covered(const struct ent *c, const struct ent *want)
{
	switch (c->kind) {
	case K_NAME:
		return want->kind == K_NAME && strcmp(c->name, want->name) == 0;
	case K_WILD:
		return (want->kind == K_NAME && below(want->name, c->name)) ||
		       (want->kind == K_WILD &&
			(strcmp(want->name, c->name) == 0 || below(want->name, c->name)));
	case K_V4:
	case K_V6:
		return (want->kind == c->kind) && want->bits == c->bits &&
		       memcmp(want->a, c->a, c->kind == K_V4 ? 4 : 16) == 0;
	default:
		return false;
	}
}

/* The port an entry narrowed from c to want gets: want's within c's; 0 with c's default; -1:
 * not within */
static int port_within(const struct ent *c, const struct ent *want)
{
	if (!want->port)
		return (int)c->port;
	if (c->port ? c->port == want->port : (want->port == 80 || want->port == 443))
		return (int)want->port;
	return -1;
}

/* The entry as the library's allow-list takes it */
static char *spec_of(const struct ent *e, unsigned port)
{
	char host[INET6_ADDRSTRLEN];

	if (e->kind == K_NAME || e->kind == K_WILD)
		return port ? cd_strdup_printf("%s%s:%u", e->kind == K_WILD ? "*." : "", e->name,
					       port)
			    : cd_strdup_printf("%s%s", e->kind == K_WILD ? "*." : "", e->name);
	inet_ntop(e->kind == K_V4 ? AF_INET : AF_INET6, e->a, host, sizeof(host));
	if (!port)
		return strdup(host);
	return e->kind == K_V4 ? cd_strdup_printf("%s:%u", host, port)
			       : cd_strdup_printf("[%s]:%u", host, port);
}

static int push_unique(char ***list, char *spec)
{
	int r;

	if (!spec)
		return -ENOMEM;
	for (char **s = *list; s && *s; s++)
		if (strcmp(*s, spec) == 0) {
			free(spec);
			return 0;
		}
	r = cd_strv_push(list, spec);
	free(spec);
	return r;
}

/* Ranges a name's addresses never reach through the proxy (README "Network": loopback,
 * private, link-local, shared, documentation, benchmarking, multicast, reserved), unless the
 * address itself is on the list: a denyOut block inside one of them holds for names as it is. */
static bool reached_by_no_name(const struct ent *d)
{
	static const char *const special[] = {
	    "0.0.0.0/8",      "10.0.0.0/8",    "100.64.0.0/10",	  "127.0.0.0/8",
	    "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",	  "192.0.2.0/24",
	    "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
	    "224.0.0.0/4",    "240.0.0.0/4",   "::/128",	  "::1/128",
	    "fc00::/7",	      "fe80::/10",     "ff00::/8",	  "2001:db8::/32",
	};
	struct ent s;

	for (size_t i = 0; i < CD_ELEMENTSOF(special); i++)
		if (parse_addr(special[i], true, &s) == 0 && within(&s, d))
			return true;
	return false;
}

struct netsel_state {
	struct ent *ceil;
	size_t n_ceil;
	char ***out;
	char *why;
	size_t why_size;
};

#define WHY(st, ...) (snprintf((st)->why, (st)->why_size, __VA_ARGS__), -EINVAL)

/* One allowOut entry: the ceiling's entries that cover it, narrowed to it. */
static int add_allowed(struct netsel_state *st, const char *spec)
{
	struct ent e;
	bool found = false;

	if (parse_ent(spec, &e) < 0)
		return WHY(st,
			   "network.allowOut: \"%.100s\" is no host name, IP address or CIDR "
			   "block",
			   spec);
	if ((e.kind == K_V4 && e.bits != 32) || (e.kind == K_V6 && e.bits != 128))
		return WHY(st,
			   "network.allowOut: %.100s: cordon's proxy allows hosts and single "
			   "addresses, not a range (name the addresses, within --allow-net)",
			   spec);
	for (size_t i = 0; i < st->n_ceil; i++) {
		int port = port_within(&st->ceil[i], &e), r;

		if (!host_covered(&st->ceil[i], &e) || port < 0)
			continue;
		r = push_unique(st->out, spec_of(&e, (unsigned)port));
		if (r < 0)
			return r;
		found = true;
	}
	if (!found)
		return WHY(st,
			   "network.allowOut: %.100s: more than the server allows (its "
			   "--allow-net does not cover it)",
			   spec);
	return 0;
}

/* The ceiling less the denyOut blocks (not all traffic: that empties the list before). */
static int add_ceiling(struct netsel_state *st, char *const *ceiling, const struct ent *deny,
		       size_t n_deny, char *const *deny_spec)
{
	for (size_t i = 0; i < st->n_ceil; i++) {
		const struct ent *c = &st->ceil[i];
		bool dropped = false;
		int r;

		for (size_t k = 0; k < n_deny && !dropped; k++) {
			if (c->kind == K_V4 || c->kind == K_V6)
				dropped = within(&deny[k], c);
			else if (!reached_by_no_name(&deny[k]))
				return WHY(st,
					   "network.denyOut: %.100s: cordon's proxy cannot deny an "
					   "address range to the names it allows (--allow-net "
					   "%.100s): deny all (0.0.0.0/0) and list what to allow "
					   "in allowOut",
					   deny_spec[k], ceiling[i]);
		}
		if (dropped)
			continue;
		r = push_unique(st->out, strdup(ceiling[i]));
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_deny(struct netsel_state *st, char *const *deny_out, struct ent *deny, size_t *n,
		      bool *all)
{
	for (char *const *d = deny_out; d && *d; d++) {
		struct ent e = {0};

		if (parse_addr(*d, true, &e) < 0)
			return WHY(st,
				   "network.denyOut: \"%.100s\" is no IP address or CIDR block "
				   "(E2B takes no names there)",
				   *d);
		if (e.kind == K_ALL)
			*all = true;
		else
			deny[(*n)++] = e;
	}
	return 0;
}

static int decide(struct netsel_state *st, char *const *ceiling, const struct srv_netsel *q,
		  struct ent *deny)
{
	bool all_denied = q->internet == 0, all_allowed = false;
	size_t n_deny = 0;
	int r = parse_deny(st, q->deny_out, deny, &n_deny, &all_denied);
	_cleanup_strv_ char **deny_spec = NULL;

	for (char *const *a = q->allow_out; r >= 0 && a && *a; a++) {
		struct ent e;

		if (parse_addr(*a, true, &e) == 0 && e.kind == K_ALL)
			all_allowed = true;
	}
	for (char *const *d = q->deny_out; r >= 0 && d && *d; d++) {
		struct ent e;

		if (parse_addr(*d, true, &e) == 0 && e.kind != K_ALL)
			r = cd_strv_push(&deny_spec, *d);
	}
	/* allowOut first: all traffic allowed is the whole ceiling, whatever is denied */
	if (r >= 0 && all_allowed)
		r = add_ceiling(st, ceiling, NULL, 0, NULL);
	else if (r >= 0 && !all_denied)
		r = add_ceiling(st, ceiling, deny, n_deny, deny_spec);
	for (char *const *a = q->allow_out; r >= 0 && !all_allowed && a && *a; a++)
		r = add_allowed(st, *a);
	return r;
}

int srv_netsel_decide(char *const *ceiling, const struct srv_netsel *q, char ***ret, char *why,
		      size_t why_size)
{
	_cleanup_strv_ char **out = NULL;
	_cleanup_free_ struct ent *ceil = NULL, *deny = NULL;
	struct netsel_state st = {.out = &out, .why = why, .why_size = why_size};
	size_t n = 0, n_deny = 0;
	int r;

	for (char *const *c = ceiling; c && *c; c++)
		n++;
	for (char *const *d = q->deny_out; d && *d; d++)
		n_deny++;
	ceil = calloc(n + 1, sizeof(*ceil));
	deny = calloc(n_deny + 1, sizeof(*deny));
	if (!ceil || !deny)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (parse_ent(ceiling[i], &ceil[i]) < 0)
			return WHY(&st, "--allow-net %.100s: not understood here", ceiling[i]);
	st.ceil = ceil;
	st.n_ceil = n;
	r = decide(&st, ceiling, q, deny);
	if (r < 0)
		return r;
	*ret = CD_TAKE_PTR(out);
	return 0;
}
