/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gitref.c - a layer's git metadata: the commits a run made, listed (cordon diff) and brought
 * into the workdir's repository as refs of their own, refs/cordon/ID/... (cordon apply), by git
 * itself. Runs in the CLI's process (the caller), never in a sandbox.
 *
 * A --cow run that used git leaves files under .git/ in its layer (index, objects, refs, logs).
 * They are the sandbox's git state, never written into the host's .git as files. Only the new
 * objects and the refs that point at them are taken, as data, into a fresh temporary bare
 * repository of ours (its config ours, no hooks, no templates; its objects/info/alternates names
 * the workdir's own objects, so that the new objects have their history). git on the host then
 * fetches the refs from it (file://, objects checked: transfer.fsckObjects). The layer's .git is
 * never a repository git opens: a hook, a config (core.fsmonitor, core.hooksPath, filters,
 * alternates) or anything else the sandbox put there is data that nothing reads. Every git of
 * ours runs with a fixed environment: no system or global config, hooks off (core.hooksPath
 * /dev/null), no fsmonitor, only the file protocol.
 */
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsops.h"
#include "hostroot.h"
#include "layer.h"
#include "manifest.h"
#include "rmtree.h"
#include "util.h"

#define GIT_OUT_MAX (1u << 20) /* what we read of one git's output */
#define GIT_REFS_MAX 256       /* refs a layer may bring */

struct gitref {
	char *name; /* refs/heads/NAME, or HEAD (detached) */
	char hex[65];
};

struct gitrepo {
	char top[PATH_MAX];     /* the temporary directory, root's or the caller's ("": none) */
	char tmp[PATH_MAX + 8]; /* the temporary bare repository in it, TOP/repo */
	int top_fd;             /* (valid while top[0]) */
	int repo_fd;            /* what we write in the repository: beneath it, no symlink */
	int workdir_fd; /* borrowed */
	bool as_owner;  /* root in another user's workdir: git runs as that user (what it makes
			 * in the workdir's .git is theirs, as apply's files are) */
	uid_t uid;
	gid_t gid;
	struct gitref refs[GIT_REFS_MAX];
	size_t n_refs;
	size_t n_objects;
};

size_t cd_layer_git_count(const struct cd_layer *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n_changes; i++)
		n += cd_layer_git_path(l->changes[i].path);
	return n;
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* ---- running git ---- */

/* What every git of ours runs with: nothing of the system's or the caller's git config, no
 * hook, no fsmonitor, only the file protocol, every object fetched checked. */
static const char *const git_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_NO_REPLACE_OBJECTS=1",
	"GIT_ASKPASS=/bin/false", "GIT_PROTOCOL_FROM_USER=0", NULL,
};
static const char *const git_opts[] = {
	"git", "--no-pager", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
	"-c", "protocol.allow=never", "-c", "protocol.file.allow=always",
	"-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true",
	"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.sshCommand=/bin/false",
};
#define N_GIT_OPTS (sizeof(git_opts) / sizeof(git_opts[0]))

static ssize_t read_memfd(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static void child_exec(const struct gitrepo *g, int cwd_fd, int in, int out, int errfd,
		       char *const argv[])
{
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0)
		_exit(127);
	if (g->as_owner && (setgroups(0, NULL) < 0 || setresgid(g->gid, g->gid, g->gid) < 0 ||
			    setresuid(g->uid, g->uid, g->uid) < 0)) {
		dprintf(2, "cannot become the workdir's owner (%u): %s\n", (unsigned)g->uid,
			strerror(errno));
		_exit(126);
	}
	if (cwd_fd >= 0 && fchdir(cwd_fd) < 0)
		_exit(127);
	execve("/usr/bin/git", argv, (char *const *)git_env);
	execve("/usr/local/bin/git", argv, (char *const *)git_env);
	_exit(127);
}

/* git's output, at most GIT_OUT_MAX bytes of it (malloc'd, NUL-ended); -E2BIG past that when
 * all of it is needed (whole). Its length in *ret_len. */
static int take_output(int fd, bool whole, char **ret, size_t *ret_len)
{
	struct stat st;
	char *buf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size >= GIT_OUT_MAX && whole)
		return -E2BIG;
	if ((uint64_t)st.st_size >= GIT_OUT_MAX)
		st.st_size = GIT_OUT_MAX - 1;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	read_memfd(fd, buf, (size_t)st.st_size + 1);
	*ret = buf;
	*ret_len = (size_t)st.st_size;
	return 0;
}

