/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.c - the config object: setters, validation, and the parsers for sizes, durations and
 * resource limits. Runs in the supervisor, before anything is started. The parsers are pure.
 */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "allow.h"
#include "config.h"
#include "nsjoin.h"
#include "policy.h"
#include "protect.h"
#include "sysctl.h"
#include "workdir.h"

#define SIZE_HINT     "use 512K, 64M, 1G"
#define DURATION_HINT "use 500ms, 30s, 2m, 1h"

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit size_units[] = {
	{ "", 1 },           { "b", 1 },          { "k", 1ull << 10 }, { "kb", 1ull << 10 },
	{ "kib", 1ull << 10 }, { "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "mib", 1ull << 20 },
	{ "g", 1ull << 30 }, { "gb", 1ull << 30 }, { "gib", 1ull << 30 }, { "t", 1ull << 40 },
	{ "tb", 1ull << 40 }, { "tib", 1ull << 40 },
};

static const struct unit duration_units[] = {
	{ "", NSEC_PER_SEC },         { "ns", 1 },
	{ "us", NSEC_PER_USEC },      { "ms", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC },        { "m", 60 * NSEC_PER_SEC },
	{ "min", 60 * NSEC_PER_SEC }, { "h", 3600 * NSEC_PER_SEC },
	{ "d", 86400 * NSEC_PER_SEC },
};

/* "12.5" followed by a unit from the table: the value times the unit, truncated.
 * 0 on success, -EINVAL for junk, -ERANGE for overflow. */
static int parse_scaled(const char *s, const struct unit *units, size_t n_units, uint64_t *ret)
{
	unsigned __int128 whole = 0, frac = 0, frac_div = 1, v;
	const char *p = s;
	const struct unit *u = NULL;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (unsigned)(*p - '0');
		if (whole > UINT64_MAX)
			return -ERANGE;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div < 1000000000000000000ull) { /* 18 digits are plenty */
				frac = frac * 10 + (unsigned)(*p - '0');
				frac_div *= 10;
			}
		}
	}
	for (size_t i = 0; i < n_units; i++)
		if (strcasecmp(p, units[i].name) == 0)
			u = &units[i];
	if (!u)
		return -EINVAL;
	v = whole * u->mult + frac * u->mult / frac_div;
	if (v > UINT64_MAX)
		return -ERANGE;
	*ret = (uint64_t)v;
	return 0;
}

int cordon_parse_size(const char *s, uint64_t *ret, struct cordon_error *err)
{
	int r = parse_scaled(s, size_units, CD_ELEMENTSOF(size_units), ret);

	if (r == -ERANGE)
		return cd_fail(err, 0, "size", "\"%s\" is too large", s);
	if (r < 0)
		return cd_fail(err, 0, "size", "\"%s\" is not a size (" SIZE_HINT ")", s);
	return 0;
}

int cordon_parse_cpus(const char *s, uint64_t *ret, struct cordon_error *err)
{
	static const struct unit cpu_units[] = { { "", 1000 } };
	uint64_t v;
	int r = parse_scaled(s, cpu_units, CD_ELEMENTSOF(cpu_units), &v);

	/* the kernel takes no quota under 1 ms of cpu.max's 100 ms period */
	if (r == 0 && v < CD_MIN_MILLICPUS)
		return cd_fail(err, 0, "cpus", "\"%s\": must be at least 0.01", s);
	if (r == -ERANGE || (r == 0 && v > CD_MAX_MILLICPUS))
		return cd_fail(err, 0, "cpus", "\"%s\" is too many (at most 1000)", s);
	if (r < 0)
		return cd_fail(err, 0, "cpus", "\"%s\" is not a number of CPUs (use 0.5, 1, 2.5)", s);
	*ret = v;
	return 0;
}

int cordon_parse_duration(const char *s, uint64_t *ret_ns, struct cordon_error *err)
{
	uint64_t v;
	int r = parse_scaled(s, duration_units, CD_ELEMENTSOF(duration_units), &v);

	if (r == -ERANGE || (r == 0 && v > CD_MAX_DURATION))
		return cd_fail(err, 0, "duration", "\"%s\" is too long (at most 100 years)", s);
	if (r < 0)
		return cd_fail(err, 0, "duration", "\"%s\" is not a duration (" DURATION_HINT ")", s);
	*ret_ns = v;
	return 0;
}

