/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manifest.c - a layer's manifest: write, parse, check (manifest.h). Pure; runs wherever a
 * layer is read or written (the supervisor, the CLI). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sha256.h"
#include "manifest.h"
#include "util.h"

#define MODE_MASK      (0777 | S_ISVTX)
#define CD_MANIFEST_V1 "cordon-layer 1"
#define CD_MANIFEST_V2 "cordon-layer 2"

bool cd_layer_id_valid(const char *id)
{
	size_t i;

	if (!id)
		return false;
	for (i = 0; i < CD_LAYER_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return id[i] == '\0';
}

bool cd_layer_git_path(const char *path)
{
	for (const char *p = path; p; p = strchr(p, '/')) {
		if (*p == '/')
			p++;
		if (!strncmp(p, ".git", 4) && (p[4] == '/' || p[4] == '\0'))
			return true;
	}
	return false;
}

bool cd_layer_path_valid(const char *p)
{
	const char *c = p;

	if (!p || !*p)
		return false;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!c[n])
			return true;
		c += n + 1;
	}
}

int cd_layer_escape(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int r = (*p < 0x21 || *p == '\\' || *p >= 0x7f) ? fprintf(f, "\\%03o", *p)
								 : fputc(*p, f);
		if (r < 0)
			return -EIO;
	}
	return 0;
}

static void put_state(FILE *f, const struct cd_layer_state *s)
{
	char hex[65] = "-";

	if (s->type == CD_LT_FILE || s->type == CD_LT_SYMLINK)
		cd_sha256_hex(s->sha256, hex);
	fprintf(f, "%c %04o %" PRIu64 " %s", (char)s->type, (unsigned)s->mode, s->size, hex);
}

int cd_layer_manifest_write(const struct cd_layer *l, FILE *f)
{
	fputs(CD_MANIFEST_V2 "\nworkdir ", f);
	cd_layer_escape(f, l->workdir ? l->workdir : "/");
	fprintf(f, "\nworkdir-id %" PRIu64 " %" PRIu64 "\ncreated %" PRId64 "\nsaved %" PRId64
		   "\nbytes %" PRIu64 "\nskipped %" PRIu64 "\n",
		(uint64_t)l->workdir_dev, (uint64_t)l->workdir_ino, l->created, l->saved, l->bytes,
		l->skipped);
	for (char **g = l->protect; g && *g; g++) {
		fputs("protect ", f);
		cd_layer_escape(f, *g);
		fputc('\n', f);
	}
	fputs("changes\n", f);
	for (size_t i = 0; i < l->n_changes; i++) {
		const struct cd_layer_change *c = &l->changes[i];

		fprintf(f, "%c ", (char)c->op);
		put_state(f, &c->now);
		fputc(' ', f);
		put_state(f, &c->base);
		fputc(' ', f);
		cd_layer_escape(f, c->path);
		fputc('\n', f);
	}
	if (fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

/* Parsing: one line at a time, split at single spaces. */
struct parser {
	unsigned line;
	struct cordon_error *err;
};

static int bad(struct parser *p, const char *fmt, const char *what)
{
	return cd_fail(p->err, EBADMSG, "layer", "manifest line %u: %s%s", p->line, fmt,
		       what ? what : "");
}

/* An escaped word back to its bytes (malloc'd); NULL when malformed. */
static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] >= 0x7f)
			goto bad;
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		if (i + 3 >= n || s[i + 1] < '0' || s[i + 1] > '3' || s[i + 2] < '0' ||
		    s[i + 2] > '7' || s[i + 3] < '0' || s[i + 3] > '7')
			goto bad;
		v = (unsigned)(s[i + 1] - '0') * 64 + (unsigned)(s[i + 2] - '0') * 8 +
		    (unsigned)(s[i + 3] - '0');
		if (v == 0 || !(v < 0x21 || v == '\\' || v >= 0x7f))
			goto bad; /* NUL, or a byte that is written as itself */
		*o++ = (char)v;
		i += 3;
	}
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

