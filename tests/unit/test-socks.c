/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-socks.c - the egress proxy's SOCKS5 parser (socks.h): greetings, CONNECT to addresses and
 * names, what is refused, and the reply. TAP.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "socks.h"
#include "util.h"

#include "../lib/tap.h"

static void test_socks(void)
{
	static const uint8_t greet[] = { 5, 2, 2, 0 }, greet_auth[] = { 5, 1, 2 };
	static const uint8_t v4[] = { 5, 1, 0, 1, 192, 0, 2, 1, 0x01, 0xbb, 'x' };
	static const uint8_t v6[] = { 5, 1, 0, 4, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
				      0, 0, 0, 1, 0, 80 };
	static const uint8_t name[] = { 5, 1, 0, 3, 7, 'a', '.', 'b', '-', 'c', '_', 'd', 0, 22 };
	static const uint8_t bind[] = { 5, 2, 0, 1, 1, 2, 3, 4, 0, 80 };
	static const uint8_t atyp[] = { 5, 1, 0, 9, 1, 2, 3, 4, 0, 80 };
	static const uint8_t bad_name[] = { 5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80 };
	static const uint8_t nul_name[] = { 5, 1, 0, 3, 3, 0, 'a', 'b', 0, 80 };
	static const uint8_t port0[] = { 5, 1, 0, 1, 1, 2, 3, 4, 0, 0 };
	struct cd_http_req req;
	const char *why = NULL;
	uint8_t code = 0xee, reply[10];
	size_t used = 0;
	bool noauth = false;

	ok(cd_socks_greeting(greet, sizeof(greet), &used, &noauth) == 1 && used == 4 && noauth,
	   "SOCKS5 greeting with no-authentication among its methods");
	ok(cd_socks_greeting(greet_auth, sizeof(greet_auth), &used, &noauth) == 1 && !noauth,
	   "... without it");
	is_int(cd_socks_greeting(greet, 3, &used, &noauth), 0, "... unfinished: read more");
	is_int(cd_socks_greeting((const uint8_t *)"\x04\x01", 2, &used, &noauth), -1,
	       "... SOCKS4: refused");
	is_int(cd_socks_greeting((const uint8_t *)"\x05\x00", 2, &used, &noauth), -1,
	       "... no methods: refused");
	ok(cd_socks_request(v4, sizeof(v4), &req, &used, &code, &why) == 1 && used == 10 &&
		   strcmp(req.host, "192.0.2.1") == 0 && req.port == 443 && req.connect &&
		   req.head_len == 10,
	   "SOCKS5 CONNECT to an IPv4 address (early data left after it)");
	ok(cd_socks_request(v6, sizeof(v6), &req, &used, &code, &why) == 1 &&
		   strcmp(req.host, "2001:db8::1") == 0 && req.host_is_v6 && req.port == 80,
	   "... to an IPv6 address");
	ok(cd_socks_request(name, sizeof(name), &req, &used, &code, &why) == 1 &&
		   strcmp(req.host, "a.b-c_d") == 0 && req.port == 22 && !req.host_is_v6,
	   "... to a name");
	is_int(cd_socks_request(name, sizeof(name) - 1, &req, &used, &code, &why), 0,
	       "... unfinished: read more");
	ok(cd_socks_request(bind, sizeof(bind), &req, &used, &code, &why) == -1 &&
		   code == CD_SOCKS_BAD_COMMAND, "BIND: command not supported");
	ok(cd_socks_request(atyp, sizeof(atyp), &req, &used, &code, &why) == -1 &&
		   code == CD_SOCKS_BAD_ADDRESS, "an unknown address type");
	ok(cd_socks_request(bad_name, sizeof(bad_name), &req, &used, &code, &why) == -1 &&
		   code == CD_SOCKS_FAILURE, "a name with a space");
	ok(cd_socks_request(nul_name, sizeof(nul_name), &req, &used, &code, &why) == -1 &&
		   code == CD_SOCKS_FAILURE, "a name with a NUL (found by fuzzing)");
	ok(cd_socks_request(port0, sizeof(port0), &req, &used, &code, &why) == -1, "port 0");
	cd_socks_reply(CD_SOCKS_NOT_ALLOWED, reply);
	ok(memcmp(reply, "\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10) == 0, "the reply");
}

int main(void)
{
	test_socks();
	return done_testing();
}
