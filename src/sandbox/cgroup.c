/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup.c - the sandbox's cgroup v2. Where it lives: as root, "cordon" under the cgroup2
 * root (or the parent given); unprivileged, the caller's own cgroup when it was delegated
 * (writable), after moving the caller into a leaf (cgroup v2's no-internal-processes rule). Each sandbox gets cordon-<id>, is born
 * in it (CLONE_INTO_CGROUP), and at the end everything in it is killed and it is removed;
 * cgroups of a cordon killed with SIGKILL are removed by the next run once empty.
 */
#include <ctype.h>
#include <inttypes.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>

#include "cgroup.h"
#include "hostroot.h"
#include "rawsys.h"

#define SUPERVISOR_LEAF "cordon-supervisors"
#define STALE_AGE_NS (NSEC_PER_SEC / 2)

static int read_text(const char *dir, const char *file, char *buf, size_t size)
{
	_cleanup_free_ char *p = cd_strdup_printf("%s/%s", dir, file);
	_cleanup_close_ int fd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
	ssize_t n;

	if (fd < 0)
		return p ? -errno : -ENOMEM;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

static int write_text(const char *dir, const char *file, const char *value)
{
	_cleanup_free_ char *p = cd_strdup_printf("%s/%s", dir, file);
	_cleanup_close_ int fd = p ? open(p, O_WRONLY | O_CLOEXEC) : -1;

	if (fd < 0)
		return p ? -errno : -ENOMEM;
	if (write(fd, value, strlen(value)) < 0)
		return -errno;
	return 0;
}

/* "key value" lines (cpu.stat, memory.events, cgroup.events): how many of the n (at most 32)
 * keys were found (each into ret[i]), from one read */
static size_t read_keys(const char *dir, const char *file, const char *const *keys, size_t n,
			uint64_t *ret)
{
	char buf[2048], *line, *save = NULL;
	uint32_t found = 0;

	if (n > 32 || read_text(dir, file, buf, sizeof(buf)) < 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (size_t i = 0; i < n; i++) {
			size_t klen = strlen(keys[i]);

			if (strncmp(line, keys[i], klen) == 0 && line[klen] == ' ') {
				ret[i] = strtoull(line + klen + 1, NULL, 10);
				found |= 1u << i;
			}
		}
	return (size_t)__builtin_popcount(found);
}

static bool read_key(const char *dir, const char *file, const char *key, uint64_t *ret)
{
	return read_keys(dir, file, &key, 1, ret) == 1;
}

static bool read_u64(const char *dir, const char *file, uint64_t *ret)
{
	char buf[64];

	if (read_text(dir, file, buf, sizeof(buf)) <= 0 || !isdigit((unsigned char)buf[0]))
		return false;
	*ret = strtoull(buf, NULL, 10);
	return true;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || isspace((unsigned char)p[-1])) &&
		    (p[n] == '\0' || isspace((unsigned char)p[n])))
			return true;
	return false;
}

/* The cgroup2 mount that mountinfo lists: /sys/fs/cgroup if it is one, else the first. */
static char *cgroup2_mount_listed(void)
{
	_cleanup_(cd_fclosep) FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], *best = NULL;

	while (f && fgets(line, sizeof(line), f)) {
		char mnt[2048], type[64];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep + 3, "%63s", type) != 1 || strcmp(type, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %2047s", mnt) != 1)
			continue;
		if (!best || strcmp(mnt, "/sys/fs/cgroup") == 0) {
			free(best);
			best = strdup(mnt);
		}
	}
	return best;
}

/* The cgroup2 mount: /sys/fs/cgroup on unified hosts, /sys/fs/cgroup/unified on hybrid ones;
 * elsewhere, the one mountinfo names (reading it costs more with every mount: bench/startup.md,
 * item 23). */
