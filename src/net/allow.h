/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * allow.h - the egress allow-list (--allow-net): entries, the special address classes, and the
 * one decision on where a proxy request may go (cd_allow_decide): names, ports, address literals,
 * and the addresses that a name may not resolve to unless the address itself is on the list (DNS
 * rebinding). Pure: no I/O (hostaddr.h reads the host's own addresses, proxy.c carries out the
 * decision).
 */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cordon.h"

struct cd_allow {
	char *spec;     /* as the user wrote it, for messages and the report */
	char *name;     /* lower case, no trailing dot; NULL for an address */
	bool wildcard;  /* name is the suffix of "*.name" (any deeper name, not name itself) */
	struct sockaddr_storage addr; /* an address entry: AF_INET or AF_INET6, port 0 */
	uint16_t port;  /* 0: 80 and 443 */
};

/* One entry from "HOST[:PORT]": exact names, "*.example.com", 192.0.2.1, [2001:db8::1]:8443
 * (a bare IPv6 address takes the default ports). Fails with err->step "allow-net". */
int cd_allow_parse(const char *spec, struct cd_allow *a, struct cordon_error *err);
void cd_allow_free(struct cd_allow *a);

/* A host name as a client sent it, normalized like entries: 0, or -EINVAL when it is no valid
 * DNS name (then it cannot match any entry). */
int cd_allow_normalize_name(const char *in, char *out, size_t size);

/* What kind of address a name must not reach without being allowed explicitly: "loopback",
 * "private", "link-local", "unspecified", "multicast", "reserved", ... or NULL for a public
 * address. IPv4-mapped IPv6 addresses are judged as IPv4. */
const char *cd_addr_special(const struct sockaddr *addr);

/* A set of addresses: the host's own (hostaddr.h reads them), or what a name resolved to. bits:
 * the prefix length of each (a local route covers a whole prefix), or NULL: each address alone. */
struct cd_addr_list {
	struct sockaddr_storage *addrs;
	size_t n;
	uint8_t *bits;
};
void cd_addr_list_free(struct cd_addr_list *l);
/* addr is in l; an IPv4-mapped, NAT64 or 6to4 IPv6 address is also in l when the IPv4 address it
 * leads to is. */
bool cd_addr_list_has(const struct cd_addr_list *l, const struct sockaddr *addr);

/* The class cd_allow_decide gives one of the host's own addresses (cd_addr_list_has) that is
 * no special address. */
#define CD_ADDR_OWN "own"

/* What the proxy does with a request, as cd_allow_decide says. */
enum cd_verdict {
	CD_VERDICT_DIAL,       /* connect to the decision's addresses, in turn */
	CD_VERDICT_RESOLVE,    /* an allowed name: look it up, then decide again with its addresses */
	CD_VERDICT_REFUSE,     /* not on the allow-list, or the name leads where it may not (403) */
	CD_VERDICT_BAD_NAME,   /* neither an address nor a host name (400) */
	CD_VERDICT_NO_ADDRESS, /* the name has no IPv4 or IPv6 address: a failed lookup (502) */
};

#define CD_ALLOW_MAX_DIAL 8 /* a name's addresses tried, in the resolver's order */

struct cd_decision {
	char host[256];   /* the host judged: a name normalized, an address or a bad name as sent */
	char reason[256]; /* REFUSE, BAD_NAME: the one line the client gets and the audit keeps */
	char notice[256]; /* REFUSE: the why of the "egress refused: HOST:PORT: why" notice */
	const char *why;  /* REFUSE by the rebinding rule: the class of the first address refused
			   * (cd_addr_special) or CD_ADDR_OWN; NULL for a refusal by the list */
	struct sockaddr_storage addrs[CD_ALLOW_MAX_DIAL]; /* DIAL: each with port set */
	size_t n_addrs;
};

/* The one decision on where a request for host:port may go. host is as the client sent it (an
 * IPv6 address without brackets; host_is_v6: it was in brackets). An address goes where it says
 * only when an address entry takes it and port (DIAL); a name only when a name entry covers it
 * and port: RESOLVE while resolved is NULL, then, called again with the name's addresses, DIAL
 * to those the DNS-rebinding rule lets it reach (the first CD_ALLOW_MAX_DIAL of them): public
 * addresses that are none of the host's own (own, may be NULL), and address entries that take
 * port. Addresses other than IPv4 and IPv6 are skipped; resolved->bits is ignored. Pure. */
enum cd_verdict cd_allow_decide(const struct cd_allow *list, size_t n,
				const struct cd_addr_list *own, const char *host, bool host_is_v6,
				uint16_t port, const struct cd_addr_list *resolved,
				struct cd_decision *ret);

/* Does the list reach the host's loopback (a "localhost" entry, or a loopback address)? Then
 * loopback requests must go through the proxy; otherwise loopback is the sandbox's own. */
bool cd_allow_has_loopback(const struct cd_allow *list, size_t n);

/* An IPv4 or IPv6 address literal ("192.0.2.1", "2001:db8::1", no brackets, no port) into ss
 * (port 0); false when s is neither. */
bool cd_addr_parse(const char *s, struct sockaddr_storage *ss);

/* "192.0.2.1" or "2001:db8::1" into buf (no port). */
const char *cd_addr_str(const struct sockaddr *addr, char *buf, size_t size);