static int wait_git(pid_t pid, int *ret_status)
{
	while (waitpid(pid, ret_status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* git ARGS... in cwd_fd (-1: ours), input (or NULL) on its stdin: its exit status; its stdout
 * in *ret_out (malloc'd; ret_out may be NULL; ret_len: all of it, and its length, or -E2BIG),
 * its stderr's first line in msg. */
static int run_git_in(const struct gitrepo *g, int cwd_fd, const char *const *args,
		      const char *input, char **ret_out, size_t *ret_len, char msg[200])
{
	size_t len;
	_cleanup_close_ int in = memfd_create("cordon-git-in", MFD_CLOEXEC);
	_cleanup_close_ int out = memfd_create("cordon-git-out", MFD_CLOEXEC);
	_cleanup_close_ int errfd = memfd_create("cordon-git-err", MFD_CLOEXEC);
	_cleanup_free_ const char **argv = NULL;
	size_t n = 0, na = 0;
	char ebuf[512];
	int status, r;
	pid_t pid;

	while (args[na])
		na++;
	argv = calloc(N_GIT_OPTS + na + 1, sizeof(*argv));
	if (in < 0 || out < 0 || errfd < 0 || !argv)
		return argv ? -errno : -ENOMEM;
	if ((input && cd_write_all(in, input, strlen(input)) < 0) || lseek(in, 0, SEEK_SET) < 0)
		return -EIO;
	for (size_t i = 0; i < N_GIT_OPTS; i++)
		argv[n++] = git_opts[i];
	for (size_t i = 0; i < na; i++)
		argv[n++] = args[i];
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_exec(g, cwd_fd, in, out, errfd, (char *const *)argv);
	r = wait_git(pid, &status);
	if (r < 0)
		return r;
	read_memfd(errfd, ebuf, sizeof(ebuf));
	ebuf[strcspn(ebuf, "\n")] = '\0';
	for (size_t k = strlen(ebuf); k > 0 && ebuf[k - 1] == ' '; k--)
		ebuf[k - 1] = '\0'; /* (git pads its "remote:" lines) */
	snprintf(msg, 200, "%.199s", ebuf[0] ? ebuf : "no message");
	if (ret_out && (r = take_output(out, ret_len != NULL, ret_out, ret_len ? ret_len : &len)) < 0)
		return r;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !ebuf[0])
		snprintf(msg, 200, "git is not installed (/usr/bin/git)");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_git(const struct gitrepo *g, int cwd_fd, const char *const *args, char **ret_out,
		   char msg[200])
{
	return run_git_in(g, cwd_fd, args, NULL, ret_out, NULL, msg);
}

/* ---- the layer's refs and objects, as data ---- */

/* A ref file of the layer's tree: one object name and a newline, nothing else. */
static int read_ref(int tree_fd, const char *path, size_t hash_hex, char ret[65])
{
	_cleanup_close_ int fd = cd_lfs_open(tree_fd, path, O_RDONLY, 0);
	char buf[80];
	ssize_t n;

	if (fd < 0)
		return fd;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if ((size_t)n != hash_hex + 1 || buf[hash_hex] != '\n' || !all_hex(buf, hash_hex))
		return -EBADMSG; /* a symbolic ref, or not a ref */
	memcpy(ret, buf, hash_hex);
	ret[hash_hex] = '\0';
	return 0;
}

static bool loose_object(const char *p, size_t hash_hex)
{
	/* .git/objects/XX/HEX... */
	return !strncmp(p, ".git/objects/", 13) && strlen(p) == 13 + 3 + hash_hex - 2 &&
	       all_hex(p + 13, 2) && p[15] == '/' && all_hex(p + 16, hash_hex - 2);
}

static bool pack_file(const char *p, size_t hash_hex)
{
	const char *s = ".git/objects/pack/pack-";
	size_t n = strlen(s);

	if (strncmp(p, s, n) || strlen(p) < n + hash_hex || !all_hex(p + n, hash_hex))
		return false;
	return !strcmp(p + n + hash_hex, ".idx") || !strcmp(p + n + hash_hex, ".pack");
}

static bool new_file(const struct cd_layer_change *c)
{
	return c->op != CD_LAYER_DELETE && c->now.type == CD_LT_FILE;
}

static int add_ref(struct gitrepo *g, const struct cd_layer *l, const char *name, const char *hex,
		   size_t hash_hex, struct cordon_error *err)
{
	struct gitref *r = &g->refs[g->n_refs];

	for (size_t i = 0; i < g->n_refs; i++)
		if (!strcmp(g->refs[i].name, name))
			return 0; /* a loose ref wins over a packed one, as in git */
	if (g->n_refs == GIT_REFS_MAX)
		return cd_fail(err, E2BIG, "git", "layer %s: more than %d branches", l->id,
			       GIT_REFS_MAX);
	r->name = strdup(name);
	if (!r->name)
		return cd_fail(err, ENOMEM, "git", "out of memory");
	memcpy(r->hex, hex, hash_hex);
	r->hex[hash_hex] = '\0';
	g->n_refs++;
	return 0;
}

/* A small file of the layer (tree/ or base/, dir -1: none), NUL-ended; NULL when it is not
 * there or is past GIT_OUT_MAX bytes. */
static char *read_small(int dir, const char *path)
{
	_cleanup_close_ int fd = dir >= 0 ? cd_lfs_open(dir, path, O_RDONLY, 0) : -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size >= GIT_OUT_MAX)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || read_memfd(fd, buf, (size_t)st.st_size + 1) != st.st_size)
		return NULL;
	return CD_TAKE_PTR(buf);
}

/* A line of text, whole ("\n" on both sides, or the start). */
static bool has_line(const char *text, const char *line, size_t len)
{
	for (const char *p = text; p && (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[len] == '\n')
			return true;
	return false;
}

/* .git/packed-refs (git gc, git pack-refs): its "HEX refs/heads/NAME" lines that the workdir's
 * packed-refs did not have as they are (its header and peeled "^HEX" lines skipped). */
static int collect_packed(struct gitrepo *g, const struct cd_layer *l, int tree_fd, int base_fd,
			  size_t hash_hex, struct cordon_error *err)
{
	_cleanup_free_ char *now = read_small(tree_fd, ".git/packed-refs");
	_cleanup_free_ char *was = read_small(base_fd, ".git/packed-refs");
	char *save = NULL;
	int r = 0;

	for (char *t = now ? strtok_r(now, "\n", &save) : NULL; r >= 0 && t;
	     t = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(t);

		if (len <= hash_hex + 12 || t[hash_hex] != ' ' || !all_hex(t, hash_hex) ||
		    strncmp(t + hash_hex + 1, "refs/heads/", 11) || (was && has_line(was, t, len)))
			continue;
		r = add_ref(g, l, t + hash_hex + 1, t, hash_hex, err);
	}
	return r;
}

static int collect_refs(struct gitrepo *g, const struct cd_layer *l, int tree_fd, int base_fd,
			size_t hash_hex, struct cordon_error *err)
{
	char hex[65];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < l->n_changes; i++) {
		const struct cd_layer_change *c = &l->changes[i];
		bool head = !strcmp(c->path, ".git/HEAD");

		if (!new_file(c) || (!head && strncmp(c->path, ".git/refs/heads/", 16)))
			continue;
		if (read_ref(tree_fd, c->path, hash_hex, hex) < 0)
			continue; /* HEAD naming a branch: the branch's file says where it is */
		r = add_ref(g, l, head ? "HEAD" : c->path + 5, hex, hash_hex, err);
	}
	for (size_t i = 0; r >= 0 && i < l->n_changes; i++)
		if (new_file(&l->changes[i]) && !strcmp(l->changes[i].path, ".git/packed-refs"))
			r = collect_packed(g, l, tree_fd, base_fd, hash_hex, err);
	return r;
}

/* What we make in the temporary repository is the user's whom git runs as (as_owner). */
static int give(const struct gitrepo *g, int fd)
{
	if (g->as_owner && fchown(fd, g->uid, g->gid) < 0)
		return -errno;
	return 0;
}

/* One object file of the layer into the temporary repository (at the same place below .git).
 * The repository may be the workdir's owner's (as_owner): every step from its descriptor. */
static int copy_object(struct gitrepo *g, int tree_fd, const struct cd_layer_change *c)
{
	_cleanup_close_ int in = cd_lfs_open(tree_fd, c->path, O_RDONLY, 0), dir = -1, out = -1;
	const char *rel = c->path + 5, *name;
	char parent[PATH_MAX];
	uint8_t sha[32];
	uint64_t size;
	int r;

	if (in < 0)
		return in;
	name = strrchr(rel, '/') + 1;
	snprintf(parent, sizeof(parent), "%.*s", (int)(name - rel - 1), rel);
	dir = cd_lfs_mkdirs(g->repo_fd, parent, 0700);
	if (dir < 0)
		return dir;
	out = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (out < 0)
		return errno == EEXIST ? 0 : -errno;
	r = give(g, dir) ?: give(g, out);
	if (r < 0)
		return r;
	r = cd_lfs_copy_sparse(in, out, c->now.size, NULL, &size, sha);
	if (r >= 0 && (size != c->now.size || memcmp(sha, c->now.sha256, 32)))
		r = -EBADMSG; /* not what the manifest says */
	return r < 0 ? r : 0;
}

/* The repository's contents removed: as the user it belongs to (as_owner), so that nothing they
 * move into it while we walk it is removed as root. */
static void remove_repo(const struct gitrepo *g)
{
	pid_t pid;
	int st;

	if (!g->as_owner) {
		(void)cd_rmtree_contents(g->repo_fd);
		return;
	}
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(g->gid, g->gid, g->gid) < 0 ||
		    setresuid(g->uid, g->uid, g->uid) < 0)
			_exit(126);
		_exit(cd_rmtree_contents(g->repo_fd) < 0);
	}
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

static void repo_done(struct gitrepo *g)
{
	for (size_t i = 0; i < g->n_refs; i++)
		free(g->refs[i].name);
	if (g->top[0]) {
		if (g->repo_fd >= 0) {
			remove_repo(g);
			(void)unlinkat(g->top_fd, "repo", AT_REMOVEDIR);
		}
		cd_closep(&g->repo_fd);
		cd_closep(&g->top_fd);
		(void)rmdir(g->top); /* (ours in a sticky $TMPDIR: no one else can replace it) */
	}
	g->top[0] = '\0';
}

/* The workdir's repository: a .git directory at its top. Its object format. */
static int host_repo(const struct gitrepo *g, size_t *ret_hex, char msg[200])
{
	const char *args[] = { "--git-dir=.git", "rev-parse", "--show-object-format", NULL };
	_cleanup_free_ char *out = NULL;
	struct stat st;
	int r;

	if (fstatat(g->workdir_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(msg, 200, "the workdir has no .git directory");
		return -ENOENT;
	}
	r = run_git(g, g->workdir_fd, args, &out, msg);
	if (r != 0)
		return r < 0 ? r : -EIO;
	*ret_hex = !strncmp(out, "sha256", 6) ? 64 : 40;
	return 0;
}

/* A new file in the repository, beneath its descriptor: git made the directories as the
 * workdir's owner (as_owner), who could have put a symlink on the way. */
static int write_new(const struct gitrepo *g, const char *path, const char *s)
{
	_cleanup_close_ int dir = -1, fd = -1;
	const char *name;

	dir = cd_lfs_open_parent(g->repo_fd, path, &name);
	if (dir < 0)
		return dir;
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : give(g, fd) ?: cd_write_all(fd, s, strlen(s));
}

/* $TMPDIR, else /tmp; for git as the workdir's owner, only a sticky one of ours they can enter
 * (root's private one, pam_tmpdir's /tmp/user/0, would shut them out; in a directory of theirs
 * they could rename TOP) */
static const char *tmp_dir(const struct gitrepo *g)
{
	const char *dir = getenv("TMPDIR");
	struct stat st;

	if (!dir || dir[0] != '/' || strlen(dir) > PATH_MAX - 64)
		return "/tmp";
	if (g->as_owner && (stat(dir, &st) < 0 || st.st_uid != geteuid() ||
			    (st.st_mode & (S_ISVTX | S_IXOTH)) != (S_ISVTX | S_IXOTH)))
		return "/tmp";
	return dir;
}

/* TOP (ours, in tmp_dir(): mode 0711 when git runs as the workdir's owner) and TOP/repo, the
 * owner's: they can work in it but never rename it, nor TOP, to send our writes elsewhere. */
static int make_tmp(struct gitrepo *g)
{
	const char *dir = tmp_dir(g);

	g->top_fd = g->repo_fd = -1;
	snprintf(g->top, sizeof(g->top), "%s/cordon-git-XXXXXX", dir);
	if (!mkdtemp(g->top)) {
		g->top[0] = '\0';
		return -errno;
	}
	g->top_fd = open(g->top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g->top_fd < 0 || (g->as_owner && fchmod(g->top_fd, 0711) < 0) ||
	    mkdirat(g->top_fd, "repo", 0700) < 0)
		return -errno;
	g->repo_fd = openat(g->top_fd, "repo", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g->repo_fd < 0)
		return -errno;
	snprintf(g->tmp, sizeof(g->tmp), "%s/repo", g->top);
	return give(g, g->repo_fd);
}

static int init_tmp(struct gitrepo *g, size_t hash_hex, char msg[200])
{
	char objs[PATH_MAX], alt[PATH_MAX + 16], fdpath[32];
	const char *args[] = { "init", "-q", "--bare", "--template=", "--object-format",
			       hash_hex == 64 ? "sha256" : "sha1", g->tmp, NULL };
	ssize_t n;
	int r;

	r = make_tmp(g);
	if (r < 0)
		return r;
	r = run_git(g, -1, args, NULL, msg);
	if (r != 0)
		return r < 0 ? r : -EIO;
	/* the new objects' history: the workdir's own objects (the directory opened) */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", g->workdir_fd);
	n = readlink(fdpath, objs, sizeof(objs) - 1);
	if (n < 0 || n > PATH_MAX - 32)
		return -ENAMETOOLONG;
	objs[n] = '\0';
	if (strchr(objs, '\n'))
		return -EINVAL; /* (alternates are lines) */
	snprintf(alt, sizeof(alt), "%s/.git/objects\n", objs);
	return write_new(g, "objects/info/alternates", alt); /* (git init's dir) */
}

/* Each ref the layer names, made in the temporary repository: git checks the name and that
 * the object is there and what it should be. */
static int tmp_refs(struct gitrepo *g, char msg[200])
{
	for (size_t i = 0; i < g->n_refs; i++) {
		_cleanup_free_ char *ref = cd_strdup_printf(
			"refs/%s", !strcmp(g->refs[i].name, "HEAD") ? "cordon/HEAD"
								   : g->refs[i].name + 5);
		const char *args[] = { "--git-dir", g->tmp, "update-ref", ref ? ref : "",
				       g->refs[i].hex, NULL };
		int r;

		if (!ref)
			return -ENOMEM;
		r = run_git(g, -1, args, NULL, msg);
		if (r != 0)
			return r < 0 ? r : -EIO;
	}
	return 0;
}

static int repo_build(struct gitrepo *g, const struct cd_layer *l, int store_fd,
		      struct cordon_error *err)
{
	char msg[200] = "", rel[CD_LAYER_ID_LEN + 8];
	_cleanup_close_ int tree_fd = -1, base_fd = -1;
	size_t hash_hex = 40;
	struct stat st;
	int r, host;

	if (cd_host_root() && fstat(g->workdir_fd, &st) == 0 && st.st_uid != 0) {
		g->as_owner = true;
		g->uid = st.st_uid;
		g->gid = st.st_gid;
	}
	r = host = host_repo(g, &hash_hex, msg);

	snprintf(rel, sizeof(rel), "%s/tree", l->id);
	tree_fd = cd_lfs_open(store_fd, rel, O_RDONLY | O_DIRECTORY, 0);
	if (tree_fd < 0)
		return cd_fail_errno(err, -tree_fd, "git", "layer %s: open tree", l->id);
	snprintf(rel, sizeof(rel), "%s/base", l->id);
	base_fd = cd_lfs_open(store_fd, rel, O_RDONLY | O_DIRECTORY, 0); /* (-1: none) */
	/* no repository here: the run's commits, if any, have nowhere to go */
	if (host == -ENOENT)
		r = collect_refs(g, l, tree_fd, base_fd, 40, err) ?:
		    collect_refs(g, l, tree_fd, base_fd, 64, err);
	if (host == -ENOENT && r >= 0 && g->n_refs)
		return cd_fail(err, ENOENT, "git",
			       "layer %s: the run made commits in a git repository the workdir "
			       "does not have (no .git here): they cannot be brought in (git init "
			       "first, or cordon discard)", l->id);
	if (host == -ENOENT)
		return r;
	if (host < 0)
		return cd_fail(err, -host, "git", "layer %s: its commits: %s", l->id, msg);
	r = collect_refs(g, l, tree_fd, base_fd, hash_hex, err);
	if (r < 0 || g->n_refs == 0)
		return r;
	r = init_tmp(g, hash_hex, msg);
	if (r < 0)
		return cd_fail(err, -r, "git", "layer %s: a temporary repository: %s", l->id,
			       r == -EIO ? msg : strerror(-r));
	for (size_t i = 0; r >= 0 && i < l->n_changes; i++) {
		const struct cd_layer_change *c = &l->changes[i];

		if (!new_file(c) ||
		    !(loose_object(c->path, hash_hex) || pack_file(c->path, hash_hex)))
			continue;
		r = copy_object(g, tree_fd, c);
		if (r < 0)
			return cd_fail_errno(err, -r, "git", "layer %s: %s", l->id, c->path);
		g->n_objects++;
	}
	r = tmp_refs(g, msg);
	if (r < 0)
		return cd_fail(err, -r, "git", "layer %s: the run's refs: %s", l->id,
			       r == -EIO ? msg : strerror(-r));
	return 0;
}

/* ---- the commits' paths: protected ones refused, as in the work tree ---- */

static int protected_in(const struct cd_layer *l, const char *path, struct cordon_error *err)
{
	for (char **gl = l->protect; gl && *gl; gl++)
		if (cd_layer_protected(*gl, path))
			return cd_fail(err, EPERM, "git", "layer %s: a commit of the run changes %s, "
				       "protected (%s): not applied", l->id, path, *gl);
	return 0;
}

/* Whether names (len bytes, NUL-separated) hold one that is dir/part or below it */
static bool has_part(const char *names, size_t len, const char *dir, size_t n, const char *part)
{
	size_t pl = strlen(part);

	for (size_t i = 0; i < len; i += strlen(names + i) + 1) {
		const char *s = names + i, *rest = s + n + (n > 0);

		if ((n == 0 || (!strncmp(s, dir, n) && s[n] == '/')) && !strncmp(rest, part, pl) &&
		    (rest[pl] == '\0' || rest[pl] == '/'))
			return true;
	}
	return false;
}

/* A bare repository in the commits (HEAD with objects/ and refs/, or commondir, in a directory
 * or at the top): checked out on the host, git would enter it from there and run its config's
 * pager, editor or aliases (protect_git.c refuses the same in the work tree). */
static int bare_in(const struct cd_layer *l, const char *names, size_t len,
		   struct cordon_error *err)
{
	for (size_t i = 0; i < len; i += strlen(names + i) + 1) {
		const char *s = names + i, *slash = strrchr(s, '/');
		size_t n = slash ? (size_t)(slash - s) : 0;

		if (strcmp(slash ? slash + 1 : s, "HEAD") != 0)
			continue;
		if ((has_part(names, len, s, n, "objects") && has_part(names, len, s, n, "refs")) ||
		    has_part(names, len, s, n, "commondir"))
			return cd_fail(err, EPERM, "git", "layer %s: a commit of the run makes %s "
				       "part of a bare repository (git would enter it): not applied",
				       l->id, s);
	}
	return 0;
}

/* Every path a new commit changes (each parent of a merge), against the layer's protected
 * globs: a sandbox that commits .envrc, .vscode/ or .gitmodules and then removes it from its
 * work tree would otherwise bring it to the host as a commit, which the user then merges. */
static int check_commits(struct gitrepo *g, const struct cd_layer *l, const char *tips,
			 struct cordon_error *err)
{
	const char *args[GIT_REFS_MAX + 16];
	_cleanup_free_ char *names = NULL;
	char msg[200] = "";
	size_t n = 0, len = 0;
	int r;

	args[n++] = "--git-dir";
	args[n++] = g->tmp;
	args[n++] = "log";
	args[n++] = "--format=";
	args[n++] = "--name-only";
	args[n++] = "--no-renames";
	args[n++] = "-m";
	args[n++] = "-z";
	args[n++] = "--stdin";
	for (size_t i = 0; i < g->n_refs; i++)
		args[n++] = g->refs[i].hex;
	args[n++] = "--";
	args[n] = NULL;
	r = run_git_in(g, -1, args, tips, &names, &len, msg);
	if (r == -E2BIG)
		return cd_fail(err, E2BIG, "git", "layer %s: its commits change more paths than "
			       "cordon checks (%u bytes of names): not applied", l->id, GIT_OUT_MAX);
	if (r != 0)
		return cd_fail(err, r < 0 ? -r : EIO, "git", "layer %s: the paths of its commits: "
			       "%s", l->id, msg);
	for (size_t i = 0; i < len; i += strlen(names + i) + 1) {
		r = names[i] ? protected_in(l, names + i, err) : 0;
		if (r < 0)
			return r;
	}
	return bare_in(l, names, len, err);
}

/* ---- diff: the commits listed ---- */

/* A commit's subject is the sandbox's text, shown on the reviewer's terminal: a control
 * character (ESC, CR, BEL, a C1 control in UTF-8) is written as \OOO, as the files' names are
 * quoted, so that no escape sequence clears, rewrites or hides a line (or sets the clipboard). */
static void put_text(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(out, "\\%03o\\%03o", *p, p[1]);
			p++;
		} else if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			fprintf(out, "\\%03o", *p);
		else
			fputc(*p, out);
	}
}