static char *cgroup2_mount(void)
{
	static const char *const usual[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs fs;

	for (size_t i = 0; i < CD_ELEMENTSOF(usual); i++)
		if (statfs(usual[i], &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
			return strdup(usual[i]);
	return cgroup2_mount_listed();
}

/* The caller's own cgroup, as a path under the mount. */
static char *own_cgroup(const char *mnt)
{
	_cleanup_(cd_fclosep) FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			return cd_strdup_printf("%s%s", mnt, strcmp(line + 3, "/") ? line + 3 : "");
		}
	return NULL;
}

static bool writable_cgroup(const char *dir)
{
	_cleanup_free_ char *procs = cd_strdup_printf("%s/cgroup.procs", dir);

	return procs && access(dir, W_OK) == 0 && access(procs, W_OK) == 0;
}

static int note(char ***v, const char *fmt, ...) _printf_(2, 3);
static int note(char ***v, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return cd_strv_push(v, s);
}

/* Move every process of @from into @to; true once @from has none left. */
static bool move_all(const char *from, const char *to)
{
	for (int round = 0; round < 8; round++) {
		_cleanup_free_ char *procs = cd_strdup_printf("%s/cgroup.procs", from);
		_cleanup_(cd_fclosep) FILE *f = procs ? fopen(procs, "re") : NULL;
		char line[32];
		bool any = false;

		if (!f)
			return false;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			any = true;
			write_text(to, "cgroup.procs", line); /* a process that exits is no matter */
		}
		if (!any)
			return true;
	}
	return false;
}

/* Unprivileged: move ourselves, and the other processes of our delegated cgroup (the
 * caller's shell, say: all the caller's own), into a leaf of it, so that it can have
 * children with controllers. What cannot be moved shows later as a missing controller. */
static int adopt_own(const char *own, struct cordon_error *err)
{
	_cleanup_free_ char *leaf = cd_strdup_printf("%s/" SUPERVISOR_LEAF, own);
	char pid[32];
	int r;

	if (!leaf)
		return cd_fail(err, ENOMEM, "cgroup", "out of memory");
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
		return cd_fail_errno(err, errno, "cgroup", "cannot make %s", leaf);
	snprintf(pid, sizeof(pid), "%d", getpid());
	r = write_text(leaf, "cgroup.procs", pid);
	if (r < 0)
		return cd_fail_errno(err, -r, "cgroup", "cannot move into %s", leaf);
	move_all(own, leaf);
	return 0;
}

/* If *own is a SUPERVISOR_LEAF whose parent the caller may write too, make *own that parent. */
static void own_delegated(char **own)
{
	char *slash = strrchr(*own, '/');
	_cleanup_free_ char *up = NULL;

	if (!slash || strcmp(slash + 1, SUPERVISOR_LEAF) != 0)
		return;
	up = strndup(*own, (size_t)(slash - *own));
	if (!up || !writable_cgroup(up))
		return;
	free(*own);
	*own = CD_TAKE_PTR(up);
}

/* Where the sandboxes' cgroups go, into *ret; what fails here means no cgroup, which the caller
 * decides about (no_cgroup). */
static int choose_parent(const struct cd_limits_opts *lim, char **ret, struct cordon_error *err)
{
	_cleanup_free_ char *mnt = NULL, *own = NULL, *p = NULL;
	int r;

	if (lim->cgroup_parent)
		p = strdup(lim->cgroup_parent);
	else if (!(mnt = cgroup2_mount()))
		return cd_fail(err, ENOENT, "cgroup", "no cgroup2 file system is mounted");
	else if (cd_host_root()) {
		p = cd_strdup_printf("%s/cordon", mnt);
		if (p && mkdir(p, 0755) < 0 && errno != EEXIST)
			return cd_fail_errno(err, errno, "cgroup", "cannot make %s", p);
	} else {
		/* unprivileged: the cgroup we run in, when it was delegated to us (systemd's
		 * Delegate=yes hands a unit its own cgroup, never its siblings'): cordon moves
		 * itself into a leaf there and makes the sandboxes next to that leaf */
		own = own_cgroup(mnt);
		if (!own)
			return cd_fail(err, ENOENT, "cgroup", "no cgroup v2 entry in /proc/self/cgroup");
		/* a caller an earlier run moved into the leaf (a shell, an engine starting one
		 * container after another): the delegated cgroup is the leaf's parent. Nesting
		 * a new leaf each run would lose every controller the earlier run did not
		 * enable, and the limits that need them. */
		own_delegated(&own);
		if (!writable_cgroup(own))
			return cd_fail(err, EACCES, "cgroup",
				       "no delegated cgroup v2 subtree: %s is not writable by uid %u "
				       "(run cordon in a delegated scope, e.g. systemd-run --user "
				       "--scope -p Delegate=yes, or give a parent cgroup)",
				       own, getuid());
		r = adopt_own(own, err);
		if (r < 0)
			return r;
		p = CD_TAKE_PTR(own);
	}
	if (!p)
		return cd_fail(err, ENOMEM, "cgroup", "out of memory");
	*ret = CD_TAKE_PTR(p);
	return 0;
}

/* Make a controller available to the parent's children. */
static int enable_controller(const char *parent, const char *ctl, struct cordon_error *err)
{
	char buf[512], plus[32];
	int r;

	if (read_text(parent, "cgroup.subtree_control", buf, sizeof(buf)) >= 0 &&
	    has_word(buf, ctl))
		return 0;
	if (read_text(parent, "cgroup.controllers", buf, sizeof(buf)) < 0 || !has_word(buf, ctl))
		return cd_fail(err, EOPNOTSUPP, "cgroup",
			       "the %s controller is not available in cgroup v2 at %s", ctl, parent);
	/* with processes of its own, enabling a controller would turn the parent "threaded"
	 * (pids, cpu) and break it for every later run: never touch such a parent */
	if (read_text(parent, "cgroup.procs", buf, sizeof(buf)) != 0)
		return cd_fail(err, EBUSY, "cgroup",
			       "cannot enable the %s controller in %s: it has processes of its own "
			       "(cgroup v2 allows controllers only below a cgroup without processes)",
			       ctl, parent);
	snprintf(plus, sizeof(plus), "+%s", ctl);
	r = write_text(parent, "cgroup.subtree_control", plus);
	if (r < 0)
		return cd_fail_errno(err, -r, "cgroup", "cannot enable the %s controller in %s", ctl,
				     parent);
	return 0;
}

static bool is_sandbox_name(const char *name)
{
	size_t n = strlen(CD_CGROUP_PREFIX);

	if (strncmp(name, CD_CGROUP_PREFIX, n) != 0 || strlen(name + n) != 32)
		return false;
	for (const char *p = name + n; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	return true;
}

/* Made a moment ago, maybe before its cordon could lock it. */
static bool young(const struct stat *st)
{
	struct timespec now;
	uint64_t made = (uint64_t)st->st_ctim.tv_sec * NSEC_PER_SEC + (uint64_t)st->st_ctim.tv_nsec;

	clock_gettime(CLOCK_REALTIME, &now);
	return made + STALE_AGE_NS > (uint64_t)now.tv_sec * NSEC_PER_SEC + (uint64_t)now.tv_nsec;
}

static bool locked(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return true;
	return flock(fd, LOCK_EX | LOCK_NB) < 0; /* released when fd closes */
}

/* Remove cordon-<id> cgroups left by a cordon killed with SIGKILL, once empty. */
static void clean_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		_cleanup_free_ char *p = NULL;
		uint64_t populated = 1;
		struct stat st;

		if (de->d_type != DT_DIR || !is_sandbox_name(de->d_name))
			continue;
		p = cd_strdup_printf("%s/%s", parent, de->d_name);
		if (!p || stat(p, &st) < 0 || (!cd_host_root() && st.st_uid != geteuid()))
			continue;
		/* in use: its cordon holds a lock on it; or it was made a moment ago, before its
		 * cordon could lock it */
		if (young(&st) || locked(p))
			continue;
		if (read_key(p, "cgroup.events", "populated", &populated) && populated == 0)
			rmdir(p);
	}
	closedir(d);
}

