/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-httpreq.c - the egress proxy's HTTP request parser (httpreq.h): CONNECT and absolute-URI
 * requests, the origin-form head, and what is refused. TAP. The SOCKS5 parser is in
 * test-socks.c, the allow-list and the decision in test-allow.c.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpreq.h"
#include "util.h"

#include "../lib/tap.h"

static void req_ok(const char *head, bool connect, const char *host, unsigned port,
		   const char *origin)
{
	struct cd_http_req req;
	const char *why = NULL;
	int r = cd_http_parse(head, strlen(head), &req, &why);

	if (!ok(r == 1, "request parsed: %.40s", head)) {
		diag("why: %s", why ? why : "(incomplete)");
		return;
	}
	ok(req.connect == connect, "... connect %d", connect);
	is_str(req.host, host, "... host");
	is_uint(req.port, port, "... port");
	is_uint(req.head_len, strlen(head), "... the whole head");
	if (origin) {
		size_t n = 0;
		char *o = cd_http_origin_head(head, &req, &n);

		ok(o && strlen(o) == n, "... origin head built");
		is_str(o, origin, "... origin head");
		free(o);
	}
}

static void req_bad(const char *head, const char *why_want)
{
	struct cd_http_req req;
	const char *why = NULL;
	int r = cd_http_parse(head, strlen(head), &req, &why);

	ok(r == -1, "request refused: %.40s", head);
	is_str(why ? why : "", why_want, "... reason");
}

static void test_requests(void)
{
	struct cd_http_req req;
	const char *why = NULL;
	char big[CD_HTTP_HEAD_MAX + 64];

	req_ok("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", true,
	       "example.com", 443, NULL);
	req_ok("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", true, "2001:db8::1", 8443, NULL);
	req_ok("CONNECT 192.0.2.1:22 HTTP/1.0\n\n", true, "192.0.2.1", 22, NULL);
	req_ok("GET http://example.com/a?b=c HTTP/1.1\r\nHost: evil.net\r\nProxy-Connection: keep-alive\r\n"
	       "Proxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\nAccept: */*\r\n\r\n",
	       false, "example.com", 80,
	       "GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: close\r\n\r\n");
	req_ok("POST http://Example.com:8080 HTTP/1.0\nContent-Length: 3\n\n", false, "Example.com",
	       8080, "POST / HTTP/1.0\r\nHost: Example.com:8080\r\nContent-Length: 3\r\nConnection: close\r\n\r\n");
	req_ok("GET http://[::1]:81/x HTTP/1.1\r\n\r\n", false, "::1", 81,
	       "GET /x HTTP/1.1\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n");

	is_int(cd_http_parse("CONNECT a.com:443 HTTP/1.1\r\n", 28, &req, &why), 0,
	       "an unfinished head: read more");
	is_int(cd_http_parse("", 0, &req, &why), 0, "nothing yet: read more");
	memset(big, 'a', sizeof(big));
	is_int(cd_http_parse(big, CD_HTTP_HEAD_MAX, &req, &why), -1, "8 KiB without an end: refused");

	req_bad("GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"not a proxy request (CONNECT host:port, or an absolute http:// URI)");
	req_bad("GET https://a.com/ HTTP/1.1\r\n\r\n", "an https:// URI must go through CONNECT");
	req_bad("CONNECT a.com HTTP/1.1\r\n\r\n", "CONNECT needs host:port");
	req_bad("CONNECT a.com:0 HTTP/1.1\r\n\r\n", "the port is not a number in 1-65535");
	req_bad("CONNECT a.com:65536 HTTP/1.1\r\n\r\n", "the port is not a number in 1-65535");
	req_bad("CONNECT a.com:123456 HTTP/1.1\r\n\r\n", "the port is not a number in 1-65535");
	req_bad("CONNECT :443 HTTP/1.1\r\n\r\n", "no host in the request");
	req_bad("GET http://a.com@b.com/ HTTP/1.1\r\n\r\n", "user information in the URI is not accepted");
	req_bad("GET http://a%2ecom/ HTTP/1.1\r\n\r\n", "the host name has characters no host name has");
	req_bad("CONNECT [::1:443 HTTP/1.1\r\n\r\n", "no ']' after the IPv6 address");
	req_bad("get http://a.com/ HTTP/1.1\r\n\r\n", "the method is not an upper-case word");
	req_bad("GET http://a.com/ HTTP/2\r\n\r\n", "not HTTP/1.0 or HTTP/1.1");
	req_bad("GET http://a.com/ HTTP/1.1 x\r\n\r\n", "not HTTP/1.0 or HTTP/1.1");
	req_bad("GET  http://a.com/ HTTP/1.1\r\n\r\n", "the request line is not METHOD TARGET HTTP/1.x");
	req_bad("GET\r\n\r\n", "no method and target in the request line");
	req_bad("GET http://a.com/\x01 HTTP/1.1\r\n\r\n", "control characters in the request line");
	req_bad("\x16\x03\x01\r\n\r\n", "control characters in the request line");
	req_bad("GET http://a.com/ HTTP/1.1\r\nX: a\x01b\r\n\r\n", "control characters in a header");
	req_bad("GET http://a.com/a\rX HTTP/1.1\r\n\r\n", "control characters in the request line");
	req_bad("GET http://a.com/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "a folded header line");
	req_bad("GET http://a.com/ HTTP/1.1\r\nHost : x\r\n\r\n", "a header line is not \"name: value\"");
	req_bad("GET http://a.com/ HTTP/1.1\r\nnocolon\r\n\r\n", "a header line is not \"name: value\"");
	req_bad("GET http://a.com/ HTTP/1.1\r\n: x\r\n\r\n", "a header line is not \"name: value\"");
	req_ok("GET http://a.com?x=1#frag HTTP/1.1\r\n\r\n", false, "a.com", 80,
	       "GET /?x=1 HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n");
	req_ok("GET http://a.com/p#f HTTP/1.1\r\n\r\n", false, "a.com", 80,
	       "GET /p HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n");
	req_bad("GET http://a.com/ HTTP/1.1\r\nX: a\rb\r\n\r\n", "control characters in a header");
	{
		static const char nul[] = "GET http://a.com/ HTTP/1.1\r\nX: a\0b\r\n\r\n";

		ok(cd_http_parse(nul, sizeof(nul) - 1, &req, &why) == -1 &&
			   strcmp(why, "control characters in a header") == 0,
		   "a NUL in a header: refused");
	}
}

int main(void)
{
	test_requests();
	return done_testing();
}
