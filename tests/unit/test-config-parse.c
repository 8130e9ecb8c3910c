/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-config-parse.c - the pure parsers: sizes, durations, resource limits (cordon.h) and the path
 * helpers (config.h, util.h). TAP on stdout.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "config.h"
#include "util.h"

#include "../lib/tap.h"

#define SIZE_MSG(s)	"\"" s "\" is not a size (use 512K, 64M, 1G)"
#define DURATION_MSG(s) "\"" s "\" is not a duration (use 500ms, 30s, 2m, 1h)"
#define LONG_MSG(s)	"\"" s "\" is too long (at most 100 years)"
#define UNKNOWN_MSG(s)                                                                             \
	"unknown limit \"" s "\" (as, core, cpu, data, fsize, locks, memlock, msgqueue, nice, "    \
	"nofile, nproc, rss, rtprio, rttime, sigpending, stack)"

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)
#define SEC NSEC_PER_SEC
#define INF ((uint64_t)RLIM_INFINITY)

#define UNTOUCHED 0x5a5a5a5a5a5a5a5aull

/* One size: accepted with that value. */
static void size_ok(const char *s, uint64_t want)
{
	struct cordon_error err = {0};
	uint64_t v = UNTOUCHED;
	int r = cordon_parse_size(s, &v, &err);

	is_int(r, 0, "size \"%s\" accepted", s);
	is_uint(v, want, "size \"%s\" is %ju", s, (uintmax_t)want);
}

/* One size: refused, with that message, and nothing written. */
static void size_bad(const char *s, const char *msg)
{
	struct cordon_error err = {0};
	uint64_t v = UNTOUCHED;
	int r = cordon_parse_size(s, &v, &err);

	is_int(r, -EINVAL, "size \"%s\" refused", s);
	is_str(err.msg, msg, "size \"%s\": message", s);
	ok(v == UNTOUCHED && err.code == 0 && strcmp(err.step, "size") == 0,
	   "size \"%s\": step \"size\", code 0, result untouched", s);
}

static void duration_ok(const char *s, uint64_t want)
{
	struct cordon_error err = {0};
	uint64_t v = UNTOUCHED;
	int r = cordon_parse_duration(s, &v, &err);

	is_int(r, 0, "duration \"%s\" accepted", s);
	is_uint(v, want, "duration \"%s\" is %ju ns", s, (uintmax_t)want);
}

static void duration_bad(const char *s, const char *msg)
{
	struct cordon_error err = {0};
	uint64_t v = UNTOUCHED;
	int r = cordon_parse_duration(s, &v, &err);

	is_int(r, -EINVAL, "duration \"%s\" refused", s);
	is_str(err.msg, msg, "duration \"%s\": message", s);
	ok(v == UNTOUCHED && err.code == 0 && strcmp(err.step, "duration") == 0,
	   "duration \"%s\": step \"duration\", code 0, result untouched", s);
}

static void rlimit_ok(const char *spec, int resource, uint64_t soft, uint64_t hard)
{
	struct cordon_error err = {0};
	uint64_t s = UNTOUCHED, h = UNTOUCHED;
	int res = -1;
	int r = cordon_parse_rlimit(spec, &res, &s, &h, &err);

	if (!is_int(r, 0, "rlimit \"%s\" accepted", spec))
		diag("error: %s", err.msg);
	is_int(res, resource, "rlimit \"%s\": resource %s", spec, cd_rlimit_name(resource));
	is_uint(s, soft, "rlimit \"%s\": soft %ju", spec, (uintmax_t)soft);
	is_uint(h, hard, "rlimit \"%s\": hard %ju", spec, (uintmax_t)hard);
}

static void rlimit_bad(const char *spec, const char *msg)
{
	struct cordon_error err = {0};
	uint64_t s = UNTOUCHED, h = UNTOUCHED;
	int res = -42;
	int r = cordon_parse_rlimit(spec, &res, &s, &h, &err);

	is_int(r, -EINVAL, "rlimit \"%s\" refused", spec);
	is_str(err.msg, msg, "rlimit \"%s\": message", spec);
	ok(res == -42 && s == UNTOUCHED && h == UNTOUCHED && err.code == 0 &&
	       strcmp(err.step, "rlimit") == 0,
	   "rlimit \"%s\": step \"rlimit\", code 0, results untouched", spec);
}