/* What a limit that cannot be applied does: an explicit one fails the run, unless the mode is
 * best-effort; a default one (and best-effort's) is recorded in cg->missing. */
static int fail_limit(const struct cd_limits_opts *lim, const struct cd_limit_def *d,
		      const char *why, struct cd_cgroup *cg, struct cordon_error *err)
{
	if (lim->cgroup[d->index].set && lim->cgroup_mode != CORDON_CGROUP_BEST_EFFORT)
		return cd_fail(err, EOPNOTSUPP, d->info.name, "cannot apply the limit: %s "
				"(the cgroup mode best-effort runs without it)", why);
	return note(&cg->missing, "%s: %s", d->info.file, why) < 0
		       ? cd_fail(err, ENOMEM, "cgroup", "out of memory")
		       : 0;
}

/* Write file and read it back: what the kernel made of it (memory.max rounds down to a page) */
static int write_read_back(const char *dir, const char *file, const char *value, char **ret,
			   struct cordon_error *err)
{
	char buf[128];
	int r = write_text(dir, file, value);

	if (r < 0)
		return cd_fail_errno(err, -r, "cgroup", "cannot write %s/%s", dir, file);
	r = read_text(dir, file, buf, sizeof(buf));
	if (r < 0)
		return cd_fail_errno(err, -r, "cgroup", "wrote %s/%s, cannot read it back", dir,
				     file);
	buf[strcspn(buf, "\n")] = '\0';
	*ret = strdup(buf);
	return *ret ? 0 : cd_fail(err, ENOMEM, "cgroup", "out of memory");
}

static int apply_limit(const struct cd_limits_opts *lim, struct cd_cgroup *cg,
		       const struct cd_limit_def *d, struct cordon_error *err)
{
	struct cordon_error why = { 0 };
	char value[64];
	int r;

	if (!d->format(d, lim->cgroup, value, sizeof(value)))
		return 0;
	r = enable_controller(cg->parent, d->controller, &why);
	if (r >= 0)
		r = write_read_back(cg->path, d->info.file, value, &cg->applied[d->index], &why);
	return r < 0 ? fail_limit(lim, d, why.msg, cg, err) : 0;
}

