/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-dns.c - the sandbox's resolver's DNS messages (dns.h): a query's question read into a
 * printable name, what is refused or dropped, and the error reply. TAP.
 */
#include <errno.h>
#include <string.h>

#include "dns.h"
#include "util.h"

#include "../lib/tap.h"

/* A query with id 0x1234, RD, one question: name as labels (a length byte before each), type. */
static size_t query(uint8_t *out, const char *labels, size_t labels_len, uint16_t type)
{
	static const uint8_t head[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };

	memcpy(out, head, sizeof(head));
	memcpy(out + 12, labels, labels_len);
	out[12 + labels_len] = (uint8_t)(type >> 8);
	out[13 + labels_len] = (uint8_t)type;
	out[14 + labels_len] = 0;
	out[15 + labels_len] = 1; /* IN */
	return 16 + labels_len;
}

#define Q(buf, lit, type) query(buf, lit, sizeof(lit), type) /* sizeof: the final 0 too */

static void test_names(void)
{
	uint8_t m[600], rc = 0xee;
	struct cd_dns_query q;

	is_int(cd_dns_parse_query(m, Q(m, "\5files\7Example\3org", 1), &q, &rc), 1, "a query");
	is_str(q.name, "files.example.org", "its name, lower case");
	is_uint(q.qtype, 1, "its type");
	is_uint(q.question_len, 19 + 4, "its question's length");
	cd_dns_parse_query(m, Q(m, "", 28), &q, &rc);
	is_str(q.name, ".", "the root");
	cd_dns_parse_query(m, Q(m, "\3a\033b\2c.\1\\", 1), &q, &rc);
	is_str(q.name, "a\\027b.c\\..\\\\", "escape, dot and backslash in labels: escaped");
	cd_dns_parse_query(m, Q(m, "\4\x9b[2J\3\xff\0x", 1), &q, &rc);
	is_str(q.name, "\\155\\0912j.\\255\\000x", "a terminal escape and a NUL: escaped");
}

static void test_refused(void)
{
	uint8_t m[600] = { 0 }, rc;
	struct cd_dns_query q;
	char big[300];
	size_t n;

	is_int(cd_dns_parse_query(m, 11, &q, &rc), -EINVAL, "shorter than a header: dropped");
	n = Q(m, "\1a", 1);
	m[2] |= 0x80;
	is_int(cd_dns_parse_query(m, n, &q, &rc), -EINVAL, "a response: dropped");
	n = Q(m, "\1a", 1);
	m[2] |= 0x28; /* opcode 5, UPDATE */
	rc = 0;
	ok(cd_dns_parse_query(m, n, &q, &rc) == 0 && rc == CD_DNS_NOTIMP && !q.question_len,
	   "another opcode: NOTIMP");
	n = Q(m, "\1a", 1);
	m[5] = 2;
	ok(cd_dns_parse_query(m, n, &q, &rc) == 0 && rc == CD_DNS_FORMERR, "two questions: FORMERR");
	n = Q(m, "\1a", 1);
	m[5] = 0;
	ok(cd_dns_parse_query(m, n, &q, &rc) == 0 && rc == CD_DNS_FORMERR, "none: FORMERR");
	n = Q(m, "\300\014", 1);
	ok(cd_dns_parse_query(m, n, &q, &rc) == 0 && rc == CD_DNS_FORMERR && !q.name[0],
	   "a compression pointer (to itself): FORMERR");
	n = Q(m, "\100a", 1);
	ok(cd_dns_parse_query(m, n, &q, &rc) == 0, "a label of 64: FORMERR");
	n = Q(m, "\5ab", 1);
	ok(cd_dns_parse_query(m, 12 + 3, &q, &rc) == 0, "a label past the end: FORMERR");
	n = Q(m, "\1a", 1);
	ok(cd_dns_parse_query(m, n - 1, &q, &rc) == 0, "no room for type and class: FORMERR");
	/* labels of 63, 63, 63, 62: 256 bytes with the lengths and the root, one too many */
	memset(big, 'a', sizeof(big));
	for (int i = 0; i < 4; i++)
		big[i * 64] = 63;
	big[3 * 64] = 62;
	big[255] = 0;
	n = query(m, big, 256, 1);
	ok(cd_dns_parse_query(m, n, &q, &rc) == 0, "a name of 256 bytes: FORMERR");
	big[3 * 64] = 61;
	big[254] = 0;
	n = query(m, big, 255, 1);
	ok(cd_dns_parse_query(m, n, &q, &rc) == 1 && strlen(q.name) == 253,
	   "a name of 255 bytes: read");
}

static void test_reply(void)
{
	uint8_t m[600], out[600], rc;
	struct cd_dns_query q;
	size_t n = Q(m, "\5files\7example\3org", 1), len;

	m[10] = 0, m[11] = 1; /* ARCOUNT 1: an EDNS OPT would follow; not echoed */
	cd_dns_parse_query(m, n, &q, &rc);
	len = cd_dns_reply(m, n, &q, CD_DNS_NXDOMAIN, out, sizeof(out));
	is_uint(len, 12 + q.question_len, "the reply: header and question");
	ok(out[0] == 0x12 && out[1] == 0x34, "the query's id");
	is_uint(out[2], 0x81, "QR, RD kept");
	is_uint(out[3], 0x80 | CD_DNS_NXDOMAIN, "RA, NXDOMAIN");
	ok(out[4] == 0 && out[5] == 1 && !out[6] && !out[7] && !out[8] && !out[9] && !out[10] &&
	   !out[11], "one question, no answer, authority or additional");
	ok(memcmp(out + 12, m + 12, q.question_len) == 0, "the question as it came");
	is_uint(cd_dns_reply(m, n, &q, CD_DNS_NXDOMAIN, out, 20), 0, "no room: nothing");
	n = Q(m, "\1a", 1);
	m[5] = 2;
	cd_dns_parse_query(m, n, &q, &rc);
	len = cd_dns_reply(m, n, &q, rc, out, sizeof(out));
	ok(len == 12 && out[3] == (0x80 | CD_DNS_FORMERR) && out[5] == 0,
	   "FORMERR: the header alone, no question");
}

int main(void)
{
	test_names();
	test_refused();
	test_reply();
	return done_testing();
}
