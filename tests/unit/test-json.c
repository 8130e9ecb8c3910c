/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-json.c - the JSON writer (json.h): structure, escaping, UTF-8. TAP on stdout. (The report
 * it renders: test-report.c.)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "config.h"
#include "json.h"
#include "mount.h"
#include "report.h"

#include "../lib/tap.h"

/* The text of one string value, written by cd_json_string_len (the caller frees it). */
static char *json_of_bytes(const char *s, size_t n)
{
	struct cd_json j = {0};

	cd_json_string_len(&j, s, n);
	return cd_json_steal(&j);
}

static void string_is(const char *in, size_t n, const char *want, const char *desc)
{
	char *got = json_of_bytes(in, n);

	is_str(got, want, "string: %s", desc);
	free(got);
}

#define STRING_IS(lit, want, desc) string_is((lit), sizeof(lit) - 1, (want), (desc))

static void test_structure(void)
{
	struct cd_json j = {0};
	char *s;

	s = cd_json_steal(&j);
	is_str(s, "", "nothing written: empty text");
	free(s);

	cd_json_object_begin(&j);
	cd_json_object_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "{}", "empty object");
	free(s);
	ok(j.buf == NULL && j.len == 0 && j.depth == 0, "steal resets the writer");

	cd_json_array_begin(&j);
	cd_json_array_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "[]", "empty array");
	free(s);

	cd_json_object_begin(&j);
	cd_json_kv_int(&j, "a", 1);
	cd_json_kv_string(&j, "b", "x");
	cd_json_kv_bool(&j, "c", true);
	cd_json_kv_bool(&j, "d", false);
	cd_json_key(&j, "e");
	cd_json_null(&j);
	cd_json_kv_uint(&j, "f", 7);
	cd_json_kv_string(&j, "g", NULL);
	cd_json_object_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "{\"a\":1,\"b\":\"x\",\"c\":true,\"d\":false,\"e\":null,\"f\":7,\"g\":null}",
	       "object: one comma between members, none after a key");
	free(s);

	cd_json_array_begin(&j);
	cd_json_int(&j, 1);
	cd_json_string(&j, "two");
	cd_json_bool(&j, false);
	cd_json_null(&j);
	cd_json_string(&j, NULL);
	cd_json_array_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "[1,\"two\",false,null,null]", "array: commas between values");
	free(s);

	cd_json_array_begin(&j);
	cd_json_int(&j, INT64_MIN);
	cd_json_int(&j, -1);
	cd_json_int(&j, 0);
	cd_json_int(&j, INT64_MAX);
	cd_json_uint(&j, UINT64_MAX);
	cd_json_array_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "[-9223372036854775808,-1,0,9223372036854775807,18446744073709551615]",
	       "integers at the limits");
	free(s);

	/* {"a":[1,{"b":[]},[[]],{}],"c":{"d":{"e":[true]}},"f":[[1],[2,3]]} */
	cd_json_object_begin(&j);
	cd_json_key(&j, "a");
	cd_json_array_begin(&j);
	cd_json_int(&j, 1);
	cd_json_object_begin(&j);
	cd_json_key(&j, "b");
	cd_json_array_begin(&j);
	cd_json_array_end(&j);
	cd_json_object_end(&j);
	cd_json_array_begin(&j);
	cd_json_array_begin(&j);
	cd_json_array_end(&j);
	cd_json_array_end(&j);
	cd_json_object_begin(&j);
	cd_json_object_end(&j);
	cd_json_array_end(&j);
	cd_json_key(&j, "c");
	cd_json_object_begin(&j);
	cd_json_key(&j, "d");
	cd_json_object_begin(&j);
	cd_json_key(&j, "e");
	cd_json_array_begin(&j);
	cd_json_bool(&j, true);
	cd_json_array_end(&j);
	cd_json_object_end(&j);
	cd_json_object_end(&j);
	cd_json_key(&j, "f");
	cd_json_array_begin(&j);
	cd_json_array_begin(&j);
	cd_json_int(&j, 1);
	cd_json_array_end(&j);
	cd_json_array_begin(&j);
	cd_json_int(&j, 2);
	cd_json_int(&j, 3);
	cd_json_array_end(&j);
	cd_json_array_end(&j);
	cd_json_object_end(&j);
	ok(j.depth == 0, "nesting: depth back to 0");
	s = cd_json_steal(&j);
	is_str(s, "{\"a\":[1,{\"b\":[]},[[]],{}],\"c\":{\"d\":{\"e\":[true]}},\"f\":[[1],[2,3]]}",
	       "nesting: commas restart at each level and resume after it");
	free(s);

	cd_json_array_begin(&j);
	cd_json_object_begin(&j);
	cd_json_object_end(&j);
	cd_json_object_begin(&j);
	cd_json_kv_int(&j, "x", 1);
	cd_json_object_end(&j);
	cd_json_object_begin(&j);
	cd_json_object_end(&j);
	cd_json_array_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "[{},{\"x\":1},{}]", "array of objects");
	free(s);

	/* the deepest nesting the writer tracks */
	for (int i = 0; i < CD_JSON_MAX_DEPTH; i++)
		cd_json_array_begin(&j);
	cd_json_int(&j, 1);
	cd_json_int(&j, 2);
	for (int i = 0; i < CD_JSON_MAX_DEPTH; i++)
		cd_json_array_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "[[[[[[[[[[[[[[[[1,2]]]]]]]]]]]]]]]]", "%d nested arrays", CD_JSON_MAX_DEPTH);
	free(s);

	cd_json_object_begin(&j);
	cd_json_kv_string(&j, "k\"ey\n", "v");
	cd_json_object_end(&j);
	s = cd_json_steal(&j);
	is_str(s, "{\"k\\\"ey\\n\":\"v\"}", "keys are escaped like strings");
	free(s);

	/* a long text grows the buffer */
	cd_json_array_begin(&j);
	for (int i = 0; i < 1000; i++)
		cd_json_string(&j, "0123456789");
	cd_json_array_end(&j);
	s = cd_json_steal(&j);
	ok(s && strlen(s) == 2 + 1000 * 12 + 999 && strncmp(s, "[\"0123456789\",", 14) == 0 &&
	       strcmp(s + strlen(s) - 13, "\"0123456789\"]") == 0,
	   "1000 strings: %zu bytes, well formed", s ? strlen(s) : 0);
	free(s);

	cd_json_object_begin(&j);
	cd_json_kv_int(&j, "a", 1);
	cd_json_done(&j);
	ok(j.buf == NULL && j.len == 0 && j.cap == 0 && j.depth == 0,
	   "cd_json_done frees and resets");
}

