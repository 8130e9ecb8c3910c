/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-net.c - the egress proxy's pure parts: allow-list entries and matching (allow.h), the
 * DNS-rebinding rule (address classes, the host's own addresses), and the proxy request parser
 * (httpreq.h). TAP.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "httpreq.h"
#include "socks.h"
#include "util.h"

#include "../lib/tap.h"

static void entry_ok(const char *spec, const char *name, bool wildcard, unsigned port)
{
	struct cordon_error err = { 0 };
	struct cd_allow a;
	int r = cd_allow_parse(spec, &a, &err);

	if (!ok(r == 0, "entry %s is accepted", spec)) {
		diag("%s", err.msg);
		return;
	}
	is_str(a.name ? a.name : "(address)", name, "... %s: name", spec);
	ok(a.wildcard == wildcard, "... %s: wildcard %d", spec, wildcard);
	is_uint(a.port, port, "... %s: port", spec);
	cd_allow_free(&a);
}

static void entry_bad(const char *spec, const char *msg)
{
	struct cordon_error err = { 0 };
	struct cd_allow a;
	int r = cd_allow_parse(spec, &a, &err);

	ok(r < 0, "entry \"%s\" is refused", spec);
	is_str(err.step, "allow-net", "... step");
	is_str(err.msg, msg, "... message");
}

static void test_entries(void)
{
	entry_ok("example.com", "example.com", false, 0);
	entry_ok("Example.COM.", "example.com", false, 0);
	entry_ok("example.com:8080", "example.com", false, 8080);
	entry_ok("*.example.com", "example.com", true, 0);
	entry_ok("*.example.com:443", "example.com", true, 443);
	entry_ok("192.0.2.1", "(address)", false, 0);
	entry_ok("192.0.2.1:65535", "(address)", false, 65535);
	entry_ok("[2001:db8::1]:8443", "(address)", false, 8443);
	entry_ok("[::1]", "(address)", false, 0);
	entry_ok("2001:db8::1", "(address)", false, 0);
	entry_ok("_srv.example.com", "_srv.example.com", false, 0);
	entry_ok("localhost", "localhost", false, 0);

	entry_bad("", "empty entry (HOST[:PORT])");
	entry_bad(":80", "\":80\": no host name");
	entry_bad("a.com:", "\"a.com:\": empty port after ':'");
	entry_bad("a.com:0", "\"a.com:0\": port 0 is not in 1-65535");
	entry_bad("a.com:65536", "\"a.com:65536\": port 65536 is not in 1-65535");
	entry_bad("a.com:99999999999999999999", "\"a.com:99999999999999999999\": port 99999999999999999999 is not in 1-65535");
	entry_bad("a.com:8o", "\"a.com:8o\": \"8o\" is not a port number");
	entry_bad("a.com:-1", "\"a.com:-1\": \"-1\" is not a port number");
	entry_bad("*", "\"*\": a wildcard must name a domain, as in *.example.com (all of the network: --net host)");
	entry_bad("*.com", "\"*.com\": a wildcard over a whole top-level domain is too broad");
	entry_bad("a.*.com", "\"a.*.com\": '*' is allowed only as a leading \"*.\"");
	entry_bad("*a.com", "\"*a.com\": '*' is allowed only as a leading \"*.\"");
	entry_bad("**.a.com", "\"**.a.com\": '*' is allowed only as a leading \"*.\"");
	entry_bad("a..com", "\"a..com\": \"a..com\" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)");
	entry_bad("-a.com", "\"-a.com\": \"-a.com\" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)");
	entry_bad("a-.com", "\"a-.com\": \"a-.com\" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)");
	entry_bad("1.2.3", "\"1.2.3\": \"1.2.3\" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)");
	entry_bad("256.1.1.1", "\"256.1.1.1\": \"256.1.1.1\" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)");
	entry_bad("a_b.com/x", "\"a_b.com/x\": \"a_b.com/x\" is neither a host name nor an IPv4 address (IPv6: [2001:db8::1]:443)");
	entry_bad("[::1", "\"[::1\": no ']' after the IPv6 address");
	entry_bad("[::1]x", "\"[::1]x\": only \":PORT\" may follow ']'");
	entry_bad("[1.2.3.4]", "\"[1.2.3.4]\": \"1.2.3.4\" is not an IPv6 address");
	entry_bad("::g", "\"::g\": \"::g\" is not an IPv6 address");
}

static bool matches(const char *spec, const char *name, uint16_t port)
{
	struct cordon_error err = { 0 };
	struct cd_allow a;
	bool m;

	if (cd_allow_parse(spec, &a, &err) < 0)
		return false;
	m = cd_allow_match_name(&a, 1, name, port) != NULL;
	cd_allow_free(&a);
	return m;
}

static bool addr_matches(const char *spec, const char *addr, uint16_t port)
{
	struct cordon_error err = { 0 };
	struct sockaddr_storage ss = { 0 };
	struct cd_allow a;
	bool m;

	if (!cd_addr_parse(addr, &ss))
		return false;
	if (cd_allow_parse(spec, &a, &err) < 0)
		return false;
	m = cd_allow_match_addr(&a, 1, (struct sockaddr *)&ss, port) != NULL;
	cd_allow_free(&a);
	return m;
}

static void test_matching(void)
{
	ok(matches("example.com", "example.com", 443), "exact name, port 443 by default");
	ok(matches("example.com", "example.com", 80), "... and 80");
	ok(!matches("example.com", "example.com", 8080), "... not 8080");
	ok(matches("example.com:8080", "example.com", 8080), "a given port");
	ok(!matches("example.com:8080", "example.com", 443), "... and only it");
	ok(!matches("example.com", "www.example.com", 443), "an exact name does not cover subdomains");
	ok(!matches("example.com", "example.com.evil.net", 443), "... nor a longer name");
	ok(!matches("example.com", "xexample.com", 443), "... nor a name ending like it");
	ok(matches("*.example.com", "www.example.com", 443), "a wildcard covers a subdomain");
	ok(matches("*.example.com", "a.b.example.com", 443), "... at any depth");
	ok(!matches("*.example.com", "example.com", 443), "... but not the domain itself");
	ok(!matches("*.example.com", "xexample.com", 443), "... nor a name ending like it");
	ok(!matches("*.example.com", "example.com.evil.net", 443), "... nor a longer name");
	ok(!matches("192.0.2.1", "192.0.2.1", 443), "an address entry is no name entry");
	ok(addr_matches("192.0.2.1", "192.0.2.1", 443), "an address entry matches its address");
	ok(!addr_matches("192.0.2.1", "192.0.2.2", 443), "... not another");
	ok(!addr_matches("192.0.2.1:8080", "192.0.2.1", 443), "... on its port only");
	ok(addr_matches("[2001:db8::1]:8443", "2001:db8::1", 8443), "IPv6 address entry");
	ok(!addr_matches("[2001:db8::1]", "2001:db8::2", 443), "... not another");
	ok(!addr_matches("example.com", "192.0.2.1", 443), "a name entry matches no address");
}

static void special_is(const char *addr, const char *want)
{
	struct sockaddr_storage ss = { 0 };
	const char *got;

	if (!ok(cd_addr_parse(addr, &ss), "%s is an address", addr))
		return;
	got = cd_addr_special((struct sockaddr *)&ss);
	is_str(got ? got : "public", want, "address class of %s", addr);
}

static void test_special(void)
{
	special_is("127.0.0.1", "loopback");
	special_is("127.255.0.9", "loopback");
	special_is("10.1.2.3", "private");
	special_is("172.16.0.1", "private");
	special_is("172.31.255.255", "private");
	special_is("172.32.0.1", "public");
	special_is("192.168.1.1", "private");
	special_is("100.64.0.1", "private");
	special_is("169.254.169.254", "link-local");
	special_is("0.0.0.0", "unspecified");
	special_is("224.0.0.1", "multicast");
	special_is("255.255.255.255", "reserved");
	special_is("8.8.8.8", "public");
	special_is("93.184.216.34", "public");
	special_is("::1", "loopback");
	special_is("::", "unspecified");
	special_is("fe80::1", "link-local");
	special_is("fd00::1", "private");
	special_is("fc00::1", "private");
	special_is("ff02::1", "multicast");
	special_is("::ffff:127.0.0.1", "loopback");
	special_is("::ffff:10.0.0.1", "private");
	special_is("::ffff:8.8.8.8", "public");
	special_is("64:ff9b::a9fe:a9fe", "link-local");
	special_is("2001:db8::1", "reserved");
	special_is("64:ff9b:1::a00:1", "private");
	special_is("2002:7f00:1::1", "loopback");
	special_is("2002:a00:1::1", "private");
	special_is("2002:808:808::1", "public");
	special_is("2606:4700::1111", "public");
}

/* cd_allow_rebinding for addr on port, with the allow-list allow and the host's addresses own
 * (NULL-terminated): "ok" when a name may lead there. */
static const char *rebinding(const char *addr, const char *const *allow, const char *const *own,
			     uint16_t port)
{
	static char why[32];
	struct cordon_error err = { 0 };
	struct sockaddr_storage ss, own_ss[8];
	struct cd_addr_list l = { own_ss, 0, NULL };
	struct cd_allow a[8];
	size_t n = 0;
	const char *w;

	if (!cd_addr_parse(addr, &ss))
		return "(not an address)";
	for (; own && own[l.n]; l.n++)
		if (l.n == CD_ELEMENTSOF(own_ss) || !cd_addr_parse(own[l.n], &own_ss[l.n]))
			return "(bad host address)";
	for (; allow && allow[n]; n++)
		if (n == CD_ELEMENTSOF(a) || cd_allow_parse(allow[n], &a[n], &err) < 0)
			return "(bad entry)";
	w = cd_allow_rebinding(a, n, own ? &l : NULL, (struct sockaddr *)&ss, port);
	snprintf(why, sizeof(why), "%s", w ? w : "ok");
	while (n)
		cd_allow_free(&a[--n]);
	return why;
}

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_own_addresses(void)
{
	const char *const *own = LIST("1.2.3.4", "2a00:1234::1", "10.0.0.5", "2002:102:305::1");

	is_str(rebinding("1.2.3.4", NULL, NULL, 443), "ok",
	       "a public address: a name may lead there");
	is_str(rebinding("1.2.3.4", NULL, own, 443), CD_ADDR_OWN,
	       "... not when it is one of the host's own addresses");
	is_str(rebinding("1.2.3.4", LIST("1.2.3.4"), own, 443), "ok",
	       "... unless that address is allowed itself");
	is_str(rebinding("1.2.3.4", LIST("1.2.3.4:8080"), own, 443), CD_ADDR_OWN,
	       "... on the port asked for");
	is_str(rebinding("1.2.3.4", LIST("1.2.3.5", "[::ffff:1.2.3.4]"), own, 443), CD_ADDR_OWN,
	       "... the exact address, not a neighbour nor another form of it");
	is_str(rebinding("1.2.3.5", NULL, own, 443), "ok", "another public address is no own one");
	is_str(rebinding("2a00:1234::1", NULL, own, 443), CD_ADDR_OWN, "IPv6: an own address");
	is_str(rebinding("2a00:1234::1", LIST("[2a00:1234::1]:443"), own, 443), "ok",
	       "... allowed itself");
	is_str(rebinding("2a00:1234::2", NULL, own, 443), "ok", "... another one is no own one");
	is_str(rebinding("::ffff:1.2.3.4", NULL, own, 443), CD_ADDR_OWN,
	       "the IPv4-mapped IPv6 form of an own IPv4 address");
	is_str(rebinding("::ffff:1.2.3.4", LIST("::ffff:1.2.3.4"), own, 443), "ok",
	       "... allowed in that form");
	is_str(rebinding("64:ff9b::102:304", NULL, own, 443), CD_ADDR_OWN, "... its NAT64 form");
	is_str(rebinding("2002:102:304::1", NULL, own, 443), CD_ADDR_OWN, "... its 6to4 form");
	is_str(rebinding("::ffff:1.2.3.5", NULL, own, 443), "ok",
	       "the IPv4-mapped form of another public address");
	is_str(rebinding("2002:102:305::1", NULL, own, 443), CD_ADDR_OWN,
	       "an own 6to4 address itself (its IPv4 address is no own one)");
	is_str(rebinding("10.0.0.5", NULL, own, 443), "private",
	       "an own private address is told as private");
	is_str(rebinding("127.0.0.1", NULL, own, 443), "loopback", "loopback, as before");
	is_str(rebinding("127.0.0.1", LIST("127.0.0.1"), own, 443), "ok", "... allowed itself");
}

static void test_unspecified(void)
{
	/* connect() to 0.0.0.0 or :: reaches this host */
	is_str(rebinding("0.0.0.0", NULL, NULL, 443), "unspecified",
	       "a name may not lead to 0.0.0.0");
	is_str(rebinding("0.1.2.3", NULL, NULL, 443), "unspecified", "... nor to 0.0.0.0/8");
	is_str(rebinding("::", NULL, NULL, 443), "unspecified", "... nor to ::");
	is_str(rebinding("::ffff:0.0.0.0", NULL, NULL, 443), "unspecified",
	       "... nor to ::ffff:0.0.0.0");
	is_str(rebinding("0.0.0.0", LIST("0.0.0.0"), NULL, 443), "ok",
	       "... unless 0.0.0.0 is allowed itself");
	is_str(rebinding("::", LIST("::"), NULL, 443), "ok", "... or :: is");
}

static void reason_is(const char *addr, const char *why, const char *want)
{
	struct sockaddr_storage ss;
	char buf[256];

	cd_addr_parse(addr, &ss);
	cd_allow_rebinding_reason("name.test", (struct sockaddr *)&ss, why, buf, sizeof(buf));
	is_str(buf, want, "the reason for %s (%s)", addr, why);
}

static void test_reasons(void)
{
	reason_is("1.2.3.4", CD_ADDR_OWN,
		  "name.test resolves to one of this host's own addresses (1.2.3.4), which is not "
		  "on the allow-list itself (DNS rebinding protection: allow 1.2.3.4 too to reach "
		  "it)");
	reason_is("2a00:1234::1", CD_ADDR_OWN,
		  "name.test resolves to one of this host's own addresses (2a00:1234::1), which is "
		  "not on the allow-list itself (DNS rebinding protection: allow 2a00:1234::1 too "
		  "to reach it)");
	reason_is("127.0.0.1", "loopback",
		  "name.test resolves to 127.0.0.1, a loopback address, which is not on the "
		  "allow-list itself (DNS rebinding protection: allow 127.0.0.1 too to reach it)");
	reason_is("0.0.0.0", "unspecified",
		  "name.test resolves to 0.0.0.0, an unspecified address, which is not on the "
		  "allow-list itself (DNS rebinding protection: allow 0.0.0.0 too to reach it)");
}

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


/* a local route covers a prefix: every address in it is the host's own */
static void test_own_prefixes(void)
{
	struct sockaddr_storage nets[2];
	uint8_t bits[2] = { 24, 64 };
	struct cd_addr_list l = { nets, 2, bits };
	struct sockaddr_storage a;

	ok(cd_addr_parse("5.6.7.0", &nets[0]) && cd_addr_parse("2a00:1234::", &nets[1]),
	   "prefixes parse");
	ok(cd_addr_parse("5.6.7.200", &a) && cd_addr_list_has(&l, (struct sockaddr *)&a),
	   "5.6.7.200 is in a local 5.6.7.0/24");
	ok(cd_addr_parse("5.6.8.1", &a) && !cd_addr_list_has(&l, (struct sockaddr *)&a),
	   "5.6.8.1 is not");
	ok(cd_addr_parse("::ffff:5.6.7.3", &a) && cd_addr_list_has(&l, (struct sockaddr *)&a),
	   "its IPv4-mapped form is");
	ok(cd_addr_parse("2a00:1234::ffff:1", &a) && cd_addr_list_has(&l, (struct sockaddr *)&a),
	   "2a00:1234::ffff:1 is in a local 2a00:1234::/64");
	ok(cd_addr_parse("2a00:1234:0:1::1", &a) && !cd_addr_list_has(&l, (struct sockaddr *)&a),
	   "2a00:1234:0:1::1 is not");
	ok(cd_allow_rebinding(NULL, 0, &l, (struct sockaddr *)&nets[0], 80) != NULL,
	   "the rebinding rule refuses the prefix's addresses");
}

int main(void)
{
	test_own_prefixes();
	test_entries();
	test_matching();
	test_special();
	test_own_addresses();
	test_unspecified();
	test_reasons();
	test_requests();
	test_socks();
	return done_testing();
}
