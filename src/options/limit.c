/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * limit.c - the table of resource limits (limit.h). Pure data and pure functions: the
 * supervisor reads it while parsing, validating, applying and reporting; the child never does.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "config.h"
#include "limit.h"

#define CPU_PERIOD_US 100000ull /* cpu.max's period: the quota is a share of it */

/* A count or a size: nothing to write for no limit (and then no controller is needed). */
static bool format_plain(const struct cd_limit_def *d, const struct cd_rlimit *v, char *buf,
			 size_t size)
{
	uint64_t x = v[d->index].soft;

	if (x == CORDON_UNLIMITED)
		return false;
	snprintf(buf, size, "%llu", (unsigned long long)x);
	return true;
}

/* Written whenever memory is limited, so that the limit cannot be dodged into swap (the
 * default 0), or when set; "max" for no limit. */
static bool format_swap(const struct cd_limit_def *d, const struct cd_rlimit *v, char *buf,
			size_t size)
{
	uint64_t x = v[d->index].soft;

	if (v[CD_CG_MEMORY].soft == CORDON_UNLIMITED && !v[d->index].set)
		return false;
	if (x == CORDON_UNLIMITED)
		snprintf(buf, size, "max");
	else
		snprintf(buf, size, "%llu", (unsigned long long)x);
	return true;
}

/* "QUOTA PERIOD" in microseconds: thousandths of a CPU of a 100 ms period */
static bool format_cpu(const struct cd_limit_def *d, const struct cd_rlimit *v, char *buf,
		       size_t size)
{
	uint64_t x = v[d->index].soft;

	if (x == CORDON_UNLIMITED)
		return false;
	snprintf(buf, size, "%llu %llu", (unsigned long long)(x * CPU_PERIOD_US / 1000),
		 CPU_PERIOD_US);
	return true;
}

#define CGROUP(id, nm, unit_, file_, ctl, key, def, min_, small, fmt, opt, sh, meta, hlp, ...)     \
	[id] = { .info = { .name = nm, .kind = CORDON_LIMIT_CGROUP, .unit = unit_, .file = file_,  \
			   .resource = -1, .option = opt, .short_option = sh, .metavar = meta,     \
			   .help = hlp },                                                          \
		 .index = id, .controller = ctl, .report_key = key, .default_value = def,          \
		 .min = min_, .too_small = small, .format = fmt, __VA_ARGS__ }

#define RLIMIT(res, nm, unit_)                                                                     \
	{ .info = { .name = nm, .kind = CORDON_LIMIT_RLIMIT, .unit = unit_, .resource = res },     \
	  .index = res }

/* The CLI's options for a row, in the order --help lists them. */
#define RLIMIT_OPT(res, nm, unit_, opt, meta, hlp, plus_one)                                      \
	{ .info = { .name = nm, .kind = CORDON_LIMIT_RLIMIT, .unit = unit_, .resource = res,       \
		    .option = opt, .metavar = meta, .help = hlp },                                 \
	  .index = res, .hard_plus_one = plus_one }

