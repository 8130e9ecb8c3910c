/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-rmtree.c - removing and measuring a tree a sandbox made (rmtree.h): everything inside
 * goes, whatever its modes; a symlink goes and what it points to stays; a tree deeper than any
 * recursion would allow goes too; the directory named by path is removed only if it is still
 * the one described; the usage counts entries and bytes without following symlinks and stops
 * at its bounds. TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmtree.h"

#include "../lib/tap.h"

static char top[64];

static void put(const char *rel, const char *text)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel, mode_t mode)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	mkdir(p, 0755);
	chmod(p, mode);
}

static bool exists(const char *rel)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	return lstat(p, &st) == 0;
}

/* a chain of n nested directories "d/d/d/..." below top/deep, through descriptors */
static int make_deep(int n)
{
	int fd = open(top, O_RDONLY | O_DIRECTORY), r = 0;

	for (int i = 0; i < n && fd >= 0; i++) {
		int sub;

		mkdirat(fd, i ? "d" : "deep", 0755);
		sub = openat(fd, i ? "d" : "deep", O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = sub;
	}
	if (fd < 0)
		r = -1;
	else
		close(fd);
	return r;
}

int main(void)
{
	char outside[64] = "/tmp/cordon-rmtree-outside.XXXXXX", p[4096];
	uint64_t bytes, entries;
	struct stat st;
	int fd, r;

	snprintf(top, sizeof(top), "/tmp/cordon-rmtree.XXXXXX");
	if (!mkdtemp(top) || !mkdtemp(outside))
		return 1;
	snprintf(p, sizeof(p), "%s/keep", outside);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	dir("a", 0755);
	dir("a/b", 0755);
	put("a/b/file", "x");
	put("top-file", "hello");
	snprintf(p, sizeof(p), "%s/link-out", top);
	r = symlink(outside, p);
	snprintf(p, sizeof(p), "%s/a/link-file", top);
	r |= symlink("/etc/passwd", p);
	ok(r == 0, "a tree with symlinks out of it");
	mkfifo(strcat(strcpy(p, top), "/fifo"), 0600);
	dir("locked", 0755);
	put("locked/inner", "y");
	dir("locked", 0);

	fd = open(top, O_RDONLY | O_DIRECTORY);
	r = cd_tree_usage(fd, 64, 1000, &bytes, &entries);
	is_int(r, 0, "usage: within its bounds");
	is_uint(entries, 9, "usage: every entry, none through the symlinks");
	ok(bytes > 0, "usage: bytes allocated");
	is_int(cd_tree_usage(fd, 64, 5, &bytes, &entries), -E2BIG, "usage: past max_entries");
	is_int(cd_tree_usage(fd, 1, 1000, &bytes, &entries), -E2BIG, "usage: past max_depth");

	ok(make_deep(2000) == 0, "a chain of 2000 nested directories");
	is_int(cd_tree_usage(fd, 64, 100000, &bytes, &entries), -E2BIG,
	       "usage: a tree too deep is over the budget");
	r = cd_rmtree_contents(fd);
	is_int(r, 0, "rmtree: everything inside removed");
	ok(!exists("a") && !exists("locked") && !exists("deep") && !exists("link-out") &&
	   !exists("fifo") && !exists("top-file"), "rmtree: nothing left inside");
	ok(exists(""), "rmtree: the directory itself stays");
	snprintf(p, sizeof(p), "%s/keep", outside);
	ok(access(p, F_OK) == 0, "rmtree: what a symlink pointed to stays");
	ok(access("/etc/passwd", F_OK) == 0, "rmtree: /etc/passwd stays");

	fstat(fd, &st);
	close(fd);
	{
		struct stat other = st;

		other.st_ino++;
		is_int(cd_rmtree_path(top, &other), -ESTALE, "rmtree_path: another directory: refused");
		ok(exists(""), "... and it stays");
	}
	snprintf(p, sizeof(p), "%s/x", top);
	mkdir(p, 0755);
	is_int(cd_rmtree_path(p, &st), -ESTALE, "rmtree_path: a path that is not the directory");
	is_int(cd_rmtree_path(top, &st), 0, "rmtree_path: the directory described goes");
	ok(access(top, F_OK) < 0, "... gone");
	snprintf(p, sizeof(p), "%s/keep", outside);
	unlink(p);
	rmdir(outside);
	return done_testing();
}
