/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup.c - the sandbox's cgroup v2. Where it lives: as root, "cordon" under the cgroup2
 * root (or --cgroup-parent); unprivileged, the caller's own cgroup when it was delegated
 * (writable), after moving the caller into a leaf (cgroup v2's no-internal-processes rule). Each sandbox gets cordon-<id>, is born
 * in it (CLONE_INTO_CGROUP), and at the end everything in it is killed and it is removed;
 * cgroups of a cordon killed with SIGKILL are removed by the next run once empty.
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include "cgroup.h"

#define SUPERVISOR_LEAF "cordon-supervisors"
#define PERIOD_US 100000ull
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

/* "key value" lines (cpu.stat, memory.events, cgroup.events) */
static bool read_key(const char *dir, const char *file, const char *key, uint64_t *ret)
{
	char buf[2048], *line, *save = NULL;
	size_t klen = strlen(key);

	if (read_text(dir, file, buf, sizeof(buf)) < 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			*ret = strtoull(line + klen + 1, NULL, 10);
			return true;
		}
	return false;
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

/* The cgroup2 mount: /sys/fs/cgroup on unified hosts, /sys/fs/cgroup/unified on hybrid ones. */
static char *cgroup2_mount(void)
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
static int adopt_own(const char *own, char **reason)
{
	_cleanup_free_ char *leaf = cd_strdup_printf("%s/" SUPERVISOR_LEAF, own);
	char pid[32];

	if (!leaf)
		return -ENOMEM;
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
		return *reason = cd_strdup_printf("cannot make %s: %s", leaf, strerror(errno)), -1;
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_text(leaf, "cgroup.procs", pid) < 0)
		return *reason = cd_strdup_printf("cannot move into %s: %s", leaf, strerror(errno)), -1;
	move_all(own, leaf);
	return 0;
}

static char *choose_parent(const struct cordon_config *c, char **reason)
{
	_cleanup_free_ char *mnt = NULL, *own = NULL;
	char *p;

	if (c->cgroup_parent)
		return strdup(c->cgroup_parent);
	mnt = cgroup2_mount();
	if (!mnt)
		return *reason = strdup("no cgroup2 file system is mounted"), NULL;
	if (geteuid() == 0) {
		p = cd_strdup_printf("%s/cordon", mnt);
		if (p && mkdir(p, 0755) < 0 && errno != EEXIST) {
			*reason = cd_strdup_printf("cannot make %s: %s", p, strerror(errno));
			free(p);
			return NULL;
		}
		return p;
	}
	/* unprivileged: the cgroup we run in, when it was delegated to us (systemd's
	 * Delegate=yes hands a unit its own cgroup, never its siblings'): cordon moves itself
	 * into a leaf there and makes the sandboxes next to that leaf */
	own = own_cgroup(mnt);
	if (!own)
		return *reason = strdup("no cgroup v2 entry in /proc/self/cgroup"), NULL;
	if (writable_cgroup(own)) {
		if (adopt_own(own, reason) < 0)
			return NULL;
		return CD_TAKE_PTR(own);
	}
	*reason = cd_strdup_printf("no delegated cgroup v2 subtree: %s is not writable by uid %u "
				   "(run cordon in a delegated scope, e.g. systemd-run --user --scope "
				   "-p Delegate=yes, or give --cgroup-parent)", own, getuid());
	return NULL;
}

/* Make a controller available to the parent's children; false with *why if it cannot be. */
static bool enable_controller(const char *parent, const char *ctl, char **why)
{
	char buf[512], plus[32];

	if (read_text(parent, "cgroup.subtree_control", buf, sizeof(buf)) >= 0 &&
	    has_word(buf, ctl))
		return true;
	if (read_text(parent, "cgroup.controllers", buf, sizeof(buf)) < 0 || !has_word(buf, ctl)) {
		*why = cd_strdup_printf("the %s controller is not available in cgroup v2 at %s", ctl,
					parent);
		return false;
	}
	/* with processes of its own, enabling a controller would turn the parent "threaded"
	 * (pids, cpu) and break it for every later run: never touch such a parent */
	if (read_text(parent, "cgroup.procs", buf, sizeof(buf)) != 0) {
		*why = cd_strdup_printf("cannot enable the %s controller in %s: it has processes of "
					"its own (cgroup v2 allows controllers only below a cgroup "
					"without processes)", ctl, parent);
		return false;
	}
	snprintf(plus, sizeof(plus), "+%s", ctl);
	if (write_text(parent, "cgroup.subtree_control", plus) < 0) {
		*why = cd_strdup_printf("cannot enable the %s controller in %s: %s", ctl, parent,
					strerror(errno));
		return false;
	}
	return true;
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
		if (!p || stat(p, &st) < 0 || (geteuid() != 0 && st.st_uid != geteuid()))
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

/* One limit: write it, or say why not. */
struct limit {
	const char *option;     /* for messages: "memory" */
	const char *controller;
	const char *file;
	char *value;            /* what to write; NULL: nothing to apply */
	bool explicit_;         /* the user asked for it */
	char **applied;         /* where to record what was written */
};

/* NULL for no limit: nothing to write, no controller needed */
static char *limit_value(uint64_t v)
{
	return v == CORDON_UNLIMITED ? NULL : cd_strdup_printf("%llu", (unsigned long long)v);
}

static char *swap_value(uint64_t v)
{
	return v == CORDON_UNLIMITED ? strdup("max") : cd_strdup_printf("%llu", (unsigned long long)v);
}

static int fail_limit(const struct cordon_config *c, const struct limit *l, const char *why,
		      struct cd_cgroup *cg, struct cordon_error *err)
{
	if (l->explicit_ && c->cgroup_mode != CORDON_CGROUP_BEST_EFFORT)
		return cd_fail(err, EOPNOTSUPP, l->option, "cannot apply the limit: %s "
				"(--cgroup=best-effort runs without it)", why);
	return note(&cg->missing, "%s: %s", l->file, why) < 0 ? -ENOMEM : 0;
}

static int apply_limit(const struct cordon_config *c, struct cd_cgroup *cg, struct limit *l,
		       struct cordon_error *err)
{
	_cleanup_free_ char *why = NULL;
	int r;

	if (!l->value)
		return 0;
	if (!enable_controller(cg->parent, l->controller, &why))
		return fail_limit(c, l, why ? why : "out of memory", cg, err);
	r = write_text(cg->path, l->file, l->value);
	if (r < 0) {
		why = cd_strdup_printf("cannot write %s/%s: %s", cg->path, l->file, strerror(-r));
		return fail_limit(c, l, why ? why : "out of memory", cg, err);
	}
	*l->applied = CD_TAKE_PTR(l->value);
	return 0;
}

static void free_limits(struct limit *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i].value);
}

