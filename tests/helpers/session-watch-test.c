/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * session-watch-test.c - a session's watched directories (cordon_session_watch) and what it
 * uses now (cordon_session_usage), for real, through the library. TAP on stdout. Run by
 * tests/integration/t-session-watch.sh as root or as the unprivileged user:
 *
 *   session-watch-test BASE
 *
 * BASE is an empty directory owned by the caller; the session's workdir is BASE/w. cordon-agent
 * and cordon sit beside this program (tests/run copies them there).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon.h"
#include "../lib/tap.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static char base[PATH_MAX];
static char bindir[PATH_MAX + 16];

/* The events seen so far: "TYPE name" lines */
struct seen {
	char *text;
	size_t len;
	size_t n;
	int end; /* cordon_watch_read's last -errno; 0: still going */
};

static const char *const type_names[] = {"?", "create", "write", "remove", "rename", "chmod"};

/* Read what the watch says for up to ms (until want appears, when given). */
static void gather(struct cordon_watch *w, struct seen *s, const char *want, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = {cordon_watch_fd(w), POLLIN, 0};
		struct cordon_watch_event *v = NULL;
		struct cordon_error err = {0};
		size_t n = 0;
		int r;

		if (want && s->text && strstr(s->text, want))
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return;
		if (poll(&p, 1, 100) <= 0)
			continue;
		r = cordon_watch_read(w, &v, &n, &err);
		if (r < 0) {
			s->end = r;
			return;
		}
		for (size_t i = 0; i < n; i++) {
			size_t add = strlen(v[i].name) + 16;

			s->text = realloc(s->text, s->len + add + 1);
			s->len += (size_t)snprintf(s->text + s->len, add + 1, "%s %s\n",
						   type_names[v[i].type], v[i].name);
			s->n++;
		}
		cordon_watch_events_free(v, n);
	}
}

static int run(struct cordon_session *s, const char *script, int wait)
{
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct cordon_exec e = {.argv = argv, .fd = {-1, -1, -1}};
	struct cordon_process *p = NULL;
	struct cordon_error err = {0};
	int status = -1;

	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		diag("exec %s: %s", script, err.msg);
		return -1;
	}
	if (wait && cordon_process_wait(p, 120ull * 1000000000ull, &status, &err) != 1)
		status = -1;
	cordon_process_free(p);
	return wait ? status : 0;
}

static void test_events(struct cordon_session *s)
{
	struct cordon_watch *w = NULL;
	struct cordon_error err = {0};
	struct seen seen = {0};

	ok(cordon_session_watch(s, ".", CORDON_WATCH_RECURSIVE, &w, &err) == 0,
	   "watch the workdir, recursive (%s)", err.msg);
	if (!w)
		return;
	/* a new subdirectory's entries made before its watch are told as CREATE; once that is
	 * seen, the subdirectory is watched: what follows is told as it happens */
	is_int(run(s, "mkdir d && echo x > d/f", 1), 0, "a command makes a directory and a file");
	gather(w, &seen, "create d/f\n", 60000);
	is_int(run(s, "echo y >> d/f && mv d/f d/g && chmod 600 d/g && rm d/g", 1), 0,
	       "then writes, moves, removes it");
	gather(w, &seen, "remove d/g\n", 60000);
	diag("events:\n%s", seen.text ? seen.text : "(none)");
	for (const char *const *e =
		 (const char *const[]){"create d\n", "create d/f\n", "write d/f\n", "rename d/f\n",
				       "create d/g\n", "chmod d/g\n", "remove d/g\n", NULL};
	     *e; e++)
		ok(seen.text && strstr(seen.text, *e), "event %.*s", (int)strlen(*e) - 1, *e);
	cordon_watch_free(w);
	free(seen.text);
}