static int put_log(FILE *out, struct gitrepo *g, const struct gitref *ref, const char *not,
		   char msg[200])
{
	/* the host's refs excluded: ^NAME lines on git's stdin (however many) */
	const char *args[] = { "--git-dir", g->tmp, "log", "--format=  %h %s", "--stdin", ref->hex,
			       "--", NULL };
	_cleanup_free_ char *log = NULL;
	size_t n = 0;
	int r = run_git_in(g, -1, args, not, &log, NULL, msg);

	if (r != 0)
		return r < 0 ? r : -EIO;
	for (const char *p = log; *p; p++)
		n += *p == '\n';
	fprintf(out, "git: %s -> %.12s (%zu new commit%s)\n", ref->name, ref->hex, n,
		n == 1 ? "" : "s");
	put_text(out, log);
	return 0;
}

/* The host repository's refs and HEAD, one object name a line (what the run's commits are
 * counted from). */
static int host_tips(const struct gitrepo *g, char **ret, char msg[200])
{
	const char *args[] = { "--git-dir=.git", "for-each-ref", "--format=^%(objectname)", NULL };
	const char *head[] = { "--git-dir=.git", "rev-parse", "-q", "--verify", "HEAD", NULL };
	_cleanup_free_ char *refs = NULL, *h = NULL;
	int r = run_git(g, g->workdir_fd, args, &refs, msg);
	char *nl;

	if (r != 0)
		return r < 0 ? r : -EIO;
	/* whole lines only: past GIT_OUT_MAX (some 25,000 refs) the output is cut, and a cut
	 * "^HEX" would be a prefix git resolves or refuses (fewer tips: more commits checked) */
	nl = strrchr(refs, '\n');
	*(nl ? nl + 1 : refs) = '\0';
	(void)run_git(g, g->workdir_fd, head, &h, msg);
	*ret = cd_strdup_printf("%s%s%s", refs, h && h[0] ? "^" : "", h ? h : "");
	return *ret ? 0 : -ENOMEM;
}

