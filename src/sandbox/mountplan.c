/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mountplan.c - what the sandbox's filesystem is made of. Runs in the supervisor, before anything
 * is started, so that a bad path fails on the 125 path and -v can show the whole plan.
 *
 * Layout (in this order, which is the order the child mounts them):
 *  1. the root: a tmpfs, read-only at the end, holding one read-only recursive bind per top-level
 *     entry of the host's "/" that a program needs (system_top below: an allow-list; every
 *     other top-level directory of the host, /opt, /srv, /data, ..., is not there), symlinks
 *     copied; the top-level places that hold secrets or other users' data are empty
 *     directories instead (hidden_top below). A --rootfs is the caller's chosen system: all of
 *     it is visible but hidden_top.
 *  2. what cordon manages: /proc, /sys, /dev, /tmp, /var/tmp.
 *  3. HOME, the workdir and the options' mounts, parents before children, so that the workdir is
 *     reachable under a hidden directory and --hide can hide a path inside the workdir.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <string.h>
#include <sys/stat.h>

#include "hostpath.h"
#include "mount.h"
#include "resolver.h"

/* Top-level entries replaced by an empty read-only directory. /var goes whole: lib, log, spool,
 * mail, cache, backups, www... hold databases, logs and credentials; /var/tmp comes back fresh. */
static const char *const hidden_top[] = {
	"boot", "home", "lost+found", "media", "mnt", "root", "run", "snap", "srv", "var",
};
#define CD_ACCOUNT_FILE_MAX (1 << 20) /* a larger /etc/passwd gets no line added */

/* The host's top-level entries a program needs: the system trees. */
static const char *const system_top[] = {
	"bin", "etc", "lib", "lib32", "lib64", "libx32", "sbin", "usr",
};
/* Top-level entries cordon provides itself. */
static const char *const managed_top[] = { "dev", "proc", "sys", "tmp" };

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

const char *cd_mnt_kind_name(enum cd_mnt_kind k)
{
	static const char *const names[] = {
		[CD_MNT_BIND] = "ro-bind", [CD_MNT_WORKDIR] = "workdir", [CD_MNT_SYMLINK] = "symlink",
		[CD_MNT_DIR] = "hidden",   [CD_MNT_TMPFS] = "tmpfs",     [CD_MNT_PROC] = "proc",
		[CD_MNT_SYSFS] = "sysfs",  [CD_MNT_DEV] = "dev",         [CD_MNT_HIDE] = "hide",
		[CD_MNT_FILE] = "file",
	};
	return k < CD_ELEMENTSOF(names) ? names[k] : "?";
}

static int add(struct cd_mount_plan *p, enum cd_mnt_kind kind, const char *src, const char *dst,
	       struct cd_mnt **ret, struct cordon_error *err)
{
	struct cd_mnt *nm, *m;

	nm = realloc(p->m, (p->n + 1) * sizeof(*nm));
	if (!nm)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	p->m = nm;
	m = &p->m[p->n];
	*m = (struct cd_mnt){ .kind = kind, .fd = -1, .host_fd = -1, .mode = 0755 };
	m->src = src ? strdup(src) : NULL;
	m->dst = strdup(dst);
	if ((src && !m->src) || !m->dst) {
		free(m->src);
		free(m->dst);
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	}
	p->n++;
	if (ret)
		*ret = m;
	return 0;
}

static int add_tmpfs(struct cd_mount_plan *p, const char *dst, uint64_t size, mode_t mode,
		     bool user, struct cordon_error *err)
{
	struct cd_mnt *m;
	int r = add(p, CD_MNT_TMPFS, NULL, dst, &m, err);

	if (r < 0)
		return r;
	m->size = size;
	m->mode = mode;
	m->user = user;
	return 0;
}

