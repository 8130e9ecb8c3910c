/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-kline.c - the check of a kernel's event line (src/server/kline.c): exactly one JSON
 * object as RFC 8259 has it, and its top-level "type"; then the same verdicts as json-c's strict
 * parser on many lines mutated from valid ones (a second implementation), and a 32 MiB line.
 * TAP.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kline.h"

#include "../lib/tap.h"

static const char *type_of(const char *line, int *ret)
{
	static char buf[256];
	struct srv_kline k;

	*ret = srv_kline_check(line, strlen(line), &k);
	if (*ret < 0 || !k.type)
		return NULL;
	snprintf(buf, sizeof(buf), "%.*s", (int)k.type_len, k.type);
	return buf;
}

static void test_table(void)
{
	static const struct {
		const char *line, *type; /* type "-": refused */
	} cases[] = {
	    {"{\"type\":\"stdout\",\"text\":\"hi\\n\"}", "stdout"},
	    {"  {\"type\" : \"end_of_execution\"}\t", "end_of_execution"},
	    {"{}", NULL},
	    {"{\"a\":[1,-2.5e+3,0.0,true,false,null,{\"b\":[]},[[]]],\"type\":\"x\"}", "x"},
	    {"{\"type\":1}", NULL},
	    {"{\"type\":{\"type\":\"inner\"}}", NULL},
	    {"{\"a\":{\"type\":\"inner\"}}", NULL},
	    {"{\"type\":\"a\",\"type\":\"b\"}", "b"},
	    {"{\"type\":\"a\",\"type\":null}", NULL},
	    {"{\"typ\\u0065\":\"esc\"}", "esc"},
	    {"{\"\\u0074ype\":\"esc\"}", "esc"},
	    {"{\"typ\\u0065s\":\"no\"}", NULL},
	    {"{\"type\":\"\\u00e9\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
	     "\\u00e9\\\"\\\\\\/\\b\\f\\n\\r\\t"},
	    {"{\"type\":\"caf\xc3\xa9\"}", "caf\xc3\xa9"},
	    {"", "-"},
	    {"[]", "-"},
	    {"\"type\"", "-"},
	    {"{\"type\":\"a\"} {}", "-"},
	    {"{\"type\":\"a\"}x", "-"},
	    {"{\"type\":\"a\",}", "-"},
	    {"{\"a\":[1,]}", "-"},
	    {"{\"a\":01}", "-"},
	    {"{\"a\":1.}", "-"},
	    {"{\"a\":.5}", "-"},
	    {"{\"a\":1e}", "-"},
	    {"{\"a\":+1}", "-"},
	    {"{\"a\":NaN}", "-"},
	    {"{\"a\":tru}", "-"},
	    {"{'a':1}", "-"},
	    {"{\"a\":\"tab\there\"}", "-"},
	    {"{\"a\":\"\\x\"}", "-"},
	    {"{\"a\":\"\\u12G4\"}", "-"},
	    {"{\"a\":\"\\u12\"}", "-"},
	    {"{\"a\":\"open}", "-"},
	    {"{\"a\" 1}", "-"},
	    {"{\"a\":1", "-"},
	    {"{\"a\":[1}", "-"},
	    {"{\"a\":{]}", "-"},
	    {"{1:2}", "-"},
	    {"{\"a\":1}}", "-"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int r;
		const char *t = type_of(cases[i].line, &r);

		if (cases[i].type && strcmp(cases[i].type, "-") == 0)
			is_int(r, -EINVAL, "refused: %s", cases[i].line);
		else
			ok(r == 0 && (cases[i].type ? t && strcmp(t, cases[i].type) == 0 : !t),
			   "%s: type %s", cases[i].line, cases[i].type ? cases[i].type : "none");
	}
	{ /* a NUL inside is a control byte, not an end */
		static const char nul[] = "{\"a\":\"x\0y\"}";
		struct srv_kline k;

		is_int(srv_kline_check(nul, sizeof(nul) - 1, &k), -EINVAL, "a raw NUL in a string");
	}
}

static void test_depth(void)
{
	char buf[512];
	int r, n;

	for (int depth = SRV_KLINE_MAX_DEPTH; depth <= SRV_KLINE_MAX_DEPTH + 1; depth++) {
		n = snprintf(buf, sizeof(buf), "{\"a\":");
		for (int i = 1; i < depth; i++)
			buf[n++] = '[';
		buf[n++] = '1';
		for (int i = 1; i < depth; i++)
			buf[n++] = ']';
		buf[n++] = '}';
		buf[n] = '\0';
		type_of(buf, &r);
		is_int(r, depth <= SRV_KLINE_MAX_DEPTH ? 0 : -EINVAL, "nested %d deep: %s", depth,
		       depth <= SRV_KLINE_MAX_DEPTH ? "taken" : "refused");
	}
}

/* json-c, strict, as a second opinion: an object, the whole input; its "type" into *ret. json-c
 * takes more than RFC 8259 does (raw control bytes in strings, "2.", "-00"), which JSON.parse
 * refuses: kline must refuse all json-c refuses, and may refuse more. */
static int jsonc_check(const char *s, size_t len, char *ret, size_t size)
{
	json_tokener *tok = json_tokener_new_ex(SRV_KLINE_MAX_DEPTH + 1);
	json_object *j, *t;
	int r;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	j = json_tokener_parse_ex(tok, s, (int)len);
	r = j && json_tokener_get_parse_end(tok) == len && json_object_is_type(j, json_type_object)
		? 0
		: -EINVAL;
	ret[0] = '\0';
	if (r == 0 && json_object_object_get_ex(j, "type", &t) &&
	    json_object_is_type(t, json_type_string))
		snprintf(ret, size, "%s", json_object_get_string(t));
	json_object_put(j);
	json_tokener_free(tok);
	return r;
}

/* one to three random edits of seed into buf; its new length */
static size_t mutate(const char *seed, char *buf, size_t size, unsigned *rnd, int edits)
{
	static const char alphabet[] = "{}[]:,\"\\ 0123456789-+.eEtrufalsnux\t\n\x01";
	size_t n = strlen(seed);

	memcpy(buf, seed, n + 1);
	for (int m = 0; m < edits && n > 0; m++) {
		*rnd = *rnd * 1103515245 + 12345;
		size_t at = (*rnd >> 8) % n;
		char c = alphabet[(*rnd >> 20) % (sizeof(alphabet) - 1)];

		switch ((*rnd >> 4) % 3) {
		case 0: /* replace */
			buf[at] = c;
			break;
		case 1: /* delete */
			memmove(buf + at, buf + at + 1, n - at);
			n--;
			break;
		default: /* insert */
			if (n + 2 < size) {
				memmove(buf + at + 1, buf + at, n - at + 1);
				buf[at] = c;
				n++;
			}
		}
	}
	return n;
}

static void test_differential(void)
{
	static const char *const seeds[] = {
	    "{\"type\":\"result\",\"is_main_result\":true,\"text\":\"3\",\"json\":{\"a\":[1,2.5,"
	    "-3e-2,null,false,true],\"b\":\"\\u00e9\\n\"}}",
	    "{\"type\":\"stderr\",\"text\":\"Traceback\\n  x\\\\y\",\"timestamp\":\"2026\"}",
	    "{ \"a\" : [ { } , [ ] , 0 , -0.0e+1 ] , \"type\" : \"t\" }",
	};
	unsigned rnd = 12345, total = 0, valid = 0, laxer = 0, stricter = 0, types = 0;
	char buf[256], want[256];

	for (int i = 0; i < 200000; i++) {
		size_t n = mutate(seeds[i % 3], buf, sizeof(buf), &rnd, 1 + i % 3);
		struct srv_kline k;
		int a = srv_kline_check(buf, n, &k), b = jsonc_check(buf, n, want, sizeof(want));

		total++;
		valid += a == 0;
		if (a == 0 && b != 0 && ++laxer <= 5)
			diag("taken by kline, refused by json-c: %s", buf);
		stricter += a != 0 && b == 0;
		/* the type, where it has no escape to decode */
		if (a == 0 && b == 0 && !(k.type && memchr(k.type, '\\', k.type_len)) &&
		    !(k.type ? strlen(want) == k.type_len && memcmp(want, k.type, k.type_len) == 0
			     : !want[0]) &&
		    ++types <= 5)
			diag("type differs: %s", buf);
	}
	ok(laxer == 0 && types == 0,
	   "%u mutated lines, %u valid: none json-c's strict parser refuses is taken, the same "
	   "type (%u refused that json-c takes: raw control bytes, \"2.\", \"-00\")",
	   total, valid, stricter);
}

static void test_long(void)
{
	size_t n = 32u << 20;
	char *s = malloc(n + 1);
	struct srv_kline k;

	strcpy(s, "{\"type\":\"result\",\"png\":\"");
	memset(s + strlen(s), 'A', n - strlen(s) - 2);
	memcpy(s + n - 2, "\"}", 3);
	ok(srv_kline_check(s, n, &k) == 0 && k.type_len == 6 && memcmp(k.type, "result", 6) == 0,
	   "a 32 MiB line: checked in place");
	free(s);
}

int main(void)
{
	test_table();
	test_depth();
	test_differential();
	test_long();
	return done_testing();
}
