/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-protect.c - protected paths (protect.h): the globs a user may give, what a glob covers,
 * the default list's format (protected-paths/default.list: parsed, loaded, refused), and what
 * the plan finds in a workdir: there, missing, behind a symlink or a file; the directories
 * above pinned; a linked worktree's git directory inside the workdir protected; what a git config
 * names (read as git reads it, whole, never from a FIFO); and the sweep
 * removing what a run made at a protected path (or as a new match of a pattern), through no
 * symlink. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "gitconfig.h"
#include "protect.h"

#include "../lib/tap.h"

static char top[64];

static void mk(const char *rel, const char *text)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (!text) {
		mkdir(p, 0755);
		return;
	}
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const struct cd_protect_path *find(const struct cd_protect_plan *p, const char *rel)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->paths[i].rel, rel) == 0)
			return &p->paths[i];
	return NULL;
}

/* Whether any protected path contains s: a path resolved wrongly has no one name to look for. */
static bool names(const struct cd_protect_plan *p, const char *s)
{
	for (size_t i = 0; i < p->n; i++)
		if (strstr(p->paths[i].rel, s))
			return true;
	return false;
}

static bool pinned(const struct cd_protect_plan *p, const char *rel)
{
	for (char **s = p->pins; s && *s; s++)
		if (strcmp(*s, rel) == 0)
			return true;
	return false;
}

static void test_globs(void)
{
	static const char *const bad[] = { "", "/abs", "../x", "a/../b", "a//b", ".", "a/./b", "**" };
	struct cordon_error err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		ok(cd_protect_glob_check(bad[i], &err) < 0 && err.msg[0], "glob \"%s\" refused: %s",
		   bad[i], err.msg);
	}
	ok(cd_protect_glob_check(".git/hooks/", NULL) == 0, "a directory glob with a trailing /");
	ok(cd_protect_glob_check("conf/*.yml", NULL) == 0, "a wildcard glob");
	ok(cd_protect_glob_match(".git/hooks", ".git/hooks/pre-commit"), "below what it names");
	ok(cd_protect_glob_match(".git/hooks", ".git/hooks"), "what it names");
	ok(!cd_protect_glob_match(".git/hooks", ".git/hooksx"), "not a longer name");
	ok(!cd_protect_glob_match(".git/hooks", ".git"), "not the directory above");
	ok(cd_protect_glob_match("*", ".hidden"), "* matches a leading dot (protects more)");
	ok(cd_protect_glob_match("conf/*.yml", "conf/a.yml") && !cd_protect_glob_match("conf/*.yml", "conf/x/a.yml"),
	   "* stays within a name");
	ok(cd_protect_glob_match(".git/modules/**/hooks", ".git/modules/a/b/hooks/x") &&
	   cd_protect_glob_match(".git/modules/**/hooks", ".git/modules/hooks"),
	   "** spans any number of directories, none included");
}

static int rule_of(const struct cd_protect_list *l, const char *glob)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->r[i].glob, glob) == 0)
			return (int)i;
	return -1;
}

/* A bad list: refused with exactly this message (file:line:col: why). */
static void bad_list(const char *text, const char *want)
{
	struct cordon_error err = { 0 };
	struct cd_protect_list l;
	int r = cd_protect_list_parse(text, strlen(text), "t.list", &l, &err);

	if (r >= 0)
		cd_protect_list_done(&l);
	ok(r == -EINVAL && strcmp(err.step, "protect-list") == 0, "refused: %s", want);
	is_str(err.msg, want, "... says where and why");
}