static void test_escaping(void)
{
	struct cd_json j = {0};
	char *s;

	STRING_IS("", "\"\"", "empty");
	STRING_IS("plain text / ok", "\"plain text / ok\"", "plain ASCII and / pass through");
	STRING_IS("a\"b", "\"a\\\"b\"", "double quote");
	STRING_IS("a\\b", "\"a\\\\b\"", "backslash");
	STRING_IS("\\\"", "\"\\\\\\\"\"", "backslash then quote");
	STRING_IS("a\nb", "\"a\\nb\"", "newline");
	STRING_IS("a\tb", "\"a\\tb\"", "tab");
	STRING_IS("a\rb", "\"a\\rb\"", "carriage return");
	STRING_IS("\x01", "\"\\u0001\"", "control byte 0x01");
	STRING_IS("\x1f", "\"\\u001f\"", "control byte 0x1f");
	STRING_IS("\b\f", "\"\\u0008\\u000c\"", "backspace and form feed as \\u00XX");
	STRING_IS("\x1b[31m", "\"\\u001b[31m\"", "escape sequence");
	STRING_IS("a\0b", "\"a\\u0000b\"", "NUL inside a counted string");
	STRING_IS("\x7f", "\"\x7f\"", "DEL passes through");
	STRING_IS(" ~", "\" ~\"", "0x20 and 0x7e pass through");
	cd_json_string(&j, "a\nb\"c");
	s = cd_json_steal(&j);
	is_str(s, "\"a\\nb\\\"c\"", "cd_json_string escapes like cd_json_string_len");
	free(s);
	cd_json_string(&j, NULL);
	s = cd_json_steal(&j);
	is_str(s, "null", "cd_json_string(NULL) is null");
	free(s);
}

