/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-netsel.c - a create's network (E2B's allow_internet_access, allowOut, denyOut) as an
 * allow-list within the server's --allow-net (src/server/netsel.c): each row a ceiling, a
 * request, and the list it gets or the refusal's words. TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netsel.h"
#include "util.h"

#include "../lib/tap.h"

#define L(...) ((char *[]){__VA_ARGS__, NULL})

static const struct {
	const char *what;
	char **ceiling;
	int internet;
	char **allow, **deny;
	const char *want; /* the list joined by spaces, or "!words of the refusal" */
} cases[] = {
    {"nothing asked: the ceiling", L("a.com", "127.0.0.1:8000"), -1, NULL, NULL,
     "a.com 127.0.0.1:8000"},
    {"allowInternetAccess true: the ceiling", L("a.com"), 1, NULL, NULL, "a.com"},
    {"allowInternetAccess false: nothing", L("a.com", "127.0.0.1:8000"), 0, NULL, NULL, ""},
    {"denyOut 0.0.0.0/0: nothing", L("a.com"), -1, NULL, L("0.0.0.0/0"), ""},
    {"denyOut ::/0: nothing", L("a.com"), -1, NULL, L("::/0"), ""},
    {"allowOut over deny-all: only it", L("a.com", "127.0.0.1:8000", "127.0.0.2:9000"), -1,
     L("127.0.0.1"), L("0.0.0.0/0"), "127.0.0.1:8000"},
    {"allowOut over allowInternetAccess false", L("a.com", "b.com"), 0, L("B.com."), NULL, "b.com"},
    {"allowOut alone adds to the ceiling (nothing denied)", L("a.com", "b.com"), -1, L("b.com"),
     NULL, "a.com b.com"},
    {"allowOut 0.0.0.0/0: the ceiling, whatever is denied", L("a.com", "10.0.0.1"), 0,
     L("0.0.0.0/0"), L("0.0.0.0/0"), "a.com 10.0.0.1"},
    {"a wildcard covers a name below it", L("*.example.com:8443"), 0, L("api.example.com"), NULL,
     "api.example.com:8443"},
    {"a wildcard covers a narrower wildcard", L("*.example.com"), 0, L("*.eu.example.com"), NULL,
     "*.eu.example.com"},
    {"... not the name itself", L("*.example.com"), 0, L("example.com"), NULL,
     "!network.allowOut: example.com: more than the server allows"},
    {"... nor a wider wildcard", L("*.eu.example.com"), 0, L("*.example.com"), NULL,
     "!network.allowOut: *.example.com: more than"},
    {"a name not on the ceiling", L("a.com"), 0, L("evil.com"), NULL,
     "!network.allowOut: evil.com: more than the server allows"},
    {"a port within the default ones", L("a.com"), 0, L("a.com:443"), NULL, "a.com:443"},
    {"a port the ceiling lacks", L("a.com"), 0, L("a.com:22"), NULL,
     "!network.allowOut: a.com:22: more than"},
    {"an address as /32", L("192.0.2.7:81"), 0, L("192.0.2.7/32"), NULL, "192.0.2.7:81"},
    {"a range is refused", L("192.0.2.7"), 0, L("192.0.2.0/24"), NULL,
     "!network.allowOut: 192.0.2.0/24: cordon's proxy allows hosts and single addresses"},
    {"IPv6", L("[2001:db8::1]:8443"), 0, L("2001:DB8:0::1"), NULL, "[2001:db8::1]:8443"},
    {"an address is no name", L("a.com"), 0, L("1.2.3.4"), NULL, "!1.2.3.4: more than"},
    {"no ceiling: nothing", L(NULL), -1, NULL, NULL, ""},
    {"no ceiling: allowOut refused", L(NULL), -1, L("a.com"), NULL, "!a.com: more than"},
    {"denyOut drops an address in the block", L("10.1.2.3:80", "192.0.2.1"), -1, NULL,
     L("10.0.0.0/8"), "192.0.2.1"},
    {"denyOut of a private block holds for names", L("a.com", "10.1.2.3"), -1, NULL,
     L("10.0.0.0/8"), "a.com"},
    {"denyOut of a public block with a name allowed: refused", L("a.com"), -1, NULL,
     L("8.8.8.0/24"), "!network.denyOut: 8.8.8.0/24: cordon's proxy cannot deny"},
    {"denyOut of a public block, addresses only", L("8.8.8.8", "9.9.9.9"), -1, NULL, L("8.8.8.8"),
     "9.9.9.9"},
    {"... allowOut takes precedence", L("8.8.8.8", "9.9.9.9"), -1, L("8.8.8.8"), L("8.8.8.8"),
     "9.9.9.9 8.8.8.8"},
    {"denyOut takes no names", L("a.com"), -1, NULL, L("a.com"),
     "!network.denyOut: \"a.com\" is no IP address or CIDR block"},
    {"allowOut garbage", L("a.com"), -1, L("a b"), NULL,
     "!network.allowOut: \"a b\" is no host name"},
    {"a bad prefix", L("a.com"), -1, NULL, L("10.0.0.0/33"), "!network.denyOut"},
    {"a trailing dot and case", L("A.Com"), 0, L("a.com."), NULL, "a.com"},
};

static void run_case(size_t i)
{
	struct srv_netsel q = {
	    .internet = cases[i].internet, .allow_out = cases[i].allow, .deny_out = cases[i].deny};
	char **out = NULL, why[512] = "", got[1024] = "";
	int r = srv_netsel_decide(cases[i].ceiling, &q, &out, why, sizeof(why));

	if (r < 0) {
		snprintf(got, sizeof(got), "!%s", why);
	} else {
		for (char **s = out; s && *s; s++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
				 s == out ? "" : " ", *s);
	}
	cd_strv_free(out);
	if (cases[i].want[0] == '!')
		like_str(got, cases[i].want + 1, "%s", cases[i].what);
	else
		is_str(got, cases[i].want, "%s", cases[i].what);
}

int main(void)
{
	for (size_t i = 0; i < CD_ELEMENTSOF(cases); i++)
		run_case(i);
	return done_testing();
}
