/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-net.c - libFuzzer target for what the egress proxy parses from the sandbox and from the
 * command line: the request head (httpreq.c), SOCKS5 (socks.c), the allow-list entries and names
 * (allow.c); and the DNS-rebinding rule (allow.c) for the addresses the input's bytes make.
 * Checks the invariants the proxy relies on, not only the absence of crashes.
 */
#include <stdlib.h>
#include <string.h>

#include "allow.h"
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

		if (a.name && (strchr(a.name, '*') || cd_allow_match_name(&a, 1, a.name, port) ==
							       (a.wildcard ? &a : NULL)))
			abort(); /* a wildcard never covers its own domain; an exact name does */
		if (a.name && !a.wildcard && !a.port && !cd_allow_match_name(&a, 1, a.name, 80))
			abort();
		cd_allow_free(&a);
	}
	if (cd_allow_normalize_name(s, name, sizeof(name)) == 0 &&
	    (strlen(name) > 253 || strpbrk(name, ".") == name))
		abort();
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
	if (cd_addr_special((struct sockaddr *)&a6) &&
	    !cd_allow_rebinding(NULL, 0, NULL, (struct sockaddr *)&a6, 443))
		abort();
	if (!cd_allow_rebinding(NULL, 0, &own4, (struct sockaddr *)&a4, 443) ||
	    !cd_allow_rebinding(NULL, 0, &own4, (struct sockaddr *)&mapped, 443) ||
	    !cd_allow_rebinding(NULL, 0, &own6, (struct sockaddr *)&a6, 443))
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
	if (size < 300 && !memchr(data, '\0', size))
		check_entry(s);
	free(s);
	return 0;
}
