/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * soak-lib.c - the library half of the soak (tests/integration/t-soak.sh): many sessions made,
 * used and ended through include/cordon.h, with faults picked by a seeded RNG, and every
 * session's outcome counted. Run as the caller (root or the unprivileged user):
 *
 *   soak-lib BASE N SEED FULL [SECONDS]
 *
 * BASE: an empty directory of the caller's; each session's workdir is a fresh directory below
 * it, removed at the session's end (CORDON_SESSION_REMOVE_WORKDIR). FULL: a directory on a small
 * filesystem of its own (a tmpfs), for the "disk full" fault: its free space is taken by a
 * ballast file while a session there writes; "-": that fault is not drawn. SECONDS: go on past N
 sessions until that many seconds have passed (a soak of hours, by hand).
 *
 * It is a child subreaper: a process of a session that outlives it (a supervisor SIGKILLed, its
 * pid 1 orphaned) comes back to it, and is counted at the end. Prints "# " lines and one last
 * line of counts, "soak-lib: key=value ...", which the suite checks. Exit 0 unless it could not
 * start; a session whose end is never told stops it (alarm: the count is then missing).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define MS 1000000ull
#define BATCH 6 /* sessions live at once */

enum fault { F_PLAIN, F_KILL, F_TIMEOUT, F_SUPERVISOR, F_AGENT, F_DISK, F_COUNT };
static const char *const fault_name[F_COUNT] = { "plain", "kill", "timeout", "supervisor",
						 "agent", "disk" };

static uint64_t rng;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13; /* xorshift64 */
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static char base[PATH_MAX], full[PATH_MAX];
static unsigned long made[F_COUNT], reported[F_COUNT], wrong[F_COUNT];
static unsigned long create_errors, exec_done, write_done, write_errors;

struct sb {
	int i;
	enum fault f;
	struct cordon_session *s;
	struct cordon_process *p; /* a long command, for the faults that end it */
	char dir[PATH_MAX];
};

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* our children that still run (zombies reaped first): /proc/self/task/TID/children */
static int live_children(void)
{
	char path[64], buf[4096];
	int n = 0;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", getpid());
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fscanf(f, "%4095s", buf) == 1) {
		n++;
		char cmd[128], comm[64] = "";
		snprintf(cmd, sizeof(cmd), "/proc/%s/comm", buf);
		FILE *c = fopen(cmd, "re");
		if (c) {
			if (!fgets(comm, sizeof(comm), c))
				comm[0] = 0;
			fclose(c);
		}
		printf("# left: pid %s %s", buf, comm[0] ? comm : "?\n");
	}
	fclose(f);
	return n;
}

/* run argv in s, wait up to 10 s: its wait status, or -errno */
static int run(struct cordon_session *s, const char *const *argv, int out)
{
	struct cordon_exec e = { .argv = argv, .fd = { -1, out, -1 } };
	struct cordon_process *p = NULL;
	struct cordon_error err = { 0 };
	int r, status = 0;

	r = cordon_session_exec(s, &e, &p, &err);
	if (r < 0)
		return r;
	r = cordon_process_wait(p, 10000 * MS, &status, &err);
	cordon_process_free(p);
	exec_done++;
	return r == 1 ? status : r < 0 ? r : -ETIMEDOUT;
}

/* write a file through the agent: bytes written, or -errno */
static long long put(struct cordon_session *s, const char *path, size_t len)
{
	static char chunk[65536];
	struct cordon_upload *u = NULL;
	struct cordon_error err = { 0 };
	uint64_t n = 0;
	int fd = -1, r;

	r = cordon_session_write(s, path, 0644, &u, &fd, &err);
	if (r < 0)
		return r;
	for (size_t done = 0; done < len;) {
		size_t k = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
		ssize_t w = write(fd, chunk, k);
		if (w <= 0)
			break; /* the writer inside went (EPIPE: SIGPIPE is ignored) */
		done += (size_t)w;
	}
	close(fd);
	r = cordon_upload_finish(u, &n, &err);
	write_done++;
	if (r < 0)
		write_errors++;
	return r < 0 ? r : (long long)n;
}