int cd_layer_git_log(const struct cd_layer *l, int store_fd, int workdir_fd, FILE *out,
		     struct cordon_error *err)
{
	struct gitrepo g = { .workdir_fd = workdir_fd };
	_cleanup_free_ char *tips = NULL;
	char msg[200] = "";
	size_t n = cd_layer_git_count(l);
	int r = 0;

	if (n == 0)
		return 0;
	if (workdir_fd >= 0)
		r = repo_build(&g, l, store_fd, err);
	if (r >= 0 && g.n_refs > 0 && host_tips(&g, &tips, msg) < 0)
		r = cd_fail(err, EIO, "git", "layer %s: the workdir's refs: %s", l->id, msg);
	for (size_t i = 0; r >= 0 && i < g.n_refs; i++)
		if (put_log(out, &g, &g.refs[i], tips, msg) < 0)
			r = cd_fail(err, EIO, "git", "layer %s: its commits: %s", l->id, msg);
	if (r < 0) /* the files were shown: say why the commits are not, and go on */
		fputs("git: the run's commits cannot be listed: ", out);
	else if (g.n_refs && (r = check_commits(&g, l, tips, err)) < 0)
		fputs("git: ", out);
	if (r < 0) { /* (a path or git's words: the sandbox's names in them, escaped) */
		put_text(out, err->msg);
		fputc('\n', out);
	}
	fprintf(out, "git: %zu file%s of the run's git state (.git: index, objects, refs, logs) "
		"not shown as changes; %s%s%s\n", n, n == 1 ? "" : "s",
		workdir_fd < 0 ? "its commits are listed from the workdir (not there now)"
		: r < 0	       ? "cordon apply refuses the layer as it is"
		: g.n_refs     ? "cordon apply brings the commits in as refs/cordon/"
			       : "no branch moved: cordon apply drops them",
		r >= 0 && g.n_refs ? l->id : "",
		r >= 0 && g.n_refs ? "/... and drops the rest" : "");
	repo_done(&g);
	return 0;
}

