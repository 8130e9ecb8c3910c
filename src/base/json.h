/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.h - a small JSON writer into a growing buffer. Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CD_JSON_MAX_DEPTH 16

struct cd_json {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;
	int depth;
	bool first[CD_JSON_MAX_DEPTH]; /* no comma before the next value at this depth */
	bool after_key;
};

void cd_json_object_begin(struct cd_json *j);
void cd_json_object_end(struct cd_json *j);
void cd_json_array_begin(struct cd_json *j);
void cd_json_array_end(struct cd_json *j);
void cd_json_key(struct cd_json *j, const char *key);
/* Strings are escaped per RFC 8259: '"', '\\' and the control bytes below 0x20 (\n, \t, \r, else
 * \u00XX), which a reader turns back into the same bytes. A byte that is not part of well-formed
 * UTF-8 (cd_utf8_seq_len) is written as \u00XX too, XX being the byte's value: a reader gets
 * U+00XX instead, so such a string is not given exactly (cd_utf8_valid tells). NULL writes
 * null. */
void cd_json_string(struct cd_json *j, const char *s);
void cd_json_string_len(struct cd_json *j, const char *s, size_t len);
void cd_json_int(struct cd_json *j, int64_t v);
void cd_json_uint(struct cd_json *j, uint64_t v);
void cd_json_bool(struct cd_json *j, bool v);
void cd_json_null(struct cd_json *j);

/* Shorthands for "key": value */
void cd_json_kv_string(struct cd_json *j, const char *key, const char *s);
void cd_json_kv_int(struct cd_json *j, const char *key, int64_t v);
void cd_json_kv_uint(struct cd_json *j, const char *key, uint64_t v);
void cd_json_kv_bool(struct cd_json *j, const char *key, bool v);

/* The text (NUL-terminated; the caller frees it), or NULL when memory ran out. Resets j. */
char *cd_json_steal(struct cd_json *j);
void cd_json_done(struct cd_json *j);
