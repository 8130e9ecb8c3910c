/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-diff.c - cd_layer_diff (diff.c, patch.c): a layer store made by hand in a temporary
 * directory (STORE/ID/base, STORE/ID/tree and a struct cd_layer in memory) with every kind of
 * change; its patch applied with the real git (`git apply --check`, then `git apply`) to a
 * repository holding the old state, and the result compared with the new state byte for byte
 * and mode for mode; the stat's lines; and the refusals: content that does not match the
 * manifest, a symlink planted in tree/ in place of a directory; files past CD_DIFF_MAX_LOAD
 * (a sparse 64 MiB one): binary, never held in memory (the peak RSS), still checked. TAP.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer.h"
#include "patch.h"
#include "sha256.h"
#include "util.h"

#include "../lib/tap.h"

#define GIT "/usr/bin/git"
#define ID  "0123456789abcdef"

struct st {
	char type; /* f, l, d, or 0: none */
	mode_t mode;
	const char *data;
	size_t len; /* 0: strlen(data) */
};

struct spec {
	const char *path;
	char op;
	struct st base, now;
};

static char bin1[3000], bin2[3100], bin3[500];

#define F(m, s)     { 'f', m, s, 0 }
#define FB(m, b)    { 'f', m, b, sizeof(b) }
#define L(s)        { 'l', 0777, s, 0 }
#define D(m)        { 'd', m, NULL, 0 }
#define NONE        { 0, 0, NULL, 0 }
#define LINES10     "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
#define LINES10_MOD "1\n2\nthree\n4\n5\n6\n7\n8\n9\nten\neleven\n"

/* Every kind of change, by path (bytewise, as a manifest has them). */
static const struct spec changes[] = {
	{ "added.txt", 'A', NONE, F(0644, "hello\nworld\n") },
	{ "back\\slash", 'A', NONE, F(0644, "back\n") },
	{ "bin-gone.bin", 'D', FB(0644, bin3), NONE },
	{ "bin-mod.bin", 'M', FB(0644, bin1), FB(0644, bin2) },
	{ "bin-new.bin", 'A', NONE, FB(0755, bin1) },
	{ "crlf.txt", 'M', F(0644, "a\r\nb\r\nc\r\n"), F(0644, "a\r\nB\r\nc\r\n") },
	{ "d2f", 'M', D(0755), F(0644, "a file where a directory was\n") },
	{ "d2f/z", 'D', F(0644, "z\n"), NONE },
	{ "dup1", 'D', F(0644, "dup\n"), NONE },
	{ "dup2", 'D', F(0644, "dup\n"), NONE },
	{ "dupA", 'A', NONE, F(0644, "dup\n") },
	{ "dupB", 'A', NONE, F(0644, "dup\n") },
	{ "empty-gone", 'D', F(0644, ""), NONE },
	{ "empty-new", 'A', NONE, F(0644, "") },
	{ "f2d", 'M', F(0644, "a file where a directory will be\n"), D(0700) },
	{ "f2d/inner", 'A', NONE, F(0644, "inner\n") },
	{ "f2l", 'M', F(0644, "was a file\n"), L("points/elsewhere") },
	{ "gone.txt", 'D', F(0644, "bye\nbye\n"), NONE },
	{ "l2f", 'M', L("target"), F(0755, "now a file\n") },
	{ "link-change", 'M', L("a"), L("b/c") },
	{ "link-gone", 'D', L("../x"), NONE },
	{ "link-new", 'A', NONE, L("target/path") },
	{ "mod.txt", 'M', F(0644, LINES10), F(0644, LINES10_MOD) },
	{ "new\nline", 'A', NONE, F(0644, "newline in the name\n") },
	{ "newdir", 'A', NONE, D(0755) },
	{ "newdir/file", 'A', NONE, F(0644, "in a new dir\n") },
	{ "noeol.txt", 'M', F(0644, "a\nb"), F(0644, "a\nb\nc") },
	{ "old name.txt", 'D', F(0644, "rename me\nplease\n"), NONE },
	{ "olddir", 'D', D(0755), NONE },
	{ "olddir/x", 'D', F(0644, "x\n"), NONE },
	{ "perm.txt", 'M', F(0644, "same\n"), F(0600, "same\n") },
	{ "quote\"s", 'A', NONE, F(0644, "quoted\n") },
	{ "script.sh", 'M', F(0644, "#!/bin/sh\n"), F(0755, "#!/bin/sh\n") },
	{ "sub dir/new name.txt", 'A', NONE, F(0755, "rename me\nplease\n") },
	{ "tab\there", 'A', NONE, F(0644, "tab\n") },
	{ "tool.sh", 'M', F(0755, "#!/bin/sh\necho 1\n"), F(0644, "#!/bin/sh\necho 2\n") },
	{ "with space.txt", 'M', F(0644, "one\n"), F(0644, "two\n") },
	{ "\xc3\xbcn\xc3\xaf" "code.txt", 'M', F(0644, "caf\xc3\xa9\n"), F(0644, "th\xc3\xa9\n") },
};

