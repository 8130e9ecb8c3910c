/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect.c - protected paths: the rules, the globs, what they match in the workdir when the run
 * starts (the supervisor, through the workdir's descriptor: nothing followed, nothing created),
 * and the sweep after a run with a direct workdir. pid 1's side is in mount.c.
 */
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "protect.h"
#include "rmtree.h"
#include "util.h"

/* What makes a program run on the host, or a secret: README "Protected paths". create: a new
 * one is refused too (a literal path; a trailing "/" makes its placeholder a directory). */
const struct cd_guard_rule cd_guard_defaults[] = {
	/* git runs these: hooks, and config (core.hooksPath, core.fsmonitor, filters, aliases) */
	{ ".git/hooks/", false, true },
	{ ".git/config", false, false },
	{ ".git/info/attributes", false, false },
	{ ".gitmodules", false, false },
	{ ".git/modules/**/hooks", false, false },
	{ ".git/modules/**/config", false, false },
	{ ".husky/", false, true },
	/* agents' and editors' configuration: hooks, MCP servers, tasks they run */
	{ ".claude/", false, true },
	{ ".codex/", false, true },
	{ ".cursor/", false, true },
	{ ".mcp.json", false, true },
	{ ".vscode/tasks.json", false, true },
	{ ".vscode/launch.json", false, true },
	{ ".vscode/settings.json", false, true },
	{ ".envrc", false, true },
	/* CI definitions: they run where the repository is pushed */
	{ ".github/workflows/", false, false },
	{ ".gitlab-ci.yml", false, false },
	{ ".circleci/", false, false },
	{ "Jenkinsfile", false, false },
	/* secrets */
	{ ".env", true, false },
	{ ".env.local", true, false },
	{ NULL, false, false },
};

struct rule {
	const char *glob; /* as given, maybe with a trailing "/" */
	bool deny, create;
};

struct expand {
	struct cd_guard_plan *p;
	const struct rule *rule;
	char **comps; /* the glob's components */
	size_t n_comps;
	size_t visited;
	struct cordon_error *err;
};

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int cd_guard_glob_check(const char *glob, struct cordon_error *err)
{
	size_t len = glob ? strlen(glob) : 0;

	if (len == 0)
		return cd_fail(err, 0, "protect", "empty path");
	if (len >= PATH_MAX)
		return cd_fail(err, ENAMETOOLONG, "protect", "\"%.40s...\": too long", glob);
	if (glob[0] == '/')
		return cd_fail(err, 0, "protect",
			       "\"%s\": a path relative to the workdir, without a leading \"/\"",
			       glob);
	for (const char *c = glob; *c;) {
		size_t n = strcspn(c, "/");

		if (n == 0 && c[n] == '/')
			return cd_fail(err, 0, "protect", "\"%s\": an empty component (\"//\")",
				       glob);
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return cd_fail(err, 0, "protect",
				       "\"%s\": no \".\" or \"..\" component allowed", glob);
		c += n;
		if (*c == '/')
			c++;
	}
	if (strcmp(glob, "**") == 0 || strcmp(glob, "**/") == 0)
		return cd_fail(err, 0, "protect",
			       "\"%s\": the whole workdir (use a read-only --ro-bind instead)", glob);
	return 0;
}

static int split(const char *glob, char ***ret, size_t *ret_n)
{
	_cleanup_free_ char *copy = strdup(glob);
	_cleanup_strv_ char **v = NULL;
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save))
		if (cd_strv_push(&v, t) < 0)
			return -ENOMEM;
	*ret_n = cd_strv_len(v);
	*ret = CD_TAKE_PTR(v);
	return 0;
}

static bool match_comps(char **g, size_t ng, char **p, size_t np)
{
	if (ng == 0)
		return true; /* what the glob names, or below it */
	if (strcmp(g[0], "**") == 0)
		return match_comps(g + 1, ng - 1, p, np) ||
		       (np > 0 && match_comps(g, ng, p + 1, np - 1));
	return np > 0 && fnmatch(g[0], p[0], 0) == 0 && match_comps(g + 1, ng - 1, p + 1, np - 1);
}

