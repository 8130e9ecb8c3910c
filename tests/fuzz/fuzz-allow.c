/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-allow.c - libFuzzer target for the egress proxy's one decision, cd_allow_decide (allow.c):
 * an allow-list, a host as a client sends it, a port, the host's own addresses and what a name
 * resolves to, all from the input. Checks the promises the proxy relies on against a second,
 * plain reading of the rules, not only the absence of crashes.
 *
 * Input: port (2 bytes, big-endian), flags (1 byte: 1 the host was in brackets, 2 the host's own
 * addresses are given, 4 as prefixes), then text up to a NUL: the host on the first line, one
 * allow-list entry on each further line; then address records of 18 bytes: kind (bits 0-1:
 * IPv4, IPv6, IPv4-mapped IPv6, another family; 4: one of the host's own too; 8: only that),
 * prefix length, 16 address bytes.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "allow.h"

#define MAX_ENTRIES 16
#define MAX_ADDRS   32
#define RECORD      18

struct input {
	char *text; /* the host, then the entries: split in place */
	const char *host;
	bool v6;
	uint16_t port;
	struct cd_allow list[MAX_ENTRIES];
	size_t n;
	struct sockaddr_storage own[MAX_ADDRS], res[MAX_ADDRS];
	uint8_t bits[MAX_ADDRS];
	struct cd_addr_list own_l, res_l;
	bool has_own;
};

static void record(struct input *in, const uint8_t *r)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	switch (r[0] & 3) {
	case 0:
		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, r + 2, 4);
		break;
	case 1:
		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, r + 2, 16);
		break;
	case 2:
		s6->sin6_family = AF_INET6;
		s6->sin6_addr.s6_addr[10] = s6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&s6->sin6_addr.s6_addr[12], r + 2, 4);
		break;
	default:
		ss.ss_family = AF_UNIX;
		break;
	}
	if ((r[0] & 4) && in->own_l.n < MAX_ADDRS) {
		in->bits[in->own_l.n] = r[1];
		in->own[in->own_l.n++] = ss;
	}
	if (!(r[0] & 8) && in->res_l.n < MAX_ADDRS)
		in->res[in->res_l.n++] = ss;
}

/* false: an input too short to say anything */
static bool read_input(struct input *in, const uint8_t *d, size_t size)
{
	struct cordon_error err;
	const uint8_t *nul;
	char *line, *save = NULL;
	size_t tlen;
	uint8_t flags;

	if (size < 3)
		return false;
	in->port = (uint16_t)(d[0] << 8 | d[1]);
	flags = d[2];
	in->v6 = flags & 1;
	in->has_own = flags & 2;
	d += 3, size -= 3;
	nul = memchr(d, '\0', size);
	tlen = nul ? (size_t)(nul - d) : size;
	in->text = strndup((const char *)d, tlen);
	if (!in->text)
		return false;
	in->own_l = (struct cd_addr_list){ in->own, 0, (flags & 4) ? in->bits : NULL };
	in->res_l = (struct cd_addr_list){ in->res, 0, NULL };
	if (nul)
		for (const uint8_t *r = nul + 1; r + RECORD <= d + size; r += RECORD)
			record(in, r);
	/* the host may be empty: strtok_r would skip it */
	line = strchr(in->text, '\n');
	in->host = in->text;
	if (!line)
		return true;
	*line = '\0';
	for (char *e = strtok_r(line + 1, "\n", &save); e && in->n < MAX_ENTRIES;
	     e = strtok_r(NULL, "\n", &save))
		if (cd_allow_parse(e, &in->list[in->n], &err) == 0)
			in->n++;
	return true;
}

static void free_input(struct input *in)
{
	while (in->n)
		cd_allow_free(&in->list[--in->n]);
	free(in->text);
}

/* --- the rules read plainly, for comparison --- */

static bool port_takes(const struct cd_allow *a, uint16_t port)
{
	return a->port ? a->port == port : port == 80 || port == 443;
}

static bool name_listed(const struct input *in, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < in->n; i++) {
		const struct cd_allow *a = &in->list[i];
		size_t al;

		if (!a->name || !port_takes(a, in->port))
			continue;
		al = strlen(a->name);
		if (!a->wildcard && strcmp(name, a->name) == 0)
			return true;
		if (a->wildcard && len > al + 1 && name[len - al - 1] == '.' &&
		    strcmp(name + len - al, a->name) == 0)
			return true;
	}
	return false;
}