static int add_top_entry(struct cd_mount_plan *p, const char *root, const char *name,
			 bool host, struct cordon_error *err)
{
	_cleanup_free_ char *src = NULL, *dst = NULL;
	char target[4096];
	struct cd_mnt *m;
	struct stat st;
	ssize_t n;
	int r;

	src = strcmp(root, "/") == 0 ? cd_strdup_printf("/%s", name)
				     : cd_strdup_printf("%s/%s", root, name);
	dst = cd_strdup_printf("/%s", name);
	if (!src || !dst)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	if (in_list(name, hidden_top, CD_ELEMENTSOF(hidden_top)))
		return add(p, CD_MNT_DIR, NULL, dst, NULL, err);
	if (host && !in_list(name, system_top, CD_ELEMENTSOF(system_top)))
		return 0; /* not a system tree: not there (a workdir below it gets its path made) */
	if (lstat(src, &st) < 0)
		return cd_fail_errno(err, errno, "rootfs", "%s", src);
	if (S_ISLNK(st.st_mode)) {
		n = readlink(src, target, sizeof(target) - 1);
		if (n < 0)
			return cd_fail_errno(err, errno, "rootfs", "readlink %s", src);
		target[n] = '\0';
		return add(p, CD_MNT_SYMLINK, target, dst, NULL, err);
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return 0; /* sockets, devices, fifos at the top level: nothing a sandbox needs */
	r = add(p, CD_MNT_BIND, src, dst, &m, err);
	if (r < 0)
		return r;
	m->is_dir = S_ISDIR(st.st_mode);
	m->ro = true;
	/* a --rootfs's entry, opened here: a root supervisor clones it from this descriptor
	 * (sandbox.c, send_bind_trees), so the root may lie below directories only root may
	 * enter (a server's state directory), which pid 1, the sandbox's host uid, could not */
	if (!host) {
		m->host_fd = open(src, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (m->host_fd < 0)
			return cd_fail_errno(err, errno, "rootfs", "%s", src);
	}
	return 0;
}

static int scandir_filter(const struct dirent *d)
{
	return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0 &&
	       !in_list(d->d_name, managed_top, CD_ELEMENTSOF(managed_top));
}

static int plan_root(struct cd_mount_plan *p, const char *root, struct cordon_error *err)
{
	struct dirent **names = NULL;
	int n, r = 0;

	n = scandir(root, &names, scandir_filter, alphasort);
	if (n < 0)
		return cd_fail_errno(err, errno, "rootfs", "read %s", root);
	for (int i = 0; i < n; i++) {
		if (r >= 0)
			r = add_top_entry(p, root, names[i]->d_name, strcmp(root, "/") == 0, err);
		free(names[i]);
	}
	free(names);
	return r;
}

static int plan_managed(struct cd_mount_plan *p, const struct cd_fs_opts *fs,
			struct cordon_error *err)
{
	int r;

	r = add(p, CD_MNT_PROC, NULL, "/proc", NULL, err);
	if (r >= 0)
		r = add(p, CD_MNT_SYSFS, "/sys", "/sys", NULL, err);
	if (r >= 0)
		r = add(p, CD_MNT_DEV, NULL, "/dev", NULL, err);
	if (r >= 0)
		r = add_tmpfs(p, "/tmp", fs->tmp_size, 01777, false, err);
	if (r >= 0) /* /var itself is hidden (hidden_top), or created as a parent */
		r = add_tmpfs(p, "/var/tmp", fs->tmp_size, 01777, false, err);
	return r;
}

/* --ro-bind: its canonical source opened again, following no symlink; pid 1 binds that very
 * tree (the supervisor's clone of it, or pid 1's own lookup checked against its inode). */
static int plan_bind(struct cd_mount_plan *p, const struct cd_bind *b,
		     const struct cd_marks *marks, struct cordon_error *err)
{
	struct cd_hostpath hp = { .fd = -1 };
	struct cd_mnt *m;
	int r = cd_hostpath_open(b->src, CD_HOSTPATH_CANONICAL, "ro-bind", marks, &hp, err);

	if (r >= 0)
		r = add(p, CD_MNT_BIND, hp.path, b->dst, &m, err);
	if (r < 0) {
		cd_hostpath_done(&hp);
		return r;
	}
	m->is_dir = S_ISDIR(hp.st.st_mode);
	m->ro = true;
	m->user = true;
	m->dev = hp.st.st_dev;
	m->ino = hp.st.st_ino;
	m->host_fd = CD_TAKE_FD(hp.fd);
	cd_hostpath_done(&hp);
	return 0;
}

static bool home_given(const struct cd_fs_opts *fs, const struct cd_identity *id)
{
	for (size_t i = 0; i < fs->n_tmpfs; i++)
		if (strcmp(fs->tmpfs[i].path, id->home) == 0)
			return true;
	return false;
}

/* The options' mounts, HOME and the workdir, into p (unsorted). */
static int plan_user(struct cd_mount_plan *p, const struct cd_fs_opts *fs, const char *workdir,
		     const struct stat *workdir_st, const char *workdir_target,
		     const struct cd_identity *id, const struct cd_marks *marks,
		     struct cordon_error *err)
{
	struct cd_mnt *m;
	int r;

	/* a --tmpfs on HOME is HOME itself, of that size; a HOME that is the workdir is that */
	r = home_given(fs, id) || id->home_is_workdir
		    ? 0
		    : add_tmpfs(p, id->home, fs->home_size, 0700, false, err);
	if (r < 0)
		return r;
	r = add(p, CD_MNT_WORKDIR, workdir, workdir_target, &m, err);
	if (r < 0)
		return r;
	m->dev = workdir_st->st_dev;
	m->ino = workdir_st->st_ino;
	for (size_t i = 0; r >= 0 && fs->hide && fs->hide[i]; i++) {
		r = add(p, CD_MNT_HIDE, NULL, fs->hide[i], &m, err);
		if (r >= 0)
			m->user = true;
	}
	for (size_t i = 0; r >= 0 && i < fs->n_tmpfs; i++)
		r = add_tmpfs(p, fs->tmpfs[i].path, fs->tmpfs[i].size,
			      strcmp(fs->tmpfs[i].path, id->home) == 0 ? 0700 : 0755, true, err);
	for (size_t i = 0; r >= 0 && i < fs->n_binds; i++)
		r = plan_bind(p, &fs->binds[i], marks, err);
	return r;
}

/* A file of the root (relative to it), read inside it: what the sandbox will see there. 0 and
 * *ret NULL when there is none. */
static int read_root_file(const char *root, const char *rel, char **ret, size_t *ret_len,
			  struct cordon_error *err)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	ssize_t n;

	*ret = NULL;
	if (rootfd < 0)
		return cd_fail_errno(err, errno, "rootfs", "%s", root);
	/* the host's own root is the caller's: its /etc/passwd may be a symlink, as it is seen */
	fd = strcmp(root, "/") == 0 ? openat(rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
				    : (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		return cd_fail_errno(err, errno, "identity", "/%s", rel);
	if (!S_ISREG(st.st_mode) || st.st_size > CD_ACCOUNT_FILE_MAX)
		return 0; /* not a file cordon adds a line to */
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return cd_fail(err, ENOMEM, "identity", "out of memory");
	n = read(fd, buf, (size_t)st.st_size);
	if (n < 0)
		return cd_fail_errno(err, errno, "identity", "read /%s", rel);
	buf[n] = '\0';
	*ret = CD_TAKE_PTR(buf);
	*ret_len = (size_t)n;
	return 0;
}

/* Does a line of an /etc/passwd or /etc/group text have this id in its third field? */
static bool has_id(const char *text, unsigned id)
{
	for (const char *line = text; line && *line;) {
		const char *f = line;

		for (int i = 0; i < 2 && f; i++) {
			f = strpbrk(f, ":\n");
			f = f && *f == ':' ? f + 1 : NULL;
		}
		if (f && strtoul(f, NULL, 10) == id && f[strspn(f, "0123456789")] == ':')
			return true;
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return false;
}

/* Is dst the place of an option's mount, or below one (--hide /etc, --tmpfs /etc, --ro-bind
 * DIR:/etc: a file cordon would make there is not cordon's to make)? A writable tmpfs above
 * (--tmpfs $HOME) still takes a seeded file, when seeded. */
static bool user_mount_over(const struct cd_mount_plan *p, const char *dst, bool seeded)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct cd_mnt *m = &p->m[i];

		if (m->user && (strcmp(m->dst, dst) == 0 ||
				(cd_path_startswith(dst, m->dst) && !(seeded && m->kind == CD_MNT_TMPFS))))
			return true;
	}
	return false;
}

/* Does a line of an /etc/hosts text name host (after its address)? */
static bool has_host(const char *text, const char *host)
{
	size_t n = strlen(host);

	for (const char *line = text; line && *line;) {
		size_t len = strcspn(line, "\n#");
		const char *f = line + strcspn(line, " \t\n#"); /* past the address */

		while (f < line + len) {
			f += strspn(f, " \t");
			if ((size_t)(line + len - f) >= n && strncmp(f, host, n) == 0 &&
			    strchr(" \t\n#", f[n] ? f[n] : '\n'))
				return true;
			f += strcspn(f, " \t\n#");
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return false;
}

/* The root's file with one more line, over the original (read-only), when known() says the line
 * is missing. */
static int add_line(struct cd_mount_plan *p, const char *root, const char *rel, const char *line,
		    bool (*known)(const char *text, const void *arg), const void *arg,
		    struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL, *dst = cd_strdup_printf("/%s", rel);
	size_t len = 0;
	struct cd_mnt *m;
	int r;

	if (!dst)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	if (user_mount_over(p, dst, false))
		return 0; /* hidden or bound by an option: that wins */
	r = read_root_file(root, rel, &text, &len, err);
	if (r < 0 || !text || known(text, arg))
		return r;
	r = add(p, CD_MNT_FILE, NULL, dst, &m, err);
	if (r < 0)
		return r;
	m->content = cd_strdup_printf("%s%s%s\n", text, len && text[len - 1] != '\n' ? "\n" : "",
				      line);
	if (!m->content)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	m->content_len = strlen(m->content);
	m->ro = true;
	return 0;
}

static bool id_known(const char *text, const void *id)
{
	return has_id(text, *(const unsigned *)id);
}

static bool host_known(const char *text, const void *host)
{
	return has_host(text, host);
}

/* hostname -i, hostname -f, gethostbyname(gethostname()): the sandbox's name on loopback, the
 * host's entries kept */
static int plan_hosts(struct cd_mount_plan *p, const char *root, const char *hostname,
		      struct cordon_error *err)
{
	_cleanup_free_ char *line = cd_strdup_printf("127.0.1.1\t%s", hostname);

	if (!line)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	return add_line(p, root, "etc/hosts", line, host_known, hostname, err);
}

/* Where the root's /etc/resolv.conf leads when it is a symlink into /run (systemd-resolved's
 * "../run/systemd/resolve/stub-resolv.conf"): that path, absolute, into buf; NULL for any other
 * link (a "..", a link elsewhere: what the sandbox sees there is not cordon's to make). */
static const char *resolv_link(int rootfd, char *buf, size_t size)
{
	char t[PATH_MAX];
	ssize_t n = readlinkat(rootfd, "etc/resolv.conf", t, sizeof(t) - 1);
	const char *rest;

	if (n <= 0)
		return NULL;
	t[n] = '\0';
	rest = strncmp(t, "/run/", 5) == 0 ? t + 5 : strncmp(t, "../run/", 7) == 0 ? t + 7 : NULL;
	if (!rest || !*rest || strstr(rest, "..") || strstr(rest, "//") ||
	    rest[strlen(rest) - 1] == '/' || (size_t)snprintf(buf, size, "/run/%s", rest) >= size)
		return NULL;
	return buf;
}

/* The sandbox's own network has no route out: its /etc/resolv.conf names cordon's resolver on
 * its loopback (resolver.h), which answers at once and tells cordon the name, instead of the
 * host's servers, which cannot be reached (glibc says "temporary failure": npm and pip retry for
 * a minute). No search domains: a name is looked up as it was written. Over the root's file; or,
 * where that is a symlink into /run (systemd-resolved's stub), written where it leads, in the
 * sandbox's own empty /run. */
static int plan_resolv(struct cd_mount_plan *p, const char *root, struct cordon_error *err)
{
	_cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	const char *dst = "/etc/resolv.conf";
	char link[PATH_MAX];
	struct cd_mnt *m;
	struct stat st;
	int r;

	if (rootfd < 0)
		return cd_fail_errno(err, errno, "rootfs", "%s", root);
	if (user_mount_over(p, dst, false) ||
	    fstatat(rootfd, "etc/resolv.conf", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		dst = resolv_link(rootfd, link, sizeof(link));
		/* (/run is the sandbox's own unless an option mounts there) */
		if (!dst || user_mount_over(p, dst, false))
			return 0;
	} else if (!S_ISREG(st.st_mode)) {
		return 0;
	}
	r = add(p, CD_MNT_FILE, NULL, dst, &m, err);
	if (r < 0)
		return r;
	m->content = strdup("# made by cordon: no lookup leaves the sandbox; this resolver answers "
			    "each with an error\n# (--allow-net: allowed names go through the proxy, "
			    "which looks them up outside)\n"
			    "nameserver " CD_RESOLVER_ADDR "\n"
			    "options attempts:1 timeout:2\n");
	if (!m->content)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	m->content_len = strlen(m->content);
	m->ro = S_ISREG(st.st_mode); /* bound over the root's; or seeded in the sandbox's /run */
	return 0;
}

/* git refuses a repository owned by another uid ("dubious ownership"): what is bound in
 * read-only shows root's files as nobody's, and the id-mapped workdir's as the sandbox user's
 * own. Inside, every repository is the sandbox's to use: HOME's .gitconfig says so, and stays
 * the sandbox's to change. */
static int plan_gitconfig(struct cd_mount_plan *p, const struct cd_identity *id,
			  struct cordon_error *err)
{
	_cleanup_free_ char *dst = cd_strdup_printf("%s/.gitconfig", id->home);
	struct cd_mnt *m;
	int r;

	if (!dst)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	/* a HOME that is the workdir is the caller's files: nothing of cordon's goes there (its
	 * repositories are the sandbox's own there anyway: the workdir's owner is its uid) */
	if (id->home_is_workdir || user_mount_over(p, dst, true))
		return 0; /* the caller's own .gitconfig, or HOME, bound in: that wins */
	r = add(p, CD_MNT_FILE, NULL, dst, &m, err);
	if (r < 0)
		return r;
	m->content = strdup("# made by cordon: every repository in the sandbox is the sandbox's own\n"
			    "[safe]\n\tdirectory = *\n");
	if (!m->content)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	m->content_len = strlen(m->content);
	m->ro = false; /* seeded into HOME, not bound over */
	return 0;
}

/* Is this line's first field name, or its third id? */
static bool line_is(const char *line, size_t len, const char *name, unsigned id)
{
	size_t n = strlen(name);
	const char *f = memchr(line, ':', len), *end = line + len;

	if (f && (size_t)(f - line) == n && strncmp(line, name, n) == 0)
		return true;
	f = f ? memchr(f + 1, ':', (size_t)(end - f - 1)) : NULL;
	if (!f || ++f >= end || *f < '0' || *f > '9')
		return false;
	return strtoul(f, NULL, 10) == id && f + strspn(f, "0123456789") < end &&
	       f[strspn(f, "0123456789")] == ':';
}

/* The root's file without its lines for name or id, with line added, over the original
 * (read-only): a given account is the only one of its name and id inside. A root without the
 * file, or with one cordon does not read (not a regular file, past CD_ACCOUNT_FILE_MAX), gets
 * the account's line alone: the sandbox's name must be right, others' may go. */
static int replace_line(struct cd_mount_plan *p, const char *root, const char *rel,
			const char *line, const char *name, unsigned id, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL, *dst = cd_strdup_printf("/%s", rel);
	size_t len = 0, out = 0;
	struct cd_mnt *m;
	int r;

	if (!dst)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	if (user_mount_over(p, dst, false))
		return 0; /* hidden or bound by an option: that wins */
	r = read_root_file(root, rel, &text, &len, err);
	if (r >= 0)
		r = add(p, CD_MNT_FILE, NULL, dst, &m, err);
	if (r < 0)
		return r;
	/* each line kept, the last one's newline added; the account's line, its newline, NUL */
	m->content = malloc(len + 1 + strlen(line) + 2);
	if (!m->content)
		return cd_fail(err, ENOMEM, "mount", "out of memory");
	for (size_t i = 0; i < len;) {
		size_t n = strcspn(text + i, "\n");

		if (!line_is(text + i, n, name, id)) {
			memcpy(m->content + out, text + i, n);
			out += n;
			m->content[out++] = '\n';
		}
		i += n + (i + n < len);
	}
	out += (size_t)sprintf(m->content + out, "%s\n", line);
	m->content_len = out;
	m->ro = true;
	return 0;
}

/* The login shell of a given account: bash where the root has it, as E2B's user has */
static const char *account_shell(const char *root)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1;

	fd = rootfd < 0 ? -1 : (int)syscall(SYS_openat2, rootfd, "bin/bash", &how, sizeof(how));
	return fd >= 0 ? "/bin/bash" : "/bin/sh";
}

/* cordon_config_set_account(): that account, the only one of its name and ids */
static int plan_given_account(struct cd_mount_plan *p, const char *root,
			      const struct cd_identity *id, struct cordon_error *err)
{
	_cleanup_free_ char *pw = cd_strdup_printf("%s:x:%u:%u::%s:%s", id->user, id->inside_uid,
						   id->inside_gid, id->home, account_shell(root));
	_cleanup_free_ char *gr = cd_strdup_printf("%s:x:%u:", id->user, id->inside_gid);
	int r;

	if (!pw || !gr)
		return cd_fail(err, ENOMEM, "identity", "out of memory");
	r = replace_line(p, root, "etc/passwd", pw, id->user, id->inside_uid, err);
	return r < 0 ? r : replace_line(p, root, "etc/group", gr, id->user, id->inside_gid, err);
}

/* tools look the user up (whoami, id, python's pwd, node's os.userInfo()): an inside uid or gid
 * without an account gets one, named CD_SANDBOX_USER */
static int plan_account(struct cd_mount_plan *p, const char *root, const struct cd_identity *id,
			struct cordon_error *err)
{
	_cleanup_free_ char *pw = cd_strdup_printf("%s:x:%u:%u:cordon sandbox:%s:/bin/sh",
						   id->user, id->inside_uid, id->inside_gid,
						   id->home);
	_cleanup_free_ char *gr = cd_strdup_printf("%s:x:%u:", id->user, id->inside_gid);
	int r;

	if (id->account)
		return plan_given_account(p, root, id, err);
	if (!pw || !gr)
		return cd_fail(err, ENOMEM, "identity", "out of memory");
	r = add_line(p, root, "etc/passwd", pw, id_known, &id->inside_uid, err);
	return r < 0 ? r : add_line(p, root, "etc/group", gr, id_known, &id->inside_gid, err);
}

/* What a mount is, in the library's words (the CLI names its options for them) */
static const char *option_of(const struct cd_mnt *m)
{
	if (m->kind == CD_MNT_TMPFS)
		return m->user ? "a tmpfs mount" : "HOME";
	if (m->kind == CD_MNT_WORKDIR)
		return "the workdir target";
	if (m->kind == CD_MNT_HIDE)
		return "a hidden path";
	if (m->kind == CD_MNT_FILE)
		return "cordon's own file";
	return "a read-only bind";
}

/* Two of the options' mounts on one path would silently shadow each other: refuse. */
static int check_conflicts(const struct cd_mnt *m, size_t n, struct cordon_error *err)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(m[i].dst, m[j].dst) == 0)
				return cd_fail(err, 0, "mount", "%s and %s both mount on \"%s\"",
					       option_of(&m[i]), option_of(&m[j]), m[i].dst);
	return 0;
}

/* Parents before children; stable, so that equal depths keep the options' order. */
static void sort_by_depth(struct cd_mnt *m, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct cd_mnt cur = m[i];
		size_t d = cd_path_depth(cur.dst), j = i;

		while (j > 0 && cd_path_depth(m[j - 1].dst) > d) {
			m[j] = m[j - 1];
			j--;
		}
		m[j] = cur;
	}
}

int cd_mount_plan_build(const struct cd_fs_opts *fs, const char *hostname, bool own_net,
			const char *workdir,
			const struct stat *workdir_st, const char *workdir_target,
			const struct cd_identity *id, const struct cd_marks *marks,
			struct cd_mount_plan *ret, struct cordon_error *err)
{
	struct cd_mount_plan p = { .uid = id->inside_uid, .gid = id->inside_gid,
				   .tmp_size = fs->tmp_size, .fresh_sysfs = own_net };
	size_t user_start;
	int r;

	r = plan_root(&p, fs->rootfs ? fs->rootfs : "/", err);
	if (r >= 0)
		r = plan_managed(&p, fs, err);
	user_start = p.n;
	if (r >= 0)
		r = plan_user(&p, fs, workdir, workdir_st, workdir_target, id, marks, err);
	if (r >= 0)
		r = plan_account(&p, fs->rootfs ? fs->rootfs : "/", id, err);
	if (r >= 0)
		r = plan_hosts(&p, fs->rootfs ? fs->rootfs : "/",
			       hostname ? hostname : CD_DEFAULT_HOSTNAME, err);
	if (r >= 0 && own_net)
		r = plan_resolv(&p, fs->rootfs ? fs->rootfs : "/", err);
	if (r >= 0)
		r = plan_gitconfig(&p, id, err);
	if (r >= 0)
		r = check_conflicts(p.m + user_start, p.n - user_start, err);
	if (r < 0) {
		cd_mount_plan_done(&p);
		return r;
	}
	sort_by_depth(p.m + user_start, p.n - user_start);
	for (size_t i = user_start; i < p.n; i++)
		if (p.m[i].kind == CD_MNT_WORKDIR)
			p.workdir_target = p.m[i].dst;
	*ret = p;
	return 0;
}

bool cd_mount_plan_visible(const struct cd_mount_plan *p, const char *path)
{
	const struct cd_mnt *deepest = NULL;

	for (size_t i = 0; i < p->n; i++)
		if (cd_path_startswith(path, p->m[i].dst) &&
		    (!deepest || cd_path_depth(p->m[i].dst) >= cd_path_depth(deepest->dst)))
			deepest = &p->m[i];
	if (!deepest)
		return false;
	switch (deepest->kind) {
	case CD_MNT_BIND:
	case CD_MNT_WORKDIR:
	case CD_MNT_SYMLINK: /* /bin -> usr/bin */
	case CD_MNT_PROC:
	case CD_MNT_SYSFS:
	case CD_MNT_DEV:
		return true;
	default: /* hidden, an empty tmpfs, a file */
		return strcmp(deepest->dst, path) == 0 && deepest->kind == CD_MNT_TMPFS;
	}
}

int cd_mount_plan_add_hide(struct cd_mount_plan *p, const char *dst, struct cordon_error *err)
{
	struct cd_mnt *m;
	int r = add(p, CD_MNT_HIDE, NULL, dst, &m, err);

	if (r >= 0)
		m->user = false;
	return r;
}

void cd_mount_plan_done(struct cd_mount_plan *p)
{
	cd_protect_plan_done(&p->protect);
	for (size_t i = 0; i < p->n; i++) {
		free(p->m[i].src);
		free(p->m[i].dst);
		free(p->m[i].content);
		cd_closep(&p->m[i].host_fd);
	}
	free(p->m);
	p->m = NULL;
	p->n = 0;
}