bool cd_guard_glob_match(const char *glob, const char *path)
{
	_cleanup_strv_ char **g = NULL, **p = NULL;
	size_t ng, np;

	if (split(glob, &g, &ng) < 0 || split(path, &p, &np) < 0)
		return true; /* out of memory: err on the side of protecting */
	return match_comps(g, ng, p, np);
}

static int add_guard(struct expand *x, const char *rel, bool dir, enum cd_guard_state state)
{
	struct cd_guard_plan *p = x->p;
	struct cd_guard *ng;

	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->g[i].rel, rel) == 0)
			return 0; /* the first rule wins: the user's come before the defaults */
	if (p->n >= CD_GUARD_MAX)
		return cd_fail(x->err, E2BIG, "protect",
			       "\"%s\": more than %d protected paths; protect their directory",
			       x->rule->glob, CD_GUARD_MAX);
	ng = realloc(p->g, (p->n + 1) * sizeof(*ng));
	if (!ng)
		return cd_fail(x->err, ENOMEM, "protect", "out of memory");
	p->g = ng;
	p->g[p->n] = (struct cd_guard){ .rel = strdup(rel), .glob = (char *)x->rule->glob,
					.deny = x->rule->deny, .dir = dir,
					.create = x->rule->create, .state = state };
	if (!p->g[p->n].rel)
		return cd_fail(x->err, ENOMEM, "protect", "out of memory");
	p->n++;
	return 0;
}

static int add_pin(struct cd_guard_plan *p, const char *rel, struct cordon_error *err)
{
	for (char **s = p->pins; s && *s; s++)
		if (strcmp(*s, rel) == 0)
			return 0;
	if (cd_strv_push(&p->pins, rel) < 0)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	return 0;
}