static int parse_count(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_rlimit_value(const char *s, enum cordon_limit_unit unit, uint64_t *ret)
{
	uint64_t ns, div;
	int r;

	if (strcasecmp(s, "unlimited") == 0 || strcasecmp(s, "infinity") == 0) {
		*ret = RLIM_INFINITY;
		return 0;
	}
	switch (unit) {
	case CORDON_UNIT_BYTES:
		return parse_scaled(s, size_units, CD_ELEMENTSOF(size_units), ret);
	case CORDON_UNIT_SECONDS:
	case CORDON_UNIT_MICROSECONDS:
		r = parse_scaled(s, duration_units, CD_ELEMENTSOF(duration_units), &ns);
		if (r < 0)
			return r;
		/* round up, without overflow: a limit never becomes 0 by rounding */
		div = unit == CORDON_UNIT_SECONDS ? NSEC_PER_SEC : NSEC_PER_USEC;
		*ret = ns / div + (ns % div != 0);
		return 0;
	case CORDON_UNIT_COUNT:
	case CORDON_UNIT_MILLICPU:
	default:
		return parse_count(s, ret);
	}
}

static const char *rlimit_hint(enum cordon_limit_unit unit)
{
	switch (unit) {
	case CORDON_UNIT_BYTES:
		return "a size such as 64M, or unlimited";
	case CORDON_UNIT_SECONDS:
	case CORDON_UNIT_MICROSECONDS:
		return "a duration such as 30s, or unlimited";
	case CORDON_UNIT_COUNT:
	case CORDON_UNIT_MILLICPU:
	default:
		return "a number, or unlimited";
	}
}

/* "SOFT[:HARD]" of an rlimit row; messages name the limit when prefix is set */
static int parse_soft_hard(const struct cd_limit_def *d, const char *value, bool prefix,
			   uint64_t *ret_soft, uint64_t *ret_hard, struct cordon_error *err)
{
	const char *name = prefix ? d->info.name : "", *sep = prefix ? ": " : "";
	char *soft_s = strdupa(value), *hard_s = strchr(soft_s, ':');
	uint64_t soft, hard;

	if (hard_s)
		*hard_s++ = '\0';
	if (parse_rlimit_value(soft_s, d->info.unit, &soft) < 0)
		return cd_fail(err, 0, "rlimit", "%s%s\"%s\" is not %s", name, sep, soft_s,
			       rlimit_hint(d->info.unit));
	hard = soft;
	if (hard_s && parse_rlimit_value(hard_s, d->info.unit, &hard) < 0)
		return cd_fail(err, 0, "rlimit", "%s%s\"%s\" is not %s", name, sep, hard_s,
			       rlimit_hint(d->info.unit));
	if (soft > hard)
		return cd_fail(err, 0, "rlimit", "%s%ssoft limit %s is above hard limit %s", name,
			       sep, soft_s, hard_s);
	*ret_soft = soft;
	*ret_hard = hard;
	return 0;
}

int cordon_parse_rlimit(const char *spec, int *ret_resource, uint64_t *ret_soft,
			uint64_t *ret_hard, struct cordon_error *err)
{
	const char *eq = strchr(spec, '=');
	const struct cd_limit_def *d;
	_cleanup_free_ char *name = NULL;
	int r;

	if (!eq)
		return cd_fail(err, 0, "rlimit", "\"%s\" is not NAME=SOFT[:HARD] (e.g. nofile=1024)",
			       spec);
	name = strndup(spec, (size_t)(eq - spec));
	if (!name)
		return cd_fail(err, ENOMEM, "rlimit", "out of memory");
	d = cd_limit_find(name);
	if (!d || d->info.kind != CORDON_LIMIT_RLIMIT)
		return cd_fail(err, 0, "rlimit", "unknown limit \"%s\" (%s)", name,
			       cd_limit_rlimit_names());
	r = parse_soft_hard(d, eq + 1, true, ret_soft, ret_hard, err);
	if (r < 0)
		return r;
	*ret_resource = d->index;
	return 0;
}

static bool is_unlimited(const char *s)
{
	return strcmp(s, "unlimited") == 0 || strcmp(s, "max") == 0;
}

/* A cgroup row's one value, in its unit; every message as the value's own */
static int parse_cgroup_value(const struct cd_limit_def *d, const char *s, uint64_t *ret,
			      struct cordon_error *err)
{
	int r;

	if (is_unlimited(s)) {
		*ret = CORDON_UNLIMITED;
		return 0;
	}
	switch (d->info.unit) {
	case CORDON_UNIT_BYTES:
		return cordon_parse_size(s, ret, err);
	case CORDON_UNIT_MILLICPU:
		return cordon_parse_cpus(s, ret, err);
	default:
		r = parse_count(s, ret);
		if (r < 0)
			return cd_fail(err, 0, d->info.name, "\"%s\" is not a number of processes", s);
		return 0;
	}
}

/* SIGXCPU at the limit, SIGKILL a second later (the kernel's hard limit). */
static int parse_grace(const char *s, uint64_t *ret_soft, uint64_t *ret_hard,
		       struct cordon_error *err)
{
	uint64_t ns;
	int r = cordon_parse_duration(s, &ns, err);

	if (r < 0)
		return r;
	if (ns == 0)
		return cd_fail(err, 0, "cpu", "must be more than 0");
	*ret_soft = ns / NSEC_PER_SEC + (ns % NSEC_PER_SEC != 0);
	*ret_hard = *ret_soft + 1;
	return 0;
}

int cordon_parse_limit(const char *name, const char *s, uint64_t *ret_soft, uint64_t *ret_hard,
		       struct cordon_error *err)
{
	const struct cd_limit_def *d = cd_limit_find(name);
	int r;

	if (!d)
		return cd_fail(err, 0, "limit", "unknown limit \"%s\"", name ? name : "");
	if (d->info.kind == CORDON_LIMIT_RLIMIT)
		return d->hard_plus_one ? parse_grace(s, ret_soft, ret_hard, err)
					: parse_soft_hard(d, s, false, ret_soft, ret_hard, err);
	r = parse_cgroup_value(d, s, ret_soft, err);
	if (r < 0)
		return r;
	*ret_hard = *ret_soft;
	return 0;
}

char *cd_path_normalize(const char *p)
{
	_cleanup_free_ char *out = NULL;
	size_t n = 0;

	if (!p || p[0] != '/') {
		errno = EINVAL;
		return NULL;
	}
	out = malloc(strlen(p) + 2);
	if (!out)
		return NULL;
	while (*p) {
		const char *end;
		size_t len;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			errno = EINVAL;
			return NULL;
		}
		if (len > 0 && !(len == 1 && p[0] == '.')) {
			out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
		}
		p = end;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return CD_TAKE_PTR(out);
}

static int set_string(char **field, const char *value, const char *step, struct cordon_error *err)
{
	char *copy = strdup(value);

	if (!copy)
		return cd_fail(err, ENOMEM, step, "out of memory");
	free(*field);
	*field = copy;
	return 0;
}

/* An absolute path inside the sandbox, normalized, outside the trees cordon manages. */
static int inside_path(const char *p, const char *step, bool allow_root, char **ret,
		       struct cordon_error *err)
{
	static const char *const managed[] = { "/proc", "/sys", "/dev" };
	_cleanup_free_ char *n = cd_path_normalize(p);

	if (!n && errno == ENOMEM)
		return cd_fail(err, ENOMEM, step, "out of memory");
	if (!n)
		return cd_fail(err, 0, step, "\"%s\" is not an absolute path without \"..\"", p);
	if (!allow_root && strcmp(n, "/") == 0)
		return cd_fail(err, 0, step, "\"%s\": cannot replace the root directory", p);
	for (size_t i = 0; i < CD_ELEMENTSOF(managed); i++)
		if (cd_path_startswith(n, managed[i]))
			return cd_fail(err, 0, step, "\"%s\": %s is managed by cordon", p,
				       managed[i]);
	if (strlen(n) >= PATH_MAX)
		return cd_fail(err, ENAMETOOLONG, step, "\"%s\": path too long", p);
	*ret = CD_TAKE_PTR(n);
	return 0;
}

/* A host path that exists, resolved as hostpath.c does (only root's and the caller's symlinks,
 * none inside an earlier workdir): its canonical path, which cordon_run() opens again without
 * following any symlink. */
static int host_path(const char *p, const char *step, bool want_dir, char **ret,
		     struct cordon_error *err)
{
	struct cd_hostpath hp;
	struct cd_marks marks;
	int r;

	if (!p || !*p)
		return cd_fail(err, 0, step, "empty path");
	cd_marks_load(&marks);
	r = cd_hostpath_open(p, want_dir ? CD_HOSTPATH_DIR : 0, step, &marks, &hp, err);
	cd_marks_done(&marks);
	if (r < 0)
		return r;
	*ret = CD_TAKE_PTR(hp.path);
	cd_hostpath_done(&hp);
	return 0;
}

struct cordon_config *cordon_config_new(void)
{
	struct cordon_config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fs.tmp_size = CD_DEFAULT_TMP_SIZE;
	c->fs.home_size = CD_DEFAULT_HOME_SIZE;
	c->cow.size = CD_DEFAULT_COW_SIZE;
	c->limits.kill_after_ns = CD_DEFAULT_KILL_AFTER;
	c->outputs.report_fd = -1;
	c->net.mode = CORDON_NET_NONE;
	for (size_t i = 0; i < CD_JOIN_N; i++)
		c->ns.join[i] = -1;
	c->net.idle_ns = CD_DEFAULT_NET_IDLE;
	c->net.max_conns = CD_DEFAULT_NET_CONNS;
	for (size_t i = 0; i < CD_CG_N; i++) {
		uint64_t v = cd_limit_table[i].default_value;

		c->limits.cgroup[i] = (struct cd_rlimit){ .soft = v, .hard = v };
	}
	/* core dumps off by default: a dump of the sandbox lands in its cwd, the workdir */
	c->limits.rlimits[RLIMIT_CORE] = (struct cd_rlimit){ .set = true, .soft = 0, .hard = 0 };
	return c;
}

void cordon_config_free(struct cordon_config *c)
{
	if (!c)
		return;
	cd_strv_free(c->command.argv);
	for (size_t i = 0; i < c->net.n_allow; i++)
		cd_allow_free(&c->net.allow[i]);
	free(c->net.allow);
	for (size_t i = 0; i < CD_JOIN_N; i++)
		cd_closep(&c->ns.join[i]);
	free(c->fs.workdir);
	free(c->fs.workdir_target);
	free(c->command.chdir);
	free(c->fs.rootfs);
	for (size_t i = 0; i < c->fs.n_binds; i++) {
		free(c->fs.binds[i].src);
		free(c->fs.binds[i].dst);
	}
	free(c->fs.binds);
	for (size_t i = 0; i < c->fs.n_tmpfs; i++)
		free(c->fs.tmpfs[i].path);
	free(c->fs.tmpfs);
	cd_strv_free(c->fs.hide);
	cd_strv_free(c->command.env);
	cd_strv_free(c->command.pass_env);
	free(c->identity.hostname);
	free(c->identity.account_name);
	free(c->identity.account_home);
	free(c->command.git_identity[0]);
	free(c->command.git_identity[1]);
	free(c->outputs.report_path);
	free(c->seccomp.path);
	free(c->seccomp.display);
	free(c->seccomp.bpf);
	free(c->limits.cgroup_parent);
	free(c->outputs.audit_path);
	free(c->outputs.capture_dir);
	free(c->cow.layer_dir);
	free(c->cow.from);
	for (size_t i = 0; i < c->protect.n; i++)
		free(c->protect.v[i].glob);
	free(c->protect.v);
	for (size_t i = 0; i < c->sysctl.n; i++) {
		free(c->sysctl.v[i].key);
		free(c->sysctl.v[i].path);
		free(c->sysctl.v[i].value);
	}
	free(c->sysctl.v);
	free(c);
}

int cordon_config_set_command(struct cordon_config *c, const char *const argv[],
			      struct cordon_error *err)
{
	char **copy;

	if (!argv || !argv[0] || !argv[0][0])
		return cd_fail(err, 0, "command", "no command given");
	copy = cd_strv_copy(argv);
	if (!copy)
		return cd_fail(err, ENOMEM, "command", "out of memory");
	cd_strv_free(c->command.argv);
	c->command.argv = copy;
	return 0;
}

/* Opened and checked at once, so that a bad workdir fails when it is given; cordon_run() opens
 * it again (workdir.c), and that descriptor is the one every step uses. */
int cordon_config_set_workdir(struct cordon_config *c, const char *dir, struct cordon_error *err)
{
	struct cd_hostpath hp;
	struct cd_marks marks;
	int r;

	if (!dir || !*dir)
		return cd_fail(err, 0, "workdir", "empty path");
	cd_marks_load(&marks);
	r = cd_workdir_open(dir, &marks, &hp, err);
	cd_marks_done(&marks);
	if (r < 0)
		return r;
	cd_hostpath_done(&hp);
	return set_string(&c->fs.workdir, dir, "workdir", err);
}

int cordon_config_set_workdir_target(struct cordon_config *c, const char *path,
				     struct cordon_error *err)
{
	char *n;
	int r = inside_path(path, "workdir-target", false, &n, err);

	if (r < 0)
		return r;
	free(c->fs.workdir_target);
	c->fs.workdir_target = n;
	return 0;
}

/* A relative -C, lexically below the workdir: "a/./b/../c" -> "a/c", "." -> ""; NULL with errno
 * EINVAL when a ".." climbs out of it, ENOMEM. */
static char *below_workdir(const char *p)
{
	_cleanup_free_ char *out = malloc(strlen(p) + 1);
	size_t n = 0;

	if (!out)
		return NULL;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (n == 0) {
				errno = EINVAL;
				return NULL;
			}
			while (n > 0 && out[n - 1] != '/')
				n--;
			n = n > 0 ? n - 1 : 0; /* and the '/' before it */
		} else if (len > 0 && !(len == 1 && p[0] == '.')) {
			if (n > 0)
				out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
		}
		p = *end ? end + 1 : end;
	}
	out[n] = '\0';
	return CD_TAKE_PTR(out);
}