const struct cd_limit_def cd_limit_table[] = {
	/* the cgroup rows (cgroup_limits.def), first, in the order of enum cd_cgroup_limit */
#define CD_CGROUP_LIMIT(id, ...) CGROUP(CD_CG_##id, __VA_ARGS__),
#include "cgroup_limits.def"
#undef CD_CGROUP_LIMIT
	/* the rlimits with options of their own first, in the order --help lists them */
	RLIMIT_OPT(RLIMIT_NOFILE, "nofile", CORDON_UNIT_COUNT, "nofile", "N", "open files limit",
		   false),
	RLIMIT_OPT(RLIMIT_FSIZE, "fsize", CORDON_UNIT_BYTES, "fsize", "SIZE",
		   "largest file the command may write", false),
	RLIMIT_OPT(RLIMIT_CPU, "cpu", CORDON_UNIT_SECONDS, "cpu-time", "DURATION",
		   "CPU time limit (SIGXCPU, then SIGKILL 1s later)", true),
	RLIMIT(RLIMIT_AS, "as", CORDON_UNIT_BYTES),
	RLIMIT(RLIMIT_CORE, "core", CORDON_UNIT_BYTES),
	RLIMIT(RLIMIT_DATA, "data", CORDON_UNIT_BYTES),
	RLIMIT(RLIMIT_LOCKS, "locks", CORDON_UNIT_COUNT),
	RLIMIT(RLIMIT_MEMLOCK, "memlock", CORDON_UNIT_BYTES),
	RLIMIT(RLIMIT_MSGQUEUE, "msgqueue", CORDON_UNIT_BYTES),
	RLIMIT(RLIMIT_NICE, "nice", CORDON_UNIT_COUNT),
	RLIMIT(RLIMIT_NPROC, "nproc", CORDON_UNIT_COUNT),
	RLIMIT(RLIMIT_RSS, "rss", CORDON_UNIT_BYTES),
	RLIMIT(RLIMIT_RTPRIO, "rtprio", CORDON_UNIT_COUNT),
	RLIMIT(RLIMIT_RTTIME, "rttime", CORDON_UNIT_MICROSECONDS),
	RLIMIT(RLIMIT_SIGPENDING, "sigpending", CORDON_UNIT_COUNT),
	RLIMIT(RLIMIT_STACK, "stack", CORDON_UNIT_BYTES),
};

const size_t cd_limit_table_n = CD_ELEMENTSOF(cd_limit_table);

_Static_assert(CD_ELEMENTSOF(cd_limit_table) == CD_CG_N + RLIM_NLIMITS,
	       "every cgroup limit and every RLIMIT_* has one row");

const struct cd_limit_def *cd_limit_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < cd_limit_table_n; i++) {
		const struct cd_limit_def *d = &cd_limit_table[i];
		const char *n = name;

		if (d->info.kind == CORDON_LIMIT_RLIMIT && strncasecmp(n, "rlimit_", 7) == 0)
			n += 7;
		if (strcasecmp(n, d->info.name) == 0)
			return d;
	}
	return NULL;
}

const struct cd_limit_def *cd_limit_of_rlimit(int resource)
{
	for (size_t i = CD_CG_N; i < cd_limit_table_n; i++)
		if (cd_limit_table[i].index == resource)
			return &cd_limit_table[i];
	return NULL;
}

const struct cd_limit_def *cd_limit_of_cgroup(enum cd_cgroup_limit i)
{
	return i < CD_CG_N ? &cd_limit_table[i] : NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *cd_limit_rlimit_names(void)
{
	static char names[256];
	const char *v[RLIM_NLIMITS];

	if (names[0])
		return names;
	for (size_t i = CD_CG_N; i < cd_limit_table_n; i++)
		v[i - CD_CG_N] = cd_limit_table[i].info.name;
	qsort(v, RLIM_NLIMITS, sizeof(v[0]), by_name);
	for (size_t i = 0, n = 0; i < RLIM_NLIMITS; i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "", v[i]);
	return names;
}

static bool parse_u64(const char *s, const char **end, uint64_t *ret)
{
	char *e;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*ret = strtoull(s, &e, 10);
	*end = e;
	return errno == 0;
}

bool cd_limit_parse_cgroup(const struct cd_limit_def *d, const char *text, uint64_t *ret)
{
	uint64_t quota, period;
	const char *p;

	if (strncmp(text, "max", 3) == 0 && (text[3] == '\0' || isspace((unsigned char)text[3]))) {
		*ret = CORDON_UNLIMITED;
		return true;
	}
	if (!parse_u64(text, &p, &quota))
		return false;
	if (d->info.unit != CORDON_UNIT_MILLICPU) {
		*ret = quota;
		return *p == '\0' || *p == '\n';
	}
	if (*p != ' ' || !parse_u64(p + 1, &p, &period) || period == 0)
		return false;
	*ret = quota * 1000 / period;
	return *p == '\0' || *p == '\n';
}

const struct cordon_limit_info *cordon_limit_info(size_t i)
{
	return i < cd_limit_table_n ? &cd_limit_table[i].info : NULL;
}

const char *cd_rlimit_name(int resource)
{
	const struct cd_limit_def *d = cd_limit_of_rlimit(resource);

	return d ? d->info.name : NULL;
}
