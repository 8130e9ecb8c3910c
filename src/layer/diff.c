/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * diff.c - a stored layer's changes as a stat or a git-style patch (cd_layer_diff, layer.h).
 * Runs in the CLI's process (`cordon diff`), never in a sandbox.
 *
 * The old content is read from STORE/ID/base/, the new from STORE/ID/tree/. Both came out of a
 * sandbox: every open goes through openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) with
 * O_NOFOLLOW, so a symlink in them is content (read with readlinkat on an O_PATH descriptor),
 * never a way out; and every content read is checked against the manifest's size and SHA-256
 * before it is shown. At most two files are in memory at once (one change's two sides), each
 * of at most CD_DIFF_MAX_LOAD bytes: a bigger one (a sandbox's sparse file costs its tmpfs
 * nothing) is read through in pieces, checked the same way, and shown as binary.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "layer.h"
#include "manifest.h"
#include "patch.h"
#include "sha256.h"
#include "textdiff.h"
#include "util.h"

/* One line of the stat, one part of the patch: a change, or a rename (a D and an A). */
struct item {
	const struct cd_layer_change *from; /* its old side: the change itself, or a rename's D */
	const struct cd_layer_change *to;   /* its new side: the change itself, or a rename's A */
};

struct ctx {
	const struct cd_layer *l;
	int base_fd, tree_fd; /* -1: the layer has none (nothing to read there) */
	bool ids;             /* a file too big to hold gets its blob id (for the patch) */
};

/* Both sides of an item, read and checked. mode 0: that side has no file or symlink. */
struct sides {
	struct cd_patch_side old, new;
	char *old_buf, *new_buf;
	char old_id[41], new_id[41]; /* of a side too big to hold */
};

static void sides_free(struct sides *s)
{
	free(s->old_buf);
	free(s->new_buf);
}

/* A path for a message: bytes below 0x21, "\" and 0x7f and above as \ooo (the manifest's
 * form), cut at the buffer's end. */
static const char *esc(const char *path, char buf[256])
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)path; *p && n + 5 < 256; p++) {
		if (*p < 0x21 || *p == '\\' || *p >= 0x7f)
			n += (size_t)snprintf(buf + n, 256 - n, "\\%03o", *p);
		else
			buf[n++] = (char)*p;
	}
	buf[n] = '\0';
	return buf;
}

static int openat2_beneath(int dir, const char *path, uint64_t flags, mode_t mode)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC | O_NOFOLLOW,
		.mode = mode,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
}

static int open_part(int store_fd, const char *id, const char *part, int *ret,
		     struct cordon_error *err)
{
	char rel[CD_LAYER_ID_LEN + 16];
	int fd;

	snprintf(rel, sizeof(rel), "%s/%s", id, part);
	fd = openat2_beneath(store_fd, rel, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0 && errno != ENOENT)
		return cd_fail_errno(err, errno, "diff", "layer %s: open %s", id, part);
	*ret = fd;
	return 0;
}

static int mismatch(const struct ctx *x, const char *path, struct cordon_error *err)
{
	char b[256];

	return cd_fail(err, EBADMSG, "diff", "layer %s: %s: stored content does not match the manifest",
		       x->l->id, esc(path, b));
}

/* size bytes of fd, and nothing more (a file that grew or shrank since: a mismatch). */
static int read_exact(int fd, char *buf, size_t size)
{
	size_t got = 0;
	char extra;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EBADMSG;
		got += (size_t)n;
	}
	return read(fd, &extra, 1) == 0 ? 0 : -EBADMSG;
}

/* The content of fd, checked to be of st's type and size (not yet its hash): malloc'd, with a
 * NUL after it. The size is checked before anything is allocated for it. */
static int read_content(int fd, const struct cd_layer_state *st, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	struct stat s;
	ssize_t n;
	int r;

	if (fstat(fd, &s) < 0)
		return -errno;
	if (st->type == CD_LT_SYMLINK ? !S_ISLNK(s.st_mode) || st->size >= PATH_MAX
				      : !S_ISREG(s.st_mode) || (uint64_t)s.st_size != st->size)
		return -EBADMSG;
	buf = malloc(st->size + 1);
	if (!buf)
		return -ENOMEM;
	if (st->type == CD_LT_SYMLINK) {
		n = readlinkat(fd, "", buf, st->size + 1);
		r = n < 0 ? -errno : (uint64_t)n == st->size ? 0 : -EBADMSG;
	} else {
		r = read_exact(fd, buf, st->size);
	}
	if (r < 0)
		return r;
	buf[st->size] = '\0';
	*ret = CD_TAKE_PTR(buf);
	return 0;
}