int cordon_config_set_chdir(struct cordon_config *c, const char *path, struct cordon_error *err)
{
	bool relative = path && path[0] != '/' && path[0];
	_cleanup_free_ char *n = relative ? below_workdir(path) : cd_path_normalize(path);

	if (!n && errno == ENOMEM)
		return cd_fail(err, ENOMEM, "chdir", "out of memory");
	if (!n && relative)
		return cd_fail(err, 0, "chdir", "\"%s\": outside the workdir", path);
	if (!n)
		return cd_fail(err, 0, "chdir", "\"%s\" is not an absolute path without \"..\"",
			       path);
	free(c->command.chdir);
	c->command.chdir = CD_TAKE_PTR(n);
	c->command.chdir_relative = relative;
	return 0;
}

int cordon_config_set_rootfs(struct cordon_config *c, const char *dir, struct cordon_error *err)
{
	char *r;
	int ret = host_path(dir, "rootfs", true, &r, err);

	if (ret < 0)
		return ret;
	free(c->fs.rootfs);
	c->fs.rootfs = r;
	return 0;
}

int cordon_config_add_ro_bind(struct cordon_config *c, const char *src, const char *dst,
			      struct cordon_error *err)
{
	_cleanup_free_ char *s = NULL, *d = NULL;
	struct cd_bind *nb;
	int r;

