/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * limit.h - the one table of resource limits: the sandbox's cgroup v2 files and the command's
 * rlimits. Parsing (cordon_parse_limit), the CLI's options and help (cordon_limit_info),
 * validation and defaults (config.c), application (cgroup.c, rlimits.c) and the report
 * (report.c) all read it: a new cgroup limit is one row here. Pure: no I/O. Supervisor side.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon.h"

struct cd_rlimit;

/* The cgroup rows, first in the table, in this order: cgroup.c and the config index by it. */
enum cd_cgroup_limit {
#define CD_CGROUP_LIMIT(id, ...) CD_CG_##id,
#include "cgroup_limits.def"
#undef CD_CGROUP_LIMIT
	CD_CG_N,
};

struct cd_limit_def {
	struct cordon_limit_info info; /* name, kind, unit, CLI option, help: public */
	int index;                     /* enum cd_cgroup_limit, or the RLIMIT_* */
	/* cgroup rows */
	const char *controller;        /* "memory" */
	const char *report_key;        /* "memory_max" in the report's applied.cgroup */
	uint64_t default_value;        /* CORDON_UNLIMITED: none */
	uint64_t min;                  /* the least a setter accepts */
	const char *too_small;         /* why a value below min is refused */
	bool report_text;              /* the report keeps the file's text ("50000 100000") */
	/* What to write to the file, from the values of every cgroup row (v[CD_CG_N]), into buf;
	 * false: nothing to write (and no controller needed). */
	bool (*format)(const struct cd_limit_def *d, const struct cd_rlimit *v, char *buf,
		       size_t size);
	/* rlimit rows: parse "SOFT[:HARD]" in this unit; hard one unit above soft (--cpu-time) */
	bool hard_plus_one;
};

/* The table: its cgroup rows (enum cd_cgroup_limit), then one row per RLIMIT_*. The cd_limit_*
 * functions below look one row up; the command's rlimits are set and read back by rlimits.h
 * (cd_rlimits_*). */
extern const struct cd_limit_def cd_limit_table[];
extern const size_t cd_limit_table_n;

/* The row named name (case-insensitive; "rlimit_nofile" and "nofile" alike for rlimits), or
 * NULL. */
const struct cd_limit_def *cd_limit_find(const char *name);
/* The rlimit row of resource, or NULL. */
const struct cd_limit_def *cd_limit_of_rlimit(int resource);
/* The cgroup row i (enum cd_cgroup_limit). */
const struct cd_limit_def *cd_limit_of_cgroup(enum cd_cgroup_limit i);

/* "as, core, cpu, ...": every rlimit's name, in alphabetical order, for messages. Static
 * storage, filled on the first call (the supervisor has one thread here). */
const char *cd_limit_rlimit_names(void);

/* A cgroup file's text as read back ("max\n", "50000 100000\n") into the row's unit: *ret is
 * CORDON_UNLIMITED for "max". false: not a value of this file. Pure. */
bool cd_limit_parse_cgroup(const struct cd_limit_def *d, const char *text, uint64_t *ret);