static void test_list_parse(void)
{
	static const char good[] = "# a comment\n"
				   "\n"
				   "protect  .git/hooks/   refuse  # trailing comment\r\n"
				   "\tdeny .env\n"
				   "protect *.code-workspace drop\n"
				   "protect a#b\n"
				   "protect Jenkinsfile";
	struct cordon_error err = { 0 };
	struct cd_protect_list l;

	ok(cd_protect_list_parse(good, strlen(good), "t.list", &l, &err) == 0, "a list parses: %s",
	   err.msg);
	is_uint(l.n, 5, "... five entries");
	ok(l.n == 5 && strcmp(l.r[0].glob, ".git/hooks/") == 0 && !l.r[0].deny &&
	   l.r[0].create && !l.r[0].no_placeholder && l.r[0].line == 3,
	   "... refuse: protected when missing, with a placeholder (line 3, CRLF)");
	ok(l.n == 5 && l.r[1].deny && !l.r[1].create, "... deny, only where it exists");
	ok(l.n == 5 && l.r[2].create && l.r[2].no_placeholder, "... drop: no placeholder");
	ok(l.n == 5 && strcmp(l.r[3].glob, "a#b") == 0, "... a '#' inside a word is the word's");
	ok(l.n == 5 && strcmp(l.r[4].glob, "Jenkinsfile") == 0 && !l.r[4].create,
	   "... the last line without a newline");
	is_str(l.source, "t.list", "... its source");
	cd_protect_list_done(&l);

	bad_list("protects .x\n", "t.list:1:1: unknown kind \"protects\" (protect or deny)");
	bad_list("\n  deny\n", "t.list:2:7: deny needs a path");
	bad_list("protect a refuse now\n",
		 "t.list:1:18: unexpected \"now\" (one entry a line: KIND PATH [refuse|drop])");
	bad_list("protect a refused\n",
		 "t.list:1:11: unknown \"refused\" (refuse or drop, or nothing: only what exists)");
	bad_list("protect /etc/passwd\n", "t.list:1:9: \"/etc/passwd\": a path relative to "
					   "the workdir, without a leading \"/\"");
	bad_list("protect a/../b\n", "t.list:1:9: \"a/../b\": no \".\" or \"..\" component "
				      "allowed");
	bad_list("protect *.x refuse\n", "t.list:1:13: \"*.x\": refuse needs a literal path (a "
					  "placeholder holds its place); a pattern can drop");
	bad_list("protect a/*.x drop\n", "t.list:1:15: \"a/*.x\": a pattern drops its new "
					  "matches at the top of the workdir only (no \"/\")");
	bad_list("protect a\n# x\ndeny  a drop\n",
		 "t.list:3:7: \"a\" listed twice (first at line 1)");
	{
		static const char nul[] = "protect a\nprotect b\0c\n";

		struct cordon_error e2 = { 0 };
		struct cd_protect_list l2;

		ok(cd_protect_list_parse(nul, sizeof(nul) - 1, "t.list", &l2, &e2) == -EINVAL,
		   "a NUL byte: refused");
		is_str(e2.msg, "t.list:2:10: a NUL byte", "... where it is");
	}
}

static void write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(p, mode);
}