	r = host_path(src, "ro-bind", false, &s, err);
	if (r < 0)
		return r;
	r = inside_path(dst ? dst : s, "ro-bind", false, &d, err);
	if (r < 0)
		return r;
	nb = realloc(c->fs.binds, (c->fs.n_binds + 1) * sizeof(*nb));
	if (!nb)
		return cd_fail(err, ENOMEM, "ro-bind", "out of memory");
	c->fs.binds = nb;
	c->fs.binds[c->fs.n_binds++] = (struct cd_bind){ CD_TAKE_PTR(s), CD_TAKE_PTR(d) };
	return 0;
}

int cordon_config_add_tmpfs(struct cordon_config *c, const char *path, uint64_t size,
			    struct cordon_error *err)
{
	struct cd_tmpfs *nt;
	char *p;
	int r = inside_path(path, "tmpfs", false, &p, err);

	if (r < 0)
		return r;
	nt = realloc(c->fs.tmpfs, (c->fs.n_tmpfs + 1) * sizeof(*nt));
	if (!nt) {
		free(p);
		return cd_fail(err, ENOMEM, "tmpfs", "out of memory");
	}
	c->fs.tmpfs = nt;
	c->fs.tmpfs[c->fs.n_tmpfs++] = (struct cd_tmpfs){ p, size ? size : CD_DEFAULT_TMPFS_SIZE };
	return 0;
}

