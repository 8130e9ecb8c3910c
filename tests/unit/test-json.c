/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-json.c - the JSON writer (json.h) and the report it renders (report.h). The report is
 * checked with python3's json module when python3 is there. TAP on stdout.
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

static bool have_python(void)
{
	return system("command -v python3 >/dev/null 2>&1") == 0;
}

/* Feed text to a shell command on its stdin; its exit status, or -1. */
static int pipe_to(const char *cmd, const char *text)
{
	FILE *f = popen(cmd, "w");
	int st;

	if (!f)
		return -1;
	fputs(text, f);
	st = pclose(f);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run python3 on text (from a temp file) and read back its whole stdout (the caller frees it). */
static char *python_out(const char *script, const char *text)
{
	char path[] = "/tmp/cordon-test-json.XXXXXX";
	_cleanup_free_ char *cmd = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *in, *f;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	in = fdopen(fd, "w");
	if (!in) {
		close(fd);
		unlink(path);
		return NULL;
	}
	fputs(text, in);
	fclose(in);
	cmd = cd_strdup_printf("python3 -c '%s' < %s", script, path);
	f = cmd ? popen(cmd, "r") : NULL;
	if (f) {
		FILE *mem = open_memstream(&out, &len);
		char buf[4096];
		size_t n;

		while (mem && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, mem);
		if (mem)
			fclose(mem);
		pclose(f);
	}
	unlink(path);
	return out;
}

#define VALIDATE "import json,sys; json.load(sys.stdin)"
/* One line per top-level key the report must have (MISSING when it has not), then the env names
 * and the identity. Values as json.dumps with sorted keys. */
#define SUMMARY                                                                                    \
	"import json,sys\n"                                                                        \
	"d = json.load(sys.stdin)\n"                                                               \
	"for k in (\"version\", \"id\", \"command\", \"outcome\", \"exit_code\", \"status\",\n"    \
	"          \"signal\", \"error\"):\n"                                                      \
	"    print(k, json.dumps(d.get(k, \"MISSING\"), sort_keys=True))\n"                        \
	"a = d.get(\"applied\")\n"                                                                 \
	"print(\"applied\", type(a).__name__)\n"                                                   \
	"print(\"env\", json.dumps(a[\"env\"]))\n"                                                 \
	"print(\"identity\", json.dumps(a[\"identity\"], sort_keys=True))\n"                       \
	"print(\"mounts\", json.dumps(a[\"mounts\"], sort_keys=True))\n"

struct report_case {
	const char *name;
	struct cordon_result res;
	const struct cd_identity *id;
	const struct cd_mount_plan *plan;
	const struct cd_rlimits_got *rlimits; /* what the command got; NULL: never got that far */
	const char *summary; /* what SUMMARY prints */
	const char *contains[4];
};

static void check_report(const struct cordon_config *c, char *const *envp,
			 const struct report_case *rc, bool python)
{
	static const struct cd_mount_plan empty = {0};
	struct cd_report_info info = {
	    .c = c,
	    .workdir = "/w",
	    .workdir_target = "/w",
	    .chdir = "/w/sub",
	    .id = rc->id,
	    .plan = rc->plan ? rc->plan : &empty,
	    .envp = envp,
	    .res = &rc->res,
	    .rlimits = rc->rlimits,
	};
	char *s = cd_report_render(&info);

	if (!ok(s != NULL, "report %s: rendered", rc->name))
		return;
	ok(strlen(s) > 2 && s[0] == '{' && strcmp(s + strlen(s) - 2, "}\n") == 0,
	   "report %s: one object and a newline", rc->name);
	ok(strchr(s, '\n') == s + strlen(s) - 1, "report %s: on one line", rc->name);
	unlike_str(s, "hunter2", "report %s: no env value", rc->name);
	unlike_str(s, "/secret/bin", "report %s: no PATH value", rc->name);
	like_str(s, "\"env\":[\"SECRET\",\"PATH\",\"EMPTY\",\"NOEQ\"]",
		 "report %s: env names only, in order", rc->name);
	like_str(s, "\"version\":1,", "report %s: version %d", rc->name, CORDON_REPORT_VERSION);
	like_str(s, "\"command\":[\"echo\",\"say \\\"hi\\\"\\n\"]", "report %s: command, escaped",
		 rc->name);
	for (size_t i = 0; i < CD_ELEMENTSOF(rc->contains) && rc->contains[i]; i++)
		like_str(s, rc->contains[i], "report %s: has %s", rc->name, rc->contains[i]);
	if (!python) {
		skip("python3 not found", "report %s: parses as JSON", rc->name);
		skip("python3 not found", "report %s: keys and values", rc->name);
	} else {
		char *sum = python_out(SUMMARY, s);

		is_int(pipe_to("python3 -c '" VALIDATE "'", s), 0, "report %s: parses as JSON",
		       rc->name);
		if (!is_str(sum, rc->summary, "report %s: keys and values", rc->name))
			diag("report: %s", s);
		free(sum);
	}
	free(s);
}

static void test_report(void)
{
	const char *argv[] = {"echo", "say \"hi\"\n", NULL};
	char *envp[] = {"SECRET=hunter2", "PATH=/secret/bin", "EMPTY=", "NOEQ", NULL};
	struct cordon_error err = {0};
	struct cordon_config *c = cordon_config_new();
	bool python = have_python();
	char user[] = "x", home[] = "/home/x";
	char src_usr[] = "usr/bin", dst_bin[] = "/bin", dst_tmp[] = "/tmp", src_w[] = "/host/w",
	     dst_w[] = "/w";
	struct cd_mnt mnts[] = {
	    {.kind = CD_MNT_SYMLINK, .src = src_usr, .dst = dst_bin, .fd = -1},
	    {.kind = CD_MNT_TMPFS, .dst = dst_tmp, .size = 1024, .fd = -1},
	    {.kind = CD_MNT_WORKDIR, .src = src_w, .dst = dst_w, .fd = -1},
	};
	const struct cd_mount_plan plan = {.m = mnts, .n = CD_ELEMENTSOF(mnts)};
	const struct cd_identity id = {
	    .inside_uid = 1000,
	    .inside_gid = 100,
	    .host_uid = 1000,
	    .host_gid = 100,
	    .user = user,
	    .home = home,
	};
	struct cd_rlimits_got got = {.valid = true}, none = {.valid = false};
	const struct report_case cases[] = {
	    {
		.name = "exited",
		.res = {.outcome = CORDON_OUTCOME_EXITED,
			.exit_code = 3,
			.status = 3,
			.id = "0123456789abcdef0123456789abcdef",
			.wall_ns = 1500000},
		.summary = "version 1\n"
			   "id \"0123456789abcdef0123456789abcdef\"\n"
			   "command [\"echo\", \"say \\\"hi\\\"\\n\"]\n"
			   "outcome \"exited\"\n"
			   "exit_code 3\n"
			   "status 3\n"
			   "signal null\n"
			   "error null\n"
			   "applied dict\n"
			   "env [\"SECRET\", \"PATH\", \"EMPTY\", \"NOEQ\"]\n"
			   "identity null\n"
			   "mounts []\n",
		.rlimits = &got,
		.contains = {"\"wall_us\":1500,", "\"identity\":null",
			     "\"rlimits\":{\"cpu\":{\"soft\":\"unlimited\",\"hard\":\"unlimited\"},"
			     "\"fsize\":{\"soft\":\"unlimited\",\"hard\":\"unlimited\"},",
			     "\"core\":{\"soft\":0,\"hard\":0},\"rss\":{\"soft\":\"unlimited\","
			     "\"hard\":\"unlimited\"},\"nproc\":{\"soft\":1,\"hard\":2},"},
	    },
	    {
		.name = "timeout",
		.res = {.outcome = CORDON_OUTCOME_TIMEOUT,
			.exit_code = CORDON_EXIT_TIMEOUT,
			.signal = SIGTERM},
		.id = &id,
		.plan = &plan,
		.summary = "version 1\n"
			   "id \"\"\n"
			   "command [\"echo\", \"say \\\"hi\\\"\\n\"]\n"
			   "outcome \"timeout\"\n"
			   "exit_code 124\n"
			   "status null\n"
			   "signal 15\n"
			   "error null\n"
			   "applied dict\n"
			   "env [\"SECRET\", \"PATH\", \"EMPTY\", \"NOEQ\"]\n"
			   "identity {\"gid\": 100, \"home\": \"/home/x\", \"host_gid\": 100, "
			   "\"host_uid\": 1000, \"idmapped_workdir\": false, \"uid\": 1000, "
			   "\"user\": \"x\"}\n"
			   "mounts [{\"path\": \"/bin\", \"target\": \"usr/bin\", "
			   "\"type\": \"symlink\"}, {\"path\": \"/tmp\", \"read_only\": false, "
			   "\"size\": 1024, \"type\": \"tmpfs\"}, {\"path\": \"/w\", "
			   "\"read_only\": false, \"source\": \"/host/w\", "
			   "\"type\": \"workdir\"}]\n",
		.contains = {"\"signal\":15", "\"status\":null",
			     "\"rlimits\":{\"core\":{\"soft\":0,\"hard\":0},"
			     "\"nofile\":{\"soft\":\"unlimited\",\"hard\":\"unlimited\"}},"},
	    },
	    {
		.name = "setup-error",
		.res = {.outcome = CORDON_OUTCOME_SETUP_ERROR,
			.exit_code = CORDON_EXIT_FAILURE,
			.error = {.code = EACCES,
				  .step = "mount",
				  .msg = "bind \"/a\" on /b:\tPermission denied\n"}},
		.summary = "version 1\n"
			   "id \"\"\n"
			   "command [\"echo\", \"say \\\"hi\\\"\\n\"]\n"
			   "outcome \"setup-error\"\n"
			   "exit_code 125\n"
			   "status null\n"
			   "signal null\n"
			   "error {\"errno\": 13, \"message\": \"bind \\\"/a\\\" on "
			   "/b:\\tPermission denied\\n\", \"step\": \"mount\"}\n"
			   "applied dict\n"
			   "env [\"SECRET\", \"PATH\", \"EMPTY\", \"NOEQ\"]\n"
			   "identity null\n"
			   "mounts []\n",
		.contains = {"\"error\":{\"step\":\"mount\",\"errno\":13,\"message\":"
			     "\"bind \\\"/a\\\" on /b:\\tPermission denied\\n\"}",
			     "\"rlimits\":null,"},
		.rlimits = &none,
	    },
	};

	for (int i = 0; i < RLIM_NLIMITS; i++)
		got.r[i] = (struct rlimit){RLIM_INFINITY, RLIM_INFINITY};
	got.r[RLIMIT_CORE] = (struct rlimit){0, 0};
	got.r[RLIMIT_NPROC] = (struct rlimit){1, 2};
	if (!ok(c != NULL, "cordon_config_new"))
		return;
	ok(cordon_config_set_command(c, argv, &err) == 0, "report: set_command");
	ok(cordon_config_set_rlimit(c, RLIMIT_NOFILE, RLIM_INFINITY, RLIM_INFINITY, &err) == 0,
	   "report: set_rlimit nofile unlimited");
	for (size_t i = 0; i < CD_ELEMENTSOF(cases); i++)
		check_report(c, envp, &cases[i], python);
	cordon_config_free(c);
}

int main(void)
{
	test_structure();
	test_escaping();
	test_utf8();
	test_report();
	return done_testing();
}