static void test_errors(struct cordon_session *s)
{
	struct cordon_watch *w = NULL;
	struct cordon_error err = {0};

	is_int(cordon_session_watch(s, "no-such-dir", 0, &w, &err), -ENOENT,
	       "a missing path: ENOENT");
	like_str(err.msg, "no-such-dir", "naming it");
	run(s, "echo x > a-file", 1);
	is_int(cordon_session_watch(s, "a-file", 0, &w, &err), -ENOTDIR, "a file: ENOTDIR");
	is_int(cordon_session_watch(s, ".", 0x80, &w, &err), -EINVAL, "unknown flags: EINVAL");
}

/* Nobody reads while 30,000 files are made: the kernel's queue (16384 events by default)
 * overflows, and the watch says so and ends */
static void test_overflow(struct cordon_session *s)
{
	struct cordon_watch *w = NULL;
	struct cordon_error err = {0};
	struct seen seen = {0};
	long max_q = 0;
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "re");

	if (f) {
		if (fscanf(f, "%ld", &max_q) != 1)
			max_q = 0;
		fclose(f);
	}
	if (max_q <= 0 || max_q > 20000) {
		skip("fs.inotify.max_queued_events is not at most 20000", "overflow");
		return;
	}
	run(s, "mkdir flood", 1);
	if (!ok(cordon_session_watch(s, "flood", 0, &w, &err) == 0, "watch flood/"))
		return;
	is_int(run(s, "cd flood && seq 1 30000 | xargs touch", 1), 0, "30,000 files made");
	gather(w, &seen, NULL, 60000);
	diag("%zu events before the end", seen.n);
	is_int(seen.end, -EOVERFLOW, "the watch ends with EOVERFLOW");
	ok(seen.n < 60000, "fewer events than happened (%zu)", seen.n);
	cordon_watch_free(w);
	free(seen.text);
}

static void test_usage(struct cordon_session *s)
{
	struct cordon_session_usage a = {0}, b = {0};
	struct cordon_error err = {0};
	int k = 0;

	ok(cordon_session_usage(s, 100, &a, &err) == 0, "usage (%s)", err.msg);
	diag("from_cgroup %d, cpus %u, cpu %llu ns in %llu ns, memory %llu used, %llu cache, "
	     "%llu total",
	     a.from_cgroup, a.cpu_count, (unsigned long long)a.cpu_ns,
	     (unsigned long long)a.window_ns, (unsigned long long)a.mem_used,
	     (unsigned long long)a.mem_cache, (unsigned long long)a.mem_total);
	ok(a.cpu_count >= 1 && a.window_ns >= 100000000ull && a.mem_used > 0 &&
	       a.mem_total >= a.mem_used && a.cpu_ns <= a.window_ns * a.cpu_count,
	   "sane figures");
	is_int(cordon_session_usage(s, 0, &a, &err), -EINVAL, "a window of 0: EINVAL");
	/* 200 MB, each page touched, held until the file "stop" appears */
	run(s,
	    "exec python3 -c 'import os, time\nb = bytearray(200 << 20)\n"
	    "for i in range(0, len(b), 4096): b[i] = 1\nopen(\"held\", \"w\").close()\n"
	    "while not os.path.exists(\"stop\"): time.sleep(0.05)'",
	    0);
	while (access("w/held", F_OK) < 0 && k++ < 1200)
		usleep(100000);
	ok(cordon_session_usage(s, 100, &b, &err) == 0, "usage again");
	ok(b.mem_used >= a.mem_used + (180ull << 20),
	   "200 MB held inside: memory used grows by it "
	   "(%llu -> %llu)",
	   (unsigned long long)a.mem_used, (unsigned long long)b.mem_used);
	run(s, "touch stop", 1);
	/* a busy process: some CPU within a window */
	run(s, "exec sh -c 'while [ ! -e stop2 ]; do :; done'", 0);
	for (k = 0; k < 50; k++)
		if (cordon_session_usage(s, 200, &b, &err) == 0 && b.cpu_ns > 0)
			break;
	ok(b.cpu_ns > 0, "a busy loop inside: CPU time within the window (%llu ns)",
	   (unsigned long long)b.cpu_ns);
	run(s, "touch stop2", 1);
}

/* The VM tier (tests/vm/t-session-usage.sh): the session has a cgroup of its own, whose figures
 * the supervisor reads; 64 MB held by a shell inside (busybox: no python) shows in them */
