/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect_git.c - what git runs from the workdir (protect_git.h): the repositories git enters
 * from it and what their configs name, planned when the run starts; after a direct run, a
 * repository the sandbox put where git would now enter one is moved aside; with --cow, the
 * layer's globs refuse it. Runs in the supervisor. Never runs git: the files are read here
 * (gitconfig.c, gitindex.c), each through the workdir's descriptor, never from a FIFO.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "gitconfig.h"
#include "gitindex.h"
#include "idxcache.h"
#include "layer.h"
#include "protect_git.h"
#include "util.h"

/* git reads a config of any size; past this, the run fails rather than read part of it */
#define GITCONFIG_MAX (16u << 20)
/* an index of a million paths is about 100 MiB; past this, the run fails */
#define GITINDEX_MAX (256u << 20)
/* git's own depth of includes (config.c): deeper, git dies and runs nothing */
#define INCLUDE_DEPTH 10
/* the distinct files a run's configs include, and the paths they name (hooks, programs): past
 * them the run fails, saying why, rather than protect part of what git would run */
#define INCLUDES_MAX 64
#define NAMED_MAX 256
/* the repositories planned (the workdir's, its submodules', nested ones), and how deep
 * submodules of submodules go: past them, the run fails */
#define REPOS_MAX 256
#define REPO_DEPTH 8
/* entries looked at below an index's sparse directories after a run: past it, the index is
 * moved aside */
#define SPARSE_WALK_MAX 10000

struct fileid {
	dev_t dev;
	ino_t ino;
};

struct gitplan {
	struct cd_protect_plan *p;
	int wfd;
	const char *wpath;
	struct stat wst;
	char *homes[2];        /* "~/": the caller's HOME, the workdir owner's home */
	struct fileid *read;   /* the config files read */
	size_t n_read;
	char **included;       /* the include files followed, as found */
	unsigned named;        /* paths the configs named, protected */
	unsigned repos;        /* repositories planned */
	struct cordon_error *err;
};

/* s into d of size bytes, cut to fit */
static void scopy(char *d, size_t size, const char *s)
{
	size_t n = strnlen(s, size - 1);

	memcpy(d, s, n);
	d[n] = '\0';
}

/* A place is a path relative to the workdir ("": the workdir), or an absolute path outside it */
static bool outside(const char *place)
{
	return place[0] == '/';
}

