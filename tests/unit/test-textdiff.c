/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-textdiff.c - the line differ (textdiff.h): hunks against known outputs (the form GNU
 * diff -u and git write), the end of a file without a newline on either side, empty sides,
 * CRLF, long lines, identical buffers; random pairs whose hunks, applied by a second reading
 * of the format (tests/lib/hunkapply.h), must give the new text back; and the worst inputs
 * (10 MB all changed, lines shuffled) within seconds. TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textdiff.h"
#include "util.h"

#include "../lib/hunkapply.h"
#include "../lib/tap.h"

/* The hunks of a -> b (malloc'd), counts to *count. */
static char *hunks_of(const char *a, size_t an, const char *b, size_t bn, size_t *ret_len,
		      struct cd_textdiff_count *count)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	int r;

	if (!f)
		abort();
	r = cd_textdiff_hunks(a, an, b, bn, f, count);
	if (fclose(f) != 0 || r < 0) {
		free(s);
		return NULL;
	}
	if (ret_len)
		*ret_len = len;
	return s;
}

static void known(const char *name, const char *a, const char *b, const char *want,
		  uint64_t added, uint64_t removed)
{
	struct cd_textdiff_count c = { 99, 99 };
	_cleanup_free_ char *got = hunks_of(a, strlen(a), b, strlen(b), NULL, &c);

	is_str(got, want, "%s: hunks", name);
	ok(c.added == added && c.removed == removed, "%s: %ju added, %ju removed", name,
	   (uintmax_t)c.added, (uintmax_t)c.removed);
}

static void test_known(void)
{
	known("one line changed", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", 1,
	      1);
	known("identical", "a\nb\n", "a\nb\n", "", 0, 0);
	known("both empty", "", "", "", 0, 0);
	known("from empty", "", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n", 2, 0);
	known("to empty", "x\n", "", "@@ -1 +0,0 @@\n-x\n", 0, 1);
	known("to empty, no newline", "x", "", "@@ -1 +0,0 @@\n-x\n\\ No newline at end of file\n",
	      0, 1);
	known("newline added at the end", "a\nb", "a\nb\n",
	      "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n", 1, 1);
	known("newline removed at the end", "a\nb\n", "a\nb",
	      "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n", 1, 1);
	known("no newline on either side, context", "a\nb\nc", "a\nB\nc",
	      "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n", 1, 1);
	known("no newline, both last lines changed", "a\nb", "a\nc",
	      "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
	      "\\ No newline at end of file\n",
	      1, 1);
	known("CRLF lines", "a\r\nb\r\n", "a\r\nc\r\n", "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n", 1,
	      1);
	known("CR only differs", "a\nb\n", "a\r\nb\n", "@@ -1,2 +1,2 @@\n-a\n+a\r\n b\n", 1, 1);
}

static const char *lines20(char *buf, const char *five, const char *eleven, const char *two,
			   const char *eighteen)
{
	char *p = buf;

	for (int i = 1; i <= 20; i++) {
		const char *s = i == 2 ? two : i == 5 ? five : i == 11 ? eleven : i == 18 ? eighteen
										    : NULL;
		p += s ? sprintf(p, "%s\n", s) : sprintf(p, "%d\n", i);
	}
	return buf;
}

static void test_context(void)
{
	char a[256], b[256], c[256];

	lines20(a, "5", "11", "2", "18");
	lines20(b, "5", "11", "two", "eighteen");
	lines20(c, "five", "eleven", "2", "18");
	known("two hunks, 3 lines of context", a, b,
	      "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
	      "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n",
	      2, 2);
	known("changes 5 lines apart share a hunk", a, c,
	      "@@ -2,13 +2,13 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n-11\n+eleven\n"
	      " 12\n 13\n 14\n",
	      2, 2);
	known("insertion only", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nnew\n5\n6\n7\n8\n",
	      "@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n", 1, 0);
	known("deletion at the start", "1\n2\n3\n4\n5\n", "2\n3\n4\n5\n",
	      "@@ -1,4 +1,3 @@\n-1\n 2\n 3\n 4\n", 0, 1);
}

/* The hunks of a -> b, applied to a, give b. */
static bool round_trip(const char *a, size_t an, const char *b, size_t bn, const char *name)
{
	size_t hl = 0, got_len = 0;
	_cleanup_free_ char *h = hunks_of(a, an, b, bn, &hl, NULL);
	_cleanup_free_ char *got = NULL;

	if (!h)
		return ok(false, "%s: diff failed", name);
	if (hunk_apply(a, an, h, hl, &got, &got_len) < 0) {
		diag("%s", hunk_error);
		return ok(false, "%s: hunks apply", name);
	}
	if (got_len != bn || memcmp(got, b, bn) != 0)
		return ok(false, "%s: hunks give the new text", name);
	return true;
}

static size_t random_text(char *buf, size_t max_lines, unsigned *seed)
{
	static const char *words[] = { "a", "b", "c", "int x;", "}", "", "\r", "long line here" };
	size_t n = (size_t)rand_r(seed) % max_lines, len = 0;

	for (size_t i = 0; i < n; i++) {
		const char *w = words[rand_r(seed) % CD_ELEMENTSOF(words)];

		len += (size_t)sprintf(buf + len, "%s", w);
		if (i + 1 < n || rand_r(seed) % 4)
			buf[len++] = '\n';
	}
	return len;
}

static void test_random(void)
{
	static char a[4096], b[4096];
	unsigned seed = 42;
	int passed = 0, runs = 3000;

	for (int i = 0; i < runs; i++) {
		size_t an = random_text(a, 60, &seed), bn = random_text(b, 60, &seed);
		char name[64];

		snprintf(name, sizeof(name), "random pair %d", i);
		passed += round_trip(a, an, b, bn, name);
	}
	is_int(passed, runs, "%d random pairs: the hunks applied give the new text", runs);
}

static void test_long_lines(void)
{
	size_t n = 300000;
	_cleanup_free_ char *a = malloc(n), *b = malloc(n);
	struct cd_textdiff_count c;
	_cleanup_free_ char *h = NULL;

	memset(a, 'x', n);
	memset(b, 'x', n);
	a[n / 2] = '\n';
	b[n / 2] = '\n';
	b[n - 1] = 'y';
	ok(round_trip(a, n, b, n, "two 150 KB lines, the second changed"),
	   "two 150 KB lines: round trip");
	h = hunks_of(a, n, b, n, NULL, &c);
	ok(h && c.added == 1 && c.removed == 1, "two 150 KB lines: one line changed");
}

/* n lines "line <i>\n" from a random permutation (shuffled) or numbered from base. */
static char *numbered(size_t n, size_t base, bool shuffled, size_t *ret_len)
{
	char *s = malloc(n * 24), *p = s;
	_cleanup_free_ size_t *order = malloc(n * sizeof(*order));
	unsigned seed = 7;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n; shuffled && i > 1; i--) {
		size_t j = (size_t)rand_r(&seed) % i, t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "line %zu\n", base + order[i]);
	*ret_len = (size_t)(p - s);
	return s;
}

