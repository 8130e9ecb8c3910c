/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * patch.c - one file's part of a git-style patch (patch.h). Runs in the CLI's process (`cordon
 * diff`); pure. The form is git's own (diff.c: builtin_diff, fill_metainfo, emit_binary_diff;
 * quote.c: quote_c_style; base85.c), so that `git apply` takes it: git needs the full 40-digit
 * blob ids to apply a binary patch, and checks the old content against them.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <nettle/sha1.h>

#include "libz.h"
#include "patch.h"
#include "util.h"

#define NULL_ID "0000000000000000000000000000000000000000"
#define B85_LINE 52 /* bytes of deflated data on one line of a binary patch */

mode_t cd_patch_file_mode(mode_t perm)
{
	return (perm & 0100) ? CD_GIT_MODE_EXEC : CD_GIT_MODE_FILE;
}

void cd_patch_blob_begin(struct sha1_ctx *ctx, uint64_t len)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "blob %llu", (unsigned long long)len);

	sha1_init(ctx);
	sha1_update(ctx, (size_t)n + 1, (const uint8_t *)head); /* with its NUL */
}

void cd_patch_blob_end(struct sha1_ctx *ctx, char ret[41])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t d[SHA1_DIGEST_SIZE];

	sha1_digest(ctx, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++) {
		ret[2 * i] = hex[d[i] >> 4];
		ret[2 * i + 1] = hex[d[i] & 15];
	}
	ret[40] = '\0';
}

void cd_patch_blob_id(const void *data, size_t len, char ret[41])
{
	struct sha1_ctx ctx;

	cd_patch_blob_begin(&ctx, len);
	sha1_update(&ctx, len, data);
	cd_patch_blob_end(&ctx, ret);
}

bool cd_patch_is_binary(const void *data, size_t len)
{
	return memchr(data, '\0', len < 8000 ? len : 8000) != NULL;
}

static bool needs_quote(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f;
}

static void put_quoted_byte(FILE *out, unsigned char c)
{
	static const char esc[] = { [7] = 'a', [8] = 'b', [9] = 't', [10] = 'n',
				    [11] = 'v', [12] = 'f', [13] = 'r' };

	if (c == '"' || c == '\\')
		fprintf(out, "\\%c", c);
	else if (c < sizeof(esc) && esc[c])
		fprintf(out, "\\%c", esc[c]);
	else if (needs_quote(c))
		fprintf(out, "\\%03o", c);
	else
		fputc(c, out);
}

void cd_patch_put_name(FILE *out, const char *prefix, const char *path)
{
	bool quote = false;

	for (const char *p = prefix; *p && !quote; p++)
		quote = needs_quote((unsigned char)*p);
	for (const char *p = path; *p && !quote; p++)
		quote = needs_quote((unsigned char)*p);
	if (!quote) {
		fprintf(out, "%s%s", prefix, path);
		return;
	}
	fputc('"', out);
	for (const char *p = prefix; *p; p++)
		put_quoted_byte(out, (unsigned char)*p);
	for (const char *p = path; *p; p++)
		put_quoted_byte(out, (unsigned char)*p);
	fputc('"', out);
}

/* A line of a binary patch: its length (A-Z 1-26, a-z 27-52), then base85 of it, 4 bytes
 * (big-endian, the last group padded with zeros) to 5 characters. */
static void put_b85_line(FILE *out, const uint8_t *p, size_t n)
{
	static const char b85[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				  "!#$%&()*+-;<=>?@^_`{|}~";

	fputc(n <= 26 ? (int)('A' + n - 1) : (int)('a' + n - 27), out);
	for (size_t i = 0; i < n; i += 4) {
		uint32_t acc = 0;
		char five[5];

		for (size_t k = 0; k < 4; k++)
			acc = acc << 8 | (i + k < n ? p[i + k] : 0);
		for (int k = 4; k >= 0; k--) {
			five[k] = b85[acc % 85];
			acc /= 85;
		}
		fwrite(five, 1, sizeof(five), out);
	}
	fputc('\n', out);
}

/* Deflated bytes into lines of 52; the rest stays in line/fill for the next call. */
static void put_deflated(FILE *out, const uint8_t *p, size_t n, uint8_t line[B85_LINE],
			 size_t *fill)
{
	while (n > 0) {
		size_t k = B85_LINE - *fill < n ? B85_LINE - *fill : n;

		memcpy(line + *fill, p, k);
		*fill += k;
		p += k;
		n -= k;
		if (*fill == B85_LINE) {
			put_b85_line(out, line, B85_LINE);
			*fill = 0;
		}
	}
}

static int put_literal(FILE *out, const uint8_t *data, size_t len)
{
	const struct cd_zlib *zl = cd_zlib(&(struct cordon_error){ 0 });
	z_stream z = { 0 };
	uint8_t buf[B85_LINE * 80], line[B85_LINE];
	size_t fill = 0;
	int r = Z_OK;

	if (!zl)
		return -ELIBACC;
	if (zl->deflate_init_(&z, Z_DEFAULT_COMPRESSION, ZLIB_VERSION, (int)sizeof(z)) != Z_OK)
		return -ENOMEM;
	fprintf(out, "literal %zu\n", len);
	z.next_in = (uint8_t *)data;
	while (r != Z_STREAM_END) {
		if (z.avail_in == 0 && len > 0) { /* avail_in is an unsigned int */
			z.avail_in = len < (1u << 30) ? (unsigned)len : 1u << 30;
			len -= z.avail_in;
		}
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		r = zl->deflate(&z, len == 0 ? Z_FINISH : Z_NO_FLUSH);
		if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
			zl->deflate_end(&z);
			return -ENOMEM;
		}
		put_deflated(out, buf, sizeof(buf) - z.avail_out, line, &fill);
	}
	zl->deflate_end(&z);
	if (fill > 0)
		put_b85_line(out, line, fill);
	fputc('\n', out);
	return 0;
}

