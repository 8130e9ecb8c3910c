/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-net.c - libFuzzer target for what the egress proxy parses from the sandbox and from the
 * command line: the request head (httpreq.c), SOCKS5 (socks.c), the allow-list entries and names
 * (allow.c).
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
	if (size < 300 && !memchr(data, '\0', size))
		check_entry(s);
	free(s);
	return 0;
}
