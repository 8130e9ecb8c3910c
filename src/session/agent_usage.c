/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent_usage.c - a sandbox's figures from inside (proto.h USAGE), for a session without a
 * cgroup of its own: the CPU time and resident memory of its processes, read from /proc of its
 * pid namespace (every process there is the sandbox's), over a short window. The sandbox's own
 * word: its code can take the agent over, so these figures are only ever its own (the caller
 * bounds them). Runs in: a worker forked by the agent, inside, as the sandbox.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

int cd_agent_usage(int fd, unsigned window_ms);

#define MAX_PIDS 65536

struct proc_ticks {
	int pid;
	uint64_t ticks;
};

/* utime + stime of /proc/pid/stat (after the command's last ')'), and its resident pages */
static int read_proc(int pid, uint64_t *ticks, uint64_t *pages)
{
	char path[64], buf[1024];
	unsigned long long ut, st, rss;
	const char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
	 * stime; rss is field 24 */
	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d "
			 "%*d %*d %*d %*d %*u %*u %llu",
			 &ut, &st, &rss) != 3)
		return -EPROTO;
	*ticks = ut + st;
	*pages = rss;
	return 0;
}

/* Every process's ticks into v (at most MAX_PIDS), the resident pages summed */
static size_t sample(struct proc_ticks *v, uint64_t *ret_pages)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	*ret_pages = 0;
	if (!d)
		return 0;
	while (n < MAX_PIDS && (de = readdir(d))) {
		int pid = atoi(de->d_name);
		uint64_t pages;

		if (pid <= 0 || read_proc(pid, &v[n].ticks, &pages) < 0)
			continue; /* not a process, or gone meanwhile */
		v[n++].pid = pid;
		*ret_pages += pages;
	}
	closedir(d);
	return n;
}

/* The ticks of the window: each process's since the first sample, a new one's whole life (it
 * began within the window); one that ended meanwhile is not counted */
static uint64_t window_ticks(const struct proc_ticks *a, size_t na, const struct proc_ticks *b,
			     size_t nb)
{
	uint64_t sum = 0;

	for (size_t j = 0; j < nb; j++) {
		uint64_t before = 0;

		for (size_t i = 0; i < na; i++)
			if (a[i].pid == b[j].pid) {
				before = a[i].ticks <= b[j].ticks ? a[i].ticks : b[j].ticks;
				break;
			}
		sum += b[j].ticks - before;
	}
	return sum;
}

int cd_agent_usage(int fd, unsigned window_ms)
{
	struct proc_ticks *a = calloc(MAX_PIDS, sizeof(*a)), *b = calloc(MAX_PIDS, sizeof(*b));
	struct cd_sp_usage u = {0};
	struct timespec t0, t1,
	    w = {.tv_sec = window_ms / 1000, .tv_nsec = (long)(window_ms % 1000) * 1000000L};
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	uint64_t pages;
	size_t na, nb;
	int r;

	if (!a || !b || hz <= 0 || page <= 0) {
		free(a);
		free(b);
		return cd_sp_send_simple(fd, CD_SP_ERROR, ENOMEM, 0, "usage: out of memory", 20,
					 -1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	na = sample(a, &pages);
	while (nanosleep(&w, &w) < 0 && errno == EINTR)
		;
	nb = sample(b, &pages);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	u.cpu_ns = window_ticks(a, na, b, nb) * (1000000000ull / (uint64_t)hz);
	u.window_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec -
		      (uint64_t)t0.tv_nsec;
	u.rss_bytes = pages * (uint64_t)page;
	u.procs = (uint32_t)nb;
	free(a);
	free(b);
	r = cd_sp_send_simple(fd, CD_SP_OK, 0, 0, &u, sizeof(u), -1);
	return r < 0 ? r : 0;
}
