/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-allow.c - the egress allow-list (allow.h): entries, address classes, the host's own
 * addresses, and the one decision on where a request may go, cd_allow_decide (names, wildcards,
 * ports, address literals, and the DNS-rebinding rule on a name's addresses), with its reasons.
 * TAP.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "allow.h"
#include "util.h"

#include "../lib/tap.h"

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

#define MAX_ENTRIES 8
#define MAX_ADDRS   16

/* The host's own addresses in every decision below, unless a case says otherwise: a public
 * IPv4 and IPv6 address (they reach the host's services bound to 0.0.0.0 or ::). */
static const char *const *const own_default = LIST("1.2.3.4", "2a00:1234::1");

/* "1.2.3.4:443", "[::1]:443", or "unix" for an address of another family */
static void addr_port_str(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET)
		snprintf(buf, size, "%s:%u", cd_addr_str((const struct sockaddr *)ss, a, sizeof(a)),
			 ntohs(((const struct sockaddr_in *)ss)->sin_port));
	else if (ss->ss_family == AF_INET6)
		snprintf(buf, size, "[%s]:%u", cd_addr_str((const struct sockaddr *)ss, a, sizeof(a)),
			 ntohs(((const struct sockaddr_in6 *)ss)->sin6_port));
	else
		snprintf(buf, size, "family %d", ss->ss_family);
}

/* Addresses from strings ("unix": one of another family) into v; false on a bad one. */
static bool parse_addrs(const char *const *s, struct sockaddr_storage *v, size_t *ret_n)
{
	size_t n = 0;

	for (; s && s[n]; n++) {
		if (n == MAX_ADDRS)
			return false;
		if (strcmp(s[n], "unix") == 0) {
			memset(&v[n], 0, sizeof(v[n]));
			v[n].ss_family = AF_UNIX;
		} else if (!cd_addr_parse(s[n], &v[n])) {
			return false;
		}
	}
	*ret_n = n;
	return true;
}

/* The decision on host:port, with the allow-list allow and the host's own addresses own, before
 * the lookup (addrs NULL) or on the name's addresses, as one line: "dial 1.2.3.4:443 [::1]:443",
 * "resolve NAME", "refuse (CLASS)" by the rebinding rule, "refuse: REASON" by the list,
 * "bad name: REASON" or "no address". d gets the whole decision. */
static const char *decide(const char *const *allow, const char *const *own, const char *host,
			  bool v6, uint16_t port, const char *const *addrs, struct cd_decision *d)
{
	static char line[1024];
	struct cordon_error err = { 0 };
	struct sockaddr_storage own_ss[MAX_ADDRS], res_ss[MAX_ADDRS];
	struct cd_addr_list own_l = { own_ss, 0, NULL }, res_l = { res_ss, 0, NULL };
	struct cd_allow a[MAX_ENTRIES];
	size_t n = 0, len;
	enum cd_verdict v;

	if (!parse_addrs(own, own_ss, &own_l.n) || !parse_addrs(addrs, res_ss, &res_l.n))
		return "(bad address in the test)";
	for (; allow && allow[n]; n++)
		if (n == MAX_ENTRIES || cd_allow_parse(allow[n], &a[n], &err) < 0)
			return "(bad entry in the test)";
	v = cd_allow_decide(a, n, own ? &own_l : NULL, host, v6, port, addrs ? &res_l : NULL, d);
	while (n)
		cd_allow_free(&a[--n]);
	switch (v) {
	case CD_VERDICT_DIAL:
		len = (size_t)snprintf(line, sizeof(line), "dial");
		for (size_t i = 0; i < d->n_addrs && len < sizeof(line) - 1; i++) {
			line[len++] = ' ';
			addr_port_str(&d->addrs[i], line + len, sizeof(line) - len);
			len += strlen(line + len);
		}
		break;
	case CD_VERDICT_RESOLVE:
		snprintf(line, sizeof(line), "resolve %s", d->host);
		break;
	case CD_VERDICT_REFUSE:
		if (d->why)
			snprintf(line, sizeof(line), "refuse (%s)", d->why);
		else
			snprintf(line, sizeof(line), "refuse: %s", d->reason);
		break;
	case CD_VERDICT_BAD_NAME:
		snprintf(line, sizeof(line), "bad name: %s", d->reason);
		break;
	case CD_VERDICT_NO_ADDRESS:
		snprintf(line, sizeof(line), "no address");
		break;
	default:
		snprintf(line, sizeof(line), "(verdict %d)", (int)v);
	}
	return line;
}

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
	entry_bad("*", "\"*\": a wildcard must name a domain, as in *.example.com (for all of the network, use the host's network)");
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

