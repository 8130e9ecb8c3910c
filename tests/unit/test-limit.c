/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-limit.c - the table of limits (limit.h): its rows, the lookups, what each cgroup row
 * writes and reads back, and the parsing and setting of a limit by name (cordon.h). TAP.
 */
#include <string.h>
#include <sys/resource.h>

#include "config.h"
#include "limit.h"
#include "util.h"

#include "../lib/tap.h"

#define INF CORDON_UNLIMITED

static struct cordon_error *fresh_err(void)
{
	static struct cordon_error err;

	memset(&err, 0, sizeof(err));
	return &err;
}

static void test_rows(void)
{
	size_t n = 0, with_option = 0;
	bool names_unique = true, options_unique = true, every_rlimit = true;

	while (cordon_limit_info(n))
		n++;
	is_uint(n, cd_limit_table_n, "cordon_limit_info enumerates every row");
	is_uint(cd_limit_table_n, CD_CG_N + RLIM_NLIMITS,
		"one row per cgroup limit and per RLIMIT_*");
	for (size_t i = 0; i < CD_CG_N; i++) {
		const struct cd_limit_def *d = &cd_limit_table[i];

		ok(d->index == (int)i && d->info.kind == CORDON_LIMIT_CGROUP && d->format &&
			   d->info.file && d->controller && d->report_key,
		   "cgroup row %zu (%s): in enum order, with a file, controller, format, report key",
		   i, d->info.name);
	}
	for (int r = 0; r < RLIM_NLIMITS; r++)
		every_rlimit &= cd_limit_of_rlimit(r) && cd_limit_of_rlimit(r)->index == r &&
				cd_limit_of_rlimit(r)->info.resource == r;
	ok(every_rlimit, "every RLIMIT_* has its row");
	for (size_t i = 0; i < cd_limit_table_n; i++) {
		const struct cordon_limit_info *a = &cd_limit_table[i].info;

		with_option += a->option != NULL;
		ok(!a->option || (a->help && a->metavar),
		   "row %s: an option has help and a metavar", a->name);
		for (size_t j = i + 1; j < cd_limit_table_n; j++) {
			const struct cordon_limit_info *b = &cd_limit_table[j].info;

			names_unique &= strcmp(a->name, b->name) != 0;
			options_unique &= !a->option || !b->option || strcmp(a->option, b->option);
		}
	}
	ok(names_unique, "names are unique");
	ok(options_unique, "options are unique");
	is_uint(with_option, 7, "seven options: memory, memory-swap, cpus, pids, nofile, fsize, "
				"cpu-time");
	is_str(cd_limit_rlimit_names(),
	       "as, core, cpu, data, fsize, locks, memlock, msgqueue, nice, nofile, nproc, rss, "
	       "rtprio, rttime, sigpending, stack",
	       "the rlimits' names, sorted");
}

static void test_find(void)
{
	ok(cd_limit_find("memory") == cd_limit_of_cgroup(CD_CG_MEMORY), "find memory");
	ok(cd_limit_find("NOFILE") == cd_limit_of_rlimit(RLIMIT_NOFILE), "find NOFILE");
	ok(cd_limit_find("rlimit_nofile") == cd_limit_of_rlimit(RLIMIT_NOFILE), "find rlimit_nofile");
	ok(cd_limit_find("rlimit_memory") == NULL, "no rlimit_ prefix for a cgroup row");
	ok(cd_limit_find("files") == NULL && cd_limit_find(NULL) == NULL, "unknown: NULL");
	ok(cd_limit_of_cgroup(CD_CG_N) == NULL, "no cgroup row past the last");
	ok(cd_limit_of_rlimit(RLIM_NLIMITS) == NULL, "no rlimit row past the last");
}

/* what the cgroup row i writes for these values ("" for nothing) */
static const char *written(enum cd_cgroup_limit i, uint64_t mem, uint64_t swap, bool swap_set,
			   uint64_t cpus, uint64_t pids)
{
	static char buf[64];
	struct cd_rlimit v[CD_CG_N] = {
		[CD_CG_MEMORY] = { false, mem, mem },
		[CD_CG_MEMORY_SWAP] = { swap_set, swap, swap },
		[CD_CG_CPUS] = { false, cpus, cpus },
		[CD_CG_PIDS] = { false, pids, pids },
	};
	const struct cd_limit_def *d = cd_limit_of_cgroup(i);

	if (!d->format(d, v, buf, sizeof(buf)))
		return "";
	return buf;
}

