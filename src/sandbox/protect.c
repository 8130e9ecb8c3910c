/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect.c - protected paths: the rules, the globs, what they match in the workdir when the run
 * starts (the supervisor, through the workdir's descriptor: nothing followed, nothing created),
 * and the sweep after a run with a direct workdir. pid 1's side is in mount.c; the default set
 * is data (protected-paths/default.list, read by protect_list.c); what git runs from the workdir
 * is protect_git.c's.
 */
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "protect.h"
#include "protect_git.h"
#include "rmtree.h"
#include "util.h"

struct rule {
	const char *glob; /* as given, maybe with a trailing "/" */
	bool deny, create, no_placeholder;
};

/* A directory's names, sorted: the workdir's top is read once for every rule of a plan (and once
 * for the sweep) rather than looked up name by name, most of which are not there. */
struct names {
	char **v;
	size_t n;
	bool read; /* false: not read yet, or unreadable (then every name is looked up) */
};

struct expand {
	struct cd_protect_plan *p;
	const struct rule *rule;
	char **comps; /* the glob's components */
	size_t n_comps;
	size_t visited;
	struct names *top; /* the workdir's top directory, read once a plan (or NULL) */
	struct cordon_error *err;
};

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int list_names(int dirfd, char ***ret);

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read the names of dirfd once (an unreadable directory: read stays false), sorted */
static int names_read(struct names *nm, int dirfd)
{
	if (nm->read || nm->v)
		return 0;
	if (list_names(dirfd, &nm->v) < 0)
		return -ENOMEM;
	if (!nm->v)
		return 0;
	nm->n = cd_strv_len(nm->v);
	qsort(nm->v, nm->n, sizeof(*nm->v), cmp_name);
	nm->read = true;
	return 0;
}

/* Is the first component of rel (up to a "/") not among the names read? */
static bool names_lack(const struct names *nm, const char *rel)
{
	char first[256];
	const char *key = first;
	size_t len = strcspn(rel, "/");

	if (!nm || !nm->read || len >= sizeof(first))
		return false;
	memcpy(first, rel, len);
	first[len] = '\0';
	return !bsearch(&key, nm->v, nm->n, sizeof(*nm->v), cmp_name);
}

static void names_done(struct names *nm)
{
	cd_strv_free(nm->v);
	*nm = (struct names){ 0 };
}

static int add_path(struct expand *x, const char *rel, bool dir, enum cd_protect_state state)
{
	struct cd_protect_plan *p = x->p;
	struct cd_protect_path *ng;

	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->paths[i].rel, rel) == 0)
			return 0; /* the first rule wins: the user's come before the defaults */
	if (p->n >= CD_PROTECT_MAX)
		return cd_fail(x->err, E2BIG, "protect",
			       "\"%s\": more than %d protected paths; protect their directory",
			       x->rule->glob, CD_PROTECT_MAX);
	ng = realloc(p->paths, (p->n + 1) * sizeof(*ng));
	if (!ng)
		return cd_fail(x->err, ENOMEM, "protect", "out of memory");
	p->paths = ng;
	p->paths[p->n] = (struct cd_protect_path){
		.rel = strdup(rel), .glob = (char *)x->rule->glob, .deny = x->rule->deny,
		.dir = dir, .create = x->rule->create,
		.placeholder = x->rule->create && !x->rule->no_placeholder, .state = state
	};
	if (!p->paths[p->n].rel)
		return cd_fail(x->err, ENOMEM, "protect", "out of memory");
	p->n++;
	return 0;
}

static int add_pin(struct cd_protect_plan *p, const char *rel, struct cordon_error *err)
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

/* A literal path protected, and pins for what stands above it (prefix_len bytes of rel: the
 * existing directories, and a file in the way) once there is something to protect. */
static int commit_literal(struct expand *x, const char *rel, size_t prefix_len, bool dir,
			  enum cd_protect_state state, const struct stat *link, bool under_file)
{
	char buf[PATH_MAX];
	int r;