/* One OOM kills the whole sandbox, not one process of it: without it a memory limit is still a
 * limit, but the command may go on with a part of it killed, so this counts as part of the
 * memory limit (explicit: fail; default or best-effort: recorded). */
static int apply_oom_group(const struct cd_limits_opts *lim, struct cd_cgroup *cg,
			   struct cordon_error *err)
{
	_cleanup_free_ char *back = NULL;
	struct cordon_error why = { 0 };
	int r;

	if (!cg->applied[CD_CG_MEMORY])
		return 0;
	r = write_read_back(cg->path, "memory.oom.group", "1", &back, &why);
	if (r >= 0 && strcmp(back, "1") != 0)
		r = cd_fail(&why, EIO, "cgroup", "memory.oom.group reads back \"%s\"", back);
	if (r >= 0) {
		cg->oom_group = true;
		return 0;
	}
	/* part of an explicit memory limit: without it one process is killed, not the sandbox */
	if (lim->cgroup[CD_CG_MEMORY].set && lim->cgroup_mode != CORDON_CGROUP_BEST_EFFORT)
		return cd_fail(err, EOPNOTSUPP, "memory", "cannot make the memory limit end the whole "
			       "sandbox: %s (the cgroup mode best-effort runs with the limit but "
			       "without it)", why.msg);
	return note(&cg->missing, "memory.oom.group: %s", why.msg) < 0
		       ? cd_fail(err, ENOMEM, "cgroup", "out of memory")
		       : 0;
}

/* Controllers are enabled in the parent before the child is made: a cgroup's own
 * subtree_control does not matter here, the files appear when the parent enables them.
 * Limits come before any process is in the cgroup. */
static int apply_limits(const struct cd_limits_opts *lim, struct cd_cgroup *cg,
			struct cordon_error *err)
{
	int r;

	for (size_t i = 0; i < CD_CG_N; i++) {
		r = apply_limit(lim, cg, cd_limit_of_cgroup(i), err);
		if (r < 0)
			return r;
	}
	return apply_oom_group(lim, cg, err);
}

/* Without a cgroup: explicit limits fail, unless best-effort; record what is missing. */
static int no_cgroup(const struct cd_limits_opts *lim, const char *why, struct cd_cgroup *cg,
		     struct cordon_error *err)
{
	if (lim->cgroup_mode == CORDON_CGROUP_REQUIRED)
		return cd_fail(err, EOPNOTSUPP, "cgroup", "required, but %s", why);
	for (size_t i = 0; i < CD_CG_N; i++)
		if (lim->cgroup[i].set && lim->cgroup_mode != CORDON_CGROUP_BEST_EFFORT)
			return cd_fail(err, EOPNOTSUPP, cd_limit_table[i].info.name,
				       "cannot apply the limit: %s%s", why,
				       lim->cgroup_mode == CORDON_CGROUP_OFF
					       ? ""
					       : " (the cgroup mode best-effort runs without it)");
	return note(&cg->missing, "cgroup: %s", why) < 0
		       ? cd_fail(err, ENOMEM, "cgroup", "out of memory")
		       : 0;
}

/* best-effort: rlimits where they mean something. RLIMIT_AS for memory; RLIMIT_NPROC only for
 * the dedicated host uid, which nothing else uses (it counts per host uid). */
static int fallback(struct cd_cgroup *cg, enum cd_cgroup_limit i, uint64_t want, int resource,
		    struct cd_rlimit *rl, struct cordon_error *err)
{
	struct rlimit cur;
	uint64_t v;

	if (cg->applied[i] || want == CORDON_UNLIMITED || rl[resource].set ||
	    getrlimit(resource, &cur) < 0)
		return 0;
	v = want < cur.rlim_max ? want : cur.rlim_max;
	rl[resource] = (struct cd_rlimit){ true, v, v };
	if (note(&cg->fallbacks, "rlimit %s=%llu", cd_rlimit_name(resource),
		 (unsigned long long)v) < 0)
		return cd_fail(err, ENOMEM, "cgroup", "out of memory");
	return 0;
}

static int fallbacks(const struct cd_limits_opts *lim, bool own_uid, struct cd_cgroup *cg,
		     struct cd_rlimit *rl, struct cordon_error *err)
{
	int r;

	if (lim->cgroup_mode != CORDON_CGROUP_BEST_EFFORT)
		return 0;
	r = fallback(cg, CD_CG_MEMORY, lim->cgroup[CD_CG_MEMORY].soft, RLIMIT_AS, rl, err);
	if (r < 0 || !own_uid)
		return r;
	return fallback(cg, CD_CG_PIDS, lim->cgroup[CD_CG_PIDS].soft, RLIMIT_NPROC, rl, err);
}