static void test_size(void)
{
	static const struct {
		const char *s;
		uint64_t want;
	} good[] = {
	    {"0", 0},
	    {"1", 1},
	    {"4096", 4096},
	    {"007", 7},
	    {"512K", 512 * KIB},
	    {"512k", 512 * KIB},
	    {"64M", 64 * MIB},
	    {"64m", 64 * MIB},
	    {"1G", GIB},
	    {"1g", GIB},
	    {"2T", 2 * TIB},
	    {"2t", 2 * TIB},
	    {"1.5G", 3 * GIB / 2},
	    {"0.5K", 512},
	    {"1.25M", 5 * MIB / 4},
	    {"1.5", 1}, /* fractions of a byte are truncated */
	    {"0.9", 0},
	    {"1.999999999999999999999K", 2047}, /* digits past the 18th are ignored */
	    {"1B", 1},
	    {"1b", 1},
	    {"1KB", KIB},
	    {"1kb", KIB},
	    {"1KiB", KIB},
	    {"1kib", KIB},
	    {"1KIB", KIB},
	    {"1MB", MIB},
	    {"1MiB", MIB},
	    {"1mIb", MIB},
	    {"1GB", GIB},
	    {"1GiB", GIB},
	    {"1gib", GIB},
	    {"1TB", TIB},
	    {"1TiB", TIB},
	    {"16777215T", 16777215 * TIB},
	    {"18446744073709551615", UINT64_MAX},
	};
	static const char *const junk[] = {
	    "12Q", "",	   "-1", " 5",	  "5 ",	 "1.", ".5",	"1e3", "K",   "1KK", "1iB",
	    "1 K", "0x10", "+5", "1.5.5", "1,5", "5E", "1kibb", "1Ki", "1ms", "1\n",
	};
	static const char *const huge[] = {
	    "99999999999999999999", "18446744073709551616", "20000000T", "16777216T",
	    "17179869184G",	    "18014398509481984K",
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(good); i++)
		size_ok(good[i].s, good[i].want);
	for (size_t i = 0; i < CD_ELEMENTSOF(junk); i++) {
		char msg[256];

		snprintf(msg, sizeof(msg), "\"%s\" is not a size (use 512K, 64M, 1G)", junk[i]);
		size_bad(junk[i], msg);
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(huge); i++) {
		char msg[256];

		snprintf(msg, sizeof(msg), "\"%s\" is too large", huge[i]);
		size_bad(huge[i], msg);
	}
	size_bad("12Q", SIZE_MSG("12Q"));
}

static void test_duration(void)
{
	static const struct {
		const char *s;
		uint64_t want;
	} good[] = {
	    {"0", 0},
	    {"10", 10 * SEC},
	    {"0.5", SEC / 2},
	    {"500ms", 500 * NSEC_PER_MSEC},
	    {"500MS", 500 * NSEC_PER_MSEC},
	    {"30s", 30 * SEC},
	    {"30S", 30 * SEC},
	    {"1.5s", 3 * SEC / 2},
	    {"1.5ms", 1500 * NSEC_PER_USEC},
	    {"2m", 120 * SEC},
	    {"2M", 120 * SEC}, /* case-insensitive: M is minutes too */
	    {"1min", 60 * SEC},
	    {"1MIN", 60 * SEC},
	    {"1h", 3600 * SEC},
	    {"1H", 3600 * SEC},
	    {"1d", 86400 * SEC},
	    {"1D", 86400 * SEC},
	    {"100us", 100 * NSEC_PER_USEC},
	    {"100US", 100 * NSEC_PER_USEC},
	    {"20ns", 20},
	    {"20NS", 20},
	    {"1.5ns", 1}, /* truncated */
	    {"36500d", CD_MAX_DURATION},
	    {"876000h", CD_MAX_DURATION},
	    {"3153600000", CD_MAX_DURATION},
	};
	static const char *const junk[] = {
	    "",	   "abc", "-1", " 5",	"5 ", "1.",    ".5",  "1e3",  "10sec",
	    "1 s", "s",	  "5y", "200y", "1w", "1.5.5", "+1s", "0x10", "1ss",
	};
	static const char *const too_long[] = {
	    "1000000d",
	    "36501d",
	    "36500.000001d",
	    "3153600001",
	    "3153600001s",
	    "99999999999999999999",
	    "18446744073709551615ns",
	    "18446744073709551616ns",
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(good); i++)
		duration_ok(good[i].s, good[i].want);
	for (size_t i = 0; i < CD_ELEMENTSOF(junk); i++) {
		char msg[256];

		snprintf(msg, sizeof(msg), "\"%s\" is not a duration (use 500ms, 30s, 2m, 1h)",
			 junk[i]);
		duration_bad(junk[i], msg);
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(too_long); i++) {
		char msg[256];

		snprintf(msg, sizeof(msg), "\"%s\" is too long (at most 100 years)", too_long[i]);
		duration_bad(too_long[i], msg);
	}
	/* the literal messages, spelled out once */
	duration_bad("200y", DURATION_MSG("200y"));
	duration_bad("1000000d", LONG_MSG("1000000d"));
}

