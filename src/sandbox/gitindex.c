/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitindex.c - a git index's gitlinks (gitindex.h): a reader of git's index format, pure. Runs
 * in the supervisor, when a run's protected paths are planned and after a direct run
 * (protect_git.c), and when a --cow run's layer is saved (protect_run.c). The index is the
 * sandbox's to write: every length is checked against the file. It is read through a window of
 * 64 KiB: a buffer the size of a large index (megabytes) costs a fresh process its page faults
 * at every run, the window a fraction of them (bench/startup.md, "A large git index").
 *
 * It reads as git's read-cache.c does (do_read_index, create_from_disk), over the file as git
 * maps it (zeros after its end, to its last page's: gitindex.h): an entry's size from
 * its name's length in the flags (0xfff: up to its NUL), padded to 8 bytes before version 4;
 * version 4's names made from the previous one (git's varint, its overflow included: then the
 * varint's bytes are read as the name); a name git's copy does not end with a NUL (it copies
 * the byte after the name as the name's end: another byte leaves its string unterminated, and
 * what git then reads is the heap's) is refused; the extended flags (bits git does not know: it
 * dies);
 * the extensions after the entries, while 8 bytes and the checksum are left (an unknown one not
 * named 'A'..'Z' is refused, as git refuses it). git with index.threads reads the entries by the
 * blocks of an offset table found through the end-of-index-entries extension instead, each block
 * starting from an empty name: that reading is taken too, without the hash git checks first
 * (more paths, never fewer).
 */
#include <limits.h>
#include <string.h>

#include "gitindex.h"
#include "util.h"

#define CE_NAMEMASK       0x0fff
#define CE_EXTENDED       0x4000
#define CE_EXTENDED_FLAGS 0x6000 /* of the second 16 bits: skip-worktree, intent-to-add */
#define MODE_TYPE         0170000
#define MODE_GITLINK      0160000
#define MODE_DIR          0040000
#define HEADER            12
#define WINDOW            (64u << 10)
#define NAME_MAX_LEN      (1u << 20)
/* What the paths kept of one index may take, pointers included: version 4's names are made from
 * the previous one, so that N entries of a few bytes each can name N paths of up to PATH_MAX:
 * read in the supervisor, outside the sandbox's limits, they would cost it N * PATH_MAX */
#define PATHS_MAX_BYTES   (64u << 20)

struct rd {
	const struct cd_gitindex_src *src;
	uint64_t len, lim; /* the file's size; what git can read of it: to its last page's end */
	size_t h;          /* the hash's size */
	unsigned flags;
	struct cd_gitindex *x;
	size_t cap, dirs_cap;
	uint8_t *w;        /* the window: bytes [w_off, w_off + w_n) of the file as git maps it */
	size_t w_cap, w_n;
	uint64_t w_off;
	int ioerr;         /* the source's error */
	uint8_t *prev;     /* version 4: the previous entry's name, as git keeps it (len bytes) */
	size_t prev_len, prev_cap;
	size_t kept;       /* the bytes of the paths pushed, pointers included */
};

struct exts {
	bool link, ieot;
	uint8_t hash[32];
	uint64_t ieot_off;
	uint32_t ieot_len;
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Fill the window from off with want bytes: the file's, then zeros to the page's end */
static int fill(struct rd *r, uint64_t off, size_t want)
{
	size_t got = 0;

	if (want > r->w_cap) {
		uint8_t *w = realloc(r->w, want);

		if (!w)
			return -ENOMEM;
		r->w = w;
		r->w_cap = want;
	}
	while (off + got < r->len && got < want) {
		uint64_t left = r->len - off - got;
		size_t n = left < want - got ? (size_t)left : want - got;
		ssize_t k = r->src->pread(r->src->ctx, r->w + got, n, off + got);

		if (k <= 0)
			return k < 0 ? (int)k : -EIO; /* shorter than it said */
		got += (size_t)k;
	}
	memset(r->w + got, 0, want - got);
	r->w_off = off;
	r->w_n = want;
	return 0;
}

/* n bytes at off as git reads them: a pointer valid until the next call; NULL past what git can
 * read (or on a read error: r->ioerr) */
static const uint8_t *at(struct rd *r, uint64_t off, size_t n)
{
	size_t want = n > WINDOW ? n : WINDOW;
	int k;

	if (off > r->lim || n > r->lim - off)
		return NULL;
	if (off >= r->w_off && off + n <= r->w_off + r->w_n)
		return r->w + (off - r->w_off);
	if (want > r->lim - off)
		want = (size_t)(r->lim - off);
	k = fill(r, off, want);
	if (k < 0) {
		r->ioerr = k;
		return NULL;
	}
	return r->w;
}

/* -EINVAL, or the source's error that made at() fail */
static int bad(const struct rd *r)
{
	return r->ioerr ? r->ioerr : -EINVAL;
}

/* A path, as git's lstat() sees the name: up to its first NUL; an empty one is no path. -EINVAL
 * past PATHS_MAX_BYTES in all (no index git writes comes near it: 100,000 paths take 7 MiB). */
static int push(struct rd *r, char ***v, size_t *n, size_t *cap, const uint8_t *name, size_t len)
{
	if (!len || !name[0])
		return 0;
	r->kept += strnlen((const char *)name, len) + 1 + sizeof(char *);
	if (r->kept > PATHS_MAX_BYTES)
		return -EINVAL;
	if (*n + 2 > *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		char **nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[*n] = strndup((const char *)name, len);
	if (!(*v)[*n])
		return -ENOMEM;
	(*v)[++*n] = NULL;
	return 0;
}

/* git's decode_varint(): on overflow 0, and *pos left where it was */
static int varint(struct rd *r, uint64_t *pos, uint64_t *ret)
{
	uint64_t p = *pos, v;
	const uint8_t *c = at(r, p++, 1);

	if (!c)
		return bad(r);
	v = *c & 127;
	while (*c & 128) {
		v += 1;
		if (!v || (v & ~(UINT64_MAX >> 7))) {
			*ret = 0;
			return 0;
		}
		c = at(r, p++, 1);
		if (!c)
			return bad(r);
		v = (v << 7) + (*c & 127);
	}
	*pos = p;
	*ret = v;
	return 0;
}

/* The length up to the first NUL from off (git's strlen() of a 0xfff name) */
static int name_len(struct rd *r, uint64_t off, size_t *ret)
{
	for (size_t n = 0; n < NAME_MAX_LEN; n += 4096) {
		size_t chunk = r->lim - off - n < 4096 ? (size_t)(r->lim - off - n) : 4096;
		const uint8_t *p = chunk ? at(r, off + n, chunk) : NULL, *nul;

		if (!p)
			return bad(r);
		nul = memchr(p, 0, chunk);
		if (nul) {
			*ret = n + (size_t)(nul - p);
			return 0;
		}
	}
	return -EINVAL;
}

/* Version 4: the name is the previous one's first copy bytes and suffix bytes of the entry's
 * (git copies one byte more, the suffix's end); it becomes the previous one */
static int v4_name(struct rd *r, const uint8_t *suffix, size_t copy, size_t len)
{
	if (len + 1 > r->prev_cap) {
		uint8_t *p = realloc(r->prev, len + 1);

		if (!p)
			return -ENOMEM;
		r->prev = p;
		r->prev_cap = len + 1;
	}
	memcpy(r->prev + copy, suffix, len - copy);
	r->prev_len = len;
	return 0;
}

/* The entry at off's name (a pointer valid until the next at(), or r->prev for version 4),
 * its length as git counts it, and its size in the file. first: the first of a block (no
 * previous name). */
static int entry_name(struct rd *r, uint64_t off, size_t nameoff, uint16_t fl, bool first,
		      const uint8_t **ret_name, size_t *ret_len, uint64_t *ret_size)
{
	size_t len = fl & CE_NAMEMASK, copy = 0;
	const uint8_t *name;
	int k;

	if (r->x->version == 4) {
		uint64_t p = off + nameoff, strip = 0;

		k = varint(r, &p, &strip);
		if (k < 0)
			return k;
		if (!first && r->prev_len < strip)
			return -EINVAL; /* git dies: "malformed name field" */
		copy = first ? 0 : r->prev_len - (size_t)strip;
		nameoff = (size_t)(p - off);
	}
	if (len == CE_NAMEMASK) {
		k = name_len(r, off + nameoff, &len);
		if (k < 0)
			return k;
		len += copy;
	}
	if (len >= PATH_MAX)
		return -EINVAL; /* no path git can lstat(); version 4's would grow without end */
	if (r->x->version != 4) {
		*ret_size = (nameoff + len + 8) & ~(size_t)7;
		name = at(r, off, (size_t)*ret_size);
		if (!name)
			return bad(r);
		name += nameoff;
		if (name[len])
			return -EINVAL; /* git's name would not end */
		*ret_name = name;
		*ret_len = len;
		return 0;
	}
	if (len < copy)
		return -EINVAL; /* git's copy of len + 1 - copy bytes would wrap */
	name = at(r, off + nameoff, len - copy + 1);
	if (!name)
		return bad(r);
	if (name[len - copy])
		return -EINVAL;
	*ret_size = nameoff + len - copy + 1;
	if (v4_name(r, name, copy, len) < 0)
		return -ENOMEM;
	*ret_name = r->prev;
	*ret_len = len;
	return 0;
}

/* One entry at off: its mode, flags and name; *ret_size: what it takes in the file */
static int entry(struct rd *r, uint64_t off, bool first, uint64_t *ret_size)
{
	size_t fixed = 40 + r->h, nameoff = fixed + 2, len = 0;
	const uint8_t *e = at(r, off, nameoff), *name = NULL;
	uint32_t mode;
	uint16_t fl;
	int k;

	if (!e)
		return bad(r);
	mode = be32(e + 24);
	fl = be16(e + fixed);
	if (fl & CE_EXTENDED) {
		e = at(r, off, nameoff + 2);
		if (!e)
			return bad(r);
		if (be16(e + nameoff) & ~CE_EXTENDED_FLAGS)
			return -EINVAL; /* git dies: "unknown index entry format" */
		nameoff += 2;
	}
	k = entry_name(r, off, nameoff, fl, first, &name, &len, ret_size);
	if (k < 0)
		return k;
	if ((mode & MODE_TYPE) == MODE_DIR) {
		r->x->sparse = true;
		k = push(r, &r->x->dirs, &r->x->n_dirs, &r->dirs_cap, name, len);
		if (k < 0)
			return k;
	}
	if ((mode & MODE_TYPE) == MODE_GITLINK && len == 0)
		r->x->nameless = true;
	if ((mode & MODE_TYPE) == MODE_GITLINK || (r->flags & CD_GITINDEX_ALL))
		return push(r, &r->x->paths, &r->x->n, &r->cap, name, len);
	return 0;
}

/* count entries from off, the first with no previous name; *ret_end: where they end */
static int entries(struct rd *r, uint64_t off, uint32_t count, uint64_t *ret_end)
{
	for (uint32_t i = 0; i < count; i++) {
		uint64_t size;
		int k = entry(r, off, i == 0, &size);

		if (k < 0)
			return k;
		off += size;
	}
	*ret_end = off;
	return 0;
}

/* The extensions from off on, as far as git reads them (8 bytes and the checksum left). One that
 * runs past the end ends them (git skips its size), unless its content is read here. */
static int extensions(struct rd *r, uint64_t off, struct exts *e)
{
	while (r->len >= r->h + 8 && off <= r->len - r->h - 8) {
		const uint8_t *s = at(r, off, 8);
		uint32_t sz;
		bool within;
		char sig[4];

		if (!s)
			return bad(r);
		memcpy(sig, s, 4);
		sz = be32(s + 4);
		within = sz <= r->len - off - 8;
		if (memcmp(sig, "link", 4) == 0) {
			if (sz < r->h || !within || !(s = at(r, off + 8, r->h)))
				return bad(r); /* git: "corrupt link extension (too short)" */
			e->link = true;
			memcpy(e->hash, s, r->h);
		} else if (memcmp(sig, "IEOT", 4) == 0) {
			if (!within)
				return -EINVAL;
			if (!e->ieot) { /* git takes the first */
				e->ieot_off = off + 8;
				e->ieot_len = sz;
			}
			e->ieot = true;
		} else if (memcmp(sig, "sdir", 4) != 0 && (sig[0] < 'A' || sig[0] > 'Z')) {
			return -EINVAL; /* git: "index uses ... extension, which we do not
					 * understand" */
		}
		if (!within)
			break;
		off += 8 + (uint64_t)sz;
	}
	return 0;
}

/* The offset an end-of-index-entries extension names, if it stands where git looks for it and
 * the extensions from there lead back to it (git also checks a hash of their headers: not here,
 * so this finds one where git might not, and reads more). 0: none (or *err). */
static uint64_t eoie(struct rd *r, int *err)
{
	uint64_t with = 12 + r->h, pos, off, o;
	const uint8_t *p;

	if (r->len < HEADER + with + r->h)
		return 0;
	pos = r->len - with - r->h;
	p = at(r, pos, (size_t)with);
	if (!p) {
		*err = bad(r);
		return 0;
	}
	if (memcmp(p, "EOIE", 4) != 0 || be32(p + 4) != 4 + r->h)
		return 0;
	off = be32(p + 8);
	if (off < HEADER || off >= pos)
		return 0;
	for (o = off; o < pos; o += 8 + (uint64_t)be32(p + 4)) {
		p = at(r, o, 8);
		if (!p) {
			*err = bad(r);
			return 0;
		}
	}
	return o == pos ? off : 0;
}

/* git with index.threads: the entries by IEOT's blocks (a table git does not take: none). The
 * blocks hold the index's entries, count of them: more would have git write past its table,
 * and have this read the file again and again. */
static int ieot_blocks(struct rd *r, const struct exts *e, uint32_t count)
{
	const uint8_t *t = at(r, e->ieot_off, 4);
	uint64_t total = 0;

	if (!t)
		return bad(r);
	if (e->ieot_len < 4 || be32(t) != 1 || (e->ieot_len - 4) % 8 || e->ieot_len == 4)
		return 0;
	for (uint32_t i = 4; i < e->ieot_len; i += 8) {
		uint64_t end, off;
		uint32_t n;
		int k;

		t = at(r, e->ieot_off + i, 8);
		if (!t)
			return bad(r);
		off = be32(t);
		n = be32(t + 4);
		total += n;
		if (total > count)
			return -EINVAL;
		k = entries(r, off, n, &end);
		if (k < 0)
			return k;
	}
	return 0;
}

/* The link extensions of both readings: the same shared index, or none */
static int shared_of(struct cd_gitindex *x, const struct exts *a, const struct exts *b, size_t h)
{
	static const uint8_t zero[32];

	if (a->link && b->link && memcmp(a->hash, b->hash, h) != 0)
		return -EINVAL;
	if (b->link)
		a = b;
	if (!a->link || memcmp(a->hash, zero, h) == 0)
		return 0; /* "If all bits are zero, the index does not require a shared index" */
	x->split = true;
	memcpy(x->shared, a->hash, h);
	return 0;
}

static int parse(struct rd *r)
{
	struct exts seq = { 0 }, thr = { 0 };
	const uint8_t *hdr = r->len >= HEADER + r->h ? at(r, 0, HEADER) : NULL;
	uint64_t end, off;
	uint32_t count;
	int k = 0;

	if (!hdr || memcmp(hdr, "DIRC", 4) != 0)
		return hdr ? -EINVAL : bad(r);
	r->x->version = be32(hdr + 4);
	count = be32(hdr + 8);
	if (r->x->version < 2 || r->x->version > 4)
		return -EINVAL;
	k = entries(r, HEADER, count, &end);
	if (k >= 0)
		k = extensions(r, end, &seq);
	off = k >= 0 ? eoie(r, &k) : 0;
	if (off) {
		k = extensions(r, off, &thr);
		if (k >= 0 && thr.ieot)
			k = ieot_blocks(r, &thr, count);
	}
	return k < 0 ? k : shared_of(r->x, &seq, &thr, r->h);
}

int cd_gitindex_read(const struct cd_gitindex_src *src, size_t hash_len, unsigned flags,
		     struct cd_gitindex *ret)
{
	struct cd_gitindex x = { 0 };
	struct rd r = { .src = src, .len = src->len, .h = hash_len, .flags = flags, .x = &x,
			.w_off = UINT64_MAX };
	int k;

	if (hash_len != 20 && hash_len != 32)
		return -EINVAL;
	r.lim = (src->len + CD_GITINDEX_PAGE - 1) / CD_GITINDEX_PAGE * CD_GITINDEX_PAGE;
	k = parse(&r);
	free(r.prev);
	free(r.w);
	if (k < 0) {
		cd_gitindex_done(&x);
		return k;
	}
	*ret = x;
	return 0;
}

struct membuf {
	const uint8_t *b;
	size_t len;
};

static ssize_t mem_pread(void *ctx, void *buf, size_t n, uint64_t off)
{
	const struct membuf *m = ctx;

	if (off >= m->len)
		return 0;
	if (n > m->len - off)
		n = (size_t)(m->len - off);
	memcpy(buf, m->b + off, n);
	return (ssize_t)n;
}

int cd_gitindex_parse(const void *buf, size_t len, size_t hash_len, unsigned flags,
		      struct cd_gitindex *ret)
{
	struct membuf m = { buf, len };
	const struct cd_gitindex_src src = { mem_pread, &m, len };

	return cd_gitindex_read(&src, hash_len, flags, ret);
}

void cd_gitindex_done(struct cd_gitindex *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->paths[i]);
	free(x->paths);
	for (size_t i = 0; i < x->n_dirs; i++)
		free(x->dirs[i]);
	free(x->dirs);
	*x = (struct cd_gitindex){ 0 };
}

void cd_gitindex_shared_name(const struct cd_gitindex *x, size_t hash_len, char ret[80])
{
	int n = snprintf(ret, 80, "sharedindex.");

	for (size_t i = 0; i < hash_len && i < sizeof(x->shared); i++)
		n += snprintf(ret + n, (size_t)(80 - n), "%02x", x->shared[i]);
}