static int start(struct sb *b)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	int r;

	snprintf(b->dir, sizeof(b->dir), "%s/s%d", b->f == F_DISK ? full : base, b->i);
	if (mkdir(b->dir, 0755) < 0)
		return -errno;
	r = c ? cordon_config_set_workdir(c, b->dir, &err) : -ENOMEM;
	if (r == 0 && b->f == F_TIMEOUT) /* its time to live */
		r = cordon_config_set_timeout(c, (200 + rnd(300)) * MS, &err);
	if (r == 0)
		r = cordon_session_create(c, CORDON_SESSION_REMOVE_WORKDIR, &b->s, &err);
	cordon_config_free(c);
	if (r < 0) {
		/* a clear error is an answer: counted, and said */
		printf("# %d %s: create: %s: %s (%d)\n", b->i, fault_name[b->f], err.step, err.msg,
		       err.code);
		create_errors++;
		rmdir(b->dir); /* the session never owned it */
		b->s = NULL;
		return r;
	}
	cordon_session_set_bounds(b->s, -1, 10000 * MS, 0);
	return 0;
}

/* the fault's work while the session lives; 0: as expected, else what differed */
static const char *act(struct sb *b)
{
	const char *const sleeper[] = { "/bin/sleep", "30", NULL };
	const char *const hello[] = { "/bin/sh", "-c", "echo soak > f && test \"$(cat f)\" = soak",
				      NULL };
	/* the agent killed from inside: the command's parent is cordon-agent */
	const char *const kill_agent[] = { "/bin/sh", "-c", "kill -9 $PPID; sleep 5", NULL };
	const char *const fill[] = { "/bin/sh", "-c", "head -c 4194304 /dev/zero > big", NULL };
	struct cordon_exec e = { .argv = sleeper, .fd = { -1, -1, -1 } };
	struct cordon_error err = { 0 };
	int r;

	switch (b->f) {
	case F_PLAIN:
		if (run(b->s, hello, -1) != 0)
			return "a command failed";
		if (put(b->s, "sub/file", 100000 + rnd(200000)) < 0)
			return "a write failed";
		return NULL;
	case F_KILL:
	case F_SUPERVISOR:
	case F_TIMEOUT:
		r = cordon_session_exec(b->s, &e, &b->p, &err);
		return r < 0 ? "sleep did not start" : NULL;
	case F_AGENT:
		r = run(b->s, kill_agent, -1);
		return r >= 0 ? "the agent's killer ended normally" : NULL; /* ESRCH: session over */
	case F_DISK: {
		char ballast[PATH_MAX + 16];
		int fd;

		snprintf(ballast, sizeof(ballast), "%s/ballast", full);
		fd = open(ballast, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) { /* the filesystem full: write till ENOSPC */
			static char z[65536];
			while (write(fd, z, sizeof(z)) > 0)
				;
			close(fd);
		}
		r = run(b->s, fill, -1);
		long long w = put(b->s, "more", 1 << 20);
		unlink(ballast);
		if (r == 0)
			return "4 MiB written on a full filesystem";
		if (w >= 0 && w == 1 << 20)
			return "1 MiB uploaded to a full filesystem";
		return NULL;
	}
	default:
		return "?";
	}
}

/* the fault itself, then the end: the outcome told (0) or not */
static void finish(struct sb *b)
{
	struct cordon_result res;
	struct cordon_error err = { 0 };
	int status, r;
	const char *bad = NULL;

	switch (b->f) {
	case F_KILL:
		cordon_session_kill(b->s);
		r = cordon_process_wait(b->p, 10000 * MS, &status, &err);
		if (r != -ESRCH && r != 1)
			bad = "the killed session's command was not told";
		break;
	case F_SUPERVISOR:
		kill(cordon_session_pid(b->s), SIGKILL);
		r = cordon_process_wait(b->p, 10000 * MS, &status, &err);
		if (r != -ESRCH)
			bad = "the command outlived its supervisor";
		break;
	case F_TIMEOUT:
		r = cordon_process_wait(b->p, 10000 * MS, &status, &err);
		if (r != -ESRCH)
			bad = "the command outlived the time to live";
		break;
	default:
		break;
	}
	if (b->p)
		cordon_process_free(b->p);
	memset(&res, 0, sizeof(res));
	r = cordon_session_destroy(b->s, &res, &err);
	/* every session ends with an answer: a result, or an error that says why */
	if (r < 0 && !err.msg[0])
		bad = "destroy failed without saying why";
	if (b->f == F_TIMEOUT && res.outcome != CORDON_OUTCOME_TIMEOUT)
		bad = "a session past its time to live not told TIMEOUT";
	reported[b->f]++;
	if (bad) {
		wrong[b->f]++;
		printf("# %d %s: %s (destroy %d: %s: %s; outcome %d)\n", b->i, fault_name[b->f], bad,
		       r, err.step, err.msg, (int)res.outcome);
	}
}