static bool parse_u64(const char *s, size_t n, int base, uint64_t *ret)
{
	char buf[32], *end;

	if (n == 0 || n >= sizeof(buf) || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*ret = strtoull(buf, &end, base);
	return errno == 0 && *end == '\0';
}

static bool parse_hex32(const char *s, size_t n, uint8_t out[32])
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < 64; i++) {
		int c = s[i], v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;

		if (v < 0)
			return false;
		if (i % 2)
			out[i / 2] |= (uint8_t)v;
		else
			out[i / 2] = (uint8_t)(v << 4);
	}
	return true;
}

/* The next space-separated word of *s (whose end is e). */
static bool word(const char **s, const char *e, const char **ret, size_t *ret_n)
{
	const char *sp;

	if (*s > e || *s == e)
		return false;
	sp = memchr(*s, ' ', (size_t)(e - *s));
	*ret = *s;
	*ret_n = sp ? (size_t)(sp - *s) : (size_t)(e - *s);
	*s = sp ? sp + 1 : e;
	return *ret_n > 0;
}

static int parse_state(struct parser *p, const char **s, const char *e, struct cd_layer_state *st)
{
	const char *w[4];
	size_t n[4];
	uint64_t mode;

	for (int i = 0; i < 4; i++)
		if (!word(s, e, &w[i], &n[i]))
			return bad(p, "too few fields", NULL);
	if (n[0] != 1 || !strchr("fdl-", w[0][0]))
		return bad(p, "bad type", NULL);
	st->type = (enum cd_layer_type)w[0][0];
	if (!parse_u64(w[1], n[1], 8, &mode) || (mode & ~(uint64_t)MODE_MASK))
		return bad(p, "bad mode (0777 and the sticky bit at most)", NULL);
	st->mode = (mode_t)mode;
	if (!parse_u64(w[2], n[2], 10, &st->size))
		return bad(p, "bad size", NULL);
	memset(st->sha256, 0, sizeof(st->sha256));
	if (st->type == CD_LT_FILE || st->type == CD_LT_SYMLINK) {
		if (!parse_hex32(w[3], n[3], st->sha256))
			return bad(p, "bad sha256", NULL);
	} else if (n[3] != 1 || w[3][0] != '-')
		return bad(p, "a sha256 where there is no content", NULL);
	if (st->type == CD_LT_NONE && (st->mode || st->size))
		return bad(p, "a mode or size where there is no entry", NULL);
	if (st->type == CD_LT_DIR && st->size)
		return bad(p, "a size for a directory", NULL);
	return 0;
}

static int check_change(struct parser *p, const struct cd_layer_change *c)
{
	bool now = c->now.type != CD_LT_NONE, base = c->base.type != CD_LT_NONE;

	switch (c->op) {
	case CD_LAYER_ADD:
		return now && !base ? 0 : bad(p, "A needs a new entry and no base", NULL);
	case CD_LAYER_DELETE:
		return !now && base ? 0 : bad(p, "D needs a base and no new entry", NULL);
	case CD_LAYER_MODIFY:
		if (!now || !base)
			return bad(p, "M needs a new entry and a base", NULL);
		return cd_layer_state_equal(&c->now, &c->base) ? bad(p, "M that changes nothing", NULL)
								: 0;
	}
	return bad(p, "bad operation (A, M or D)", NULL);
}

static int parse_change(struct parser *p, const char *s, const char *e, struct cd_layer *l)
{
	struct cd_layer_change c = { 0 }, *n;
	const char *w;
	size_t wn;
	int r;

	if (!word(&s, e, &w, &wn) || wn != 1)
		return bad(p, "bad operation (A, M or D)", NULL);
	c.op = (enum cd_layer_op)w[0];
	r = parse_state(p, &s, e, &c.now);
	if (r < 0)
		return r;
	r = parse_state(p, &s, e, &c.base);
	if (r < 0)
		return r;
	r = check_change(p, &c);
	if (r < 0)
		return r;
	if (!word(&s, e, &w, &wn) || s != e || w[wn] == ' ')
		return bad(p, "a path, and nothing after it", NULL);
	c.path = unescape(w, wn);
	if (!c.path || !cd_layer_path_valid(c.path)) {
		free(c.path);
		return bad(p, "bad path (relative, no . or .. or empty component, escaped)", NULL);
	}
	if (l->n_changes && strcmp(l->changes[l->n_changes - 1].path, c.path) >= 0) {
		free(c.path);
		return bad(p, "changes out of order or repeated", NULL);
	}
	n = realloc(l->changes, (l->n_changes + 1) * sizeof(*n));
	if (!n) {
		free(c.path);
		return cd_fail(p->err, ENOMEM, "layer", "out of memory");
	}
	l->changes = n;
	l->changes[l->n_changes++] = c;
	return 0;
}