/* Files of the old state no change touches: context for git. */
static const struct spec untouched[] = {
	{ "keep.txt", 0, F(0644, "kept\n"), NONE },
	{ "olddir-sibling/y", 0, F(0755, "y\n"), NONE },
};

static char tmp[256];

static const struct spec *spec_of(const char *path)
{
	for (size_t i = 0; i < CD_ELEMENTSOF(changes); i++)
		if (strcmp(changes[i].path, path) == 0)
			return &changes[i];
	abort();
}

static size_t st_len(const struct st *s)
{
	return s->len ? s->len : s->data ? strlen(s->data) : 0;
}

static void mkparents(const char *root, const char *path)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s/%s", root, path);
	for (char *p = buf + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
}

static bool put(const char *root, const char *path, const struct st *s)
{
	char buf[1024];
	int fd;
	bool good;

	mkparents(root, path);
	snprintf(buf, sizeof(buf), "%s/%s", root, path);
	if (s->type == 'd')
		return mkdir(buf, s->mode) == 0 || errno == EEXIST;
	if (s->type == 'l')
		return symlink(s->data, buf) == 0;
	fd = open(buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	good = cd_write_all(fd, s->data, st_len(s)) == 0 && fchmod(fd, s->mode) == 0;
	close(fd);
	return good;
}

static void state_of(const struct st *s, struct cd_layer_state *ret)
{
	struct cd_sha256 h;

	*ret = (struct cd_layer_state){ .type = s->type ? (enum cd_layer_type)s->type : CD_LT_NONE,
					.mode = s->type == 'l' ? 0777 : s->mode };
	if (s->type != 'f' && s->type != 'l')
		return;
	ret->size = st_len(s);
	cd_sha256_init(&h);
	cd_sha256_update(&h, s->data, st_len(s));
	cd_sha256_final(&h, ret->sha256);
}

/* The store: TMP/store/ID/{base,tree}, and the layer describing it. */
static bool make_store(struct cd_layer *l, struct cd_layer_change *ch)
{
	char base[512], tree[512];
	bool good = true;

	snprintf(base, sizeof(base), "%s/store/" ID "/base", tmp);
	snprintf(tree, sizeof(tree), "%s/store/" ID "/tree", tmp);
	mkparents(tmp, "store/" ID "/base/x");
	mkdir(tree, 0755);
	*l = (struct cd_layer){ .id = ID, .changes = ch, .n_changes = CD_ELEMENTSOF(changes) };
	for (size_t i = 0; i < CD_ELEMENTSOF(changes); i++) {
		const struct spec *c = &changes[i];

		ch[i] = (struct cd_layer_change){ .op = (enum cd_layer_op)c->op,
						  .path = (char *)c->path };
		state_of(&c->base, &ch[i].base);
		state_of(&c->now, &ch[i].now);
		if (c->op != 'A' && (c->base.type == 'f' || c->base.type == 'l'))
			good &= put(base, c->path, &c->base);
		if (c->now.type)
			good &= put(tree, c->path, &c->now);
	}
	return good;
}

static int run(const char *cmd)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "cd '%s/repo' && HOME='%s' GIT_CONFIG_NOSYSTEM=1 %s >'%s/git.log' 2>&1",
		 tmp, tmp, cmd, tmp);
	return system(buf);
}

