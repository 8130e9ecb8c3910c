/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-utf8.c - the UTF-8 validator (utf8.h): well-formed sequences of 1 to 4 bytes, and what it
 * refuses (overlong forms, surrogates, past U+10FFFF, stray continuation bytes, sequences cut
 * short). Then the promise of the audit's path_hex and argv_hex (docs/audit.md): whenever the
 * JSON writer cannot give a string's bytes back, cd_audit_string() says so, over every string of
 * one and two bytes, the interesting ones of three and four, and random ones. TAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "json.h"
#include "utf8.h"

#include "../lib/tap.h"

#define LEN(lit) (sizeof(lit) - 1)

static void hex_of(const void *s, size_t n, char *out, size_t size)
{
	const unsigned char *p = s;

	out[0] = '\0';
	for (size_t i = 0; i < n && 3 * i + 3 < size; i++)
		snprintf(out + 3 * i, size - 3 * i, "%02x ", p[i]);
}

static void seq_is(const char *s, size_t n, size_t want, const char *desc)
{
	char hex[64];

	hex_of(s, n, hex, sizeof(hex));
	is_uint(cd_utf8_seq_len(s, n), want, "%s (%s): length %zu", desc, hex, want);
	ok(cd_utf8_valid(s, n) == (want == n), "... %s as a whole",
	   want == n ? "valid" : "invalid");
}

#define SEQ_IS(lit, want, desc) seq_is((lit), LEN(lit), (want), (desc))

static void test_valid(void)
{
	SEQ_IS("A", 1, "ASCII");
	seq_is("\0", 1, 1, "U+0000");
	SEQ_IS("\x01", 1, "a control byte");
	SEQ_IS("\x7f", 1, "U+007F, the last of one byte");
	SEQ_IS("\xc2\x80", 2, "U+0080, the first of two bytes");
	SEQ_IS("\xc3\xa9", 2, "U+00E9");
	SEQ_IS("\xdf\xbf", 2, "U+07FF, the last of two bytes");
	SEQ_IS("\xe0\xa0\x80", 3, "U+0800, the first of three bytes");
	SEQ_IS("\xe2\x82\xac", 3, "U+20AC");
	SEQ_IS("\xed\x9f\xbf", 3, "U+D7FF, before the surrogates");
	SEQ_IS("\xee\x80\x80", 3, "U+E000, after the surrogates");
	SEQ_IS("\xef\xbf\xbf", 3, "U+FFFF, the last of three bytes");
	SEQ_IS("\xf0\x90\x80\x80", 4, "U+10000, the first of four bytes");
	SEQ_IS("\xf0\x9f\x98\x80", 4, "U+1F600");
	SEQ_IS("\xf4\x8f\xbf\xbf", 4, "U+10FFFF, the last code point");
	is_uint(cd_utf8_seq_len("\xc3\xa9xyz", 5), 2,
		"a sequence followed by more: its own length");
	ok(cd_utf8_valid("", 0), "the empty string is valid");
	is_uint(cd_utf8_seq_len("", 0), 0, "no bytes: no sequence");
	ok(cd_utf8_valid("/h\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80", 13),
	   "a path of mixed lengths");
}