	if (state != CD_PROTECT_EXISTS && !x->rule->create)
		return 0; /* not there, and only protected where it is */
	for (size_t i = 1; i <= prefix_len; i++) {
		if (i != prefix_len && rel[i] != '/')
			continue;
		memcpy(buf, rel, i);
		buf[i] = '\0';
		r = add_pin(x->p, buf, x->err);
		if (r < 0)
			return r;
	}
	r = add_path(x, rel, dir, state);
	if (r >= 0 && strcmp(x->p->paths[x->p->n - 1].rel, rel) == 0) {
		struct cd_protect_path *g = &x->p->paths[x->p->n - 1];

		g->exist_len = prefix_len;
		/* a file stands where a directory of the path would be (a linked worktree's .git):
		 * pinned, it cannot be replaced, so nothing can be made below it; a placeholder
		 * directory would hide the file in a --cow view (and git with it) */
		if (under_file)
			g->placeholder = false;
		if (link) {
			g->link_dev = link->st_dev;
			g->link_ino = link->st_ino;
		}
	}
	return r;
}

/* A literal path: found, missing, or behind a symlink. */
static int plan_literal(struct expand *x, int workdir_fd, const char *rel, bool want_dir)
{
	_cleanup_close_ int below = -1; /* the directory reached below the workdir, ours */
	int cur = workdir_fd;
	size_t pinned = 0; /* rel[0..pinned): the directories found so far */

	for (size_t i = 0, off = 0; i < x->n_comps; off += strlen(x->comps[i]) + 1, i++) {
		bool last = i + 1 == x->n_comps;
		struct stat st;
		int r;

		if (cur < 0 && errno == EACCES) /* a directory closed to us (mode 000): swept */
			return commit_literal(x, rel, pinned, want_dir, CD_PROTECT_BLOCKED, NULL,
					      false);
		if (cur < 0)
			return cd_fail_errno(x->err, errno, "protect", "%s", rel);
		r = i == 0 && names_lack(x->top, rel) ? -ENOENT : stat_at(cur, x->comps[i], &st);
		if (r == -ENOENT)
			return commit_literal(x, rel, pinned, want_dir, CD_PROTECT_ABSENT, NULL,
					      false);
		if (r == -EACCES)
			return commit_literal(x, rel, pinned, want_dir, CD_PROTECT_BLOCKED, NULL,
					      false);
		if (r < 0)
			return cd_fail_errno(x->err, -r, "protect", "%s", rel);
		if (S_ISLNK(st.st_mode))
			return commit_literal(x, rel, pinned, want_dir, CD_PROTECT_BLOCKED, &st,
					      false);
		if (last)
			return commit_literal(x, rel, pinned, S_ISDIR(st.st_mode),
					      CD_PROTECT_EXISTS, NULL, false);
		/* a file where a directory would be (a worktree's .git) is kept in place too */
		if (!S_ISDIR(st.st_mode))
			return commit_literal(x, rel, S_ISREG(st.st_mode) ? off + strlen(x->comps[i])
									  : pinned,
					      want_dir, CD_PROTECT_ABSENT, NULL,
					      S_ISREG(st.st_mode));
		pinned = off + strlen(x->comps[i]);
		r = open_dir_at(cur, x->comps[i]);
		cd_closep(&below); /* keeps errno, which the loop's top reads */
		below = cur = r;
	}
	return 0;
}

/* A symlink matching a pattern that drops new matches: there from the start, so the sweep
 * leaves it (BLOCKED: nothing is mounted on it) */
static int add_link(struct expand *x, const char *rel, const struct stat *st)
{
	int r = add_path(x, rel, false, CD_PROTECT_BLOCKED);

	if (r >= 0 && strcmp(x->p->paths[x->p->n - 1].rel, rel) == 0) {
		x->p->paths[x->p->n - 1].link_dev = st->st_dev;
		x->p->paths[x->p->n - 1].link_ino = st->st_ino;
	}
	return r;
}

static int expand_at(struct expand *x, int dirfd, const char *prefix, size_t i);

/* The names in directory dirfd, ".." and "." left out. Its own open file: a dup() would share
 * (and move) the offset of dirfd, which an earlier glob or "**" read from already. NULL when it
 * is no directory or unreadable: nothing matches below. */
