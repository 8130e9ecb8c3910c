/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-mountplan.c - the mount plan built from a config (mountplan.c): which option's mount wins
 * over which, what is refused as a conflict, and the order of the mounts. Works in a scratch
 * directory under /tmp. TAP on stdout.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "mount.h"
#include "userns.h"

#include "../lib/tap.h"

static char scratch[PATH_MAX];	 /* resolved */
static char dir_a[PATH_MAX + 8]; /* scratch/a, the workdir */
static struct stat dir_st;       /* of dir_a */
static struct cordon_error err;

static struct cordon_error *fresh_err(void)
{
	memset(&err, 0, sizeof(err));
	return &err;
}

static int setup_scratch(void)
{
	char tmpl[] = "/tmp/cordon-test-mountplan.XXXXXX";

	if (!mkdtemp(tmpl) || !realpath(tmpl, scratch))
		return -1;
	snprintf(dir_a, sizeof(dir_a), "%s/a", scratch);
	return mkdir(dir_a, 0755) < 0 || stat(dir_a, &dir_st) < 0 ? -1 : 0;
}

static char id_user[] = "x";
static char id_home[] = "/home/x";

static struct cd_identity test_identity(void)
{
	return (struct cd_identity){
	    .inside_uid = getuid(),
	    .inside_gid = getgid(),
	    .host_uid = getuid(),
	    .host_gid = getgid(),
	    .user = id_user,
	    .home = id_home,
	};
}

/* Index of the first of the user part: after the managed /var/tmp. */
static size_t user_start(const struct cd_mount_plan *p)
{
	size_t start = p->n;

	for (size_t i = 0; i < p->n; i++)
		if (p->m[i].kind == CD_MNT_TMPFS && !p->m[i].user &&
		    strcmp(p->m[i].dst, "/var/tmp") == 0)
			start = i + 1;
	return start;
}

static void plan_conflict(const char *what, const char *msg, const char *target,
			  void (*configure)(struct cordon_config *c))
{
	struct cordon_config *c = cordon_config_new();
	struct cd_identity id = test_identity();
	struct cd_mount_plan p = {.n = 12345};
	int r;

	configure(c);
	r = cd_mount_plan_build(&c->fs, c->identity.hostname, c->net.mode != CORDON_NET_HOST, dir_a,
				&dir_st, target, &id, NULL, &p, fresh_err());
	is_int(r, -EINVAL, "plan %s: refused", what);
	is_str(err.msg, msg, "plan %s: message", what);
	ok(strcmp(err.step, "mount") == 0 && err.code == 0 && p.n == 12345 && !p.m,
	   "plan %s: step \"mount\", plan untouched", what);
	cordon_config_free(c);
}

static void conf_tmpfs_hide(struct cordon_config *c)
{
	if (cordon_config_add_tmpfs(c, "/opt/x", 0, fresh_err()) < 0 ||
	    cordon_config_add_hide(c, "/opt/x", fresh_err()) < 0)
		diag("configure: %s", err.msg);
}

static void conf_hide_tmpfs(struct cordon_config *c)
{
	if (cordon_config_add_hide(c, "/opt/x", fresh_err()) < 0 ||
	    cordon_config_add_tmpfs(c, "/opt/x/", 0, fresh_err()) < 0)
		diag("configure: %s", err.msg);
}

static void conf_tmpfs_bind(struct cordon_config *c)
{
	if (cordon_config_add_ro_bind(c, dir_a, "/opt/y", fresh_err()) < 0 ||
	    cordon_config_add_tmpfs(c, "//opt/y", 0, fresh_err()) < 0)
		diag("configure: %s", err.msg);
}

static void conf_two_hides(struct cordon_config *c)
{
	if (cordon_config_add_hide(c, "/opt/x", fresh_err()) < 0 ||
	    cordon_config_add_hide(c, "/opt/./x", fresh_err()) < 0)
		diag("configure: %s", err.msg);
}

static void conf_hide_workdir(struct cordon_config *c)
{
	if (cordon_config_add_hide(c, "/w", fresh_err()) < 0)
		diag("configure: %s", err.msg);
}

static void conf_tmpfs_home(struct cordon_config *c)
{
	if (cordon_config_add_tmpfs(c, "/home/x", 32ull << 20, fresh_err()) < 0)
		diag("configure: %s", err.msg);
}

