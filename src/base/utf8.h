/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* utf8.h - the one UTF-8 validator (RFC 3629): the JSON writer decides with it which bytes it
 * writes as they are, and the audit trail which strings also need their exact bytes in hex, so
 * the two cannot disagree. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The length (1 to 4) of the well-formed sequence at s, n bytes being left; 0 when there is none
 * there: a stray continuation byte, a lead byte C0, C1 or F5 to FF, an overlong form, a surrogate
 * (U+D800..U+DFFF), a code point past U+10FFFF, or a sequence cut short by the end. Every code
 * point, controls and U+0000 included, is well-formed. */
size_t cd_utf8_seq_len(const void *s, size_t n);
/* All n bytes are well-formed UTF-8. */
bool cd_utf8_valid(const void *s, size_t n);