/* Does the entry spec let the name through on port (the decision: look it up)? */
static bool matches(const char *spec, const char *name, uint16_t port)
{
	struct cd_decision d;

	return strncmp(decide(LIST(spec), NULL, name, false, port, NULL, &d), "resolve ", 8) == 0;
}

/* Does the entry spec let the address literal addr through on port (the decision: dial it)? */
static bool addr_matches(const char *spec, const char *addr, uint16_t port)
{
	struct cd_decision d;

	return strncmp(decide(LIST(spec), NULL, addr, false, port, NULL, &d), "dial ", 5) == 0;
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

/* The rebinding rule for an allowed name, name.test, that resolves to addr alone on port, with the
 * allow-list allow (and the entry for name.test) and the host's addresses own: "ok" when the name
 * may lead there, else the class of addr the decision gives. */
static const char *rebinding(const char *addr, const char *const *allow, const char *const *own,
			     uint16_t port)
{
	static char why[64];
	const char *entries[MAX_ENTRIES + 1] = { 0 }, *addrs[] = { addr, NULL };
	char self[32];
	struct cd_decision d;
	const char *line;
	size_t n = 0;

	for (; allow && allow[n]; n++)
		if (n == MAX_ENTRIES - 1)
			return "(too many entries in the test)";
		else
			entries[n] = allow[n];
	snprintf(self, sizeof(self), "name.test:%u", port);
	entries[n] = self;
	line = decide(entries, own, "name.test", false, port, addrs, &d);
	if (strncmp(line, "dial ", 5) == 0)
		snprintf(why, sizeof(why), "ok");
	else
		snprintf(why, sizeof(why), "%s", d.why ? d.why : line);
	return why;
}

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
}

struct dcase {
	const char *desc;
	const char *const *allow;
	const char *host;
	bool v6; /* the host was in brackets */
	uint16_t port;
	const char *const *addrs; /* what the name resolves to; NULL: before the lookup */
	const char *want;
};

static void run_cases(const struct dcase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct dcase *t = &cases[i];
		struct cd_decision d;

		is_str(decide(t->allow, own_default, t->host, t->v6, t->port, t->addrs, &d), t->want,
		       "%s", t->desc);
	}
}