static void test_rlimit_names(void)
{
	rlimit_ok("nofile=1024", RLIMIT_NOFILE, 1024, 1024);
	rlimit_ok("NOFILE=1024", RLIMIT_NOFILE, 1024, 1024);
	rlimit_ok("NoFile=1024", RLIMIT_NOFILE, 1024, 1024);
	rlimit_ok("RLIMIT_NOFILE=1024", RLIMIT_NOFILE, 1024, 1024);
	rlimit_ok("rlimit_nofile=1024", RLIMIT_NOFILE, 1024, 1024);
	rlimit_ok("Rlimit_NoFile=1024", RLIMIT_NOFILE, 1024, 1024);
	rlimit_ok("as=1G", RLIMIT_AS, GIB, GIB);
	rlimit_ok("core=0", RLIMIT_CORE, 0, 0);
	rlimit_ok("cpu=10", RLIMIT_CPU, 10, 10);
	rlimit_ok("data=4096", RLIMIT_DATA, 4096, 4096);
	rlimit_ok("fsize=64M", RLIMIT_FSIZE, 64 * MIB, 64 * MIB);
	rlimit_ok("locks=5", RLIMIT_LOCKS, 5, 5);
	rlimit_ok("memlock=64K", RLIMIT_MEMLOCK, 64 * KIB, 64 * KIB);
	rlimit_ok("msgqueue=800K", RLIMIT_MSGQUEUE, 800 * KIB, 800 * KIB);
	rlimit_ok("nice=10", RLIMIT_NICE, 10, 10);
	rlimit_ok("nproc=100", RLIMIT_NPROC, 100, 100);
	rlimit_ok("rss=1G", RLIMIT_RSS, GIB, GIB);
	rlimit_ok("rtprio=99", RLIMIT_RTPRIO, 99, 99);
	rlimit_ok("rttime=1s", RLIMIT_RTTIME, 1000000, 1000000);
	rlimit_ok("sigpending=1000", RLIMIT_SIGPENDING, 1000, 1000);
	rlimit_ok("stack=8M", RLIMIT_STACK, 8 * MIB, 8 * MIB);
	rlimit_ok("RLIMIT_STACK=8M", RLIMIT_STACK, 8 * MIB, 8 * MIB);

	for (int i = 0; i < RLIM_NLIMITS; i++)
		ok(cd_rlimit_name(i) != NULL, "cd_rlimit_name(%d) is %s", i, cd_rlimit_name(i));
	ok(cd_rlimit_name(-1) == NULL && cd_rlimit_name(RLIM_NLIMITS) == NULL,
	   "cd_rlimit_name of an unknown resource is NULL");
	is_str(cd_rlimit_name(RLIMIT_NOFILE), "nofile", "cd_rlimit_name(RLIMIT_NOFILE)");
	is_str(cd_rlimit_name(RLIMIT_AS), "as", "cd_rlimit_name(RLIMIT_AS)");
}