int cordon_config_add_hide(struct cordon_config *c, const char *path, struct cordon_error *err)
{
	_cleanup_free_ char *p = NULL;
	int r = inside_path(path, "hide", false, &p, err);

	if (r < 0)
		return r;
	if (cd_strv_push(&c->fs.hide, p) < 0)
		return cd_fail(err, ENOMEM, "hide", "out of memory");
	return 0;
}

int cordon_config_set_cow(struct cordon_config *c, int on, struct cordon_error *err)
{
	(void)err;
	c->cow.on = on != 0;
	if (!c->cow.on)
		c->cow.from = (free(c->cow.from), NULL);
	return 0;
}

int cordon_config_set_cow_size(struct cordon_config *c, uint64_t size, struct cordon_error *err)
{
	if (size < (1u << 20))
		return cd_fail(err, 0, "cow-size", "at least 1M (the layer's tmpfs)");
	c->cow.size = size;
	return 0;
}

int cordon_config_set_layer_dir(struct cordon_config *c, const char *dir,
				struct cordon_error *err)
{
	if (!dir || !*dir)
		return cd_fail(err, 0, "layer-dir", "empty path");
	return set_string(&c->cow.layer_dir, dir, "layer-dir", err);
}

int cordon_config_set_cow_from(struct cordon_config *c, const char *id, struct cordon_error *err)
{
	size_t n = id ? strspn(id, "0123456789abcdef") : 0;

	if (!id || n != 16 || id[n])
		return cd_fail(err, 0, "cow-from", "\"%s\" is not a layer id (16 hex digits: "
			       "cordon layers lists them)", id ? id : "");
	c->cow.on = true;
	return set_string(&c->cow.from, id, "cow-from", err);
}

int cordon_config_protect(struct cordon_config *c, const char *glob, int deny,
			  struct cordon_error *err)
{
	struct cd_protect *np;
	int r = cd_protect_glob_check(glob, err);
	char *copy;

	if (r < 0) {
		snprintf(err->step, sizeof(err->step), "%s", deny ? "deny" : "protect");
		return r;
	}
	copy = strdup(glob);
	np = copy ? realloc(c->protect.v, (c->protect.n + 1) * sizeof(*np)) : NULL;
	if (!np) {
		free(copy);
		return cd_fail(err, ENOMEM, "protect", "out of memory");
	}
	c->protect.v = np;
	c->protect.v[c->protect.n++] = (struct cd_protect){ copy, deny != 0 };
	return 0;
}

int cordon_config_set_default_protect(struct cordon_config *c, int on, struct cordon_error *err)
{
	(void)err;
	c->protect.no_defaults = !on;
	return 0;
}

int cordon_config_set_home_size(struct cordon_config *c, uint64_t size, struct cordon_error *err)
{
	if (size == 0)
		return cd_fail(err, 0, "home-size", "must be more than 0");
	c->fs.home_size = size;
	return 0;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if (iscntrl((unsigned char)*s))
			return true;
	return false;
}

/* "Name <email>": a name, then one <email> at the end with no space, < or > in it; no control
 * byte anywhere (git would strip or refuse what these would smuggle) */
int cordon_config_set_git_identity(struct cordon_config *c, const char *spec,
				   struct cordon_error *err)
{
	const char *lt = spec ? strchr(spec, '<') : NULL;
	size_t name_len = lt ? (size_t)(lt - spec) : 0;
	_cleanup_free_ char *name = NULL, *email = NULL;

	while (name_len && spec[name_len - 1] == ' ')
		name_len--;
	if (!lt || !name_len || has_control(spec) || strchr(spec, '>') != spec + strlen(spec) - 1 ||
	    lt[1] == '>' || strcspn(lt + 1, "< \t>") != strlen(lt + 1) - 1)
		return cd_fail(err, 0, "git-identity", "\"%s\" is not \"Name <email>\"",
			       spec ? spec : "");
	name = strndup(spec, name_len);
	email = strndup(lt + 1, strlen(lt) - 2);
	if (!name || !email)
		return cd_fail(err, ENOMEM, "git-identity", "out of memory");
	free(c->command.git_identity[0]);
	free(c->command.git_identity[1]);
	c->command.git_identity[0] = CD_TAKE_PTR(name);
	c->command.git_identity[1] = CD_TAKE_PTR(email);
	return 0;
}

int cordon_config_set_tmp_size(struct cordon_config *c, uint64_t size, struct cordon_error *err)
{
	if (size == 0)
		return cd_fail(err, 0, "tmp-size", "must be more than 0");
	c->fs.tmp_size = size;
	return 0;
}

int cordon_config_allow_net(struct cordon_config *c, const char *spec, struct cordon_error *err)
{
	struct cd_allow a, *v;
	int r = cd_allow_parse(spec ? spec : "", &a, err);

	if (r < 0)
		return r;
	v = reallocarray(c->net.allow, c->net.n_allow + 1, sizeof(*v));
	if (!v) {
		cd_allow_free(&a);
		return cd_fail(err, ENOMEM, "allow-net", "out of memory");
	}
	c->net.allow = v;
	c->net.allow[c->net.n_allow++] = a;
	return 0;
}