/* Names and ports, before the lookup: nothing is looked up for a name the list refuses. */
static void test_names(void)
{
	const struct dcase cases[] = {
		{ "an exact name: look it up", LIST("example.com"), "example.com", false, 443,
		  NULL, "resolve example.com" },
		{ "... on port 80 too by default", LIST("example.com"), "example.com", false, 80,
		  NULL, "resolve example.com" },
		{ "... not on 8080", LIST("example.com"), "example.com", false, 8080, NULL,
		  "refuse: example.com:8080 is not on the allow-list" },
		{ "the name as the client wrote it, normalized", LIST("example.com"),
		  "Example.COM.", false, 443, NULL, "resolve example.com" },
		{ "a name allowed with a port: on that port", LIST("example.com:8080"),
		  "example.com", false, 8080, NULL, "resolve example.com" },
		{ "... not on another", LIST("example.com:8080"), "example.com", false, 443, NULL,
		  "refuse: example.com:443 is not on the allow-list" },
		{ "... nor on 80", LIST("example.com:8080"), "example.com", false, 80, NULL,
		  "refuse: example.com:80 is not on the allow-list" },
		{ "an exact name does not cover a subdomain", LIST("example.com"),
		  "www.example.com", false, 443, NULL,
		  "refuse: www.example.com:443 is not on the allow-list" },
		{ "... nor a longer name", LIST("example.com"), "example.com.evil.net", false, 443,
		  NULL, "refuse: example.com.evil.net:443 is not on the allow-list" },
		{ "... nor a name ending like it", LIST("example.com"), "xexample.com", false, 443,
		  NULL, "refuse: xexample.com:443 is not on the allow-list" },
		{ "*.example.com covers a.example.com", LIST("*.example.com"), "a.example.com",
		  false, 443, NULL, "resolve a.example.com" },
		{ "... and a.b.example.com", LIST("*.example.com"), "a.b.example.com", false, 443,
		  NULL, "resolve a.b.example.com" },
		{ "... but not example.com itself", LIST("*.example.com"), "example.com", false,
		  443, NULL, "refuse: example.com:443 is not on the allow-list" },
		{ "... nor xexample.com", LIST("*.example.com"), "xexample.com", false, 443, NULL,
		  "refuse: xexample.com:443 is not on the allow-list" },
		{ "... nor example.com.evil.net", LIST("*.example.com"), "example.com.evil.net",
		  false, 443, NULL, "refuse: example.com.evil.net:443 is not on the allow-list" },
		{ "a wildcard with a port: on that port", LIST("*.example.com:8443"),
		  "a.example.com", false, 8443, NULL, "resolve a.example.com" },
		{ "... not on 443", LIST("*.example.com:8443"), "a.example.com", false, 443, NULL,
		  "refuse: a.example.com:443 is not on the allow-list" },
		{ "the entry that takes the port, among several", LIST("example.com:8080",
		  "a.net", "example.com:9090"), "example.com", false, 9090, NULL,
		  "resolve example.com" },
		{ "an address entry allows no name", LIST("192.0.2.1"), "example.com", false, 443,
		  NULL, "refuse: example.com:443 is not on the allow-list" },
		{ "an empty list allows nothing", NULL, "example.com", false, 443, NULL,
		  "refuse: example.com:443 is not on the allow-list" },
		{ "a name not allowed is refused after a lookup too", LIST("a.net"),
		  "example.com", false, 443, LIST("93.184.216.34"),
		  "refuse: example.com:443 is not on the allow-list" },
		{ "not a host name", LIST("example.com"), "a..com", false, 443, NULL,
		  "bad name: \"a..com\" is not a host name" },
		{ "... nor digits meant as an address", LIST("example.com"), "1.2.3", false, 443,
		  NULL, "bad name: \"1.2.3\" is not a host name" },
		{ "... nor a name in brackets", LIST("example.com"), "example.com", true, 443, NULL,
		  "bad name: \"example.com\" is not a host name" },
		{ "... nor nothing", LIST("example.com"), "", false, 443, NULL,
		  "bad name: \"\" is not a host name" },
	};

	run_cases(cases, CD_ELEMENTSOF(cases));
}