/* Header line "KEY VALUE"; *seen: bit per key, each once. */
static int parse_header(struct parser *p, const char *s, const char *e, struct cd_layer *l,
			unsigned *seen)
{
	static const char *const keys[] = { "workdir", "workdir-id", "created", "saved",
					    "bytes",   "skipped",    "protect" };
	const char *k, *v, *v2;
	size_t kn, vn, vn2;
	uint64_t a, b;
	unsigned i;

	if (!word(&s, e, &k, &kn) || !word(&s, e, &v, &vn))
		return bad(p, "expected KEY VALUE", NULL);
	for (i = 0; i < CD_ELEMENTSOF(keys); i++)
		if (strlen(keys[i]) == kn && !memcmp(keys[i], k, kn))
			break;
	if (i == CD_ELEMENTSOF(keys))
		return bad(p, "unknown key", NULL);
	if (i != 6 && (*seen & (1u << i)))
		return bad(p, "repeated key ", keys[i]);
	*seen |= 1u << i;
	if (i == 1) {
		if (!word(&s, e, &v2, &vn2) || !parse_u64(v, vn, 10, &a) ||
		    !parse_u64(v2, vn2, 10, &b))
			return bad(p, "workdir-id needs DEV INO", NULL);
		l->workdir_dev = (dev_t)a;
		l->workdir_ino = (ino_t)b;
	} else if (i == 0 || i == 6) {
		_cleanup_free_ char *t = unescape(v, vn);

		if (!t || (i == 0 && t[0] != '/'))
			return bad(p, i == 0 ? "bad workdir" : "bad protect glob", NULL);
		if (i == 6 && cd_strv_push(&l->protect, t) < 0)
			return cd_fail(p->err, ENOMEM, "layer", "out of memory");
		if (i == 0)
			l->workdir = CD_TAKE_PTR(t);
	} else {
		if (!parse_u64(v, vn, 10, &a) || (i <= 3 && a > INT64_MAX))
			return bad(p, "bad number for ", keys[i]);
		if (i == 2)
			l->created = (int64_t)a;
		else if (i == 3)
			l->saved = (int64_t)a;
		else if (i == 4)
			l->bytes = a;
		else
			l->skipped = a;
	}
	return s == e ? 0 : bad(p, "trailing fields after ", keys[i]);
}

static int first_line(struct parser *p, const char *s, const char *e)
{
	if ((size_t)(e - s) == strlen(CD_MANIFEST_V2) && !memcmp(s, CD_MANIFEST_V2, (size_t)(e - s)))
		return 0;
	if ((size_t)(e - s) == strlen(CD_MANIFEST_V1) && !memcmp(s, CD_MANIFEST_V1, (size_t)(e - s)))
		return bad(p, "a manifest of format 1 (an earlier cordon's, without a MAC)", NULL);
	return bad(p, "not a cordon layer manifest of format 2", NULL);
}

bool cd_layer_manifest_is_v1(const char *buf, size_t len)
{
	size_t n = strlen(CD_MANIFEST_V1);

	return len > n && !memcmp(buf, CD_MANIFEST_V1, n) && buf[n] == '\n';
}