/* A file too big to hold: read through once in pieces, checked against st (a regular file of
 * its size and SHA-256); git's blob id of it on the way to ret_id (or NULL). */
static int read_through(int fd, const struct cd_layer_state *st, char *ret_id)
{
	struct sha1_ctx blob;
	struct cd_sha256 h;
	uint64_t got = 0;
	uint8_t sum[32];
	char buf[65536];
	struct stat s;

	if (fstat(fd, &s) < 0)
		return -errno;
	if (!S_ISREG(s.st_mode) || (uint64_t)s.st_size != st->size)
		return -EBADMSG;
	cd_sha256_init(&h);
	if (ret_id)
		cd_patch_blob_begin(&blob, st->size);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (uint64_t)n;
		if (got > st->size)
			return -EBADMSG;
		cd_sha256_update(&h, buf, (size_t)n);
		if (ret_id)
			sha1_update(&blob, (size_t)n, (const uint8_t *)buf);
	}
	cd_sha256_final(&h, sum);
	if (got != st->size || memcmp(sum, st->sha256, sizeof(sum)) != 0)
		return -EBADMSG;
	if (ret_id)
		cd_patch_blob_end(&blob, ret_id);
	return 0;
}

/* A file or symlink of the layer (dir: base_fd or tree_fd) opened, as st's type wants. */
static int open_content(const struct ctx *x, int dir, const char *path,
			const struct cd_layer_state *st, struct cordon_error *err)
{
	char b[256];
	int fd;

	if (dir < 0)
		return mismatch(x, path, err);
	fd = openat2_beneath(dir, path,
			     st->type == CD_LT_SYMLINK ? O_PATH : O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
	if (fd < 0 && (errno == ELOOP || errno == ENOENT || errno == ENOTDIR || errno == EXDEV))
		return mismatch(x, path, err); /* a symlink on the way, or not there */
	if (fd < 0)
		return cd_fail_errno(err, errno, "diff", "layer %s: open %s", x->l->id, esc(path, b));
	return fd;
}

static int read_fail(const struct ctx *x, const char *path, int r, struct cordon_error *err)
{
	char b[256];

	if (r == -EBADMSG)
		return mismatch(x, path, err);
	return cd_fail_errno(err, -r, "diff", "layer %s: read %s", x->l->id, esc(path, b));
}

/* A file too big to hold, checked against st without holding it; its blob id to ret_id (or
 * NULL). */
static int check_big(const struct ctx *x, int dir, const char *path,
		     const struct cd_layer_state *st, char *ret_id, struct cordon_error *err)
{
	_cleanup_close_ int fd = open_content(x, dir, path, st, err);
	int r;

	if (fd < 0)
		return fd;
	r = read_through(fd, st, ret_id);
	return r < 0 ? read_fail(x, path, r, err) : 0;
}

/* The content of a file or symlink of the layer (dir: base_fd or tree_fd), checked against
 * st; malloc'd, NUL-terminated. */
static int load(const struct ctx *x, int dir, const char *path, const struct cd_layer_state *st,
		char **ret, struct cordon_error *err)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	uint8_t sum[32];
	struct cd_sha256 h;
	int r;

	fd = open_content(x, dir, path, st, err);
	if (fd < 0)
		return fd;
	r = read_content(fd, st, &buf);
	if (r < 0)
		return read_fail(x, path, r, err);
	cd_sha256_init(&h);
	cd_sha256_update(&h, buf, st->size);
	cd_sha256_final(&h, sum);
	if (memcmp(sum, st->sha256, sizeof(sum)) != 0)
		return mismatch(x, path, err);
	*ret = CD_TAKE_PTR(buf);
	return 0;
}

static mode_t git_mode(const struct cd_layer_state *st)
{
	return st->type == CD_LT_SYMLINK ? CD_GIT_MODE_SYMLINK : cd_patch_file_mode(st->mode);
}

static bool has_content(const struct cd_layer_state *st)
{
	return st->type == CD_LT_FILE || st->type == CD_LT_SYMLINK;
}

static int load_side(const struct ctx *x, int dir, const struct cd_layer_change *c,
		     const struct cd_layer_state *st, struct cd_patch_side *side, char **buf,
		     char id[41], struct cordon_error *err)
{
	int r;

	*side = (struct cd_patch_side){ .path = c->path, .data = "" };
	if (!has_content(st))
		return 0;
	if (st->type == CD_LT_FILE && st->size > CD_DIFF_MAX_LOAD) { /* never held: binary */
		side->mode = git_mode(st);
		side->data = NULL;
		side->len = st->size;
		side->id = x->ids ? id : NULL;
		return check_big(x, dir, c->path, st, x->ids ? id : NULL, err);
	}
	r = load(x, dir, c->path, st, buf, err);
	if (r < 0)
		return r;
	side->mode = git_mode(st);
	side->data = *buf;
	side->len = st->size;
	return 0;
}