static void test_format(void)
{
	is_str(written(CD_CG_MEMORY, 1 << 20, 0, false, INF, INF), "1048576", "memory.max bytes");
	is_str(written(CD_CG_MEMORY, INF, 0, false, INF, INF), "", "memory.max: none, no write");
	is_str(written(CD_CG_MEMORY_SWAP, 1 << 20, 0, false, INF, INF), "0",
	       "memory.swap.max 0 with a memory limit (the default)");
	is_str(written(CD_CG_MEMORY_SWAP, INF, 0, false, INF, INF), "",
	       "memory.swap.max: nothing without a memory limit");
	is_str(written(CD_CG_MEMORY_SWAP, INF, INF, true, INF, INF), "max",
	       "memory.swap.max max when set to none");
	is_str(written(CD_CG_MEMORY_SWAP, INF, 4096, true, INF, INF), "4096",
	       "memory.swap.max when set, memory unlimited");
	is_str(written(CD_CG_CPUS, INF, 0, false, 500, INF), "50000 100000", "cpu.max half a CPU");
	is_str(written(CD_CG_CPUS, INF, 0, false, 2000, INF), "200000 100000", "cpu.max two");
	is_str(written(CD_CG_CPUS, INF, 0, false, INF, INF), "", "cpu.max: none, no write");
	is_str(written(CD_CG_PIDS, INF, 0, false, INF, 20), "20", "pids.max 20");
}

static void read_back(enum cd_cgroup_limit i, const char *text, bool want_ok, uint64_t want)
{
	uint64_t v = 12345;
	bool r = cd_limit_parse_cgroup(cd_limit_of_cgroup(i), text, &v);

	if (want_ok)
		ok(r && v == want, "%s reads back \"%s\" as %llu (got %llu)",
		   cd_limit_of_cgroup(i)->info.file, text, (unsigned long long)want,
		   (unsigned long long)v);
	else
		ok(!r, "%s: \"%s\" is not a value", cd_limit_of_cgroup(i)->info.file, text);
}

static void test_parse_cgroup(void)
{
	read_back(CD_CG_MEMORY, "999424\n", true, 999424);
	read_back(CD_CG_MEMORY, "max\n", true, INF);
	read_back(CD_CG_MEMORY, "max", true, INF);
	read_back(CD_CG_MEMORY, "maxi", false, 0);
	read_back(CD_CG_MEMORY, "12 34", false, 0);
	read_back(CD_CG_MEMORY, "", false, 0);
	read_back(CD_CG_CPUS, "50000 100000\n", true, 500);
	read_back(CD_CG_CPUS, "max 100000\n", true, INF);
	read_back(CD_CG_CPUS, "50000", false, 0);
	read_back(CD_CG_CPUS, "50000 0", false, 0);
	read_back(CD_CG_PIDS, "20\n", true, 20);
}

static void parse(const char *name, const char *s, uint64_t soft, uint64_t hard)
{
	uint64_t gs = 1, gh = 1;
	int r = cordon_parse_limit(name, s, &gs, &gh, fresh_err());

	ok(r == 0 && gs == soft && gh == hard, "parse %s \"%s\": %llu %llu (got %d: %llu %llu)",
	   name, s, (unsigned long long)soft, (unsigned long long)hard, r,
	   (unsigned long long)gs, (unsigned long long)gh);
}

static void parse_bad(const char *name, const char *s, const char *msg)
{
	uint64_t gs, gh;
	struct cordon_error *err = fresh_err();
	int r = cordon_parse_limit(name, s, &gs, &gh, err);

	ok(r < 0 && strcmp(err->msg, msg) == 0, "parse %s \"%s\" refused: %s (got %d: %s)", name, s,
	   msg, r, err->msg);
}

static void test_parse_limit(void)
{
	parse("memory", "64M", 64 << 20, 64 << 20);
	parse("memory", "unlimited", INF, INF);
	parse("memory-swap", "max", INF, INF);
	parse("cpus", "0.5", 500, 500);
	parse("pids", "20", 20, 20);
	parse("nofile", "32:64", 32, 64);
	parse("nofile", "unlimited", RLIM_INFINITY, RLIM_INFINITY);
	parse("fsize", "1M", 1 << 20, 1 << 20);
	parse("cpu", "1500ms", 2, 3);
	parse("cpu", "1", 1, 2);
	parse_bad("cpu", "0", "must be more than 0");
	parse_bad("cpu", "soon", "\"soon\" is not a duration (use 500ms, 30s, 2m, 1h)");
	parse_bad("nofile", "abc", "\"abc\" is not a number, or unlimited");
	parse_bad("nofile", "10:5", "soft limit 10 is above hard limit 5");
	parse_bad("fsize", "1Q", "\"1Q\" is not a size such as 64M, or unlimited");
	parse_bad("pids", "abc", "\"abc\" is not a number of processes");
	parse_bad("pids", "-5", "\"-5\" is not a number of processes");
	parse_bad("memory", "12Q", "\"12Q\" is not a size (use 512K, 64M, 1G)");
	parse_bad("cpus", "0", "\"0\": must be at least 0.01");
	parse_bad("cpus", "0.009", "\"0.009\": must be at least 0.01"); /* the kernel: 1 ms */
	parse_bad("cpus", "1000.001", "\"1000.001\" is too many (at most 1000)");
	parse_bad("files", "1", "unknown limit \"files\"");
}