/* a --tmpfs on HOME is HOME itself, of that size and mode 0700, not a second mount there */
static void plan_home_tmpfs(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cd_identity id = test_identity();
	struct cd_mount_plan p = { 0 };
	size_t n = 0;

	conf_tmpfs_home(c);
	is_int(cd_mount_plan_build(&c->fs, c->identity.hostname, c->net.mode != CORDON_NET_HOST,
				   dir_a, &dir_st, "/w", &id, NULL, &p, fresh_err()),
	       0, "plan --tmpfs on HOME: accepted");
	for (size_t i = 0; i < p.n; i++)
		if (strcmp(p.m[i].dst, id.home) == 0) {
			n++;
			ok(p.m[i].kind == CD_MNT_TMPFS && p.m[i].mode == 0700 &&
			   p.m[i].size == 32ull << 20, "... HOME is that tmpfs: 32M, 0700");
		}
	is_int((int)n, 1, "... one mount on HOME");
	cd_mount_plan_done(&p);
	cordon_config_free(c);
}


/* The content of the plan's file on dst, or "" */
static const char *file_on(const struct cd_mount_plan *p, const char *dst)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->m[i].kind == CD_MNT_FILE && strcmp(p->m[i].dst, dst) == 0)
			return p->m[i].content;
	return "";
}

/* cordon_config_set_account(): the account replaces the root's lines for its name and ids (the
 * host's uid 1000 is someone else's here, and a "user" may exist with another id); its home the
 * workdir target: no tmpfs there, nothing seeded */
static void plan_given_account(void)
{
	static char user[] = "user", home[] = "/w";
	struct cordon_config *c = cordon_config_new();
	struct cd_identity id = test_identity();
	struct cd_mount_plan p = { 0 };
	char root[PATH_MAX + 16], path[PATH_MAX + 32];
	FILE *f;
	bool tmpfs = false;

	snprintf(root, sizeof(root), "%s/root", scratch);
	snprintf(path, sizeof(path), "%s/etc", root);
	if (mkdir(root, 0755) < 0 || mkdir(path, 0755) < 0) {
		ok(false, "plan with a given account: mkdir %s: %s", path, strerror(errno));
		cordon_config_free(c);
		return;
	}
	snprintf(path, sizeof(path), "%s/etc/passwd", root);
	f = fopen(path, "we");
	fputs("root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\n"
	      "user:x:1234:1234::/home/user:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/etc/group", root);
	f = fopen(path, "we");
	fputs("root:x:0:\nusers:x:100:ann", f); /* nothing to drop, no last newline */
	fclose(f);
	c->fs.rootfs = strdup(root);
	id.inside_uid = id.inside_gid = 1000;
	id.user = user;
	id.home = home;
	id.account = id.home_is_workdir = true;
	is_int(cd_mount_plan_build(&c->fs, c->identity.hostname, true, dir_a, &dir_st, "/w", &id,
				   NULL, &p, fresh_err()),
	       0, "plan with a given account: accepted");
	is_str(file_on(&p, "/etc/passwd"),
	       "root:x:0:0::/root:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\n"
	       "user:x:1000:1000::/w:/bin/sh\n",
	       "... /etc/passwd: the root's lines for uid 1000 and for \"user\" replaced");
	is_str(file_on(&p, "/etc/group"), "root:x:0:\nusers:x:100:ann\nuser:x:1000:\n",
	       "... /etc/group: the account's line added, the last line's newline too");
	for (size_t i = 0; i < p.n; i++)
		tmpfs |= p.m[i].kind == CD_MNT_TMPFS && strcmp(p.m[i].dst, "/w") == 0;
	ok(!tmpfs && !*file_on(&p, "/w/.gitconfig"), "... no tmpfs nor .gitconfig on the workdir");
	cd_mount_plan_done(&p);
	cordon_config_free(c);
	snprintf(path, sizeof(path), "%s/etc/passwd", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/etc/group", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/etc", root);
	rmdir(path);
	rmdir(root);
}

static void conf_nothing(struct cordon_config *c)
{
	(void)c;
}