/* mkdir: what fails here means no cgroup, which no_cgroup() decides about */
static int make_cgroup(struct cd_cgroup *cg, const char *id, struct cordon_error *err)
{
	_cleanup_free_ char *path = cd_strdup_printf("%s/" CD_CGROUP_PREFIX "%s", cg->parent, id);

	if (!path)
		return cd_fail(err, ENOMEM, "cgroup", "out of memory");
	if (mkdir(path, 0755) < 0)
		return cd_fail_errno(err, errno, "cgroup", "cannot make a cgroup in %s", cg->parent);
	cg->path = CD_TAKE_PTR(path);
	return 0;
}

static int open_cgroup(struct cd_cgroup *cg, struct cordon_error *err)
{
	cg->path_reported = strdup(cg->path);
	if (!cg->path_reported)
		return cd_fail(err, ENOMEM, "cgroup", "out of memory");
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0)
		return cd_fail_errno(err, errno, "cgroup", "open %s", cg->path);
	/* ours while we live: the next runs' stale clean-up leaves it alone */
	flock(cg->fd, LOCK_SH | LOCK_NB);
	return 0;
}

/* Does the parent offer none of the controllers cordon's limits use? Then a cgroup would limit
 * nothing, and making, watching and removing it cost every run (bench/startup.md, item 4). */
static bool no_controllers(const char *parent)
{
	char buf[512];

	if (read_text(parent, "cgroup.controllers", buf, sizeof(buf)) < 0)
		return false; /* not known: make it, as before */
	for (size_t i = 0; i < CD_CG_N; i++)
		if (has_word(buf, cd_limit_of_cgroup(i)->controller))
			return false;
	return true;
}

/* No cgroup, none of whose limits could apply: each limit that would have been written is
 * recorded (or, explicit, fails) as apply_limit() would have, and so is the reason. */
static int pointless(const struct cd_limits_opts *lim, struct cd_cgroup *cg,
		     struct cordon_error *err)
{
	char value[64], why[PATH_MAX + 96];
	int r;

	for (size_t i = 0; i < CD_CG_N; i++) {
		const struct cd_limit_def *d = cd_limit_of_cgroup(i);

		if (!d->format(d, lim->cgroup, value, sizeof(value)))
			continue;
		snprintf(why, sizeof(why), "the %s controller is not available in cgroup v2 at %s",
			 d->controller, cg->parent);
		r = fail_limit(lim, d, why, cg, err);
		if (r < 0)
			return r;
	}
	return note(&cg->missing, "cgroup: none made: cgroup v2 at %s has no memory, pids or cpu "
		    "controller (--cgroup required makes one all the same)", cg->parent) < 0
		       ? cd_fail(err, ENOMEM, "cgroup", "out of memory")
		       : 0;
}

/* Where it goes and the cgroup itself; without one, no_cgroup() decides. */
static int place(const struct cd_limits_opts *lim, const char *id, struct cd_cgroup *cg,
		 struct cordon_error *err)
{
	struct cordon_error why = { 0 };
	int r;

	if (lim->cgroup_mode == CORDON_CGROUP_OFF)
		return no_cgroup(lim, "the cgroup mode is off", cg, err);
	r = choose_parent(lim, &cg->parent, &why);
	/* a session to freeze needs a cgroup of its own for cgroup.freeze, which needs no
	 * controller */
	if (r >= 0 && lim->cgroup_mode != CORDON_CGROUP_REQUIRED && !lim->freezer &&
	    no_controllers(cg->parent))
		return pointless(lim, cg, err);
	if (r >= 0) {
		clean_stale(cg->parent);
		r = make_cgroup(cg, id, &why);
	}
	if (r < 0)
		return no_cgroup(lim, why.msg, cg, err);
	r = open_cgroup(cg, err);
	return r < 0 ? r : apply_limits(lim, cg, err);
}

int cd_cgroup_setup(const struct cd_limits_opts *lim, const char *id, bool own_uid,
		    struct cd_cgroup *cg, struct cd_rlimit *rlimits, struct cordon_error *err)
{
	int r;

	*cg = (struct cd_cgroup){ .fd = -1 };
	r = place(lim, id, cg, err);
	return r < 0 ? r : fallbacks(lim, own_uid, cg, rlimits, err);
}

void cd_cgroup_log(const struct cd_cgroup *cg, const struct cd_log *log)
{
	char line[512];
	size_t n = 0;

	for (size_t i = 0; cg->path && i < CD_CG_N; i++)
		n += (size_t)snprintf(line + n, n < sizeof(line) ? sizeof(line) - n : 0, "%s%s %s",
				      i ? ", " : "", cd_limit_table[i].info.file,
				      cg->applied[i] ? cg->applied[i] : "-");
	if (cg->path)
		cd_log_line(log, "cgroup: %s: %s%s", cg->path, line,
			      cg->oom_group ? ", memory.oom.group 1" : "");
	for (char **m = cg->missing; m && *m; m++)
		cd_log_line(log, "cgroup: not applied: %s", *m);
	for (char **f = cg->fallbacks; f && *f; f++)
		cd_log_line(log, "cgroup: fallback: %s", *f);
}

