/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * textdiff.c - line diff as unified hunks (textdiff.h). Runs in the CLI's process (`cordon
 * diff`); pure.
 *
 * The steps, as git's xdiff takes them: split both buffers into lines and give equal lines one
 * class number (a hash table); a line whose class the other side lacks can only be a change, so
 * it is marked before the search and left out of it (a file rewritten whole costs nothing);
 * Myers' middle-snake divide and conquer on what is left marks the rest; the marks are then
 * read as hunks. Two limits keep a hostile input from costing O(N^2): one split gives up
 * searching after `mxcost` edits and cuts at its furthest-reaching point (xdiff's heuristic),
 * and a budget for the whole diff, once spent, marks each remaining box all changed. Both only
 * make the diff longer than the shortest; it stays a correct diff.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "textdiff.h"
#include "util.h"

#define MAX_LINES (INT32_MAX / 4) /* indexes are int32_t (diagonals reach -2n) */

struct side {
	const char *buf;
	size_t len;
	int32_t n;	/* lines */
	size_t *off;	/* n + 1: line i is [off[i], off[i + 1]) */
	uint32_t *cls;	/* class of each line */
	uint8_t *chg;	/* 1: removed (old side) or added (new side) */
	int32_t nr;	/* lines left for the search */
	int32_t *ridx;	/* their line numbers */
	uint32_t *rcls; /* their classes */
};

struct classes {
	uint32_t *slot; /* class + 1, 0 empty */
	size_t mask;
	const char **p;
	size_t *len;
	uint64_t *hash;
	uint32_t *cnt[2]; /* lines of the class on each side */
	uint32_t n;
};

struct search {
	const uint32_t *h1, *h2;
	struct side *a, *b;
	int32_t *kvdf, *kvdb; /* indexed by diagonal, from -(nr_b + 1) to nr_a + 1 */
	int64_t mxcost;
	int64_t budget; /* steps left for the whole diff */
};

static void side_free(struct side *s)
{
	free(s->off);
	free(s->cls);
	free(s->chg);
	free(s->ridx);
	free(s->rcls);
}

static void classes_free(struct classes *c)
{
	free(c->slot);
	free(c->p);
	free(c->len);
	free(c->hash);
	free(c->cnt[0]);
	free(c->cnt[1]);
}

static int split_lines(struct side *s, const char *buf, size_t len)
{
	size_t n = 0, cap = 64;
	const char *p = buf, *end = buf + len;

	s->buf = buf;
	s->len = len;
	s->off = malloc(cap * sizeof(*s->off));
	if (!s->off)
		return -ENOMEM;
	s->off[0] = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		p = nl ? nl + 1 : end;
		if (n + 2 > cap) {
			size_t *o = reallocarray(s->off, cap * 2, sizeof(*o));
			if (!o)
				return -ENOMEM;
			s->off = o;
			cap *= 2;
		}
		s->off[++n] = (size_t)(p - buf);
	}
	if (n > MAX_LINES)
		return -EFBIG;
	s->n = (int32_t)n;
	s->cls = calloc(n + 1, sizeof(*s->cls));
	s->chg = calloc(n + 1, 1);
	s->ridx = calloc(n + 1, sizeof(*s->ridx));
	s->rcls = calloc(n + 1, sizeof(*s->rcls));
	if (!s->cls || !s->chg || !s->ridx || !s->rcls)
		return -ENOMEM;
	return 0;
}

static inline const char *line_at(const struct side *s, int32_t i, size_t *ret_len)
{
	*ret_len = s->off[i + 1] - s->off[i];
	return s->buf + s->off[i];
}

static uint64_t hash_line(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int classes_init(struct classes *c, size_t lines)
{
	size_t size = 16;

	while (size < lines * 2)
		size *= 2;
	c->mask = size - 1;
	c->slot = calloc(size, sizeof(*c->slot));
	c->p = calloc(lines + 1, sizeof(*c->p));
	c->len = calloc(lines + 1, sizeof(*c->len));
	c->hash = calloc(lines + 1, sizeof(*c->hash));
	c->cnt[0] = calloc(lines + 1, sizeof(*c->cnt[0]));
	c->cnt[1] = calloc(lines + 1, sizeof(*c->cnt[1]));
	if (!c->slot || !c->p || !c->len || !c->hash || !c->cnt[0] || !c->cnt[1])
		return -ENOMEM;
	return 0;
}

/* The class of a line: an existing one with the same bytes, or a new one. */
static uint32_t class_of(struct classes *c, const char *p, size_t len)
{
	uint64_t h = hash_line(p, len);

	for (size_t i = h & c->mask;; i = (i + 1) & c->mask) {
		uint32_t k = c->slot[i];

		if (k == 0) {
			k = c->n++;
			c->p[k] = p;
			c->len[k] = len;
			c->hash[k] = h;
			c->slot[i] = k + 1;
			return k;
		}
		k--;
		if (c->hash[k] == h && c->len[k] == len && memcmp(c->p[k], p, len) == 0)
			return k;
	}
}

static void classify(struct classes *c, struct side *s, int which)
{
	for (int32_t i = 0; i < s->n; i++) {
		size_t len;
		const char *p = line_at(s, i, &len);

		s->cls[i] = class_of(c, p, len);
		c->cnt[which][s->cls[i]]++;
	}
}

/* A line whose class the other side has not is a change: marked now, left out of the search. */
static void discard(struct side *s, const uint32_t *other_cnt)
{
	s->nr = 0;
	for (int32_t i = 0; i < s->n; i++) {
		if (other_cnt[s->cls[i]] == 0) {
			s->chg[i] = 1;
			continue;
		}
		s->ridx[s->nr] = i;
		s->rcls[s->nr++] = s->cls[i];
	}
}

static void mark(struct side *s, int32_t from, int32_t to)
{
	for (int32_t i = from; i < to; i++)
		s->chg[s->ridx[i]] = 1;
}

/* Past mxcost edits: cut at the furthest point either direction reached (xdiff's heuristic). */
static void split_give_up(const struct search *x, int32_t off1, int32_t lim1, int32_t off2,
			  int32_t lim2, int32_t fmin, int32_t fmax, int32_t bmin, int32_t bmax,
			  int32_t *ret1, int32_t *ret2)
{
	int64_t fbest = -1, fbest1 = -1, bbest = INT64_MAX, bbest1 = INT64_MAX;

	for (int32_t d = fmax; d >= fmin; d -= 2) {
		int64_t i1 = x->kvdf[d] < lim1 ? x->kvdf[d] : lim1, i2 = i1 - d;

		if (lim2 < i2)
			i1 = lim2 + d, i2 = lim2;
		if (fbest < i1 + i2)
			fbest = i1 + i2, fbest1 = i1;
	}
	for (int32_t d = bmax; d >= bmin; d -= 2) {
		int64_t i1 = x->kvdb[d] > off1 ? x->kvdb[d] : off1, i2 = i1 - d;

		if (i2 < off2)
			i1 = off2 + d, i2 = off2;
		if (i1 + i2 < bbest)
			bbest = i1 + i2, bbest1 = i1;
	}
	if ((int64_t)(lim1 + lim2) - bbest < fbest - (off1 + off2)) {
		*ret1 = (int32_t)fbest1;
		*ret2 = (int32_t)(fbest - fbest1);
	} else {
		*ret1 = (int32_t)bbest1;
		*ret2 = (int32_t)(bbest - bbest1);
	}
}

/* The middle snake of the box (Myers 1986, section 4b; the form of xdiff's xdl_split): a point
 * (ret1, ret2) a shortest edit path goes through. -1 when the whole budget is spent. */
static int split(struct search *x, int32_t off1, int32_t lim1, int32_t off2, int32_t lim2,
		 int32_t *ret1, int32_t *ret2)
{
	const uint32_t *h1 = x->h1, *h2 = x->h2;
	int32_t *kvdf = x->kvdf, *kvdb = x->kvdb;
	int32_t dmin = off1 - lim2, dmax = lim1 - off2, fmid = off1 - off2, bmid = lim1 - lim2;
	bool odd = (fmid - bmid) & 1;
	int32_t fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;

	kvdf[fmid] = off1;
	kvdb[bmid] = lim1;
	for (int64_t ec = 1;; ec++) {
		if (fmin > dmin)
			kvdf[--fmin - 1] = -1;
		else
			++fmin;
		if (fmax < dmax)
			kvdf[++fmax + 1] = -1;
		else
			--fmax;
		for (int32_t d = fmax; d >= fmin; d -= 2) {
			int32_t i1 = kvdf[d - 1] >= kvdf[d + 1] ? kvdf[d - 1] + 1 : kvdf[d + 1];
			int32_t i2 = i1 - d, start = i1;

			for (; i1 < lim1 && i2 < lim2 && h1[i1] == h2[i2]; i1++, i2++)
				;
			x->budget -= 1 + (i1 - start);
			kvdf[d] = i1;
			if (odd && bmin <= d && d <= bmax && kvdb[d] <= i1) {
				*ret1 = i1;
				*ret2 = i2;
				return 0;
			}
		}
		if (bmin > dmin)
			kvdb[--bmin - 1] = INT32_MAX;
		else
			++bmin;
		if (bmax < dmax)
			kvdb[++bmax + 1] = INT32_MAX;
		else
			--bmax;
		for (int32_t d = bmax; d >= bmin; d -= 2) {
			int32_t i1 = kvdb[d - 1] < kvdb[d + 1] ? kvdb[d - 1] : kvdb[d + 1] - 1;
			int32_t i2 = i1 - d, start = i1;

			for (; i1 > off1 && i2 > off2 && h1[i1 - 1] == h2[i2 - 1]; i1--, i2--)
				;
			x->budget -= 1 + (start - i1);
			kvdb[d] = i1;
			if (!odd && fmin <= d && d <= fmax && i1 <= kvdf[d]) {
				*ret1 = i1;
				*ret2 = i2;
				return 0;
			}
		}
		if (x->budget < 0)
			return -1;
		if (ec >= x->mxcost) {
			split_give_up(x, off1, lim1, off2, lim2, fmin, fmax, bmin, bmax, ret1, ret2);
			return 0;
		}
	}
}

/* Mark the changes of the box [off1, lim1) x [off2, lim2): recursion on the smaller half,
 * a loop on the larger, so the depth stays logarithmic. */
static void compare(struct search *x, int32_t off1, int32_t lim1, int32_t off2, int32_t lim2)
{
	for (;;) {
		int32_t s1, s2;

		for (; off1 < lim1 && off2 < lim2 && x->h1[off1] == x->h2[off2]; off1++, off2++)
			;
		for (; off1 < lim1 && off2 < lim2 && x->h1[lim1 - 1] == x->h2[lim2 - 1];
		     lim1--, lim2--)
			;
		if (off1 == lim1 || off2 == lim2 || x->budget < 0 ||
		    split(x, off1, lim1, off2, lim2, &s1, &s2) < 0 ||
		    (s1 == off1 && s2 == off2) || (s1 == lim1 && s2 == lim2)) {
			/* done, out of budget, or a cut that would not shrink the box */
			mark(x->a, off1, lim1);
			mark(x->b, off2, lim2);
			return;
		}
		if ((s1 - off1) + (s2 - off2) < (lim1 - s1) + (lim2 - s2)) {
			compare(x, off1, s1, off2, s2);
			off1 = s1, off2 = s2;
		} else {
			compare(x, s1, lim1, s2, lim2);
			lim1 = s1, lim2 = s2;
		}
	}
}

static int64_t isqrt_at_least(int64_t n, int64_t min)
{
	int64_t r = 1;

	while (r * r < n)
		r *= 2; /* a power of two at least sqrt(n), as xdiff's xdl_bogosqrt */
	return r < min ? min : r;
}

static int search(struct side *a, struct side *b)
{
	size_t ndiag = (size_t)a->nr + (size_t)b->nr + 3;
	_cleanup_free_ int32_t *kv = malloc(2 * ndiag * sizeof(*kv));
	struct search x = {
		.h1 = a->rcls, .h2 = b->rcls, .a = a, .b = b,
		.mxcost = isqrt_at_least((int64_t)ndiag, 256),
		/* room for the usual diff many times over; then each box left is marked whole */
		.budget = 64 * (int64_t)ndiag + 20000000,
	};

	if (!kv)
		return -ENOMEM;
	x.kvdf = kv + b->nr + 1;
	x.kvdb = kv + ndiag + b->nr + 1;
	compare(&x, 0, a->nr, 0, b->nr);
	return 0;
}

/* One run of changes: old lines [i0, i1), new lines [j0, j1). */
struct change {
	int32_t i0, i1, j0, j1;
};

static bool next_change(const struct side *a, const struct side *b, int32_t *i, int32_t *j,
			struct change *ret)
{
	while (*i < a->n || *j < b->n) {
		if ((*i < a->n && a->chg[*i]) || (*j < b->n && b->chg[*j])) {
			ret->i0 = *i;
			ret->j0 = *j;
			while (*i < a->n && a->chg[*i])
				(*i)++;
			while (*j < b->n && b->chg[*j])
				(*j)++;
			ret->i1 = *i;
			ret->j1 = *j;
			return true;
		}
		/* an unchanged line on both sides: the marks keep them paired */
		(*i)++;
		(*j)++;
	}
	return false;
}

static void put_line(FILE *out, char mark, const struct side *s, int32_t i)
{
	size_t len;
	const char *p = line_at(s, i, &len);

	fputc(mark, out);
	fwrite(p, 1, len, out);
	if (len == 0 || p[len - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", out);
}

static void put_range(FILE *out, char sign, int32_t start, int32_t count)
{
	fprintf(out, "%c%d", sign, count ? start + 1 : start);
	if (count != 1)
		fprintf(out, ",%d", count);
}

/* One hunk: changes ch[0..n), with context. */
static void put_hunk(FILE *out, const struct side *a, const struct side *b,
		     const struct change *ch, size_t n)
{
	int32_t ctx = CD_TEXTDIFF_CONTEXT;
	int32_t as = ch[0].i0 > ctx ? ch[0].i0 - ctx : 0;
	int32_t bs = ch[0].j0 - (ch[0].i0 - as);
	int32_t ae = ch[n - 1].i1 + ctx < a->n ? ch[n - 1].i1 + ctx : a->n;
	int32_t be = ch[n - 1].j1 + (ae - ch[n - 1].i1);
	int32_t i = as;

	fputs("@@ ", out);
	put_range(out, '-', as, ae - as);
	fputc(' ', out);
	put_range(out, '+', bs, be - bs);
	fputs(" @@\n", out);
	for (size_t k = 0; k < n; k++) {
		for (; i < ch[k].i0; i++)
			put_line(out, ' ', a, i);
		for (; i < ch[k].i1; i++)
			put_line(out, '-', a, i);
		for (int32_t j = ch[k].j0; j < ch[k].j1; j++)
			put_line(out, '+', b, j);
	}
	for (; i < ae; i++)
		put_line(out, ' ', a, i);
}

/* Read the marks as hunks: changes at most 2 * context lines apart share one. */
static int put_hunks(FILE *out, const struct side *a, const struct side *b,
		     struct cd_textdiff_count *count)
{
	_cleanup_free_ struct change *hunk = NULL;
	size_t n = 0, cap = 0;
	int32_t i = 0, j = 0;
	struct change c;

	while (next_change(a, b, &i, &j, &c)) {
		count->removed += (uint64_t)(c.i1 - c.i0);
		count->added += (uint64_t)(c.j1 - c.j0);
		if (n > 0 && c.i0 - hunk[n - 1].i1 > 2 * CD_TEXTDIFF_CONTEXT) {
			if (out)
				put_hunk(out, a, b, hunk, n);
			n = 0;
		}
		if (n == cap) {
			struct change *h = reallocarray(hunk, cap ? cap * 2 : 16, sizeof(*h));
			if (!h)
				return -ENOMEM;
			hunk = h;
			cap = cap ? cap * 2 : 16;
		}
		hunk[n++] = c;
	}
	if (n > 0 && out)
		put_hunk(out, a, b, hunk, n);
	return 0;
}

static int diff_lines(struct side *a, struct side *b)
{
	struct classes c = { 0 };
	int r;

	r = classes_init(&c, (size_t)a->n + (size_t)b->n);
	if (r < 0)
		goto out;
	classify(&c, a, 0);
	classify(&c, b, 1);
	discard(a, c.cnt[1]);
	discard(b, c.cnt[0]);
	r = search(a, b);
out:
	classes_free(&c);
	return r;
}

int cd_textdiff_hunks(const char *a_buf, size_t a_len, const char *b_buf, size_t b_len,
		      FILE *out, struct cd_textdiff_count *ret_count)
{
	struct side a = { 0 }, b = { 0 };
	struct cd_textdiff_count count = { 0 };
	int r;

	if (a_len == b_len && (a_len == 0 || memcmp(a_buf, b_buf, a_len) == 0))
		goto done;
	r = split_lines(&a, a_buf, a_len);
	if (r == 0)
		r = split_lines(&b, b_buf, b_len);
	if (r == 0)
		r = diff_lines(&a, &b);
	if (r == 0)
		r = put_hunks(out, &a, &b, &count);
	side_free(&a);
	side_free(&b);
	if (r < 0)
		return r;
done:
	if (ret_count)
		*ret_count = count;
	return 0;
}
