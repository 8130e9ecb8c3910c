/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-protect.c - protected paths (protect.h): the globs a user may give, what a glob covers,
 * and what the plan finds in a workdir: there, missing, behind a symlink or a file; the
 * directories above pinned; a linked worktree's git directory inside the workdir guarded; and
 * the sweep removing what a run made at a guarded path, through no symlink. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
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

static const struct cd_guard *find(const struct cd_guard_plan *p, const char *rel)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->g[i].rel, rel) == 0)
			return &p->g[i];
	return NULL;
}

static bool pinned(const struct cd_guard_plan *p, const char *rel)
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
		ok(cd_guard_glob_check(bad[i], &err) < 0 && err.msg[0], "glob \"%s\" refused: %s",
		   bad[i], err.msg);
	}
	ok(cd_guard_glob_check(".git/hooks/", NULL) == 0, "a directory glob with a trailing /");
	ok(cd_guard_glob_check("conf/*.yml", NULL) == 0, "a wildcard glob");
	ok(cd_guard_glob_match(".git/hooks", ".git/hooks/pre-commit"), "below what it names");
	ok(cd_guard_glob_match(".git/hooks", ".git/hooks"), "what it names");
	ok(!cd_guard_glob_match(".git/hooks", ".git/hooksx"), "not a longer name");
	ok(!cd_guard_glob_match(".git/hooks", ".git"), "not the directory above");
	ok(cd_guard_glob_match("*", ".hidden"), "* matches a leading dot (protects more)");
	ok(cd_guard_glob_match("conf/*.yml", "conf/a.yml") && !cd_guard_glob_match("conf/*.yml", "conf/x/a.yml"),
	   "* stays within a name");
	ok(cd_guard_glob_match(".git/modules/**/hooks", ".git/modules/a/b/hooks/x") &&
	   cd_guard_glob_match(".git/modules/**/hooks", ".git/modules/hooks"),
	   "** spans any number of directories, none included");
}

static void test_plan(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cd_guard_plan p;
	const struct cd_guard *g;
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
	{
		char l[4096];

		snprintf(l, sizeof(l), "%s/.vscode", top);
		symlink("/etc", l); /* a symlink where a protected directory would be */
	}
	cordon_config_protect(c, "conf/*.yml", 0, &err);
	cordon_config_protect(c, "secret.txt", 1, &err);
	fd = open(top, O_RDONLY | O_DIRECTORY);
	r = cd_guard_plan_build(c, fd, top, &p, &err);
	ok(r == 0, "plan built: %s", err.msg);
	if (r < 0)
		return;
	g = find(&p, ".git/hooks");
	ok(g && g->state == CD_GUARD_EXISTS && g->dir && !g->deny, ".git/hooks: there, read-only");
	ok(p.git_hooks, "git's template hooks to hide");
	g = find(&p, ".git/config");
	ok(g && g->state == CD_GUARD_EXISTS && !g->dir, ".git/config: there");
	ok(pinned(&p, ".git"), ".git pinned");
	g = find(&p, ".env");
	ok(g && g->deny && g->state == CD_GUARD_EXISTS, ".env: hidden");
	g = find(&p, ".claude");
	ok(g && g->state == CD_GUARD_ABSENT && g->create, ".claude: missing, guarded from creation");
	g = find(&p, ".vscode/tasks.json");
	ok(g && g->state == CD_GUARD_BLOCKED, ".vscode/tasks.json: behind a symlink");
	ok(find(&p, "conf/a.yml") && find(&p, "conf/b.yml"), "the glob's two matches");
	ok(pinned(&p, "conf"), "... their directory pinned");
	g = find(&p, "secret.txt");
	ok(g && g->deny && g->state == CD_GUARD_ABSENT && g->create, "a literal --deny: guarded though missing");
	ok(!find(&p, ".gitlab-ci.yml"), "a missing path of an exists-only rule: nothing");

	/* the sweep: what a run made at guarded paths goes; a symlink is not followed */
	mk(".claude", NULL);
	mk(".claude/settings.json", "{}\n");
	mk("secret.txt", "x\n");
	mk(".git/commondir", "../evil\n");
	mk("vs", NULL);
	mk("vs/tasks.json", "{}\n");
	{
		char l[4096];

		snprintf(l, sizeof(l), "%s/.cursor", top);
		symlink("vs", l); /* a directory the run made, reached through a symlink of its own */
	}
	r = cd_guard_sweep(&p, fd, getuid(), NULL, NULL);
	ok(r == 4, "sweep removed 4 paths (%d)", r);
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
	cd_guard_plan_done(&p);
	close(fd);
	cordon_config_free(c);
}

static void test_worktree(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cd_guard_plan p;
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
	ok(cd_guard_plan_build(c, fd, top, &p, &err) == 0, "worktree plan: %s", err.msg);
	ok(find(&p, "main/.git/worktrees/wt/hooks"),
	   "a linked worktree's git directory inside the workdir: its hooks guarded (missing)");
	ok(find(&p, "main/.git/hooks") && find(&p, "main/.git/config"),
	   "... and its repository's (commondir): hooks and config");
	ok(pinned(&p, ".git"), "the .git file is pinned (a directory cannot replace it)");
	cd_guard_plan_done(&p);
	close(fd);
	cordon_config_free(c);
}

int main(void)
{
	test_globs();
	test_plan();
	test_worktree();
	return done_testing();
}