static int list_names(int dirfd, char ***ret)
{
	_cleanup_close_ int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_(cd_closedirp) DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	_cleanup_strv_ char **v = NULL;
	struct dirent *e;

	*ret = NULL;
	if (!d)
		return 0;
	fd = -1; /* the DIR has it */
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    cd_strv_push(&v, e->d_name) < 0)
			return -ENOMEM;
	if (!v)
		v = calloc(1, sizeof(*v)); /* empty, but read */
	*ret = CD_TAKE_PTR(v);
	return *ret ? 0 : -ENOMEM;
}

/* One name of dirfd against component i of the glob */
static int expand_name(struct expand *x, int dirfd, const char *prefix, size_t i, const char *name)
{
	bool star2 = strcmp(x->comps[i], "**") == 0;
	char rel[PATH_MAX];
	struct stat st;

	if (!star2 && fnmatch(x->comps[i], name, 0) != 0)
		return 0;
	if (join(rel, sizeof(rel), prefix, name) < 0 || stat_at(dirfd, name, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		/* not followed: what it names is not the workdir's. A pattern that drops its new
		 * matches keeps this one (the user's) unless it is replaced */
		return x->rule->create && !star2 && i + 1 == x->n_comps ? add_link(x, rel, &st) : 0;
	if (!S_ISDIR(st.st_mode))
		return !star2 && i + 1 == x->n_comps ? add_path(x, rel, false, CD_PROTECT_EXISTS)
						     : 0;
	{
		_cleanup_close_ int sub = open_dir_at(dirfd, name);

		return sub < 0 ? 0 : expand_at(x, sub, rel, star2 ? i : i + 1);
	}
}

/* A glob: what it matches now, walked from dirfd (the path so far in prefix) at component i. A
 * literal component is looked up, not searched for; the workdir's top is read once a plan. */
static int expand_at(struct expand *x, int dirfd, const char *prefix, size_t i)
{
	_cleanup_strv_ char **own = NULL;
	char **names;
	const char *comp;
	int r;

	if (i == x->n_comps) {
		struct stat st;

		if (!*prefix || fstat(dirfd, &st) < 0)
			return 0;
		return add_path(x, prefix, S_ISDIR(st.st_mode), CD_PROTECT_EXISTS);
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
	} else if (!has_wildcard(comp) && !strchr(comp, '\\')) {
		return expand_name(x, dirfd, prefix, i, comp);
	}
	if (!*prefix && x->top && x->top->read) {
		names = x->top->v;
	} else {
		if (list_names(dirfd, &own) < 0)
			return cd_fail(x->err, ENOMEM, "protect", "out of memory");
		names = own;
	}
	for (char **n = names; n && *n; n++) {
		r = expand_name(x, dirfd, prefix, i, *n);
		if (r < 0)
			return r;
	}
	return 0;
}

static int plan_rule(struct cd_protect_plan *p, const struct rule *rule, int workdir_fd,
		     struct names *top, struct cordon_error *err)
{
	_cleanup_free_ char *glob = strdup(rule->glob);
	_cleanup_strv_ char **comps = NULL;
	struct expand x = { .p = p, .rule = rule, .top = top, .err = err };
	size_t len = glob ? strlen(glob) : 0;
	bool want_dir = len && glob[len - 1] == '/';
	size_t first;
	int r;

	if (!glob)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	if (want_dir)
		glob[len - 1] = '\0';
	if (cd_protect_glob_split(glob, &comps, &x.n_comps) < 0)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	x.comps = comps;
	if (cd_strv_push(&p->globs, glob) < 0)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	if (!has_wildcard(glob))
		return plan_literal(&x, workdir_fd, glob, want_dir);
	/* the list allows this for one name at the top only (cd_protect_list_parse) */
	if (rule->create && x.n_comps == 1 && cd_strv_push(&p->new_globs, glob) < 0)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	first = p->n;
	r = expand_at(&x, workdir_fd, "", 0);
	if (r < 0)
		return r;
	/* the directories above each of its matches stay where they are too */
	for (size_t i = first; i < p->n; i++) {
		char *s = p->paths[i].rel;

		for (char *slash = strchr(s, '/'); slash && r >= 0; slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			r = add_pin(p, s, err);
			*slash = '/';
		}
	}
	return r;
}

/* base/rel ("" base: the workdir) as a normalized path relative to the workdir, ".." taken
 * lexically: -EXDEV when it leaves the workdir. */
int cd_protect_join(const char *base, const char *rel, char *out, size_t size)
{
	char buf[2 * PATH_MAX + 2];
	size_t len = 0;
	char *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s/%s", base, rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (strcmp(t, ".") == 0)
			continue;
		if (strcmp(t, "..") == 0) {
			char *slash;

			if (len == 0)
				return -EXDEV;
			slash = strrchr(out, '/');
			len = slash ? (size_t)(slash - out) : 0;
			out[len] = '\0';
			continue;
		}
		if (len + strlen(t) + 2 > size)
			return -ENAMETOOLONG;
		len += (size_t)sprintf(out + len, "%s%s", len ? "/" : "", t);
	}
	return len ? 0 : -EXDEV;
}

bool cd_protect_covered(const struct cd_protect_plan *p, const char *rel)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct cd_protect_path *g = &p->paths[i];
		size_t n = strlen(g->rel);

		if (g->state == CD_PROTECT_EXISTS && g->dir && strncmp(rel, g->rel, n) == 0 &&
		    rel[n] == '/')
			return true;
	}
	return false;
}

