/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy.c - the seccomp policy language (policy.c, policy_names.c) and its compilation
 * (filter.c): every construct and the rules it produces, every error message with its
 * file:line:col, includes from a scratch directory under /tmp, and the compiled BPF program of
 * the shipped policies checked with the interpreter cd_filter_eval(). TAP on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>

#include "filter.h"
#include "policy.h"
#include "precompiled.h"

#include "../lib/tap.h"

#ifndef CORDON_TEST_POLICY_DIR
#error "the build defines CORDON_TEST_POLICY_DIR (the source tree's seccomp-policies/)"
#endif

#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))
#define CONFLICT_UNCOND                                                                            \
	"(a rule without conditions cannot be combined with rules of another action for the "      \
	"same syscall)"
#define CONFLICT_SUBSET                                                                            \
	"(when one rule's conditions include the other's, libseccomp keeps only one of them: "     \
	"make "                                                                                    \
	"them disjoint)"
#define TOKEN_MAX_TEST 128 /* policy.c: tokens are at most 127 characters */

static const char *const search[] = {CORDON_TEST_POLICY_DIR, NULL};

static struct cd_policy P;    /* the policy of the last parse() */
static struct cordon_error E; /* its error */
static char scratch[PATH_MAX];
static bool seccomp_usable; /* libseccomp can build filters here (not under valgrind) */

/* --- helpers --- */

static int parse(const char *text)
{
	cd_policy_free(&P);
	memset(&E, 0, sizeof(E));
	P.search = search;
	return cd_policy_parse(&P, text, strlen(text), "t.policy", &E);
}

static int load(const char *path, const char *display)
{
	cd_policy_free(&P);
	memset(&E, 0, sizeof(E));
	P.search = search;
	return cd_policy_load(&P, path, display, &E);
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The parse (or load) result r is a refusal: -EINVAL, step "policy", message "where: ..."
 * containing key. */
static void is_refused(int r, const char *where, const char *key, const char *what)
{
	char prefix[PATH_MAX + 64];

	snprintf(prefix, sizeof(prefix), "%s: ", where);
	is_int(r, -EINVAL, "%s: refused", what);
	ok(strcmp(E.step, "policy") == 0 && E.code == EINVAL, "%s: step \"policy\", EINVAL", what);
	if (!ok(starts_with(E.msg, prefix), "%s: at %s", what, where))
		diag("message: %s", E.msg);
	like_str(E.msg, key, "%s: says what was expected", what);
}

static void fails(const char *text, const char *where, const char *key, const char *what)
{
	is_refused(parse(text), where, key, what);
}

static void parses(const char *text, const char *what)
{
	int r = parse(text);

	if (!is_int(r, 0, "%s: parses", what))
		diag("error: %s", E.msg);
}

/* Rule i of P: syscall number, action, number of conditions, line:col in file. */
static void is_rule(size_t i, int nr, uint32_t action, unsigned n_conds, const char *file,
		    unsigned line, unsigned col, const char *what)
{
	const struct cd_policy_rule *r = i < P.n_rules ? &P.rules[i] : NULL;

	if (!ok(r != NULL, "%s: rule %zu exists (%zu rules)", what, i, P.n_rules))
		return;
	is_int(r->nr, nr, "%s: syscall number", what);
	is_uint(r->action, action, "%s: action", what);
	is_uint(r->n_conds, n_conds, "%s: %u conditions", what, n_conds);
	if (!ok(r->loc.file && strcmp(r->loc.file, file) == 0 && r->loc.line == line &&
		    r->loc.col == col,
		"%s: at %s:%u:%u", what, file, line, col))
		diag("got %s:%u:%u", r->loc.file ? r->loc.file : "(null)", r->loc.line, r->loc.col);
}

static void is_cond(size_t i, unsigned j, unsigned arg, enum cd_cmp op, uint64_t mask,
		    uint64_t value, const char *what)
{
	const struct cd_policy_cond *c;

	if (!ok(i < P.n_rules && j < P.rules[i].n_conds, "%s: rule %zu has condition %u", what, i,
		j))
		return;
	c = &P.rules[i].conds[j];
	ok(c->arg == arg && c->op == op, "%s: arg%u %s", what, arg, cd_policy_cmp_str(op));
	is_uint(c->mask, mask, "%s: mask", what);
	is_uint(c->value, value, "%s: value", what);
}

static const struct cd_policy_group *group(const char *name)
{
	for (size_t i = 0; i < P.n_groups; i++)
		if (strcmp(P.groups[i].name, name) == 0)
			return &P.groups[i];
	return NULL;
}

static bool group_has(const struct cd_policy_group *g, const char *name)
{
	for (size_t i = 0; g && i < g->n_members; i++)
		if (strcmp(g->members[i].name, name) == 0)
			return true;
	return false;
}

static size_t rules_for(int nr)
{
	size_t n = 0;

	for (size_t i = 0; i < P.n_rules; i++)
		n += P.rules[i].nr == nr;
	return n;
}

static int write_file(const char *name, const char *content)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fputs(content, f);
	return fclose(f);
}

