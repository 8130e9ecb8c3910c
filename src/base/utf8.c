/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* utf8.c - UTF-8 validation (utf8.h). Pure. */
#include <stdint.h>

#include "utf8.h"

/* The Unicode Standard's table 3-7, "Well-Formed UTF-8 Byte Sequences": the lead byte fixes the
 * length and the range of the second byte, which is what excludes overlong forms (E0 80..9F,
 * F0 80..8F), surrogates (ED A0..BF) and code points past U+10FFFF (F4 90..BF). Further bytes
 * are 80..BF. */
size_t cd_utf8_seq_len(const void *s, size_t n)
{
	const uint8_t *p = s;
	uint8_t lo = 0x80, hi = 0xbf;
	size_t len;

	if (n == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

bool cd_utf8_valid(const void *s, size_t n)
{
	const uint8_t *p = s;

	for (size_t i = 0, len; i < n; i += len) {
		len = cd_utf8_seq_len(p + i, n - i);
		if (!len)
			return false;
	}
	return true;
}