static int load_item(const struct ctx *x, const struct item *it, struct sides *s,
		     struct cordon_error *err)
{
	int r;

	r = load_side(x, x->base_fd, it->from, &it->from->base, &s->old, &s->old_buf, s->old_id,
		      err);
	if (r < 0)
		return r;
	return load_side(x, x->tree_fd, it->to, &it->to->now, &s->new, &s->new_buf, s->new_id, err);
}

/* A file and a symlink at one path are two entries to git: a delete, then an add. */
static bool kinds_differ(const struct sides *s)
{
	return s->old.mode && s->new.mode &&
	       (s->old.mode == CD_GIT_MODE_SYMLINK) != (s->new.mode == CD_GIT_MODE_SYMLINK);
}

static int put_patch(FILE *out, const struct sides *s)
{
	static const struct cd_patch_side none = { .data = "" };
	int r;

	if (kinds_differ(s)) {
		r = cd_patch_file(out, &s->old, &none, NULL);
		return r < 0 ? r : cd_patch_file(out, &none, &s->new, NULL);
	}
	if (!s->old.mode && !s->new.mode)
		return 0; /* directories: git has none */
	return cd_patch_file(out, &s->old, &s->new, NULL);
}

/* "+"/"-" lines of the item; binary when either side has a NUL where git looks. */
static int count(const struct sides *s, struct cd_textdiff_count *c, bool *binary)
{
	struct cd_textdiff_count c2 = { 0 };
	int r;

	*c = (struct cd_textdiff_count){ 0 };
	*binary = !s->old.data || !s->new.data; /* too big to hold */
	if (*binary)
		return 0;
	*binary = cd_patch_is_binary(s->old.data, s->old.len) ||
		  cd_patch_is_binary(s->new.data, s->new.len);
	if (*binary)
		return 0;
	if (!kinds_differ(s))
		return cd_textdiff_hunks(s->old.data, s->old.len, s->new.data, s->new.len, NULL, c);
	r = cd_textdiff_hunks(s->old.data, s->old.len, "", 0, NULL, c);
	if (r == 0)
		r = cd_textdiff_hunks("", 0, s->new.data, s->new.len, NULL, &c2);
	c->added += c2.added;
	return r;
}

static unsigned full_mode(const struct cd_layer_state *st)
{
	switch (st->type) {
	case CD_LT_FILE:
		return 0100000 | (unsigned)st->mode;
	case CD_LT_DIR:
		return 040000 | (unsigned)st->mode;
	case CD_LT_SYMLINK:
		return 0120000;
	default:
		return 0;
	}
}

static const char *type_name(enum cd_layer_type t)
{
	return t == CD_LT_FILE ? "file" : t == CD_LT_DIR ? "directory" : "symlink";
}

static void put_path(FILE *out, const struct cd_layer_change *c, const struct cd_layer_state *st)
{
	cd_patch_put_name(out, "", c->path);
	if (st->type == CD_LT_DIR)
		fputc('/', out);
}

/* A path a protected glob covers: cordon apply refuses the layer, but the patch holds it, and
 * `git apply` would write it (an .envrc, a .vscode/tasks.json): said on its line. */
static bool protected(const struct cd_layer *l, const char *path)
{
	for (char **g = l->protect; g && *g; g++)
		if (cd_layer_protected(*g, path))
			return true;
	return false;
}

static void put_marks(FILE *out, const struct cd_layer *l, const struct item *it, bool binary)
{
	if (binary)
		fputs(" (binary)", out);
	if (it->from->base.type == CD_LT_SYMLINK || it->to->now.type == CD_LT_SYMLINK)
		fputs(" (symlink)", out);
	if (protected(l, it->from->path) || protected(l, it->to->path))
		fputs(" (protected: cordon apply refuses the layer)", out);
	fputc('\n', out);
}

/* A change of mode alone: same type, and the same content (a directory has none). */
static bool mode_only(const struct cd_layer_change *c)
{
	return c->base.type == c->now.type &&
	       (c->now.type == CD_LT_DIR ||
		(c->base.size == c->now.size && memcmp(c->base.sha256, c->now.sha256, 32) == 0));
}

static void put_modes(FILE *out, const struct cd_layer_state *a, const struct cd_layer_state *b)
{
	if (full_mode(a) != full_mode(b))
		fprintf(out, " (mode %06o -> %06o)", full_mode(a), full_mode(b));
}