int cordon_config_set_net_idle_timeout(struct cordon_config *c, uint64_t ns,
				       struct cordon_error *err)
{
	if (ns < NSEC_PER_SEC / 10 || ns > CD_MAX_DURATION)
		return cd_fail(err, 0, "net-idle-timeout", "must be at least 0.1s");
	c->net.idle_ns = ns;
	return 0;
}

int cordon_config_set_net_max_connections(struct cordon_config *c, unsigned n,
					  struct cordon_error *err)
{
	if (n == 0 || n > 65536)
		return cd_fail(err, 0, "net-max-connections", "must be in 1-65536");
	c->net.max_conns = n;
	return 0;
}

int cordon_config_set_net(struct cordon_config *c, enum cordon_net net, struct cordon_error *err)
{
	if (net != CORDON_NET_NONE && net != CORDON_NET_HOST)
		return cd_fail(err, 0, "net", "unknown network mode %d", (int)net);
	c->net.mode = net;
	return 0;
}

int cordon_config_join_ns(struct cordon_config *c, int nstype, int fd, struct cordon_error *err)
{
	int slot = cd_nsjoin_slot(nstype), r, copy;

	r = cd_nsjoin_check(fd, nstype, err);
	if (r < 0)
		return r;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (copy < 0)
		return cd_fail_errno(err, errno, "namespaces", "dup");
	cd_closep(&c->ns.join[slot]);
	c->ns.join[slot] = copy;
	return 0;
}

/* key as a message may show it: itself when it is one line of printable characters */
static const char *shown_key(const char *key)
{
	size_t n = strlen(key);

	if (n == 0 || n > CD_SYSCTL_KEY_MAX)
		return "(a key of 1 to 200 characters)";
	for (size_t i = 0; i < n; i++)
		if (key[i] <= 0x20 || key[i] > 0x7e)
			return "(a key with a space or control character)";
	return key;
}

int cordon_config_set_sysctl(struct cordon_config *c, const char *key, const char *value,
			     struct cordon_error *err)
{
	struct cd_sysctl_key k;
	struct cd_sysctl *v;
	const char *why;
	size_t i;

	if (!key || !value)
		return cd_fail(err, 0, "sysctl", "a key and a value are needed");
	if (cd_sysctl_key_check(key, &k, &why) < 0)
		return cd_fail(err, 0, "sysctl", "%s: %s", shown_key(key), why);
	if (cd_sysctl_value_check(value, &why) < 0)
		return cd_fail(err, 0, "sysctl", "%s: %s", key, why);
	/* the same file twice (dots or slashes): the later value */
	for (i = 0; i < c->sysctl.n && strcmp(c->sysctl.v[i].path, k.path) != 0; i++)
		;
	if (i == c->sysctl.n) {
		if (c->sysctl.n == CD_SYSCTL_MAX)
			return cd_fail(err, 0, "sysctl", "%s: more than %d sysctls", key,
				       CD_SYSCTL_MAX);
		v = reallocarray(c->sysctl.v, c->sysctl.n + 1, sizeof(*v));
		if (!v)
			return cd_fail(err, ENOMEM, "sysctl", "out of memory");
		c->sysctl.v = v;
		c->sysctl.v[i] = (struct cd_sysctl){ .net = k.net };
		if (set_string(&v[i].path, k.path, "sysctl", err) < 0)
			return -ENOMEM;
		c->sysctl.n++;
	}
	v = &c->sysctl.v[i];
	if (set_string(&v->key, key, "sysctl", err) < 0 ||
	    set_string(&v->value, value, "sysctl", err) < 0)
		return -ENOMEM;
	return 0;
}

int cordon_config_set_timeout(struct cordon_config *c, uint64_t ns, struct cordon_error *err)
{
	if (ns > CD_MAX_DURATION)
		return cd_fail(err, 0, "timeout", "too long (at most 100 years)");
	c->limits.timeout_ns = ns;
	return 0;
}

int cordon_config_set_kill_after(struct cordon_config *c, uint64_t ns, struct cordon_error *err)
{
	if (ns > CD_MAX_DURATION)
		return cd_fail(err, 0, "kill-after", "too long (at most 100 years)");
	c->limits.kill_after_ns = ns;
	return 0;
}

int cordon_config_set_rlimit(struct cordon_config *c, int resource, uint64_t soft, uint64_t hard,
			     struct cordon_error *err)
{
	if (resource < 0 || resource >= RLIM_NLIMITS || !cd_rlimit_name(resource))
		return cd_fail(err, 0, "rlimit", "unknown resource %d", resource);
	if (soft > hard)
		return cd_fail(err, 0, "rlimit", "%s: soft limit above hard limit",
			       cd_rlimit_name(resource));
	c->limits.rlimits[resource] = (struct cd_rlimit){ .set = true, .soft = soft, .hard = hard };
	return 0;
}

static bool valid_env_key(const char *key)
{
	return key && key[0] && !strchr(key, '=');
}

int cordon_config_set_env(struct cordon_config *c, const char *key, const char *value,
			  struct cordon_error *err)
{
	_cleanup_free_ char *kv = NULL;

	if (!valid_env_key(key))
		return cd_fail(err, 0, "env", "\"%s\" is not a variable name", key ? key : "");
	kv = cd_strdup_printf("%s=%s", key, value ? value : "");
	if (!kv || cd_strv_push(&c->command.env, kv) < 0)
		return cd_fail(err, ENOMEM, "env", "out of memory");
	return 0;
}