static bool make_repo(void)
{
	char repo[512];
	bool good = true;

	snprintf(repo, sizeof(repo), "%s/repo", tmp);
	mkdir(repo, 0755);
	for (size_t i = 0; i < CD_ELEMENTSOF(changes); i++)
		if (changes[i].op != 'A' && changes[i].base.type != 'd')
			good &= put(repo, changes[i].path, &changes[i].base);
	for (size_t i = 0; i < CD_ELEMENTSOF(untouched); i++)
		good &= put(repo, untouched[i].path, &untouched[i].base);
	return good && run(GIT " init -q && " GIT " add -A && " GIT
			   " -c user.name=t -c user.email=t@t commit -qm base") == 0;
}

/* What the repository must hold after the patch: files and symlinks (git has no dirs). */
struct entry {
	char path[256];
	char type;
	bool exec;
	const char *data;
	size_t len;
};

static struct entry want[64], got[64];
static size_t n_want, n_got;
static char got_data[64][4096];

static void want_set(const char *path, const struct st *s)
{
	size_t i;

	for (i = 0; i < n_want && strcmp(want[i].path, path) != 0; i++)
		;
	if (i == n_want && (!s || s->type == 'd'))
		return;
	if (i == n_want)
		n_want++;
	if (!s || s->type == 'd') { /* removed: the last one takes its place */
		want[i] = want[--n_want];
		return;
	}
	snprintf(want[i].path, sizeof(want[i].path), "%s", path);
	want[i].type = s->type;
	want[i].exec = s->type == 'f' && (s->mode & 0100);
	want[i].data = s->data;
	want[i].len = st_len(s);
}

static int walk(const char *path, const struct stat *s, int flag, struct FTW *f)
{
	const char *rel = path + strlen(tmp) + strlen("/repo/");
	struct entry *e = &got[n_got];
	ssize_t n;
	int fd;

	(void)f;
	if (flag == FTW_D || strncmp(rel, ".git", 4) == 0 || n_got == CD_ELEMENTSOF(got))
		return 0;
	snprintf(e->path, sizeof(e->path), "%s", rel);
	e->type = S_ISLNK(s->st_mode) ? 'l' : 'f';
	e->exec = S_ISREG(s->st_mode) && (s->st_mode & 0100);
	if (e->type == 'l') {
		n = readlink(path, got_data[n_got], sizeof(got_data[0]));
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, got_data[n_got], sizeof(got_data[0]));
		if (fd >= 0)
			close(fd);
	}
	e->data = got_data[n_got];
	e->len = n < 0 ? 0 : (size_t)n;
	n_got++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static void compare_tree(void)
{
	char repo[512];
	size_t same = 0;

	for (size_t i = 0; i < CD_ELEMENTSOF(untouched); i++)
		want_set(untouched[i].path, &untouched[i].base);
	for (size_t i = 0; i < CD_ELEMENTSOF(changes); i++)
		if (changes[i].op != 'A')
			want_set(changes[i].path, &changes[i].base);
	for (size_t i = 0; i < CD_ELEMENTSOF(changes); i++)
		want_set(changes[i].path, changes[i].op == 'D' ? NULL : &changes[i].now);
	snprintf(repo, sizeof(repo), "%s/repo", tmp);
	nftw(repo, walk, 16, FTW_PHYS);
	qsort(want, n_want, sizeof(want[0]), cmp_entry);
	qsort(got, n_got, sizeof(got[0]), cmp_entry);
	is_uint(n_got, n_want, "the repository holds as many files and symlinks as the new state");
	for (size_t i = 0; i < n_want && i < n_got; i++) {
		bool eq = strcmp(want[i].path, got[i].path) == 0 && want[i].type == got[i].type &&
			  want[i].exec == got[i].exec && want[i].len == got[i].len &&
			  memcmp(want[i].data, got[i].data, want[i].len) == 0;

		if (!eq)
			diag("differs: %s (type %c, exec %d, %zu bytes) vs %s (%c, %d, %zu)",
			     want[i].path, want[i].type, want[i].exec, want[i].len, got[i].path,
			     got[i].type, got[i].exec, got[i].len);
		same += eq;
	}
	is_uint(same, n_want, "every file and symlink after git apply: path, type, mode, bytes");
}

static char *diff_to_string(const struct cd_layer *l, unsigned flags, int *ret_r,
			    struct cordon_error *err)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	int store;

	char path[512];
	snprintf(path, sizeof(path), "%s/store", tmp);
	store = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*ret_r = cd_layer_diff(l, store, flags, f, err);
	fclose(f);
	close(store);
	return s;
}