static void put_stat_line(FILE *out, const struct cd_layer *l, const struct item *it, bool binary)
{
	const struct cd_layer_change *c = it->to;

	if (it->from != it->to) {
		fputs("R ", out);
		cd_patch_put_name(out, "", it->from->path);
		fputs(" -> ", out);
		cd_patch_put_name(out, "", it->to->path);
		put_modes(out, &it->from->base, &c->now);
	} else if (c->op == CD_LAYER_ADD || c->op == CD_LAYER_DELETE) {
		fprintf(out, "%c ", c->op);
		put_path(out, c, c->op == CD_LAYER_ADD ? &c->now : &c->base);
	} else if (mode_only(c)) {
		fprintf(out, "mode %06o -> %06o ", full_mode(&c->base), full_mode(&c->now));
		put_path(out, c, &c->now);
	} else {
		fputs("M ", out);
		put_path(out, c, &c->now);
		if (c->base.type != c->now.type)
			fprintf(out, " (%s -> %s)", type_name(c->base.type), type_name(c->now.type));
		else
			put_modes(out, &c->base, &c->now);
	}
	put_marks(out, l, it, binary);
}

struct totals {
	uint64_t files, added, removed;
};

static int put_stat_item(FILE *out, const struct ctx *x, const struct item *it, struct totals *t,
			 struct cordon_error *err)
{
	_cleanup_(sides_free) struct sides s = { 0 };
	struct cd_textdiff_count c;
	bool binary;
	char b[256];
	int r;

	r = load_item(x, it, &s, err);
	if (r < 0)
		return r;
	r = count(&s, &c, &binary);
	if (r < 0)
		return cd_fail(err, -r, "diff", "layer %s: %s: cannot diff", x->l->id,
			       esc(it->to->path, b));
	put_stat_line(out, x->l, it, binary);
	if (has_content(&it->from->base) || has_content(&it->to->now))
		t->files++;
	t->added += c.added;
	t->removed += c.removed;
	return 0;
}

static int put_stat(FILE *out, const struct ctx *x, const struct item *items, size_t n,
		    struct cordon_error *err)
{
	struct totals t = { 0 };
	int r;

	for (size_t i = 0; i < n; i++) {
		r = put_stat_item(out, x, &items[i], &t, err);
		if (r < 0)
			return r;
	}
	/* git's summary line; directories are listed above but git counts no directory */
	fprintf(out, "%ju file%s changed", (uintmax_t)t.files, t.files == 1 ? "" : "s");
	if (t.added || !t.removed)
		fprintf(out, ", %ju insertion%s(+)", (uintmax_t)t.added, t.added == 1 ? "" : "s");
	if (t.removed || !t.added)
		fprintf(out, ", %ju deletion%s(-)", (uintmax_t)t.removed, t.removed == 1 ? "" : "s");
	fputc('\n', out);
	return 0;
}

static int put_patches(FILE *out, const struct ctx *x, const struct item *items, size_t n,
		       struct cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_(sides_free) struct sides s = { 0 };
		char b[256];
		int r;

		r = load_item(x, &items[i], &s, err);
		if (r < 0)
			return r;
		r = put_patch(out, &s);
		if (r < 0)
			return cd_fail(err, -r, "diff", "layer %s: %s: cannot diff", x->l->id,
				       esc(items[i].to->path, b));
	}
	return 0;
}

/* Renames: a deleted file whose old content is exactly an added file's new content (the same
 * SHA-256; non-empty, as git pairs no empty files). Exact renames only: no similarity score,
 * a rename with edits stays a D and an A. One to one and deterministic: the deletions in the
 * manifest's order (by path) each take the first added file by path not yet taken. */
static bool rename_from(const struct cd_layer_change *c)
{
	return !cd_layer_git_path(c->path) && c->op == CD_LAYER_DELETE &&
	       c->base.type == CD_LT_FILE && c->base.size > 0;
}

static bool rename_to(const struct cd_layer_change *c)
{
	return !cd_layer_git_path(c->path) && c->op == CD_LAYER_ADD && c->now.type == CD_LT_FILE &&
	       c->now.size > 0;
}

static int cmp_add(const void *x, const void *y)
{
	const struct cd_layer_change *a = *(const struct cd_layer_change *const *)x;
	const struct cd_layer_change *b = *(const struct cd_layer_change *const *)y;
	int r = memcmp(a->now.sha256, b->now.sha256, 32);

	return r ? r : strcmp(a->path, b->path);
}

