/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * templates.c - the sandboxes' templates (--template NAME=DIR, NAME=oci-archive:PATH): named
 * read-only roots a create picks by its templateID. A directory is checked as `cordon --rootfs`
 * checks one; an OCI image archive is unpacked once, at start, into STATE-DIR/templates/NAME
 * by Debian's skopeo (the archive into an OCI layout: it reads the tar itself, nothing of it is
 * extracted by path) and umoci (the layers into a root, `--rootless` when not root; umoci
 * resolves every path inside the root, so a layer's symlinks and hard links cannot point its
 * writes outside). What the image plants that would matter on a host is taken away: setuid and
 * setgid bits, device nodes (inside they were inert anyway: the root is mounted nosuid, nodev,
 * read-only, and the sandbox has no capabilities and no_new_privs). The host's root answers
 * `base` and `code-interpreter-v1` (the SDKs' defaults) unless a template has that name.
 * Runs in the server (its start, before any thread; then connection threads read the table).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "hostroot.h"
#include "opts.h"
#include "rmtree.h"
#include "templates.h"
#include "util.h"

#define OCI_PREFIX    "oci-archive:"
#define TEMPLATES_MAX 64

static struct srv_template table[TEMPLATES_MAX];
static size_t n_table;
static char *unpack_dir; /* STATE-DIR/templates, once made */

static bool name_ok(const char *n)
{
	size_t len = strlen(n);

	if (len == 0 || len > 128 || n[0] == '.' || n[0] == '-')
		return false;
	for (const char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

const struct srv_template *srv_templates_find(const char *name)
{
	for (size_t i = 0; i < n_table; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const struct srv_template *srv_templates_at(size_t i)
{
	return i < n_table ? &table[i] : NULL;
}

/* The files the sandboxes' account is written over (E2B's user: sbconfig.c), said at start
 * rather than at every create */
static int check_account_files(const char *name, const char *root, struct cordon_error *err)
{
	static const char *const files[] = {"etc/passwd", "etc/group"};
	_cleanup_close_ int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (dfd < 0)
		return cd_fail_errno(err, errno, "--template", "%s: %s", name, root);
	/* resolved as the sandbox's mount will (inside the root: an "etc" linked to the host's
	 * /etc is no /etc of the template's) */
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};

	for (size_t i = 0; i < CD_ELEMENTSOF(files); i++) {
		_cleanup_close_ int fd = (int)syscall(SYS_openat2, dfd, files[i], &how, sizeof(how));

		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			return cd_fail(
			    err, 0, "--template",
			    "%s: %s/%s is missing or not a file (a root needs /etc/passwd "
			    "and /etc/group: the sandboxes' user is written over them)",
			    name, root, files[i]);
	}
	return 0;
}

/* A directory, checked as --rootfs is (the library's own check), kept as it resolved */
static int check_dir(const char *name, const char *dir, char **ret, struct cordon_error *err)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error e = {0};
	int r;

	if (!c)
		return cd_fail(err, ENOMEM, "--template", "out of memory");
	r = cordon_config_set_rootfs(c, dir, &e);
	cordon_config_free(c);
	if (r < 0)
		return cd_fail(err, e.code, "--template", "%s: %s", name, e.msg);
	*ret = realpath(dir, NULL);
	if (!*ret)
		return cd_fail_errno(err, errno, "--template", "%s", dir);
	r = check_account_files(name, *ret, err);
	if (r < 0) {
		free(*ret);
		*ret = NULL;
	}
	return r;
}

int srv_templates_add(const char *arg, struct cordon_error *err)
{
	const char *eq = strchr(arg, '=');
	_cleanup_free_ char *name = eq ? strndup(arg, (size_t)(eq - arg)) : NULL;
	struct srv_template t = {0};
	int r = 0;

	if (!eq)
		return cd_fail(err, 0, "--template",
			       "\"%s\": give NAME=DIR or NAME=oci-archive:PATH", arg);
	if (!name || !name_ok(name))
		return cd_fail(err, 0, "--template",
			       "\"%.*s\": a name is 1-128 letters, digits, "
			       "'-', '_', '.'",
			       (int)(eq - arg), arg);
	if (srv_templates_find(name))
		return cd_fail(err, 0, "--template", "%s: given twice", name);
	if (n_table == TEMPLATES_MAX - 2) /* and the host's two names */
		return cd_fail(err, 0, "--template", "at most %d templates", TEMPLATES_MAX - 2);
	if (strncmp(eq + 1, OCI_PREFIX, strlen(OCI_PREFIX)) == 0) {
		const char *path = eq + 1 + strlen(OCI_PREFIX);
		struct stat st;

		/* the archive is read at start (srv_templates_setup); said now if it is not there
		 */
		if (stat(path, &st) < 0)
			return cd_fail_errno(err, errno, "--template", "%s: %s", name, path);
		if (!S_ISREG(st.st_mode))
			return cd_fail(err, 0, "--template",
				       "%s: %s: not a file (an OCI image "
				       "archive, as `skopeo copy ... oci-archive:PATH` makes)",
				       name, path);
		t.source = strdup(eq + 1);
	} else {
		r = check_dir(name, eq + 1, &t.rootfs, err);
		if (r < 0)
			return r;
		t.source = strdup(t.rootfs);
	}
	t.name = CD_TAKE_PTR(name);
	if (!t.source || !t.name) {
		free(t.source), free(t.rootfs), free(t.name);
		return cd_fail(err, ENOMEM, "--template", "out of memory");
	}
	table[n_table++] = t;
	return 0;
}

/* argv run to its end, its stderr's last line into err on failure */
static int run_tool(char *const argv[], const char *name, struct cordon_error *err)
{
	char out[2048] = "", *line;
	size_t len = 0;
	int p[2], st;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return cd_fail_errno(err, errno, "--template", "pipe");
	pid = fork();
	if (pid < 0)
		return cd_fail_errno(err, errno, "--template", "fork");
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		dprintf(2, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, sizeof(out) - 1 - len)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && (len += (size_t)n) == sizeof(out) - 1)
			len = 0; /* keep the end: the cause is said last */
	out[len] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	while (len && (out[len - 1] == '\n' || out[len - 1] == ' '))
		out[--len] = '\0';
	line = strrchr(out, '\n') ? strrchr(out, '\n') + 1 : out;
	line += strspn(line, " \t");
	if (strncmp(line, "\u2a2f", strlen("\u2a2f")) == 0) /* umoci's mark of an error */
		line += strspn(line + strlen("\u2a2f"), " ") + strlen("\u2a2f");
	return cd_fail(err, 0, "--template", "%s: %s failed: %s", name, argv[0], line);
}

/* What an image plants that matters on a host: setuid/setgid bits, file capabilities, device
 * nodes */
static int neutralize(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)))
		return unlink(path) < 0 ? -1 : 0;
	/* unprivileged, none can have been set (that takes CAP_SETFCAP) and removing is EPERM */
	if (type == FTW_F && S_ISREG(st->st_mode) &&
	    lremovexattr(path, "security.capability") < 0 && errno != ENODATA &&
	    errno != ENOTSUP && !(errno == EPERM && !cd_host_root()))
		return -1;
	if (type == FTW_F && S_ISREG(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID)))
		return chmod(path, st->st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) < 0 ? -1 : 0;
	return 0;
}