static const char *in_scratch(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static unsigned n;
	char *p = buf[n++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", scratch, name);
	return p;
}

static int setup_scratch(void)
{
	char tmpl[] = "/tmp/cordon-test-policy.XXXXXX";
	char chain[64], name[32];
	FILE *f;

	if (!mkdtemp(tmpl) || !realpath(tmpl, scratch))
		return -1;
	if (mkdir(in_scratch("sub"), 0755) < 0 || mkdir(in_scratch("dir"), 0755) < 0)
		return -1;
	/* main.policy: includes by path (relative to itself), by name next to itself, and a
	 * groups.policy of its own that takes precedence over the search path */
	if (write_file("main.policy", "default allow\n"
				      "include groups\n"
				      "include \"sub/child.policy\"\n"
				      "include sibling\n"
				      "errno EPERM @mine\n") < 0 ||
	    write_file("groups.policy", "group @mine getppid\n") < 0 ||
	    write_file("sub/child.policy", "errno EPERM mount\ninclude \"../leaf.policy\"\n") < 0 ||
	    write_file("leaf.policy", "errno ENOSYS clone3\n") < 0 ||
	    write_file("sibling.policy", "# next to main.policy\nkill acct\n") < 0 ||
	    /* a quoted path without '/': relative to the including file too */
	    write_file("quoted.policy", "default allow\ninclude \"sibling.policy\"\n") < 0 ||
	    /* include cycles */
	    write_file("a.policy", "default allow\ninclude b\n") < 0 ||
	    write_file("b.policy", "include a\n") < 0 ||
	    write_file("self.policy", "default allow\n\ninclude \"./self.policy\"\n") < 0 ||
	    /* include once: both include groups, and each other's common file */
	    write_file("x.policy", "include groups\ninclude common\nerrno EPERM @mine\n") < 0 ||
	    write_file("y.policy", "include groups\ninclude common\n") < 0 ||
	    write_file("common.policy", "group @common getuid\nerrno EPERM @common\n") < 0 ||
	    write_file("diamond.policy", "default allow\ninclude x\ninclude y\n") < 0 ||
	    /* an error in an included file */
	    write_file("bad.policy", "\nallow opne\n") < 0)
		return -1;
	/* c1 -> c2 -> ... -> c10: loading c2 nests 8 includes deep, c1 nine */
	for (int i = 1; i <= 10; i++) {
		snprintf(name, sizeof(name), "c%d.policy", i);
		if (i < 10)
			snprintf(chain, sizeof(chain), "include c%d\n", i + 1);
		else
			snprintf(chain, sizeof(chain), "default allow\nallow getpid\n");
		if (write_file(name, chain) < 0)
			return -1;
	}
	/* more than 1 MiB */
	f = fopen(in_scratch("big.policy"), "we");
	if (!f)
		return -1;
	for (int i = 0; i <= CD_POLICY_MAX_FILE / 64; i++)
		fputs("# .............................................................\n", f);
	return fclose(f);
}

static void remove_scratch(void)
{
	static const char *const files[] = {
	    "main.policy",   "groups.policy", "sub/child.policy", "leaf.policy", "sibling.policy",
	    "quoted.policy", "a.policy",      "b.policy",	  "self.policy", "x.policy",
	    "y.policy",	     "common.policy", "diamond.policy",	  "bad.policy",	 "big.policy",
	    "fifo.policy",
	};
	char name[32];

	for (size_t i = 0; i < CD_ELEMENTSOF(files); i++)
		unlink(in_scratch(files[i]));
	for (int i = 1; i <= 10; i++) {
		snprintf(name, sizeof(name), "c%d.policy", i);
		unlink(in_scratch(name));
	}
	rmdir(in_scratch("sub"));
	rmdir(in_scratch("dir"));
	rmdir(scratch);
}

/* --- the language --- */

static void test_names(void)
{
	static const struct {
		const char *name;
		uint64_t value;
	} constants[] = {
	    {"TIOCSTI", TIOCSTI},
	    {"TIOCLINUX", TIOCLINUX},
	    {"TCGETS", TCGETS},
	    {"CLONE_NEWUSER", CLONE_NEWUSER},
	    {"CLONE_NEWNS", CLONE_NEWNS},
	    {"CLONE_NEWTIME", CLONE_NEWTIME},
	    {"AF_INET", AF_INET},
	    {"AF_UNIX", AF_UNIX},
	    {"AF_PACKET", AF_PACKET},
	    {"SOCK_CLOEXEC", SOCK_CLOEXEC},
	    {"READ_IMPLIES_EXEC", READ_IMPLIES_EXEC},
	    {"PER_QUERY", 0xffffffffu},
	    {"O_RDONLY", O_RDONLY},
	    {"AT_FDCWD", (uint64_t)AT_FDCWD},
	};
	static const char *const not_constants[] = {"tiocsti", "TIOCSTIX", "", "EPERM"};
	static const struct {
		const char *name;
		int value;
	} errnos[] = {
	    {"EPERM", EPERM},	      {"ENOSYS", ENOSYS},	  {"EACCES", EACCES},
	    {"ENOTSUP", ENOTSUP},     {"EOPNOTSUPP", EOPNOTSUPP}, {"EAFNOSUPPORT", EAFNOSUPPORT},
	    {"ETIMEDOUT", ETIMEDOUT},
	};
	char buf[64];
	uint64_t v;

	for (size_t i = 0; i < CD_ELEMENTSOF(constants); i++) {
		v = 0x5a5a5a5a;
		ok(cd_policy_constant(constants[i].name, &v) && v == constants[i].value,
		   "constant %s = 0x%llx", constants[i].name,
		   (unsigned long long)constants[i].value);
	}
	for (size_t i = 0; i < CD_ELEMENTSOF(not_constants); i++)
		ok(!cd_policy_constant(not_constants[i], &v), "\"%s\" is not a constant",
		   not_constants[i]);
	for (size_t i = 0; i < CD_ELEMENTSOF(errnos); i++)
		is_int(cd_policy_errno(errnos[i].name), errnos[i].value, "errno %s",
		       errnos[i].name);
	is_int(cd_policy_errno("EWHATEVER"), -1, "unknown errno name: -1");
	is_int(cd_policy_errno("eperm"), -1, "errno names are case-sensitive");
	is_str(cd_policy_errno_name(EPERM), "EPERM", "errno name of EPERM");
	is_str(cd_policy_errno_name(EOPNOTSUPP), "ENOTSUP", "EOPNOTSUPP == ENOTSUP: first name");
	is_str(cd_policy_errno_name(4000), NULL, "no name for errno 4000");

	is_str(cd_policy_action_str(SCMP_ACT_ALLOW, buf, sizeof(buf)), "allow", "action_str allow");
	is_str(cd_policy_action_str(SCMP_ACT_LOG, buf, sizeof(buf)), "log", "action_str log");
	is_str(cd_policy_action_str(SCMP_ACT_KILL_PROCESS, buf, sizeof(buf)), "kill",
	       "action_str kill");
	is_str(cd_policy_action_str(SCMP_ACT_KILL_THREAD, buf, sizeof(buf)), "kill-thread",
	       "action_str kill-thread");
	is_str(cd_policy_action_str(SCMP_ACT_TRAP, buf, sizeof(buf)), "trap", "action_str trap");
	is_str(cd_policy_action_str(SCMP_ACT_NOTIFY, buf, sizeof(buf)), "notify",
	       "action_str notify");
	is_str(cd_policy_action_str(SCMP_ACT_ERRNO(EPERM), buf, sizeof(buf)), "errno EPERM",
	       "action_str errno EPERM");
	is_str(cd_policy_action_str(SCMP_ACT_ERRNO(ENOSYS), buf, sizeof(buf)), "errno ENOSYS",
	       "action_str errno ENOSYS");
	is_str(cd_policy_action_str(SCMP_ACT_ERRNO(4000), buf, sizeof(buf)), "errno 4000",
	       "action_str errno without a name");
	is_str(cd_policy_action_str(0x12345678, buf, sizeof(buf)), "action 0x12345678",
	       "action_str of something else");

	is_str(cd_policy_cmp_str(CD_CMP_EQ), "==", "cmp_str ==");
	is_str(cd_policy_cmp_str(CD_CMP_NE), "!=", "cmp_str !=");
	is_str(cd_policy_cmp_str(CD_CMP_LT), "<", "cmp_str <");
	is_str(cd_policy_cmp_str(CD_CMP_LE), "<=", "cmp_str <=");
	is_str(cd_policy_cmp_str(CD_CMP_GT), ">", "cmp_str >");
	is_str(cd_policy_cmp_str(CD_CMP_GE), ">=", "cmp_str >=");
	is_str(cd_policy_cmp_str(CD_CMP_MASKED_EQ), "&", "cmp_str &");
	is_str(cd_policy_cmp_str((enum cd_cmp)42), "?", "cmp_str of something else");
}

/* Only a name the installed directory does not have falls back: a file that is there but
 * cannot be read fails (it may be an administrator's stricter one); a built-in includes
 * built-ins, never a file of the directory (another version's groups). */
static void built_in_fails_closed(void)
{
	static const char *const not_a_dir[] = { "/etc/passwd", NULL };
	const char *const here[] = { scratch, NULL };
	const char *const loops[] = { in_scratch("loops"), NULL };
	struct cd_policy p = { .search = here };
	struct cordon_error err = { 0 };
	char *path;

	path = cd_policy_find("default", not_a_dir, &err);
	ok(!path && err.code == ENOTDIR, "an installed directory that cannot be searched: refused, "
					  "not the built-in (%s)", err.msg);
	free(path);
	memset(&err, 0, sizeof(err));
	if (mkdir(loops[0], 0755) == 0 && symlink("default.policy",
						  in_scratch("loops/default.policy")) == 0) {
		path = cd_policy_find("default", loops, &err);
		ok(!path && err.code == ELOOP, "an installed file that cannot be read (a symlink "
					       "loop): refused, not the built-in");
		free(path);
	} else {
		skip("cannot make a symlink loop in the scratch directory", "an unreadable file");
	}
	unlink(in_scratch("loops/default.policy"));
	rmdir(loops[0]);
	memset(&err, 0, sizeof(err));
	path = cd_policy_find("strict", here, &err); /* the scratch has a groups.policy */
	ok(path && cd_policy_load(&p, path, "strict.policy", &err) == 0, "built-in strict: %s",
	   err.msg);
	ok(cd_strv_len(p.files_real) == 2 && strcmp(p.files_real[1], "built-in:groups") == 0,
	   "... its include of groups is the built-in one, not the directory's file");
	cd_policy_free(&p);
	free(path);
}

/* Where the installed directory lacks a name, the binary's own copy: the same rules as the
 * source tree's file, read from memory, includes too; nothing else looks like a built-in. */
static void built_in(void)
{
	static const char *const nowhere[] = { "/nonexistent-cordon-policies", NULL };
	struct cd_policy mem = { .search = nowhere }, file = { .search = search };
	struct cordon_error err = { 0 };
	char *path = cd_policy_find("strict", nowhere, &err);

	is_str(path, "built-in:strict", "a name not installed: the built-in one");
	ok(path && cd_policy_load(&mem, path, "strict.policy", &err) == 0, "built-in strict loads: %s",
	   err.msg);
	ok(cd_policy_load(&file, CORDON_TEST_POLICY_DIR "/strict.policy", "strict.policy", &err) == 0,
	   "the source tree's strict loads");
	ok(mem.n_rules == file.n_rules && mem.n_groups == file.n_groups && mem.n_rules > 0 &&
		   mem.default_action == file.default_action,
	   "built-in strict has the file's rules (%zu), groups (%zu) and default", file.n_rules,
	   file.n_groups);
	ok(cd_strv_len(mem.files) == 2 && strcmp(mem.files_real[1], "built-in:groups") == 0,
	   "its include of groups is the built-in groups");
	cd_policy_free(&mem);
	cd_policy_free(&file);
	free(path);
	memset(&err, 0, sizeof(err));
	path = cd_policy_find("built-in:strict", nowhere, &err);
	ok(!path && err.code == EINVAL, "\"built-in:strict\" given as a name is refused");
	free(path);
	built_in_fails_closed();
	memset(&err, 0, sizeof(err));
	path = cd_policy_find("nosuch", nowhere, &err);
	ok(!path && err.code == ENOENT, "a name neither installed nor built in: ENOENT");
	like_str(err.msg, "no policy \"nosuch\" in /nonexistent-cordon-policies, and none built in",
		 "... and the message says both");
	free(path);
}

static void test_find(void)
{
	struct cordon_error err = {0};
	char *path;

	path = cd_policy_find("default", search, &err);
	is_str(path, CORDON_TEST_POLICY_DIR "/default.policy", "find default in the search path");
	free(path);
	path = cd_policy_find(CORDON_TEST_POLICY_DIR "/strict.policy", search, &err);
	is_str(path, CORDON_TEST_POLICY_DIR "/strict.policy", "find a path as given");
	free(path);
	ok(cd_strv_len((char *const *)cd_policy_search_path()) == 1 &&
	       strcmp(cd_policy_search_path()[0], CORDON_POLICY_DIR) == 0,
	   "search path: the installed directory only, never the source tree");
	built_in();

	path = cd_policy_find("nosuch", search, &err);
	ok(!path && err.code == ENOENT, "find nosuch: ENOENT");
	like_str(err.msg, "no policy \"nosuch\" in " CORDON_TEST_POLICY_DIR ", and none built in",
		 "find nosuch: message");
	free(path);
	memset(&err, 0, sizeof(err));
	path = cd_policy_find("a b", search, &err);
	ok(!path && err.code == EINVAL, "find \"a b\": EINVAL");
	like_str(err.msg, "not a policy name", "find \"a b\": message");
	free(path);
	memset(&err, 0, sizeof(err));
	path = cd_policy_find("/nonexistent/x.policy", search, &err);
	ok(!path && err.code == ENOENT && strcmp(err.step, "seccomp-policy") == 0,
	   "find a missing path: ENOENT");
	free(path);
}

static void test_actions(void)
{
	static const struct {
		const char *text;
		uint32_t action;
	} actions[] = {
	    {"allow", SCMP_ACT_ALLOW},
	    {"log", SCMP_ACT_LOG},
	    {"kill", SCMP_ACT_KILL_PROCESS},
	    {"kill-process", SCMP_ACT_KILL_PROCESS},
	    {"kill-thread", SCMP_ACT_KILL_THREAD},
	    {"trap", SCMP_ACT_TRAP},
	    {"notify", SCMP_ACT_NOTIFY},
	    {"errno EPERM", SCMP_ACT_ERRNO(EPERM)},
	    {"errno ENOSYS", SCMP_ACT_ERRNO(ENOSYS)},
	    {"errno 1", SCMP_ACT_ERRNO(1)},
	    {"errno 4094", SCMP_ACT_ERRNO(4094)},
	    {"errno 0x10", SCMP_ACT_ERRNO(16)},
	};
	char text[128], what[64];

	for (size_t i = 0; i < CD_ELEMENTSOF(actions); i++) {
		snprintf(text, sizeof(text), "default %s\n", actions[i].text);
		snprintf(what, sizeof(what), "default %s", actions[i].text);
		parses(text, what);
		ok(P.default_set && P.default_action == actions[i].action && P.n_rules == 0,
		   "%s: default action 0x%08x", what, actions[i].action);

		/* the same as a rule (the default is something else) */
		snprintf(text, sizeof(text), "default errno 4000\n%s getpid gettid\n",
			 actions[i].text);
		snprintf(what, sizeof(what), "rule %s", actions[i].text);
		parses(text, what);
		is_uint(P.n_rules, 2, "%s: two targets, two rules", what);
		is_rule(0, SYS_getpid, actions[i].action, 0, "t.policy", 2,
			(unsigned)strlen(actions[i].text) + 2, what);
		is_rule(1, SYS_gettid, actions[i].action, 0, "t.policy", 2,
			(unsigned)strlen(actions[i].text) + 9, what);
	}
	parses("default allow", "default without a newline at the end");
	ok(P.default_set && P.default_action == SCMP_ACT_ALLOW, "default allow at end of file");
	ok(P.default_loc.line == 1 && P.default_loc.col == 1 &&
	       strcmp(P.default_loc.file, "t.policy") == 0,
	   "default_loc t.policy:1:1");
	parses("\n\n   default kill\n", "default after blank lines");
	ok(P.default_loc.line == 3 && P.default_loc.col == 4, "default_loc 3:4");
	parses("allow read\ndefault errno EPERM\n", "default after the rules");
	is_uint(P.default_action, SCMP_ACT_ERRNO(EPERM), "default after the rules: its action");
}

static void test_comments_continuations(void)
{
	parses("# a policy\n"
	       "default errno ENOSYS # trailing comment\n"
	       "allow read \\\n"
	       "\twrite # after a continuation\n"
	       "   # indented comment\n"
	       "allow \\\n"
	       "  close \\\n"
	       "  # a comment ends the continued statement\n"
	       "allow fstat\r\n"
	       "#",
	       "comments and continuations");
	is_uint(P.default_action, SCMP_ACT_ERRNO(ENOSYS), "comment after default: ignored");
	is_uint(P.n_rules, 4, "four rules");
	is_rule(0, SYS_read, SCMP_ACT_ALLOW, 0, "t.policy", 3, 7, "read");
	is_rule(1, SYS_write, SCMP_ACT_ALLOW, 0, "t.policy", 4, 2, "write, continued line");
	is_rule(2, SYS_close, SCMP_ACT_ALLOW, 0, "t.policy", 7, 3, "close, continued twice");
	is_rule(3, SYS_fstat, SCMP_ACT_ALLOW, 0, "t.policy", 9, 7, "fstat, CRLF line");
	parses("default allow # \\\nerrno EPERM mount\n",
	       "a backslash in a comment continues nothing");
	is_rule(0, SYS_mount, SCMP_ACT_ERRNO(EPERM), 0, "t.policy", 2, 13,
		"rule after the comment");
	fails("default allow\nallow read \\ write\n", "t.policy:2:12", "unexpected character '\\'",
	      "a backslash not before a newline");
	fails("# only a comment\n", "t.policy",
	      "t.policy: no default action (add a line such as "
	      "`default allow` or `default errno ENOSYS`)",
	      "comments only: no default");
}

static void test_conditions(void)
{
	const uint64_t all = UINT64_MAX;

	parses(
	    "default allow\n"
	    "errno EPERM ioctl(arg0 == 1, arg1 != 2, arg2 < 3, arg3 <= 4, arg4 > 5, arg5 >= 6)\n",
	    "every comparison");
	is_rule(0, SYS_ioctl, SCMP_ACT_ERRNO(EPERM), 6, "t.policy", 2, 13, "every comparison");
	is_cond(0, 0, 0, CD_CMP_EQ, all, 1, "==");
	is_cond(0, 1, 1, CD_CMP_NE, all, 2, "!=");
	is_cond(0, 2, 2, CD_CMP_LT, all, 3, "<");
	is_cond(0, 3, 3, CD_CMP_LE, all, 4, "<=");
	is_cond(0, 4, 4, CD_CMP_GT, all, 5, ">");
	is_cond(0, 5, 5, CD_CMP_GE, all, 6, ">=");

	parses("default allow\n"
	       "errno EPERM unshare(arg0 & CLONE_NEWUSER)\n"
	       "errno EPERM clone(arg0&CLONE_NEWUSER|CLONE_NEWNS==CLONE_NEWNS)\n"
	       "errno EPERM ioctl(arg1 & 0xffffffff == TIOCSTI)\n"
	       "errno EPERM personality(arg0 & 0)\n"
	       "errno EPERM socket(arg0 & 0xff == 0, arg2 == AF_INET | 0x100000000)\n",
	       "masked tests");
	is_uint(P.n_rules, 5, "masked tests: five rules");
	is_cond(0, 0, 0, CD_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER,
		"arg & FLAG: all its bits");
	is_cond(1, 0, 0, CD_CMP_MASKED_EQ, CLONE_NEWUSER | CLONE_NEWNS, CLONE_NEWNS,
		"arg & A|B == A, no blanks");
	is_cond(2, 0, 1, CD_CMP_MASKED_EQ, 0xffffffff, TIOCSTI, "arg & 0xffffffff == TIOCSTI");
	is_cond(3, 0, 0, CD_CMP_MASKED_EQ, 0, 0, "arg & 0: always true");
	is_cond(4, 0, 0, CD_CMP_MASKED_EQ, 0xff, 0, "masked == 0, then another condition");
	is_cond(4, 1, 2, CD_CMP_EQ, all, AF_INET | 0x100000000ull, "constant | number");
	is_rule(4, SYS_socket, SCMP_ACT_ERRNO(EPERM), 2, "t.policy", 6, 13, "socket rule");

	parses("default allow\n"
	       "errno EPERM lseek(arg0 == -1, arg1 >= -0x10, arg2 == 0755, arg3 == 0XABCdef)\n"
	       "errno EPERM read(arg0 == 18446744073709551615, arg1 == -9223372036854775808)\n"
	       "errno EPERM write(arg0 == 0, arg1 == 1 | 2 | 4 | 0x80000000)\n"
	       "errno EPERM prctl(arg0 == PR_SET_SECCOMP, arg1 == O_RDONLY)\n",
	       "numbers");
	is_cond(0, 0, 0, CD_CMP_EQ, all, UINT64_MAX, "-1");
	is_cond(0, 1, 1, CD_CMP_GE, all, (uint64_t)-16, "-0x10");
	is_cond(0, 2, 2, CD_CMP_EQ, all, 0755, "octal 0755");
	is_cond(0, 3, 3, CD_CMP_EQ, all, 0xabcdef, "hex 0XABCdef");
	is_cond(1, 0, 0, CD_CMP_EQ, all, UINT64_MAX, "2^64-1");
	is_cond(1, 1, 1, CD_CMP_EQ, all, 0x8000000000000000ull, "-2^63");
	is_cond(2, 0, 0, CD_CMP_EQ, all, 0, "zero");
	is_cond(2, 1, 1, CD_CMP_EQ, all, 0x80000007, "1 | 2 | 4 | 0x80000000");
	is_cond(3, 0, 0, CD_CMP_EQ, all, PR_SET_SECCOMP, "PR_SET_SECCOMP");
	is_cond(3, 1, 1, CD_CMP_EQ, all, O_RDONLY, "O_RDONLY is 0");

	parses("default allow\n"
	       "errno EPERM ioctl( arg1 == 1 , arg0 == 2 )\n"
	       "errno EPERM ioctl \\\n"
	       "  (arg1 == 3)\n",
	       "blanks and a continuation before the conditions");
	is_rule(0, SYS_ioctl, SCMP_ACT_ERRNO(EPERM), 2, "t.policy", 2, 13,
		"conditions in any order");
	is_cond(0, 0, 1, CD_CMP_EQ, all, 1, "first condition as written: arg1");
	is_cond(0, 1, 0, CD_CMP_EQ, all, 2, "second condition: arg0");
	is_rule(1, SYS_ioctl, SCMP_ACT_ERRNO(EPERM), 1, "t.policy", 3, 13, "( on the next line");
	is_cond(1, 0, 1, CD_CMP_EQ, all, 3, "continued condition");
}

static void test_groups(void)
{
	const struct cd_policy_group *g;

	parses("default allow\n"
	       "group @a read\n"
	       "group @b @a write read\n"
	       "group @c @b close @a\n"
	       "group @d-1_x getpid\n"
	       "kill @c\n"
	       "errno EPERM @d-1_x mount\n",
	       "nested groups");
	is_uint(P.n_groups, 4, "four groups");
	g = group("c");
	ok(g && g->n_members == 3 && group_has(g, "read") && group_has(g, "write") &&
	       group_has(g, "close"),
	   "@c = read write close (nested, no duplicates)");
	g = group("b");
	ok(g && g->n_members == 2 && g->members[0].nr == SYS_read && g->members[1].nr == SYS_write,
	   "@b = read write (members' numbers)");
	ok(g && g->loc.line == 3 && g->loc.col == 7 && strcmp(g->loc.file, "t.policy") == 0,
	   "@b defined at t.policy:3:7");
	ok(group("d-1_x") != NULL, "group names take - and _ and digits");
	is_uint(P.n_rules, 5, "kill @c: three rules, errno @d-1_x mount: two");
	is_rule(0, SYS_read, SCMP_ACT_KILL_PROCESS, 0, "t.policy", 6, 6, "@c read");
	is_rule(1, SYS_write, SCMP_ACT_KILL_PROCESS, 0, "t.policy", 6, 6, "@c write");
	is_rule(2, SYS_close, SCMP_ACT_KILL_PROCESS, 0, "t.policy", 6, 6, "@c close");
	is_rule(3, SYS_getpid, SCMP_ACT_ERRNO(EPERM), 0, "t.policy", 7, 13, "@d-1_x getpid");
	is_rule(4, SYS_mount, SCMP_ACT_ERRNO(EPERM), 0, "t.policy", 7, 20, "mount after a group");
	is_str(P.rules[0].name, "read", "a rule from a group keeps the member's name");

	parses("default allow\ngroup @other umount pciconfig_read\nerrno EPERM @other\n",
	       "syscalls this architecture lacks");
	ok(P.n_rules == 2 && P.rules[0].nr < 0 && P.rules[1].nr < 0,
	   "umount and pciconfig_read: negative numbers (not on x86_64)");
	is_str(P.n_rules ? P.rules[0].name : NULL, "umount", "named umount");
}

static void test_duplicates(void)
{
	parses("default allow\n"
	       "errno EPERM read read\n"
	       "errno EPERM read\n"
	       "errno EPERM ioctl(arg0 == 1, arg1 == 2) ioctl(arg1 == 2, arg0 == 1)\n"
	       "group @g read write\n"
	       "errno EPERM @g\n",
	       "duplicates");
	is_uint(P.n_rules, 3, "duplicate rules are merged: read, ioctl, write");
	is_uint(rules_for(SYS_read), 1, "one rule for read");
	is_rule(0, SYS_read, SCMP_ACT_ERRNO(EPERM), 0, "t.policy", 2, 13, "the first one stays");
	is_uint(rules_for(SYS_ioctl), 1, "same conditions in another order: one rule");
	is_uint(rules_for(SYS_write), 1, "write from @g");
	parses("default allow\n"
	       "errno EPERM ioctl(arg1 == 1)\n"
	       "errno EPERM ioctl(arg1 == 2)\n"
	       "errno EPERM ioctl(arg1 & 1)\n"
	       "errno EPERM ioctl(arg1 != 1)\n"
	       "errno EPERM ioctl(arg1 == 1, arg2 == 1)\n"
	       "kill ioctl(arg1 == 3)\n",
	       "different conditions");
	is_uint(P.n_rules, 6, "different conditions: six rules");
}

static void test_includes(void)
{
	char text[PATH_MAX + 128], where[PATH_MAX + 64];
	const struct cd_policy_group *g;
	int r;

	/* a shipped policy by name, from the search path */
	parses("include groups\ndefault allow\nerrno EPERM @mount\n", "include groups");
	ok(P.n_groups > 20 && group("mount") && group("io-uring") && group("startup"),
	   "include groups: its groups are defined");
	is_uint(P.n_rules, 12, "@mount: twelve syscalls");
	is_rule(0, SYS_mount, SCMP_ACT_ERRNO(EPERM), 0, "t.policy", 3, 13, "@mount: mount first");
	g = group("mount");
	ok(g && g->loc.line == 12 && g->loc.col == 7 && strcmp(g->loc.file, "groups.policy") == 0,
	   "@mount defined at groups.policy:12:7");
	ok(cd_strv_len(P.files) == 2 && strcmp(P.files[0], "t.policy") == 0 &&
	       strcmp(P.files[1], "groups.policy") == 0,
	   "files: t.policy groups.policy");
	is_str(cd_strv_len(P.files_real) == 2 ? P.files_real[1] : NULL,
	       CORDON_TEST_POLICY_DIR "/groups.policy", "files_real: the real path");

	parses("include default\n", "include default (which includes groups)");
	ok(P.default_set && P.default_action == SCMP_ACT_ALLOW, "include default: default allow");
	ok(P.default_loc.line == 11 && strcmp(P.default_loc.file, "default.policy") == 0,
	   "default_loc default.policy:11");
	ok(rules_for(SYS_mount) == 1 && rules_for(SYS_clone3) == 1 && rules_for(SYS_ioctl) == 2,
	   "include default: mount, clone3, 2x ioctl");
	is_uint(cd_strv_len(P.files), 3, "files: t.policy default.policy groups.policy");

	parses("include strict\n", "include strict");
	is_uint(P.default_action, SCMP_ACT_ERRNO(ENOSYS), "strict: default errno ENOSYS");

	/* include once */
	parses("include groups\ninclude groups\ninclude \"" CORDON_TEST_POLICY_DIR
	       "/groups.policy\"\ninclude default\n",
	       "include groups three times, and default which includes it too");
	is_uint(cd_strv_len(P.files), 3, "each file read once");
	fails("include default\ndefault kill\n", "t.policy:2:1",
	      "the default action is already set at default.policy:11:1",
	      "default twice: included, then here");
	fails("default kill\ninclude default\n", "default.policy:11:1",
	      "the default action is already set at t.policy:1:1",
	      "default twice: here, then included");
	fails("include groups\ndefault allow\ngroup @mount read\n", "t.policy:3:7",
	      "group @mount is already defined at groups.policy:12:7",
	      "redefining a group of groups.policy");

	/* paths relative to the file that includes them, names next to it */
	r = load(in_scratch("main.policy"), "main.policy");
	if (!is_int(r, 0, "load main.policy from %s", scratch))
		diag("error: %s", E.msg);
	ok(group("mine") && !group("mount"),
	   "include groups: the groups.policy next to main.policy");
	is_uint(P.n_rules, 4, "main.policy: mount, clone3, acct, getppid");
	is_rule(0, SYS_mount, SCMP_ACT_ERRNO(EPERM), 0, "sub/child.policy", 1, 13,
		"include \"sub/child.policy\"");
	is_rule(1, SYS_clone3, SCMP_ACT_ERRNO(ENOSYS), 0, "../leaf.policy", 1, 14,
		"include \"../leaf.policy\" from sub/: relative to sub/");
	is_rule(2, SYS_acct, SCMP_ACT_KILL_PROCESS, 0, "sibling.policy", 2, 6,
		"include sibling: sibling.policy next to main.policy");
	is_rule(3, SYS_getppid, SCMP_ACT_ERRNO(EPERM), 0, "main.policy", 5, 13, "@mine");
	is_str(cd_strv_len(P.files_real) > 3 ? P.files_real[3] : NULL, in_scratch("leaf.policy"),
	       "files_real: leaf.policy resolved");

	r = load(in_scratch("diamond.policy"), "diamond.policy");
	if (!is_int(r, 0, "diamond: x and y both include groups and common"))
		diag("error: %s", E.msg);
	ok(rules_for(SYS_getuid) == 1 && rules_for(SYS_getppid) == 1 && P.n_groups == 2,
	   "diamond: common read once");
	is_uint(cd_strv_len(P.files), 5, "diamond: five files");

	/* a quoted path without '/' is a path too, next to the including file */
	r = load(in_scratch("quoted.policy"), "quoted.policy");
	if (!is_int(r, 0, "include \"sibling.policy\": next to quoted.policy"))
		diag("error: %s", E.msg);
	is_str(cd_strv_len(P.files) == 2 ? P.files[1] : NULL, "sibling.policy",
	       "include \"sibling.policy\": displayed as written");
	is_rule(0, SYS_acct, SCMP_ACT_KILL_PROCESS, 0, "sibling.policy", 2, 6,
		"include \"sibling.policy\": its rule");
	/* from memory, such a path is relative to the current directory (/ here) */
	fails("default allow\ninclude \"groups\"\n", "t.policy:2:1",
	      "cannot open groups: No such file or directory",
	      "include \"groups\" from memory: a path, not a name");

	/* errors */
	snprintf(text, sizeof(text), "default allow\ninclude \"%s\"\n", in_scratch("bad.policy"));
	snprintf(where, sizeof(where), "%s:2:7", in_scratch("bad.policy"));
	fails(text, where, "unknown syscall \"opne\"", "error in an included file: its location");
	r = load(in_scratch("a.policy"), "a.policy");
	is_refused(r, "b.policy:1:1", "include cycle: a.policy includes itself", "include cycle");
	r = load(in_scratch("self.policy"), "self.policy");
	is_refused(r, "self.policy:3:1", "include cycle: ./self.policy includes itself",
		   "a file including itself");
	snprintf(text, sizeof(text), "include \"%s\"\n", in_scratch("a.policy"));
	fails(text, "b.policy:1:1", "include cycle: a.policy includes itself",
	      "include cycle from a policy in memory");

	r = load(in_scratch("c2.policy"), "c2.policy");
	if (!is_int(r, 0, "9 files chained (8 nested includes): fine"))
		diag("error: %s", E.msg);
	is_uint(rules_for(SYS_getpid), 1, "9 files chained: the rule at the end");
	r = load(in_scratch("c1.policy"), "c1.policy");
	is_refused(r, "c9.policy:1:1", "includes nested too deep (at most 8)",
		   "10 files chained: too deep");
	snprintf(text, sizeof(text), "include \"%s\"\n", in_scratch("c2.policy"));
	fails(text, "c9.policy:1:1", "includes nested too deep (at most 8)",
	      "in memory + 9 files chained: too deep");
	snprintf(text, sizeof(text), "include \"%s\"\n", in_scratch("c3.policy"));
	parses(text, "in memory + 8 files chained");

	fails("default allow\ninclude \"/nonexistent/x.policy\"\n", "t.policy:2:1",
	      "cannot open /nonexistent/x.policy: No such file or directory",
	      "include of a missing path");
	fails("default allow\ninclude nosuch\n", "t.policy:2:9",
	      "cannot find policy \"nosuch\" next to t.policy or in " CORDON_TEST_POLICY_DIR,
	      "include of a missing name");
	snprintf(text, sizeof(text), "default allow\ninclude \"%s\"\n", in_scratch("dir"));
	snprintf(where, sizeof(where), "cannot read %s: Invalid argument", in_scratch("dir"));
	fails(text, "t.policy:2:1", where, "include of a directory");
	snprintf(text, sizeof(text), "default allow\ninclude \"%s\"\n", in_scratch("big.policy"));
	snprintf(where, sizeof(where), "cannot read %s: larger than 1 MiB",
		 in_scratch("big.policy"));
	fails(text, "t.policy:2:1", where, "include of a file over 1 MiB");
	fails("default allow\ninclude 5\n", "t.policy:2:9",
	      "expected a policy name or \"path\" after \"include\", got \"5\"",
	      "include of a number");
	fails("default allow\ninclude\n", "t.policy:2:8",
	      "expected a policy name or \"path\" after \"include\", got end of line",
	      "include without a name");
	fails("default allow\ninclude groups strict\n", "t.policy:2:16",
	      "expected end of line, got \"strict\"", "include of two names");
	fails("default allow\ninclude \"groups\n", "t.policy:2:9",
	      "unterminated string: expected '\"' before the end of the line",
	      "unterminated string, newline");
	fails("default allow\ninclude \"groups", "t.policy:2:9", "unterminated string",
	      "unterminated string, end of file");

	/* cd_policy_load's own errors */
	r = load("/nonexistent/x.policy", "x.policy");
	ok(r == -ENOENT && strcmp(E.step, "seccomp-policy") == 0, "load a missing file: ENOENT");
	is_str(E.msg, "/nonexistent/x.policy: No such file or directory", "load a missing file");
	r = load(in_scratch("dir"), "dir");
	ok(r == -EINVAL && strcmp(E.step, "seccomp-policy") == 0, "load a directory: EINVAL");
	like_str(E.msg, ": not a regular file", "load a directory: message");
	r = load(in_scratch("big.policy"), "big.policy");
	ok(r == -EFBIG, "load a file over 1 MiB: EFBIG");
	like_str(E.msg, ": larger than 1 MiB", "load a file over 1 MiB: message");
}

static void test_errors(void)
{
	char text[512], where[64];

	/* names */
	fails("default allow\nallow opne\n", "t.policy:2:7", "unknown syscall \"opne\"",
	      "unknown syscall");
	fails("default allow\ngroup @g read opne\n", "t.policy:2:15", "unknown syscall \"opne\"",
	      "unknown syscall in a group");
	fails("default allow\nerrno EPERM read(arg0 == 1) @nope\n", "t.policy:2:29",
	      "unknown group \"@nope\" (groups are defined with `group @nope ...` before use",
	      "unknown group");
	fails("default allow\ngroup @a read @nope\n", "t.policy:2:15", "unknown group \"@nope\"",
	      "unknown group in a group");
	fails("default allow\nerrno EPERM @a\ngroup @a read\n", "t.policy:2:13",
	      "unknown group \"@a\"", "group used before its definition");
	fails(
	    "default alow\n", "t.policy:1:9",
	    "unknown action \"alow\": expected allow, errno ERRNO, kill, kill-thread, log, trap or "
	    "notify",
	    "unknown action");
	fails("default\n", "t.policy:1:8", "unknown action end of line",
	      "default without an action");
	fails("default 5\n", "t.policy:1:9", "unknown action \"5\"", "default 5");
	fails("default allow\nalow read\n", "t.policy:2:1",
	      "expected default, include, group or an action (allow, errno, kill, log, trap, "
	      "notify), got \"alow\"",
	      "unknown statement");
	fails("default allow\n(read)\n", "t.policy:2:1",
	      "expected default, include, group or an action", "statement starting with '('");

	/* errno */
	fails("default allow\nerrno\n", "t.policy:2:6",
	      "expected an errno name or number after \"errno\", got end of line", "missing errno");
	fails("default errno", "t.policy:1:14",
	      "expected an errno name or number after \"errno\", got end of file",
	      "missing errno at end of file");
	fails("default errno \"EPERM\"\n", "t.policy:1:15",
	      "expected an errno name or number after \"errno\", got \"EPERM\"",
	      "errno as a string");
	fails("default errno EPERMS\n", "t.policy:1:15",
	      "unknown errno \"EPERMS\" (use a name such as EPERM or ENOSYS, or a number)",
	      "unknown errno");
	fails("default allow\nerrno eperm read\n", "t.policy:2:7", "unknown errno \"eperm\"",
	      "errno names are case-sensitive");
	fails("default errno 0\n", "t.policy:1:15", "errno 0 out of range (1 to 4094)", "errno 0");
	fails("default errno 4095\n", "t.policy:1:15", "errno 4095 out of range (1 to 4094)",
	      "errno 4095 (libseccomp refuses it)");
	fails("default allow\nkill getpid\nerrno 4095 getuid\n", "t.policy:3:7",
	      "errno 4095 out of range (1 to 4094)", "errno 4095 in a rule");
	fails("default errno 4096\n", "t.policy:1:15", "errno 4096 out of range (1 to 4094)",
	      "errno 4096");
	fails("default errno -1\n", "t.policy:1:15", "errno -1 out of range (1 to 4094)",
	      "errno -1");
	fails("default errno 0x100000001\n", "t.policy:1:15", "errno 0x100000001 out of range",
	      "errno 2^32+1 (no truncation)");

	/* values */
	fails("default allow\nallow ioctl(arg1 == TIOCSTX)\n", "t.policy:2:21",
	      "unknown constant \"TIOCSTX\"", "unknown constant");
	fails("default allow\nallow ioctl(arg1 & 0xff | NOPE)\n", "t.policy:2:27",
	      "unknown constant \"NOPE\"", "unknown constant after |");
	fails("default allow\nallow ioctl(arg1 == 12abc)\n", "t.policy:2:21",
	      "bad number \"12abc\"", "bad number");
	fails("default allow\nallow ioctl(arg1 == 0x)\n", "t.policy:2:21", "bad number \"0x\"",
	      "bad number 0x");
	fails("default allow\nallow ioctl(arg1 == 089)\n", "t.policy:2:21", "bad number \"089\"",
	      "bad octal number");
	fails("default allow\nallow ioctl(arg1 == 1-2)\n", "t.policy:2:21", "bad number \"1-2\"",
	      "no arithmetic");
	fails("default allow\nallow ioctl(arg1 == 0x10000000000000000)\n", "t.policy:2:21",
	      "number \"0x10000000000000000\" out of range (64 bits)", "number out of range");
	fails("default allow\nallow ioctl(arg1 == 18446744073709551616)\n", "t.policy:2:21",
	      "number \"18446744073709551616\" out of range (64 bits)", "2^64 out of range");
	fails("default allow\nallow ioctl(arg1 == -9223372036854775809)\n", "t.policy:2:21",
	      "number \"-9223372036854775809\" out of range (64 bits)", "-2^63-1 out of range");
	fails("default allow\nallow ioctl(arg1 == )\n", "t.policy:2:21",
	      "expected a number or a constant, got ')'", "missing value");
	fails("default allow\nallow ioctl(arg1 == 1 |)\n", "t.policy:2:24",
	      "expected a number or a constant, got ')'", "missing value after |");
	fails("default allow\nallow ioctl(arg1 == @g)\n", "t.policy:2:21",
	      "expected a number or a constant, got \"@g\"", "a group as a value");

	/* lexer */
	memset(text, 0, sizeof(text));
	strcpy(text, "default allow\nallow ");
	memset(text + strlen(text), 'a', TOKEN_MAX_TEST);
	fails(text, "t.policy:2:7", "token too long (at most 127 characters)", "token too long");
	text[strlen(text) - 1] = '\0';
	fails(text, "t.policy:2:7", "unknown syscall \"aaaa", "127 characters: a token");
	snprintf(text, sizeof(text), "default allow\ninclude \"%0128d\"\n", 0);
	fails(text, "t.policy:2:9", "token too long", "string too long");
	snprintf(text, sizeof(text), "default allow\nallow read(arg0 == %0128d)\n", 0);
	fails(text, "t.policy:2:20", "token too long", "number too long");
	fails("default allow\nallow read;\n", "t.policy:2:11", "unexpected character ';'",
	      "unexpected character");
	fails("default allow\nallow read(arg0 == 1) }\n", "t.policy:2:23",
	      "unexpected character '}'", "unexpected character after a rule");
	fails("default allow\nallow read\x01\n", "t.policy:2:11", "unexpected byte 0x01",
	      "control byte");
	fails("default allow\nallow read \xc3\xa9\n", "t.policy:2:12", "unexpected byte 0xc3",
	      "UTF-8");
	fails("default allow\nallow ioctl(arg1 = 5)\n", "t.policy:2:18",
	      "unexpected '=' (comparisons are written ==)", "= instead of ==");
	fails("default allow\nerrno EPERM @\n", "t.policy:2:13", "expected a group name after '@'",
	      "@ alone");
	fails("default allow\nerrno EPERM -read\n", "t.policy:2:13", "unexpected character '-'",
	      "- before a name");

	/* conditions */
	fails("default allow\nallow read(arg6 == 1)\n", "t.policy:2:12",
	      "expected an argument arg0 to arg5, got \"arg6\"", "arg6");
	fails("default allow\nallow read(argx == 1)\n", "t.policy:2:12",
	      "expected an argument arg0 to arg5, got \"argx\"", "argx");
	fails("default allow\nallow read(arg01 == 1)\n", "t.policy:2:12",
	      "expected an argument arg0 to arg5, got \"arg01\"", "arg01");
	fails("default allow\nallow read(1 == arg0)\n", "t.policy:2:12",
	      "expected an argument arg0 to arg5, got \"1\"", "value first");
	fails("default allow\nallow read()\n", "t.policy:2:12",
	      "expected an argument arg0 to arg5, got ')'", "no conditions in ()");
	fails("default allow\nallow read(arg0 == 1,)\n", "t.policy:2:22",
	      "expected an argument arg0 to arg5, got ')'", "trailing comma");
	fails("default allow\nallow read(arg0 == 1, arg0 == 2)\n", "t.policy:2:23",
	      "arg0 is tested twice in one rule (write two rules instead)",
	      "argument tested twice");
	fails("default allow\nallow read(arg2 & 1, arg1 == 0, arg2 == 2)\n", "t.policy:2:33",
	      "arg2 is tested twice", "argument tested twice, masked first");
	fails(
	    "default allow\nallow read(arg0==0,arg1==1,arg2==2,arg3==3,arg4==4,arg5==5,arg0==6)\n",
	    "t.policy:2:60", "too many conditions (one per argument)", "seven conditions");
	fails("default allow\nallow read(arg0 1)\n", "t.policy:2:17",
	      "expected a comparison (==, !=, <, <=, >, >= or &), got \"1\"", "missing comparison");
	fails("default allow\nallow read(arg0)\n", "t.policy:2:16",
	      "expected a comparison (==, !=, <, <=, >, >= or &), got ')'", "argument alone");
	fails("default allow\nallow read(arg0 & 1 != 1)\n", "t.policy:2:21",
	      "a masked test compares with == only: expected '==', ',' or ')', got '!='",
	      "masked test with !=");
	fails("default allow\nallow read(arg0 & 1 >= 1)\n", "t.policy:2:21",
	      "a masked test compares with == only: expected '==', ',' or ')', got '>='",
	      "masked test with >=");
	fails("default allow\nallow read(arg0 & 1 == 2)\n", "t.policy:2:12",
	      "arg0 & 0x1 can never equal 0x2", "impossible mask/value");
	fails("default allow\nallow read(arg3 & CLONE_NEWNS == CLONE_NEWUSER)\n", "t.policy:2:12",
	      "arg3 & 0x20000 can never equal 0x10000000", "impossible mask/value, constants");
	fails("default allow\nallow read(arg0 == 1 arg1 == 2)\n", "t.policy:2:22",
	      "expected ',' or ')', got \"arg1\"", "missing comma");
	fails("default allow\nallow read(arg0 == 1\n", "t.policy:2:21",
	      "expected ',' or ')', got end of line", "missing )");
	fails("default allow\nallow read(arg0 == 1", "t.policy:2:21",
	      "expected ',' or ')', got end of file", "missing ) at end of file");
	fails("default allow\nallow read(arg0 == 1;\n", "t.policy:2:21", "unexpected character ';'",
	      "; instead of )");

	/* conflicts */
	fails("default allow\nerrno EPERM ioctl\nallow ioctl(arg1 == 5)\n", "t.policy:3:7",
	      "ioctl: \"allow\" conflicts with \"errno EPERM\" at t.policy:2:13 " CONFLICT_UNCOND,
	      "unconditional, then conditional of another action");
	fails("default allow\nallow ioctl(arg1 == 5)\nerrno EPERM ioctl\n", "t.policy:3:13",
	      "ioctl: \"errno EPERM\" conflicts with \"allow\" at t.policy:2:7 " CONFLICT_UNCOND,
	      "conditional, then unconditional of another action");
	fails("default allow\nerrno EPERM read\nkill read\n", "t.policy:3:6",
	      "read: \"kill\" conflicts with \"errno EPERM\" at t.policy:2:13 " CONFLICT_UNCOND,
	      "two unconditional rules with two actions");
	fails("default allow\nerrno EPERM read\nerrno ENOSYS read\n", "t.policy:3:14",
	      "read: \"errno ENOSYS\" conflicts with \"errno EPERM\" at t.policy:2:13",
	      "two errnos");
	fails("default allow\nerrno EPERM ioctl(arg1 == 5, arg0 == 1)\n"
	      "kill ioctl(arg0 == 1, arg1 == 5)\n",
	      "t.policy:3:6",
	      "ioctl: \"kill\" conflicts with \"errno EPERM\" at t.policy:2:13 " CONFLICT_SUBSET,
	      "same conditions with two actions");
	fails("default allow\ngroup @g read write\nerrno EPERM @g\nallow write(arg0 == 1)\n",
	      "t.policy:4:7",
	      "write: \"allow\" conflicts with \"errno EPERM\" at t.policy:3:13 " CONFLICT_UNCOND,
	      "conflict with a rule from a group");
	fails("default allow\ngroup @g read write\nallow write(arg0 == 1)\nerrno EPERM @g\n",
	      "t.policy:4:13",
	      "write: \"errno EPERM\" conflicts with \"allow\" at t.policy:3:7 " CONFLICT_UNCOND,
	      "conflict through a group, located at the group");
	fails("default allow\nkill-process read\nkill read(arg0 == 1)\nlog read\n", "t.policy:4:5",
	      "read: \"log\" conflicts with \"kill\" at t.policy:2:14", "kill and kill-process");

	/* statements */
	fails("default allow\ndefault kill\n", "t.policy:2:1",
	      "the default action is already set at t.policy:1:1", "default set twice");
	fails("default allow\n  default allow\n", "t.policy:2:3",
	      "the default action is already set at t.policy:1:1", "default set twice, the same");
	fails("allow read\n", "t.policy", "t.policy: no default action", "no default");
	fails("", "t.policy", "t.policy: no default action", "empty policy");
	fails("default allow kill\n", "t.policy:1:15", "expected end of line, got \"kill\"",
	      "default with two actions");
	fails("default errno EPERM read\n", "t.policy:1:21", "expected end of line, got \"read\"",
	      "default with a target");
	fails("default allow (\n", "t.policy:1:15", "expected end of line, got '('",
	      "default then a punctuation");
	fails("default allow\ngroup @a read\ngroup @a write\n", "t.policy:3:7",
	      "group @a is already defined at t.policy:2:7", "group redefined");
	fails("default allow\ngroup @g\n", "t.policy:2:9", "expected the syscalls of group @g",
	      "empty group");
	fails("default allow\ngroup @g # nothing\n", "t.policy:2:19",
	      "expected the syscalls of group @g", "empty group with a comment");
	fails("default allow\ngroup read write\n", "t.policy:2:7",
	      "expected a group name (@name) after \"group\", got \"read\"", "group without @");
	fails("default allow\ngroup\n", "t.policy:2:6",
	      "expected a group name (@name) after \"group\", got end of line", "group alone");
	fails("default allow\ngroup @g read 5\n", "t.policy:2:15",
	      "expected a syscall name or @group, got \"5\"", "number in a group");
	fails("default allow\ngroup @g read(arg0 == 1)\n", "t.policy:2:14",
	      "expected a syscall name or @group, got '('", "conditions in a group");
	fails("default allow\nerrno EPERM\n", "t.policy:2:12",
	      "expected a syscall name or @group after \"errno\", got end of line",
	      "rule without a target");
	fails("default allow\nallow # nothing\n", "t.policy:2:16",
	      "expected a syscall name or @group after \"allow\", got end of line",
	      "rule without a target, comment");
	fails("default allow\nkill", "t.policy:2:5",
	      "expected a syscall name or @group after \"kill\", got end of file",
	      "rule without a target at end of file");
	fails("default allow\nallow read 5\n", "t.policy:2:12",
	      "expected a syscall name or @group, got \"5\"", "a number as a target");
	fails("default allow\nallow \"read\"\n", "t.policy:2:7",
	      "expected a syscall name or @group, got \"read\"", "a string as a target");

	/* a group takes no conditions */
	is_int(parse("default allow\ngroup @g read\nerrno EPERM @g(arg0 == 1)\n"), -EINVAL,
	       "group with conditions: refused");
	ok(starts_with(E.msg, "t.policy:3:15: "), "group with conditions: at the '('");
	like_str(E.msg, "a group cannot take conditions (@g): write the syscalls out",
		 "group with conditions: the message says so");
	is_uint(P.n_rules, 0, "group with conditions: no rule added before the refusal");

	/* the first error wins, and the location of a later line */
	snprintf(where, sizeof(where), "t.policy:%d:7", 40);
	text[0] = '\0';
	for (int i = 1; i < 40; i++)
		strcat(text, i == 1 ? "default allow\n" : "\n");
	strcat(text, "allow opne opne2\n");
	fails(text, where, "unknown syscall \"opne\"", "line 40");
}

/* One rule's conditions include the other's: libseccomp keeps one of the two (the wider one
 * swallows the narrower, or it refuses the second with EEXIST). */
static void test_overlaps(void)
{
	fails("default kill\nallow read(arg0 == 1)\nerrno EPERM read(arg0 == 1, arg1 == 2)\n",
	      "t.policy:3:13",
	      "read: \"errno EPERM\" conflicts with \"allow\" at t.policy:2:7 " CONFLICT_SUBSET,
	      "narrower rule after a wider one of another action");
	fails("default kill\nerrno EPERM read(arg0 == 1, arg1 == 2)\nallow read(arg0 == 1)\n",
	      "t.policy:3:7",
	      "read: \"allow\" conflicts with \"errno EPERM\" at t.policy:2:13 " CONFLICT_SUBSET,
	      "wider rule after a narrower one of another action");
	fails("default kill\nallow ioctl(arg0 == 1)\n"
	      "errno EPERM ioctl(arg2 == 0, arg1 & 0xffffffff == TIOCSTI, arg0 == 1)\n",
	      "t.policy:3:13", "ioctl: \"errno EPERM\" conflicts with \"allow\" at t.policy:2:7",
	      "narrower rule, conditions in another order");
	parses("default allow\nerrno EPERM read(arg0 == 1)\nkill read(arg1 == 2)\n",
	       "conditions on different arguments: neither includes the other");
	is_uint(P.n_rules, 2, "different arguments: two rules");
	parses("default allow\nerrno EPERM read(arg0 == 1, arg1 == 3)\n"
	       "kill read(arg0 == 1, arg1 == 2)\n",
	       "a common condition, then different ones");
	is_uint(P.n_rules, 2, "a common condition: two rules");
	parses(
	    "default allow\nerrno EPERM read(arg0 == 1)\nerrno EPERM read(arg0 == 1, arg1 == 2)\n",
	    "narrower rule of the same action");
	is_uint(P.n_rules, 2, "same action: both kept");
}

/* Bugs found by review and fuzzing, and their fixes. */
static void test_fixed_bugs(void)
{
	struct sock_filter far_load[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0xfffffffc),
					  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS) };
	struct sock_filter wrap_jump[] = { BPF_JUMP(BPF_JMP | BPF_JA, 0xffffffff, 0, 0),
					   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS) };
	struct cd_filter f = { 0 };
	const char *const no_dirs[] = { NULL };
	struct cordon_error e = { 0 };
	char *found;

	parses("default allow\r\nerrno EPERM mount \\\r\n  umount2\r\n", "CRLF: a continuation");
	is_uint(P.n_rules, 2, "CRLF: both targets of the continued line");
	fails("default allow\nerrno EPERM read(arg0 == 1)\nkill read(arg0 & 0xffffffffffffffff == 1)\n",
	      "t.policy:3:6", "conflicts with \"errno EPERM\" at t.policy:2:13",
	      "a full 64-bit mask is ==: the same condition with two actions");
	if (mkfifo(in_scratch("fifo.policy"), 0644) == 0) {
		char text[PATH_MAX + 64];

		snprintf(text, sizeof(text), "default allow\ninclude \"%s\"\n",
			 in_scratch("fifo.policy"));
		fails(text, "t.policy:2:1", "cannot read", "include of a FIFO: refused, not a hang");
	} else {
		skip("mkfifo failed", "include of a FIFO");
	}
	fails("default allow\ninclude \"/dev/null\"\n", "t.policy:2:1", "cannot read",
	      "include of a device: refused without opening it");
	found = cd_policy_find("nosuch", no_dirs, &e);
	ok(!found && like_str(e.msg, "no policy directory", "empty search path: says so"),
	   "cd_policy_find with an empty search path: NULL, no overread");
	free(found);
	found = cd_policy_find("nosuch", NULL, &e);
	ok(!found, "cd_policy_find with no search path: NULL");
	free(found);
	found = cd_policy_find("default", NULL, &e);
	is_str(found, "built-in:default", "cd_policy_find with no search path: a built-in name still");
	free(found);
	f.insns = far_load;
	f.len = 2;
	is_uint(cd_filter_eval(&f, AUDIT_ARCH_X86_64, 0, (uint64_t[6]){ 0 }), SECCOMP_RET_ALLOW,
		"eval: a load past seccomp_data (offset wraps) is refused, not read");
	f.insns = wrap_jump;
	is_uint(cd_filter_eval(&f, AUDIT_ARCH_X86_64, 0, (uint64_t[6]){ 0 }), SECCOMP_RET_ALLOW,
		"eval: a jump out of the program ends it, no endless loop");
}