int cordon_config_pass_env(struct cordon_config *c, const char *key, struct cordon_error *err)
{
	if (!valid_env_key(key))
		return cd_fail(err, 0, "pass-env", "\"%s\" is not a variable name",
			       key ? key : "");
	if (cd_strv_push(&c->command.pass_env, key) < 0)
		return cd_fail(err, ENOMEM, "pass-env", "out of memory");
	return 0;
}

int cordon_config_set_user_share(struct cordon_config *c, unsigned n, struct cordon_error *err)
{
	if (n == 0 || n > CD_MAX_USER_SHARE)
		return cd_fail(err, 0, "user-share", "%u: not a number of sandboxes from 1 to %u", n,
			       CD_MAX_USER_SHARE);
	c->limits.user_share = n;
	return 0;
}

int cordon_config_set_hostname(struct cordon_config *c, const char *name,
			       struct cordon_error *err)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 64 || name[0] == '-' || name[0] == '.')
		return cd_fail(err, 0, "hostname", "\"%s\" is not a hostname (1-64 of a-z 0-9 - .)",
			       name ? name : "");
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '-' && name[i] != '.')
			return cd_fail(err, 0, "hostname",
				       "\"%s\" is not a hostname (1-64 of a-z 0-9 - .)", name);
	return set_string(&c->identity.hostname, name, "hostname", err);
}

int cordon_config_set_uid(struct cordon_config *c, uid_t uid, struct cordon_error *err)
{
	if (uid == (uid_t)-1)
		return cd_fail(err, 0, "uid", "%u is not a valid uid", uid);
	c->identity.uid = uid;
	c->identity.uid_set = true;
	return 0;
}

int cordon_config_set_gid(struct cordon_config *c, gid_t gid, struct cordon_error *err)
{
	if (gid == (gid_t)-1)
		return cd_fail(err, 0, "gid", "%u is not a valid gid", gid);
	c->identity.gid = gid;
	c->identity.gid_set = true;
	return 0;
}

/* A user name as useradd takes it (a-z 0-9 _ -, not first a digit or -), at most 32 */
static bool account_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 32 || name[0] == '-' || isdigit((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)name[i]) && !isdigit((unsigned char)name[i]) &&
		    name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

int cordon_config_set_account(struct cordon_config *c, const char *name, const char *home,
			      struct cordon_error *err)
{
	_cleanup_free_ char *h = NULL;

	if (!account_name_ok(name))
		return cd_fail(err, 0, "account", "\"%s\" is not a user name (1-32 of a-z 0-9 _ -)",
			       name ? name : "");
	h = home ? cd_path_normalize(home) : NULL;
	if (!h || strcmp(h, "/") == 0 || strpbrk(h, ":\n"))
		return cd_fail(err, 0, "account", "\"%s\" is not a home (an absolute path, no ':')",
			       home ? home : "");
	if (set_string(&c->identity.account_name, name, "account", err) < 0)
		return -ENOMEM;
	free(c->identity.account_home);
	c->identity.account_home = CD_TAKE_PTR(h);
	return 0;
}

int cordon_config_set_report_file(struct cordon_config *c, const char *path,
				  struct cordon_error *err)
{
	if (!path || !*path)
		return cd_fail(err, 0, "report", "empty path");
	return set_string(&c->outputs.report_path, path, "report", err);
}

int cordon_config_set_report_fd(struct cordon_config *c, int fd, struct cordon_error *err)
{
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

	if (fl < 0)
		return cd_fail(err, EBADF, "report-fd", "%d is not an open file descriptor", fd);
	if ((fl & O_ACCMODE) == O_RDONLY)
		return cd_fail(err, EBADF, "report-fd", "%d is not open for writing", fd);
	c->outputs.report_fd = fd;
	return 0;
}

void cordon_config_set_fast_exit(struct cordon_config *c, int on)
{
	c->command.fast_exit = on != 0;
}

void cordon_config_set_log(struct cordon_config *c, cordon_log_fn fn, void *userdata)
{
	c->log.fn = fn;
	c->log.data = userdata;
}

void cordon_config_set_notice(struct cordon_config *c, cordon_log_fn fn, void *userdata)
{
	c->log.notice = fn;
	c->log.notice_data = userdata;
}


int cordon_config_set_seccomp_policy(struct cordon_config *c, const char *name_or_path,
				     struct cordon_error *err)
{
	_cleanup_free_ char *path = NULL, *display = NULL;

	if (!name_or_path || !name_or_path[0])
		return cd_fail(err, 0, "seccomp-policy", "empty policy name");
	c->seccomp.none = strcmp(name_or_path, "none") == 0;
	if (c->seccomp.none)
		return 0;
	path = cd_policy_find(name_or_path, cd_policy_search_path(), err);
	if (!path)
		return -(err && err->code ? err->code : EINVAL);
	display = cd_policy_display_name(name_or_path);
	if (!display)
		return cd_fail(err, ENOMEM, "seccomp-policy", "out of memory");
	free(c->seccomp.path);
	free(c->seccomp.display);
	c->seccomp.path = CD_TAKE_PTR(path);
	c->seccomp.display = CD_TAKE_PTR(display);
	return 0;
}

void cordon_config_set_seccomp_log(struct cordon_config *c, int on)
{
	c->seccomp.log = on;
}

