/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.c - JSON writer (json.h). Pure. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "utf8.h"

static void put(struct cd_json *j, const char *s, size_t n)
{
	if (j->oom)
		return;
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : 256;
		char *nb;

		while (j->len + n + 1 > cap)
			cap *= 2;
		nb = realloc(j->buf, cap);
		if (!nb) {
			j->oom = true;
			return;
		}
		j->buf = nb;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void puts_(struct cd_json *j, const char *s)
{
	put(j, s, strlen(s));
}

/* The comma before a value or key, unless it follows a key. */
static void sep(struct cd_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > CD_JSON_MAX_DEPTH) {
		j->oom = true; /* deeper than the writer supports: fail the whole text */
		return;
	}
	if (j->depth > 0) {
		if (!j->first[j->depth - 1])
			put(j, ",", 1);
		j->first[j->depth - 1] = false;
	}
}

static void open_(struct cd_json *j, const char *c)
{
	sep(j);
	puts_(j, c);
	if (j->depth < CD_JSON_MAX_DEPTH)
		j->first[j->depth] = true;
	j->depth++;
}

static void close_(struct cd_json *j, const char *c)
{
	if (j->depth > 0)
		j->depth--;
	puts_(j, c);
}

void cd_json_object_begin(struct cd_json *j)
{
	open_(j, "{");
}

void cd_json_object_end(struct cd_json *j)
{
	close_(j, "}");
}

void cd_json_array_begin(struct cd_json *j)
{
	open_(j, "[");
}

void cd_json_array_end(struct cd_json *j)
{
	close_(j, "]");
}

void cd_json_string_len(struct cd_json *j, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	sep(j);
	put(j, "\"", 1);
	for (size_t i = 0; i < n;) {
		char esc[8];
		size_t len = cd_utf8_seq_len(p + i, n - i);

		if (len == 1 && p[i] >= 0x20 && p[i] != '"' && p[i] != '\\') {
			put(j, (const char *)p + i, 1);
		} else if (len > 1) {
			put(j, (const char *)p + i, len);
			i += len;
			continue;
		} else if (p[i] == '"' || p[i] == '\\') {
			esc[0] = '\\', esc[1] = (char)p[i];
			put(j, esc, 2);
		} else if (p[i] == '\n') {
			puts_(j, "\\n");
		} else if (p[i] == '\t') {
			puts_(j, "\\t");
		} else if (p[i] == '\r') {
			puts_(j, "\\r");
		} else {
			snprintf(esc, sizeof(esc), "\\u%04x", p[i]);
			put(j, esc, 6);
		}
		i++;
	}
	put(j, "\"", 1);
}

void cd_json_string(struct cd_json *j, const char *s)
{
	if (!s)
		cd_json_null(j);
	else
		cd_json_string_len(j, s, strlen(s));
}

void cd_json_key(struct cd_json *j, const char *key)
{
	cd_json_string(j, key);
	put(j, ":", 1);
	j->after_key = true;
}

void cd_json_int(struct cd_json *j, int64_t v)
{
	char b[32];

	sep(j);
	snprintf(b, sizeof(b), "%" PRId64, v);
	puts_(j, b);
}

void cd_json_uint(struct cd_json *j, uint64_t v)
{
	char b[32];

	sep(j);
	snprintf(b, sizeof(b), "%" PRIu64, v);
	puts_(j, b);
}

void cd_json_bool(struct cd_json *j, bool v)
{
	sep(j);
	puts_(j, v ? "true" : "false");
}

void cd_json_null(struct cd_json *j)
{
	sep(j);
	puts_(j, "null");
}

void cd_json_kv_string(struct cd_json *j, const char *key, const char *s)
{
	cd_json_key(j, key);
	cd_json_string(j, s);
}

void cd_json_kv_int(struct cd_json *j, const char *key, int64_t v)
{
	cd_json_key(j, key);
	cd_json_int(j, v);
}

void cd_json_kv_uint(struct cd_json *j, const char *key, uint64_t v)
{
	cd_json_key(j, key);
	cd_json_uint(j, v);
}

void cd_json_kv_bool(struct cd_json *j, const char *key, bool v)
{
	cd_json_key(j, key);
	cd_json_bool(j, v);
}

char *cd_json_steal(struct cd_json *j)
{
	char *s = j->oom ? NULL : j->buf;

	if (j->oom)
		free(j->buf);
	else if (!s)
		s = strdup("");
	*j = (struct cd_json){ 0 };
	return s;
}

void cd_json_done(struct cd_json *j)
{
	free(j->buf);
	*j = (struct cd_json){ 0 };
}