static void test_list_load(void)
{
	char dir[] = "/tmp/test-protect-list.XXXXXX";
	struct cordon_error err = { 0 };
	struct cd_protect_list l, src;
	int r;

	if (!mkdtemp(dir))
		return (void)ok(false, "mkdtemp");
	ok(cd_protect_list_load(dir, &l, &err) == 0, "no installed list: loaded: %s", err.msg);
	is_str(l.source, "built-in:default.list", "... the binary's own");
	ok(l.n >= 60 && rule_of(&l, ".git/hooks/") >= 0 && rule_of(&l, ".vscode/") >= 0 &&
	   rule_of(&l, ".gemini/") >= 0 && rule_of(&l, ".git/objects/info/alternates") >= 0,
	   "... the default set (%zu entries)", l.n);
	/* the binary's copy is the source tree's list, entry for entry */
	memset(&err, 0, sizeof(err));
	r = cd_protect_list_load(CORDON_TEST_POLICY_DIR "/../protected-paths", &src, &err);
	ok(r == 0 && src.n == l.n, "the source tree's default.list loads alike (%zu): %s",
	   r == 0 ? src.n : 0, err.msg);
	for (size_t i = 0; r == 0 && i < src.n && i < l.n; i++)
		if (strcmp(src.r[i].glob, l.r[i].glob) != 0 || src.r[i].create != l.r[i].create ||
		    src.r[i].no_placeholder != l.r[i].no_placeholder || src.r[i].deny != l.r[i].deny)
			ok(false, "entry %zu differs: %s / %s", i, src.r[i].glob, l.r[i].glob);
	if (r == 0)
		cd_protect_list_done(&src);
	cd_protect_list_done(&l);

	write_file(dir, "default.list", "protect mine/\n", 0644);
	memset(&err, 0, sizeof(err));
	ok(cd_protect_list_load(dir, &l, &err) == 0 && l.n == 1 &&
	   strcmp(l.r[0].glob, "mine/") == 0, "an installed list wins: %s", err.msg);
	like_str(l.source, "/default.list", "... its source is the file");
	cd_protect_list_done(&l);

	write_file(dir, "default.list", "protect mine/\n", 0646);
	memset(&err, 0, sizeof(err));
	ok(cd_protect_list_load(dir, &l, &err) == -EPERM, "one another user may write: refused");
	like_str(err.msg, "another user may write it", "... %s", err.msg);

	write_file(dir, "default.list", "protect mine/ now\n", 0644);
	memset(&err, 0, sizeof(err));
	ok(cd_protect_list_load(dir, &l, &err) == -EINVAL, "a malformed installed list: refused, "
	   "not replaced by the built-in one");
	like_str(err.msg, "/default.list:1:15: unknown \"now\"", "... %s", err.msg);

	write_file(dir, "default.list", "", 0000);
	memset(&err, 0, sizeof(err));
	r = cd_protect_list_load(dir, &l, &err);
	if (geteuid() == 0)
		skip("root reads a mode 000 file", "an unreadable installed list fails");
	else
		ok(r == -EACCES, "an unreadable installed list fails (%d): %s", r, err.msg);
	if (r == 0)
		cd_protect_list_done(&l);
	{
		char p[4096];

		snprintf(p, sizeof(p), "%s/default.list", dir);
		unlink(p);
		rmdir(dir);
	}
}

