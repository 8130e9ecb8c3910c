/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-textdiff.c - libFuzzer target for the line differ, cd_textdiff_hunks (src/layer/
 * textdiff.c): the input is two texts, old and new (the first byte says where the rest splits).
 * Besides the sanitizers, it aborts when the hunks, applied to the old text by a second reading
 * of the format (tests/lib/hunkapply.h), do not give the new text; when the counts differ from
 * the "+"/"-" lines written; when identical texts give any hunk; and when the reverse diff does
 * not give the old text back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textdiff.h"

#include "../lib/hunkapply.h"

/* a -> b as hunks, applied to a: must be b. Returns the hunks' length. */
static size_t check(const char *a, size_t an, const char *b, size_t bn)
{
	char *h = NULL, *got = NULL;
	size_t hl = 0, got_len = 0, plus = 0, minus = 0;
	struct cd_textdiff_count c, c2;
	FILE *f = open_memstream(&h, &hl);

	if (!f || cd_textdiff_hunks(a, an, b, bn, f, &c) < 0 || fclose(f) != 0)
		abort();
	if (cd_textdiff_hunks(a, an, b, bn, NULL, &c2) < 0 || c.added != c2.added ||
	    c.removed != c2.removed)
		abort(); /* counting alone counts the same */
	if (hunk_apply(a, an, h, hl, &got, &got_len) < 0) {
		fprintf(stderr, "fuzz-textdiff: %s\n", hunk_error);
		abort();
	}
	if (got_len != bn || memcmp(got, b, bn) != 0)
		abort();
	for (size_t i = 0; i < hl;) {
		const char *nl = memchr(h + i, '\n', hl - i);

		if (!nl)
			abort(); /* every line of the hunks ends with a newline */
		plus += h[i] == '+';
		minus += h[i] == '-';
		i = (size_t)(nl - h) + 1;
	}
	if (plus != c.added || minus != c.removed)
		abort();
	free(h);
	free(got);
	return hl;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *a, *b;
	size_t an, bn;

	if (size < 1 || size > 65536)
		return 0;
	an = (size_t)data[0] * (size - 1) / 255;
	a = (const char *)data + 1;
	b = a + an;
	bn = size - 1 - an;
	check(a, an, b, bn);
	check(b, bn, a, an);
	if (check(a, an, a, an) != 0)
		abort(); /* identical: nothing */
	return 0;
}