static void test_plan_conflicts(void)
{
	plan_conflict("--tmpfs /opt/x --hide /opt/x", "a hidden path and a tmpfs mount both mount on \"/opt/x\"",
		      "/w", conf_tmpfs_hide);
	plan_conflict("--hide /opt/x --tmpfs /opt/x/", "a hidden path and a tmpfs mount both mount on \"/opt/x\"",
		      "/w", conf_hide_tmpfs);
	plan_conflict("--ro-bind a /opt/y --tmpfs //opt/y",
		      "a tmpfs mount and a read-only bind both mount on \"/opt/y\"", "/w", conf_tmpfs_bind);
	plan_conflict("--hide /opt/x --hide /opt/./x", "a hidden path and a hidden path both mount on \"/opt/x\"",
		      "/w", conf_two_hides);
	plan_conflict("--hide /w with the workdir on /w",
		      "the workdir target and a hidden path both mount on \"/w\"", "/w", conf_hide_workdir);
	plan_home_tmpfs();
	plan_conflict("workdir on HOME", "HOME and the workdir target both mount on \"/home/x\"",
		      "/home/x", conf_nothing);
}

static void test_plan_order(void)
{
	static const struct {
		const char *dst;
		enum cd_mnt_kind kind;
	} want[] = {
	    {"/q", CD_MNT_HIDE},
	    {"/home/x", CD_MNT_TMPFS},
	    {"/opt/a", CD_MNT_TMPFS},
	    {"/w/x/y", CD_MNT_WORKDIR},
	    {"/opt/a/b", CD_MNT_BIND},
	    {"/opt/a/b/c", CD_MNT_HIDE},
	    {"/opt/a/b/c/d/e", CD_MNT_TMPFS},
	};
	struct cordon_config *c = cordon_config_new();
	struct cd_identity id = test_identity();
	struct cd_mount_plan p = {0};
	bool depth_ok = true, parents_ok = true, root_ok = true;
	size_t start, all, n_proc = 0;
	int r;

	/* given children first, so that only the sort can put parents first */
	r = cordon_config_add_hide(c, "/opt/a/b/c", fresh_err());
	if (r >= 0)
		r = cordon_config_add_hide(c, "/q", fresh_err());
	if (r >= 0)
		r = cordon_config_add_tmpfs(c, "/opt/a/b/c/d/e", 0, fresh_err());
	if (r >= 0)
		r = cordon_config_add_tmpfs(c, "/opt/a", 1 << 20, fresh_err());
	if (r >= 0)
		r = cordon_config_add_ro_bind(c, dir_a, "/opt/a/b", fresh_err());
	if (!is_int(r, 0, "plan: configured"))
		diag("configure: %s", err.msg);

	r = cd_mount_plan_build(&c->fs, c->identity.hostname, c->net.mode != CORDON_NET_HOST, dir_a,
				&dir_st, "/w/x/y", &id, NULL, &p, fresh_err());
	if (!is_int(r, 0, "plan: built"))
		diag("plan: %s", err.msg);
	start = user_start(&p);
	/* cordon's own files (/etc/hosts, HOME's .gitconfig) moved past the end: the options'
	 * mounts, in their order, are what is checked (all is given back to be freed) */
	all = p.n;
	for (size_t i = start, k = start; i < all; i++)
		if (p.m[i].kind != CD_MNT_FILE) {
			struct cd_mnt t = p.m[k];

			p.m[k++] = p.m[i];
			p.m[i] = t;
			p.n = k;
		}
	if (!is_uint(p.n - start, CD_ELEMENTSOF(want), "plan: HOME, the workdir and 5 options")) {
		p.n = all;
		cd_mount_plan_done(&p);
		cordon_config_free(c);
		return;
	}
	for (size_t i = start + 1; i < p.n; i++)
		if (cd_path_depth(p.m[i - 1].dst) > cd_path_depth(p.m[i].dst))
			depth_ok = false;
	ok(depth_ok, "plan: depth never decreases over the user part");
	for (size_t i = start; i < p.n; i++)
		for (size_t j = i + 1; j < p.n; j++)
			if (cd_path_startswith(p.m[i].dst, p.m[j].dst))
				parents_ok = false;
	ok(parents_ok, "plan: no mount comes after one of its children");
	for (size_t i = 0; i < CD_ELEMENTSOF(want); i++) {
		const struct cd_mnt *m = &p.m[start + i];

		is_str(m->dst, want[i].dst, "plan: user mount %zu is on %s", i, want[i].dst);
		is_str(cd_mnt_kind_name(m->kind), cd_mnt_kind_name(want[i].kind),
		       "plan: user mount %zu is a %s", i, cd_mnt_kind_name(want[i].kind));
	}
	/* the details the sort must carry along */
	ok(p.m[start + 2].size == 1 << 20 && p.m[start + 2].user && p.m[start + 2].mode == 0755,
	   "plan: --tmpfs /opt/a keeps its size, mode and user flag");
	ok(p.m[start + 1].size == 1ull << 30 && !p.m[start + 1].user &&
	       p.m[start + 1].mode == 0700,
	   "plan: HOME is a private 1G tmpfs");
	ok(p.m[start + 4].ro && p.m[start + 4].is_dir && p.m[start + 4].user &&
	       p.m[start + 4].src && strcmp(p.m[start + 4].src, dir_a) == 0,
	   "plan: --ro-bind is read-only, a directory, from its source");
	is_str(p.m[start + 3].src, dir_a, "plan: workdir source");
	is_str(p.workdir_target, "/w/x/y", "plan: workdir_target");
	ok(p.workdir_target == p.m[start + 3].dst, "plan: workdir_target points into the plan");
	ok(p.uid == getuid() && p.gid == getgid() && p.tmp_size == 256ull << 20 && p.fresh_sysfs,
	   "plan: ids, /tmp size, fresh sysfs");

	/* the root part: the host's top level, then what cordon manages */
	for (size_t i = 0; i < start; i++) {
		const struct cd_mnt *m = &p.m[i];

		if (m->kind == CD_MNT_PROC)
			n_proc++;
		if (m->user || !cd_path_is_normalized_absolute(m->dst))
			root_ok = false;
		if (strcmp(m->dst, "/home") == 0 || strcmp(m->dst, "/root") == 0)
			root_ok = root_ok && m->kind == CD_MNT_DIR;
		if (strcmp(m->dst, "/etc") == 0)
			root_ok = root_ok && m->kind == CD_MNT_BIND && m->ro && m->is_dir;
	}
	is_uint(n_proc, 1, "plan: one /proc");
	ok(root_ok, "plan: /home and /root hidden, /etc bound read-only, nothing user-made");
	p.n = all;
	cd_mount_plan_done(&p);
	ok(p.m == NULL && p.n == 0, "cd_mount_plan_done resets the plan");

	/* --net host: the host's sysfs */
	cordon_config_set_net(c, CORDON_NET_HOST, fresh_err());
	r = cd_mount_plan_build(&c->fs, c->identity.hostname, c->net.mode != CORDON_NET_HOST, dir_a,
				&dir_st, "/w/x/y", &id, NULL, &p, fresh_err());
	ok(r == 0 && !p.fresh_sysfs, "plan with --net host: no fresh sysfs");
	cd_mount_plan_done(&p);
	cordon_config_free(c);
}