int cd_protect_literal(struct cd_protect_plan *p, int workdir_fd, const char *g, bool create,
		       bool placeholder, struct cordon_error *err)
{
	struct rule rule = { .glob = NULL, .deny = false, .create = create,
			     .no_placeholder = !placeholder };

	size_t len = strlen(g) - (g[0] && g[strlen(g) - 1] == '/');

	if (cd_protect_glob_check(g, NULL) < 0 || has_wildcard(g) || cd_protect_covered(p, g))
		return 0;
	for (size_t i = 0; i < p->n; i++)
		if (strlen(p->paths[i].rel) == len && strncmp(p->paths[i].rel, g, len) == 0)
			return 0; /* planned already (the first rule wins) */
	/* the rule's text must outlive the plan: keep it in the plan's list */
	if (cd_strv_push(&p->globs, g) < 0)
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	rule.glob = p->globs[cd_strv_len(p->globs) - 1];
	return plan_rule(p, &rule, workdir_fd, NULL, err);
}

/* O_NONBLOCK: a FIFO a run left there must not hold the next run's supervisor in open() */
int cd_protect_read(int workdir_fd, const char *rel, size_t max, char **ret, size_t *ret_len)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, workdir_fd, rel, &how, sizeof(how));
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0, size;
	ssize_t n = 1;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	if ((uint64_t)st.st_size > max)
		return -EFBIG;
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < size && (n = read(fd, buf + got, size - got)) > 0)
		got += (size_t)n;
	if (n < 0)
		return -errno;
	buf[got] = '\0';
	*ret_len = got;
	*ret = CD_TAKE_PTR(buf);
	return 0;
}

int cd_protect_plan_build(const struct cd_protect_opts *o, int workdir_fd, const char *workdir_path,
			  struct cd_protect_plan *ret, struct cordon_error *err)
{
	return cd_protect_plan_build_cached(o, workdir_fd, workdir_path, NULL, ret, err);
}

int cd_protect_plan_build_cached(const struct cd_protect_opts *o, int workdir_fd,
				 const char *workdir_path, struct cd_idxcache *cache,
				 struct cd_protect_plan *ret, struct cordon_error *err)
{
	struct cd_protect_plan p = { .idxcache = cache };
	struct names top = { 0 };
	int r = names_read(&top, workdir_fd);