static void test_rlimit_values(void)
{
	/* counts */
	rlimit_ok("nofile=1024:4096", RLIMIT_NOFILE, 1024, 4096);
	rlimit_ok("nofile=0", RLIMIT_NOFILE, 0, 0);
	rlimit_ok("nofile=4096:4096", RLIMIT_NOFILE, 4096, 4096);
	rlimit_ok("nofile=18446744073709551615", RLIMIT_NOFILE, UINT64_MAX, UINT64_MAX);
	/* unlimited */
	rlimit_ok("nofile=unlimited", RLIMIT_NOFILE, INF, INF);
	rlimit_ok("nofile=UNLIMITED", RLIMIT_NOFILE, INF, INF);
	rlimit_ok("nofile=infinity", RLIMIT_NOFILE, INF, INF);
	rlimit_ok("nofile=Infinity:INFINITY", RLIMIT_NOFILE, INF, INF);
	rlimit_ok("nofile=1024:unlimited", RLIMIT_NOFILE, 1024, INF);
	rlimit_ok("as=unlimited", RLIMIT_AS, INF, INF);
	rlimit_ok("cpu=unlimited", RLIMIT_CPU, INF, INF);
	rlimit_ok("rttime=unlimited", RLIMIT_RTTIME, INF, INF);
	/* sizes */
	rlimit_ok("as=512M:1G", RLIMIT_AS, 512 * MIB, GIB);
	rlimit_ok("as=1.5G", RLIMIT_AS, 3 * GIB / 2, 3 * GIB / 2);
	rlimit_ok("as=4096", RLIMIT_AS, 4096, 4096);
	rlimit_ok("fsize=1.5K", RLIMIT_FSIZE, 1536, 1536);
	rlimit_ok("fsize=512K:1MiB", RLIMIT_FSIZE, 512 * KIB, MIB);
	rlimit_ok("stack=8M:unlimited", RLIMIT_STACK, 8 * MIB, INF);
	/* cpu: seconds, rounded up */
	rlimit_ok("cpu=1500ms", RLIMIT_CPU, 2, 2);
	rlimit_ok("cpu=1s:2s", RLIMIT_CPU, 1, 2);
	rlimit_ok("cpu=1ns", RLIMIT_CPU, 1, 1);
	rlimit_ok("cpu=0", RLIMIT_CPU, 0, 0);
	rlimit_ok("cpu=2m", RLIMIT_CPU, 120, 120);
	rlimit_ok("cpu=1h:1d", RLIMIT_CPU, 3600, 86400);
	rlimit_ok("cpu=1.000000001s", RLIMIT_CPU, 2, 2);
	rlimit_ok("cpu=2s:1500ms", RLIMIT_CPU, 2, 2);
	/* rttime: microseconds, rounded up */
	rlimit_ok("rttime=500ms", RLIMIT_RTTIME, 500000, 500000);
	rlimit_ok("rttime=100us", RLIMIT_RTTIME, 100, 100);
	rlimit_ok("rttime=1ns", RLIMIT_RTTIME, 1, 1);
	rlimit_ok("rttime=1500ns", RLIMIT_RTTIME, 2, 2);
	rlimit_ok("rttime=10", RLIMIT_RTTIME, 10000000, 10000000);
	rlimit_ok("rttime=1ms:2ms", RLIMIT_RTTIME, 1000, 2000);
}