static void test_set_limit(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error *err;

	if (!ok(c != NULL, "cordon_config_new"))
		return;
	is_uint(c->limits.cgroup[CD_CG_MEMORY].soft, CD_DEFAULT_MEMORY, "default memory from the table");
	is_uint(c->limits.cgroup[CD_CG_PIDS].soft, CD_DEFAULT_PIDS, "default pids from the table");
	is_uint(c->limits.cgroup[CD_CG_CPUS].soft, INF, "default cpus: none");
	is_uint(c->limits.cgroup[CD_CG_MEMORY_SWAP].soft, 0, "default swap: 0");
	ok(!c->limits.cgroup[CD_CG_MEMORY].set, "defaults are not explicit");
	is_int(cordon_config_set_limit(c, "memory", 1 << 30, 1 << 30, fresh_err()), 0,
	       "set_limit memory 1G");
	ok(c->limits.cgroup[CD_CG_MEMORY].set && c->limits.cgroup[CD_CG_MEMORY].soft == 1 << 30,
	   "... stored, explicit");
	err = fresh_err();
	ok(cordon_config_set_limit(c, "memory", 0, 0, err) < 0 &&
		   strcmp(err->step, "memory") == 0 &&
		   strcmp(err->msg, "0 bytes is too little (at least 1M, or no limit)") == 0,
	   "set_limit memory 0: refused in the library's words (%s: %s)", err->step, err->msg);
	err = fresh_err();
	ok(cordon_config_set_pids(c, 0, err) < 0 &&
		   strcmp(err->msg, "must be at least 1 (or no limit)") == 0,
	   "set_pids 0 refused (%s)", err->msg);
	err = fresh_err();
	ok(cordon_config_set_cpus(c, 0, err) < 0 && strcmp(err->msg, "must be at least 0.01") == 0,
	   "set_cpus 0 refused (%s)", err->msg);
	err = fresh_err();
	ok(cordon_config_set_cpus(c, 9, err) < 0 && strcmp(err->msg, "must be at least 0.01") == 0,
	   "set_cpus 9 millicpus refused: under the kernel's 1 ms quota (%s)", err->msg);
	err = fresh_err();
	ok(cordon_config_set_cpus(c, UINT64_MAX / 1000, err) < 0 &&
		   strcmp(err->msg, "is too many (at most 1000)") == 0,
	   "set_cpus past 1000 CPUs refused: its quota would overflow (%s)", err->msg);
	err = fresh_err();
	ok(cordon_config_set_cpus(c, 10, err) == 0, "set_cpus 0.01: accepted");
	err = fresh_err();
	ok(cordon_config_set_limit(c, "pids", 10, 20, err) < 0 &&
		   strstr(err->msg, "one value") != NULL,
	   "a cgroup limit has one value (%s)", err->msg);
	is_int(cordon_config_set_limit(c, "RLIMIT_NOFILE", 10, 20, fresh_err()), 0,
	       "set_limit RLIMIT_NOFILE 10:20");
	ok(c->limits.rlimits[RLIMIT_NOFILE].set && c->limits.rlimits[RLIMIT_NOFILE].soft == 10 &&
		   c->limits.rlimits[RLIMIT_NOFILE].hard == 20,
	   "... stored as the rlimit");
	err = fresh_err();
	ok(cordon_config_set_limit(c, "nofile", 20, 10, err) < 0 &&
		   strcmp(err->msg, "nofile: soft limit above hard limit") == 0,
	   "set_limit nofile soft > hard: as set_rlimit (%s)", err->msg);
	err = fresh_err();
	ok(cordon_config_set_limit(c, "bogus", 1, 1, err) < 0 && strcmp(err->step, "limit") == 0,
	   "set_limit unknown: refused");
	is_int(cordon_config_set_memory_swap(c, INF, fresh_err()), 0, "set_memory_swap none");
	ok(c->limits.cgroup[CD_CG_MEMORY_SWAP].set, "... explicit");
	cordon_config_free(c);
}

int main(void)
{
	test_rows();
	test_find();
	test_format();
	test_parse_cgroup();
	test_parse_limit();
	test_set_limit();
	return done_testing();
}