/* An address the client names itself goes there only with an address entry. */
static void test_literals(void)
{
	const struct dcase cases[] = {
		{ "an allowed address: dial it", LIST("192.0.2.1"), "192.0.2.1", false, 443, NULL,
		  "dial 192.0.2.1:443" },
		{ "... on port 80 too by default", LIST("192.0.2.1"), "192.0.2.1", false, 80, NULL,
		  "dial 192.0.2.1:80" },
		{ "an address not allowed", LIST("192.0.2.2"), "192.0.2.1", false, 443, NULL,
		  "refuse: 192.0.2.1:443 is not on the allow-list" },
		{ "an address allowed on another port", LIST("192.0.2.1:8080"), "192.0.2.1", false,
		  443, NULL, "refuse: 192.0.2.1:443 is not on the allow-list" },
		{ "an IPv6 address allowed with its port", LIST("[2001:db8::1]:8443"),
		  "2001:db8::1", true, 8443, NULL, "dial [2001:db8::1]:8443" },
		{ "... refused in brackets on another port", LIST("[2001:db8::1]:8443"),
		  "2001:db8::1", true, 443, NULL,
		  "refuse: [2001:db8::1]:443 is not on the allow-list" },
		{ "an allowed private address, named by the client", LIST("10.1.2.3"), "10.1.2.3",
		  false, 443, NULL, "dial 10.1.2.3:443" },
		{ "an allowed loopback address", LIST("127.0.0.1"), "127.0.0.1", false, 443, NULL,
		  "dial 127.0.0.1:443" },
		{ "127.0.0.1 allowed does not allow ::1", LIST("127.0.0.1"), "::1", true, 443,
		  NULL, "refuse: [::1]:443 is not on the allow-list" },
		{ "... nor ::ffff:127.0.0.1", LIST("127.0.0.1"), "::ffff:127.0.0.1", true, 443,
		  NULL, "refuse: [::ffff:127.0.0.1]:443 is not on the allow-list" },
		{ "a host's own address allowed", LIST("1.2.3.4"), "1.2.3.4", false, 443, NULL,
		  "dial 1.2.3.4:443" },
		{ "a name entry allows no address", LIST("example.com"), "192.0.2.1", false, 443,
		  NULL, "refuse: 192.0.2.1:443 is not on the allow-list" },
		{ "an address goes only where it says, whatever the lookup", LIST("192.0.2.1"),
		  "192.0.2.1", false, 443, LIST("93.184.216.34"), "dial 192.0.2.1:443" },
	};

	run_cases(cases, CD_ELEMENTSOF(cases));
}

/* "localhost" is the host's loopback by name: its entry alone reaches a service of the host's
 * on its port (the README's `--allow-net localhost:PORT`), by name or by loopback address, and
 * nothing else. */
static void test_localhost(void)
{
	const struct dcase cases[] = {
		{ "localhost:PORT alone: localhost resolved to 127.0.0.1", LIST("localhost:8089"),
		  "localhost", false, 8089, LIST("127.0.0.1"), "dial 127.0.0.1:8089" },
		{ "... to ::1", LIST("localhost:8089"), "localhost", false, 8089, LIST("::1"),
		  "dial [::1]:8089" },
		{ "... 127.0.0.1 named by the client", LIST("localhost:8089"), "127.0.0.1", false,
		  8089, NULL, "dial 127.0.0.1:8089" },
		{ "... ::1 named by the client", LIST("localhost:8089"), "::1", true, 8089, NULL,
		  "dial [::1]:8089" },
		{ "... not on another port", LIST("localhost:8089"), "127.0.0.1", false, 8090, NULL,
		  "refuse: 127.0.0.1:8090 is not on the allow-list" },
		{ "... nor another port by name", LIST("localhost:8089"), "localhost", false, 22,
		  LIST("127.0.0.1"), "refuse: localhost:22 is not on the allow-list" },
		{ "... nor a private address", LIST("localhost:8089"), "10.0.0.1", false, 8089,
		  NULL, "refuse: 10.0.0.1:8089 is not on the allow-list" },
		{ "... nor the host's own address", LIST("localhost:8089"), "1.2.3.4", false, 8089,
		  NULL, "refuse: 1.2.3.4:8089 is not on the allow-list" },
		{ "localhost on the default ports", LIST("localhost"), "localhost", false, 80,
		  LIST("127.0.0.1"), "dial 127.0.0.1:80" },
		{ "another allowed name still may not lead to loopback", LIST("example.com"),
		  "example.com", false, 443, LIST("127.0.0.1"), "refuse (loopback)" },
	};

	run_cases(cases, CD_ELEMENTSOF(cases));
}

/* The DNS-rebinding rule: an allowed name reaches a special address, or one of the host's own,
 * only when that address is allowed itself, on that port. */