	for (size_t i = 0; r >= 0 && i < o->n; i++) {
		const struct rule rule = { o->v[i].glob, o->v[i].deny,
					   !has_wildcard(o->v[i].glob), false };

		r = plan_rule(&p, &rule, workdir_fd, &top, err);
	}
	if (r >= 0 && !o->no_defaults)
		r = cd_protect_list_load(NULL, &p.defaults, err);
	for (size_t i = 0; r >= 0 && i < p.defaults.n; i++) {
		const struct cd_protect_rule *d = &p.defaults.r[i];
		const struct rule rule = { d->glob, d->deny, d->create, d->no_placeholder };

		r = plan_rule(&p, &rule, workdir_fd, &top, err);
	}
	if (r >= 0 && !o->no_defaults)
		r = cd_protect_git_plan(&p, workdir_fd, workdir_path, err);
	names_done(&top);
	if (r < 0) {
		cd_protect_plan_done(&p);
		return r == -ENOMEM && !err->msg[0] ? cd_fail(err, ENOMEM, "protect", "out of memory")
						    : r;
	}
	for (size_t i = 0; i < p.n; i++)
		if (strcmp(p.paths[i].rel, ".git/hooks") == 0)
			p.git_hooks = true;
	*ret = p;
	return 0;
}

void cd_protect_plan_done(struct cd_protect_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->paths[i].rel);
	free(p->paths);
	cd_strv_free(p->pins);
	cd_strv_free(p->globs);
	cd_strv_free(p->new_globs);
	cd_protect_list_done(&p->defaults);
	cd_protect_repos_free(p);
	*p = (struct cd_protect_plan){ 0 };
}

/* rel[0..len), len > 0, opened beneath the workdir, no symlink followed (directories that were
 * there at the start: pinned during the run, so still the same). */
static int open_prefix(int workdir_fd, const char *rel, size_t len)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV };
	char prefix[PATH_MAX];
	int fd;

	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	memcpy(prefix, rel, len);
	prefix[len] = '\0';
	fd = (int)syscall(SYS_openat2, workdir_fd, prefix, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* Is everything in directory d owned by owner (what the sandbox could remove itself)? Not
 * followed, not below another filesystem; false past a depth or on any doubt. */
static bool all_owned(int d, uid_t owner, unsigned depth)
{
	_cleanup_close_ int fd = openat(d, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_(cd_closedirp) DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	struct stat st;

	if (!dir || depth > 256)
		return false;
	fd = -1; /* the DIR has it */
	while ((e = readdir(dir))) {
		_cleanup_close_ int sub = -1;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid != owner)
			return false;
		if (!S_ISDIR(st.st_mode))
			continue;
		sub = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || !all_owned(sub, owner, depth + 1))
			return false;
	}
	return true;
}

/* A tree holding what the sandbox could not have removed (as root, a file of an owner not
 * mapped inside, moved in with its directory) is moved aside rather than removed: out of the
 * protected path, nothing lost. */
int cd_protect_move_aside(int parent, const char *name, char *aside, size_t size)
{
	for (unsigned i = 0; i < 100; i++) {
		snprintf(aside, size, "%s.cordon-moved-aside%s%.0u", name, i ? "." : "", i);
		if (renameat2(parent, name, parent, aside, RENAME_NOREPLACE) == 0)
			return 2;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* name in parent, whatever it is (a directory with all it holds), never followed: 1 removed,
 * 2 moved aside (to aside) */
static int remove_at(int parent, const char *name, uid_t owner, char *aside, size_t size)
{
	struct stat st;
	_cleanup_close_ int d = -1;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (st.st_uid != owner)
		return cd_protect_move_aside(parent, name, aside, size);
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent, name, 0) < 0 ? -errno : 1;
	d = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0)
		return -errno;
	if (!all_owned(d, owner, 0))
		return cd_protect_move_aside(parent, name, aside, size);
	(void)cd_rmtree_contents(d);
	return unlinkat(parent, name, AT_REMOVEDIR) < 0 ? -errno : 1;
}

/* aside, a name in the directory rel[0..len) (len 0: the top), as a path of the workdir */
static void prefix_aside(char *aside, size_t size, const char *rel, size_t len)
{
	char name[300];

	snprintf(name, sizeof(name), "%s", aside);
	snprintf(aside, size, "%.*s%s", (int)len, rel, name);
}

/* What a run made at one protected path: walked from the directories that were there, one name
 * at a time; a directory the run made is entered (a new repository's .git stays), anything
 * else standing in the path (a symlink, a file) goes, as does whatever is at the path itself.
 * The user's own symlink that stood there from the start stays. */