static int unpack(struct srv_template *t, struct cordon_error *err)
{
	const char *archive = t->source + strlen(OCI_PREFIX);
	_cleanup_free_ char *dir = cd_strdup_printf("%s/%s", unpack_dir, t->name);
	_cleanup_free_ char *src = cd_strdup_printf("oci-archive:%s", archive);
	_cleanup_free_ char *layout = dir ? cd_strdup_printf("%s/layout", dir) : NULL;
	_cleanup_free_ char *dst = layout ? cd_strdup_printf("oci:%s:cordon", layout) : NULL;
	_cleanup_free_ char *image = layout ? cd_strdup_printf("%s:cordon", layout) : NULL;
	_cleanup_free_ char *bundle = dir ? cd_strdup_printf("%s/bundle", dir) : NULL;
	_cleanup_free_ char *checked = NULL;
	char *const copy[] = {"skopeo", "copy", "--quiet", src, dst, NULL};
	char *const unpack_root[] = {"umoci", "unpack", "--image", image, bundle, NULL};
	char *const unpack_user[] = {"umoci", "unpack", "--rootless", "--image",
				     image,   bundle,	NULL};
	struct stat st;
	int r;

	if (!src || !dst || !image || !bundle)
		return cd_fail(err, ENOMEM, "--template", "out of memory");
	if (mkdir(dir, 0700) < 0)
		return cd_fail_errno(err, errno, "--template", "mkdir %s", dir);
	r = run_tool(copy, t->name, err);
	if (r >= 0)
		r = run_tool(cd_host_root() ? unpack_root : unpack_user, t->name, err);
	if (r < 0)
		return r;
	if (lstat(layout, &st) == 0)
		cd_rmtree_path(layout, &st); /* the root is what stays */
	t->rootfs = cd_strdup_printf("%s/rootfs", bundle);
	if (!t->rootfs)
		return cd_fail(err, ENOMEM, "--template", "out of memory");
	if (nftw(t->rootfs, neutralize, 16, FTW_PHYS | FTW_MOUNT) != 0)
		return cd_fail_errno(err, errno, "--template", "%s: clearing setuid bits in %s",
				     t->name, t->rootfs);
	return check_dir(t->name, t->rootfs, &checked, err); /* as --rootfs checks it */
}