/* --- the compiled filter --- */

static uint32_t eval(const struct cd_filter *f, int nr, uint64_t a0, uint64_t a1)
{
	uint64_t args[6] = {a0, a1, 0, 0, 0, 0};

	return cd_filter_eval(f, AUDIT_ARCH_X86_64, nr, args);
}

static int compile(const struct cd_policy *p, bool log, bool optimize, struct cd_filter *f,
		   const char *what)
{
	struct cordon_error err = {0};
	int r = cd_filter_compile(p, log, optimize, f, &err);

	if (!is_int(r, 0, "%s: compiles", what))
		diag("error: %s: %s", err.step, err.msg);
	return r;
}

/* Under valgrind, libseccomp finds no seccomp() and refuses the kill-process action. */
static void probe_seccomp(void)
{
	struct cordon_error err = {0};
	struct cd_filter f;
	uint32_t action = SECCOMP_RET_KILL_PROCESS;
	int r;

	parses("default allow\n", "probe");
	r = cd_filter_compile(&P, false, false, &f, &err);
	cd_filter_done(&f);
	if (r == 0) {
		seccomp_usable = true;
		return;
	}
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0 && errno == ENOSYS) {
		diag("no seccomp() system call here (valgrind?): %s", err.msg);
		return;
	}
	seccomp_usable = true; /* let the tests below fail and say why */
}