/* Controllers are enabled in the parent before the child is made: a cgroup's own
 * subtree_control does not matter here, the files appear when the parent enables them. */
static int apply_limits(const struct cordon_config *c, struct cd_cgroup *cg,
			struct cordon_error *err)
{
	bool mem = c->memory != CORDON_UNLIMITED;
	struct limit l[] = {
		{ "memory", "memory", "memory.max", limit_value(c->memory), c->memory_set,
		  &cg->memory_max },
		{ "memory-swap", "memory", "memory.swap.max",
		  mem || c->memory_swap_set ? swap_value(c->memory_swap) : NULL,
		  c->memory_swap_set, &cg->swap_max },
		{ "cpus", "cpu", "cpu.max",
		  c->millicpus == CORDON_UNLIMITED
			  ? NULL
			  : cd_strdup_printf("%llu %llu",
					     (unsigned long long)(c->millicpus * PERIOD_US / 1000),
					     PERIOD_US),
		  c->cpus_set, &cg->cpu_max },
		{ "pids", "pids", "pids.max", limit_value(c->pids), c->pids_set, &cg->pids_max },
	};
	int r = 0;

	for (size_t i = 0; i < CD_ELEMENTSOF(l) && r >= 0; i++)
		r = apply_limit(c, cg, &l[i], err);
	free_limits(l, CD_ELEMENTSOF(l));
	/* one OOM kills the whole sandbox, not one process of it */
	if (r >= 0 && cg->memory_max)
		write_text(cg->path, "memory.oom.group", "1");
	return r;
}

/* Without a cgroup: explicit limits fail, unless best-effort; record what is missing. */
static int no_cgroup(const struct cordon_config *c, const char *why, struct cd_cgroup *cg,
		     struct cordon_error *err)
{
	static const char *const names[] = { "memory", "memory-swap", "cpus", "pids" };
	const bool explicit_[] = { c->memory_set, c->memory_swap_set, c->cpus_set, c->pids_set };

	if (c->cgroup_mode == CORDON_CGROUP_REQUIRED)
		return cd_fail(err, EOPNOTSUPP, "cgroup", "required, but %s", why);
	for (size_t i = 0; i < CD_ELEMENTSOF(names); i++)
		if (explicit_[i] && c->cgroup_mode != CORDON_CGROUP_BEST_EFFORT)
			return cd_fail(err, EOPNOTSUPP, names[i], "cannot apply the limit: %s%s", why,
				       c->cgroup_mode == CORDON_CGROUP_OFF
					       ? ""
					       : " (--cgroup=best-effort runs without it)");
	return note(&cg->missing, "cgroup: %s", why) < 0 ? -ENOMEM : 0;
}

/* best-effort: rlimits where they mean something. RLIMIT_AS for memory; RLIMIT_NPROC only for
 * the dedicated host uid, which nothing else uses (it counts per host uid). */
static int fallbacks(const struct cordon_config *c, uid_t host_uid, struct cd_cgroup *cg,
		     struct cd_rlimit *rl)
{
	struct rlimit cur;