/* The resolv.conf of the plan built with own_net and, optionally, a --ro-bind over it: its
 * content, or NULL when the plan has none of cordon's. */
static char *planned_resolv(bool own_net, bool bound)
{
	struct cordon_config *c = cordon_config_new();
	struct cd_identity id = test_identity();
	struct cd_mount_plan p = { 0 };
	char *content = NULL;

	if (bound && cordon_config_add_ro_bind(c, dir_a, "/etc/resolv.conf", fresh_err()) < 0)
		diag("configure: %s", err.msg);
	if (cd_mount_plan_build(&c->fs, NULL, own_net, dir_a, &dir_st, "/w", &id, NULL, &p,
				fresh_err()) < 0)
		diag("plan: %s", err.msg);
	for (size_t i = 0; i < p.n; i++)
		if (p.m[i].kind == CD_MNT_FILE && strcmp(p.m[i].dst, "/etc/resolv.conf") == 0)
			content = strdup(p.m[i].content);
	cd_mount_plan_done(&p);
	cordon_config_free(c);
	return content;
}

/* A root (scratch/root) whose etc/resolv.conf is a symlink to target: where cordon's file goes
 * ("ro" for a bind over the link's target, "seed" for one written in the sandbox's tmpfs), or
 * "none". */
static const char *resolv_through_link(const char *target, char *buf, size_t size)
{
	struct cordon_config *c = cordon_config_new();
	struct cd_identity id = test_identity();
	struct cd_mount_plan p = { 0 };
	char root[PATH_MAX + 16], etc[PATH_MAX + 32], conf[PATH_MAX + 48];

	snprintf(buf, size, "none");
	snprintf(root, sizeof(root), "%s/root", scratch);
	snprintf(etc, sizeof(etc), "%s/etc", root);
	snprintf(conf, sizeof(conf), "%s/resolv.conf", etc);
	if ((mkdir(root, 0755) < 0 && errno != EEXIST) || (mkdir(etc, 0755) < 0 && errno != EEXIST) ||
	    (unlink(conf) < 0 && errno != ENOENT) || symlink(target, conf) < 0 ||
	    cordon_config_set_rootfs(c, root, fresh_err()) < 0)
		snprintf(buf, size, "setup failed");
	else if (cd_mount_plan_build(&c->fs, NULL, true, dir_a, &dir_st, "/w", &id, NULL, &p,
				     fresh_err()) < 0)
		snprintf(buf, size, "plan: %s", err.msg);
	for (size_t i = 0; i < p.n; i++)
		if (p.m[i].kind == CD_MNT_FILE && p.m[i].content &&
		    strstr(p.m[i].content, "nameserver 127.0.0.1"))
			snprintf(buf, size, "%s %s", p.m[i].ro ? "ro" : "seed", p.m[i].dst);
	cd_mount_plan_done(&p);
	cordon_config_free(c);
	unlink(conf);
	rmdir(etc);
	rmdir(root);
	return buf;
}