static uint32_t eval_args(const struct cd_filter *f, int nr, uint64_t a0, uint64_t a1,
			  uint64_t a2, uint64_t a3)
{
	uint64_t args[6] = { a0, a1, a2, a3, 0, 0 };

	return cd_filter_eval(f, AUDIT_ARCH_X86_64, nr, args);
}

/* Every call of the baseline that sets a mode, each bit it refuses on its own: a rule removed
 * (one call, one bit) fails here. Each call's control: the same mode without the bits passes. */
static void baseline_modes(const struct cd_filter *f)
{
	static const struct {
		const char *name;
		int nr;
		int mode_arg;	/* which argument is the mode */
		uint64_t a[4];	/* the other arguments */
	} calls[] = {
		{ "chmod", SYS_chmod, 1, { 0 } },
		{ "fchmod", SYS_fchmod, 1, { 3 } },
		{ "fchmodat", SYS_fchmodat, 2, { (uint64_t)AT_FDCWD } },
		{ "fchmodat2", 452, 2, { (uint64_t)AT_FDCWD } },
		{ "creat", SYS_creat, 1, { 0 } },
		{ "mknod", SYS_mknod, 1, { 0 } },
		{ "mknodat", SYS_mknodat, 2, { (uint64_t)AT_FDCWD } },
		{ "open O_CREAT", SYS_open, 2, { 0, O_CREAT | O_WRONLY } },
		{ "open O_TMPFILE", SYS_open, 2, { 0, O_TMPFILE | O_WRONLY } },
		{ "openat O_CREAT", SYS_openat, 3, { (uint64_t)AT_FDCWD, 0, O_CREAT | O_WRONLY } },
		{ "openat O_TMPFILE", SYS_openat, 3, { (uint64_t)AT_FDCWD, 0, O_TMPFILE | O_WRONLY } },
	};
	static const struct {
		const char *name;
		uint64_t bit;
	} bits[] = { { "S_ISUID", S_ISUID }, { "S_ISGID", S_ISGID } };

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		uint64_t a[4];
		/* mknod makes a regular file with S_IFREG; the rest take permission bits only */
		uint64_t base = strncmp(calls[i].name, "mknod", 5) == 0 ? S_IFREG | 0755 : 0755;

		for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
			memcpy(a, calls[i].a, sizeof(a));
			a[calls[i].mode_arg] = base | bits[b].bit;
			is_uint(eval_args(f, calls[i].nr, a[0], a[1], a[2], a[3]), RET_ERRNO(EPERM),
				"%s 0%llo (%s alone): EPERM", calls[i].name,
				(unsigned long long)a[calls[i].mode_arg], bits[b].name);
		}
		memcpy(a, calls[i].a, sizeof(a));
		a[calls[i].mode_arg] = base | S_ISVTX;
		is_uint(eval_args(f, calls[i].nr, a[0], a[1], a[2], a[3]), SECCOMP_RET_ALLOW,
			"... %s 0%llo (sticky, no setuid or setgid bit): allowed", calls[i].name,
			(unsigned long long)a[calls[i].mode_arg]);
	}
}