/* ---- apply: the commits fetched ---- */

int cd_layer_git_fetch(const struct cd_layer *l, int store_fd, int workdir_fd, char ***ret_refs,
		       struct cordon_error *err)
{
	struct gitrepo g = { .workdir_fd = workdir_fd };
	_cleanup_(cd_strv_freep) char **specs = NULL, **refs = NULL;
	_cleanup_free_ char *url = NULL;
	const char *args[GIT_REFS_MAX + 16];
	char msg[200] = "";
	size_t n = 0;
	int r;

	*ret_refs = NULL;
	if (cd_layer_git_count(l) == 0)
		return 0;
	_cleanup_free_ char *tips = NULL;

	r = repo_build(&g, l, store_fd, err);
	if (r >= 0 && g.n_refs > 0 && host_tips(&g, &tips, msg) < 0)
		r = cd_fail(err, EIO, "git", "layer %s: the workdir's refs: %s", l->id, msg);
	if (r >= 0 && g.n_refs > 0)
		r = check_commits(&g, l, tips, err);
	for (size_t i = 0; r >= 0 && i < g.n_refs; i++) {
		const char *name = g.refs[i].name;
		_cleanup_free_ char *dst = cd_strdup_printf(
			"refs/cordon/%s/%s", l->id, !strcmp(name, "HEAD") ? "HEAD" : name + 11);
		_cleanup_free_ char *spec = cd_strdup_printf(
			"+refs/%s:%s", !strcmp(name, "HEAD") ? "cordon/HEAD" : name + 5, dst);

		if (!dst || !spec || cd_strv_push(&specs, spec) < 0 || cd_strv_push(&refs, dst) < 0)
			r = cd_fail(err, ENOMEM, "git", "out of memory");
	}
	url = g.n_refs ? cd_strdup_printf("file://%s", g.tmp) : NULL;
	if (r >= 0 && g.n_refs) {
		args[n++] = "--git-dir=.git";
		args[n++] = "fetch";
		args[n++] = "-q";
		args[n++] = "--no-tags";
		args[n++] = "--no-write-fetch-head";
		args[n++] = "--no-recurse-submodules";
		args[n++] = "--no-auto-gc";
		args[n++] = url;
		for (char **s = specs; s && *s; s++)
			args[n++] = *s;
		args[n] = NULL;
		if (run_git(&g, g.workdir_fd, args, NULL, msg) != 0)
			r = cd_fail(err, EIO, "git", "layer %s: fetching its commits into the "
				    "workdir's repository: %s", l->id, msg);
	}
	repo_done(&g);
	if (r >= 0)
		*ret_refs = CD_TAKE_PTR(refs);
	return r;
}