static const uint8_t *addr_bytes(const struct sockaddr_storage *ss, size_t *len)
{
	if (ss->ss_family == AF_INET) {
		*len = 4;
		return (const uint8_t *)&((const struct sockaddr_in *)ss)->sin_addr;
	}
	*len = 16;
	return ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
}

static bool same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	size_t la, lb;
	const uint8_t *pa = addr_bytes(a, &la), *pb = addr_bytes(b, &lb);

	return a->ss_family == b->ss_family && la == lb && memcmp(pa, pb, la) == 0;
}

/* "localhost" or a name below it (RFC 6761) */
static bool localhost_name(const char *name)
{
	size_t n = strlen(name), l = strlen("localhost");

	return n >= l && strcmp(name + n - l, "localhost") == 0 && (n == l || name[n - l - 1] == '.');
}

/* an entry of the address's own, or a localhost entry (not a wildcard) for a loopback address:
 * either takes it on the entry's ports */
static bool addr_listed(const struct input *in, const struct sockaddr_storage *ss)
{
	const char *special = cd_addr_special((const struct sockaddr *)ss);
	bool loopback = special && strcmp(special, "loopback") == 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct cd_allow *a = &in->list[i];

		if (!port_takes(a, in->port))
			continue;
		if (!a->name && same(&a->addr, ss))
			return true;
		if (a->name && !a->wildcard && loopback && localhost_name(a->name))
			return true;
	}
	return false;
}

/* Where connect() to this address ends on this host: 127/8, ::1, 0/8 and ::, also behind an
 * IPv4-mapped, NAT64 or 6to4 address. */
static bool reaches_this_host(const struct sockaddr_storage *ss)
{
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
	static const uint8_t zero[16], one[16] = { [15] = 1 };
	const uint8_t *b;
	size_t len;

	b = addr_bytes(ss, &len);
	if (len == 16) {
		if (memcmp(b, zero, 16) == 0 || memcmp(b, one, 16) == 0)
			return true;
		if ((memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff) ||
		    memcmp(b, nat64, 12) == 0)
			b += 12;
		else if (b[0] == 0x20 && b[1] == 0x02)
			b += 2;
		else
			return false;
	}
	return b[0] == 127 || b[0] == 0;
}

/* one of the host's own addresses, exactly or in its IPv4-mapped form (a prefix longer than the
 * address holds nothing) */