static void test_plan(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	const struct cd_protect_path *g;
	int fd, r;

	strcpy(top, "/tmp/test-protect.XXXXXX");
	if (!mkdtemp(top) || !c)
		return (void)ok(false, "mkdtemp");
	mk(".git", NULL);
	mk(".git/hooks", NULL);
	mk(".git/config", "[core]\n");
	mk(".env", "SECRET=1\n");
	mk("conf", NULL);
	mk("conf/a.yml", "a\n");
	mk("conf/b.yml", "b\n");
	mk("wt", NULL);
	mk("wt/.git", NULL);
	mk(".gitlab-ci.yml", "job: {}\n");
	mk("user.code-workspace", "{}\n");
	{
		char l[4096];

		snprintf(l, sizeof(l), "%s/.vscode", top);
		if (symlink("/etc", l) < 0)
			abort(); /* a symlink where a protected directory would be */
		snprintf(l, sizeof(l), "%s/link.code-workspace", top);
		if (symlink("user.code-workspace", l) < 0)
			abort();
	}
	cordon_config_protect(c, "conf/*.yml", 0, &err);
	cordon_config_protect(c, "secret.txt", 1, &err);
	fd = open(top, O_RDONLY | O_DIRECTORY);
	r = cd_protect_plan_build(&c->protect, fd, top, &p, &err);
	ok(r == 0, "plan built: %s", err.msg);
	if (r < 0)
		return;
	g = find(&p, ".git/hooks");
	ok(g && g->state == CD_PROTECT_EXISTS && g->dir && !g->deny,
	   ".git/hooks: there, read-only");
	ok(p.git_hooks, "git's template hooks to hide");
	g = find(&p, ".git/config");
	ok(g && g->state == CD_PROTECT_EXISTS && !g->dir, ".git/config: there");
	ok(pinned(&p, ".git"), ".git pinned");
	g = find(&p, ".env");
	ok(g && g->deny && g->state == CD_PROTECT_EXISTS, ".env: hidden");
	g = find(&p, ".claude");
	ok(g && g->state == CD_PROTECT_ABSENT && g->create,
	   ".claude: missing, protected from creation");
	g = find(&p, ".vscode");
	ok(g && g->state == CD_PROTECT_BLOCKED, ".vscode: a symlink stands there");
	ok(find(&p, "conf/a.yml") && find(&p, "conf/b.yml"), "the glob's two matches");
	ok(pinned(&p, "conf"), "... their directory pinned");
	g = find(&p, "secret.txt");
	ok(g && g->deny && g->state == CD_PROTECT_ABSENT && g->create,
	   "a literal --deny: protected though missing");
	g = find(&p, ".gitlab-ci.yml");
	ok(g && g->state == CD_PROTECT_EXISTS && !g->create, ".gitlab-ci.yml: there, read-only");
	r = rule_of(&p.defaults, "Jenkinsfile");
	ok(r >= 0 && !p.defaults.r[r].create && !find(&p, "Jenkinsfile"),
	   "Jenkinsfile, an exists-only rule of the list, missing here: nothing protected");
	g = find(&p, "user.code-workspace");
	ok(g && g->state == CD_PROTECT_EXISTS && g->create && !g->placeholder,
	   "*.code-workspace: the one there, read-only");
	g = find(&p, "link.code-workspace");
	ok(g && g->state == CD_PROTECT_BLOCKED,
	   "... a symlink matching it: kept as the user's (not mounted on)");
	g = find(&p, ".mcp.json");
	ok(g && g->state == CD_PROTECT_ABSENT && g->create && !g->placeholder,
	   ".mcp.json (drop): missing, protected, no placeholder");
	g = find(&p, ".gemini");
	ok(g && g->state == CD_PROTECT_ABSENT && g->create && g->placeholder && g->dir,
	   ".gemini/ (refuse): missing, a placeholder directory holds its place");

	/* the sweep: what a run made at protected paths goes; a symlink is not followed */
	mk(".claude", NULL);
	mk(".claude/settings.json", "{}\n");
	mk("secret.txt", "x\n");
	mk(".git/commondir", "../evil\n");
	mk("vs", NULL);
	mk("vs/tasks.json", "{}\n");
	{
		char l[4096];

		snprintf(l, sizeof(l), "%s/.cursor", top);
		if (symlink("vs", l) < 0)
			abort(); /* a directory the run made, reached through a symlink of its own */
	}
	mk("evil.code-workspace", "{}\n");
	mk(".lefthook", NULL);
	mk(".lefthook/pre-commit", "#!/bin/sh\n");
	r = cd_protect_sweep(&p, fd, getuid(), NULL, NULL);
	ok(r == 6, "sweep removed 6 paths (%d)", r);
	ok(faccessat(fd, "evil.code-workspace", F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
	   faccessat(fd, ".lefthook", F_OK, AT_SYMLINK_NOFOLLOW) < 0,
	   "... new matches of patterns that drop them (a file, a directory): removed");
	ok(faccessat(fd, "user.code-workspace", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	   faccessat(fd, "link.code-workspace", F_OK, AT_SYMLINK_NOFOLLOW) == 0,
	   "... the matches there from the start (a file, a symlink) stay");
	ok(faccessat(fd, ".cursor", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && faccessat(fd, "vs/tasks.json", F_OK, 0) == 0,
	   "... a symlink the run put where a protected directory would be: removed (not what it names)");
	ok(faccessat(fd, ".git/commondir", F_OK, 0) < 0, "... a planted .git/commondir: removed");
	ok(faccessat(fd, ".vscode", F_OK, AT_SYMLINK_NOFOLLOW) == 0,
	   "... the symlink that stood at .vscode from the start (the user's) stays");
	ok(faccessat(fd, ".claude", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && faccessat(fd, "secret.txt", F_OK, 0) < 0,
	   "... .claude and secret.txt are gone");
	ok(faccessat(fd, ".git/config", F_OK, 0) == 0 && faccessat(fd, ".env", F_OK, 0) == 0,
	   "... what existed before stays");
	ok(access("/etc/passwd", F_OK) == 0, "... nothing behind the .vscode symlink touched");
	cd_protect_plan_done(&p);
	close(fd);
	cordon_config_free(c);
}

/* Make rel (a directory when it ends in "/") and the directories above it, below top. */
static void mk_path(const char *rel)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s", rel);
	for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mk(buf, NULL);
		*s = '/';
	}
	if (buf[strlen(buf) - 1] != '/')
		mk(buf, "x\n");
}

/* The name a rule's glob gives a path made for it ("*" as "w"), without a trailing "/". */
static void expand_glob(const char *glob, char *out, size_t size)
{
	size_t o = 0;

	for (const char *s = glob; *s && o + 2 < size; s++)
		out[o++] = *s == '*' ? 'w' : *s;
	if (o && out[o - 1] == '/')
		o--;
	out[o] = '\0';
}

/* Every entry of the default set, as the plan takes it: in a workdir without it, a rule that
 * refuses or drops protects it while missing (a placeholder or none, as it says), an exists-only
 * one protects nothing; in a workdir holding every entry, each is protected read-only or hidden,
 * as it says. The checks come from the list, so that each entry's kind is checked, however it
 * changes. */
static void test_plan_every_entry(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cd_protect_plan p0, p1;
	const struct cd_protect_path *g;
	size_t bad0 = 0, bad1 = 0, n = 0;
	char rel[4096];
	int fd0, fd1;

	strcpy(top, "/tmp/test-protect.XXXXXX");
	if (!mkdtemp(top) || !c)
		return (void)ok(false, "mkdtemp");
	fd0 = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!ok(cd_protect_plan_build(&c->protect, fd0, top, &p0, &err) == 0,
		"every entry: an empty workdir's "
		"plan: %s",
		err.msg))
		return;
	strcpy(top, "/tmp/test-protect.XXXXXX");
	if (!mkdtemp(top))
		return (void)ok(false, "mkdtemp");
	for (size_t i = 0; i < p0.defaults.n; i++) {
		size_t len;

		expand_glob(p0.defaults.r[i].glob, rel, sizeof(rel));
		len = strlen(rel);
		if (p0.defaults.r[i].glob[strlen(p0.defaults.r[i].glob) - 1] == '/')
			snprintf(rel + len, sizeof(rel) - len, "/");
		mk_path(rel);
	}
	fd1 = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!ok(cd_protect_plan_build(&c->protect, fd1, top, &p1, &err) == 0,
		"every entry: a workdir holding "
		"each one's plan: %s",
		err.msg))
		return;
	ok(p0.defaults.n == p1.defaults.n && p0.defaults.n >= 40, "the default set (%zu entries)",
	   p0.defaults.n);
	for (size_t i = 0; i < p0.defaults.n && i < p1.defaults.n; i++) {
		const struct cd_protect_rule *r = &p0.defaults.r[i];
		bool literal = !strpbrk(r->glob, "*?[");
		bool want_dir = r->glob[strlen(r->glob) - 1] == '/';

		expand_glob(r->glob, rel, sizeof(rel));
		g = literal ? find(&p0, rel) : NULL;
		if (literal && (r->create ? !(g && g->state == CD_PROTECT_ABSENT && g->create &&
					      g->deny == r->deny &&
					      g->placeholder == !r->no_placeholder)
					  : g != NULL)) {
			ok(false, "%s (line %u), missing: %s", r->glob, r->line,
			   r->create ? "protected as the list says" : "nothing protected");
			bad0++;
		}
		g = find(&p1, rel);
		if (!(g && g->state == CD_PROTECT_EXISTS && g->deny == r->deny &&
		      g->dir == want_dir)) {
			ok(false, "%s (line %u), there: %s, as the list says", r->glob, r->line,
			   r->deny ? "hidden" : "read-only");
			bad1++;
		}
		n++;
	}
	is_uint(bad0, 0, "each of the %zu entries missing: protected from creation (refuse: with a "
		"placeholder, drop: without), or not at all, as it says", n);
	is_uint(bad1, 0, "each of the %zu entries there: read-only or hidden, as it says", n);
	cd_protect_plan_done(&p0);
	cd_protect_plan_done(&p1);
	close(fd0);
	close(fd1);
	cordon_config_free(c);
}