static void test_invalid(void)
{
	SEQ_IS("\xc0\x80", 0, "overlong U+0000 in two bytes");
	SEQ_IS("\xc1\xbf", 0, "overlong U+007F in two bytes");
	SEQ_IS("\xe0\x80\x80", 0, "overlong U+0000 in three bytes");
	SEQ_IS("\xe0\x9f\xbf", 0, "overlong U+07FF in three bytes");
	SEQ_IS("\xf0\x80\x80\x80", 0, "overlong U+0000 in four bytes");
	SEQ_IS("\xf0\x8f\xbf\xbf", 0, "overlong U+FFFF in four bytes");
	SEQ_IS("\xed\xa0\x80", 0, "U+D800, the first surrogate");
	SEQ_IS("\xed\xbf\xbf", 0, "U+DFFF, the last surrogate");
	SEQ_IS("\xf4\x90\x80\x80", 0, "U+110000, past the last code point");
	SEQ_IS("\xf5\x80\x80\x80", 0, "lead byte F5");
	SEQ_IS("\xf8\x88\x80\x80", 0, "lead byte F8 (a five-byte form)");
	SEQ_IS("\xff", 0, "byte FF");
	SEQ_IS("\x80", 0, "a lone continuation byte 80");
	SEQ_IS("\xbf", 0, "a lone continuation byte BF");
	SEQ_IS("\xc3\x28", 0, "a lead byte followed by ASCII");
	SEQ_IS("\xe2\x82\x28", 0, "a third byte that is ASCII");
	SEQ_IS("\xf0\x9f\x98\x28", 0, "a fourth byte that is ASCII");
	SEQ_IS("\xc3", 0, "truncated: a two-byte lead at the end");
	SEQ_IS("\xe2\x82", 0, "truncated: two bytes of three");
	SEQ_IS("\xf0\x9f\x98", 0, "truncated: three bytes of four");
	ok(!cd_utf8_valid("abc\xe2\x82", 5), "a string ending in a cut sequence is invalid");
	ok(!cd_utf8_valid("a\x80z", 3), "a stray continuation byte inside is invalid");
	ok(!cd_utf8_valid("\xc3\xa9\xc3", 3), "a valid sequence, then a cut one: invalid");
}

/* The bytes a JSON reader gets back from the string value in text (what the writer made: raw
 * UTF-8 and the escapes \" \\ \n \t \r \uXXXX). Returns its length, or -1 when malformed. */
