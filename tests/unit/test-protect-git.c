/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-protect-git.c - what git runs from the workdir (protect_git.h), on workdirs made here:
 * a .git file protected read-only; submodules and nested repositories found through the index's
 * gitlinks and .gitmodules, their .git files and configs protected, their indexes recorded; after
 * a direct run, a .git put at a gitlink (or below a sparse directory) and an index cordon
 * cannot read moved aside; a --cow layer's new .git below the top and the gitlinks its index
 * adds made globs; what configs name: includes read once each, to git's depth, within a
 * budget; "~/" and a symlink to the workdir; the files of programs git runs. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "layer.h"
#include "protect.h"
#include "protect_git.h"

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

static bool there(const char *rel)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	return lstat(p, &st) == 0;
}

static const struct cd_protect_path *find(const struct cd_protect_plan *p, const char *rel)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->paths[i].rel, rel) == 0)
			return &p->paths[i];
	return NULL;
}

static bool listed(char **v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

static void fresh(void)
{
	strcpy(top, "/tmp/test-protect-git.XXXXXX");
	if (!mkdtemp(top))
		abort();
}

/* An index (version 2, SHA-1) of these paths: "160000 name" a gitlink, "040000 name/" a sparse
 * directory, anything else a file */
static void write_index(const char *rel, const char *const *entries, size_t n)
{
	uint8_t b[8192] = "DIRC\0\0\0\2";
	size_t len = 12;
	char p[4096];
	FILE *f;

	b[11] = (uint8_t)n;
	for (size_t i = 0; i < n; i++) {
		const char *name = entries[i] + 7;
		uint32_t mode = strncmp(entries[i], "160000", 6) == 0   ? 0160000
				: strncmp(entries[i], "040000", 6) == 0 ? 0040000
									: 0100644;
		size_t start = len, nl = strlen(name);

		memset(b + len, 0, 60);
		b[len + 24] = (uint8_t)(mode >> 24), b[len + 25] = (uint8_t)(mode >> 16);
		b[len + 26] = (uint8_t)(mode >> 8), b[len + 27] = (uint8_t)mode;
		len += 60;
		b[len++] = (uint8_t)(nl >> 8);
		b[len++] = (uint8_t)nl;
		memcpy(b + len, name, nl);
		len += nl;
		do
			b[len++] = 0;
		while ((len - start) % 8);
	}
	memset(b + len, 0, 20);
	len += 20;
	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	if (f) {
		fwrite(b, 1, len, f);
		fclose(f);
	}
}

struct told {
	int n, why[8];
	char rel[8][256], aside[8][256];
};

static void notice(void *data, enum cd_protect_why why, const char *rel, const char *glob,
		   const char *aside)
{
	struct told *t = data;

	(void)glob;
	if (t->n < 8) {
		t->why[t->n] = why;
		snprintf(t->rel[t->n], sizeof(t->rel[0]), "%s", rel);
		snprintf(t->aside[t->n], sizeof(t->aside[0]), "%s", aside ? aside : "");
	}
	t->n++;
}

static int plan(struct cd_protect_plan *p, struct cordon_error *err)
{
	struct cordon_config *c = cordon_config_new();
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	r = cd_protect_plan_build(&c->protect, fd, top, p, err);
	close(fd);
	cordon_config_free(c);
	return r;
}

static int sweep(const struct cd_protect_plan *p, struct told *t)
{
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	memset(t, 0, sizeof(*t));
	r = cd_protect_sweep(p, fd, getuid(), notice, t);
	close(fd);
	return r;
}

/* F1 1: the .git file of a linked worktree names its git directory: read-only */
static void test_gitfile(void)
{
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	const struct cd_protect_path *g;

	fresh();
	mk(".git", "gitdir: /nonexistent/main/.git/worktrees/wt\n");
	ok(plan(&p, &err) == 0, "a workdir whose .git is a file: %s", err.msg);
	g = find(&p, ".git");
	ok(g && g->state == CD_PROTECT_EXISTS && !g->dir && !g->deny,
	   "the .git file is protected read-only (it says where git takes config and hooks from)");
	ok(listed(p.globs, ".git"), "... and a --cow layer changing it is refused (its glob)");
	cd_protect_plan_done(&p);
}

/* F1 2, 3: submodules and nested repositories */
static void test_submodules(void)
{
	static const char *const index[] = { "100644 a", "160000 emb", "160000 sub",
					     "160000 x/y" };
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	const struct cd_protect_path *g;
	const struct cd_protect_repo *top_repo = NULL;
	struct told t;
	int n;

	fresh();
	mk(".git", NULL);
	mk(".git/config", "[core]\n");
	mk(".git/modules", NULL);
	mk(".git/modules/sub", NULL);
	mk(".git/modules/sub/config", "[core]\n\thooksPath = sub-hooks\n");
	write_index(".git/index", index, 4);
	mk("sub", NULL);
	mk("sub/.git", "gitdir: ../.git/modules/sub\n");
	mk("emb", NULL);
	mk("emb/.git", NULL);
	mk("emb/.git/config", "[core]\n\tfsmonitor = ../tools/fsmon\n");
	mk("emb/.git/hooks", NULL);
	mk("x", NULL);
	mk("tools", NULL);
	mk("tools/fsmon", "#!/bin/sh\n");
	mk(".gitmodules", "[submodule \"s\"]\n\tpath = sub\n[submodule \"w\"]\n\tpath = later\n");
	ok(plan(&p, &err) == 0, "a repository with submodules: %s", err.msg);
	g = find(&p, "sub/.git");
	ok(g && g->state == CD_PROTECT_EXISTS && !g->dir, "a submodule's .git file: read-only");
	g = find(&p, ".git/modules");
	ok(g && g->state == CD_PROTECT_EXISTS && g->dir && !find(&p, ".git/modules/sub/config"),
	   "... its git directory below .git/modules, read-only with it: no mount of its own");
	g = find(&p, "sub/sub-hooks");
	ok(g && g->state == CD_PROTECT_ABSENT && g->create && g->dir,
	   "... what its config names, relative to its worktree: protected (core.hooksPath)");
	g = find(&p, "emb/.git/config");
	ok(g && g->state == CD_PROTECT_EXISTS,
	   "a nested repository's (a gitlink) config: read-only");
	g = find(&p, "emb/.git/hooks");
	ok(g && g->state == CD_PROTECT_EXISTS && g->dir, "... its hooks: read-only");
	g = find(&p, "tools/fsmon");
	ok(g && g->state == CD_PROTECT_EXISTS,
	   "... the program its core.fsmonitor names (../tools/fsmon from emb): read-only");
	for (size_t i = 0; i < p.n_repos; i++)
		if (!p.repos[i].top[0])
			top_repo = &p.repos[i];
	ok(top_repo && listed(top_repo->links, "x/y") && listed(top_repo->links, "sub") &&
		   listed(top_repo->present, "sub") && listed(top_repo->present, "emb") &&
		   !listed(top_repo->present, "x/y"),
	   "the workdir's index recorded: its gitlinks, and which had a .git");
	ok(p.n_repos == 2, "... and emb's (a nested repository's index is its own to write): %zu",
	   p.n_repos);

	/* after a direct run */
	mk("x/y", NULL);
	mk("x/y/.git", NULL);
	mk("x/y/.git/config", "[core]\n\tfsmonitor = evil\n");
	n = sweep(&p, &t);
	ok(n == 1 && !there("x/y/.git") && there("x/y/.git.cordon-moved-aside/config"),
	   "a .git made at a gitlink that had none: moved aside, kept (%d)", n);
	ok(t.n == 1 && t.why[0] == CD_PROTECT_SUBMODULE && strcmp(t.rel[0], "x/y/.git") == 0 &&
		   strcmp(t.aside[0], "x/y/.git.cordon-moved-aside") == 0,
	   "... and told: %s -> %s", t.rel[0], t.aside[0]);
	{
		static const char *const more[] = { "100644 a", "160000 emb", "160000 new",
						    "160000 sub", "160000 x/y" };

		mk("new", NULL);
		mk("new/.git", "gitdir: .evil\n");
		write_index(".git/index", more, 5);
		n = sweep(&p, &t);
		ok(n == 1 && !there("new/.git") && there("new/.git.cordon-moved-aside"),
		   "the index changed: a gitlink added, with a .git (a file): moved aside (%d)", n);
		ok(there("sub/.git") && there("emb/.git"),
		   "... the submodules there at the start stay");
	}
	mk(".git/index", "not an index\n");
	n = sweep(&p, &t);
	ok(n == 1 && !there(".git/index") && there(".git/index.cordon-moved-aside") &&
		   t.why[0] == CD_PROTECT_INDEX,
	   "an index cordon cannot read: moved aside (git enters no submodule without it)");
	cd_protect_plan_done(&p);
}

/* A sparse index: gitlinks can hide in a sparse directory's tree; after the run, every .git
 * below a sparse directory is moved aside */
static void test_sparse(void)
{
	static const char *const index[] = { "040000 out/deep/", "100644 in/f" };
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	struct told t;

	fresh();
	mk(".git", NULL);
	write_index(".git/index", index, 2);
	ok(plan(&p, &err) == 0 && p.n_repos == 1 && listed(p.repos[0].sparse, "out/deep/"),
	   "a sparse index: its sparse directory recorded (%s)", err.msg);
	mk("out", NULL);
	mk("out/deep", NULL);
	mk("out/deep/x", NULL);
	mk("out/deep/x/.git", "gitdir: ../../../evil\n");
	ok(sweep(&p, &t) == 1 && !there("out/deep/x/.git") &&
		   there("out/deep/x/.git.cordon-moved-aside"),
	   "a .git below a sparse directory: moved aside");
	cd_protect_plan_done(&p);
}

/* Every file the plan reads, a FIFO: never opened to block */
static void test_fifos(void)
{
	static const char *const index[] = { "160000 sub" };
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	char path[4096];

	fresh();
	mk(".git", NULL);
	write_index(".git/index", index, 1);
	mk("sub", NULL);
	snprintf(path, sizeof(path), "%s/sub/.git", top);
	mkfifo(path, 0644);
	snprintf(path, sizeof(path), "%s/.gitmodules", top);
	mkfifo(path, 0644);
	alarm(60); /* not a timing: an open() of a FIFO never returns */
	ok(plan(&p, &err) == 0, "a FIFO at sub/.git and at .gitmodules: the plan goes on (%s)",
	   err.msg);
	cd_protect_plan_done(&p);
	snprintf(path, sizeof(path), "%s/.git/index", top);
	unlink(path);
	mkfifo(path, 0644);
	ok(plan(&p, &err) == 0, "a FIFO at .git/index: the plan goes on (%s)", err.msg);
	alarm(0);
	cd_protect_plan_done(&p);
}

/* F2 b: includes read once each (a config including a file N times that includes itself N
 * times took N^4 reads), to git's depth of 10 (not 4), within a budget that fails the run */
static void test_includes(void)
{
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	char text[8192] = "[include]\n";

	fresh();
	mk(".git", NULL);
	for (int i = 0; i < 40; i++)
		strcat(text, "\tpath = inc\n");
	mk(".git/config", text);
	mk(".git/inc", text);
	alarm(60); /* 40^10 reads never end */
	ok(plan(&p, &err) == 0 && find(&p, ".git/inc"),
	   "a config including a file 40 times that includes itself 40 times: read once (%s)",
	   err.msg);
	alarm(0);
	cd_protect_plan_done(&p);
	for (int i = 1; i <= 9; i++) {
		char name[32], body[64];

		snprintf(name, sizeof(name), ".git/c%d", i);
		snprintf(body, sizeof(body), "[include]\n\tpath = c%d\n", i + 1);
		mk(name, body);
	}
	mk(".git/config", "[include]\n\tpath = c1\n");
	ok(plan(&p, &err) == 0 && find(&p, ".git/c9") && find(&p, ".git/c10"),
	   "a chain of includes 10 deep (git's depth): the last file protected too");
	cd_protect_plan_done(&p);
	text[0] = '\0';
	strcat(text, "[include]\n");
	for (int i = 0; i < 70; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "\tpath = f%d\n", i);
	mk(".git/config", text);
	memset(&err, 0, sizeof(err));
	ok(plan(&p, &err) == -E2BIG && strstr(err.msg, "include more than 64 files"),
	   "70 distinct includes: the run is refused, saying why (%s)", err.msg);
}

/* F3: a path named as git expands it, and where it is on the host */
static void test_spellings(void)
{
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	char text[4096], alias[128], *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	fresh();
	snprintf(alias, sizeof(alias), "%s-alias", top);
	if (symlink(top, alias) < 0)
		return (void)ok(false, "symlink");
	mk(".git", NULL);
	snprintf(text, sizeof(text),
		 "[core]\n\thooksPath = ~/tilde-hooks\n[include]\n\tpath = %s/via-alias.inc\n"
		 "[core]\n\thooksPath = %s/sub/../alias-hooks\n",
		 alias, alias);
	mk(".git/config", text);
	mk("sub", NULL);
	setenv("HOME", top, 1);
	ok(plan(&p, &err) == 0, "a config naming the workdir by other names: %s", err.msg);
	ok(find(&p, "tilde-hooks") != NULL, "\"~/tilde-hooks\" with HOME the workdir: protected");
	ok(find(&p, "via-alias.inc") != NULL,
	   "an include through a symlink to the workdir: protected (by device and inode)");
	ok(find(&p, "alias-hooks") != NULL, "... with \"..\" in it, as the host resolves it");
	cd_protect_plan_done(&p);
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	free(home);
	unlink(alias);
}

/* The programs a repository's config names: their files, read-only */
static void test_commands(void)
{
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	const struct cd_protect_path *g;

	fresh();
	mk(".git", NULL);
	mk(".git/config",
	   "[core]\n\tfsmonitor = ./tools/fsmon.sh\n\tpager = less -R\n"
	   "[alias]\n\tt = !sh scripts/t.sh --conf=./cfg/a\n\tst = -c core.editor=./ed status\n"
	   "[diff \"x\"]\n\ttextconv = conv.py\n[filter \"f\"]\n\tclean = \"tools/\"\n");
	mk("tools", NULL);
	mk("tools/fsmon.sh", "#!/bin/sh\n");
	mk("conv.py", "");
	mk("less", "");
	ok(plan(&p, &err) == 0, "a config naming programs: %s", err.msg);
	g = find(&p, "tools/fsmon.sh");
	ok(g && g->state == CD_PROTECT_EXISTS && !g->dir,
	   "core.fsmonitor ./tools/fsmon.sh: read-only");
	g = find(&p, "scripts/t.sh");
	ok(g && g->state == CD_PROTECT_ABSENT && g->create,
	   "alias.t \"!sh scripts/t.sh\": the script, missing, protected from being made");
	ok(find(&p, "cfg/a") && find(&p, "ed"),
	   "an option's value (--conf=./cfg/a), git's -c core.editor=./ed: protected");
	ok(find(&p, "conv.py") != NULL, "diff.x.textconv conv.py, a file of the top: read-only");
	ok(find(&p, "less") != NULL && !find(&p, "-R"),
	   "core.pager \"less -R\": a file named less at the top too; an option, not");
	ok(!find(&p, "tools"), "a directory named (filter.f.clean tools/): not made read-only");
	cd_protect_plan_done(&p);
	mk(".git/config", "[core]\n\thooksPath = .\n");
	mk("pre-commit", "#!/bin/sh\n");
	ok(plan(&p, &err) == 0 && find(&p, "pre-commit") && find(&p, "pre-push") &&
		   find(&p, "pre-commit")->state == CD_PROTECT_EXISTS,
	   "core.hooksPath \".\" (the workdir itself): each hook's name protected (%s)", err.msg);
	cd_protect_plan_done(&p);
}

/* --cow: what a layer must carry besides the plan's globs */
static void test_layer(void)
{
	static const char *const index[] = { "160000 sub" };
	static const char *const grown[] = { "160000 n", "160000 sub" };
	struct cordon_error err = { 0 };
	struct cd_protect_plan p;
	struct cd_layer_change ch[5] = {
		{ .op = CD_LAYER_MODIFY, .path = ".git/index" },
		{ .op = CD_LAYER_ADD, .path = ".git/objects/ab/cd" },
		{ .op = CD_LAYER_ADD, .path = "a/b/.git" },
		{ .op = CD_LAYER_ADD, .path = "a/b/.git/config" },
		{ .op = CD_LAYER_DELETE, .path = "old/.git" },
	};
	struct cd_layer l = { .changes = ch, .n_changes = 5 };
	char **globs = NULL, up[80];
	int ufd, wfd;

	fresh();
	mk(".git", NULL);
	write_index(".git/index", index, 1);
	ok(plan(&p, &err) == 0, "--cow: the plan (%s)", err.msg);
	snprintf(up, sizeof(up), "%s/upper", top);
	mk("upper", NULL);
	mk("upper/.git", NULL);
	write_index("upper/.git/index", grown, 2);
	ufd = open(up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	wfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(cd_protect_git_layer(&p, &l, ufd, wfd, &globs, &err) == 0, "the layer's globs (%s)",
	   err.msg);
	ok(listed(globs, "a/b/.git"), "a .git the run made below the top: refused");
	ok(listed(globs, "n/.git"), "the .git of a gitlink the layer's index adds: refused");
	ok(!listed(globs, "sub/.git") && !listed(globs, "old/.git") && cd_strv_len(globs) == 2,
	   "nothing else (a gitlink there before, a .git deleted, objects)");
	cd_strv_free(globs);
	globs = NULL;
	ch[2].path = "a[1]/.git";
	ch[3].path = "a[1]/.git/config";
	ok(cd_protect_git_layer(&p, &l, ufd, wfd, &globs, &err) == 0, "again (%s)", err.msg);
	ok(globs && strcmp(globs[0], "a\\[1]/.git") == 0 &&
		   cd_protect_glob_match(globs[0], "a[1]/.git/config") &&
		   !cd_protect_glob_match(globs[0], "a1/.git/config"),
	   "a path with a glob's characters: escaped (%s)", globs ? globs[0] : "none");
	cd_strv_free(globs);
	close(ufd);
	close(wfd);
	cd_protect_plan_done(&p);
}

int main(void)
{
	test_gitfile();
	test_submodules();
	test_sparse();
	test_fifos();
	test_includes();
	test_spellings();
	test_commands();
	test_layer();
	return done_testing();
}