static void test_worktree(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	char text[4200];
	int fd;

	strcpy(top, "/tmp/test-protect.XXXXXX");
	if (!mkdtemp(top) || !c)
		return (void)ok(false, "mkdtemp");
	mk("main", NULL);
	mk("main/.git", NULL);
	mk("main/.git/worktrees", NULL);
	mk("main/.git/worktrees/wt", NULL);
	mk("main/.git/hooks", NULL);
	mk("main/.git/config", "[core]\n");
	mk("main/.git/worktrees/wt/commondir", "../..\n");
	snprintf(text, sizeof(text), "gitdir: %s/main/.git/worktrees/wt\n", top);
	mk(".git", text);
	fd = open(top, O_RDONLY | O_DIRECTORY);
	ok(cd_protect_plan_build(&c->protect, fd, top, &p, &err) == 0, "worktree plan: %s",
	   err.msg);
	ok(find(&p, "main/.git/worktrees/wt/hooks"),
	   "a linked worktree's git directory inside the workdir: its hooks protected (missing)");
	ok(find(&p, "main/.git/hooks") && find(&p, "main/.git/config"),
	   "... and its repository's (commondir): hooks and config");
	ok(pinned(&p, ".git"), "the .git file is pinned (a directory cannot replace it)");
	{
		const struct cd_protect_path *g = find(&p, ".git/hooks");

		ok(g && g->state == CD_PROTECT_ABSENT && !g->placeholder,
		   ".git/hooks below the .git file: protected, but no placeholder (it would hide "
		   "the file from a --cow view, and git with it)");
	}
	cd_protect_plan_done(&p);
	close(fd);
	cordon_config_free(c);
}