/* The baseline's other refusals, each on its own: user namespaces, the calls whose arguments
 * seccomp cannot read, and every terminal ioctl it names */
static void baseline_others(const struct cd_filter *f)
{
	static const struct {
		const char *name;
		int nr;
		uint64_t a0, a1;
		uint32_t want;
	} calls[] = {
		{ "unshare CLONE_NEWUSER", SYS_unshare, CLONE_NEWUSER, 0, RET_ERRNO(EPERM) },
		{ "clone CLONE_NEWUSER", SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, RET_ERRNO(EPERM) },
		{ "unshare CLONE_NEWNS (control)", SYS_unshare, CLONE_NEWNS, 0, SECCOMP_RET_ALLOW },
		{ "clone3", SYS_clone3, 0, 0, RET_ERRNO(ENOSYS) },
		{ "openat2", SYS_openat2, 0, 0, RET_ERRNO(ENOSYS) },
		{ "io_uring_setup", SYS_io_uring_setup, 0, 0, RET_ERRNO(ENOSYS) },
		{ "io_uring_enter", SYS_io_uring_enter, 0, 0, RET_ERRNO(ENOSYS) },
		{ "io_uring_register", SYS_io_uring_register, 0, 0, RET_ERRNO(ENOSYS) },
		{ "ioctl TIOCSTI", SYS_ioctl, 0, TIOCSTI, RET_ERRNO(EPERM) },
		{ "ioctl TIOCLINUX", SYS_ioctl, 0, TIOCLINUX, RET_ERRNO(EPERM) },
		{ "ioctl TIOCSETD", SYS_ioctl, 0, TIOCSETD, RET_ERRNO(EPERM) },
		{ "ioctl TIOCCONS", SYS_ioctl, 0, TIOCCONS, RET_ERRNO(EPERM) },
		{ "ioctl TIOCEXCL", SYS_ioctl, 0, TIOCEXCL, RET_ERRNO(EPERM) },
		{ "ioctl TCXONC", SYS_ioctl, 0, TCXONC, RET_ERRNO(EPERM) },
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		is_uint(eval_args(f, calls[i].nr, calls[i].a0, calls[i].a1, 0, 0), calls[i].want,
			"%s: %s", calls[i].name,
			calls[i].want == SECCOMP_RET_ALLOW ? "allowed"
			: calls[i].want == RET_ERRNO(EPERM) ? "EPERM" : "ENOSYS");
}

/* baseline.policy, as compiled into the binary: every route to a setuid or setgid bit, the
 * terminal ioctls, openat2 and io_uring; and the proof over the two programs installed together */
static void test_filter_baseline(void)
{
	struct cordon_error err = { 0 };
	struct cd_policy b = { 0 };
	struct cd_filter f, allow;

	if (!seccomp_usable) {
		skip("no seccomp() system call", "baseline.policy: compiled filter");
		return;
	}
	if (!is_int(cd_policy_parse_baseline(&b, &err), 0, "baseline.policy: parses from memory"))
		diag("error: %s", err.msg);
	if (compile(&b, false, true, &f, "baseline.policy") < 0) {
		cd_policy_free(&b);
		return;
	}
	baseline_modes(&f);
	baseline_others(&f);
	is_uint(eval_args(&f, SYS_chmod, 0, 04755 | (1ull << 40), 0, 0), RET_ERRNO(EPERM),
		"chmod 04755 with junk above: EPERM");
	is_uint(eval_args(&f, SYS_openat, AT_FDCWD, 0, O_RDONLY, 04755), SECCOMP_RET_ALLOW,
		"openat without O_CREAT ignores the mode: allowed");
	is_uint(eval(&f, SYS_ioctl, 0, TIOCCONS | (1ull << 32)), RET_ERRNO(EPERM),
		"ioctl TIOCCONS with a high bit: EPERM");
	is_uint(eval(&f, SYS_ioctl, 0, 0x4B45 /* KDSKBMODE */), RET_ERRNO(EPERM),
		"ioctl KDSKBMODE: EPERM");
	is_uint(eval(&f, SYS_ioctl, 0, 0x5606 /* VT_ACTIVATE */), RET_ERRNO(EPERM),
		"ioctl VT_ACTIVATE: EPERM");
	is_uint(eval(&f, SYS_ioctl, 0, TCSETS), SECCOMP_RET_ALLOW, "ioctl TCSETS: allowed");
	ok(f.blocks_tiocsti, "baseline: proven to block TIOCSTI and TIOCLINUX");
	parses("default allow\n", "a policy that allows everything");
	if (compile(&P, false, true, &allow, "default allow") == 0) {
		ok(!cd_filter_set_blocks_tiocsti((const struct cd_filter *[]){ &allow }, 1),
		   "a default-allow policy alone: TIOCSTI not proven blocked");
		ok(cd_filter_set_blocks_tiocsti((const struct cd_filter *[]){ &allow, &f }, 2),
		   "... with the baseline beside it: proven blocked");
		cd_filter_done(&allow);
	}
	cd_filter_done(&f);
	cd_policy_free(&b);
}

static void test_filter_default(void)
{
	struct cd_filter f, lf;

	if (!seccomp_usable) {
		skip("no seccomp() system call", "default.policy: compiled filter");
		return;
	}
	if (!is_int(load(CORDON_TEST_POLICY_DIR "/default.policy", "default.policy"), 0,
		    "load default.policy"))
		diag("error: %s", E.msg);
	if (compile(&P, false, true, &f, "default.policy") < 0)
		return;
	ok(f.len > 0 && f.insns && f.optimized && !f.log, "default.policy: a program, optimized");
	ok(f.n_rules > 30 && f.n_rules < P.n_rules,
	   "default.policy: %u rules compiled of %zu (not those lacking on x86_64)", f.n_rules,
	   P.n_rules);
	ok(f.blocks_tiocsti, "default.policy: blocks TIOCSTI");
	is_uint(eval(&f, SYS_ioctl, 1, TIOCSTI), RET_ERRNO(EPERM), "ioctl TIOCSTI: EPERM");
	is_uint(eval(&f, SYS_ioctl, 1, TIOCSTI | (1ull << 32)), RET_ERRNO(EPERM),
		"ioctl TIOCSTI | 1<<32: EPERM");
	is_uint(eval(&f, SYS_ioctl, 1, TIOCSTI | 0xffffffff00000000ull), RET_ERRNO(EPERM),
		"ioctl TIOCSTI with all upper bits: EPERM");
	is_uint(eval(&f, SYS_ioctl, 1, TIOCLINUX), RET_ERRNO(EPERM), "ioctl TIOCLINUX: EPERM");
	is_uint(eval(&f, SYS_ioctl, 1, TCGETS), SECCOMP_RET_ALLOW, "ioctl TCGETS: allowed");
	is_uint(eval(&f, SYS_getpid, 0, 0), SECCOMP_RET_ALLOW, "getpid: allowed");
	is_uint(eval(&f, SYS_read, 0, 0), SECCOMP_RET_ALLOW, "read: allowed");
	is_uint(eval(&f, SYS_mount, 0, 0), RET_ERRNO(EPERM), "mount: EPERM");
	is_uint(eval(&f, SYS_umount2, 0, 0), RET_ERRNO(EPERM), "umount2: EPERM");
	is_uint(eval(&f, SYS_bpf, 0, 0), RET_ERRNO(EPERM), "bpf: EPERM");
	/* the kernel says EPERM too (vm.unprivileged_userfaultfd=0): only the filter's answer tells */
	is_uint(eval(&f, SYS_userfaultfd, 0, 0), RET_ERRNO(EPERM), "userfaultfd: EPERM");
	is_uint(eval(&f, SYS_clone3, 0, 0), RET_ERRNO(ENOSYS), "clone3: ENOSYS");
	is_uint(eval(&f, SYS_io_uring_setup, 0, 0), RET_ERRNO(ENOSYS), "io_uring_setup: ENOSYS");
	is_uint(eval(&f, SYS_name_to_handle_at, 0, 0), RET_ERRNO(EOPNOTSUPP),
		"name_to_handle_at: EOPNOTSUPP");
	is_uint(eval(&f, SYS_kcmp, 0, 0), RET_ERRNO(ENOSYS), "kcmp: ENOSYS");
	is_uint(eval(&f, SYS_open_by_handle_at, 0, 0), RET_ERRNO(EPERM), "open_by_handle_at: EPERM");
	is_uint(eval(&f, SYS_unshare, CLONE_NEWUSER, 0), RET_ERRNO(EPERM),
		"unshare CLONE_NEWUSER: EPERM");
	is_uint(eval(&f, SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS, 0), RET_ERRNO(EPERM),
		"unshare CLONE_NEWUSER|CLONE_NEWNS: EPERM");
	is_uint(eval(&f, SYS_unshare, CLONE_NEWNS, 0), SECCOMP_RET_ALLOW,
		"unshare CLONE_NEWNS: allowed");
	is_uint(eval(&f, SYS_clone, CLONE_NEWUSER, 0), RET_ERRNO(EPERM),
		"clone CLONE_NEWUSER: EPERM");
	is_uint(eval(&f, SYS_clone, CLONE_VM | CLONE_THREAD, 0), SECCOMP_RET_ALLOW,
		"clone of a thread: allowed");
	is_uint(eval(&f, SYS_socket, AF_PACKET, SOCK_RAW), RET_ERRNO(EAFNOSUPPORT),
		"socket AF_PACKET: EAFNOSUPPORT");
	is_uint(eval(&f, SYS_socket, AF_PACKET | (1ull << 40), SOCK_RAW), RET_ERRNO(EAFNOSUPPORT),
		"socket AF_PACKET with upper bits: EAFNOSUPPORT");
	is_uint(eval(&f, SYS_socket, AF_INET, SOCK_STREAM), SECCOMP_RET_ALLOW,
		"socket AF_INET: allowed");
	is_uint(eval(&f, SYS_personality, 0, 0), SECCOMP_RET_ALLOW, "personality(0): allowed");
	is_uint(eval(&f, SYS_personality, ADDR_NO_RANDOMIZE, 0), SECCOMP_RET_ALLOW,
		"personality(ADDR_NO_RANDOMIZE): allowed");
	is_uint(eval(&f, SYS_personality, READ_IMPLIES_EXEC, 0), RET_ERRNO(EPERM),
		"personality(READ_IMPLIES_EXEC): EPERM");
	is_uint(eval(&f, SYS_personality, 0xffffffff, 0), RET_ERRNO(EPERM),
		"personality(0xffffffff): EPERM");
	{
		uint64_t args[6] = {0};

		is_uint(cd_filter_eval(&f, AUDIT_ARCH_I386, 20 /* getpid on i386 */, args),
			SECCOMP_RET_KILL_PROCESS, "i386 ABI: killed");
		is_uint(cd_filter_eval(&f, AUDIT_ARCH_AARCH64, SYS_getpid, args),
			SECCOMP_RET_KILL_PROCESS, "another architecture: killed");
		is_uint(cd_filter_eval(&f, AUDIT_ARCH_X86_64, 0x40000000 | SYS_getpid, args),
			SECCOMP_RET_KILL_PROCESS, "x32 ABI: killed");
	}

	/* log mode: the denials become "log", allow stays, other ABIs are still killed */
	if (compile(&P, true, true, &lf, "default.policy, log mode") == 0) {
		uint64_t args[6] = {0};

		ok(lf.log, "log mode: f.log");
		is_uint(eval(&lf, SYS_mount, 0, 0), SECCOMP_RET_LOG, "log mode: mount logged");
		is_uint(eval(&lf, SYS_ioctl, 1, TIOCSTI), SECCOMP_RET_LOG,
			"log mode: TIOCSTI logged");
		is_uint(eval(&lf, SYS_clone3, 0, 0), SECCOMP_RET_LOG, "log mode: clone3 logged");
		is_uint(eval(&lf, SYS_getpid, 0, 0), SECCOMP_RET_ALLOW, "log mode: getpid allowed");
		ok(!lf.blocks_tiocsti, "log mode: TIOCSTI not blocked");
		is_uint(cd_filter_eval(&lf, AUDIT_ARCH_I386, 20, args), SECCOMP_RET_KILL_PROCESS,
			"log mode: i386 still killed");
	}
	cd_filter_done(&lf);
	cd_filter_done(&f);
	ok(f.insns == NULL && f.len == 0, "cd_filter_done clears the filter");
}

static void test_filter_strict(void)
{
	struct cd_filter f;

	if (!seccomp_usable) {
		skip("no seccomp() system call", "strict.policy: compiled filter");
		return;
	}
	if (!is_int(load(CORDON_TEST_POLICY_DIR "/strict.policy", "strict.policy"), 0,
		    "load strict.policy"))
		diag("error: %s", E.msg);
	if (compile(&P, false, false, &f, "strict.policy") < 0)
		return;
	ok(f.blocks_tiocsti, "strict.policy: blocks TIOCSTI");
	is_uint(eval(&f, SYS_getpid, 0, 0), SECCOMP_RET_ALLOW, "strict: getpid allowed");
	is_uint(eval(&f, SYS_ioctl, 1, TCGETS), SECCOMP_RET_ALLOW, "strict: TCGETS allowed");
	is_uint(eval(&f, SYS_ioctl, 1, TCGETS | (1ull << 32)), SECCOMP_RET_ALLOW,
		"strict: TCGETS with upper bits allowed");
	is_uint(eval(&f, SYS_ioctl, 1, TIOCSTI), RET_ERRNO(ENOSYS), "strict: TIOCSTI ENOSYS");
	is_uint(eval(&f, SYS_mount, 0, 0), RET_ERRNO(ENOSYS), "strict: mount ENOSYS");
	is_uint(eval(&f, SYS_name_to_handle_at, 0, 0), RET_ERRNO(ENOSYS),
		"strict: name_to_handle_at ENOSYS");
	is_uint(eval(&f, SYS_kcmp, 0, 0), RET_ERRNO(ENOSYS), "strict: kcmp ENOSYS");
	is_uint(eval(&f, SYS_clone, CLONE_NEWUSER, 0), RET_ERRNO(ENOSYS),
		"strict: clone CLONE_NEWUSER ENOSYS");
	is_uint(eval(&f, SYS_clone, CLONE_VM, 0), SECCOMP_RET_ALLOW, "strict: clone allowed");
	is_uint(eval(&f, SYS_socket, AF_UNIX, 0), SECCOMP_RET_ALLOW, "strict: AF_UNIX allowed");
	is_uint(eval(&f, SYS_socket, AF_INET, 0), RET_ERRNO(ENOSYS), "strict: AF_INET ENOSYS");
	is_uint(eval(&f, SYS_personality, 0xffffffff, 0), SECCOMP_RET_ALLOW,
		"strict: personality query allowed");
	is_uint(eval(&f, SYS_personality, READ_IMPLIES_EXEC, 0), RET_ERRNO(ENOSYS),
		"strict: personality(READ_IMPLIES_EXEC) ENOSYS");
	cd_filter_done(&f);
}

static void test_filter_actions(void)
{
	struct cd_filter f;

	if (!seccomp_usable) {
		skip("no seccomp() system call", "compiled actions and comparisons");
		return;
	}
	parses("default allow\n", "default allow alone");
	if (compile(&P, false, true, &f, "default allow") == 0) {
		ok(!f.blocks_tiocsti, "default allow: TIOCSTI not blocked");
		is_uint(f.n_rules, 0, "default allow: no rules");
		is_uint(eval(&f, SYS_ioctl, 1, TIOCSTI), SECCOMP_RET_ALLOW,
			"default allow: TIOCSTI allowed");
	}
	cd_filter_done(&f);

	parses("default allow\nerrno EPERM ioctl(arg1 == TIOCSTI) ioctl(arg1 == TIOCLINUX)\n",
	       "TIOCSTI compared on 64 bits");
	if (compile(&P, false, true, &f, "TIOCSTI on 64 bits") == 0) {
		is_uint(eval(&f, SYS_ioctl, 1, TIOCSTI), RET_ERRNO(EPERM),
			"64 bits: TIOCSTI EPERM");
		is_uint(eval(&f, SYS_ioctl, 1, TIOCSTI | (1ull << 32)), SECCOMP_RET_ALLOW,
			"64 bits: TIOCSTI | 1<<32 passes");
		ok(!f.blocks_tiocsti, "64-bit comparison: not proven to block TIOCSTI");
	}
	cd_filter_done(&f);

	parses("default errno 4000\n"
	       "allow read\n"
	       "kill-thread getpid\n"
	       "trap gettid\n"
	       "log getppid\n"
	       "notify getuid\n"
	       "kill getgid\n"
	       "kill-process getegid\n"
	       "errno 4094 geteuid\n"
	       "errno 4000 getsid\n"
	       "errno EPERM umount\n",
	       "every action");
	if (compile(&P, false, false, &f, "every action") == 0) {
		is_uint(f.n_rules, 8, "every action: 8 rules (not the default's, not umount)");
		is_uint(eval(&f, SYS_read, 0, 0), SECCOMP_RET_ALLOW, "allow");
		is_uint(eval(&f, SYS_getpid, 0, 0), SECCOMP_RET_KILL_THREAD, "kill-thread");
		is_uint(eval(&f, SYS_gettid, 0, 0), SECCOMP_RET_TRAP, "trap");
		is_uint(eval(&f, SYS_getppid, 0, 0), SECCOMP_RET_LOG, "log");
		is_uint(eval(&f, SYS_getuid, 0, 0), SECCOMP_RET_USER_NOTIF, "notify");
		is_uint(eval(&f, SYS_getgid, 0, 0), SECCOMP_RET_KILL_PROCESS, "kill");
		is_uint(eval(&f, SYS_getegid, 0, 0), SECCOMP_RET_KILL_PROCESS, "kill-process");
		is_uint(eval(&f, SYS_geteuid, 0, 0), RET_ERRNO(4094), "errno 4094");
		is_uint(eval(&f, SYS_getsid, 0, 0), RET_ERRNO(4000), "errno 4000 (the default)");
		is_uint(eval(&f, SYS_close, 0, 0), RET_ERRNO(4000), "the default");
	}
	cd_filter_done(&f);
	if (compile(&P, true, true, &f, "every action, log mode") == 0) {
		is_uint(eval(&f, SYS_read, 0, 0), SECCOMP_RET_ALLOW, "log mode: allow stays");
		is_uint(eval(&f, SYS_getpid, 0, 0), SECCOMP_RET_LOG,
			"log mode: kill-thread logged");
		is_uint(eval(&f, SYS_gettid, 0, 0), SECCOMP_RET_LOG, "log mode: trap logged");
		is_uint(eval(&f, SYS_getuid, 0, 0), SECCOMP_RET_USER_NOTIF,
			"log mode: notify stays");
		is_uint(eval(&f, SYS_getgid, 0, 0), SECCOMP_RET_LOG, "log mode: kill logged");
		is_uint(eval(&f, SYS_close, 0, 0), SECCOMP_RET_LOG, "log mode: the default logged");
	}
	cd_filter_done(&f);
}

static const char ops_policy[] = "default allow\n"
				 "errno 1 read(arg0 == 5)\n"
				 "errno 2 write(arg0 != 5)\n"
				 "errno 3 close(arg0 < 5)\n"
				 "errno 4 fstat(arg0 <= 5)\n"
				 "errno 5 lseek(arg0 > 5)\n"
				 "errno 6 mmap(arg0 >= 5)\n"
				 "errno 7 brk(arg0 & 0x3 == 0x1)\n"
				 "errno 8 munmap(arg0 & 0x6)\n"
				 "errno 9 mprotect(arg0 == -1)\n"
				 "errno 10 poll(arg0 > 0x100000000, arg1 == 2)\n";

static void test_filter_comparisons(void)
{
	static const uint64_t values[] = {0, 1, 4, 5, 6, 7, 0x100000005ull, 0xffffffff, UINT64_MAX};
	static const struct {
		int nr;
		uint32_t e;
	} rules[] = {{SYS_read, 1},  {SYS_write, 2},  {SYS_close, 3},
		     {SYS_fstat, 4}, {SYS_lseek, 5},  {SYS_mmap, 6},
		     {SYS_brk, 7},   {SYS_munmap, 8}, {SYS_mprotect, 9}};
	struct cd_filter f[2];
	unsigned wrong[2] = {0, 0};

	if (!seccomp_usable) {
		skip("no seccomp() system call", "compiled comparisons");
		return;
	}
	parses(ops_policy, "comparisons");
	if (compile(&P, false, false, &f[0], "comparisons") < 0 ||
	    compile(&P, false, true, &f[1], "comparisons, optimized") < 0) {
		cd_filter_done(&f[0]);
		return;
	}
	for (int o = 0; o < 2; o++)
		for (size_t i = 0; i < CD_ELEMENTSOF(rules); i++)
			for (size_t j = 0; j < CD_ELEMENTSOF(values); j++) {
				uint64_t v = values[j];
				bool match = false;
				uint32_t got, want;

				switch (rules[i].e) {
				case 1:
					match = v == 5;
					break;
				case 2:
					match = v != 5;
					break;
				case 3:
					match = v < 5;
					break;
				case 4:
					match = v <= 5;
					break;
				case 5:
					match = v > 5;
					break;
				case 6:
					match = v >= 5;
					break;
				case 7:
					match = (v & 3) == 1;
					break;
				case 8:
					match = (v & 6) == 6;
					break;
				case 9:
					match = v == UINT64_MAX;
					break;
				}
				want = match ? RET_ERRNO(rules[i].e) : SECCOMP_RET_ALLOW;
				got = eval(&f[o], rules[i].nr, v, 0);
				if (got != want) {
					wrong[o]++;
					diag("%s: errno %u rule, arg0 0x%llx: got 0x%x, want 0x%x",
					     o ? "optimized" : "linear", rules[i].e,
					     (unsigned long long)v, got, want);
				}
			}
	is_uint(wrong[0], 0, "comparisons on 64 bits, linear program: as written");
	is_uint(wrong[1], 0, "comparisons on 64 bits, binary tree: as written");
	is_uint(eval(&f[0], SYS_poll, 0x100000001ull, 2), RET_ERRNO(10),
		"two conditions: both hold");
	is_uint(eval(&f[0], SYS_poll, 0x100000001ull, 3), SECCOMP_RET_ALLOW,
		"two conditions: the second fails");
	is_uint(eval(&f[0], SYS_poll, 0x100000000ull, 2), SECCOMP_RET_ALLOW,
		"two conditions: the first fails");
	cd_filter_done(&f[0]);
	cd_filter_done(&f[1]);
}

/* The binary tree and the linear list are the same program, for every syscall number. */
static void sweep(const struct cd_policy *p, const char *what)
{
	static const uint64_t patterns[][2] = {
	    {0, 0},
	    {1, TIOCSTI},
	    {CLONE_NEWUSER, TIOCLINUX | (1ull << 32)},
	    {AF_PACKET, TCGETS},
	    {UINT64_MAX, UINT64_MAX},
	    {0x8000000000000005ull, 0xffffffff},
	    {5, 2},
	};
	struct cd_filter lin, opt;
	unsigned diff = 0, denied = 0, allowed = 0;

	if (compile(p, false, false, &lin, what) < 0)
		return;
	if (compile(p, false, true, &opt, what) < 0) {
		cd_filter_done(&lin);
		return;
	}
	for (int nr = 0; nr <= 450; nr++)
		for (size_t i = 0; i < CD_ELEMENTSOF(patterns); i++) {
			uint32_t a = eval(&lin, nr, patterns[i][0], patterns[i][1]);
			uint32_t b = eval(&opt, nr, patterns[i][0], patterns[i][1]);

			if (a != b && diff++ < 5)
				diag("%s: nr %d args 0x%llx 0x%llx: linear 0x%x, tree 0x%x", what,
				     nr, (unsigned long long)patterns[i][0],
				     (unsigned long long)patterns[i][1], a, b);
			if (a == SECCOMP_RET_ALLOW)
				allowed++;
			else
				denied++;
		}
	is_uint(diff, 0, "%s: linear and binary tree agree on syscalls 0..450", what);
	ok(denied > 0 && allowed > 0, "%s: the sweep saw %u denials and %u allows", what, denied,
	   allowed);
	cd_filter_done(&lin);
	cd_filter_done(&opt);
}

static void test_filter_sweep(void)
{
	if (!seccomp_usable) {
		skip("no seccomp() system call", "linear and binary tree agree");
		return;
	}
	if (load(CORDON_TEST_POLICY_DIR "/default.policy", "default.policy") == 0)
		sweep(&P, "default.policy");
	if (load(CORDON_TEST_POLICY_DIR "/strict.policy", "strict.policy") == 0)
		sweep(&P, "strict.policy");
	if (parse(ops_policy) == 0)
		sweep(&P, "comparisons");
}

/* --- the shipped programs, compiled at build time (precompiled.h) --- */

static bool in_table(const uint8_t key[32])
{
	for (size_t i = 0; i < cd_n_precompiled; i++)
		if (memcmp(cd_precompiled[i].key, key, 32) == 0)
			return true;
	return false;
}

static bool same_program(const struct cd_filter *a, const struct cd_filter *b)
{
	return a->len == b->len && a->n_rules == b->n_rules && a->notify == b->notify &&
	       a->blocks_tiocsti == b->blocks_tiocsti && a->log == b->log &&
	       a->optimized == b->optimized &&
	       memcmp(a->insns, b->insns, a->len * sizeof(*a->insns)) == 0;
}

/* P, with the options a run uses: in the binary, and the very program a compile makes now */
static void check_shipped(const char *what, bool notify)
{
	struct cd_filter fresh = {0}, taken = {0};
	struct cordon_error err = {0};
	uint8_t key[32];

	cd_filter_key(&P, false, true, notify, key);
	ok(in_table(key), "%s%s: its program is in the binary", what, notify ? " (audit)" : "");
	if (cd_filter_compile_fresh(&P, false, true, notify, &fresh, &err) < 0 ||
	    cd_filter_compile_audit(&P, false, true, notify, &taken, &err) < 0)
		ok(false, "%s: compiles: %s", what, err.msg);
	else
		ok(same_program(&fresh, &taken), "%s%s: the same program as a compile now", what,
		   notify ? " (audit)" : "");
	cd_filter_done(&fresh);
	cd_filter_done(&taken);
}

static void test_precompiled(void)
{
	uint8_t key[32];

	if (!seccomp_usable) {
		skip("no seccomp() system call", "the shipped programs");
		return;
	}
	is_int((int)cd_n_precompiled, 6, "six shipped programs: baseline, default, strict, each "
	       "with and without the audit trail");
	cd_policy_free(&P);
	memset(&P, 0, sizeof(P));
	if (cd_policy_parse_baseline(&P, &E) == 0) {
		check_shipped("baseline", false);
		check_shipped("baseline", true);
	}
	if (load(CORDON_TEST_POLICY_DIR "/default.policy", "default.policy") == 0) {
		check_shipped("default.policy", false);
		check_shipped("default.policy", true);
		cd_filter_key(&P, true, true, false, key);
		ok(!in_table(key), "default.policy in log mode: compiled at run time");
		cd_filter_key(&P, false, false, false, key);
		ok(!in_table(key), "default.policy unoptimized: compiled at run time");
		/* one rule changed: another key (an edited installed file is compiled) */
		P.rules[0].action = P.rules[0].action == SCMP_ACT_ALLOW ? SCMP_ACT_KILL_PROCESS
									 : SCMP_ACT_ALLOW;
		cd_filter_key(&P, false, true, false, key);
		ok(!in_table(key), "default.policy with one rule's action changed: another key");
	}
	if (load(CORDON_TEST_POLICY_DIR "/default.policy", "default.policy") == 0 && P.n_rules) {
		struct cd_policy_rule *last = &P.rules[P.n_rules - 1];

		if (last->n_conds)
			last->conds[0].value++;
		else
			last->nr++;
		cd_filter_key(&P, false, true, false, key);
		ok(!in_table(key), "default.policy with one condition or syscall changed: another key");
	}
	if (load(CORDON_TEST_POLICY_DIR "/strict.policy", "strict.policy") == 0) {
		check_shipped("strict.policy", false);
		check_shipped("strict.policy", true);
	}
	if (parse(ops_policy) == 0) {
		cd_filter_key(&P, false, true, false, key);
		ok(!in_table(key), "a policy of one's own: compiled at run time");
	}
}

/* --- a shipped policy found by its texts, unparsed (cd_filter_from_sources) --- */

static int copy_shipped(const char *name, const char *to, const char *extra)
{
	char src[PATH_MAX], dst[PATH_MAX + 64], buf[1 << 16];
	FILE *in, *out;
	size_t n;

	snprintf(src, sizeof(src), CORDON_TEST_POLICY_DIR "/%s", name);
	snprintf(dst, sizeof(dst), "%s/%s/%s", scratch, to, name);
	in = fopen(src, "re");
	out = fopen(dst, "we");
	if (!in || !out) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fputs(extra, out);
	fclose(in);
	return fclose(out);
}

/* What the texts at path give (a program, or 0: parse it), and what a parse of the same path
 * gives: a program found by its texts must be the one its rules' key finds, and a compile's */
static void check_sources(const char *what, const char *path, bool log, bool optimize,
			  bool notify, int want)
{
	struct cd_filter by_source = {0}, by_rules = {0};
	struct cordon_error err = {0};
	struct cd_policy p = {0};
	int r = cd_filter_from_sources(path, log, optimize, notify, &by_source);

	is_int(r, want, "%s: %s", what, want ? "the build's program, unparsed" : "parsed");
	if (r == 1) {
		int l = path ? cd_policy_load(&p, path, "p.policy", &err)
			     : cd_policy_parse_baseline(&p, &err);

		if (l < 0 || cd_filter_compile_fresh(&p, log, optimize, notify, &by_rules, &err) < 0)
			ok(false, "%s: parses and compiles: %s", what, err.msg);
		else
			ok(same_program(&by_source, &by_rules), "%s: the program a compile makes", what);
	}
	cd_policy_free(&p);
	cd_filter_done(&by_source);
	cd_filter_done(&by_rules);
}

static void test_sources(void)
{
	if (!seccomp_usable) {
		skip("no seccomp() system call", "programs found by their texts");
		return;
	}
	check_sources("the baseline", NULL, false, true, false, 1);
	check_sources("the baseline (audit)", NULL, false, true, true, 1);
	check_sources("built-in default", "built-in:default", false, true, false, 1);
	check_sources("built-in default (audit)", "built-in:default", false, true, true, 1);
	check_sources("built-in strict", "built-in:strict", false, true, false, 1);
	check_sources("built-in default, log mode", "built-in:default", true, true, false, 0);
	check_sources("built-in default, unoptimized", "built-in:default", false, false, false, 0);
	if (mkdir(in_scratch("shipped"), 0755) < 0 || mkdir(in_scratch("edited"), 0755) < 0 ||
	    mkdir(in_scratch("edited-groups"), 0755) < 0 ||
	    copy_shipped("default.policy", "shipped", "") < 0 ||
	    copy_shipped("groups.policy", "shipped", "") < 0 ||
	    copy_shipped("default.policy", "edited", "\n") < 0 ||
	    copy_shipped("groups.policy", "edited", "") < 0 ||
	    copy_shipped("default.policy", "edited-groups", "") < 0 ||
	    copy_shipped("groups.policy", "edited-groups", "# mine\n") < 0) {
		ok(false, "copies of the shipped policies: %s", strerror(errno));
		return;
	}
	check_sources("an installed default.policy and groups.policy as shipped",
		      in_scratch("shipped/default.policy"), false, true, false, 1);
	check_sources("... for the audit trail", in_scratch("shipped/default.policy"), false, true,
		      true, 1);
	check_sources("default.policy with a line added", in_scratch("edited/default.policy"),
		      false, true, false, 0);
	check_sources("default.policy as shipped, the groups.policy beside it with a comment added",
		      in_scratch("edited-groups/default.policy"), false, true, false, 0);
	check_sources("a policy of one's own", in_scratch("main.policy"), false, true, false, 0);
	check_sources("a file that is not there", in_scratch("none.policy"), false, true, false, 0);
	setenv("CORDON_NO_PRECOMPILED", "1", 1);
	check_sources("CORDON_NO_PRECOMPILED=1", "built-in:default", false, true, false, 0);
	unsetenv("CORDON_NO_PRECOMPILED");
	for (const char *const *d = (const char *const[]){ "shipped", "edited", "edited-groups",
							   NULL };
	     *d; d++) {
		char f[64];

		snprintf(f, sizeof(f), "%s/default.policy", *d);
		unlink(in_scratch(f));
		snprintf(f, sizeof(f), "%s/groups.policy", *d);
		unlink(in_scratch(f));
		rmdir(in_scratch(*d));
	}
}

int main(void)
{
	if (setup_scratch() < 0) {
		printf("Bail out! cannot create a scratch directory in /tmp: %s\n",
		       strerror(errno));
		return 1;
	}
	if (chdir("/") < 0) /* includes from memory resolve against the current directory */
		diag("chdir /: %s", strerror(errno));
	test_names();
	test_find();
	test_actions();
	test_comments_continuations();
	test_conditions();
	test_groups();
	test_duplicates();
	test_includes();
	test_errors();
	test_overlaps();
	test_fixed_bugs();
	probe_seccomp();
	test_filter_default();
	test_filter_baseline();
	test_filter_strict();
	test_filter_actions();
	test_filter_comparisons();
	test_filter_sweep();
	test_precompiled();
	test_sources();
	cd_policy_free(&P);
	remove_scratch();
	return done_testing();
}