static void test_big(void)
{
	size_t an, bn, n = 1000000;
	_cleanup_free_ char *a = numbered(n, 0, false, &an);
	_cleanup_free_ char *b = numbered(n, n, false, &bn);
	_cleanup_free_ char *s = NULL;
	struct cd_textdiff_count c;
	uint64_t t0 = cd_now_ns(), t1;
	int r = cd_textdiff_hunks(a, an, b, bn, NULL, &c);

	ok(r == 0 && c.added == n && c.removed == n,
	   "%zu MB, every line changed: %ju added, %ju removed", an >> 20, (uintmax_t)c.added,
	   (uintmax_t)c.removed);
	t1 = cd_now_ns();
	ok(t1 - t0 < 5 * NSEC_PER_SEC, "... in %ju ms", (uintmax_t)((t1 - t0) / NSEC_PER_MSEC));
	ok(round_trip(a, an, b, bn, "every line changed"), "every line changed: round trip");

	s = numbered(n / 2, 0, true, &bn);
	free(a);
	a = numbered(n / 2, 0, false, &an);
	t0 = cd_now_ns();
	ok(round_trip(a, an, s, bn, "the same lines shuffled"),
	   "%zu MB, the same lines shuffled: round trip", an >> 20);
	t1 = cd_now_ns();
	ok(t1 - t0 < 20 * NSEC_PER_SEC, "... in %ju ms (edit budget)",
	   (uintmax_t)((t1 - t0) / NSEC_PER_MSEC));
}

int main(void)
{
	test_known();
	test_context();
	test_random();
	test_long_lines();
	test_big();
	return done_testing();
}
