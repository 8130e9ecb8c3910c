/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dns.c - a DNS query's question read, and the error reply to it (dns.h). Pure. Runs in the
 * supervisor, on bytes the sandbox sent.
 */
#include <errno.h>
#include <string.h>

#include "dns.h"

#define QR     0x80 /* flags, first byte */
#define OPCODE 0x78
#define RD     0x01
#define RA     0x80 /* flags, second byte */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* One label's bytes onto out (at *len), in presentation form. */
static void put_label(const uint8_t *l, size_t n, char *out, size_t *len)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = l[i];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
			out[(*len)++] = (char)c;
		else if (c == '.' || c == '\\') {
			out[(*len)++] = '\\';
			out[(*len)++] = (char)c;
		} else {
			out[(*len)++] = '\\';
			out[(*len)++] = (char)('0' + c / 100);
			out[(*len)++] = (char)('0' + c / 10 % 10);
			out[(*len)++] = (char)('0' + c % 10);
		}
	}
}

/* The question's name from p (end: the message's end): its wire length, or -EINVAL (past the
 * end, a label over 63 bytes, a name over 255, a compression pointer: a query has nothing
 * before its question to point at). */
static int read_name(const uint8_t *p, const uint8_t *end, char *out)
{
	size_t wire = 0, len = 0;

	for (;;) {
		uint8_t l;

		if (p + wire >= end)
			return -EINVAL;
		l = p[wire];
		if (l == 0)
			break;
		if (l > 63 || wire + 1 + l + 1 > CD_DNS_NAME_WIRE_MAX || p + wire + 1 + l > end)
			return -EINVAL; /* (0xc0: a pointer; 0x40, 0x80: extended label types) */
		if (len)
			out[len++] = '.';
		put_label(p + wire + 1, l, out, &len);
		wire += 1 + (size_t)l;
	}
	if (!len)
		out[len++] = '.';
	out[len] = '\0';
	return (int)wire + 1;
}

int cd_dns_parse_query(const uint8_t *msg, size_t n, struct cd_dns_query *q, uint8_t *ret_rcode)
{
	int wire;

	q->name[0] = '\0';
	q->qtype = 0;
	q->question_len = 0;
	if (n < CD_DNS_HEADER || (msg[2] & QR))
		return -EINVAL;
	if (msg[2] & OPCODE) {
		*ret_rcode = CD_DNS_NOTIMP; /* (a status query, a NOTIFY, an UPDATE) */
		return 0;
	}
	*ret_rcode = CD_DNS_FORMERR;
	if (get16(msg + 4) != 1)
		return 0; /* QDCOUNT: RFC 9619, one question */
	wire = read_name(msg + CD_DNS_HEADER, msg + n, q->name);
	if (wire < 0 || CD_DNS_HEADER + (size_t)wire + 4 > n) {
		q->name[0] = '\0';
		return 0;
	}
	q->qtype = get16(msg + CD_DNS_HEADER + wire);
	q->question_len = (size_t)wire + 4;
	return 1;
}

size_t cd_dns_reply(const uint8_t *msg, size_t n, const struct cd_dns_query *q, uint8_t rcode,
		    uint8_t *out, size_t size)
{
	size_t len = CD_DNS_HEADER + q->question_len;

	if (n < len || size < len)
		return 0;
	memset(out, 0, CD_DNS_HEADER);
	out[0] = msg[0]; /* the id */
	out[1] = msg[1];
	out[2] = (uint8_t)(QR | (msg[2] & (OPCODE | RD)));
	out[3] = (uint8_t)(RA | (rcode & 0x0f));
	out[5] = q->question_len ? 1 : 0; /* QDCOUNT; no answer, authority or additional */
	memcpy(out + CD_DNS_HEADER, msg + CD_DNS_HEADER, q->question_len);
	return len;
}