static void diag_file(const char *name)
{
	char path[512], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		diag("%s", strtok(line, "\n") ? line : "");
	if (f)
		fclose(f);
}

static void test_git_apply(const struct cd_layer *l)
{
	struct cordon_error err = { 0 };
	char path[512];
	int r;
	_cleanup_free_ char *patch = diff_to_string(l, CD_DIFF_PATCH, &r, &err);
	FILE *f;

	is_int(r, 0, "the patch is made (%s)", err.msg);
	snprintf(path, sizeof(path), "%s/layer.patch", tmp);
	f = fopen(path, "we");
	fputs(patch ? patch : "", f);
	fclose(f);
	if (!ok(run(GIT " apply --check ../layer.patch") == 0, "git apply --check takes the patch"))
		diag_file("git.log");
	if (!ok(run(GIT " apply ../layer.patch") == 0, "git apply applies it"))
		diag_file("git.log");
	compare_tree();
	like_str(patch, "GIT binary patch\nliteral 3100\n", "binary: a literal of the new content");
	like_str(patch, "similarity index 100%\nrename from old name.txt\nrename to sub dir/new name.txt\n",
		 "the exact rename");
	like_str(patch, "diff --git \"a/new\\nline\" \"b/new\\nline\"\n", "a newline in a name, quoted");
	like_str(patch, "\"b/\\303\\274n\\303\\257code.txt\"", "UTF-8 in a name, as octal");
	like_str(patch, "--- a/with space.txt\t\n", "a label with a space ends with a tab");
	unlike_str(patch, "perm.txt", "0644 -> 0600: nothing git can express");
	unlike_str(patch, "newdir\n", "no directory in the patch");
}

static void test_stat(const struct cd_layer *l)
{
	struct cordon_error err = { 0 };
	int r;
	_cleanup_free_ char *s = diff_to_string(l, CD_DIFF_STAT, &r, &err);
	_cleanup_free_ char *both = diff_to_string(l, CD_DIFF_STAT | CD_DIFF_PATCH, &r, &err);
	static const char *lines[] = {
		"A added.txt\n",
		"D bin-gone.bin (binary)\n",
		"M bin-mod.bin (binary)\n",
		"A bin-new.bin (binary)\n",
		"A empty-new\n",
		"M f2l (file -> symlink) (symlink)\n",
		"A link-new (symlink)\n",
		"M link-change (symlink)\n",
		"A newdir/\nA newdir/file\n",
		"D olddir/\nD olddir/x\n",
		"mode 100644 -> 100600 perm.txt\n",
		"mode 100644 -> 100755 script.sh\n",
		"R old name.txt -> sub dir/new name.txt (mode 100644 -> 100755)\n",
		"M tool.sh (mode 100755 -> 100644)\n",
		"A \"new\\nline\"\n",
		"M d2f (directory -> file)\nD d2f/z\n",
		"M f2d/ (file -> directory)\nA f2d/inner\n",
		"R dup1 -> dupA\nR dup2 -> dupB\n",
	};

	is_int(r, 0, "stat and patch (%s)", err.msg);
	for (size_t i = 0; i < CD_ELEMENTSOF(lines); i++)
		like_str(s, lines[i], "stat line %zu", i);
	like_str(s, " files changed, ", "the count line");
	ok(s && both && strncmp(both, s, strlen(s)) == 0 && both[strlen(s)] == '\n' &&
		   strncmp(both + strlen(s) + 1, "diff --git ", 11) == 0,
	   "both: the stat, a blank line, the patch");
	if (s && strlen(s) > 1) {
		char *end = s + strlen(s) - 1, *last;

		*end = '\0';
		last = strrchr(s, '\n');
		diag("%s", last ? last + 1 : s);
	}
}