/* The first of adds[0..n) (sorted by content) with content sha, or n. */
static size_t lower_bound(const struct cd_layer_change **adds, size_t n, const uint8_t *sha)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memcmp(adds[mid]->now.sha256, sha, 32) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* partner[i]: the A that change i (a D) is renamed to; taken[i]: change i is such an A. */
static int pair_renames(const struct cd_layer *l, const struct cd_layer_change **partner,
			bool *taken)
{
	_cleanup_free_ const struct cd_layer_change **adds = calloc(l->n_changes + 1,
								      sizeof(*adds));
	_cleanup_free_ size_t *next = calloc(l->n_changes + 1, sizeof(*next));
	size_t na = 0;

	if (!adds || !next)
		return -ENOMEM;
	for (size_t i = 0; i < l->n_changes; i++)
		if (rename_to(&l->changes[i]))
			adds[na++] = &l->changes[i];
	qsort(adds, na, sizeof(*adds), cmp_add);
	for (size_t i = 0; i < na; i++)
		next[i] = i; /* for the first of each content: its first A not taken yet */
	for (size_t i = 0; i < l->n_changes; i++) {
		const struct cd_layer_change *d = &l->changes[i];
		size_t g, k;

		if (!rename_from(d))
			continue;
		g = lower_bound(adds, na, d->base.sha256);
		k = g < na ? next[g] : na;
		if (k >= na || memcmp(adds[k]->now.sha256, d->base.sha256, 32) != 0)
			continue;
		partner[i] = adds[k];
		taken[adds[k] - l->changes] = true;
		next[g] = k + 1;
	}
	return 0;
}

static int cmp_item(const void *x, const void *y)
{
	return strcmp(((const struct item *)x)->to->path, ((const struct item *)y)->to->path);
}

/* The items in the order shown: by path (a rename's new path). */
static int build_items(const struct cd_layer *l, struct item **ret, size_t *ret_n)
{
	_cleanup_free_ const struct cd_layer_change **partner = calloc(l->n_changes + 1,
									 sizeof(*partner));
	_cleanup_free_ bool *taken = calloc(l->n_changes + 1, sizeof(*taken));
	_cleanup_free_ struct item *items = calloc(l->n_changes + 1, sizeof(*items));
	size_t n = 0;
	int r;

	if (!partner || !taken || !items)
		return -ENOMEM;
	r = pair_renames(l, partner, taken);
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n_changes; i++) {
		if (taken[i] || cd_layer_git_path(l->changes[i].path))
			continue; /* git's state: its commits are listed instead (gitref.c) */
		items[n].from = &l->changes[i];
		items[n++].to = partner[i] ? partner[i] : &l->changes[i];
	}
	qsort(items, n, sizeof(*items), cmp_item);
	*ret = CD_TAKE_PTR(items);
	*ret_n = n;
	return 0;
}

static bool id_ok(const char *id)
{
	if (strlen(id) != CD_LAYER_ID_LEN)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

int cd_layer_diff(const struct cd_layer *l, int store_fd, unsigned flags, FILE *out,
		  struct cordon_error *err)
{
	_cleanup_free_ struct item *items = NULL;
	_cleanup_close_ int base_fd = -1, tree_fd = -1;
	struct ctx x = { .l = l };
	size_t n = 0;
	int r;

	if (flags == 0 || (flags & ~(unsigned)(CD_DIFF_STAT | CD_DIFF_PATCH)))
		return cd_fail(err, EINVAL, "diff", "unknown diff flags 0x%x", flags);
	if (!id_ok(l->id))
		return cd_fail(err, EINVAL, "diff", "\"%.40s\" is not a layer id", l->id);
	r = build_items(l, &items, &n);
	if (r < 0)
		return cd_fail(err, -r, "diff", "layer %s: out of memory", l->id);
	r = open_part(store_fd, l->id, "base", &base_fd, err);
	if (r == 0)
		r = open_part(store_fd, l->id, "tree", &tree_fd, err);
	if (r < 0)
		return r;
	x.base_fd = base_fd;
	x.tree_fd = tree_fd;
	if (flags & CD_DIFF_STAT)
		r = put_stat(out, &x, items, n, err);
	if (r == 0 && flags == (CD_DIFF_STAT | CD_DIFF_PATCH))
		fputc('\n', out);
	x.ids = true;
	if (r == 0 && (flags & CD_DIFF_PATCH))
		r = put_patches(out, &x, items, n, err);
	if (r < 0)
		return r;
	if (fflush(out) != 0 || ferror(out))
		return cd_fail_errno(err, errno ? errno : EIO, "diff", "layer %s: write the diff",
				     l->id);
	return 0;
}