int cd_patch_binary(FILE *out, const void *old, size_t old_len, const void *new, size_t new_len)
{
	int r;

	fputs("GIT binary patch\n", out);
	r = put_literal(out, new, new_len);
	if (r < 0)
		return r;
	return put_literal(out, old, old_len);
}

/* "--- a/P" or "--- /dev/null": git ends a label that has a space with a tab (for GNU patch). */
static void put_label(FILE *out, const char *what, const char *prefix,
		      const struct cd_patch_side *s)
{
	fputs(what, out);
	if (s->mode == 0) {
		fputs("/dev/null\n", out);
		return;
	}
	cd_patch_put_name(out, prefix, s->path);
	fputs(strchr(s->path, ' ') || strchr(prefix, ' ') ? "\t\n" : "\n", out);
}

static void put_header(FILE *out, const struct cd_patch_side *old, const struct cd_patch_side *new)
{
	const char *a = old->mode ? old->path : new->path, *b = new->mode ? new->path : old->path;

	fputs("diff --git ", out);
	cd_patch_put_name(out, "a/", a);
	fputc(' ', out);
	cd_patch_put_name(out, "b/", b);
	fputc('\n', out);
	if (old->mode == 0) {
		fprintf(out, "new file mode %06o\n", (unsigned)new->mode);
	} else if (new->mode == 0) {
		fprintf(out, "deleted file mode %06o\n", (unsigned)old->mode);
	} else if (old->mode != new->mode) {
		fprintf(out, "old mode %06o\n", (unsigned)old->mode);
		fprintf(out, "new mode %06o\n", (unsigned)new->mode);
	}
	if (strcmp(a, b) != 0) {
		fputs("similarity index 100%\nrename from ", out);
		cd_patch_put_name(out, "", a);
		fputs("\nrename to ", out);
		cd_patch_put_name(out, "", b);
		fputc('\n', out);
	}
}

/* "a/P" or "/dev/null", as git names a side of binary files that differ */
static void put_side_name(FILE *out, const char *prefix, const struct cd_patch_side *s)
{
	if (s->mode)
		cd_patch_put_name(out, prefix, s->path);
	else
		fputs("/dev/null", out);
}

static int put_content(FILE *out, const struct cd_patch_side *old, const struct cd_patch_side *new,
		       const char *old_id, const char *new_id, struct cd_textdiff_count *count)
{
	fprintf(out, "index %s..%s", old_id, new_id);
	if (old->mode && old->mode == new->mode)
		fprintf(out, " %06o", (unsigned)old->mode);
	fputc('\n', out);
	if (!old->data || !new->data) { /* too big to hold */
		fputs("Binary files ", out);
		put_side_name(out, "a/", old);
		fputs(" and ", out);
		put_side_name(out, "b/", new);
		fputs(" differ\n", out);
		return 0;
	}
	if (cd_patch_is_binary(old->data, old->len) || cd_patch_is_binary(new->data, new->len))
		return cd_patch_binary(out, old->data, old->len, new->data, new->len);
	if (old->len == 0 && new->len == 0)
		return 0; /* an empty file added or deleted: the header says it all */
	put_label(out, "--- ", "a/", old);
	put_label(out, "+++ ", "b/", new);
	return cd_textdiff_hunks(old->data, old->len, new->data, new->len, out, count);
}

int cd_patch_file(FILE *out, const struct cd_patch_side *old, const struct cd_patch_side *new,
		  struct cd_textdiff_count *ret_count)
{
	static const struct cd_patch_side none = { .data = "" };
	const struct cd_patch_side *o = old->mode ? old : &none, *n = new->mode ? new : &none;
	struct cd_textdiff_count count = { 0 };
	char old_id[41] = NULL_ID, new_id[41] = NULL_ID;
	bool rename = old->mode && new->mode && strcmp(old->path, new->path) != 0;
	int r = 0;

	if (old->mode == 0 && new->mode == 0)
		return -EINVAL;
	if ((old->mode && !old->data && !old->id) || (new->mode && !new->data && !new->id))
		return -EINVAL;
	if (old->mode && old->id)
		memcpy(old_id, old->id, sizeof(old_id));
	else if (old->mode)
		cd_patch_blob_id(old->data, old->len, old_id);
	if (new->mode && new->id)
		memcpy(new_id, new->id, sizeof(new_id));
	else if (new->mode)
		cd_patch_blob_id(new->data, new->len, new_id);
	if (rename && strcmp(old_id, new_id) != 0)
		return -EINVAL; /* exact renames only */
	if (!rename && old->mode == new->mode && strcmp(old_id, new_id) == 0)
		goto done; /* nothing git would see */
	put_header(out, old, new);
	if (strcmp(old_id, new_id) != 0)
		r = put_content(out, o, n, old_id, new_id, &count);
	if (r < 0)
		return r;
done:
	if (ret_count)
		*ret_count = count;
	return 0;
}