int main(int argc, char **argv)
{
	int n, fd_base = -1, mounts_base, fds, mounts;
	unsigned long long seed;

	uint64_t until = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: soak-lib BASE N SEED FULL [SECONDS]\n");
		return 2;
	}
	snprintf(base, sizeof(base), "%s", argv[1]);
	n = atoi(argv[2]);
	seed = strtoull(argv[3], NULL, 0);
	if (strcmp(argv[4], "-") != 0)
		snprintf(full, sizeof(full), "%s", argv[4]);
	if (argc > 5)
		until = now_s() + strtoull(argv[5], NULL, 0);
	rng = seed * 2654435761ull + 88172645463325252ull;
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	alarm(600 + (until ? (unsigned)strtoul(argv[5], NULL, 0) : 0)); /* a hang is a missing outcome: the suite sees no counts */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# soak-lib: %d sessions, seed %llu%s\n", n, seed, full[0] ? "" : ", no disk fault");

	mounts_base = count_lines("/proc/self/mountinfo");
	for (int i = 0; i < n || now_s() < until; i += BATCH) {
		struct sb b[BATCH];
		int k = i >= n || n - i > BATCH ? BATCH : n - i;

		for (int j = 0; j < k; j++) {
			memset(&b[j], 0, sizeof(b[j]));
			b[j].i = i + j;
			b[j].f = (enum fault)rnd(full[0] ? F_COUNT : F_DISK);
			if (i < BATCH) /* the first batch warms up: plain */
				b[j].f = F_PLAIN;
			made[b[j].f]++;
			if (start(&b[j]) < 0) {
				reported[b[j].f]++; /* its answer was the error */
				continue;
			}
			const char *why = act(&b[j]);
			if (why) {
				wrong[b[j].f]++;
				printf("# %d %s: %s\n", b[j].i, fault_name[b[j].f], why);
			}
		}
		for (int j = 0; j < k; j++)
			if (b[j].s)
				finish(&b[j]);
		if (i == 0) /* the descriptors after warm-up */
			fd_base = count_dir("/proc/self/fd");
	}
	fds = count_dir("/proc/self/fd");
	mounts = count_lines("/proc/self/mountinfo");
	int left = 0;
	for (int t = 0; t < 50 && (left = live_children()) > 0; t++)
		usleep(100000);
	if (left > 0)
		left = live_children(); /* said once more, named */

	unsigned long m = 0, rep = 0, bad = 0;
	printf("# fault     made reported wrong\n");
	for (int f = 0; f < F_COUNT; f++) {
		printf("# %-10s %4lu %8lu %5lu\n", fault_name[f], made[f], reported[f], wrong[f]);
		m += made[f], rep += reported[f], bad += wrong[f];
	}
	printf("# commands %lu, writes %lu (%lu refused), create errors %lu\n", exec_done,
	       write_done, write_errors, create_errors);
	printf("soak-lib: sessions=%lu reported=%lu wrong=%lu fds_warm=%d fds_end=%d "
	       "mounts_start=%d mounts_end=%d children_left=%d workdirs_left=%d full_left=%d\n",
	       m, rep, bad, fd_base, fds, mounts_base, mounts, left, count_dir(base),
	       full[0] ? count_dir(full) : 0);
	return 0;
}