bool cd_layer_manifest_split_mac(const char *buf, size_t len, size_t *ret_body,
				 uint8_t ret_mac[32])
{
	const size_t line = 4 + 64 + 1; /* "mac " HEX "\n" */
	const char *l;

	if (len < line || (len > line && buf[len - line - 1] != '\n'))
		return false;
	l = buf + len - line;
	if (memcmp(l, "mac ", 4) || l[line - 1] != '\n' || !parse_hex32(l + 4, 64, ret_mac))
		return false;
	*ret_body = len - line;
	return true;
}

int cd_layer_manifest_parse(const char *buf, size_t len, struct cd_layer **ret,
			    struct cordon_error *err)
{
	_cleanup_(cd_layer_freep) struct cd_layer *l = calloc(1, sizeof(*l));
	struct parser p = { .line = 0, .err = err };
	const char *s = buf, *end = buf + len;
	bool in_changes = false;
	unsigned seen = 0;
	int r;

	if (!l)
		return cd_fail(err, ENOMEM, "layer", "out of memory");
	if (len && buf[len - 1] != '\n')
		return cd_fail(err, EBADMSG, "layer", "manifest: truncated (no final newline)");
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));

		p.line++;
		if (memchr(s, '\0', (size_t)(e - s)))
			return bad(&p, "a NUL byte", NULL);
		if (p.line == 1)
			r = first_line(&p, s, e);
		else if (in_changes)
			r = parse_change(&p, s, e, l);
		else if (e - s == 7 && !memcmp(s, "changes", 7))
			in_changes = true, r = 0;
		else
			r = parse_header(&p, s, e, l, &seen);
		if (r < 0)
			return r;
		s = e + 1;
	}
	if (!in_changes)
		return cd_fail(err, EBADMSG, "layer", "manifest: no \"changes\" line (truncated?)");
	if ((seen & 0x3f) != 0x3f)
		return cd_fail(err, EBADMSG, "layer", "manifest: a header line is missing");
	*ret = CD_TAKE_PTR(l);
	return 0;
}

void cd_layer_free(struct cd_layer *l)
{
	if (!l)
		return;
	for (size_t i = 0; l->changes && i < l->n_changes; i++)
		free(l->changes[i].path);
	free(l->changes);
	cd_strv_free(l->protect);
	free(l->workdir);
	free(l);
}

static int change_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cd_layer_change *)a)->path,
		      ((const struct cd_layer_change *)b)->path);
}

void cd_layer_sort(struct cd_layer_change *c, size_t n)
{
	if (n)
		qsort(c, n, sizeof(*c), change_cmp);
}

const struct cd_layer_change *cd_layer_find(const struct cd_layer *l, const char *path)
{
	struct cd_layer_change key = { .path = (char *)path };

	if (!l->n_changes)
		return NULL;
	return bsearch(&key, l->changes, l->n_changes, sizeof(key), change_cmp);
}

bool cd_layer_state_equal(const struct cd_layer_state *a, const struct cd_layer_state *b)
{
	if (a->type != b->type || a->mode != b->mode)
		return false;
	if (a->type != CD_LT_FILE && a->type != CD_LT_SYMLINK)
		return true;
	return a->size == b->size && !memcmp(a->sha256, b->sha256, sizeof(a->sha256));
}

const char *cd_layer_state_str(const struct cd_layer_state *s, char ret[96])
{
	static const char *const names[] = { ['f'] = "file", ['d'] = "directory",
					     ['l'] = "symlink", ['-'] = "nothing" };
	const char *name = (unsigned)s->type < CD_ELEMENTSOF(names) && names[s->type]
				   ? names[s->type]
				   : "something else";
	char hex[65];

	if (s->type == CD_LT_FILE || s->type == CD_LT_SYMLINK) {
		cd_sha256_hex(s->sha256, hex);
		snprintf(ret, 96, "%s %04o, %" PRIu64 " bytes, sha256 %.12s", name,
			 (unsigned)s->mode, s->size, hex);
	} else if (s->type == CD_LT_DIR)
		snprintf(ret, 96, "%s %04o", name, (unsigned)s->mode);
	else
		snprintf(ret, 96, "%s", name);
	return ret;
}