static void test_usage_cgroup(struct cordon_session *s)
{
	struct cordon_session_usage a = {0}, b = {0};
	struct cordon_error err = {0};
	int k = 0;

	ok(cordon_session_usage(s, 100, &a, &err) == 0, "usage (%s)", err.msg);
	diag("from_cgroup %d, cpus %u, cpu %llu ns, memory %llu used, %llu cache, %llu total",
	     a.from_cgroup, a.cpu_count, (unsigned long long)a.cpu_ns,
	     (unsigned long long)a.mem_used, (unsigned long long)a.mem_cache,
	     (unsigned long long)a.mem_total);
	is_int(a.from_cgroup, 1, "from the sandbox's cgroup");
	is_uint(a.mem_total, 4ull << 30, "memTotal: its memory.max (the default 4 GiB)");
	ok(a.mem_used > 0 && a.mem_used < a.mem_total, "memory used within it");
	run(s, "x=$(head -c 67108864 /dev/zero | tr '\\0' a); touch held; "
	       "while [ ! -e stop ]; do sleep 0.1; done; echo ${#x}", 0);
	while (access("w/held", F_OK) < 0 && k++ < 3000)
		usleep(100000);
	ok(cordon_session_usage(s, 100, &b, &err) == 0, "usage again");
	ok(b.mem_used >= a.mem_used + (50ull << 20),
	   "64 MB held by a shell inside: memory used grows (%llu -> %llu)",
	   (unsigned long long)a.mem_used, (unsigned long long)b.mem_used);
	run(s, "touch stop", 1);
}

/* The session killed: a watch ends (ESRCH), usage says the session ended */
static void test_end(struct cordon_session *s)
{
	struct cordon_watch *w = NULL;
	struct cordon_error err = {0};
	struct cordon_session_usage u;
	struct seen seen = {0};

	if (!ok(cordon_session_watch(s, ".", 0, &w, &err) == 0, "a watch before the kill"))
		return;
	cordon_session_kill(s);
	gather(w, &seen, NULL, 30000);
	is_int(seen.end, -ESRCH, "killed: the watch ends (ESRCH)");
	/* the supervisor may still read the emptied cgroup a moment after pid 1 died */
	for (int k = 0; k < 300 && cordon_session_usage(s, 10, &u, &err) == 0; k++)
		usleep(100000);
	ok(cordon_session_usage(s, 10, &u, &err) < 0, "killed: then no usage (%s)", err.msg);
	cordon_watch_free(w);
	free(seen.text);
}

int main(int argc, char **argv)
{
	struct cordon_config *c;
	struct cordon_session *s = NULL;
	struct cordon_result res;
	struct cordon_error err = {0};
	char exe[PATH_MAX], w[PATH_MAX + 8];
	ssize_t n;

	bool cgroup = argc == 3 && !strcmp(argv[1], "--cgroup");

	if (cgroup) {
		argv++;
		argc--;
	}
	if (argc != 2 || !realpath(argv[1], base)) {
		fprintf(stderr, "usage: session-watch-test [--cgroup] BASE_DIR\n");
		return 2;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 2;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(bindir, sizeof(bindir), "%s/cordon", exe);
	setenv("CORDON", bindir, 0);
	snprintf(w, sizeof(w), "%s/w", base);
	mkdir(w, 0755);
	if (chdir(base) < 0)
		return 2;
	c = cordon_config_new();
	if (!c || cordon_config_set_workdir(c, w, &err) < 0 ||
	    cordon_session_create(c, 0, &s, &err) < 0) {
		ok(0, "a session: %s: %s", err.step, err.msg);
		return done_testing();
	}
	cordon_config_free(c);
	if (cgroup) {
		test_usage_cgroup(s);
	} else {
		test_events(s);
		test_errors(s);
		test_overflow(s);
		test_usage(s);
	}
	test_end(s);
	ok(cordon_session_destroy(s, &res, &err) == 0, "destroyed");
	return done_testing();
}