static void test_rlimit_errors(void)
{
	rlimit_bad("nofile", "\"nofile\" is not NAME=SOFT[:HARD] (e.g. nofile=1024)");
	rlimit_bad("", "\"\" is not NAME=SOFT[:HARD] (e.g. nofile=1024)");
	rlimit_bad("foo=1", UNKNOWN_MSG("foo"));
	rlimit_bad("nofiles=1", UNKNOWN_MSG("nofiles"));
	rlimit_bad("RLIMIT_FOO=1", UNKNOWN_MSG("RLIMIT_FOO"));
	rlimit_bad("rlimit_=1", UNKNOWN_MSG("rlimit_"));
	rlimit_bad("rlimit_rlimit_nofile=1", UNKNOWN_MSG("rlimit_rlimit_nofile"));
	rlimit_bad("=1", UNKNOWN_MSG(""));
	rlimit_bad(" nofile=1", UNKNOWN_MSG(" nofile"));
	/* soft above hard */
	rlimit_bad("nofile=2048:1024", "nofile: soft limit 2048 is above hard limit 1024");
	rlimit_bad("nofile=unlimited:1024",
		   "nofile: soft limit unlimited is above hard limit 1024");
	rlimit_bad("RLIMIT_NOFILE=2:1", "nofile: soft limit 2 is above hard limit 1");
	rlimit_bad("as=1G:512M", "as: soft limit 1G is above hard limit 512M");
	rlimit_bad("cpu=3s:1500ms", "cpu: soft limit 3s is above hard limit 1500ms");
	rlimit_bad("cpu=1500ms:1s", "cpu: soft limit 1500ms is above hard limit 1s");
	/* values */
	rlimit_bad("nofile=abc", "nofile: \"abc\" is not a number, or unlimited");
	rlimit_bad("nofile=1K", "nofile: \"1K\" is not a number, or unlimited");
	rlimit_bad("nofile=-1", "nofile: \"-1\" is not a number, or unlimited");
	rlimit_bad("nofile= 5", "nofile: \" 5\" is not a number, or unlimited");
	rlimit_bad("nofile=5 ", "nofile: \"5 \" is not a number, or unlimited");
	rlimit_bad("nofile=", "nofile: \"\" is not a number, or unlimited");
	rlimit_bad("nofile=1024:", "nofile: \"\" is not a number, or unlimited");
	rlimit_bad("nofile=1024:x", "nofile: \"x\" is not a number, or unlimited");
	rlimit_bad("nofile=1:2:3", "nofile: \"2:3\" is not a number, or unlimited");
	rlimit_bad("nofile=99999999999999999999",
		   "nofile: \"99999999999999999999\" is not a number, or unlimited");
	rlimit_bad("NOFILE=unlimitedx", "nofile: \"unlimitedx\" is not a number, or unlimited");
	rlimit_bad("as=12Q", "as: \"12Q\" is not a size such as 64M, or unlimited");
	rlimit_bad("fsize=99999999999999999999",
		   "fsize: \"99999999999999999999\" is not a size such as 64M, or unlimited");
	rlimit_bad("as=1G:", "as: \"\" is not a size such as 64M, or unlimited");
	rlimit_bad("cpu=5x", "cpu: \"5x\" is not a duration such as 30s, or unlimited");
	rlimit_bad("cpu=1000000d", "cpu: \"1000000d\" is not a duration such as 30s, or unlimited");
	rlimit_bad("rttime=abc", "rttime: \"abc\" is not a duration such as 30s, or unlimited");
}

/* Rounding up must never turn a huge limit into 0 (the comment in parse_rlimit_value). */
static void test_rlimit_rounding_overflow(void)
{
	struct cordon_error err = {0};
	uint64_t s = UNTOUCHED, h = UNTOUCHED;
	int res, r;

	r = cordon_parse_rlimit("cpu=18446744073", &res, &s, &h, &err);
	ok(r < 0 || s >= 18446744073ull,
	   "rlimit \"cpu=18446744073\" is refused or not rounded "
	   "down (got r=%d soft=%ju)",
	   r, (uintmax_t)s);
	memset(&err, 0, sizeof(err));
	r = cordon_parse_rlimit("rttime=18446744073709551615ns", &res, &s, &h, &err);
	ok(r < 0 || s >= 18446744073709551ull,
	   "rlimit \"rttime=18446744073709551615ns\" is refused or not rounded down (got r=%d "
	   "soft=%ju)",
	   r, (uintmax_t)s);
	/* just below the wrap-around */
	rlimit_ok("cpu=18446744072", RLIMIT_CPU, 18446744072ull, 18446744072ull);
}