	if (c->cgroup_mode != CORDON_CGROUP_BEST_EFFORT)
		return 0;
	if (!cg->memory_max && c->memory != CORDON_UNLIMITED && !rl[RLIMIT_AS].set &&
	    getrlimit(RLIMIT_AS, &cur) == 0) {
		uint64_t v = c->memory < cur.rlim_max ? c->memory : cur.rlim_max;

		rl[RLIMIT_AS] = (struct cd_rlimit){ true, v, v };
		if (note(&cg->fallbacks, "rlimit as=%llu", (unsigned long long)v) < 0)
			return -ENOMEM;
	}
	if (!cg->pids_max && c->pids != CORDON_UNLIMITED && !rl[RLIMIT_NPROC].set &&
	    host_uid == CORDON_ROOT_HOST_ID && getrlimit(RLIMIT_NPROC, &cur) == 0) {
		uint64_t v = c->pids < cur.rlim_max ? c->pids : cur.rlim_max;

		rl[RLIMIT_NPROC] = (struct cd_rlimit){ true, v, v };
		if (note(&cg->fallbacks, "rlimit nproc=%llu", (unsigned long long)v) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int make_cgroup(struct cd_cgroup *cg, const char *id, struct cordon_error *err)
{
	cg->path = cd_strdup_printf("%s/" CD_CGROUP_PREFIX "%s", cg->parent, id);
	if (!cg->path)
		return cd_fail(err, ENOMEM, "cgroup", "out of memory");
	if (mkdir(cg->path, 0755) < 0) {
		int e = errno;

		free(CD_TAKE_PTR(cg->path));
		return -e;
	}
	cg->path_reported = strdup(cg->path);
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0)
		return cd_fail_errno(err, errno, "cgroup", "open %s", cg->path);
	/* ours while we live: the next runs' stale clean-up leaves it alone */
	flock(cg->fd, LOCK_SH | LOCK_NB);
	return 0;
}

int cd_cgroup_setup(const struct cordon_config *c, const char *id, uid_t host_uid,
		    struct cd_cgroup *cg, struct cd_rlimit *rlimits, struct cordon_error *err)
{
	_cleanup_free_ char *why = NULL;
	int r;

	*cg = (struct cd_cgroup){ .fd = -1 };
	if (c->cgroup_mode == CORDON_CGROUP_OFF)
		return no_cgroup(c, "--cgroup=off", cg, err);
	cg->parent = choose_parent(c, &why);
	if (!cg->parent)
		r = no_cgroup(c, why ? why : "out of memory", cg, err);
	else {
		clean_stale(cg->parent);
		r = make_cgroup(cg, id, err);
		if (r < 0 && !err->msg[0]) {
			why = cd_strdup_printf("cannot make a cgroup in %s: %s", cg->parent,
					       strerror(-r));
			r = no_cgroup(c, why ? why : "out of memory", cg, err);
		} else if (r >= 0) {
			r = apply_limits(c, cg, err);
		}
	}
	if (r < 0)
		return r;
	return fallbacks(c, host_uid, cg, rlimits) < 0
		       ? cd_fail(err, ENOMEM, "cgroup", "out of memory")
		       : 0;
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

void cd_cgroup_usage(const struct cd_cgroup *cg, struct cd_cgroup_usage *u)
{
	*u = (struct cd_cgroup_usage){ 0 };
	if (!cg->path)
		return;
	u->valid = true;
	u->has_memory_peak = read_u64(cg->path, "memory.peak", &u->memory_peak);
	u->has_cpu = read_key(cg->path, "cpu.stat", "user_usec", &u->user_us) &&
		     read_key(cg->path, "cpu.stat", "system_usec", &u->system_us);
	u->has_pids_peak = read_u64(cg->path, "pids.peak", &u->pids_peak);
	read_key(cg->path, "memory.events", "oom_kill", &u->oom_kills);
	read_key(cg->path, "pids.events", "max", &u->pids_max_hits);
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
	cd_closep(&cg->fd);
	cg->fd = -1;
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

/* The detached remover: wait for the cgroup to empty, remove it, exit. It keeps cg->fd (and
 * so the lock that tells other cordons' clean-up the cgroup is in use) and nothing else. */
static _Noreturn void remover(const struct cd_cgroup *cg)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	setsid();
	for (int i = 0; i < 3 && null >= 0; i++)
		dup2(null, i); /* hold none of the caller's pipes open */
	if (cg->fd > 3)
		close_range(3, (unsigned)cg->fd - 1, 0);
	close_range((unsigned)(cg->fd >= 3 ? cg->fd + 1 : 3), ~0u, 0);
	remove_when_empty(cg->path);
	_exit(0);
}

void cd_cgroup_release(struct cd_cgroup *cg)
{
	uint64_t populated = 1;
	pid_t pid = -1;

	if (!cg->path)
		return;
	cd_cgroup_kill(cg);
	if (!read_key(cg->path, "cgroup.events", "populated", &populated) || populated)
		pid = fork();
	if (pid == 0)
		remover(cg);
	if (pid < 0) /* empty already, or no fork: remove it here */
		remove_when_empty(cg->path);
	forget(cg);
}

void cd_cgroup_done(struct cd_cgroup *cg)
{
	cd_cgroup_remove(cg);
	free(cg->parent);
	free(cg->path_reported);
	free(cg->memory_max);
	free(cg->swap_max);
	free(cg->cpu_max);
	free(cg->pids_max);
	cd_strv_free(cg->missing);
	cd_strv_free(cg->fallbacks);
	*cg = (struct cd_cgroup){ .fd = -1 };
}