static void test_rebinding(void)
{
	const struct dcase cases[] = {
		{ "a public address: dial it", LIST("example.com"), "example.com", false, 443,
		  LIST("93.184.216.34"), "dial 93.184.216.34:443" },
		{ "... on the port asked for", LIST("example.com:8080"), "example.com", false,
		  8080, LIST("93.184.216.34"), "dial 93.184.216.34:8080" },
		{ "a public IPv6 address", LIST("example.com"), "example.com", false, 443,
		  LIST("2606:4700::1111"), "dial [2606:4700::1111]:443" },
		{ "127.0.0.1", LIST("example.com"), "example.com", false, 443, LIST("127.0.0.1"),
		  "refuse (loopback)" },
		{ "127/8", LIST("example.com"), "example.com", false, 443, LIST("127.255.0.9"),
		  "refuse (loopback)" },
		{ "::1", LIST("example.com"), "example.com", false, 443, LIST("::1"),
		  "refuse (loopback)" },
		{ "IPv4-mapped ::ffff:127.0.0.1", LIST("example.com"), "example.com", false, 443,
		  LIST("::ffff:127.0.0.1"), "refuse (loopback)" },
		{ "NAT64 64:ff9b::7f00:1", LIST("example.com"), "example.com", false, 443,
		  LIST("64:ff9b::7f00:1"), "refuse (loopback)" },
		{ "6to4 2002:7f00:1::", LIST("example.com"), "example.com", false, 443,
		  LIST("2002:7f00:1::"), "refuse (loopback)" },
		{ "local-use NAT64 64:ff9b:1::", LIST("example.com"), "example.com", false, 443,
		  LIST("64:ff9b:1::a00:1"), "refuse (private)" },
		{ "fe80::", LIST("example.com"), "example.com", false, 443, LIST("fe80::"),
		  "refuse (link-local)" },
		{ "fe80::1", LIST("example.com"), "example.com", false, 443, LIST("fe80::1"),
		  "refuse (link-local)" },
		{ "169.254.169.254 (cloud metadata)", LIST("example.com"), "example.com", false,
		  443, LIST("169.254.169.254"), "refuse (link-local)" },
		{ "169.254.0.1", LIST("example.com"), "example.com", false, 443,
		  LIST("169.254.0.1"), "refuse (link-local)" },
		{ "IPv4-mapped 169.254.169.254", LIST("example.com"), "example.com", false, 443,
		  LIST("::ffff:169.254.169.254"), "refuse (link-local)" },
		{ "100.64.0.1 (carrier-grade NAT)", LIST("example.com"), "example.com", false, 443,
		  LIST("100.64.0.1"), "refuse (private)" },
		{ "100.127.255.255, the end of 100.64/10", LIST("example.com"), "example.com",
		  false, 443, LIST("100.127.255.255"), "refuse (private)" },
		{ "100.128.0.1, past it", LIST("example.com"), "example.com", false, 443,
		  LIST("100.128.0.1"), "dial 100.128.0.1:443" },
		{ "100.63.255.255, before it", LIST("example.com"), "example.com", false, 443,
		  LIST("100.63.255.255"), "dial 100.63.255.255:443" },
		{ "10/8", LIST("example.com"), "example.com", false, 443, LIST("10.0.0.1"),
		  "refuse (private)" },
		{ "172.16/12", LIST("example.com"), "example.com", false, 443, LIST("172.31.0.1"),
		  "refuse (private)" },
		{ "192.168/16", LIST("example.com"), "example.com", false, 443,
		  LIST("192.168.1.1"), "refuse (private)" },
		{ "fd00::/8", LIST("example.com"), "example.com", false, 443, LIST("fd00::1"),
		  "refuse (private)" },
		{ "0.0.0.0", LIST("example.com"), "example.com", false, 443, LIST("0.0.0.0"),
		  "refuse (unspecified)" },
		{ "0/8", LIST("example.com"), "example.com", false, 443, LIST("0.1.2.3"),
		  "refuse (unspecified)" },
		{ "::", LIST("example.com"), "example.com", false, 443, LIST("::"),
		  "refuse (unspecified)" },
		{ "::ffff:0.0.0.0", LIST("example.com"), "example.com", false, 443,
		  LIST("::ffff:0.0.0.0"), "refuse (unspecified)" },
		{ "224.0.0.1", LIST("example.com"), "example.com", false, 443, LIST("224.0.0.1"),
		  "refuse (multicast)" },
		{ "239.255.255.250", LIST("example.com"), "example.com", false, 443,
		  LIST("239.255.255.250"), "refuse (multicast)" },
		{ "ff02::1", LIST("example.com"), "example.com", false, 443, LIST("ff02::1"),
		  "refuse (multicast)" },
		{ "255.255.255.255", LIST("example.com"), "example.com", false, 443,
		  LIST("255.255.255.255"), "refuse (reserved)" },
		{ "192.0.2.1 (documentation)", LIST("example.com"), "example.com", false, 443,
		  LIST("192.0.2.1"), "refuse (reserved)" },
		{ "2001:db8::1 (documentation)", LIST("example.com"), "example.com", false, 443,
		  LIST("2001:db8::1"), "refuse (reserved)" },
		{ "the host's own public address", LIST("example.com"), "example.com", false, 443,
		  LIST("1.2.3.4"), "refuse (own)" },
		{ "... its own IPv6 address", LIST("example.com"), "example.com", false, 443,
		  LIST("2a00:1234::1"), "refuse (own)" },
		{ "... IPv4-mapped", LIST("example.com"), "example.com", false, 443,
		  LIST("::ffff:1.2.3.4"), "refuse (own)" },
		{ "... NAT64", LIST("example.com"), "example.com", false, 443,
		  LIST("64:ff9b::102:304"), "refuse (own)" },
		{ "... 6to4", LIST("example.com"), "example.com", false, 443,
		  LIST("2002:102:304::"), "refuse (own)" },
		{ "a neighbour of it is no own address", LIST("example.com"), "example.com", false,
		  443, LIST("1.2.3.5"), "dial 1.2.3.5:443" },
		{ "an allowed private address is reached by name", LIST("example.com", "10.0.0.1"),
		  "example.com", false, 443, LIST("10.0.0.1"), "dial 10.0.0.1:443" },
		{ "... only on a port it takes", LIST("example.com", "10.0.0.1:8080"),
		  "example.com", false, 443, LIST("10.0.0.1"), "refuse (private)" },
		{ "... on that port it is", LIST("example.com:8080", "10.0.0.1:8080"),
		  "example.com", false, 8080, LIST("10.0.0.1"), "dial 10.0.0.1:8080" },
		{ "an allowed loopback address is reached by name", LIST("example.com",
		  "127.0.0.1"), "example.com", false, 443, LIST("127.0.0.1"), "dial 127.0.0.1:443" },
		{ "... in that form only", LIST("example.com", "127.0.0.1"), "example.com", false,
		  443, LIST("::ffff:127.0.0.1"), "refuse (loopback)" },
		{ "the host's own address allowed itself", LIST("example.com", "1.2.3.4"),
		  "example.com", false, 443, LIST("1.2.3.4"), "dial 1.2.3.4:443" },
		{ "... not a neighbour's entry", LIST("example.com", "1.2.3.5"), "example.com",
		  false, 443, LIST("1.2.3.4"), "refuse (own)" },
		{ "an own private address is told as private", LIST("example.com"), "example.com",
		  false, 443, LIST("10.0.0.5"), "refuse (private)" },
		{ "a wildcard's name is judged the same", LIST("*.example.com"), "a.example.com",
		  false, 443, LIST("127.0.0.1"), "refuse (loopback)" },
	};

	run_cases(cases, CD_ELEMENTSOF(cases));
}