static void test_mismatch(const struct cd_layer *l)
{
	struct cordon_error err = { 0 };
	char path[512];
	int r;
	_cleanup_free_ char *s = NULL;
	struct st other = F(0644, "hello\nwerld\n"); /* same size, other bytes */

	snprintf(path, sizeof(path), "%s/store/" ID "/tree/added.txt", tmp);
	unlink(path);
	put(tmp, "store/" ID "/tree/added.txt", &other);
	s = diff_to_string(l, CD_DIFF_PATCH, &r, &err);
	is_int(r, -EBADMSG, "content that does not match the manifest: refused");
	is_str(err.msg, "layer " ID ": added.txt: stored content does not match the manifest",
	       "... with a message naming the path");
	unlink(path);
	put(tmp, "store/" ID "/tree/added.txt", &(struct st)F(0644, "hello\nworld\n!"));
	free(s);
	s = diff_to_string(l, CD_DIFF_STAT, &r, &err);
	is_int(r, -EBADMSG, "a stored file longer than the manifest says: refused");
	unlink(path);
	put(tmp, "store/" ID "/tree/added.txt", &spec_of("added.txt")->now);
}

static void test_planted_symlink(const struct cd_layer *l)
{
	struct cordon_error err = { 0 };
	char dir[512], out[512];
	int r;
	_cleanup_free_ char *s = NULL;

	/* the same content outside: followed, it would pass every check */
	snprintf(out, sizeof(out), "%s/outside", tmp);
	put(tmp, "outside/file", &spec_of("newdir/file")->now);
	snprintf(dir, sizeof(dir), "%s/store/" ID "/tree/newdir", tmp);
	unlink(strcat(strcpy((char[600]){ 0 }, dir), "/file"));
	rmdir(dir);
	ok(symlink(out, dir) == 0, "a symlink planted in tree/ for newdir/");
	s = diff_to_string(l, CD_DIFF_PATCH, &r, &err);
	is_int(r, -EBADMSG, "a symlink on the way to newdir/file is not followed: refused");
	like_str(err.msg, "newdir/file", "... naming the path");

	/* the last component a symlink to a file of the right content: not read either */
	snprintf(dir, sizeof(dir), "%s/store/" ID "/tree/added.txt", tmp);
	put(tmp, "outside/added.txt", &spec_of("added.txt")->now);
	unlink(dir);
	ok(symlink(strcat(out, "/added.txt"), dir) == 0, "a symlink planted in tree/ for added.txt");
	free(s);
	err = (struct cordon_error){ 0 };
	s = diff_to_string(l, CD_DIFF_STAT, &r, &err);
	is_int(r, -EBADMSG, "a symlink where the manifest has a file: refused, not followed");
}

/* A file of size bytes at STORE/ID2/part/path: holes but for head at 0 and tail at the end;
 * its state (size, SHA-256 and git's blob id, read back). */
#define ID2 "fedcba9876543210"
static bool put_big(const char *part, const char *path, off_t size, const char *head,
		    const char *tail, struct cd_layer_state *st, char id[41])
{
	char p[600], buf[65536];
	struct cd_sha256 h;
	struct sha1_ctx blob;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/store/" ID2 "/%s/%s", tmp, part, path);
	mkparents(tmp, p + strlen(tmp) + 1);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || pwrite(fd, head, strlen(head), 0) < 0 || ftruncate(fd, size) < 0 ||
	    pwrite(fd, tail, strlen(tail), size - (off_t)strlen(tail)) < 0)
		return false;
	*st = (struct cd_layer_state){ .type = CD_LT_FILE, .mode = 0644, .size = (uint64_t)size };
	cd_sha256_init(&h);
	cd_patch_blob_begin(&blob, (uint64_t)size);
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		cd_sha256_update(&h, buf, (size_t)n);
		sha1_update(&blob, (size_t)n, (const uint8_t *)buf);
	}
	cd_sha256_final(&h, st->sha256);
	cd_patch_blob_end(&blob, id);
	close(fd);
	return n == 0;
}

static long max_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* A text file of 64 MiB modified, one of 9 MiB added: past CD_DIFF_MAX_LOAD, binary; neither
 * is held in memory (the peak RSS grows by less than 24 MiB: the bigger one is 64), both are
 * still checked against the manifest. */