/* One name below dirfd, not followed: 0 and *st, or -errno. */
static int stat_at(int dirfd, const char *name, struct stat *st)
{
	return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int open_dir_at(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int join(char *buf, size_t size, const char *prefix, const char *name)
{
	int n = *prefix ? snprintf(buf, size, "%s/%s", prefix, name) : snprintf(buf, size, "%s", name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* buf += "/" name (or name when buf is empty) */
static int append(char *buf, size_t size, const char *name)
{
	size_t len = strlen(buf);
	int n = snprintf(buf + len, size - len, "%s%s", len ? "/" : "", name);

	return n < 0 || (size_t)n >= size - len ? -ENAMETOOLONG : 0;
}

/* A literal path: found, missing, or behind a symlink; the directories above it (and a file in
 * the way) pinned. */
static int plan_literal(struct expand *x, int workdir_fd, const char *rel, bool want_dir)
{
	_cleanup_close_ int cur = fcntl(workdir_fd, F_DUPFD_CLOEXEC, 3);
	char prefix[PATH_MAX] = "";
	int r;

	for (size_t i = 0; i < x->n_comps; i++) {
		bool last = i + 1 == x->n_comps;
		struct stat st;

		if (cur < 0)
			return cd_fail_errno(x->err, errno, "protect", "%s", rel);
		r = append(prefix, sizeof(prefix), x->comps[i]);
		if (r < 0)
			return cd_fail(x->err, -r, "protect", "%s: too long", rel);
		r = stat_at(cur, x->comps[i], &st);
		if (r == -ENOENT)
			return add_guard(x, rel, want_dir, CD_GUARD_ABSENT);
		if (r < 0)
			return cd_fail_errno(x->err, -r, "protect", "%s", prefix);
		if (S_ISLNK(st.st_mode))
			return add_guard(x, rel, want_dir, CD_GUARD_BLOCKED);
		if (last)
			return add_guard(x, rel, S_ISDIR(st.st_mode), CD_GUARD_EXISTS);
		if (!S_ISDIR(st.st_mode)) {
			/* a file where a directory would be (a worktree's .git): kept in place */
			if (S_ISREG(st.st_mode) && (r = add_pin(x->p, prefix, x->err)) < 0)
				return r;
			return add_guard(x, rel, want_dir, CD_GUARD_ABSENT);
		}
		r = add_pin(x->p, prefix, x->err);
		if (r < 0)
			return r;
		r = open_dir_at(cur, x->comps[i]);
		close(cur);
		cur = r;
	}
	return 0;
}

/* A glob: what it matches now, walked from dirfd (the path so far in prefix) at component i. */
static int expand_at(struct expand *x, int dirfd, const char *prefix, size_t i)
{
	_cleanup_(cd_closedirp) DIR *d = NULL;
	const char *comp;
	struct dirent *e;
	int r, fd;

	if (i == x->n_comps) {
		struct stat st;

		if (!*prefix || fstat(dirfd, &st) < 0)
			return 0;
		return add_guard(x, prefix, S_ISDIR(st.st_mode), CD_GUARD_EXISTS);
	}
	if (++x->visited > 100000)
		return cd_fail(x->err, E2BIG, "protect",
			       "\"%s\": too many directories to search; make it narrower",
			       x->rule->glob);
	comp = x->comps[i];
	if (strcmp(comp, "**") == 0) {
		r = expand_at(x, dirfd, prefix, i + 1);
		if (r < 0)
			return r;
	}
	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		cd_closep(&fd);
		return 0; /* not a directory, or unreadable: nothing matches below */
	}
	while ((e = readdir(d))) {
		char rel[PATH_MAX];
		bool star2 = strcmp(comp, "**") == 0;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (!star2 && fnmatch(comp, e->d_name, 0) != 0)
			continue;
		if (join(rel, sizeof(rel), prefix, e->d_name) < 0 || stat_at(dirfd, e->d_name, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			continue; /* a symlink is not followed: what it names is not the workdir's */
		if (!S_ISDIR(st.st_mode)) {
			if (!star2 && i + 1 == x->n_comps)
				r = add_guard(x, rel, false, CD_GUARD_EXISTS);
			else
				r = 0;
		} else {
			_cleanup_close_ int sub = open_dir_at(dirfd, e->d_name);

			r = sub < 0 ? 0 : expand_at(x, sub, rel, star2 ? i : i + 1);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int plan_rule(struct cd_guard_plan *p, const struct rule *rule, int workdir_fd,
		     struct cordon_error *err)
{
	_cleanup_free_ char *glob = strdup(rule->glob);
	_cleanup_strv_ char **comps = NULL;
	struct expand x = { .p = p, .rule = rule, .err = err };
	size_t len = glob ? strlen(glob) : 0;
	bool want_dir = len && glob[len - 1] == '/';
	int r;

	if (!glob)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	if (want_dir)
		glob[len - 1] = '\0';
	if (split(glob, &comps, &x.n_comps) < 0)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	x.comps = comps;
	if (cd_strv_push(&p->globs, glob) < 0)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	if (!has_wildcard(glob))
		return plan_literal(&x, workdir_fd, glob, want_dir);
	r = expand_at(&x, workdir_fd, "", 0);
	if (r < 0)
		return r;
	/* the directories above each match stay where they are too */
	for (size_t i = 0; i < p->n; i++) {
		char *s = p->g[i].rel;

		for (char *slash = strchr(s, '/'); slash && r >= 0; slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			r = add_pin(p, s, err);
			*slash = '/';
		}
	}
	return r;
}

/* A linked worktree or a submodule checked out here: .git is a file naming the git directory.
 * If that directory is inside the workdir, its hooks and config are guarded as .git's are. */
static int plan_gitdir(struct cd_guard_plan *p, int workdir_fd, const char *workdir_path,
		       struct cordon_error *err)
{
	static const char *const inside[] = { "hooks/", "config", "info/attributes" };
	_cleanup_close_ int fd = openat(workdir_fd, ".git", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char buf[PATH_MAX + 16], *dir, *nl;
	struct stat st;
	ssize_t n;
	size_t wl = strlen(workdir_path);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
		return 0;
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	dir = buf + 8;
	if (dir[0] == '/') {
		if (strncmp(dir, workdir_path, wl) != 0 || dir[wl] != '/')
			return 0; /* outside the workdir: read-only in the sandbox already */
		dir += wl + 1;
	}
	if (cd_guard_glob_check(dir, NULL) < 0 || has_wildcard(dir))
		return 0; /* "..": outside the workdir, or not a path we guard by name */
	for (size_t i = 0; i < CD_ELEMENTSOF(inside); i++) {
		char g[PATH_MAX + 32];
		struct rule rule = { .glob = NULL, .deny = false, .create = i == 0 };
		int r;

		if (snprintf(g, sizeof(g), "%s/%s", dir, inside[i]) >= (int)sizeof(g))
			return 0;
		/* the rule's text must outlive the plan: keep it in the plan's list */
		if (cd_strv_push(&p->globs, g) < 0)
			return cd_fail(err, ENOMEM, "protect", "out of memory");
		rule.glob = p->globs[cd_strv_len(p->globs) - 1];
		r = plan_rule(p, &rule, workdir_fd, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int cd_guard_plan_build(const struct cordon_config *c, int workdir_fd, const char *workdir_path,
			struct cd_guard_plan *ret, struct cordon_error *err)
{
	struct cd_guard_plan p = { 0 };
	int r = 0;

	for (size_t i = 0; r >= 0 && i < c->n_protect; i++) {
		const struct rule rule = { c->protect[i].glob, c->protect[i].deny,
					   !has_wildcard(c->protect[i].glob) };

		r = plan_rule(&p, &rule, workdir_fd, err);
	}
	for (size_t i = 0; r >= 0 && !c->no_default_protect && cd_guard_defaults[i].glob; i++) {
		const struct rule rule = { cd_guard_defaults[i].glob, cd_guard_defaults[i].deny,
					   cd_guard_defaults[i].create };

		r = plan_rule(&p, &rule, workdir_fd, err);
	}
	if (r >= 0 && !c->no_default_protect)
		r = plan_gitdir(&p, workdir_fd, workdir_path, err);
	if (r < 0) {
		cd_guard_plan_done(&p);
		return r;
	}
	for (size_t i = 0; i < p.n; i++)
		if (strcmp(p.g[i].rel, ".git/hooks") == 0)
			p.git_hooks = true;
	*ret = p;
	return 0;
}

void cd_guard_plan_done(struct cd_guard_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->g[i].rel);
	free(p->g);
	cd_strv_free(p->pins);
	cd_strv_free(p->globs);
	*p = (struct cd_guard_plan){ 0 };
}

/* The parent of rel opened beneath the workdir, no symlink followed; *ret_name its last name. */
static int open_parent_beneath(int workdir_fd, const char *rel, const char **ret_name)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	const char *slash = strrchr(rel, '/');
	char parent[PATH_MAX];
	int fd;

	if (!slash) {
		*ret_name = rel;
		return fcntl(workdir_fd, F_DUPFD_CLOEXEC, 3);
	}
	if ((size_t)(slash - rel) >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, rel, (size_t)(slash - rel));
	parent[slash - rel] = '\0';
	*ret_name = slash + 1;
	fd = (int)syscall(SYS_openat2, workdir_fd, parent, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

static int remove_at(int parent, const char *name)
{
	struct stat st;
	_cleanup_close_ int d = -1;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent, name, 0) < 0 ? -errno : 1;
	d = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return -errno;
	(void)cd_rmtree_contents(d);
	return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 1;
}

int cd_guard_sweep(const struct cd_guard_plan *p, int workdir_fd, cd_guard_notice_fn notice,
		   void *data)
{
	int removed = 0, first = 0;

	for (size_t i = 0; i < p->n; i++) {
		const struct cd_guard *g = &p->g[i];
		_cleanup_close_ int parent = -1;
		const char *name;
		int r;

		if (g->state == CD_GUARD_EXISTS || !g->create)
			continue;
		parent = open_parent_beneath(workdir_fd, g->rel, &name);
		if (parent < 0)
			continue; /* its directory is not there (or is a symlink): nothing made */
		r = remove_at(parent, name);
		if (r > 0) {
			removed++;
			if (notice)
				notice(data, g->rel, g->glob);
		} else if (r < 0 && !first) {
			first = r;
		}
	}
	return first && !removed ? first : removed;
}