static void plan_resolv_link(void)
{
	char b[PATH_MAX];

	is_str(resolv_through_link("../run/systemd/resolve/stub-resolv.conf", b, sizeof(b)),
	       "seed /run/systemd/resolve/stub-resolv.conf",
	       "resolv.conf a symlink into /run (relative): written there, in the sandbox's /run");
	is_str(resolv_through_link("/run/resolvconf/resolv.conf", b, sizeof(b)),
	       "seed /run/resolvconf/resolv.conf", "... absolute");
	is_str(resolv_through_link("../run/../etc/passwd", b, sizeof(b)), "none",
	       "... one that climbs back out of /run: nothing of cordon's");
	is_str(resolv_through_link("/etc/resolv.conf.real", b, sizeof(b)), "none",
	       "... one elsewhere than /run: nothing");
	is_str(resolv_through_link("../run/", b, sizeof(b)), "none", "... /run itself: nothing");
}

/* The sandbox's own network: its resolv.conf names cordon's resolver (resolver.h), over the
 * root's, and nothing else; the host's network, or a --ro-bind of the user's: the root's. */
static void plan_resolv_conf(void)
{
	struct stat st;
	char *s;

	if (lstat("/etc/resolv.conf", &st) < 0 || !S_ISREG(st.st_mode)) {
		skip("this host's /etc/resolv.conf is no regular file: left as it is", "resolv.conf");
		skip("this host's /etc/resolv.conf is no regular file", "resolv.conf: host net");
		skip("this host's /etc/resolv.conf is no regular file", "resolv.conf: --ro-bind");
		return;
	}
	s = planned_resolv(true, false);
	ok(s && strstr(s, "\nnameserver 127.0.0.1\n") && !strstr(s, "search") &&
	   strstr(s, "\nnameserver ") == strstr(s, "\nnameserver 127.0.0.1\n") &&
	   !strstr(strstr(s, "\nnameserver ") + 1, "\nnameserver "),
	   "own network: /etc/resolv.conf names cordon's resolver, no search domain");
	free(s);
	s = planned_resolv(false, false);
	ok(!s, "--net host: the host's /etc/resolv.conf");
	free(s);
	s = planned_resolv(true, true);
	ok(!s, "--ro-bind over /etc/resolv.conf: the user's");
	free(s);
}

int main(void)
{
	if (setup_scratch() < 0) {
		printf("Bail out! cannot create a scratch directory in /tmp: %s\n",
		       strerror(errno));
		return 1;
	}
	test_plan_conflicts();
	test_plan_order();
	plan_given_account();
	plan_resolv_conf();
	plan_resolv_link();
	rmdir(dir_a);
	rmdir(scratch);
	return done_testing();
}