static void test_big(void)
{
	static struct cd_layer_change ch[2];
	struct cd_layer l = { .id = ID2, .changes = ch, .n_changes = 2 };
	struct cordon_error err = { 0 };
	char old_id[41], new_id[41], add_id[41], expect[400], p[600];
	_cleanup_free_ char *patch = NULL, *stat = NULL;
	long before;
	int r;

	ch[0] = (struct cd_layer_change){ .op = CD_LAYER_MODIFY, .path = "big.txt" };
	ch[1] = (struct cd_layer_change){ .op = CD_LAYER_ADD, .path = "nine.txt" };
	if (!ok(put_big("base", "big.txt", 64 << 20, "line\n", "end\n", &ch[0].base, old_id) &&
			put_big("tree", "big.txt", 64 << 20, "line\n", "END\n", &ch[0].now, new_id) &&
			put_big("tree", "nine.txt", 9 << 20, "text\n", "more\n", &ch[1].now, add_id),
		"a layer of two big text files (sparse)"))
		return;
	{
		char cmd[700], line[64] = "";
		FILE *f;

		snprintf(cmd, sizeof(cmd), GIT " hash-object --no-filters '%s/store/" ID2 "/tree/nine.txt'",
			 tmp);
		f = access(GIT, X_OK) == 0 ? popen(cmd, "re") : NULL;
		if (f && fgets(line, sizeof(line), f))
			line[strcspn(line, "\n")] = '\0';
		if (f)
			pclose(f);
		if (!f)
			skip("no " GIT, "git's blob id");
		else
			is_str(line, add_id, "the blob id is git's (git hash-object)");
	}
	before = max_rss_kib();
	stat = diff_to_string(&l, CD_DIFF_STAT, &r, &err);
	is_int(r, 0, "their stat (%s)", err.msg);
	like_str(stat, "M big.txt (binary)\nA nine.txt (binary)\n", "both binary to the stat");
	patch = diff_to_string(&l, CD_DIFF_PATCH, &r, &err);
	is_int(r, 0, "their patch (%s)", err.msg);
	snprintf(expect, sizeof(expect), "diff --git a/big.txt b/big.txt\nindex %s..%s 100644\n"
		 "Binary files a/big.txt and b/big.txt differ\n", old_id, new_id);
	like_str(patch, expect, "the patch: git's blob ids, \"Binary files ... differ\"");
	snprintf(expect, sizeof(expect), "diff --git a/nine.txt b/nine.txt\nnew file mode 100644\n"
		 "index 0000000000000000000000000000000000000000..%s\n"
		 "Binary files /dev/null and b/nine.txt differ\n", add_id);
	like_str(patch, expect, "an added one: from /dev/null");
	ok(max_rss_kib() - before < 24 << 10, "neither held in memory: the peak RSS grew by %ld KiB",
	   max_rss_kib() - before);

	/* the same size, another byte: the hash read through says so */
	snprintf(p, sizeof(p), "%s/store/" ID2 "/tree/big.txt", tmp);
	r = open(p, O_WRONLY | O_CLOEXEC);
	ok(r >= 0 && pwrite(r, "X", 1, 32 << 20) == 1, "a byte changed in the stored file");
	if (r >= 0)
		close(r);
	free(stat);
	stat = diff_to_string(&l, CD_DIFF_STAT, &r, &err);
	is_int(r, -EBADMSG, "content that does not match the manifest: refused");
	like_str(err.msg, "big.txt: stored content does not match the manifest", "naming it: %s",
		 err.msg);
}

static int rm_entry(const char *p, const struct stat *s, int flag, struct FTW *f)
{
	(void)s, (void)flag, (void)f;
	return remove(p);
}

int main(void)
{
	static struct cd_layer_change ch[CD_ELEMENTSOF(changes)];
	struct cd_layer l;
	unsigned seed = 1;

	for (size_t i = 0; i < sizeof(bin1); i++)
		bin1[i] = (char)(i % 7 == 0 ? 0 : rand_r(&seed));
	memcpy(bin2, bin1, sizeof(bin1));
	for (size_t i = 2000; i < sizeof(bin2); i++)
		bin2[i] = (char)rand_r(&seed);
	bin3[10] = 'x';
	snprintf(tmp, sizeof(tmp), "%s/cordon-test-diff.XXXXXX", getenv("TMPDIR") ?: "/tmp");
	if (!mkdtemp(tmp))
		return 1;
	ok(make_store(&l, ch), "a store with every kind of change");
	if (access(GIT, X_OK) != 0) {
		skip("no " GIT, "git apply");
	} else {
		ok(make_repo(), "a git repository with the old state");
		test_git_apply(&l);
	}
	test_stat(&l);
	test_mismatch(&l);
	test_planted_symlink(&l);
	test_big();
	if (!getenv("KEEP"))
		nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return done_testing();
}
