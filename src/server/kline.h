/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kline.h - a kernel's event line checked in place: one JSON object, and its "type" (kline.c).
 * Pure: unit-tested (tests/unit/test-kline.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SRV_KLINE_MAX_DEPTH 64 /* objects and arrays nested deeper: refused */

struct srv_kline {
	const char *type; /* the top object's last "type" member, when a string: its bytes
			   * between the quotes, escapes as sent (NULL: none, or not a string) */
	size_t type_len;
};

/* 0 when line[0..len) is exactly one JSON object (RFC 8259; whitespace around it allowed),
 * else -EINVAL. */
int srv_kline_check(const char *line, size_t len, struct srv_kline *ret);
