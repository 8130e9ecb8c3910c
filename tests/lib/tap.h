/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tap.h - a tiny header-only TAP producer for the unit tests (tests/unit/). Plan-less: the plan
 * "1..N" is printed at the end by done_testing().
 *
 *   ok(cond, "fmt", ...)              pass when cond is true
 *   is_int(got, want, "fmt", ...)     signed integers, compared as intmax_t
 *   is_uint(got, want, "fmt", ...)    unsigned integers, compared as uintmax_t
 *   is_str(got, want, "fmt", ...)     strings; NULL equals only NULL
 *   like_str(got, sub, "fmt", ...)    got contains sub
 *   unlike_str(got, sub, "fmt", ...)  got does not contain sub
 *   skip("reason", "fmt", ...)        "ok N - ... # SKIP reason"
 *   todo_start("reason") ... todo_end()
 *                                     a known bug: failures print "not ok N - ... # TODO reason"
 *                                     and do not count; a pass shows up as an unexpected pass
 *   diag("fmt", ...)                  a "# ..." line
 *   return done_testing();            prints "1..N"; 0 when nothing failed, else 1
 *
 * Every check returns true when it passed. Diagnostics go to stdout, after the result line.
 */
#pragma once

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))

struct tap_state {
	unsigned int n;
	unsigned int failed;
	const char *todo; /* reason, while inside todo_start() ... todo_end() */
};

static struct tap_state tap_state_;

/* A description or value on one line: control bytes and bytes >= 0x80 as \xNN, '#' (which
 * would start a TAP directive) as \#. */
static inline void tap_put_escaped(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p >= 0x7f)
			printf("\\x%02x", *p);
		else if (*p == '#' || *p == '\\')
			printf("\\%c", *p);
		else
			putchar(*p);
	}
}

static inline void tap_put_quoted(const char *s)
{
	if (!s) {
		fputs("NULL", stdout);
		return;
	}
	putchar('"');
	tap_put_escaped(s);
	putchar('"');
}

static inline TAP_PRINTF(1, 2) void diag(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fputs("# ", stdout);
	tap_put_escaped(line);
	putchar('\n');
}

static inline bool tap_result_(bool pass, const char *file, int line, const char *directive,
			       const char *fmt, va_list ap)
{
	char desc[1024];

	vsnprintf(desc, sizeof(desc), fmt, ap);
	tap_state_.n++;
	printf("%s %u - ", pass ? "ok" : "not ok", tap_state_.n);
	tap_put_escaped(desc);
	if (directive)
		printf(" # %s", directive);
	else if (tap_state_.todo)
		printf(" # TODO %s", tap_state_.todo);
	putchar('\n');
	if (!pass) {
		if (!tap_state_.todo)
			tap_state_.failed++;
		printf("#   Failed%s test at %s line %d.\n", tap_state_.todo ? " (TODO)" : "", file,
		       line);
	}
	fflush(stdout);
	return pass;
}

static inline TAP_PRINTF(4, 5) bool tap_ok_(bool pass, const char *file, int line, const char *fmt,
					    ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_result_(pass, file, line, NULL, fmt, ap);
	va_end(ap);
	return pass;
}

static inline TAP_PRINTF(5, 6) bool tap_is_int_(intmax_t got, intmax_t want, const char *file,
						int line, const char *fmt, ...)
{
	bool pass = got == want;
	va_list ap;

	va_start(ap, fmt);
	tap_result_(pass, file, line, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#          got: %jd\n#     expected: %jd\n", got, want);
	return pass;
}

static inline TAP_PRINTF(5, 6) bool tap_is_uint_(uintmax_t got, uintmax_t want, const char *file,
						 int line, const char *fmt, ...)
{
	bool pass = got == want;
	va_list ap;

	va_start(ap, fmt);
	tap_result_(pass, file, line, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#          got: %ju\n#     expected: %ju\n", got, want);
	return pass;
}

static inline void tap_got_want_(const char *got, const char *want, const char *what)
{
	fputs("#          got: ", stdout);
	tap_put_quoted(got);
	printf("\n# %12s: ", what);
	tap_put_quoted(want);
	putchar('\n');
}

static inline TAP_PRINTF(5, 6) bool tap_is_str_(const char *got, const char *want, const char *file,
						int line, const char *fmt, ...)
{
	bool pass = (!got && !want) || (got && want && strcmp(got, want) == 0);
	va_list ap;

	va_start(ap, fmt);
	tap_result_(pass, file, line, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		tap_got_want_(got, want, "expected");
	return pass;
}

static inline TAP_PRINTF(6, 7) bool tap_like_str_(bool want_match, const char *got, const char *sub,
						  const char *file, int line, const char *fmt, ...)
{
	bool pass = got && sub && (strstr(got, sub) != NULL) == want_match;
	va_list ap;

	va_start(ap, fmt);
	tap_result_(pass, file, line, NULL, fmt, ap);
	va_end(ap);
	if (!pass)
		tap_got_want_(got, sub, want_match ? "containing" : "without");
	return pass;
}

static inline TAP_PRINTF(2, 3) void tap_skip_(const char *reason, const char *fmt, ...)
{
	char directive[256];
	va_list ap;

	snprintf(directive, sizeof(directive), "SKIP %s", reason);
	va_start(ap, fmt);
	tap_result_(true, "", 0, directive, fmt, ap);
	va_end(ap);
}

static inline void todo_start(const char *reason)
{
	tap_state_.todo = reason;
}

static inline void todo_end(void)
{
	tap_state_.todo = NULL;
}

static inline int done_testing(void)
{
	printf("1..%u\n", tap_state_.n);
	if (tap_state_.failed)
		printf("# Looks like you failed %u test%s of %u.\n", tap_state_.failed,
		       tap_state_.failed == 1 ? "" : "s", tap_state_.n);
	fflush(stdout);
	return tap_state_.failed ? 1 : 0;
}

#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...)                                                                     \
	tap_is_int_((intmax_t)(got), (intmax_t)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_uint(got, want, ...)                                                                    \
	tap_is_uint_((uintmax_t)(got), (uintmax_t)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...)	tap_is_str_((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define like_str(got, sub, ...) tap_like_str_(true, (got), (sub), __FILE__, __LINE__, __VA_ARGS__)
#define unlike_str(got, sub, ...)                                                                  \
	tap_like_str_(false, (got), (sub), __FILE__, __LINE__, __VA_ARGS__)
#define skip(reason, ...) tap_skip_((reason), __VA_ARGS__)