static int make_unpack_dir(struct cordon_error *err)
{
	struct stat st;

	unpack_dir = cd_strdup_printf("%s/templates", srv_opts.state_dir);
	if (!unpack_dir)
		return cd_fail(err, ENOMEM, "--template", "out of memory");
	/* what an earlier server left (killed before its end): unpacked again */
	if (lstat(unpack_dir, &st) == 0 && cd_rmtree_path(unpack_dir, &st) < 0)
		return cd_fail_errno(err, errno, "--template", "remove %s", unpack_dir);
	/* 0700: a root server's sandboxes get the root's entries from descriptors its supervisor
	 * opened (never by name), an unprivileged one's run as its user */
	if (mkdir(unpack_dir, 0700) < 0)
		return cd_fail_errno(err, errno, "--template", "mkdir %s", unpack_dir);
	return 0;
}

static int add_host(const char *name, struct cordon_error *err)
{
	if (srv_templates_find(name))
		return 0;
	table[n_table] = (struct srv_template){.name = strdup(name), .source = strdup("host")};
	if (!table[n_table].name || !table[n_table].source)
		return cd_fail(err, ENOMEM, "--template", "out of memory");
	n_table++;
	return 0;
}

int srv_templates_setup(struct cordon_error *err)
{
	int r = 0;

	for (size_t i = 0; i < n_table && r >= 0; i++) {
		if (table[i].rootfs)
			continue;
		if (!unpack_dir)
			r = make_unpack_dir(err);
		if (r >= 0)
			r = unpack(&table[i], err);
	}
	if (r < 0) {
		srv_templates_remove(); /* nothing half-unpacked left */
		return r;
	}
	r = add_host("base", err);
	if (r >= 0)
		r = add_host("code-interpreter-v1", err);
	return r;
}

void srv_templates_remove(void)
{
	struct stat st;

	if (unpack_dir && !srv_opts.keep_workdirs && lstat(unpack_dir, &st) == 0)
		cd_rmtree_path(unpack_dir, &st);
}