/* A name with several addresses: those it may reach, in order, at most CD_ALLOW_MAX_DIAL. */
static void test_several(void)
{
	const struct dcase cases[] = {
		{ "the refused ones are dropped, the others kept in order", LIST("example.com"),
		  "example.com", false, 443,
		  LIST("127.0.0.1", "93.184.216.34", "::1", "2606:4700::1111", "1.2.3.4"),
		  "dial 93.184.216.34:443 [2606:4700::1111]:443" },
		{ "all refused: the first one's class", LIST("example.com"), "example.com", false,
		  443, LIST("10.0.0.1", "127.0.0.1"), "refuse (private)" },
		{ "at most 8", LIST("example.com"), "example.com", false, 443,
		  LIST("93.184.216.1", "93.184.216.2", "93.184.216.3", "93.184.216.4",
		       "93.184.216.5", "93.184.216.6", "93.184.216.7", "93.184.216.8",
		       "93.184.216.9", "93.184.216.10"),
		  "dial 93.184.216.1:443 93.184.216.2:443 93.184.216.3:443 93.184.216.4:443 "
		  "93.184.216.5:443 93.184.216.6:443 93.184.216.7:443 93.184.216.8:443" },
		{ "refused ones do not count toward them", LIST("example.com"), "example.com",
		  false, 443,
		  LIST("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6",
		       "127.0.0.7", "127.0.0.8", "127.0.0.9", "93.184.216.34"),
		  "dial 93.184.216.34:443" },
		{ "no address at all", LIST("example.com"), "example.com", false, 443,
		  LIST("unix"), "no address" },
		{ "an address of another family is skipped", LIST("example.com"), "example.com",
		  false, 443, LIST("unix", "93.184.216.34"), "dial 93.184.216.34:443" },
	};
	struct cd_decision d;

	run_cases(cases, CD_ELEMENTSOF(cases));
	is_str(decide(LIST("example.com"), own_default, "example.com", false, 443,
		      (const char *const[]){ NULL }, &d),
	       "no address", "a lookup with nothing in it");
}