static bool own_exactly(const struct input *in, const struct sockaddr_storage *ss)
{
	struct sockaddr_storage v4 = { .ss_family = AF_INET };
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;

	if (!in->has_own)
		return false;
	if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(a6))
		memcpy(&((struct sockaddr_in *)&v4)->sin_addr, &a6->s6_addr[12], 4);
	for (size_t i = 0; i < in->own_l.n; i++) {
		unsigned max = in->own[i].ss_family == AF_INET ? 32 : 128;

		if ((in->own[i].ss_family != AF_INET && in->own[i].ss_family != AF_INET6) ||
		    (in->own_l.bits && in->own_l.bits[i] > max))
			continue;
		if (same(&in->own[i], ss) || (v4.ss_family == AF_INET &&
					      ss->ss_family == AF_INET6 &&
					      IN6_IS_ADDR_V4MAPPED(a6) && same(&in->own[i], &v4)))
			return true;
	}
	return false;
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
					      : ((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* --- the checks --- */

static void check_shape(enum cd_verdict v, const struct cd_decision *d)
{
	if (v < CD_VERDICT_DIAL || v > CD_VERDICT_NO_ADDRESS)
		abort();
	if (v == CD_VERDICT_REFUSE && (!d->reason[0] || !d->notice[0]))
		abort(); /* a refusal says why, to the client and to the user */
	if (v == CD_VERDICT_BAD_NAME && !d->reason[0])
		abort();
	if ((v == CD_VERDICT_DIAL) != (d->n_addrs > 0) || d->n_addrs > CD_ALLOW_MAX_DIAL)
		abort();
	if (strnlen(d->host, sizeof(d->host)) == sizeof(d->host) ||
	    strnlen(d->reason, sizeof(d->reason)) == sizeof(d->reason) ||
	    strnlen(d->notice, sizeof(d->notice)) == sizeof(d->notice))
		abort();
}

static void same_decision(enum cd_verdict v, const struct cd_decision *d, enum cd_verdict w,
			  const struct cd_decision *e)
{
	if (v != w || strcmp(d->host, e->host) != 0 || strcmp(d->reason, e->reason) != 0 ||
	    strcmp(d->notice, e->notice) != 0 || d->why != e->why || d->n_addrs != e->n_addrs ||
	    memcmp(d->addrs, e->addrs, d->n_addrs * sizeof(d->addrs[0])) != 0)
		abort();
}

static void check_literal(const struct input *in, const struct sockaddr_storage *lit,
			  enum cd_verdict v, const struct cd_decision *d)
{
	if (v != CD_VERDICT_DIAL && v != CD_VERDICT_REFUSE)
		abort();
	if ((v == CD_VERDICT_DIAL) != addr_listed(in, lit))
		abort(); /* an address goes where it says only with an entry of its own */
	if (v == CD_VERDICT_DIAL &&
	    (d->n_addrs != 1 || !same(&d->addrs[0], lit) || port_of(&d->addrs[0]) != in->port))
		abort();
}

/* After the lookup: exactly the first CD_ALLOW_MAX_DIAL addresses that the rule lets through,
 * in order; nothing that reaches this host or is the host's own without an entry. */
static void check_addrs(const struct input *in, enum cd_verdict v, const struct cd_decision *d)
{
	size_t k = 0, inet = 0;
	const char *first_why = NULL;

	for (size_t i = 0; i < in->res_l.n; i++) {
		const struct sockaddr_storage *a = &in->res[i];
		const char *why;

		if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
			continue;
		inet++;
		why = cd_addr_special((const struct sockaddr *)a);
		if (!why && in->has_own && cd_addr_list_has(&in->own_l, (const struct sockaddr *)a))
			why = CD_ADDR_OWN;
		if (why && !addr_listed(in, a)) {
			if (!first_why)
				first_why = why;
			continue;
		}
		if (k == CD_ALLOW_MAX_DIAL)
			break;
		if (k >= d->n_addrs || !same(&d->addrs[k], a) || port_of(&d->addrs[k]) != in->port)
			abort();
		k++;
	}
	if (k != d->n_addrs)
		abort();
	if ((v == CD_VERDICT_NO_ADDRESS) != (inet == 0) || (v == CD_VERDICT_REFUSE) != (inet && !k))
		abort(); /* no address: a failed lookup; addresses, all refused: a refusal */
	if (v == CD_VERDICT_REFUSE && (!first_why || strcmp(d->why, first_why) != 0 ||
				       strcmp(d->reason, d->notice) != 0))
		abort();
	for (size_t i = 0; i < d->n_addrs; i++)
		if ((reaches_this_host(&d->addrs[i]) || own_exactly(in, &d->addrs[i]) ||
		     cd_addr_special((const struct sockaddr *)&d->addrs[i])) &&
		    !addr_listed(in, &d->addrs[i]))
			abort(); /* the DNS-rebinding rule */
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct input *in = calloc(1, sizeof(*in));
	const struct cd_addr_list *own;
	struct cd_decision *d = calloc(3, sizeof(*d));
	struct sockaddr_storage lit;
	enum cd_verdict before, again, after;

	if (!in || !d || size > 4096 || !read_input(in, data, size))
		goto out;
	own = in->has_own ? &in->own_l : NULL;
	before = cd_allow_decide(in->list, in->n, own, in->host, in->v6, in->port, NULL, &d[0]);
	again = cd_allow_decide(in->list, in->n, own, in->host, in->v6, in->port, NULL, &d[1]);
	after = cd_allow_decide(in->list, in->n, own, in->host, in->v6, in->port, &in->res_l, &d[2]);
	check_shape(before, &d[0]);
	check_shape(after, &d[2]);
	same_decision(before, &d[0], again, &d[1]); /* pure: the same inputs, the same decision */
	if (cd_addr_parse(in->host, &lit)) {
		check_literal(in, &lit, before, &d[0]);
		same_decision(before, &d[0], after, &d[2]); /* a lookup changes nothing */
		goto out;
	}
	if (before == CD_VERDICT_DIAL || after == CD_VERDICT_RESOLVE)
		abort(); /* a name is dialled only after its lookup, never looked up twice */
	if (before == CD_VERDICT_BAD_NAME)
		goto out;
	if ((before == CD_VERDICT_RESOLVE) != name_listed(in, d[0].host))
		abort(); /* a name is looked up only when an entry covers it on that port */
	if (before != CD_VERDICT_RESOLVE) {
		same_decision(before, &d[0], after, &d[2]); /* refused before: after too */
		goto out;
	}
	if (after == CD_VERDICT_REFUSE && !d[2].why)
		abort(); /* after the lookup, only the rebinding rule refuses */
	check_addrs(in, after, &d[2]);
out:
	if (in)
		free_input(in);
	free(in);
	free(d);
	return 0;
}