void cordon_config_set_seccomp_optimize(struct cordon_config *c, int on)
{
	c->seccomp.unoptimized = !on;
}

int cordon_config_set_seccomp_bpf(struct cordon_config *c, const void *insns, size_t len,
				  unsigned flags, struct cordon_error *err)
{
	const unsigned known = SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW;
	void *copy = NULL;

	if (len && (!insns || len % sizeof(struct sock_filter) ||
		    len / sizeof(struct sock_filter) > BPF_MAXINSNS))
		return cd_fail(err, EINVAL, "seccomp-bpf",
			       "a program of %zu bytes: not a whole number of instructions from 1 "
			       "to %u",
			       len, BPF_MAXINSNS);
	if (flags & ~known)
		return cd_fail(err, EINVAL, "seccomp-bpf", "unknown flags 0x%x", flags & ~known);
	if (len) {
		copy = malloc(len);
		if (!copy)
			return cd_fail(err, ENOMEM, "seccomp-bpf", "out of memory");
		memcpy(copy, insns, len);
	}
	free(c->seccomp.bpf);
	c->seccomp.bpf = copy;
	c->seccomp.bpf_len = len;
	c->seccomp.bpf_flags = len ? flags : 0;
	return 0;
}

/* A cgroup row: one value, at least the row's minimum. */
static int set_cgroup_limit(struct cordon_config *c, const struct cd_limit_def *d, uint64_t v,
			    struct cordon_error *err)
{
	if (v < d->min && d->info.unit == CORDON_UNIT_BYTES)
		return cd_fail(err, 0, d->info.name, "%llu bytes %s", (unsigned long long)v,
			       d->too_small);
	if (v < d->min)
		return cd_fail(err, 0, d->info.name, "%s", d->too_small);
	if (d->index == CD_CG_CPUS && v != CORDON_UNLIMITED && v > CD_MAX_MILLICPUS)
		return cd_fail(err, 0, d->info.name, "is too many (at most 1000)");
	c->limits.cgroup[d->index] = (struct cd_rlimit){ .set = true, .soft = v, .hard = v };
	return 0;
}

int cordon_config_set_limit(struct cordon_config *c, const char *name, uint64_t soft,
			    uint64_t hard, struct cordon_error *err)
{
	const struct cd_limit_def *d = cd_limit_find(name);

	if (!d)
		return cd_fail(err, 0, "limit", "unknown limit \"%s\"", name ? name : "");
	if (d->info.kind == CORDON_LIMIT_RLIMIT)
		return cordon_config_set_rlimit(c, d->index, soft, hard, err);
	if (soft != hard)
		return cd_fail(err, 0, d->info.name, "a cgroup limit has one value, not a soft and a "
						     "hard one");
	return set_cgroup_limit(c, d, soft, err);
}

int cordon_config_set_memory(struct cordon_config *c, uint64_t bytes, struct cordon_error *err)
{
	return set_cgroup_limit(c, cd_limit_of_cgroup(CD_CG_MEMORY), bytes, err);
}

int cordon_config_set_memory_swap(struct cordon_config *c, uint64_t bytes,
				  struct cordon_error *err)
{
	return set_cgroup_limit(c, cd_limit_of_cgroup(CD_CG_MEMORY_SWAP), bytes, err);
}

int cordon_config_set_cpus(struct cordon_config *c, uint64_t millicpus, struct cordon_error *err)
{
	return set_cgroup_limit(c, cd_limit_of_cgroup(CD_CG_CPUS), millicpus, err);
}

int cordon_config_set_pids(struct cordon_config *c, uint64_t n, struct cordon_error *err)
{
	return set_cgroup_limit(c, cd_limit_of_cgroup(CD_CG_PIDS), n, err);
}

int cordon_config_set_cgroup_mode(struct cordon_config *c, enum cordon_cgroup_mode mode,
				  struct cordon_error *err)
{
	if (mode > CORDON_CGROUP_OFF)
		return cd_fail(err, 0, "cgroup", "unknown mode %d", (int)mode);
	c->limits.cgroup_mode = mode;
	return 0;
}

int cordon_config_set_cgroup_parent(struct cordon_config *c, const char *path,
				    struct cordon_error *err)
{
	_cleanup_free_ char *real = NULL;
	struct statfs sfs;

	if (!path || path[0] != '/')
		return cd_fail(err, 0, "cgroup-parent", "\"%s\": must be an absolute path",
			       path ? path : "");
	real = realpath(path, NULL);
	if (!real)
		return cd_fail_errno(err, errno, "cgroup-parent", "%s", path);
	if (statfs(real, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
		return cd_fail(err, 0, "cgroup-parent", "%s is not a cgroup v2 directory", path);
	free(c->limits.cgroup_parent);
	c->limits.cgroup_parent = CD_TAKE_PTR(real);
	return 0;
}

int cordon_config_set_audit_file(struct cordon_config *c, const char *path,
				 struct cordon_error *err)
{
	if (!path || !path[0])
		return cd_fail(err, 0, "audit", "empty path");
	return set_string(&c->outputs.audit_path, path, "audit", err);
}

int cordon_config_set_capture_dir(struct cordon_config *c, const char *dir,
				  struct cordon_error *err)
{
	if (!dir || !dir[0])
		return cd_fail(err, 0, "capture", "empty path");
	return set_string(&c->outputs.capture_dir, dir, "capture", err);
}