/* place/name: outside, as a string; inside, normalized (leaving the workdir: the host's path) */
static int place_join(const struct gitplan *g, const char *place, const char *name, char *out,
		      size_t size)
{
	int n;

	if (!outside(place)) {
		int r = cd_protect_join(place, name, out, size);

		if (r != -EXDEV)
			return r;
		n = snprintf(out, size, "%s/%s/%s", g->wpath, place, name);
	} else {
		n = snprintf(out, size, "%s/%s", place, name);
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The directory of a file's place */
static void place_dir(const char *file, char *out, size_t size)
{
	const char *slash = strrchr(file, '/');

	snprintf(out, size, "%.*s", slash ? (int)(slash - file) + (slash == file) : 0, file);
}

/* Could the workdir's owner read the file st, by its mode? A file of the host is read for the
 * workdir's repositories only then: the supervisor may be root, and what it reads (a .git file
 * names it, which a run may have written) shows in what it protects. */
static bool owner_may_read(int wfd, const struct stat *st)
{
	struct stat w;

	if (fstat(wfd, &w) < 0)
		return false;
	if (w.st_uid == 0 || st->st_uid == w.st_uid)
		return w.st_uid == 0 || (st->st_mode & S_IRUSR);
	return st->st_gid == w.st_gid ? (st->st_mode & S_IRGRP) : (st->st_mode & S_IROTH);
}

/* A regular file of the host (a git directory outside the workdir), whole; never a FIFO */
static int read_host(int wfd, const char *path, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t n = 1;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !owner_may_read(wfd, &st))
		return -ENOENT;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	buf = calloc(1, (size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (n < 0)
		return -errno;
	*ret_len = got;
	*ret = CD_TAKE_PTR(buf);
	return 0;
}

/* A file of a place: beneath the workdir (no symlink), or the host's */
static int place_read(const struct gitplan *g, const char *file, size_t max, char **ret,
		      size_t *ret_len)
{
	return outside(file) ? read_host(g->wfd, file, max, ret, ret_len)
			     : cd_protect_read(g->wfd, file, max, ret, ret_len);
}

/* ---- where a path a repository names is: host paths compared by device and inode ---- */

/* How many levels below the workdir directory d is (0: the workdir), by its ancestors' device
 * and inode; -1: not below it */
static int levels_below(const struct gitplan *g, int d)
{
	_cleanup_close_ int cur = fcntl(d, F_DUPFD_CLOEXEC, 3);

	for (int k = 0; cur >= 0 && k < PATH_MAX / 2; k++) {
		struct stat st, up;
		int parent;

		if (fstat(cur, &st) < 0)
			return -1;
		if (st.st_dev == g->wst.st_dev && st.st_ino == g->wst.st_ino)
			return k;
		parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0 || fstat(parent, &up) < 0 ||
		    (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
			cd_closep(&parent);
			return -1; /* the root */
		}
		cd_closep(&cur);
		cur = parent;
	}
	return -1;
}

/* The last k components of d's path, and rest after them, as a path of the workdir */
static int rel_of(int d, int k, const char *rest, char *out, size_t size)
{
	char link[64], path[PATH_MAX], joined[2 * PATH_MAX + 2];
	const char *tail;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", d);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return -errno;
	path[n] = '\0';
	tail = path + n;
	for (int i = 0; i < k && tail > path; i++)
		do
			tail--;
		while (tail > path && *tail != '/');
	if (*tail == '/')
		tail++;
	if (k == 0)
		tail = "";
	if (snprintf(joined, sizeof(joined), "%s/%s", tail, rest) >= (int)sizeof(joined))
		return -ENAMETOOLONG;
	n = cd_protect_join("", joined, out, size);
	if (n == -EXDEV && strspn(joined, "/.") == strlen(joined)) {
		out[0] = '\0'; /* the workdir itself */
		return 1;
	}
	return n == 0 ? 1 : 0;
}

/* An absolute path as git opens it on the host (symlinks followed, ".." physical): in the
 * workdir by whatever name (a symlink to it, its path through a bind mount), 1 and out its path
 * there; 0 elsewhere. Only directories are opened (O_PATH): nothing is read or changed. */
static int host_rel(const struct gitplan *g, const char *abs, char *out, size_t size)
{
	_cleanup_close_ int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char copy[PATH_MAX], *save = NULL, *t;
	const char *rest = "";
	int k;

	if (snprintf(copy, sizeof(copy), "%s", abs) >= (int)sizeof(copy) || cur < 0)
		return 0;
	for (t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		int next = openat(cur, t, O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (next < 0) { /* missing (or no directory): what git would find made here */
			rest = abs + (t - copy);
			break;
		}
		cd_closep(&cur);
		cur = next;
	}
	k = levels_below(g, cur);
	return k < 0 ? 0 : rel_of(cur, k, rest, out, size);
}

/* Where git finds value v, named by a file of base (a place): the places it may be, as git
 * expands "~/" (its user's HOME: the caller's, or the workdir owner's) and "~user/" (that
 * user's home); "%(prefix)/" is git's own installation. Each is a path of the workdir, or the
 * host's path outside it. Returns how many (0..2). */
static int locate(const struct gitplan *g, const char *base, const char *v,
		  char out[2][PATH_MAX])
{
	char cand[2][PATH_MAX];
	int nc = 0, n = 0;

	if (!v[0] || v[0] == '%')
		return 0;
	if (v[0] == '~') {
		const char *slash = strchr(v, '/'), *rest = slash ? slash + 1 : "";
		size_t ul = slash ? (size_t)(slash - v - 1) : strlen(v + 1);

		if (ul == 0) {
			for (int i = 0; i < 2; i++)
				if (g->homes[i] && (i == 0 || !g->homes[0] ||
						    strcmp(g->homes[0], g->homes[1]) != 0))
					snprintf(cand[nc++], PATH_MAX, "%s/%s", g->homes[i], rest);
		} else if (ul < 256) {
			char user[256];
			struct passwd *pw;

			memcpy(user, v + 1, ul);
			user[ul] = '\0';
			pw = getpwnam(user);
			if (pw && pw->pw_dir)
				snprintf(cand[nc++], PATH_MAX, "%s/%s", pw->pw_dir, rest);
		}
	} else if (v[0] == '/' || place_join(g, base, v, cand[nc], PATH_MAX) == 0) {
		if (v[0] == '/')
			scopy(cand[nc], PATH_MAX, v);
		nc++;
	}
	for (int i = 0; i < nc; i++) {
		if (!outside(cand[i])) /* relative: joined inside */
			scopy(out[n++], PATH_MAX, cand[i]);
		else if (host_rel(g, cand[i], out[n], PATH_MAX) == 1)
			n++;
		else
			scopy(out[n++], PATH_MAX, cand[i]);
	}
	return n;
}

/* ---- what a config names ---- */

static int plan_config_file(struct gitplan *g, const char *file, const char *top, unsigned depth,
			    size_t *hash_len);

static int named(struct gitplan *g, const char *what)
{
	if (++g->named <= NAMED_MAX)
		return 0;
	return cd_fail(g->err, E2BIG, "protect",
		       "%s: git configs here name more than %d paths (hooks, included files, "
		       "programs); cordon protects them all or runs nothing",
		       what, NAMED_MAX);
}

/* The hooks git runs (githooks(5)), by name: where core.hooksPath is the workdir itself, which
 * cannot be made read-only whole */
static const char *const hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
	"post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
	"post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc",
	"post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist",
	"p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change",
};

/* core.hooksPath: a directory of hooks, relative to the worktree's top: protected as .git/hooks
 * (the workdir itself: each hook's name) */
static int plan_hooks(struct gitplan *g, const char *top, const char *v)
{
	char at[2][PATH_MAX], dir[PATH_MAX + 2];
	int n = locate(g, top, v, at), r = 0;

	for (int i = 0; r >= 0 && i < n; i++) {
		if (outside(at[i]))
			continue;
		r = named(g, at[i][0] ? at[i] : ".");
		for (size_t k = 0; r >= 0 && !at[i][0] && k < CD_ELEMENTSOF(hook_names); k++)
			r = cd_protect_literal(g->p, g->wfd, hook_names[k], true, false, g->err);
		if (r < 0 || !at[i][0])
			continue;
		scopy(dir, sizeof(dir) - 1, at[i]);
		strcat(dir, "/");
		r = cd_protect_literal(g->p, g->wfd, dir, true, true, g->err);
	}
	return r;
}

/* include.path: more config, relative to the including file's directory, read where it is and
 * protected from being made; each distinct file counts once */
static int plan_include(struct gitplan *g, const char *file, const char *top, const char *v,
			unsigned depth, size_t *hash_len)
{
	char at[2][PATH_MAX], dir[PATH_MAX];
	int n, r = 0;

	place_dir(file, dir, sizeof(dir));
	n = locate(g, dir, v, at);
	for (int i = 0; r >= 0 && i < n; i++) {
		bool seen = false;

		for (char **s = g->included; s && *s && !seen; s++)
			seen = strcmp(*s, at[i]) == 0;
		if (seen)
			continue; /* read once: a file that includes itself N times is read once */
		if (cd_strv_len(g->included) >= INCLUDES_MAX)
			return cd_fail(g->err, E2BIG, "protect",
				       "%s: git configs here include more than %d files; cordon "
				       "protects what they name or runs nothing",
				       file, INCLUDES_MAX);
		if (cd_strv_push(&g->included, at[i]) < 0)
			return cd_fail(g->err, ENOMEM, "protect", "out of memory");
		if (!outside(at[i]) && at[i][0])
			r = cd_protect_literal(g->p, g->wfd, at[i], true, false, g->err);
		if (r >= 0)
			r = plan_config_file(g, at[i], top, depth + 1, hash_len);
	}
	return r;
}

/* A word of a command line names a file: one with a "/" (or "~") wherever it is (protected from
 * being made too); a bare name (a program git looks up in PATH, or an argument) where it is a
 * file of the worktree's top. A directory is not protected (a tool's working directory). */
static int plan_word(struct gitplan *g, const char *top, const char *w)
{
	char at[2][PATH_MAX];
	bool path = strchr(w, '/') || w[0] == '~';
	int n, r = 0;

	if (!w[0] || (w[0] == '-' && !path))
		return 0;
	n = locate(g, top, w, at);
	for (int i = 0; r >= 0 && i < n; i++) {
		struct stat st;
		bool there;

		if (outside(at[i]) || !at[i][0])
			continue;
		there = fstatat(g->wfd, at[i], &st, AT_SYMLINK_NOFOLLOW) == 0;
		if ((there && S_ISDIR(st.st_mode)) || (!there && !path))
			continue;
		r = named(g, at[i]);
		if (r >= 0)
			r = cd_protect_literal(g->p, g->wfd, at[i], true, false, g->err);
	}
	return r;
}

/* A command line's words, as the shell splits them (quotes, backslashes; a word ends at a blank
 * or an operator), a leading "!" (an alias's, a helper's) dropped; of a word with "=" (an
 * assignment, an option's value, -c name=value) the value too */
static int plan_command(struct gitplan *g, const char *top, const char *v)
{
	char w[PATH_MAX];
	size_t n = 0;
	char q = 0;
	int r = 0;

	if (v[0] == '!')
		v++;
	for (const char *c = v;; c++) {
		bool end = !*c || (!q && strchr(" \t\n|&;<>()`$", *c));

		if (end) {
			w[n] = '\0';
			if (n)
				r = plan_word(g, top, w);
			if (r >= 0 && n && strchr(w, '='))
				r = plan_word(g, top, strchr(w, '=') + 1);
			n = 0;
			if (r < 0 || !*c)
				return r;
			continue;
		}
		if (q ? *c == q : (*c == '\'' || *c == '"')) {
			q = q ? 0 : *c;
			continue;
		}
		if (*c == '\\' && q != '\'' && c[1])
			c++;
		if (n + 1 < sizeof(w))
			w[n++] = *c;
	}
}

static bool read_before(struct gitplan *g, const char *file)
{
	struct stat st;
	int r = outside(file) ? stat(file, &st) : fstatat(g->wfd, file, &st, AT_SYMLINK_NOFOLLOW);

	if (r < 0)
		return false;
	for (size_t i = 0; i < g->n_read; i++)
		if (g->read[i].dev == st.st_dev && g->read[i].ino == st.st_ino)
			return true;
	if (g->n_read % 16 == 0) {
		struct fileid *v = realloc(g->read, (g->n_read + 16) * sizeof(*v));

		if (!v)
			return false;
		g->read = v;
	}
	g->read[g->n_read++] = (struct fileid){ st.st_dev, st.st_ino };
	return false;
}

/* A git config file (a place): what it names, for the repository whose worktree is top */
static int plan_config_file(struct gitplan *g, const char *file, const char *top, unsigned depth,
			    size_t *hash_len)
{
	_cleanup_(cd_gitconfig_done) struct cd_gitconfig c = { 0 };
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	if (depth > INCLUDE_DEPTH || read_before(g, file))
		return 0;
	r = place_read(g, file, GITCONFIG_MAX, &text, &len);
	if (r == -EFBIG)
		return cd_fail(g->err, EFBIG, "protect",
			       "%s: over %u MiB, too large to read what it makes git run", file,
			       GITCONFIG_MAX >> 20);
	if (r == -ENOMEM || (r >= 0 && cd_gitconfig_read(text, len, &c) < 0))
		return cd_fail(g->err, ENOMEM, "protect", "out of memory");
	if (r < 0)
		return 0;
	free(CD_TAKE_PTR(text)); /* not held while the includes are read */
	for (char **f = c.v[CD_GITCONFIG_FORMAT]; f && *f; f++)
		*hash_len = strcasecmp(*f, "sha256") == 0 ? 32 : 20;
	for (char **h = c.v[CD_GITCONFIG_HOOKS]; r >= 0 && h && *h; h++)
		r = plan_hooks(g, top, *h);
	for (char **k = c.v[CD_GITCONFIG_COMMAND]; r >= 0 && k && *k; k++)
		r = plan_command(g, top, *k);
	for (char **i = c.v[CD_GITCONFIG_INCLUDE]; r >= 0 && i && *i; i++)
		r = plan_include(g, file, top, *i, depth, hash_len);
	return r;
}

/* ---- the repositories ---- */

struct repo {
	char top[PATH_MAX];    /* its worktree's top, in the workdir */
	char gitdir[PATH_MAX]; /* a place */
	char common[PATH_MAX]; /* a place: where its config and hooks are */
	size_t hash_len;
};

/* names: "hooks/" (a trailing "/": a directory), "+commondir" (a leading "+": protected from
 * creation though not a directory), "info/attributes" (protected where it exists) */
static int protect_names(struct gitplan *g, const char *dir, const char *const *names, size_t n)
{
	if (outside(dir))
		return 0; /* read-only in the sandbox like the rest of the host */
	for (size_t i = 0; i < n; i++) {
		bool plus = names[i][0] == '+', slash = names[i][strlen(names[i]) - 1] == '/';
		char p[PATH_MAX + 32];
		int r;

		if (snprintf(p, sizeof(p), "%s%s%s", dir, dir[0] ? "/" : "", names[i] + plus) >=
		    (int)sizeof(p))
			continue;
		r = cd_protect_literal(g->p, g->wfd, p, plus || slash, !plus, g->err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The first line of a small file of a place ("" when missing) */
static void read_line(const struct gitplan *g, const char *file, char *buf, size_t size)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	buf[0] = '\0';
	if (place_read(g, file, 64 << 10, &text, &len) == 0)
		snprintf(buf, size, "%.*s", (int)strcspn(text, "\r\n"), text);
}

/* What a file of a git directory (a place) names, relative to that directory: 1 and *out */
static bool read_named(const struct gitplan *g, const char *dir, const char *file,
		       const char *prefix, char *out, size_t size)
{
	char line[PATH_MAX + 16], at[2][PATH_MAX], ldir[PATH_MAX];
	size_t pl = strlen(prefix);

	read_line(g, file, line, sizeof(line));
	if (!line[0] || strncmp(line, prefix, pl) != 0)
		return false;
	snprintf(ldir, sizeof(ldir), "%s", dir);
	if (locate(g, ldir, line + pl, at) != 1)
		return false;
	snprintf(out, size, "%s", at[0]);
	return true;
}

static void place_file(const char *dir, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s%s%s", dir, dir[0] && strcmp(dir, "/") ? "/" : "", name);
}

static int plan_links(struct gitplan *g, const struct repo *rp, unsigned depth);

/* A repository: its git directory's (and common directory's) hooks, config and what it names
 * protected as the workdir's own .git's, then the repositories it enters */
static int plan_repo(struct gitplan *g, struct repo *rp, unsigned depth)
{
	static const char *const own[] = { "hooks/", "+config", "+config.worktree", "+commondir",
					   "info/attributes" };
	static const char *const common[] = { "hooks/", "+config", "+commondir", "info/attributes",
					      "modules/", "+objects/info/alternates" };
	const char *configs[4][2] = { { rp->common, "config" }, { rp->gitdir, "config.worktree" },
				      { rp->gitdir, "config" }, { rp->common, "config.worktree" } };
	char file[PATH_MAX + 32];
	int r;

	if (depth > REPO_DEPTH || ++g->repos > REPOS_MAX)
		return cd_fail(g->err, E2BIG, "protect",
			       "%s: more than %d git repositories in the workdir's submodules, or "
			       "nested more than %d deep; cordon protects what git runs from each "
			       "or runs nothing",
			       rp->top[0] ? rp->top : ".", REPOS_MAX, REPO_DEPTH);
	place_file(rp->gitdir, "commondir", file, sizeof(file));
	if (!read_named(g, rp->gitdir, file, "", rp->common, sizeof(rp->common)))
		snprintf(rp->common, sizeof(rp->common), "%s", rp->gitdir);
	rp->hash_len = 20;
	r = protect_names(g, rp->gitdir, own, CD_ELEMENTSOF(own));
	if (r >= 0)
		r = protect_names(g, rp->common, common, CD_ELEMENTSOF(common));
	for (size_t i = 0; r >= 0 && i < CD_ELEMENTSOF(configs); i++) {
		place_file(configs[i][0], configs[i][1], file, sizeof(file));
		r = plan_config_file(g, file, rp->top, 0, &rp->hash_len);
	}
	return r < 0 ? r : plan_links(g, rp, depth);
}

/* What stands at top/.git of a submodule or nested repository: a directory, a .git file (read-
 * only, and its git directory), or nothing. *there: something was. */
static int plan_nested(struct gitplan *g, const char *top, unsigned depth, bool *there)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	_cleanup_free_ struct repo *rp = calloc(1, sizeof(*rp));
	_cleanup_close_ int fd = -1;
	char dotgit[PATH_MAX + 8], dir[PATH_MAX];
	struct stat st;
	int r;

	*there = false;
	if (!rp)
		return cd_fail(g->err, ENOMEM, "protect", "out of memory");
	snprintf(dotgit, sizeof(dotgit), "%s/.git", top);
	fd = (int)syscall(SYS_openat2, g->wfd, dotgit, &how, sizeof(how));
	if (fd < 0 || fstat(fd, &st) < 0)
		return 0; /* missing, or behind a symlink (git enters no submodule through one) */
	*there = true;
	snprintf(rp->top, sizeof(rp->top), "%s", top);
	if (S_ISDIR(st.st_mode)) {
		scopy(rp->gitdir, sizeof(rp->gitdir), dotgit);
		return plan_repo(g, rp, depth);
	}
	if (!S_ISREG(st.st_mode))
		return 0;
	r = cd_protect_literal(g->p, g->wfd, dotgit, false, false, g->err); /* read-only */
	place_dir(dotgit, dir, sizeof(dir));
	if (r < 0 || !read_named(g, dir, dotgit, "gitdir: ", rp->gitdir, sizeof(rp->gitdir)))
		return r;
	return plan_repo(g, rp, depth);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_unique(char **v)
{
	size_t n = v ? cd_strv_len(v) : 0, k = 0;

	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (k && strcmp(v[i], v[k - 1]) == 0) {
			free(v[i]);
			continue;
		}
		v[k++] = v[i];
	}
	v[k] = NULL;
}

static bool has(char **sorted, const char *s)
{
	size_t n = sorted ? cd_strv_len(sorted) : 0;

	return n && bsearch(&s, sorted, n, sizeof(*sorted), cmp_str);
}

/* How an index is read: through the run's cache (NULL: none; idxcache.h), and what of the file
 * the reading saw */
struct idx_read {
	struct cd_idxcache *cache;
	enum cd_idxcache_mode mode;
	struct stat st; /* the index's, as it was read */
	bool racy;      /* stamped within a tick of the reading */
};

/* An index file read (gitindex.h), through rd's cache (rd may be NULL). dirfd: the directory
 * file is relative to (the workdir, a layer's upper), -1: the workdir, or the host for a place
 * outside it. Opened as every file here: no symlink followed beneath the workdir, never a FIFO's
 * open; -ENOENT: missing or not a regular file. */
static int read_index(int wfd, int dirfd, const char *file, size_t hash_len, unsigned flags,
		      struct idx_read *rd, struct cd_gitindex *ret)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	_cleanup_close_ int fd = dirfd < 0 && outside(file)
					 ? open(file, (int)how.flags)
					 : (int)syscall(SYS_openat2, dirfd < 0 ? wfd : dirfd, file,
							&how, sizeof(how));
	struct stat st;
	bool racy;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (dirfd < 0 && outside(file) && !owner_may_read(wfd, &st)))
		return -ENOENT;
	if ((uint64_t)st.st_size > GITINDEX_MAX)
		return -EFBIG;
	r = cd_idxcache_read(rd ? rd->cache : NULL, rd ? rd->mode : CD_IDXCACHE_STORE, fd, &st,
			     hash_len, flags, ret, &racy);
	if (r >= 0 && rd) {
		rd->st = st;
		rd->racy = racy;
	}
	return r;
}

/* Moves s's paths to the end of x's */
static int take_paths(struct cd_gitindex *x, struct cd_gitindex *s)
{
	char **v = realloc(x->paths, (x->n + s->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	x->paths = v;
	for (size_t i = 0; i < s->n; i++)
		x->paths[x->n++] = CD_TAKE_PTR(s->paths[i]);
	x->paths[x->n] = NULL;
	return 0;
}

/* The gitlinks (and sparse directories) of a repository's index file, a split index's shared
 * index too (in the git directory, where a gitlink without a name takes the name of one of its
 * entries: every one of them then). dirfd: as read_index (a shared index not in a layer's
 * upper is the workdir's); how: as read_index, its st and racy the index file's. 0; -ENOENT (no
 * index); -EINVAL (not one git reads); -EFBIG; -ENOMEM. */
static int index_links(int wfd, int dirfd, const char *gitdir, const char *file, size_t hash_len,
		       struct idx_read *how, struct cd_gitindex *ret)
{
	struct idx_read shared = { .cache = how ? how->cache : NULL,
				   .mode = how ? how->mode : CD_IDXCACHE_STORE };
	struct cd_gitindex x, s = { 0 };
	char name[80], path[PATH_MAX + 96];
	int r = read_index(wfd, dirfd, file, hash_len, 0, how, &x);

	if (r < 0 || !x.split) {
		if (r >= 0)
			*ret = x;
		return r;
	}
	cd_gitindex_shared_name(&x, hash_len, name);
	place_file(gitdir, name, path, sizeof(path));
	r = read_index(wfd, dirfd, path, hash_len, x.nameless ? CD_GITINDEX_ALL : 0, &shared, &s);
	if (r == -ENOENT && dirfd >= 0)
		r = read_index(wfd, -1, path, hash_len, x.nameless ? CD_GITINDEX_ALL : 0, &shared,
			       &s);
	if (r == -ENOENT)
		r = 0; /* git dies without it */
	if (r >= 0)
		r = take_paths(&x, &s);
	x.sparse = x.sparse || s.sparse;
	cd_gitindex_done(&s);
	if (r < 0) {
		cd_gitindex_done(&x);
		return r;
	}
	*ret = x;
	return 0;
}

static int strv_take(char ***to, char **from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cd_strv_push(to, from[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* The repository's record (its index at the start: gitlinks, sparse directories) and the paths
 * to look at: the gitlinks and .gitmodules's */
static int repo_links(struct gitplan *g, const struct repo *rp, struct cd_protect_repo *rec,
		      char ***ret)
{
	_cleanup_(cd_gitconfig_done) struct cd_gitconfig mods = { 0 };
	_cleanup_strv_ char **paths = NULL;
	_cleanup_free_ char *text = NULL;
	struct idx_read how = { .cache = g->p->idxcache, .mode = CD_IDXCACHE_USE };
	struct cd_gitindex x = { 0 };
	char index[PATH_MAX + 8], gm[PATH_MAX + 16];
	size_t len = 0;
	int r;

	place_file(rp->gitdir, "index", index, sizeof(index));
	r = index_links(g->wfd, -1, rp->gitdir, index, rp->hash_len, &how, &x);
	if (r == -EFBIG || r == -EINVAL)
		return cd_fail(g->err, -r, "protect",
			       "%s: %s; it says which submodules git enters, and runs the programs "
			       "of: remove it (git reset writes it anew) or run with "
			       "--no-default-protect", index,
			       r == -EFBIG ? "over 256 MiB, too large to read"
					   : "not an index cordon can read");
	if (r < 0 && r != -ENOENT)
		return cd_fail_errno(g->err, -r, "protect", "%s", index);
	/* the stat the index was read under, not a later one: a change meanwhile is then seen as
	 * a change by the sweep */
	rec->index_there = r == 0 && !outside(index);
	if (rec->index_there) {
		rec->index_st = how.st;
		rec->index_racy = how.racy;
		rec->index_split = x.split;
	} else {
		rec->index_there = !outside(index) && fstatat(g->wfd, index, &rec->index_st,
							      AT_SYMLINK_NOFOLLOW) == 0;
	}
	r = strv_take(&rec->links, x.paths, x.n);
	if (r >= 0)
		r = strv_take(&rec->sparse, x.dirs, x.n_dirs);
	cd_gitindex_done(&x);
	sort_unique(rec->links);
	sort_unique(rec->sparse);
	place_file(rp->top, ".gitmodules", gm, sizeof(gm));
	if (r >= 0 && cd_protect_read(g->wfd, gm, GITCONFIG_MAX, &text, &len) == 0 &&
	    cd_gitconfig_read(text, len, &mods) < 0)
		r = -ENOMEM;
	for (char **l = rec->links; r >= 0 && l && *l; l++)
		r = cd_strv_push(&paths, *l);
	for (char **m = mods.v[CD_GITCONFIG_SUBMODULE]; r >= 0 && m && *m; m++)
		r = cd_strv_push(&paths, *m);
	rec->index = strdup(index);
	rec->gitdir = strdup(rp->gitdir);
	rec->top = strdup(rp->top);
	rec->hash_len = rp->hash_len;
	if (r < 0 || !rec->index || !rec->gitdir || !rec->top)
		return cd_fail(g->err, ENOMEM, "protect", "out of memory");
	sort_unique(paths);
	*ret = CD_TAKE_PTR(paths);
	return 0;
}

static void repo_done(struct cd_protect_repo *r)
{
	free(r->top);
	free(r->index);
	free(r->gitdir);
	cd_strv_free(r->links);
	cd_strv_free(r->present);
	cd_strv_free(r->sparse);
	*r = (struct cd_protect_repo){ 0 };
}

/* The repositories a repository enters: planned in turn; and it recorded where its index is the
 * sandbox's to write */
static int plan_links(struct gitplan *g, const struct repo *rp, unsigned depth)
{
	_cleanup_(repo_done) struct cd_protect_repo rec = { 0 };
	_cleanup_strv_ char **paths = NULL;
	struct cd_protect_repo *v;
	char path[PATH_MAX];
	int r = repo_links(g, rp, &rec, &paths);

	for (char **s = paths; r >= 0 && s && *s; s++) {
		bool there = false;

		if (cd_protect_join(rp->top, *s, path, sizeof(path)) < 0)
			continue; /* outside the workdir: read-only there */
		r = plan_nested(g, path, depth + 1, &there);
		if (r >= 0 && there && cd_strv_push(&rec.present, *s) < 0)
			r = cd_fail(g->err, ENOMEM, "protect", "out of memory");
	}
	if (r < 0)
		return r;
	sort_unique(rec.present);
	if (outside(rec.index) || cd_protect_covered(g->p, rec.index))
		return 0; /* the sandbox cannot change the index */
	v = realloc(g->p->repos, (g->p->n_repos + 1) * sizeof(*v));
	if (!v)
		return cd_fail(g->err, ENOMEM, "protect", "out of memory");
	g->p->repos = v;
	g->p->repos[g->p->n_repos++] = rec;
	rec = (struct cd_protect_repo){ 0 };
	return 0;
}

int cd_protect_git_plan(struct cd_protect_plan *p, int workdir_fd, const char *workdir_path,
			struct cordon_error *err)
{
	struct gitplan g = { .p = p, .wfd = workdir_fd, .wpath = workdir_path, .err = err };
	_cleanup_free_ struct repo *rp = calloc(1, sizeof(*rp));
	const char *home = getenv("HOME");
	struct passwd *pw;
	struct stat st;
	int r = 0;

	if (!rp || fstat(workdir_fd, &g.wst) < 0)
		return cd_fail_errno(err, rp ? errno : ENOMEM, "protect", "%s", workdir_path);
	pw = getpwuid(g.wst.st_uid);
	g.homes[0] = home && home[0] == '/' ? strdup(home) : NULL;
	g.homes[1] = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? strdup(pw->pw_dir) : NULL;
	if (fstatat(workdir_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		r = 0; /* no repository (a new one a run makes is the run's: README) */
	} else if (S_ISDIR(st.st_mode)) {
		snprintf(rp->gitdir, sizeof(rp->gitdir), ".git");
		r = plan_repo(&g, rp, 0);
	} else if (S_ISREG(st.st_mode)) {
		/* a linked worktree's or a submodule's .git file: it names the git directory, so it
		 * is read-only like a config (pinned, it cannot be replaced either) */
		r = cd_protect_literal(p, workdir_fd, ".git", false, false, err);
		if (r >= 0 &&
		    read_named(&g, "", ".git", "gitdir: ", rp->gitdir, sizeof(rp->gitdir)))
			r = plan_repo(&g, rp, 0);
	}
	free(g.homes[0]);
	free(g.homes[1]);
	free(g.read);
	cd_strv_free(g.included);
	return r;
}

void cd_protect_repos_free(struct cd_protect_plan *p)
{
	for (size_t i = 0; i < p->n_repos; i++)
		repo_done(&p->repos[i]);
	free(p->repos);
	p->repos = NULL;
	p->n_repos = 0;
}

/* ---- after a direct run ---- */

/* rel's directory, opened beneath the workdir through no symlink, and rel's last name */
static int open_parent(int wfd, const char *rel, const char **ret_name)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	const char *slash = strrchr(rel, '/');
	char dir[PATH_MAX];

	*ret_name = slash ? slash + 1 : rel;
	if (!slash)
		return fcntl(wfd, F_DUPFD_CLOEXEC, 3);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	return (int)syscall(SYS_openat2, wfd, dir, &how, sizeof(how));
}

/* rel moved aside (whatever it is: a repository is kept for the user to review), told */
static int aside(int wfd, enum cd_protect_why why, const char *rel,
		 cd_protect_notice_fn notice, void *data)
{
	char name_aside[PATH_MAX + 64], full[2 * PATH_MAX + 64];
	const char *name;
	_cleanup_close_ int dir = open_parent(wfd, rel, &name);
	struct stat st;
	int r;

	if (dir < 0 || fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* not there, or behind a symlink git does not follow to it */
	r = cd_protect_move_aside(dir, name, name_aside, sizeof(name_aside));
	if (r < 0)
		return r;
	snprintf(full, sizeof(full), "%.*s%s", (int)(name - rel), rel, name_aside);
	if (notice)
		notice(data, why, rel, NULL, full);
	return 1;
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
	       a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Below a sparse directory (git keeps no gitlink in one, but a sandbox's index may: then they
 * are in objects, not read here): every .git, moved aside. -E2BIG past the walk's budget. */
static int sparse_walk(int wfd, const char *rel, unsigned depth, unsigned *budget,
		       cd_protect_notice_fn notice, void *data)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	int fd = (int)syscall(SYS_openat2, wfd, rel, &how, sizeof(how));
	_cleanup_(cd_closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	int moved = 0, r;

	if (!d) {
		cd_closep(&fd);
		return 0;
	}
	for (struct dirent *e; (e = readdir(d));) {
		char sub[PATH_MAX];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (!*budget || depth > 64)
			return -E2BIG;
		--*budget;
		if (snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name) >= (int)sizeof(sub))
			return -E2BIG;
		if (strcmp(e->d_name, ".git") == 0)
			r = aside(wfd, CD_PROTECT_SUBMODULE, sub, notice, data);
		else if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN)
			r = sparse_walk(wfd, sub, depth + 1, budget, notice, data);
		else
			r = 0;
		if (r < 0)
			return r;
		moved += r;
	}
	return moved;
}

/* The index after a direct run: its gitlinks and sparse directories (x: read anew if it
 * changed, or if its stamps at the start were too close to that reading to tell: a change in
 * the same tick leaves them as they were), or 1 when it cannot be read (then moved aside: git
 * enters no submodule without it). The reading is stored in the cache (never taken from it). */
static int index_after(const struct cd_protect_repo *rec, int wfd, struct cd_idxcache *cache,
		       struct cd_gitindex *x, cd_protect_notice_fn notice, void *data)
{
	struct idx_read how = { .cache = cache, .mode = CD_IDXCACHE_STORE };
	const char *name;
	_cleanup_close_ int dir = open_parent(wfd, rec->index, &name);
	struct stat st;
	bool there = dir >= 0 && fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	int r;

	/* a split index's entries are in its shared index too, whose file the index's stat does not
	 * follow (git binds its content to its name's hash; read again all the same) */
	if (there == rec->index_there &&
	    (!there || (!rec->index_racy && !rec->index_split && same_stat(&st, &rec->index_st))))
		return 0; /* as at the start: the gitlinks recorded then */
	*x = (struct cd_gitindex){ 0 };
	if (!there)
		return 0; /* no index: no gitlinks */
	r = S_ISREG(st.st_mode) ? index_links(wfd, -1, rec->gitdir, rec->index, rec->hash_len,
					      &how, x)
				: -EINVAL;
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return aside(wfd, CD_PROTECT_INDEX, rec->index, notice, data);
	return 0;
}

/* One repository after a direct run: the .git of each gitlink that was not there at the start,
 * and each .git below a sparse directory, moved aside. How many were moved, or -errno. */
static int sweep_repo(const struct cd_protect_repo *rec, int wfd, struct cd_idxcache *cache,
		      cd_protect_notice_fn notice, void *data)
{
	struct cd_gitindex x = { .paths = rec->links, .dirs = rec->sparse };
	char path[PATH_MAX + 8];
	unsigned budget = SPARSE_WALK_MAX;
	int moved = index_after(rec, wfd, cache, &x, notice, data), r = 0;

	if (moved != 0)
		return moved; /* the index moved aside (or it could not be) */
	for (char **l = x.paths; r >= 0 && l && *l; l++) {
		if (has(rec->present, *l) || cd_protect_join(rec->top, *l, path, PATH_MAX) < 0)
			continue; /* there at the start, read-only; or outside */
		strcat(path, "/.git");
		r = aside(wfd, CD_PROTECT_SUBMODULE, path, notice, data);
		moved += r > 0;
	}
	for (char **d = x.dirs; r >= 0 && d && *d; d++)
		if (cd_protect_join(rec->top, *d, path, PATH_MAX) == 0 &&
		    (r = sparse_walk(wfd, path, 0, &budget, notice, data)) > 0)
			moved += r;
	if (r == -E2BIG) { /* too much to look at: git enters no submodule without its index */
		r = aside(wfd, CD_PROTECT_INDEX, rec->index, notice, data);
		moved += r > 0;
	}
	if (x.paths != rec->links || x.dirs != rec->sparse) /* read anew */
		cd_gitindex_done(&x);
	return r < 0 ? r : moved;
}

int cd_protect_git_sweep(const struct cd_protect_plan *p, int workdir_fd,
			 cd_protect_notice_fn notice, void *data)
{
	int moved = 0, first = 0;

	for (size_t i = 0; i < p->n_repos; i++) {
		int r = sweep_repo(&p->repos[i], workdir_fd, p->idxcache, notice, data);

		if (r > 0)
			moved += r;
		else if (r < 0 && !first)
			first = r;
	}
	return first && !moved ? first : moved;
}

/* ---- a --cow layer ---- */

/* path as a glob matching itself only (fnmatch's wildcards escaped) */
static int push_glob(char ***globs, const char *path)
{
	char g[2 * PATH_MAX];
	size_t n = 0;

	for (const char *c = path; *c && n + 2 < sizeof(g); c++) {
		if (strchr("*?[\\", *c))
			g[n++] = '\\';
		g[n++] = *c;
	}
	g[n] = '\0';
	for (char **s = *globs; s && *s; s++)
		if (strcmp(*s, g) == 0)
			return 0;
	return cd_strv_push(globs, g);
}

/* A repository whose index the layer changes: the .git of each gitlink it adds */
static int layer_index(const struct cd_protect_repo *rec, int upper_fd, int wfd, char ***globs)
{
	struct cd_gitindex x = { 0 };
	char path[PATH_MAX + 8];
	int r = index_links(wfd, upper_fd, rec->gitdir, rec->index, rec->hash_len, NULL, &x);

	if (r == -ENOENT)
		return 0;
	if (r < 0 && r != -ENOMEM) /* unread: refused whole */
		return push_glob(globs, rec->index);
	for (size_t i = 0; r >= 0 && i < x.n; i++) {
		/* a gitlink of the start: its .git there then (read-only), or a new .git below the
		 * top (refused on its own) */
		if (has(rec->links, x.paths[i]) || has(rec->present, x.paths[i]) ||
		    cd_protect_join(rec->top, x.paths[i], path, PATH_MAX) < 0)
			continue;
		strcat(path, "/.git");
		r = push_glob(globs, path);
	}
	cd_gitindex_done(&x);
	return r;
}

/* dir/name beneath fd, no symlink followed: whether it is there (a whiteout counts: a bare
 * repository the layer only seems to have is refused too, never one it has let through) */
static bool there(int fd, const char *dir, const char *name)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	char path[PATH_MAX + 16];
	int r;

	snprintf(path, sizeof(path), "%s%s%s", dir, dir[0] ? "/" : "", name);
	r = (int)syscall(SYS_openat2, fd, path, &how, sizeof(how));
	if (r < 0)
		return false;
	close(r);
	return true;
}

/* dir (the layer's upper over the workdir) is a git directory as git tells one (setup.c's
 * is_git_directory: HEAD, and objects and refs, or a commondir file naming them) */
static bool git_dir(int upper_fd, int workdir_fd, const char *dir)
{
#define THERE(name) (there(upper_fd, dir, name) || there(workdir_fd, dir, name))
	return THERE("HEAD") && ((THERE("objects") && THERE("refs")) || THERE("commondir"));
#undef THERE
}

/* A bare repository the run made or completed, anywhere, the top included: git enters one it
 * finds from the directory it runs in (safe.bareRepository's default: all) and runs what its
 * config names (a pager at git log, an editor, aliases, a hook), so its parts the layer brings
 * become protected globs, refused by apply. */
static int layer_bare(const struct cd_layer *l, int upper_fd, int workdir_fd, char ***globs)
{
	static const char *const parts[] = { "HEAD", "objects", "refs", "commondir", "config" };
	char dir[PATH_MAX];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < l->n_changes; i++) {
		const char *path = l->changes[i].path, *slash = strrchr(path, '/');
		const char *name = slash ? slash + 1 : path;
		bool part = false;

		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
			part |= strcmp(name, parts[k]) == 0;
		if (!part || l->changes[i].op == CD_LAYER_DELETE || cd_layer_git_path(path))
			continue;
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
		if (git_dir(upper_fd, workdir_fd, dir))
			r = push_glob(globs, path);
	}
	return r;
}

int cd_protect_git_layer(const struct cd_protect_plan *p, const struct cd_layer *l, int upper_fd,
			 int workdir_fd, char ***globs, struct cordon_error *err)
{
	int r = layer_bare(l, upper_fd, workdir_fd, globs);

	/* a .git below the top the run made, or replaced: a repository git may enter */
	for (size_t i = 0; r >= 0 && i < l->n_changes; i++) {
		const char *path = l->changes[i].path, *slash = strrchr(path, '/');

		if (slash && strcmp(slash + 1, ".git") == 0 && l->changes[i].op != CD_LAYER_DELETE)
			r = push_glob(globs, path);
	}
	for (size_t i = 0; r >= 0 && i < p->n_repos; i++)
		for (size_t k = 0; r >= 0 && k < l->n_changes; k++)
			if (l->changes[k].op != CD_LAYER_DELETE &&
			    strcmp(l->changes[k].path, p->repos[i].index) == 0)
				r = layer_index(&p->repos[i], upper_fd, workdir_fd, globs);
	return r < 0 ? cd_fail(err, -r, "protect", "the layer's git repositories") : 0;
}