static char *join_strv(char **v)
{
	static char buf[1024];

	buf[0] = '\0';
	for (; v && *v; v++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s[%s]", buf[0] ? " " : "",
			 *v);
	return buf;
}

static void gitconfig_n_is(const char *text, size_t len, const char *hooks, const char *includes,
			   const char *what)
{
	struct cd_gitconfig c = { 0 };

	ok(cd_gitconfig_read(text, len, &c) == 0, "git config: %s", what);
	is_str(join_strv(c.v[CD_GITCONFIG_HOOKS]), hooks, "... core.hooksPath");
	is_str(join_strv(c.v[CD_GITCONFIG_INCLUDE]), includes, "... include paths");
	cd_gitconfig_done(&c);
}

static void gitconfig_is(const char *text, const char *hooks, const char *includes,
			 const char *what)
{
	gitconfig_n_is(text, strlen(text), hooks, includes, what);
}

static void test_gitconfig(void)
{
	gitconfig_is("[core]\n\trepositoryformatversion = 0\n\thooksPath = .githooks\n", "[.githooks]",
		     "", "core.hooksPath");
	gitconfig_is("[CORE]\n  HooksPath=\" my hooks\"  # a comment\n", "[ my hooks]", "",
		     "case, quotes (inner blanks kept), a comment");
	gitconfig_is("[core] hookspath = a\\\nb\n", "[ab]", "", "a header and an entry on one line, a "
		     "continued line");
	gitconfig_is("[core \"x\"]\n\thooksPath = no\n[core.y]\nhooksPath = no\n[alias]\nhooksPath = no\n",
		     "", "", "a subsection of core, or another section: not core.hooksPath");
	gitconfig_is("[include]\n\tpath = ../shared.gitconfig\n[includeIf \"gitdir:~/w/\"]\n\tpath = x.inc\n"
		     "[include \"z\"]\npath = no\n",
		     "", "[../shared.gitconfig] [x.inc]", "include.path, includeIf.*.path");
	gitconfig_is("[core]\n\thooksPath = a\n\tbroken = \"open\n[core]\n\thooksPath = b\n",
		     "[a] [b]", "", "a quote left open: git refuses the file; the reader goes on (more "
		     "is harmless, less is not)");
	gitconfig_is("; c\n# c\n[core]\n\tbare\n\thooksPath = \"a;b#c\"\n", "[a;b#c]", "",
		     "comments, a key without a value, ; and # inside quotes");
}