static int sweep_one(const struct cd_protect_path *g, int workdir_fd, uid_t owner, char *aside,
		     size_t size)
{
	/* the directory reached, ours once below the workdir (which is not ours to close) */
	_cleanup_close_ int below = g->exist_len ? open_prefix(workdir_fd, g->rel, g->exist_len)
						 : -1;
	int cur = g->exist_len ? below : workdir_fd;
	const char *p = g->rel + g->exist_len + (g->exist_len > 0);

	if (cur < 0)
		return 0; /* not there any more: nothing made below it */
	while (*p) {
		size_t n = strcspn(p, "/");
		char name[256];
		struct stat st;
		int next;

		if (n >= sizeof(name))
			return -ENAMETOOLONG;
		memcpy(name, p, n);
		name[n] = '\0';
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (S_ISLNK(st.st_mode) && st.st_dev == g->link_dev && st.st_ino == g->link_ino)
			return 0; /* the user's */
		if (!p[n] || !S_ISDIR(st.st_mode)) {
			int r = remove_at(cur, name, owner, aside, size);

			if (r == 2) /* the new name as a path of the workdir */
				prefix_aside(aside, size, g->rel, (size_t)(p - g->rel));
			return r;
		}
		next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return -errno;
		cd_closep(&below);
		below = cur = next;
		p += n + 1;
	}
	return 0;
}

static bool planned(const struct cd_protect_plan *p, const char *rel)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->paths[i].rel, rel) == 0)
			return true;
	return false;
}

/* The names at the top of the workdir (listed before anything is removed: a name moved aside
 * must not be met again) that match a pattern dropping new matches: what the plan has was there
 * at the start (mounted over, or a symlink sweep_one looks after); the rest the run made. */
static int sweep_new(const struct cd_protect_plan *p, const struct names *top, int workdir_fd,
		     uid_t owner, cd_protect_notice_fn notice, void *data, int *removed)
{
	int first = 0;

	if (!p->new_globs)
		return 0;
	if (!top->read)
		return -EACCES; /* the top could not be read */
	for (char **n = top->v; n && *n; n++) {
		char aside[PATH_MAX + 64] = "";
		char **glob = p->new_globs;
		int r;

		while (*glob && fnmatch(*glob, *n, 0) != 0)
			glob++;
		if (!*glob || planned(p, *n))
			continue;
		r = remove_at(workdir_fd, *n, owner, aside, sizeof(aside));
		if (r > 0) {
			(*removed)++;
			if (notice)
				notice(data, CD_PROTECT_SWEPT, *n, *glob, r == 2 ? aside : NULL);
		} else if (r < 0 && !first) {
			first = r;
		}
	}
	return first;
}

int cd_protect_sweep(const struct cd_protect_plan *p, int workdir_fd, uid_t owner,
		     cd_protect_notice_fn notice, void *data)
{
	struct names top = { 0 };
	int removed = 0, first = names_read(&top, workdir_fd), r;

	for (size_t i = 0; i < p->n; i++) {
		const struct cd_protect_path *g = &p->paths[i];
		char aside[PATH_MAX + 64] = "";

		if (g->state == CD_PROTECT_EXISTS || !g->create)
			continue;
		if (!g->exist_len && names_lack(&top, g->rel))
			continue; /* nothing there, nothing made on the way */
		r = sweep_one(g, workdir_fd, owner, aside, sizeof(aside));
		if (r > 0) {
			removed++;
			if (notice)
				notice(data, CD_PROTECT_SWEPT, g->rel, g->glob,
				       r == 2 ? aside : NULL);
		} else if (r < 0 && !first) {
			first = r;
		}
	}
	r = sweep_new(p, &top, workdir_fd, owner, notice, data, &removed);
	if (r < 0 && !first)
		first = r;
	names_done(&top);
	r = cd_protect_git_sweep(p, workdir_fd, notice, data);
	if (r > 0)
		removed += r;
	else if (r < 0 && !first)
		first = r;
	return first && !removed ? first : removed;
}