/* Without the host's own addresses (own NULL), only the classes count. */
static void test_no_own(void)
{
	struct cd_decision d;

	is_str(decide(LIST("example.com"), NULL, "example.com", false, 443, LIST("1.2.3.4"), &d),
	       "dial 1.2.3.4:443", "no own addresses: a public address is dialled");
	is_str(decide(LIST("example.com"), NULL, "example.com", false, 443, LIST("127.0.0.1"), &d),
	       "refuse (loopback)", "... loopback is still refused");
}

/* The host's addresses as prefixes (a local route covers a whole prefix). */
static void test_own_prefix(void)
{
	struct sockaddr_storage nets[2], res[1];
	uint8_t bits[2] = { 24, 64 };
	struct cd_addr_list own = { nets, 2, bits }, l = { res, 1, NULL };
	struct cordon_error err = { 0 };
	struct cd_allow a;
	struct cd_decision d;

	if (!ok(cd_addr_parse("5.6.7.0", &nets[0]) && cd_addr_parse("2a00:1234::", &nets[1]) &&
			cd_allow_parse("example.com", &a, &err) == 0,
		"prefixes and the entry parse"))
		return;
	cd_addr_parse("5.6.7.200", &res[0]);
	is_int(cd_allow_decide(&a, 1, &own, "example.com", false, 443, &l, &d), CD_VERDICT_REFUSE,
	       "an address in a local 5.6.7.0/24 is refused");
	is_str(d.why, CD_ADDR_OWN, "... as one of the host's own");
	cd_addr_parse("::ffff:5.6.7.3", &res[0]);
	is_int(cd_allow_decide(&a, 1, &own, "example.com", false, 443, &l, &d), CD_VERDICT_REFUSE,
	       "... in its IPv4-mapped form too");
	cd_addr_parse("2a00:1234::ffff:1", &res[0]);
	is_int(cd_allow_decide(&a, 1, &own, "example.com", false, 443, &l, &d), CD_VERDICT_REFUSE,
	       "an address in a local 2a00:1234::/64 is refused");
	cd_addr_parse("2a00:1234:0:1::1", &res[0]);
	is_int(cd_allow_decide(&a, 1, &own, "example.com", false, 443, &l, &d), CD_VERDICT_DIAL,
	       "2a00:1234:0:1::1 is not in it");
	cd_addr_parse("5.6.8.1", &res[0]);
	is_int(cd_allow_decide(&a, 1, &own, "example.com", false, 443, &l, &d), CD_VERDICT_DIAL,
	       "5.6.8.1 is not in 5.6.7.0/24");
	cd_allow_free(&a);
}