/* What git 2.39 reads (git config --file F --list) and the reader missed, found by
 * tests/fuzz/fuzz-gitconfig.c */
static void test_gitconfig_as_git(void)
{
	static const char nul[] = "[core \"hookspath\0\"]\n\tfoo = nul\n";
	char big[5000];

	gitconfig_is("\xef\xbb\xbf[core]\n\thooksPath = bom\n", "[bom]", "",
		     "a UTF-8 byte order mark (git skips it)");
	gitconfig_is("[a][core]hooksPath = x\n[b] [include] path = y\n", "[x]", "[y]",
		     "a header after a header, on one line");
	gitconfig_is("[x \"]x=\\q\"]\n[core]\n\thooksPath = evil\n", "[evil]", "",
		     "a ']' inside a subsection's quotes (not the header's end)");
	gitconfig_is("[core]\r\n\tfoo = a\\\r\nb\r\n\thooksPath = crlf\r\n", "[crlf]", "",
		     "a backslash before \"\\r\\n\": a continued line");
	gitconfig_is("[include]\n\tpath = /evil\\", "", "[/evil]",
		     "a backslash at the end of the file: the end of the value");
	gitconfig_is("[core]\n\thooksPath = a\tb\n", "[a\tb] [a b]", "",
		     "a tab inside a value: kept by git 2.45 and later, a space before");
	gitconfig_is("[core]\n\thooksPath = a \\\n\n", "[a ]", "",
		     "a blank before a continued line is kept");
	gitconfig_n_is(nul, sizeof(nul) - 1, "[nul]", "",
		       "a NUL in a subsection ends the name git sees: every key is core.hookspath");
	memset(big, 'x', sizeof(big));
	memcpy(big, "[include]\npath = ", 17);
	snprintf(big + 4500, sizeof(big) - 4500, "\\\npath = joined\n\tpath = real\n");
	gitconfig_is(big, "", "[real]",
		     "a value too long for a path is left out, and its continued line with it");
}

