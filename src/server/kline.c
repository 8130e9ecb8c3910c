/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kline.c - a kernel's event line checked in place (pure: no I/O, no allocation): exactly one
 * JSON object as RFC 8259 has it (what the SDK's JSON.parse takes), and its top-level "type"
 * member. Nothing is built, so checking a 32 MiB line costs no memory (json-c's tree of one
 * took twice the line). Runs in the server; unit-tested (tests/unit/test-kline.c). */
#include <errno.h>
#include <string.h>

#include "kline.h"

struct scan {
	const char *s, *end;
};

static void ws(struct scan *x)
{
	while (x->s < x->end && (*x->s == ' ' || *x->s == '\t' || *x->s == '\n' || *x->s == '\r'))
		x->s++;
}

static bool take(struct scan *x, char c)
{
	if (x->s >= x->end || *x->s != c)
		return false;
	x->s++;
	return true;
}

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at x->s; *ret its bytes between the quotes, escapes as they are. */
static bool string(struct scan *x, const char **ret, size_t *ret_len)
{
	const char *b;

	if (!take(x, '"'))
		return false;
	b = x->s;
	while (x->s < x->end) {
		unsigned char c = (unsigned char)*x->s++;

		if (c == '"') {
			*ret = b;
			*ret_len = (size_t)(x->s - 1 - b);
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (x->s >= x->end)
			return false;
		c = (unsigned char)*x->s++;
		if (c == 'u') {
			if (x->end - x->s < 4)
				return false;
			for (int i = 0; i < 4; i++)
				if (hex(*x->s++) < 0)
					return false;
		} else if (!c || !strchr("\"\\/bfnrt", c)) {
			return false;
		}
	}
	return false;
}

static bool digits(struct scan *x)
{
	const char *b = x->s;

	while (x->s < x->end && *x->s >= '0' && *x->s <= '9')
		x->s++;
	return x->s > b;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number(struct scan *x)
{
	take(x, '-');
	if (!take(x, '0') && !(x->s < x->end && *x->s >= '1' && *x->s <= '9' && digits(x)))
		return false;
	if (take(x, '.') && !digits(x))
		return false;
	if (take(x, 'e') || take(x, 'E')) {
		if (!take(x, '+'))
			take(x, '-');
		return digits(x);
	}
	return true;
}

static bool word(struct scan *x, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(x->end - x->s) < n || memcmp(x->s, w, n) != 0)
		return false;
	x->s += n;
	return true;
}

/* A key spells "type" (escapes decoded, as JSON.parse does). */
static bool is_type(const char *k, size_t n)
{
	static const char want[] = "type";
	size_t i = 0;

	for (size_t j = 0; j < n; i++) {
		char c = k[j++];

		if (c == '\\' && j < n && k[j] == 'u') { /* \u00XX: j was checked by string() */
			int v = hex(k[j + 1]) << 12 | hex(k[j + 2]) << 8 | hex(k[j + 3]) << 4 |
				hex(k[j + 4]);

			c = v < 0x80 ? (char)v : 0;
			j += 5;
		} else if (c == '\\') {
			c = k[j++] == '/' ? '/' : 0; /* other escapes are not letters */
		}
		if (i >= 4 || c != want[i])
			return false;
	}
	return i == 4;
}

/* A scalar value (not an object or array); a string's span in *ret. */
static bool scalar(struct scan *x, const char **ret, size_t *ret_len)
{
	if (x->s >= x->end)
		return false;
	switch (*x->s) {
	case '"':
		return string(x, ret, ret_len);
	case 't':
		return word(x, "true");
	case 'f':
		return word(x, "false");
	case 'n':
		return word(x, "null");
	default:
		return number(x);
	}
}

struct walk {
	struct scan x;
	uint64_t objects; /* bit d: the container at depth d+1 is an object */
	int depth;
	bool want_type; /* the value being read is the top object's "type" */
	struct srv_kline *ret;
};

/* One value at w->x.s: a scalar, or the opening of a container (depth + 1). */
static bool value(struct walk *w)
{
	const char *str = NULL;
	size_t len = 0;
	bool top = w->want_type;

	w->want_type = false;
	if (top)
		w->ret->type = NULL; /* the last "type" counts, as for JSON.parse */
	if (take(&w->x, '{') || take(&w->x, '[')) {
		if (w->depth >= SRV_KLINE_MAX_DEPTH)
			return false;
		if (w->x.s[-1] == '{')
			w->objects |= 1ull << w->depth;
		else
			w->objects &= ~(1ull << w->depth);
		w->depth++;
		return true;
	}
	if (!scalar(&w->x, &str, &len))
		return false;
	if (top && str) {
		w->ret->type = str;
		w->ret->type_len = len;
	}
	return true;
}

/* A member's key and colon, in an object. */
static bool key(struct walk *w)
{
	const char *k;
	size_t n;

	ws(&w->x);
	if (!string(&w->x, &k, &n))
		return false;
	ws(&w->x);
	if (!take(&w->x, ':'))
		return false;
	w->want_type = w->depth == 1 && is_type(k, n);
	return true;
}

/* After a value: a comma and the next, or the container's end (maybe several). */
static bool after(struct walk *w, bool *more)
{
	for (;;) {
		bool obj = w->objects >> (w->depth - 1) & 1;

		ws(&w->x);
		if (take(&w->x, ',')) {
			*more = true;
			return !obj || key(w);
		}
		if (!take(&w->x, obj ? '}' : ']'))
			return false;
		if (--w->depth == 0) {
			*more = false;
			return true;
		}
	}
}

/* Just after an opening: empty, or its first member or element. */
static bool first(struct walk *w, bool *more)
{
	bool obj = w->objects >> (w->depth - 1) & 1;

	ws(&w->x);
	if (take(&w->x, obj ? '}' : ']')) {
		w->depth--;
		return w->depth == 0 ? (*more = false, true) : after(w, more);
	}
	*more = true;
	return !obj || key(w);
}

int srv_kline_check(const char *line, size_t len, struct srv_kline *ret)
{
	struct walk w = {.x = {line, line + len}, .ret = ret};
	bool more = true;

	*ret = (struct srv_kline){0};
	ws(&w.x);
	if (!take(&w.x, '{'))
		return -EINVAL;
	w.objects = 1;
	w.depth = 1;
	if (!first(&w, &more))
		return -EINVAL;
	while (more) {
		int depth = w.depth;

		ws(&w.x);
		if (!value(&w))
			return -EINVAL;
		if (w.depth > depth ? !first(&w, &more) : !after(&w, &more))
			return -EINVAL;
	}
	ws(&w.x);
	return w.x.s == w.x.end ? 0 : -EINVAL;
}
