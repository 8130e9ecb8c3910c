/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-net.c - libFuzzer target for what the egress proxy parses from the sandbox and from the
 * command line: the request head (httpreq.c), SOCKS5 (socks.c), the allow-list entries and names
 * (allow.c); the sandbox's resolver's DNS reading and reply (dns.c); and the DNS-rebinding rule of cd_allow_decide (allow.c) for the addresses the input's
 * bytes make.
 * Checks the invariants the proxy relies on, not only the absence of crashes.
 */
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "dns.h"
#include "httpreq.h"
#include "socks.h"

static void check_request(const char *d, size_t n)
{
	struct cd_http_req req;
	const char *why = NULL;
	size_t len = 0;
	char *head;
	int r = cd_http_parse(d, n, &req, &why);

	if (r < 0 && (!why || !*why))
		abort(); /* every refusal has a reason */
	if (r <= 0)
		return;
	if (req.head_len > n || req.head_len > CD_HTTP_HEAD_MAX || !req.host[0] || !req.port)
		abort();
	if (strpbrk(req.host, " \r\n\t/@?#"))
		abort(); /* nothing in a host name that could change where it leads */
	if (req.connect)
		return;
	if (req.path_off + req.path_len > req.head_len)
		abort();
	head = cd_http_origin_head(d, &req, &len);
	if (!head)
		return;
	if (strlen(head) != len || len < 4 || memcmp(head + len - 4, "\r\n\r\n", 4) != 0 ||
	    len > 2 * req.head_len + 512)
		abort();
	free(head);
}

static void check_socks(const uint8_t *d, size_t n)
{
	struct cd_http_req req;
	const char *why = NULL;
	size_t used = 0;
	uint8_t code = 0;
	bool noauth;
	int r = cd_socks_greeting(d, n, &used, &noauth);

	if (r > 0) {
		if (used > n)
			abort();
		d += used, n -= used;
	}
	r = cd_socks_request(d, n, &req, &used, &code, &why);
	if (r < 0 && (!why || !code))
		abort();
	if (r > 0 && (used > n || !req.host[0] || !req.port || strpbrk(req.host, " \r\n/@?#")))
		abort();
}

/* The sandbox's resolver's reading of a datagram (dns.c): what it answers, and that the answer
 * is no longer than the query, keeps its id and question, and names it in printable bytes only. */
static void check_dns(const uint8_t *d, size_t n)
{
	uint8_t out[CD_DNS_HEADER + CD_DNS_NAME_WIRE_MAX + 4], rcode = 0xee;
	struct cd_dns_query q;
	int r = cd_dns_parse_query(d, n, &q, &rcode);
	size_t len;

	if (r < 0) {
		if (n >= CD_DNS_HEADER && !(d[2] & 0x80))
			abort(); /* only a runt or a response is dropped */
		return;
	}
	if (r == 0 && (q.question_len || (rcode != CD_DNS_FORMERR && rcode != CD_DNS_NOTIMP)))
		abort();
	if (r > 0) {
		if (q.question_len < 5 || CD_DNS_HEADER + q.question_len > n || !q.name[0] ||
		    strlen(q.name) >= CD_DNS_NAME_MAX)
			abort();
		for (const char *c = q.name; *c; c++)
			if (*c <= ' ' || *c >= 0x7f || (*c >= 'A' && *c <= 'Z'))
				abort(); /* nothing that could move a terminal's cursor, one case */
		if (q.qtype != (d[CD_DNS_HEADER + q.question_len - 4] << 8 |
				d[CD_DNS_HEADER + q.question_len - 3]))
			abort();
		rcode = CD_DNS_NXDOMAIN;
	}
	len = cd_dns_reply(d, n, &q, rcode, out, sizeof(out));
	if (len != CD_DNS_HEADER + q.question_len || len > n || out[0] != d[0] || out[1] != d[1] ||
	    !(out[2] & 0x80) || (out[3] & 0x0f) != rcode ||
	    memcmp(out + CD_DNS_HEADER, d + CD_DNS_HEADER, q.question_len) != 0)
		abort();
}

/* The decision on name:port with the single entry a, before the lookup. */
static enum cd_verdict decide_name(const struct cd_allow *a, const char *name, uint16_t port)
{
	struct cd_decision d;

	return cd_allow_decide(a, 1, NULL, name, false, port, NULL, &d);
}

static void check_entry(const char *s)
{
	struct cordon_error err = { 0 };
	struct cd_allow a;
	char name[256];

	if (cd_allow_parse(s, &a, &err) < 0) {
		if (!err.msg[0])
			abort();
	} else {
		uint16_t port = a.port ? a.port : 443;

		if (a.name && (strchr(a.name, '*') || (decide_name(&a, a.name, port) ==
							CD_VERDICT_RESOLVE) == a.wildcard))
			abort(); /* a wildcard never covers its own domain; an exact name does */
		if (a.name && !a.wildcard && !a.port &&
		    decide_name(&a, a.name, 80) != CD_VERDICT_RESOLVE)
			abort();
		cd_allow_free(&a);
	}
	if (cd_allow_normalize_name(s, name, sizeof(name)) == 0 &&
	    (strlen(name) > 253 || strpbrk(name, ".") == name))
		abort();
}

/* The rebinding rule's decision for an allowed name, x.test, that resolves to addr alone. */
static const char *rebinding(const struct cd_addr_list *own, const struct sockaddr_storage *addr)
{
	static struct cd_allow name = { .name = "x.test" };
	struct cd_addr_list res = { (struct sockaddr_storage *)addr, 1, NULL };
	struct cd_decision d;

	if (cd_allow_decide(&name, 1, own, "x.test", false, 443, &res, &d) == CD_VERDICT_DIAL)
		return NULL;
	return d.why ? d.why : "?";
}

/* The first 16 bytes as an IPv6 address, the first 4 as an IPv4 one: no special address, and
 * none of the host's own (its IPv4-mapped form included), is reachable by a name without an entry
 * of its own. */
static void check_rebinding(const uint8_t *d, size_t n)
{
	struct sockaddr_storage a4 = { .ss_family = AF_INET }, a6 = { .ss_family = AF_INET6 };
	struct sockaddr_storage mapped = { .ss_family = AF_INET6 };
	struct in6_addr *m = &((struct sockaddr_in6 *)&mapped)->sin6_addr;
	struct cd_addr_list own4 = { &a4, 1, NULL }, own6 = { &a6, 1, NULL };

	if (n < 16)
		return;
	memcpy(&((struct sockaddr_in *)&a4)->sin_addr, d, 4);
	memcpy(&((struct sockaddr_in6 *)&a6)->sin6_addr, d, 16);
	m->s6_addr[10] = m->s6_addr[11] = 0xff;
	memcpy(&m->s6_addr[12], d, 4);
	if (cd_addr_special((struct sockaddr *)&a6) && !rebinding(NULL, &a6))
		abort();
	if (!rebinding(&own4, &a4) || !rebinding(&own4, &mapped) || !rebinding(&own6, &a6))
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check_request(s, size);
	check_socks(data, size);
	check_rebinding(data, size);
	check_dns(data, size);
	if (size < 300 && !memchr(data, '\0', size))
		check_entry(s);
	free(s);
	return 0;
}