/* The lines the proxy sends, audits and tells (t-proxy.sh checks them end to end). */
static void test_reasons(void)
{
	static const struct {
		const char *addr, *why, *reason;
	} rebinding[] = {
		{ "1.2.3.4", CD_ADDR_OWN,
		  "name.test resolves to one of this host's own addresses (1.2.3.4), which is not "
		  "on the allow-list itself (DNS rebinding protection: allow 1.2.3.4 too to reach "
		  "it)" },
		{ "2a00:1234::1", CD_ADDR_OWN,
		  "name.test resolves to one of this host's own addresses (2a00:1234::1), which is "
		  "not on the allow-list itself (DNS rebinding protection: allow 2a00:1234::1 too "
		  "to reach it)" },
		{ "127.0.0.1", "loopback",
		  "name.test resolves to 127.0.0.1, a loopback address, which is not on the "
		  "allow-list itself (DNS rebinding protection: allow 127.0.0.1 too to reach it)" },
		{ "0.0.0.0", "unspecified",
		  "name.test resolves to 0.0.0.0, an unspecified address, which is not on the "
		  "allow-list itself (DNS rebinding protection: allow 0.0.0.0 too to reach it)" },
		{ "::ffff:169.254.169.254", "link-local",
		  "name.test resolves to ::ffff:169.254.169.254, a link-local address, which is not "
		  "on the allow-list itself (DNS rebinding protection: allow ::ffff:169.254.169.254 "
		  "too to reach it)" },
	};
	struct cd_decision d;

	for (size_t i = 0; i < CD_ELEMENTSOF(rebinding); i++) {
		const char *const addrs[] = { rebinding[i].addr, NULL };

		decide(LIST("Name.Test"), own_default, "NAME.test.", false, 443, addrs, &d);
		is_str(d.why, rebinding[i].why, "%s: the class", rebinding[i].addr);
		is_str(d.reason, rebinding[i].reason, "... the reason");
		is_str(d.notice, rebinding[i].reason, "... told as it is");
		is_str(d.host, "name.test", "... of the name normalized");
	}
	decide(LIST("a.test"), own_default, "Name.Test", false, 8080, NULL, &d);
	is_str(d.reason, "name.test:8080 is not on the allow-list", "a name refused by the list");
	is_str(d.notice, "not on the allow-list", "... told in short");
	is_str(d.host, "name.test", "... of the name normalized");
	ok(!d.why, "... no address class");
	decide(NULL, own_default, "2001:db8::1", true, 443, NULL, &d);
	is_str(d.reason, "[2001:db8::1]:443 is not on the allow-list", "an IPv6 address refused");
	is_str(d.notice, "not on the allow-list", "... told in short");
	is_str(d.host, "2001:db8::1", "... of the address as sent");
	decide(NULL, own_default, "a b", false, 443, NULL, &d);
	is_str(d.reason, "\"a b\" is not a host name", "a bad name");
	is_str(d.host, "a b", "... as sent");
}

int main(void)
{
	test_entries();
	test_matching();
	test_special();
	test_own_addresses();
	test_unspecified();
	test_own_prefixes();
	test_names();
	test_literals();
	test_localhost();
	test_rebinding();
	test_several();
	test_no_own();
	test_own_prefix();
	test_reasons();
	return done_testing();
}
