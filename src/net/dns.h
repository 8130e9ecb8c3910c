/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dns.h - the DNS messages of the sandbox's resolver (resolver.h): a query's question read, and
 * the error reply to it. Pure: no I/O (unit-tested and fuzzed: every byte comes from the sandbox).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CD_DNS_HEADER 12
#define CD_DNS_NAME_WIRE_MAX 255 /* RFC 1035 2.3.4 */
/* the presentation form: each byte at most 4 characters ("\\DDD"), the dots, the NUL */
#define CD_DNS_NAME_MAX (4 * CD_DNS_NAME_WIRE_MAX + 2)

#define CD_DNS_NOERROR  0
#define CD_DNS_FORMERR  1
#define CD_DNS_SERVFAIL 2
#define CD_DNS_NXDOMAIN 3
#define CD_DNS_NOTIMP   4
#define CD_DNS_REFUSED  5

struct cd_dns_query {
	/* the question's name, lower case, no trailing dot ("." for the root); every byte but
	 * [a-z0-9_-] as "\\DDD" and a dot inside a label as "\\.", so that it prints as it is
	 * and no two names read the same */
	char name[CD_DNS_NAME_MAX];
	uint16_t qtype;
	size_t question_len; /* the question's bytes, after the header */
};

/* A query from msg (n bytes): 1 with q filled (answer it with the rcode of the caller's
 * choice); 0 when it is a query cordon does not read (another opcode: NOTIMP; not one question,
 * or a question that is no valid name: FORMERR): *ret_rcode says which, q->question_len is 0;
 * -EINVAL when it is nothing to answer (shorter than a header, or a response: answering
 * responses could loop). */
int cd_dns_parse_query(const uint8_t *msg, size_t n, struct cd_dns_query *q, uint8_t *ret_rcode);

/* The reply to msg with rcode: its header with QR and RA set, the question copied when q read
 * one (q->question_len), nothing else. Never longer than msg. Its length in out, or 0 when out
 * is too small. */
size_t cd_dns_reply(const uint8_t *msg, size_t n, const struct cd_dns_query *q, uint8_t rcode,
		    uint8_t *out, size_t size);