static void test_plan_gitconfig(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	const struct cd_protect_path *g;
	int fd;

	strcpy(top, "/tmp/test-protect.XXXXXX");
	if (!mkdtemp(top) || !c)
		return (void)ok(false, "mkdtemp");
	mk(".git", NULL);
	mk(".git/config", "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../shared.gitconfig\n"
			  "\tpath = ../absent.gitconfig\n\tpath = ~/home.gitconfig\n"
			  "\tpath = /etc/outside.gitconfig\n");
	mk("shared.gitconfig", "[include]\n\tpath = more/nested.gitconfig\n");
	mk(".githooks", NULL);
	mk(".githooks/pre-commit", "#!/bin/sh\n");
	fd = open(top, O_RDONLY | O_DIRECTORY);
	ok(cd_protect_plan_build(&c->protect, fd, top, &p, &err) == 0, "plan with a git config: %s",
	   err.msg);
	g = find(&p, ".githooks");
	ok(g && g->state == CD_PROTECT_EXISTS && g->dir && g->create,
	   "core.hooksPath .githooks: protected as .git/hooks is");
	g = find(&p, "shared.gitconfig");
	ok(g && g->state == CD_PROTECT_EXISTS && g->create && !g->placeholder,
	   "include.path ../shared.gitconfig (from .git): protected, dropped if made anew");
	g = find(&p, "absent.gitconfig");
	ok(g && g->state == CD_PROTECT_ABSENT && g->create && !g->placeholder,
	   "an include that is not there (git skips it): protected from being made");
	g = find(&p, "more/nested.gitconfig");
	ok(g && g->state == CD_PROTECT_ABSENT, "an include of an include, relative to its file");
	ok(!names(&p, "home.gitconfig") && !names(&p, "outside.gitconfig"),
	   "paths outside the workdir (~, elsewhere): not the workdir's, by no spelling");
	cd_protect_plan_done(&p);
	{
		struct cordon_config *c2 = cordon_config_new();

		cordon_config_set_default_protect(c2, 0, &err);
		ok(cd_protect_plan_build(&c2->protect, fd, top, &p, &err) == 0 &&
		       !find(&p, ".githooks"),
		   "--no-default-protect: the config's paths are not protected either");
		cd_protect_plan_done(&p);
		cordon_config_free(c2);
	}
	close(fd);
	cordon_config_free(c);
}

/* How the plan reads a config: whole (it cut at 64 KiB: core.hooksPath past it was not
 * protected), never from a FIFO (a run left one at .git/config: every later run hung in open()),
 * and a run refused past 16 MiB rather than read in part */
static void test_plan_gitconfig_reading(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	char path[4096], *big = malloc(100 << 10);
	int fd, r;

	strcpy(top, "/tmp/test-protect.XXXXXX");
	if (!mkdtemp(top) || !c || !big)
		return (void)ok(false, "mkdtemp");
	mk(".git", NULL);
	memset(big, '\n', 100 << 10);
	memcpy(big, "# a long config\n", 16);
	strcpy(big + (90 << 10), "[core]\n\thooksPath = .late-hooks\n");
	mk(".git/config", big);
	fd = open(top, O_RDONLY | O_DIRECTORY);
	ok(cd_protect_plan_build(&c->protect, fd, top, &p, &err) == 0 && find(&p, ".late-hooks"),
	   "core.hooksPath 90 KiB into .git/config: protected (%s)", err.msg);
	cd_protect_plan_done(&p);
	snprintf(path, sizeof(path), "%s/.git/config", top);
	unlink(path);
	if (!ok(mkfifo(path, 0644) == 0, "a FIFO at .git/config"))
		goto out;
	alarm(60); /* (not a timing: without the fix, open() never returns) */
	ok(cd_protect_plan_build(&c->protect, fd, top, &p, &err) == 0,
	   "a FIFO at .git/config: not read, the plan goes on (%s)", err.msg);
	alarm(0);
	cd_protect_plan_done(&p);
	unlink(path);
	r = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (r >= 0 && ftruncate(r, (16 << 20) + 1) == 0) {
		ok(cd_protect_plan_build(&c->protect, fd, top, &p, &err) == -EFBIG &&
			   strstr(err.msg, ".git/config: over 16 MiB"),
		   "a config over 16 MiB: the run is refused, saying why (%s)", err.msg);
	} else {
		ok(false, "a sparse config of 16 MiB");
	}
	if (r >= 0)
		close(r);
out:
	unlink(path);
	snprintf(path, sizeof(path), "%s/.git", top);
	rmdir(path);
	rmdir(top);
	close(fd);
	free(big);
	cordon_config_free(c);
}

int main(void)
{
	test_globs();
	test_list_parse();
	test_list_load();
	test_plan();
	test_plan_every_entry();
	test_worktree();
	test_gitconfig();
	test_gitconfig_as_git();
	test_plan_gitconfig();
	test_plan_gitconfig_reading();
	return done_testing();
}
