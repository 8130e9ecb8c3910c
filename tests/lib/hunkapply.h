/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hunkapply.h - apply unified hunks (as cd_textdiff_hunks writes them) to a buffer, strictly:
 * every context and "-" line must match the old text where the header says, the header's
 * counts must match the body, hunks must come in order. Header-only, for test-textdiff.c and
 * fuzz-textdiff.c: a second, independent reading of the format.
 *
 *   hunk_apply(old, old_len, hunks, hunks_len, &new, &new_len)  0, or -1 with why in hunk_error
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char hunk_error[160];

struct hunk_buf {
	char *p;
	size_t len, cap;
};

static inline bool hunk_put(struct hunk_buf *b, const char *p, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = (b->len + len + 1) * 2;
		char *q = realloc(b->p, cap);
		if (!q)
			return false;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	return true;
}

/* Line at *pos of [s, s+len): its bytes with the "\n" (none on a last line without it). */
static inline bool hunk_line(const char *s, size_t len, size_t *pos, const char **ret,
			     size_t *ret_len)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*ret = s + *pos;
	nl = memchr(*ret, '\n', len - *pos);
	*ret_len = nl ? (size_t)(nl - *ret) + 1 : len - *pos;
	*pos += *ret_len;
	return true;
}

static inline int hunk_fail(const char *what, size_t where)
{
	snprintf(hunk_error, sizeof(hunk_error), "%s (at byte %zu of the hunks)", what, where);
	return -1;
}

/* Copy old lines until old line number `upto` (0-based index of the next line to read). */
static inline int hunk_copy_to(struct hunk_buf *out, const char *a, size_t a_len, size_t *apos,
			       size_t *aline, size_t upto)
{
	const char *l;
	size_t ll;

	if (upto < *aline)
		return hunk_fail("hunks overlap or are out of order", 0);
	while (*aline < upto) {
		if (!hunk_line(a, a_len, apos, &l, &ll))
			return hunk_fail("hunk starts past the end of the old text", 0);
		if (!hunk_put(out, l, ll))
			return hunk_fail("out of memory", 0);
		(*aline)++;
	}
	return 0;
}

static inline bool hunk_range(const char **p, char sign, size_t *start, size_t *count)
{
	char *end;

	if (**p != sign)
		return false;
	*start = strtoul(*p + 1, &end, 10);
	*count = 1;
	if (*end == ',')
		*count = strtoul(end + 1, &end, 10);
	*p = end;
	return true;
}

/* One hunk body line, its "\ No newline" marker folded in: sign, and the text it stands for. */
static inline bool hunk_body_line(const char *h, size_t h_len, size_t *hpos, char *sign,
				  const char **text, size_t *text_len)
{
	const char *l, *m;
	size_t ll, ml, save;

	if (!hunk_line(h, h_len, hpos, &l, &ll) || ll < 2 || l[ll - 1] != '\n')
		return false;
	*sign = l[0];
	*text = l + 1;
	*text_len = ll - 1;
	save = *hpos;
	if (hunk_line(h, h_len, hpos, &m, &ml) && m[0] == '\\') {
		if (ml != strlen("\\ No newline at end of file\n") ||
		    memcmp(m, "\\ No newline at end of file\n", ml) != 0)
			return false;
		(*text_len)--;
	} else {
		*hpos = save;
	}
	return true;
}

static inline int hunk_one(struct hunk_buf *out, const char *a, size_t a_len, size_t *apos,
			   size_t *aline, const char *h, size_t h_len, size_t *hpos)
{
	const char *l, *p, *text, *al;
	size_t ll, as, ac, bs, bc, tl, all, seen_a = 0, seen_b = 0;
	char sign;

	if (!hunk_line(h, h_len, hpos, &l, &ll) || ll < 4 || memcmp(l, "@@ ", 3) != 0)
		return hunk_fail("no \"@@ \" header", *hpos);
	p = l + 3;
	if (!hunk_range(&p, '-', &as, &ac) || *p++ != ' ' || !hunk_range(&p, '+', &bs, &bc) ||
	    strncmp(p, " @@\n", 4) != 0)
		return hunk_fail("bad hunk header", *hpos);
	if (hunk_copy_to(out, a, a_len, apos, aline, ac ? as - 1 : as) < 0)
		return -1;
	while (seen_a < ac || seen_b < bc) {
		if (!hunk_body_line(h, h_len, hpos, &sign, &text, &tl))
			return hunk_fail("hunk body ends early or has a bad line", *hpos);
		if (sign == ' ' || sign == '-') {
			if (!hunk_line(a, a_len, apos, &al, &all) || all != tl ||
			    memcmp(al, text, tl) != 0)
				return hunk_fail("context or removed line does not match", *hpos);
			(*aline)++;
			seen_a++;
		}
		if ((sign == ' ' || sign == '+') && !hunk_put(out, text, tl))
			return hunk_fail("out of memory", *hpos);
		if (sign == ' ' || sign == '+')
			seen_b++;
		else if (sign != '-')
			return hunk_fail("line without a sign", *hpos);
	}
	if (seen_a != ac || seen_b != bc)
		return hunk_fail("hunk counts do not match its body", *hpos);
	return 0;
}

static inline int hunk_apply(const char *a, size_t a_len, const char *h, size_t h_len,
			     char **ret, size_t *ret_len)
{
	struct hunk_buf out = { 0 };
	size_t apos = 0, aline = 0, hpos = 0;
	const char *l;
	size_t ll;

	if (!hunk_put(&out, "", 0))
		return hunk_fail("out of memory", 0);
	while (hpos < h_len) {
		if (hunk_one(&out, a, a_len, &apos, &aline, h, h_len, &hpos) < 0) {
			free(out.p);
			return -1;
		}
	}
	while (hunk_line(a, a_len, &apos, &l, &ll)) {
		if (!hunk_put(&out, l, ll)) {
			free(out.p);
			return hunk_fail("out of memory", 0);
		}
	}
	*ret = out.p;
	*ret_len = out.len;
	return 0;
}