int cd_cgroup_attach(const struct cd_cgroup *cg, pid_t pid, struct cordon_error *err)
{
	char s[32];
	int r;

	snprintf(s, sizeof(s), "%d", pid);
	r = write_text(cg->path, "cgroup.procs", s);
	if (r < 0)
		return cd_fail_errno(err, -r, "cgroup", "move the sandbox into %s", cg->path);
	return 0;
}

void cd_cgroup_kill(const struct cd_cgroup *cg)
{
	_cleanup_(cd_fclosep) FILE *f = NULL;
	_cleanup_free_ char *procs = NULL;
	char line[32];

	if (!cg->path || write_text(cg->path, "cgroup.kill", "1") == 0)
		return;
	/* before 5.14: freeze, so that nothing forks while we kill */
	write_text(cg->path, "cgroup.freeze", "1");
	procs = cd_strdup_printf("%s/cgroup.procs", cg->path);
	f = procs ? fopen(procs, "re") : NULL;
	while (f && fgets(line, sizeof(line), f))
		kill((pid_t)atoi(line), SIGKILL);
	write_text(cg->path, "cgroup.freeze", "0");
}

/* cgroup.events' "frozen" is want: 1, 0 if not yet, -errno */
static int frozen_is(int events_fd, bool want)
{
	char buf[256], *at;
	ssize_t n = pread(events_fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	at = strstr(buf, "frozen ");
	if (!at)
		return -EOPNOTSUPP;
	return (at[7] == '1') == want;
}

/* Until cgroup.events says frozen (or thawed), or the deadline (monotonic): a change of the file
 * wakes poll() with POLLPRI (cgroup v2's notification of a modified file). */
static int wait_frozen(const struct cd_cgroup *cg, bool want, uint64_t deadline_ns,
		       struct cordon_error *err)
{
	_cleanup_close_ int fd = openat(cg->fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return cd_fail_errno(err, errno, "freeze", "open %s/cgroup.events", cg->path);
	while ((r = frozen_is(fd, want)) == 0) {
		struct pollfd p = { .fd = fd, .events = POLLPRI };
		uint64_t now = cd_now_ns();
		int ms;

		if (now >= deadline_ns)
			return cd_fail(err, ETIMEDOUT, "freeze", "%s: cgroup.events did not say "
				       "frozen %d in time", cg->path, want);
		ms = (int)((deadline_ns - now) / NSEC_PER_MSEC) + 1;
		if (poll(&p, 1, ms < 100 ? ms : 100) < 0 && errno != EINTR)
			return cd_fail_errno(err, errno, "freeze", "poll %s/cgroup.events",
					     cg->path);
	}
	if (r < 0)
		return cd_fail_errno(err, -r, "freeze", "read %s/cgroup.events", cg->path);
	return 0;
}

int cd_cgroup_freeze(const struct cd_cgroup *cg, bool frozen, uint64_t deadline_ns,
		     const char *why_none, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (!cg->path || cg->fd < 0)
		return cd_fail(err, EOPNOTSUPP, "freeze", "the sandbox has no cgroup of its own%s%s",
			       why_none ? ": " : "", why_none ? why_none : "");
	fd = openat(cg->fd, "cgroup.freeze", O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return cd_fail(err, EOPNOTSUPP, "freeze", "%s has no cgroup.freeze (the cgroup v2 "
			       "freezer needs Linux 5.2)", cg->path);
	if (fd < 0 || write(fd, frozen ? "1" : "0", 1) < 0)
		return cd_fail_errno(err, errno, "freeze", "write %s/cgroup.freeze", cg->path);
	r = wait_frozen(cg, frozen, deadline_ns, err);
	if (r < 0 && frozen) /* not all of it stopped: none of it stays stopped */
		(void)!write(fd, "0", 1);
	return r;
}

void cd_cgroup_usage(const struct cd_cgroup *cg, struct cd_cgroup_usage *u)
{
	static const char *const cpu[] = { "user_usec", "system_usec" };
	uint64_t times[2] = { 0, 0 };

	*u = (struct cd_cgroup_usage){ 0 };
	if (!cg->path)
		return;
	u->valid = true;
	u->has_memory_peak = read_u64(cg->path, "memory.peak", &u->memory_peak);
	u->has_cpu = read_keys(cg->path, "cpu.stat", cpu, 2, times) == 2;
	u->user_us = times[0];
	u->system_us = times[1];
	u->has_pids_peak = read_u64(cg->path, "pids.peak", &u->pids_peak);
	read_key(cg->path, "memory.events", "oom_kill", &u->oom_kills);
	read_key(cg->path, "pids.events", "max", &u->pids_max_hits);
}

void cd_cgroup_now(const struct cd_cgroup *cg, struct cd_cgroup_now *ret)
{
	char buf[64];

	*ret = (struct cd_cgroup_now){ 0 };
	if (!cg->path)
		return;
	ret->valid = true;
	ret->has_memory = read_u64(cg->path, "memory.current", &ret->memory_current);
	read_key(cg->path, "memory.stat", "file", &ret->memory_file);
	read_u64(cg->path, "memory.max", &ret->memory_max); /* "max": stays 0 */
	ret->has_cpu = read_key(cg->path, "cpu.stat", "usage_usec", &ret->cpu_usage_us);
	if (read_text(cg->path, "cpu.max", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%" SCNu64 " %" SCNu64, &ret->cpu_quota_us, &ret->cpu_period_us) != 2)
		ret->cpu_quota_us = 0; /* "max 100000" */
}

/* Wait until the cgroup is empty: cgroup.events signals POLLPRI on change. */
static void wait_empty(const char *path)
{
	_cleanup_free_ char *ev = cd_strdup_printf("%s/cgroup.events", path);
	_cleanup_close_ int fd = ev ? open(ev, O_RDONLY | O_CLOEXEC) : -1;
	uint64_t deadline = cd_now_ns() + 2 * NSEC_PER_SEC, populated = 1;

	while (read_key(path, "cgroup.events", "populated", &populated) && populated &&
	       cd_now_ns() < deadline) {
		struct pollfd p = { fd, POLLPRI, 0 };

		if (fd < 0 || poll(&p, 1, 50) < 0)
			usleep(1000);
	}
}

/* Wait (bounded) until it is empty, then remove it. */
static void remove_when_empty(const char *path)
{
	wait_empty(path);
	for (int i = 0; i < 100 && rmdir(path) < 0 && errno == EBUSY; i++)
		usleep(2000);
}

/* Ours no more: drop the fd (and with it our lock) and the path. */
static void forget(struct cd_cgroup *cg)
{
	cg->fd = cd_safe_close(cg->fd);
	free(CD_TAKE_PTR(cg->path));
}

void cd_cgroup_remove(struct cd_cgroup *cg)
{
	if (!cg->path)
		return;
	cd_cgroup_kill(cg);
	remove_when_empty(cg->path);
	forget(cg);
}

/* The detached remover: a child that waits for the cgroup to empty (pid 1 may still be taking
 * its namespaces down), removes it and exits, so that the caller need not wait. It shares our
 * memory (CLONE_VM: a fork's copy of our page tables, and its faults, cost every run:
 * bench/startup.md, item 22) and so runs on raw system calls only (rawsys.h), on a mapping of
 * its own that holds all it reads and that we never unmap: the caller may exit, or go on, while
 * it runs. It keeps the cgroup's fd (and so the lock that tells other cordons' clean-up the
 * cgroup is in use) and nothing else of ours. Where it cannot share (valgrind, no raw system
 * calls), a fork.
 * The mapping: a guard page, the stack, then what it reads (above the stack's top). */
#define REMOVER_GUARD  4096
#define REMOVER_STACK  (32 * 1024)
#define REMOVER_ROUNDS 40 /* of up to 50 ms: 2 s at most for it to empty, as wait_empty() */
#define REMOVER_TRIES  50 /* of rmdir, 20 ms apart: nobody waits for it */

struct remover {
	int fd;                /* the cgroup's */
	char path[PATH_MAX];   /* the cgroup */
	char events[PATH_MAX]; /* its cgroup.events */
};

/* Does cgroup.events' text say "populated 0"? By hand: no library call in the remover. */
_raw_child_ static bool says_empty(const char *buf, long n)
{
	static const char key[] = "populated ";
	const long k = (long)sizeof(key) - 1;
	long j;

	for (long i = 0; i + k < n; i++) {
		if (i > 0 && buf[i - 1] != '\n')
			continue;
		for (j = 0; j < k && buf[i + j] == key[j]; j++)
			;
		if (j == k)
			return buf[i + k] == '0';
	}
	return false;
}

/* Hold none of the caller's descriptors but the cgroup's: not its pipes, not its terminal, not
 * its working directory. Closed first: without a /dev/null to put there, 0-2 stay closed. */
_raw_child_ static void remover_detach(int keep)
{
	long null;

	if (keep > 0)
		cd_raw_syscall(SYS_close_range, 0, keep - 1, 0);
	cd_raw_syscall(SYS_close_range, keep + 1, ~0u, 0);
	cd_raw_syscall(SYS_chdir, "/");
	null = cd_raw_syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < 3 && null >= 0; i++)
		if (i != null && i != keep)
			cd_raw_syscall(SYS_dup3, null, i, 0);
	if (null > 2)
		cd_raw_syscall(SYS_close, null);
}

/* Sleep up to ms (and less if fd, when >= 0, has news). ppoll writes back what is left of the
 * time: a fresh one each call. */
_raw_child_ static void remover_wait(long fd, long ms)
{
	struct timespec t = { 0, ms * (long)NSEC_PER_MSEC };
	struct pollfd p = { (int)fd, POLLPRI, 0 };

#if CD_HAVE_RAW_SYSCALL
	cd_raw_syscall(SYS_ppoll, fd >= 0 ? &p : NULL, fd >= 0, &t, NULL, 0);
#else /* a fork: libc's ppoll() knows this ABI's struct timespec */
	ppoll(fd >= 0 ? &p : NULL, fd >= 0, &t, NULL);
#endif
}

_raw_child_ static long remover_read(long fd, char *buf, long size)
{
#if CD_HAVE_RAW_SYSCALL
	return cd_raw_syscall(SYS_pread64, fd, buf, size, 0);
#else
	return pread((int)fd, buf, (size_t)size, 0);
#endif
}

_raw_child_ static int remover_main(void *arg)
{
	const struct remover *r = arg;
	char buf[256];
	long fd, n;

	cd_raw_syscall(SYS_setsid, 0);
	remover_detach(r->fd);
	fd = cd_raw_syscall(SYS_openat, AT_FDCWD, r->events, O_RDONLY | O_CLOEXEC);
	for (int i = 0; fd >= 0 && i < REMOVER_ROUNDS; i++) {
		n = remover_read(fd, buf, sizeof(buf));
		if (n <= 0 || says_empty(buf, n))
			break;
		remover_wait(fd, 50);
	}
	if (fd >= 0)
		cd_raw_syscall(SYS_close, fd);
	/* EBUSY: the kernel is not done with it yet */
	for (int i = 0; i < REMOVER_TRIES; i++) {
		if (cd_raw_syscall(SYS_unlinkat, AT_FDCWD, r->path, AT_REMOVEDIR) != -EBUSY)
			break;
		remover_wait(-1, 20);
	}
	return 0;
}

/* 0 once the remover runs; -errno if none does (the caller then removes the cgroup itself) */
static int start_remover(const struct cd_cgroup *cg)
{
	const bool shared = CD_HAVE_RAW_SYSCALL && !cd_under_valgrind();
	const size_t size = REMOVER_GUARD + REMOVER_STACK + sizeof(struct remover);
	char *map, *top;
	struct remover *r;
	pid_t pid;
	int e;

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
		   0);
	if (map == MAP_FAILED)
		return -errno;
	top = map + REMOVER_GUARD + REMOVER_STACK;
	r = (struct remover *)top;
	r->fd = cg->fd;
	if (mprotect(map, REMOVER_GUARD, PROT_NONE) < 0) {
		e = errno;
		munmap(map, size);
		return -e;
	}
	if ((size_t)snprintf(r->path, sizeof(r->path), "%s", cg->path) >= sizeof(r->path) ||
	    (size_t)snprintf(r->events, sizeof(r->events), "%s/cgroup.events", cg->path) >=
		    sizeof(r->events)) {
		munmap(map, size);
		return -ENAMETOOLONG;
	}
	pid = shared ? cd_clone_shared(remover_main, top, SIGCHLD, r, NULL) : fork();
	if (pid == 0)
		_exit(remover_main(r));
	e = errno;
	if (pid < 0 || !shared)
		munmap(map, size); /* no child, or a fork with a copy of its own */
	return pid < 0 ? -e : 0;
}

void cd_cgroup_release(struct cd_cgroup *cg)
{
	if (!cg->path)
		return;
	cd_cgroup_kill(cg);
	/* not empty yet (EBUSY): pid 1 is still on its way out */
	if (rmdir(cg->path) < 0 && errno == EBUSY && start_remover(cg) < 0)
		remove_when_empty(cg->path); /* no child: remove it here */
	forget(cg);
}

void cd_cgroup_done(struct cd_cgroup *cg)
{
	cd_cgroup_remove(cg);
	free(cg->parent);
	free(cg->path_reported);
	for (size_t i = 0; i < CD_CG_N; i++)
		free(cg->applied[i]);
	cd_strv_free(cg->missing);
	cd_strv_free(cg->fallbacks);
	*cg = (struct cd_cgroup){ .fd = -1 };
}