static void test_path_normalize(void)
{
	static const struct {
		const char *in;
		const char *out; /* NULL: refused with EINVAL */
	} cases[] = {
	    {"/", "/"},
	    {"//", "/"},
	    {"///", "/"},
	    {"/.", "/"},
	    {"/./", "/"},
	    {"/./.", "/"},
	    {"/a", "/a"},
	    {"/a/", "/a"},
	    {"//a/./b/", "/a/b"},
	    {"/a//b", "/a/b"},
	    {"/a/./././b", "/a/b"},
	    {"/a/b/c", "/a/b/c"},
	    {"/...", "/..."},
	    {"/.a", "/.a"},
	    {"/a/.b", "/a/.b"},
	    {"/a/b..", "/a/b.."},
	    {"/..a/b", "/..a/b"},
	    {"", NULL},
	    {"a", NULL},
	    {"a/b", NULL},
	    {"./a", NULL},
	    {".", NULL},
	    {"..", NULL},
	    {"/..", NULL},
	    {"/../a", NULL},
	    {"/a/..", NULL},
	    {"/a/../b", NULL},
	    {"/a/b/../", NULL},
	    {"//..//", NULL},
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(cases); i++) {
		char *got;

		errno = 0;
		got = cd_path_normalize(cases[i].in);
		if (cases[i].out) {
			is_str(got, cases[i].out, "cd_path_normalize(\"%s\")", cases[i].in);
			ok(cd_path_is_normalized_absolute(got),
			   "cd_path_normalize(\"%s\") is normalized", cases[i].in);
		} else {
			ok(!got && errno == EINVAL, "cd_path_normalize(\"%s\") refused with EINVAL",
			   cases[i].in);
		}
		free(got);
	}
	errno = 0;
	ok(!cd_path_normalize(NULL) && errno == EINVAL, "cd_path_normalize(NULL) is EINVAL");
}

static void test_path_helpers(void)
{
	static const struct {
		const char *p;
		bool want;
	} norm[] = {
	    {"/", true},      {"/a", true},	{"/a/b", true},	    {"/...", true}, {"/.a", true},
	    {"/a/b..", true}, {"/a.b/c", true}, {"", false},	    {"a", false},   {"a/b", false},
	    {"//", false},    {"/a/", false},	{"/a//b", false},   {"/.", false},  {"/./a", false},
	    {"/a/.", false},  {"/..", false},	{"/a/../b", false},
	};
	static const struct {
		const char *path;
		const char *prefix;
		bool want;
	} sw[] = {
	    {"/proc", "/proc", true},	 {"/proc/1", "/proc", true}, {"/proc/1/fd", "/proc", true},
	    {"/procfs", "/proc", false}, {"/pro", "/proc", false},   {"/sys", "/proc", false},
	    {"/a", "/", true},		 {"/", "/", true},	     {"/a/b", "/a/b", true},
	    {"/a/bc", "/a/b", false},	 {"/a", "/a/b", false},	     {"/a/b/c", "/a", true},
	    {"relative", "/", false},	 {"", "/", false},
	};
	static const struct {
		const char *p;
		size_t want;
	} depth[] = {
	    {"/", 0},	{"/a", 1}, {"/a/b", 2}, {"/a/b/c", 3}, {"/usr/local/bin", 3},
	    {"/a/", 1}, {"", 0},
	};

	for (size_t i = 0; i < CD_ELEMENTSOF(norm); i++)
		is_int(cd_path_is_normalized_absolute(norm[i].p), norm[i].want,
		       "cd_path_is_normalized_absolute(\"%s\") is %s", norm[i].p,
		       norm[i].want ? "true" : "false");
	ok(!cd_path_is_normalized_absolute(NULL), "cd_path_is_normalized_absolute(NULL) is false");
	for (size_t i = 0; i < CD_ELEMENTSOF(sw); i++)
		is_int(cd_path_startswith(sw[i].path, sw[i].prefix), sw[i].want,
		       "cd_path_startswith(\"%s\", \"%s\") is %s", sw[i].path, sw[i].prefix,
		       sw[i].want ? "true" : "false");
	for (size_t i = 0; i < CD_ELEMENTSOF(depth); i++)
		is_uint(cd_path_depth(depth[i].p), depth[i].want, "cd_path_depth(\"%s\") is %zu",
			depth[i].p, depth[i].want);
}

int main(void)
{
	test_size();
	test_duration();
	test_rlimit_names();
	test_rlimit_values();
	test_rlimit_errors();
	test_rlimit_rounding_overflow();
	test_path_normalize();
	test_path_helpers();
	return done_testing();
}