static long json_decode(const char *text, unsigned char *out, size_t size)
{
	const char *p = text;
	size_t n = 0;

	if (*p++ != '"')
		return -1;
	while (*p && *p != '"' && n + 3 <= size) {
		unsigned cp;

		if (*p != '\\') {
			out[n++] = (unsigned char)*p++;
			continue;
		}
		switch (p[1]) {
		case '"':
		case '\\':
			out[n++] = (unsigned char)p[1];
			p += 2;
			continue;
		case 'n':
			out[n++] = '\n';
			p += 2;
			continue;
		case 't':
			out[n++] = '\t';
			p += 2;
			continue;
		case 'r':
			out[n++] = '\r';
			p += 2;
			continue;
		case 'u':
			break;
		default:
			return -1;
		}
		if (sscanf(p + 2, "%4x", &cp) != 1 || cp >= 0xd800)
			return -1;
		p += 6;
		if (cp < 0x80) {
			out[n++] = (unsigned char)cp;
		} else if (cp < 0x800) {
			out[n++] = (unsigned char)(0xc0 | cp >> 6);
			out[n++] = (unsigned char)(0x80 | (cp & 0x3f));
		} else {
			out[n++] = (unsigned char)(0xe0 | cp >> 12);
			out[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (unsigned char)(0x80 | (cp & 0x3f));
		}
	}
	return *p == '"' && p[1] == '\0' ? (long)n : -1;
}

struct sweep {
	const char *name;
	unsigned long tried, wrong;
	char first[200]; /* the first disagreement */
};

/* What the audit trail does with a path or an argument (execlog.c, events.c's file events):
 * cd_audit_string() writes it and says whether path_hex must follow. It must say so exactly
 * when a JSON reader does not get the bytes back. */
static void check(struct sweep *sw, const void *s, size_t n)
{
	unsigned char back[4 * 64];
	struct cd_json j = { 0 };
	bool lossy = false, exact;
	char *text;
	long got;

	cd_audit_string(&j, s, n, &lossy);
	text = cd_json_steal(&j);
	got = text ? json_decode(text, back, sizeof(back)) : -1;
	exact = got == (long)n && memcmp(back, s, n) == 0;
	sw->tried++;
	if (got >= 0 && lossy != exact) {
		free(text);
		return;
	}
	if (!sw->wrong++) {
		char hex[64];
		const char *back_is = got < 0 ? "unreadable" : exact ? "exact" : "changed";

		hex_of(s, n, hex, sizeof(hex));
		snprintf(sw->first, sizeof(sw->first), "%s-> %s, lossy %d, bytes %s", hex,
			 text ? text : "(no memory)", lossy, back_is);
	}
	free(text);
}

static void sweep_done(struct sweep *sw)
{
	if (!ok(sw->wrong == 0, "path_hex whenever JSON loses bytes: %s, %lu strings", sw->name,
		sw->tried))
		diag("%lu wrong, the first: %s", sw->wrong, sw->first);
}

/* Third and fourth bytes that sit on the edges of the ranges the second byte decides. */
static const unsigned char edges[] = { 0x00, 0x0a, 0x22, 0x41, 0x5c, 0x7f, 0x80,
				       0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff };

static void test_agreement(void)
{
	struct sweep one = { .name = "all of 1 and 2 bytes" };
	struct sweep three = { .name = "3 bytes, edges after the 2nd" };
	struct sweep four = { .name = "4 bytes, edges after the 2nd" };
	struct sweep rnd = { .name = "random, 1 to 16 bytes" };
	unsigned char s[16];
	uint32_t x = 2463534242u;

	for (unsigned a = 0; a < 256; a++) {
		s[0] = (unsigned char)a;
		check(&one, s, 1);
		for (unsigned b = 0; b < 256; b++) {
			s[1] = (unsigned char)b;
			check(&one, s, 2);
			for (size_t c = 0; a >= 0x80 && c < sizeof(edges); c++) {
				s[2] = edges[c];
				check(&three, s, 3);
				for (size_t d = 0; a >= 0xf0 && d < sizeof(edges); d++) {
					s[3] = edges[d];
					check(&four, s, 4);
				}
			}
		}
	}
	/* xorshift32, fixed seed: the same strings every run, biased to bytes >= 0x80 */
	for (int i = 0; i < 200000; i++) {
		size_t n = 1 + i % 16;

		for (size_t k = 0; k < n; k++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			s[k] = (unsigned char)(x & 3 ? 0x80 | (x >> 8) : x >> 8);
		}
		check(&rnd, s, n);
	}
	sweep_done(&one);
	sweep_done(&three);
	sweep_done(&four);
	sweep_done(&rnd);
}

/* The cases of the old disagreement: the audit's own validator took these for UTF-8 while the
 * JSON writer replaced them, and the event had no path_hex. */
static void audit_is(const char *s, size_t n, const char *want_json, bool want_lossy,
		     const char *desc)
{
	struct cd_json j = { 0 };
	bool lossy = false;
	char *text;

	cd_audit_string(&j, s, n, &lossy);
	text = cd_json_steal(&j);
	is_str(text, want_json, "audit string, %s", desc);
	ok(lossy == want_lossy, "... %s", want_lossy ? "lossy: path_hex follows" : "exact");
	free(text);
}

#define AUDIT_IS(lit, json, lossy, desc) audit_is((lit), LEN(lit), (json), (lossy), (desc))

static void test_audit_cases(void)
{
	AUDIT_IS("/tmp/\xc3\xa9t\xc3\xa9", "\"/tmp/\xc3\xa9t\xc3\xa9\"", false, "UTF-8 as it is");
	AUDIT_IS("a\tb\nc\x01\"\\", "\"a\\tb\\nc\\u0001\\\"\\\\\"", false,
		 "controls, quote, backslash: escaped, exact");
	AUDIT_IS("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"", true, "a surrogate");
	AUDIT_IS("\xe0\x80\x80", "\"\\u00e0\\u0080\\u0080\"", true, "an overlong form");
	AUDIT_IS("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"", true, "past U+10FFFF");
	AUDIT_IS("\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"", true, "lead byte F5");
	AUDIT_IS("ok\xe2\x82", "\"ok\\u00e2\\u0082\"", true, "cut short at the end");
}

int main(void)
{
	test_valid();
	test_invalid();
	test_audit_cases();
	test_agreement();
	return done_testing();
}