static void test_utf8(void)
{
	/* valid UTF-8 passes through unchanged */
	STRING_IS("\xc3\xa9", "\"\xc3\xa9\"", "U+00E9 e acute (2 bytes)");
	STRING_IS("caf\xc3\xa9", "\"caf\xc3\xa9\"", "cafe with e acute");
	STRING_IS("\xe2\x82\xac", "\"\xe2\x82\xac\"", "U+20AC euro sign (3 bytes)");
	STRING_IS("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"", "U+1F600 emoji (4 bytes)");
	STRING_IS("\xc2\x80", "\"\xc2\x80\"", "U+0080, the first 2-byte form");
	STRING_IS("\xdf\xbf", "\"\xdf\xbf\"", "U+07FF, the last 2-byte form");
	STRING_IS("\xe0\xa0\x80", "\"\xe0\xa0\x80\"", "U+0800, the first 3-byte form");
	STRING_IS("\xed\x9f\xbf", "\"\xed\x9f\xbf\"", "U+D7FF, just below the surrogates");
	STRING_IS("\xee\x80\x80", "\"\xee\x80\x80\"", "U+E000, just above the surrogates");
	STRING_IS("\xef\xbf\xbf", "\"\xef\xbf\xbf\"", "U+FFFF");
	STRING_IS("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\"", "U+10000, the first 4-byte form");
	STRING_IS("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"", "U+10FFFF, the last code point");
	STRING_IS("a\xc3\xa9\n\xe2\x82\xac\"", "\"a\xc3\xa9\\n\xe2\x82\xac\\\"\"",
		  "UTF-8 mixed with escapes");

	/* every byte of an invalid sequence as \u00XX */
	STRING_IS("\xff", "\"\\u00ff\"", "0xff");
	STRING_IS("\xfe", "\"\\u00fe\"", "0xfe");
	STRING_IS("\x80", "\"\\u0080\"", "lone continuation byte 0x80");
	STRING_IS("\xbf", "\"\\u00bf\"", "lone continuation byte 0xbf");
	STRING_IS("\xc0\x80", "\"\\u00c0\\u0080\"", "overlong C0 80");
	STRING_IS("\xc1\xbf", "\"\\u00c1\\u00bf\"", "overlong C1 BF");
	STRING_IS("\xe0\x80\x80", "\"\\u00e0\\u0080\\u0080\"", "overlong E0 80 80");
	STRING_IS("\xe0\x9f\xbf", "\"\\u00e0\\u009f\\u00bf\"", "overlong E0 9F BF");
	STRING_IS("\xf0\x80\x80\x80", "\"\\u00f0\\u0080\\u0080\\u0080\"", "overlong F0 80 80 80");
	STRING_IS("\xf0\x8f\xbf\xbf", "\"\\u00f0\\u008f\\u00bf\\u00bf\"", "overlong F0 8F BF BF");
	STRING_IS("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"", "high surrogate ED A0 80");
	STRING_IS("\xed\xbf\xbf", "\"\\u00ed\\u00bf\\u00bf\"", "low surrogate ED BF BF");
	STRING_IS("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"", "above U+10FFFF");
	STRING_IS("\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"", "lead byte F5");
	STRING_IS("\xe2\x82", "\"\\u00e2\\u0082\"", "truncated E2 82 at the end");
	STRING_IS("\xe2\x82"
		  "A",
		  "\"\\u00e2\\u0082A\"", "truncated E2 82 before ASCII");
	STRING_IS("\xc3", "\"\\u00c3\"", "truncated C3 at the end");
	STRING_IS("\xc3"
		  "A",
		  "\"\\u00c3A\"", "C3 before ASCII");
	STRING_IS("\xf0\x9f\x98", "\"\\u00f0\\u009f\\u0098\"", "truncated 4-byte form");
	STRING_IS("a\xff"
		  "b",
		  "\"a\\u00ffb\"", "invalid byte between ASCII");
	STRING_IS("\x80\xe2\x82\xac", "\"\\u0080\xe2\x82\xac\"",
		  "continuation byte then a valid euro sign");
	STRING_IS("\xe2\xe2\x82\xac", "\"\\u00e2\xe2\x82\xac\"",
		  "stray lead byte then a valid euro sign");
	STRING_IS("\xc3\xa9\xff\xc3\xa9", "\"\xc3\xa9\\u00ff\xc3\xa9\"",
		  "invalid byte between valid");

	/* a counted string stops at its length, even inside a sequence */
	string_is("\xe2\x82\xac", 2, "\"\\u00e2\\u0082\"", "length cuts a euro sign in two");
}

int main(void)
{
	test_structure();
	test_escaping();
	test_utf8();
	return done_testing();
}
