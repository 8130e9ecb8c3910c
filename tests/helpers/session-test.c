/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * session-test.c - sessions (cordon.h "sessions") for real, through the library: commands,
 * isolation, files, lifecycle. TAP on stdout. Run by tests/integration/t-session.sh as root or
 * as the unprivileged user:
 *
 *   session-test BASE
 *
 * BASE is an empty directory owned by the caller; each session gets a fresh directory below it
 * (BASE/NAME), and files the sandbox must not see live in BASE itself. cordon-agent and cordon
 * sit beside this program (tests/run copies them there).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon.h"
#include "../lib/tap.h"

/* paths here are short test paths; a truncated one would fail its check anyway */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"

#define SEC 1000000000ull

static char base[PATH_MAX];
static char bindir[PATH_MAX + 16];
static char marker[64]; /* unique to this run: in the argv of processes to look for */

/* --- small helpers --- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* BASE/name, made fresh (mode 755) */
static const char *fresh_dir(const char *name)
{
	static char paths[256][PATH_MAX]; /* several threads: a slot each */
	static unsigned n;
	char *p = paths[__atomic_fetch_add(&n, 1, __ATOMIC_RELAXED) % 256];

	snprintf(p, PATH_MAX, "%s/%s", base, name);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		diag("mkdir %s: %s", p, strerror(errno));
	chmod(p, 0755);
	return p;
}

static struct cordon_session *make_session(const char *dir, uint64_t ttl_ns, unsigned flags)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_session *s = NULL;
	struct cordon_error err = { 0 };

	if (!c || cordon_config_set_workdir(c, dir, &err) < 0 ||
	    (ttl_ns && cordon_config_set_timeout(c, ttl_ns, &err) < 0) ||
	    cordon_session_create(c, flags, &s, &err) < 0) {
		diag("session in %s: %s: %s (%d)", dir, err.step, err.msg, err.code);
		s = NULL;
	}
	cordon_config_free(c);
	return s;
}

static int destroy(struct cordon_session *s)
{
	struct cordon_result res;
	struct cordon_error err = { 0 };
	int r;

	if (!s)
		return -EINVAL;
	r = cordon_session_destroy(s, &res, &err);
	if (r < 0)
		diag("destroy: %s: %s", err.step, err.msg);
	return r;
}

/* Read fds until EOF on all or the deadline; appends to bufs (NUL-terminated). */
struct sink {
	int fd;
	char *buf;
	size_t len, cap;
};

static void drain(struct sink *v, int n, uint64_t deadline)
{
	int open_n = n;

	while (open_n > 0) {
		struct pollfd p[4];
		uint64_t t = now_ns();
		int r;

		for (int i = 0; i < n; i++)
			p[i] = (struct pollfd){ v[i].fd, POLLIN, 0 };
		if (t >= deadline) {
			diag("output not closed in time");
			break;
		}
		r = poll(p, (nfds_t)n, (int)((deadline - t) / 1000000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			char chunk[65536];
			ssize_t k;

			if (v[i].fd < 0 || !p[i].revents)
				continue;
			k = read(v[i].fd, chunk, sizeof(chunk));
			if (k <= 0) {
				if (k < 0 && errno == EINTR)
					continue;
				close(v[i].fd);
				v[i].fd = -1;
				open_n--;
				continue;
			}
			if (v[i].len + (size_t)k + 1 > v[i].cap) {
				v[i].cap = (v[i].len + (size_t)k + 1) * 2;
				v[i].buf = realloc(v[i].buf, v[i].cap);
			}
			memcpy(v[i].buf + v[i].len, chunk, (size_t)k);
			v[i].len += (size_t)k;
			v[i].buf[v[i].len] = '\0';
		}
	}
	for (int i = 0; i < n; i++) {
		if (v[i].fd >= 0)
			close(v[i].fd);
		if (!v[i].buf)
			v[i].buf = calloc(1, 1);
	}
}

/* One command run to its end. */
struct run {
	int r;      /* cordon_session_exec's */
	struct cordon_error err;
	int status; /* wait status; -1 when not waited */
	char *out, *errout;
};

static void run_clear(struct run *r)
{
	free(r->out);
	free(r->errout);
	memset(r, 0, sizeof(*r));
}

/* Run argv (env, cwd, stdin text may be NULL) and collect stdout, stderr and the status. */
static struct run run_full(struct cordon_session *s, const char *const *argv,
			   const char *const *env, const char *cwd, const char *input)
{
	struct run res = { .status = -1 };
	int o[2], e[2], in[2] = { -1, -1 };
	struct cordon_exec ex = { .argv = argv, .env = env, .cwd = cwd };
	struct cordon_process *p = NULL;
	struct sink sk[2];

	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0 ||
	    (input && pipe2(in, O_CLOEXEC) < 0)) {
		res.r = -errno;
		res.out = strdup("");
		res.errout = strdup("");
		return res;
	}
	ex.fd[0] = in[0];
	ex.fd[1] = o[1];
	ex.fd[2] = e[1];
	res.r = cordon_session_exec(s, &ex, &p, &res.err);
	close(o[1]);
	close(e[1]);
	if (in[0] >= 0) {
		close(in[0]);
		if (res.r == 0 && write(in[1], input, strlen(input)) < 0)
			diag("write stdin: %s", strerror(errno));
		close(in[1]);
	}
	sk[0] = (struct sink){ .fd = o[0] };
	sk[1] = (struct sink){ .fd = e[0] };
	drain(sk, 2, now_ns() + 60 * SEC);
	res.out = sk[0].buf;
	res.errout = sk[1].buf;
	if (res.r == 0) {
		struct cordon_error werr;

		if (cordon_process_wait(p, 60 * SEC, &res.status, &werr) != 1) {
			diag("wait: %s", werr.msg);
			res.status = -1;
		}
		cordon_process_free(p);
	}
	return res;
}

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static struct run sh(struct cordon_session *s, const char *script)
{
	return run_full(s, ARGV("sh", "-c", script), NULL, NULL, NULL);
}

/* sh -c script; its stdout, or "" when it failed to start */
static char *sh_out(struct cordon_session *s, const char *script, int *ret_status)
{
	struct run r = sh(s, script);
	char *out = r.out;

	if (r.r < 0)
		diag("exec sh -c %s: %s: %s", script, r.err.step, r.err.msg);
	if (r.errout && *r.errout)
		diag("stderr: %s", r.errout);
	if (ret_status)
		*ret_status = r.status;
	r.out = NULL;
	run_clear(&r);
	return out ? out : strdup("");
}

static bool exited(int status, int code)
{
	return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == code;
}

/* Write len bytes to path through the session: 0, or -errno (err filled) */
static int put_file(struct cordon_session *s, const char *path, uint32_t mode, const void *data,
		    size_t len, uint64_t *ret_bytes, struct cordon_error *err)
{
	struct cordon_upload *u;
	const char *p = data;
	int fd, r;

	r = cordon_session_write(s, path, mode, &u, &fd, err);
	if (r < 0)
		return r;
	while (len > 0) {
		ssize_t k = write(fd, p, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break; /* EPIPE: the writer failed; finish says why */
		p += k;
		len -= (size_t)k;
	}
	close(fd);
	return cordon_upload_finish(u, ret_bytes, err);
}

/* Read path through the session: 0 with *ret (malloc'd) and *ret_len, or -errno */
static int get_file(struct cordon_session *s, const char *path, char **ret, size_t *ret_len,
		    struct cordon_error *err)
{
	struct sink sk;
	int fd, r;

	r = cordon_session_open_read(s, path, &fd, err);
	if (r < 0)
		return r;
	sk = (struct sink){ .fd = fd };
	drain(&sk, 1, now_ns() + 30 * SEC);
	*ret = sk.buf;
	*ret_len = sk.len;
	return 0;
}

/* Is a process whose command line contains needle alive (not a zombie) on the host? */
static bool process_with(const char *needle)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char path[300], buf[4096];
		ssize_t n;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n] = '\0';
		found = strstr(buf, needle) != NULL;
	}
	closedir(d);
	return found;
}

/* Alive and not a zombie */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Wait up to 10 s for `exec -a MARK sleep 1000` to have become the sleep ("MARK 1000"): while
 * bash execs, its command line reads empty for a moment */
static bool sleeper_running(const char *mark)
{
	char exact[160];

	snprintf(exact, sizeof(exact), "%s 1000", mark);
	for (uint64_t end = now_ns() + 10 * SEC; now_ns() < end; nap_ms(20))
		if (process_with(exact))
			return true;
	return false;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Run fn(arg) in a thread; false when it has not returned within secs (the thread is left) */
static bool within(void *(*fn)(void *), void *arg, int secs)
{
	struct timespec ts;
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg) != 0)
		return false;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	if (pthread_timedjoin_np(t, NULL, &ts) != 0) {
		pthread_detach(t);
		return false;
	}
	return true;
}

struct file_call {
	struct cordon_session *s;
	const char *path;
	int r, fd;
	uint64_t bytes;
	struct cordon_error err;
};

static void *call_open_read(void *data)
{
	struct file_call *c = data;

	c->fd = -1;
	c->r = cordon_session_open_read(c->s, c->path, &c->fd, &c->err);
	return NULL;
}

static void *call_put(void *data)
{
	struct file_call *c = data;

	c->r = put_file(c->s, c->path, 0644, "data", 4, &c->bytes, &c->err);
	return NULL;
}

/* --- exec --- */

static void test_exec(struct cordon_session *s, const char *w)
{
	struct run r;
	char *out;
	int st;

	r = run_full(s, ARGV("echo", "hello", "world"), NULL, NULL, NULL);
	ok(r.r == 0 && !strcmp(r.out, "hello world\n") && exited(r.status, 0),
	   "exec: output through the passed pipe, exit 0");
	run_clear(&r);

	r = sh(s, "echo to-stderr >&2; exit 42");
	ok(r.r == 0 && exited(r.status, 42) && !strcmp(r.errout, "to-stderr\n"),
	   "exec: exit status 42 and stderr through its own pipe");
	run_clear(&r);

	r = sh(s, "kill -KILL $$");
	ok(r.r == 0 && r.status >= 0 && WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL,
	   "exec: a command killed by SIGKILL: WIFSIGNALED, SIGKILL");
	run_clear(&r);

	r = run_full(s, ARGV("sh", "-c", "echo \"$FOO|$HOME|$PATH\""),
		     ARGV("FOO=bar baz", "HOME=/tmp/h", "PATH=/bin:/usr/bin:/x"), NULL, NULL);
	is_str(r.out, "bar baz|/tmp/h|/bin:/usr/bin:/x\n", "exec: env added (FOO) and replacing (HOME, PATH)");
	run_clear(&r);

	r = run_full(s, ARGV("sh", "-c", "env | grep -c '^HOME='"), ARGV("HOME=/tmp/h"), NULL, NULL);
	is_str(r.out, "1\n", "exec: a replaced variable is there once");
	run_clear(&r);

	r = run_full(s, ARGV("sh", "-c", "echo $PATH"), NULL, NULL, NULL);
	ok(r.out && strstr(r.out, "/usr/bin"), "exec: without env, the session's PATH (%.*s)",
	   r.out ? (int)strcspn(r.out, "\n") : 0, r.out ? r.out : "");
	run_clear(&r);

	free(sh_out(s, "mkdir -p sub/dir", NULL));
	r = run_full(s, ARGV("pwd"), NULL, "sub/dir", NULL);
	{
		char want[PATH_MAX + 16];

		snprintf(want, sizeof(want), "%s/sub/dir\n", w);
		is_str(r.out, want, "exec: cwd relative to the workdir");
	}
	run_clear(&r);
	r = run_full(s, ARGV("pwd"), NULL, "/tmp", NULL);
	is_str(r.out, "/tmp\n", "exec: cwd absolute");
	run_clear(&r);
	r = run_full(s, ARGV("pwd"), NULL, NULL, NULL);
	{
		char want[PATH_MAX + 16];

		snprintf(want, sizeof(want), "%s\n", w);
		is_str(r.out, want, "exec: no cwd: the workdir");
	}
	run_clear(&r);

	r = run_full(s, ARGV("pwd"), NULL, "no/such/dir", NULL);
	ok(r.r < 0 && r.err.code == ENOENT && !strcmp(r.err.step, "exec") && r.err.msg[0],
	   "exec: missing cwd -> ENOENT, step exec (%d %s: %s)", r.err.code, r.err.step, r.err.msg);
	run_clear(&r);

	r = run_full(s, ARGV("no-such-command-xyz"), NULL, NULL, NULL);
	ok(r.r == -ENOENT && r.err.code == ENOENT && !strcmp(r.err.step, "exec") &&
		   strstr(r.err.msg, "no-such-command-xyz"),
	   "exec: command not found -> ENOENT naming it (%d %s: %s)", r.err.code, r.err.step,
	   r.err.msg);
	run_clear(&r);

	{
		struct cordon_error err;
		uint64_t n;

		put_file(s, "notexec.sh", 0644, "#!/bin/sh\necho ran\n", 19, &n, &err);
		r = run_full(s, ARGV("./notexec.sh"), NULL, NULL, NULL);
		ok(r.r < 0 && r.err.code == EACCES && !strcmp(r.err.step, "exec"),
		   "exec: not executable -> EACCES (%d %s: %s)", r.err.code, r.err.step, r.err.msg);
		run_clear(&r);
	}

	{
		size_t big = 70 * 1024;
		char *arg = malloc(big + 1), *envs = malloc(big + 8);
		const char *many[1100];

		memset(arg, 'a', big);
		arg[big] = '\0';
		memcpy(envs, "BIG=", 4);
		memset(envs + 4, 'b', big);
		envs[big + 4] = '\0';
		r = run_full(s, ARGV("echo", arg), NULL, NULL, NULL);
		ok(r.r == -E2BIG && r.err.code == E2BIG, "exec: a 70 KiB argument -> E2BIG (%s)",
		   r.err.msg);
		run_clear(&r);
		r = run_full(s, ARGV("true"), ARGV(envs), NULL, NULL);
		ok(r.r == -E2BIG && r.err.code == E2BIG, "exec: a 70 KiB variable -> E2BIG");
		run_clear(&r);
		many[0] = "true";
		for (int i = 1; i < 1099; i++)
			many[i] = "x";
		many[1099] = NULL;
		r = run_full(s, many, NULL, NULL, NULL);
		ok(r.r == -E2BIG && r.err.code == E2BIG, "exec: 1099 arguments -> E2BIG");
		run_clear(&r);
		free(arg);
		free(envs);
	}

	r = run_full(s, ARGV("true"), ARGV("NOEQUALS"), NULL, NULL);
	ok(r.r == -EINVAL && r.err.code == EINVAL, "exec: env entry without = -> EINVAL");
	run_clear(&r);
	r = run_full(s, ARGV("true"), ARGV("=value"), NULL, NULL);
	ok(r.r == -EINVAL && r.err.code == EINVAL, "exec: env entry with an empty key -> EINVAL");
	run_clear(&r);
	{
		struct cordon_process *p = NULL;
		struct cordon_error err;
		struct cordon_exec e = { .argv = ARGV(""), .fd = { -1, -1, -1 } };

		ok(cordon_session_exec(s, &e, &p, &err) == -EINVAL, "exec: empty argv[0] -> EINVAL");
		e.argv = ARGV("true");
		e.flags = 0x100;
		ok(cordon_session_exec(s, &e, &p, &err) == -EINVAL, "exec: unknown flags -> EINVAL");
	}

	r = run_full(s, ARGV("cat"), NULL, NULL, "line one\nline two\n");
	ok(r.r == 0 && !strcmp(r.out, "line one\nline two\n") && exited(r.status, 0),
	   "exec: stdin through a pipe (cat echoes it)");
	run_clear(&r);

	r = run_full(s, ARGV("cat"), NULL, NULL, NULL);
	ok(r.r == 0 && !strcmp(r.out, "") && exited(r.status, 0), "exec: no stdin: /dev/null");
	run_clear(&r);

	/* state persists between commands */
	free(sh_out(s, "echo persisted >state.txt", NULL));
	out = sh_out(s, "cat state.txt", &st);
	is_str(out, "persisted\n", "exec: a file one command wrote, the next reads");
	free(out);
}

/* 5 commands at once, each blocked on its stdin until we close it */
static void test_concurrent(struct cordon_session *s)
{
	struct cordon_process *p[5] = { 0 };
	int in[2], started = 0, running = 0, done = 0;
	pid_t pids[5] = { 0 };
	bool distinct = true;

	if (pipe2(in, O_CLOEXEC) < 0)
		return;
	for (int i = 0; i < 5; i++) {
		struct cordon_exec e = { .argv = ARGV("cat"), .fd = { in[0], -1, -1 } };
		struct cordon_error err;

		if (cordon_session_exec(s, &e, &p[i], &err) == 0) {
			started++;
			pids[i] = cordon_process_pid(p[i]);
		} else {
			diag("exec %d: %s", i, err.msg);
		}
	}
	close(in[0]);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < i; j++)
			distinct &= pids[i] != pids[j] && pids[i] > 0;
	for (int i = 0; i < 5; i++) {
		struct cordon_error err;
		int status;

		if (p[i] && cordon_process_wait(p[i], 0, &status, &err) == 0)
			running++;
	}
	is_int(started, 5, "several: 5 commands started");
	ok(distinct, "several: 5 distinct pids inside");
	is_int(running, 5, "several: all 5 running at once (wait with timeout 0 -> 0)");
	close(in[1]);
	for (int i = 0; i < 5; i++) {
		struct cordon_error err;
		int status = -1;

		if (p[i] && cordon_process_wait(p[i], 30 * SEC, &status, &err) == 1 &&
		    exited(status, 0))
			done++;
		cordon_process_free(p[i]);
	}
	is_int(done, 5, "several: all 5 ended with status 0 once their stdin closed");
}

static void test_signals(struct cordon_session *s)
{
	struct cordon_process *p;
	struct cordon_error err;
	int status = -1, r;
	char *out;
	struct cordon_exec e = { .argv = ARGV("sleep", "100"), .fd = { -1, -1, -1 } };
	char path[64], line[256];
	FILE *f;

	/* we ignore SIGPIPE (main), the agent SIGPIPE, SIGINT and SIGHUP: none of it reaches a
	 * command (src/base/sigreset.c resets what /proc/self/status shows set), nor the supervisor */
	out = sh_out(s, "grep -E '^Sig(Blk|Ign)' /proc/self/status", &status);
	is_str(out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n",
	       "signal: a command starts with every signal at its default, none blocked");
	free(out);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cordon_session_pid(s));
	f = fopen(path, "re");
	out = NULL;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigIgn:", 7))
			out = strdup(line);
	if (f)
		fclose(f);
	is_str(out ? out : "", "SigIgn:\t0000000000000000\n",
	       "signal: the supervisor ignores none of the signals its caller ignores");
	free(out);
	status = -1;

	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		ok(0, "signal: start sleep: %s", err.msg);
		return;
	}
	ok(cordon_process_pid(p) > 1, "signal: the process has a pid inside (%d)",
	   cordon_process_pid(p));
	is_int(cordon_process_wait(p, 0, &status, &err), 0, "wait with timeout 0 -> 0 while running");
	is_int(cordon_process_wait(p, 200 * 1000000ull, &status, &err), 0,
	       "wait with timeout 200 ms -> 0 while running");
	ok(cordon_process_signal(p, SIGTERM, 0, &err) == 0, "signal: SIGTERM sent");
	r = cordon_process_wait(p, 30 * SEC, &status, &err);
	ok(r == 1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
	   "signal: the process died of SIGTERM (r %d status %#x)", r, status);
	ok(cordon_process_wait(p, 0, &status, &err) == 1 && WTERMSIG(status) == SIGTERM,
	   "wait again after the end: 1, same status");
	ok(cordon_process_signal(p, SIGTERM, 0, &err) < 0, "signal: to an ended process fails");
	cordon_process_free(p);

	e.argv = ARGV("sleep", "100");
	if (cordon_session_exec(s, &e, &p, &err) == 0) {
		ok(cordon_process_signal(p, 0, 0, &err) == -EINVAL && err.code == EINVAL,
		   "signal: 0 is refused (EINVAL)");
		ok(cordon_process_signal(p, 999, 0, &err) == -EINVAL, "signal: 999 is refused");
		cordon_process_signal(p, SIGKILL, 0, &err);
		cordon_process_wait(p, 30 * SEC, &status, &err);
		cordon_process_free(p);
	}

	/* to the group: the shell and its background sleep */
	e.argv = ARGV("sh", "-c", "sleep 101 & wait");
	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		ok(0, "signal group: start: %s", err.msg);
		return;
	}
	for (uint64_t end = now_ns() + 10 * SEC; now_ns() < end; nap_ms(20)) {
		out = sh_out(s, "ps -eo args | grep -c '^sleep 101'", NULL);
		r = atoi(out);
		free(out);
		if (r == 1)
			break;
	}
	ok(cordon_process_signal(p, SIGKILL, 1, &err) == 0, "signal group: SIGKILL sent");
	r = cordon_process_wait(p, 30 * SEC, &status, &err);
	ok(r == 1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "signal group: the shell died of SIGKILL");
	cordon_process_free(p);
	out = NULL;
	for (uint64_t end = now_ns() + 10 * SEC; now_ns() < end; nap_ms(20)) {
		free(out);
		out = sh_out(s, "ps -eo args | grep -c '^sleep 101'", NULL);
		if (!strcmp(out, "0\n"))
			break;
	}
	is_str(out, "0\n", "signal group: its background sleep died too");
	free(out);

	/* to the process alone: the background sleep lives on */
	e.argv = ARGV("sh", "-c", "sleep 102 & wait");
	if (cordon_session_exec(s, &e, &p, &err) == 0) {
		for (uint64_t end = now_ns() + 10 * SEC; now_ns() < end; nap_ms(20)) {
			out = sh_out(s, "ps -eo args | grep -c '^sleep 102'", NULL);
			r = atoi(out);
			free(out);
			if (r == 1)
				break;
		}
		cordon_process_signal(p, SIGKILL, 0, &err);
		r = cordon_process_wait(p, 30 * SEC, &status, &err);
		out = sh_out(s, "ps -eo args | grep -c '^sleep 102'", NULL);
		ok(r == 1 && WIFSIGNALED(status) && !strcmp(out, "1\n"),
		   "signal without group: the shell died, its child did not");
		free(out);
		cordon_process_free(p);
		free(sh_out(s, "pkill -f '^sleep 102' || kill $(pgrep -f '^sleep 102')", NULL));
	}
}

/* A background process runs on after its handle is freed; dies at destroy (checked later). */
static void test_background(struct cordon_session *s, char *mark, size_t size)
{
	struct cordon_process *p;
	struct cordon_error err;
	char script[256], *out;
	struct cordon_exec e = { .fd = { -1, -1, -1 } };
	int status = 0;

	snprintf(mark, size, "%s-bg", marker);
	snprintf(script, sizeof(script), "echo $$ >bg.pid; exec -a %s sleep 1000", mark);
	e.argv = ARGV("bash", "-c", script);
	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		ok(0, "background: start: %s", err.msg);
		return;
	}
	cordon_process_free(p);
	ok(sleeper_running(mark), "background: its process is on the host");
	out = sh_out(s, "kill -0 $(cat bg.pid) && echo alive", &status);
	is_str(out, "alive\n", "background: runs on after cordon_process_free (seen inside)");
	free(out);
}

/* A new pty: the master, and the slave's path in *slave; -1 when there is none */
static int new_pty(char *slave, size_t size)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !ptsname(m)) {
		if (m >= 0)
			close(m);
		return -1;
	}
	snprintf(slave, size, "%s", ptsname(m));
	return m;
}

/* `cordon -w DIR -- sh -c script` on a pty of its own (its controlling terminal): the output */
static char *oneshot_on_pty(const char *script)
{
	char slave[128], dir[PATH_MAX];
	int m = new_pty(slave, sizeof(slave));
	struct sink sk;
	pid_t pid;

	if (m < 0)
		return strdup("");
	snprintf(dir, sizeof(dir), "%s", fresh_dir("oneshot-pty"));
	pid = fork();
	if (pid == 0) {
		int sl;

		setsid();
		sl = open(slave, O_RDWR | O_CLOEXEC); /* our controlling terminal */
		if (sl < 0 || dup2(sl, 0) < 0 || dup2(sl, 1) < 0 || dup2(sl, 2) < 0)
			_exit(126);
		execl(getenv("CORDON") ? getenv("CORDON") : "cordon", "cordon", "-w", dir, "--",
		      "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	sk = (struct sink){ .fd = m };
	drain(&sk, 1, now_ns() + 30 * SEC);
	waitpid(pid, NULL, 0);
	return sk.buf;
}

/* A pty: posix_openpt on the host, the slave passed as 0-2 with CORDON_EXEC_TTY */
static void test_tty(struct cordon_session *s)
{
	static const char script[] =
		"tty; test -t 0 && echo is-a-tty; : </dev/tty && echo ctty; "
		"exec python3 -c 'import os; print(\"fg\", os.tcgetpgrp(0) == os.getpgrp(), "
		"\"leader\", os.getsid(0) == os.getpid())'";
	char slave[128], *one;
	int m = new_pty(slave, sizeof(slave)), sl, status = -1, r;
	struct cordon_process *p;
	struct cordon_error err;
	struct sink sk;

	if (m < 0) {
		skip("no posix_openpt", "tty: a terminal");
		return;
	}
	sl = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0) {
		skip("cannot open the pty's slave", "tty: a terminal");
		close(m);
		return;
	}
	struct cordon_exec e = {
		.argv = ARGV("sh", "-c", script), .fd = { sl, sl, sl }, .flags = CORDON_EXEC_TTY,
	};
	r = cordon_session_exec(s, &e, &p, &err);
	close(sl);
	if (r < 0) {
		ok(0, "tty: exec: %s: %s", err.step, err.msg);
		close(m);
		return;
	}
	sk = (struct sink){ .fd = m };
	drain(&sk, 1, now_ns() + 30 * SEC); /* EIO at the end: the slave closed everywhere */
	r = cordon_process_wait(p, 30 * SEC, &status, &err);
	cordon_process_free(p);
	diag("tty output: %s", sk.buf);
	ok(r == 1 && WIFEXITED(status), "tty: the command ran to its end (status %#x)", status);
	/* README "Known limits": the terminal is the caller's (the host's devpts), which has no
	 * name inside: isatty() holds, ttyname() does not */
	ok(strstr(sk.buf, "not a tty") != NULL,
	   "tty: `tty` finds no name for it inside (the host's /dev/pts is not there)");
	one = oneshot_on_pty("tty");
	diag("a one-shot run's `tty` on a pty: %s", one);
	ok(!strncmp(sk.buf, one, strcspn(one, "\r\n")) || !strncmp(sk.buf, "/dev/pts/", 9),
	   "tty: `tty` says what it says in a one-shot run on a terminal");
	free(one);
	like_str(sk.buf, "is-a-tty", "tty: test -t 0 is true");
	like_str(sk.buf, "ctty", "tty: it is the command's controlling terminal (/dev/tty opens)");
	if (access("/usr/bin/python3", X_OK) == 0)
		like_str(sk.buf, "fg True leader True",
			 "tty: the command leads its own session and is the foreground group");
	free(sk.buf);
}

/* A server started by one command, reached by the next over the session's loopback */
static void test_server(struct cordon_session *s)
{
	struct cordon_process *p;
	struct cordon_error err;
	struct cordon_file_info fi;
	struct run r;
	int status = -1, got = -1;
	struct cordon_exec e = {
		.argv = ARGV("python3", "-c",
			     "import socket\n"
			     "s = socket.socket()\n"
			     "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
			     "s.bind(('127.0.0.1', 18765))\n"
			     "s.listen(1)\n"
			     "open('server.ready', 'w').close()\n"
			     "c, _ = s.accept()\n"
			     "c.sendall(b'pong ' + c.recv(100))\n"
			     "c.close()\n"),
		.fd = { -1, -1, -1 },
	};

	if (access("/usr/bin/python3", X_OK) < 0) {
		skip("no /usr/bin/python3", "server: reached by the next command");
		return;
	}
	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		ok(0, "server: start: %s", err.msg);
		return;
	}
	for (uint64_t end = now_ns() + 20 * SEC; now_ns() < end; nap_ms(20)) {
		got = cordon_session_stat(s, "server.ready", &fi, &err);
		if (got == 0) {
			cordon_file_info_clear(&fi);
			break;
		}
	}
	ok(got == 0, "server: listening inside");
	r = run_full(s, ARGV("python3", "-c",
			     "import socket\n"
			     "c = socket.create_connection(('127.0.0.1', 18765))\n"
			     "c.sendall(b'ping')\n"
			     "print(c.recv(100).decode())\n"),
		     NULL, NULL, NULL);
	is_str(r.out, "pong ping\n", "server: the next command reaches it over loopback");
	run_clear(&r);
	ok(cordon_process_wait(p, 30 * SEC, &status, &err) == 1 && exited(status, 0),
	   "server: it served and exited 0");
	cordon_process_free(p);
	{
		/* the host's loopback is another: nothing listens there for us */
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(18765),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		ok(connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0,
		   "server: not reachable from the host's loopback");
		close(fd);
	}
}

/* --- isolation --- */

static void test_isolation(struct cordon_session *s, const char *w)
{
	char cmd[PATH_MAX * 2], host_id[512] = "", *out;
	FILE *f;
	struct run r;

	/* identity: as a one-shot run's */
	snprintf(cmd, sizeof(cmd), "%s -w %s -- id 2>&1", getenv("CORDON") ? getenv("CORDON") : "cordon",
		 fresh_dir("oneshot"));
	f = popen(cmd, "r");
	if (f) {
		size_t n = fread(host_id, 1, sizeof(host_id) - 1, f);

		host_id[n] = '\0';
		pclose(f);
	}
	out = sh_out(s, "id", NULL);
	ok(host_id[0] && !strcmp(out, host_id), "isolation: `id` as in a one-shot run (%.*s)",
	   (int)strcspn(out, "\n"), out);
	if (strcmp(out, host_id))
		diag("one-shot: %s", host_id);
	free(out);
	out = sh_out(s, "cat /proc/self/uid_map /proc/self/gid_map | tr -s ' ' | tr '\\n' ';'", NULL);
	diag("inside maps: %s", out);
	free(out);

	r = sh(s, "echo x >/etc/cordon-session-test");
	ok(r.r == 0 && !exited(r.status, 0) && strstr(r.errout, "Read-only"),
	   "isolation: /etc is read-only (%s)", r.errout ? r.errout : "");
	run_clear(&r);
	ok(!exists("/etc/cordon-session-test"), "isolation: ... and nothing appeared on the host");

	/* as root, /root is HOME (the caller's home path): cordon's .gitconfig only */
	out = sh_out(s, "ls -A /root 2>/dev/null | grep -vxF .gitconfig | wc -l", NULL);
	is_str(out, "0\n", "isolation: /root is empty inside (but for HOME's .gitconfig, as root)");
	free(out);
	out = sh_out(s, "cat /proc/self/status | grep -E '^(CapEff|NoNewPrivs|Seccomp):' | "
			"tr -s '\\t ' ' ' | tr '\\n' ';'", NULL);
	ok(strstr(out, "CapEff: 0000000000000000") && strstr(out, "NoNewPrivs: 1") &&
		   strstr(out, "Seccomp: 2"),
	   "isolation: no capabilities, no_new_privs, a seccomp filter (%s)", out);
	free(out);

	/* no network to the host's loopback */
	{
		int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), c;
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t al = sizeof(a);
		char script[256];

		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 8) < 0 ||
		    getsockname(l, (struct sockaddr *)&a, &al) < 0) {
			skip("no host listener", "isolation: host loopback not reachable");
		} else {
			snprintf(script, sizeof(script),
				 "exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", ntohs(a.sin_port));
			r = run_full(s, ARGV("bash", "-c", script), NULL, NULL, NULL);
			ok(r.r == 0 && !exited(r.status, 0) && !strstr(r.out, "connected"),
			   "isolation: a host listener on 127.0.0.1:%d cannot be reached",
			   ntohs(a.sin_port));
			run_clear(&r);
			c = accept(l, NULL, NULL);
			ok(c < 0 && errno == EAGAIN, "isolation: ... and it got no connection");
			if (c >= 0)
				close(c);
		}
		if (l >= 0)
			close(l);
	}

	/* the agent's descriptors are not the commands' */
	out = sh_out(s, "ls /proc/self/fd | tr '\\n' ' '", NULL);
	is_str(out, "0 1 2 3 ", "isolation: a command has only 0 1 2 (and ls's own 3)");
	free(out);
	out = sh_out(s, "ls -l /proc/$$/fd | grep -c socket", NULL);
	is_str(out, "0\n", "isolation: no socket among a command's descriptors");
	free(out);
	(void)w;
}

/* A second session sees neither the first's processes nor its files. */
static void test_two_sessions(struct cordon_session *s1, const char *w1)
{
	const char *w2 = fresh_dir("second");
	struct cordon_session *s2 = make_session(w2, 0, 0);
	struct cordon_process *p;
	struct cordon_error err;
	struct cordon_file_info fi;
	char mark[128], script[256], *out;
	int status, r;
	pid_t pid;
	struct cordon_exec e = { .fd = { -1, -1, -1 } };

	if (!s2) {
		ok(0, "two sessions: the second created");
		return;
	}
	snprintf(mark, sizeof(mark), "%s-first", marker);
	snprintf(script, sizeof(script), "exec -a %s sleep 1000", mark);
	e.argv = ARGV("bash", "-c", script);
	if (cordon_session_exec(s1, &e, &p, &err) < 0) {
		ok(0, "two sessions: start in the first: %s", err.msg);
		destroy(s2);
		return;
	}
	pid = cordon_process_pid(p);
	snprintf(script, sizeof(script), "ps -eo args | grep -c '^%s'", mark);
	for (uint64_t end = now_ns() + 10 * SEC; now_ns() < end; nap_ms(20)) {
		out = sh_out(s1, script, NULL);
		r = atoi(out);
		free(out);
		if (r == 1)
			break;
	}
	out = sh_out(s1, script, NULL);
	is_str(out, "1\n", "two sessions: the first sees its process");
	free(out);
	out = sh_out(s2, script, NULL);
	is_str(out, "0\n", "two sessions: the second does not");
	free(out);
	out = sh_out(s2, "ps -e --no-headers | wc -l", NULL);
	ok(atoi(out) <= 5, "two sessions: the second sees only its own few processes (%d)",
	   atoi(out));
	free(out);
	if (pid > 10) {
		snprintf(script, sizeof(script), "kill -0 %d 2>/dev/null && echo reached", pid);
		out = sh_out(s2, script, &status);
		is_str(out, "", "two sessions: the second cannot signal the first's pid %d", pid);
		free(out);
	} else {
		skip("the pid is too small to be sure it is the second's free", "two sessions: kill");
	}
	free(sh_out(s1, "echo first >first-only.txt", NULL));
	{
		char path[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/first-only.txt", w1);
		r = cordon_session_stat(s2, path, &fi, &err);
		ok(r < 0 && err.code == ENOENT, "two sessions: the first's workdir is not in the second "
		   "(stat %s: %d)", path, err.code);
		if (r == 0)
			cordon_file_info_clear(&fi);
		snprintf(script, sizeof(script), "cat %s 2>/dev/null", path);
		out = sh_out(s2, script, NULL);
		is_str(out, "", "two sessions: a command of the second cannot read it");
		free(out);
	}
	cordon_process_signal(p, SIGKILL, 1, &err);
	cordon_process_wait(p, 30 * SEC, &status, &err);
	cordon_process_free(p);
	ok(destroy(s2) == 0, "two sessions: the second destroyed");
}

/* --- files --- */

static void test_files(struct cordon_session *s, const char *w)
{
	struct cordon_error err;
	struct cordon_file_info fi, *v = NULL;
	uint64_t bytes = 0;
	char *got = NULL, path[PATH_MAX + 64], *out;
	size_t n = 0, big = 5u << 20;
	char bin[512];
	int r, made = -1;
	struct stat st;

	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(i % 256);
	r = put_file(s, "bin.dat", 0644, bin, sizeof(bin), &bytes, &err);
	ok(r == 0 && bytes == sizeof(bin), "files: write binary with NULs (%d, %ju bytes: %s)", r,
	   (uintmax_t)bytes, err.msg);
	r = get_file(s, "bin.dat", &got, &n, &err);
	ok(r == 0 && n == sizeof(bin) && !memcmp(got, bin, n), "files: read it back, byte for byte");
	free(got);
	snprintf(path, sizeof(path), "%s/bin.dat", w);
	ok(stat(path, &st) == 0 && st.st_size == (off_t)sizeof(bin), "files: the host sees it");

	r = put_file(s, "empty", 0644, "", 0, &bytes, &err);
	ok(r == 0 && bytes == 0, "files: write 0 bytes");
	got = NULL;
	r = get_file(s, "empty", &got, &n, &err);
	ok(r == 0 && n == 0, "files: read 0 bytes back");
	free(got);

	{
		char *data = malloc(big);

		for (size_t i = 0; i < big; i++)
			data[i] = (char)((i * 7 + i / 4096) & 0xff);
		r = put_file(s, "big/five.mb", 0644, data, big, &bytes, &err);
		ok(r == 0 && bytes == big, "files: write 5 MiB (bytes %ju)", (uintmax_t)bytes);
		got = NULL;
		r = get_file(s, "big/five.mb", &got, &n, &err);
		ok(r == 0 && n == big && !memcmp(got, data, big), "files: read 5 MiB back");
		free(got);
		free(data);
	}

	r = put_file(s, "deep/er/still/f.txt", 0644, "x", 1, &bytes, &err);
	ok(r == 0, "files: write makes missing parent directories (%s)", err.msg);
	snprintf(path, sizeof(path), "%s/deep/er/still/f.txt", w);
	ok(exists(path), "files: ... there on the host");

	r = put_file(s, "secret.txt", 0600, "s", 1, &bytes, &err);
	ok(r == 0 && cordon_session_stat(s, "secret.txt", &fi, &err) == 0 &&
		   (fi.mode & 07777) == 0600 && fi.type == CORDON_FILE_REGULAR,
	   "files: mode 0600 honoured (%o)", fi.mode & 07777);
	cordon_file_info_clear(&fi);
	r = put_file(s, "umask.txt", 0666, "s", 1, &bytes, &err);
	ok(r == 0 && cordon_session_stat(s, "umask.txt", &fi, &err) == 0 &&
		   (fi.mode & 07777) == 0644,
	   "files: mode 0666 less the umask: 0644 (%o)", fi.mode & 07777);
	cordon_file_info_clear(&fi);
	r = put_file(s, "umask.txt", 0644, "over", 4, &bytes, &err);
	got = NULL;
	ok(r == 0 && get_file(s, "umask.txt", &got, &n, &err) == 0 && n == 4 &&
		   !memcmp(got, "over", 4),
	   "files: write truncates an existing file");
	free(got);
	{
		struct cordon_upload *u;
		int fd;

		ok(cordon_session_write(s, "x", 010000, &u, &fd, &err) == -EINVAL,
		   "files: write with a mode beyond 07777 -> EINVAL");
	}

	/* stat */
	r = cordon_session_stat(s, "bin.dat", &fi, &err);
	snprintf(path, sizeof(path), "%s/bin.dat", w);
	ok(r == 0 && fi.type == CORDON_FILE_REGULAR && fi.size == sizeof(bin) &&
		   fi.path && !strcmp(fi.path, path) && !strcmp(fi.name, "bin.dat") &&
		   !fi.link_target && fi.mtime_ns > 0,
	   "files: stat a file: regular, size, absolute path, name");
	cordon_file_info_clear(&fi);
	r = cordon_session_stat(s, "deep", &fi, &err);
	ok(r == 0 && fi.type == CORDON_FILE_DIRECTORY && S_ISDIR(fi.mode), "files: stat a directory");
	cordon_file_info_clear(&fi);
	free(sh_out(s, "ln -s bin.dat link.dat", NULL));
	r = cordon_session_stat(s, "link.dat", &fi, &err);
	ok(r == 0 && fi.type == CORDON_FILE_SYMLINK && fi.link_target &&
		   !strcmp(fi.link_target, "bin.dat"),
	   "files: stat a symlink: not followed, link_target \"%s\"",
	   fi.link_target ? fi.link_target : "(null)");
	cordon_file_info_clear(&fi);
	r = cordon_session_stat(s, "/", &fi, &err);
	ok(r == 0 && fi.type == CORDON_FILE_DIRECTORY && !strcmp(fi.path, "/"), "files: stat /");
	cordon_file_info_clear(&fi);
	r = cordon_session_stat(s, "no-such-file", &fi, &err);
	ok(r == -ENOENT && err.code == ENOENT && !strcmp(err.step, "stat"),
	   "files: stat of a missing file -> ENOENT");
	r = cordon_session_stat(s, "", &fi, &err);
	ok(r == -EINVAL, "files: stat of \"\" -> EINVAL");

	/* list */
	free(sh_out(s, "mkdir -p tree/b/deeper tree/a && : >tree/c && : >tree/b/x && "
		       ": >tree/b/deeper/y", NULL));
	r = cordon_session_list(s, "tree", 1, 100, &v, &n, &err);
	{
		char want[3][PATH_MAX + 32];

		snprintf(want[0], sizeof(want[0]), "%s/tree/a", w);
		snprintf(want[1], sizeof(want[1]), "%s/tree/b", w);
		snprintf(want[2], sizeof(want[2]), "%s/tree/c", w);
		ok(r == 0 && n == 3 && !strcmp(v[0].path, want[0]) && !strcmp(v[1].path, want[1]) &&
			   !strcmp(v[2].path, want[2]) && v[0].type == CORDON_FILE_DIRECTORY &&
			   v[2].type == CORDON_FILE_REGULAR && !strcmp(v[2].name, "c"),
		   "files: list depth 1: a b c, sorted, typed (%zu entries)", n);
	}
	cordon_file_info_free(v, r == 0 ? n : 0);
	v = NULL;
	r = cordon_session_list(s, "tree", 2, 100, &v, &n, &err);
	{
		const char *names[] = { "a", "b", "b/deeper", "b/x", "c" };
		bool all = r == 0 && n == 5;

		for (size_t i = 0; all && i < 5; i++) {
			char want[PATH_MAX + 32];

			snprintf(want, sizeof(want), "%s/tree/%s", w, names[i]);
			all = !strcmp(v[i].path, want);
		}
		ok(all, "files: list depth 2: a b b/deeper b/x c (not b/deeper/y), sorted (%zu)", n);
	}
	cordon_file_info_free(v, r == 0 ? n : 0);
	v = NULL;
	r = cordon_session_list(s, "tree", 2, 4, &v, &n, &err);
	ok(r == -E2BIG && err.code == E2BIG, "files: list of 5 with max 4 -> E2BIG");
	r = cordon_session_list(s, "tree", 2, 5, &v, &n, &err);
	ok(r == 0 && n == 5, "files: list of 5 with max 5 -> all");
	cordon_file_info_free(v, r == 0 ? n : 0);
	v = NULL;
	r = cordon_session_list(s, "tree", 0, 5, &v, &n, &err);
	ok(r == -EINVAL, "files: list depth 0 -> EINVAL");
	r = cordon_session_list(s, "no-such-dir", 1, 5, &v, &n, &err);
	ok(r < 0 && err.code == ENOENT, "files: list of a missing directory -> ENOENT (%d)",
	   err.code);
	r = cordon_session_list(s, "tree/c", 1, 5, &v, &n, &err);
	ok(r < 0 && err.code == ENOTDIR, "files: list of a file -> ENOTDIR (%d)", err.code);

	/* mkdir */
	r = cordon_session_mkdir(s, "made/one/two", &made, &err);
	ok(r == 0 && made == 1, "files: mkdir with parents -> made 1");
	r = cordon_session_mkdir(s, "made/one/two", &made, &err);
	ok(r == 0 && made == 0, "files: mkdir of an existing directory -> 0, made 0");
	r = cordon_session_mkdir(s, "tree/c", &made, &err);
	ok(r < 0 && (err.code == EEXIST || err.code == ENOTDIR),
	   "files: mkdir over a file -> error (%d %s)", err.code, err.msg);
	r = cordon_session_mkdir(s, "tree/c/sub", &made, &err);
	ok(r < 0 && err.code == ENOTDIR, "files: mkdir below a file -> ENOTDIR (%d)", err.code);
	r = cordon_session_mkdir(s, "/etc/cordon-session-dir", &made, &err);
	ok(r < 0 && (err.code == EROFS || err.code == EACCES),
	   "files: mkdir in /etc -> EROFS or EACCES (%d)", err.code);

	/* remove */
	r = cordon_session_remove(s, "umask.txt", &err);
	ok(r == 0 && cordon_session_stat(s, "umask.txt", &fi, &err) == -ENOENT,
	   "files: remove a file");
	r = cordon_session_remove(s, "tree", &err);
	snprintf(path, sizeof(path), "%s/tree", w);
	ok(r == 0 && !exists(path), "files: remove a directory tree (%s)", err.msg);
	r = cordon_session_remove(s, "no-such", &err);
	ok(r == -ENOENT && err.code == ENOENT, "files: remove a missing path -> ENOENT");
	r = cordon_session_remove(s, "link.dat", &err);
	snprintf(path, sizeof(path), "%s/bin.dat", w);
	ok(r == 0 && exists(path), "files: remove a symlink, not its target");
	r = cordon_session_remove(s, "/etc/hostname", &err);
	ok(r < 0 && exists("/etc/hostname"), "files: remove in /etc fails (%d)", err.code);

	/* rename */
	put_file(s, "from.txt", 0644, "moved", 5, &bytes, &err);
	put_file(s, "to.txt", 0644, "old", 3, &bytes, &err);
	r = cordon_session_rename(s, "from.txt", "to.txt", &err);
	got = NULL;
	ok(r == 0 && cordon_session_stat(s, "from.txt", &fi, &err) == -ENOENT &&
		   get_file(s, "to.txt", &got, &n, &err) == 0 && n == 5 && !memcmp(got, "moved", 5),
	   "files: rename replaces the destination");
	free(got);
	r = cordon_session_rename(s, "from.txt", "x.txt", &err);
	ok(r == -ENOENT, "files: rename of a missing file -> ENOENT");
	r = cordon_session_rename(s, "to.txt", "/etc/passwd", &err);
	ok(r < 0, "files: rename onto /etc/passwd fails (%d)", err.code);
	ok(cordon_session_rename(s, "to.txt", NULL, &err) == -EINVAL, "files: rename to NULL -> EINVAL");

	/* open_read refusals */
	r = cordon_session_open_read(s, "deep", &(int){ 0 }, &err);
	ok(r < 0 && err.code == EISDIR, "files: open_read of a directory -> EISDIR (%d)", err.code);
	r = cordon_session_open_read(s, "/etc/shadow", &(int){ 0 }, &err);
	ok(r < 0 && err.code == EACCES, "files: open_read of /etc/shadow -> EACCES (%d)", err.code);
	r = cordon_session_open_read(s, "/dev/null", &(int){ 0 }, &err);
	ok(r < 0, "files: open_read of /dev/null (a device) -> error (%d)", err.code);
	out = sh_out(s, "mkfifo fifo && ln -s /dev/zero zero && echo made", NULL);
	if (strcmp(out, "made\n")) {
		skip("mkfifo failed", "files: open_read of a FIFO");
	} else {
		struct file_call fc = { .s = s, .path = "fifo" };
		bool done = within(call_open_read, &fc, 15);

		ok(done && fc.r < 0, "files: open_read of a FIFO -> error, without hanging (%s%d: %s)",
		   done ? "" : "HUNG ", fc.err.code, fc.err.msg);
		if (done && fc.r == 0)
			close(fc.fd);
		fc = (struct file_call){ .s = s, .path = "zero" };
		done = within(call_open_read, &fc, 15);
		ok(done && fc.r < 0, "files: open_read through a symlink to /dev/zero -> error (%s%d)",
		   done ? "" : "HUNG ", fc.err.code);
		if (done && fc.r == 0)
			close(fc.fd);
		fc = (struct file_call){ .s = s, .path = "fifo" };
		done = within(call_put, &fc, 15);
		ok(done, "files: write to a FIFO does not hang (r %d, %d %s)", fc.r, fc.err.code,
		   fc.err.msg);
		fc = (struct file_call){ .s = s, .path = "zero" };
		done = within(call_put, &fc, 15);
		ok(done, "files: write through a symlink to /dev/zero does not hang (r %d)", fc.r);
	}
	free(out);

	/* what the sandbox sees, not the host */
	{
		char host_file[PATH_MAX], script[PATH_MAX + 64], sandbox_view[64];
		int fd;

		snprintf(host_file, sizeof(host_file), "%s/host-secret", base);
		fd = open(host_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			if (write(fd, "host-secret\n", 12) != 12)
				diag("write %s", host_file);
			close(fd);
		}
		snprintf(script, sizeof(script), "ln -s %s escape; cat escape 2>/dev/null || echo unseen",
			 host_file);
		out = sh_out(s, script, NULL);
		snprintf(sandbox_view, sizeof(sandbox_view), "%s", out);
		free(out);
		is_str(sandbox_view, "unseen\n", "files: the host file outside the workdir is not in the "
		       "sandbox's view");
		got = NULL;
		r = get_file(s, "escape", &got, &n, &err);
		ok(r < 0 && err.code == ENOENT,
		   "files: open_read through a symlink to a host file -> what the sandbox sees: "
		   "ENOENT (r %d, %d, %.12s)", r, err.code, r == 0 ? got : "");
		free(got);
		got = NULL;
		r = get_file(s, "../host-secret", &got, &n, &err);
		ok(r < 0 && err.code == ENOENT, "files: ../ out of the workdir reaches the sandbox's "
		   "view only (ENOENT: %d)", err.code);
		free(got);
		r = put_file(s, "../escaped-write", 0644, "x", 1, &bytes, &err);
		snprintf(path, sizeof(path), "%s/escaped-write", base);
		ok(!exists(path), "files: write to ../ does not land on the host (r %d)", r);
		got = NULL;
		r = get_file(s, "../../../../../../../etc/hostname", &got, &n, &err);
		ok(r == 0, "files: ../../etc/hostname is the sandbox's /etc/hostname (readable)");
		free(got);
	}
	{
		char before[8192] = "", after[8192] = "";
		int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
		ssize_t k1 = fd >= 0 ? read(fd, before, sizeof(before) - 1) : -1;

		if (fd >= 0)
			close(fd);
		free(sh_out(s, "ln -s /etc/passwd pw", NULL));
		r = put_file(s, "pw", 0644, "owned::0:0::/:/bin/sh\n", 22, &bytes, &err);
		ok(r < 0 && (err.code == EROFS || err.code == EACCES),
		   "files: write through a symlink to /etc/passwd fails (%d %s)", err.code, err.msg);
		fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
		ssize_t k2 = fd >= 0 ? read(fd, after, sizeof(after) - 1) : -1;

		if (fd >= 0)
			close(fd);
		ok(k1 > 0 && k1 == k2 && !memcmp(before, after, (size_t)k1),
		   "files: the host's /etc/passwd is unchanged");
		r = put_file(s, "/etc/cordon-session-file", 0644, "x", 1, &bytes, &err);
		ok(r < 0 && !exists("/etc/cordon-session-file"), "files: write in /etc fails (%d)",
		   err.code);
	}
	r = cordon_session_open_read(s, "", &(int){ 0 }, &err);
	ok(r == -EINVAL, "files: open_read of \"\" -> EINVAL");
	{
		char longp[PATH_MAX + 10];

		memset(longp, 'a', sizeof(longp) - 1);
		longp[sizeof(longp) - 1] = '\0';
		r = cordon_session_stat(s, longp, &fi, &err);
		ok(r == -ENAMETOOLONG, "files: a path over PATH_MAX -> ENAMETOOLONG");
	}
}

/* Symlinks inside a tree: list and remove do not follow them */
static void test_symlinks_in_trees(struct cordon_session *s, const char *w)
{
	struct cordon_file_info *v = NULL;
	struct cordon_error err;
	char path[PATH_MAX + 64], *out;
	size_t n = 0;
	int r;

	out = sh_out(s, "mkdir -p lt/d other && echo precious >other/keep && ln -s .. lt/d/up && "
			"ln -s ../../other lt/d/out && ln -s /etc lt/etc && echo ok", NULL);
	is_str(out, "ok\n", "symlinks: a tree with links up, out and to /etc");
	free(out);
	r = cordon_session_list(s, "lt", 10, 100, &v, &n, &err);
	ok(r == 0 && n == 4, "symlinks: list depth 10 does not follow them (%zu entries: d, d/out, "
	   "d/up, etc)", n);
	for (size_t i = 0; r == 0 && i < n; i++)
		if (strcmp(v[i].name, "d"))
			ok(v[i].type == CORDON_FILE_SYMLINK && v[i].link_target,
			   "symlinks: %s listed as a symlink to %s", v[i].name,
			   v[i].link_target ? v[i].link_target : "?");
	cordon_file_info_free(v, r == 0 ? n : 0);
	r = cordon_session_remove(s, "lt", &err);
	snprintf(path, sizeof(path), "%s/other/keep", w);
	ok(r == 0 && exists(path) && exists("/etc/passwd"),
	   "symlinks: remove of the tree leaves what its links point to (%s)", err.msg);
}

/* destroy with operations in flight: it does not wait for them, they fail */
static void test_destroy_in_flight(void)
{
	const char *w = fresh_dir("in-flight");
	struct cordon_session *s = make_session(w, 0, 0);
	struct cordon_upload *u = NULL;
	struct cordon_process *p = NULL;
	struct cordon_error err;
	uint64_t t, bytes;
	int fd = -1, r;
	struct cordon_exec e = { .argv = ARGV("sleep", "1000"), .fd = { -1, -1, -1 } };

	if (!s) {
		ok(0, "in flight: session created");
		return;
	}
	r = cordon_session_write(s, "half.txt", 0644, &u, &fd, &err);
	if (r == 0 && write(fd, "part", 4) != 4)
		diag("write: %s", strerror(errno));
	cordon_session_exec(s, &e, &p, &err);
	t = now_ns();
	ok(destroy(s) == 0 && now_ns() - t < 10 * SEC,
	   "in flight: destroy with an upload open and a command running: 0, at once (%.2f s)",
	   (double)(now_ns() - t) / 1e9);
	if (fd >= 0)
		close(fd);
	if (u) {
		r = cordon_upload_finish(u, &bytes, &err);
		ok(r < 0, "in flight: the unfinished upload then fails (%d %s)", err.code, err.msg);
	}
	if (p) {
		int status;

		ok(cordon_process_wait(p, UINT64_MAX, &status, &err) == -ESRCH,
		   "in flight: waiting on its command, as long as it takes: ESRCH, no hang");
		cordon_process_free(p);
	}
}

/* Sessions used and ended from several threads at once, made one at a time (cordon.h: the
 * supervisor is a fork that runs on, so a multi-threaded caller creates sessions in turn) */
struct creator {
	int id, good;
};

/* written for a create, read for everything else: no other thread is inside libc while a
 * supervisor is forked (a sanitizer's allocator lock is not fork-safe either). A thread that
 * starts or ends allocates too (ASan drains its cache into the shared allocator then), so no
 * create begins before every thread runs (start) and none ends while another may create (end). */
static pthread_rwlock_t create_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t all_started, all_created;

static void *creator_main(void *data)
{
	struct creator *c = data;

	pthread_barrier_wait(&all_started);
	for (int i = 0; i < 3; i++) {
		char name[64], want[32], script[64], *out;
		struct cordon_session *s;

		snprintf(name, sizeof(name), "thread-%d-%d", c->id, i);
		pthread_rwlock_wrlock(&create_lock);
		s = make_session(fresh_dir(name), 0, CORDON_SESSION_REMOVE_WORKDIR);
		pthread_rwlock_unlock(&create_lock);
		if (!s)
			continue;
		pthread_rwlock_rdlock(&create_lock);
		snprintf(script, sizeof(script), "echo %d-%d", c->id, i);
		snprintf(want, sizeof(want), "%d-%d\n", c->id, i);
		out = sh_out(s, script, NULL);
		c->good += !strcmp(out, want) && destroy(s) == 0;
		free(out);
		pthread_rwlock_unlock(&create_lock);
	}
	pthread_barrier_wait(&all_created);
	return NULL;
}

/* Our children (the sessions' supervisors) killed with SIGKILL: how many */
static int kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		char path[300], buf[512], *p;
		ssize_t k;
		int fd, ppid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		p = strrchr(buf, ')');
		if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == getpid()) {
			diag("killing supervisor %s, hung (state %c)", de->d_name, p[2]);
			kill(atoi(de->d_name), SIGKILL);
			n++;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static void test_threaded_creates(void)
{
	struct creator c[4];
	pthread_t t[4];
	bool joined[4] = { false };
	struct timespec ts;
	int good = 0, hung = 0;

	pthread_barrier_init(&all_started, NULL, 5);
	pthread_barrier_init(&all_created, NULL, 4);
	for (int i = 0; i < 4; i++) {
		c[i] = (struct creator){ .id = i };
		pthread_create(&t[i], NULL, creator_main, &c[i]);
	}
	pthread_barrier_wait(&all_started);
	/* a supervisor forked while another thread held a lock can hang in setup, and its
	 * creator with it: after a minute, kill what is left so that the test ends */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	for (int i = 0; i < 4; i++)
		joined[i] = pthread_timedjoin_np(t[i], NULL, &ts) == 0;
	for (int i = 0; i < 4; i++)
		if (!joined[i]) {
			hung += kill_children();
			pthread_join(t[i], NULL);
		}
	pthread_barrier_destroy(&all_started);
	pthread_barrier_destroy(&all_created);
	for (int i = 0; i < 4; i++)
		good += c[i].good;
	is_int(hung, 0, "threads: no session's supervisor hangs when sessions are made in turn from "
	       "several threads, used and ended at once");
	is_int(good, 12, "threads: 4 threads each make (in turn), use and end 3 sessions at once");
}

/* --- lifecycle --- */

static void test_destroy_and_handles(void)
{
	const char *w = fresh_dir("lifecycle");
	struct cordon_session *s = make_session(w, 0, 0);
	struct cordon_process *p = NULL;
	struct cordon_error err;
	struct cordon_result res;
	char mark[128], script[256], id[33];
	int status, r;
	pid_t sup;
	struct cordon_exec e = { .fd = { -1, -1, -1 } };

	if (!s) {
		ok(0, "lifecycle: session created");
		return;
	}
	ok(strlen(cordon_session_id(s)) == 32 &&
		   strspn(cordon_session_id(s), "0123456789abcdef") == 32,
	   "lifecycle: the id is 32 hex digits (%s)", cordon_session_id(s));
	snprintf(id, sizeof(id), "%s", cordon_session_id(s));
	sup = cordon_session_pid(s);
	ok(sup > 0 && pid_alive(sup), "lifecycle: the supervisor runs");
	snprintf(mark, sizeof(mark), "%s-handle", marker);
	snprintf(script, sizeof(script), "exec -a %s sleep 1000", mark);
	e.argv = ARGV("bash", "-c", script);
	r = cordon_session_exec(s, &e, &p, &err);
	ok(r == 0 && sleeper_running(mark), "lifecycle: a command runs");
	r = cordon_session_destroy(s, &res, &err);
	ok(r == 0 && !strcmp(res.id, id), "lifecycle: destroy returns 0 and the session's id (%s; "
	   "outcome %d, exit %d)", res.id, res.outcome, res.exit_code);
	ok(!process_with(mark), "lifecycle: after destroy, the command is gone");
	ok(!pid_alive(sup), "lifecycle: after destroy, the supervisor is gone");
	ok(exists(w), "lifecycle: without CORDON_SESSION_REMOVE_WORKDIR the workdir stays");
	if (p) {
		uint64_t t = now_ns();

		r = cordon_process_wait(p, 10 * SEC, &status, &err);
		ok(r == -ESRCH && err.code == ESRCH && now_ns() - t < 5 * SEC,
		   "lifecycle: wait on a handle after destroy -> ESRCH at once (%d)", r);
		r = cordon_process_signal(p, SIGTERM, 0, &err);
		ok(r < 0, "lifecycle: signal on a handle after destroy fails (%d)", r);
		cordon_process_free(p);
	}
	skip("s is freed: a second destroy would be a use after free", "lifecycle: destroy twice");
}

static void test_ttl(void)
{
	const char *w = fresh_dir("ttl");
	uint64_t t0 = now_ns();
	struct cordon_session *s = make_session(w, 1 * SEC, 0);
	struct cordon_result res;
	struct cordon_error err;
	struct pollfd p;
	int r;

	if (!s) {
		ok(0, "ttl: session created");
		return;
	}
	p = (struct pollfd){ cordon_session_fd(s), POLLIN, 0 };
	r = poll(&p, 1, 0);
	is_int(r, 0, "ttl: the session's fd is not readable while it lives");
	r = poll(&p, 1, 15000);
	ok(r == 1 && now_ns() - t0 >= 900000000ull,
	   "ttl: the session's fd becomes readable at the end of its time to live (%.2f s)",
	   (double)(now_ns() - t0) / 1e9);
	{
		struct cordon_process *pr;
		struct cordon_exec e = { .argv = ARGV("true"), .fd = { -1, -1, -1 } };

		r = cordon_session_exec(s, &e, &pr, &err);
		ok(r < 0, "ttl: exec in an ended session fails (%d %s)", err.code, err.msg);
		if (r == 0)
			cordon_process_free(pr);
	}
	r = cordon_session_destroy(s, &res, &err);
	ok(r == 0 && res.outcome == CORDON_OUTCOME_TIMEOUT,
	   "ttl: destroy reports outcome TIMEOUT (r %d, outcome %d%s%s)", r, res.outcome,
	   r < 0 ? ": " : "", r < 0 ? err.msg : "");
}

/* As root, each sandbox holds a host id of its own, its slot a file in /run/cordon/ids while it
 * lives (README "Identity"); the file goes with the sandbox, so that the directory holds the ids
 * in use, not every one ever taken */
static void test_id_slot(void)
{
	struct cordon_session *s;
	char slot[64], *out;
	unsigned long id = 0;
	int st = -1;

	if (geteuid() != 0) {
		skip("root's sandboxes only", "id slot");
		return;
	}
	s = make_session(fresh_dir("id-slot"), 0, 0);
	out = s ? sh_out(s, "awk '{print $2}' /proc/self/uid_map", &st) : NULL;
	if (out)
		id = strtoul(out, NULL, 10);
	snprintf(slot, sizeof(slot), "/run/cordon/ids/%lu", id - 2000000000ul);
	ok(id >= 2000000000ul && id < 2000065536ul && exists(slot),
	   "id slot: the session runs as host id %lu, its slot file there while it lives", id);
	free(out);
	if (s)
		destroy(s);
	ok(id && !exists(slot), "id slot: the slot file is removed when the session ends");
}

static void test_remove_workdir(void)
{
	const char *w = fresh_dir("remove-me");
	char keep[PATH_MAX], script[PATH_MAX * 2], *out;
	struct cordon_session *s;
	int fd;

	snprintf(keep, sizeof(keep), "%s/keep-me", base);
	fd = open(keep, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	s = make_session(w, 0, CORDON_SESSION_REMOVE_WORKDIR);
	if (!s) {
		ok(0, "remove workdir: session created");
		return;
	}
	snprintf(script, sizeof(script),
		 "mkdir -p t/locked/inner && echo x >t/locked/inner/f && echo y >t/locked/g && "
		 "ln -s %s t/out-link && ln -s %s t/base-link && ln -s / t/root-link && "
		 "chmod 000 t/locked && echo done", keep, base);
	out = sh_out(s, script, NULL);
	is_str(out, "done\n", "remove workdir: the sandbox made a tree (a mode 000 dir, symlinks out)");
	free(out);
	ok(destroy(s) == 0, "remove workdir: destroyed");
	ok(!exists(w), "remove workdir: CORDON_SESSION_REMOVE_WORKDIR removed the workdir");
	ok(exists(keep), "remove workdir: the symlinks' targets survive");
	ok(exists(base) && exists("/etc/passwd"), "remove workdir: ... all of them");

	w = fresh_dir("keep-workdir");
	s = make_session(w, 0, 0);
	out = s ? sh_out(s, "echo kept >kept.txt && echo ok", NULL) : NULL;
	destroy(s);
	snprintf(script, sizeof(script), "%s/kept.txt", w);
	ok(out && exists(script), "remove workdir: without the flag, the workdir and its files stay");
	free(out);
}

static void test_bad_create(void)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_session *s = NULL;
	struct cordon_error err = { 0 };
	char gone[PATH_MAX];
	int r;

	r = cordon_config_set_workdir(c, "/etc", &err);
	ok(r < 0 && err.msg[0], "bad create: /etc as the workdir is refused (%s)", err.msg);
	snprintf(gone, sizeof(gone), "%s/missing-dir", base);
	memset(&err, 0, sizeof(err));
	r = cordon_config_set_workdir(c, gone, &err);
	ok(r < 0 && err.msg[0], "bad create: a missing workdir is refused (%d %s)", err.code,
	   err.msg);
	/* a workdir that vanishes between the config and the session */
	snprintf(gone, sizeof(gone), "%s/vanishing", base);
	mkdir(gone, 0755);
	r = cordon_config_set_workdir(c, gone, &err);
	rmdir(gone);
	memset(&err, 0, sizeof(err));
	r = r < 0 ? r : cordon_session_create(c, 0, &s, &err);
	ok(r < 0 && !s && err.code != 0 && err.step[0] && strlen(err.msg) > 5,
	   "bad create: a workdir gone at create -> an error with a clear message (%d %s: %s)",
	   err.code, err.step, err.msg);
	{
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG);

		ok(w < 0 && errno == ECHILD, "bad create: no process left behind (waitpid %d)", (int)w);
	}
	ok(cordon_session_create(c, 0x80, &s, &err) == -EINVAL, "bad create: unknown flags -> EINVAL");
	ok(cordon_session_create(NULL, 0, &s, &err) == -EINVAL, "bad create: no config -> EINVAL");
	cordon_config_free(c);
	if (r == 0)
		destroy(s);
}

static void test_many(void)
{
	struct cordon_session *s[10] = { 0 };
	int made = 0, right = 0, gone = 0;

	for (int i = 0; i < 10; i++) {
		char name[32];

		snprintf(name, sizeof(name), "many-%d", i);
		s[i] = make_session(fresh_dir(name), 0, CORDON_SESSION_REMOVE_WORKDIR);
		made += s[i] != NULL;
	}
	is_int(made, 10, "many: 10 sessions at once");
	for (int i = 0; i < 10; i++) {
		char script[64], want[PATH_MAX + 32], *out;

		if (!s[i])
			continue;
		snprintf(script, sizeof(script), "echo %d >n && cat n && pwd", i);
		snprintf(want, sizeof(want), "%d\n%s/many-%d\n", i, base, i);
		out = sh_out(s[i], script, NULL);
		right += !strcmp(out, want);
		free(out);
	}
	is_int(right, 10, "many: each runs a command in its own workdir");
	for (int i = 0; i < 10; i++)
		gone += s[i] && destroy(s[i]) == 0;
	is_int(gone, 10, "many: all 10 destroyed");
}

/* The caller dies of SIGKILL: the session goes with it. */
static void test_caller_killed(void)
{
	const char *w = fresh_dir("killed-caller");
	char mark[128], line[256] = "", id[40] = "";
	int pp[2], sup = 0;
	pid_t child;
	ssize_t n;

	snprintf(mark, sizeof(mark), "%s-orphan", marker);
	if (pipe2(pp, O_CLOEXEC) < 0)
		return;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		struct cordon_session *s;
		struct cordon_process *p;
		struct cordon_error err;
		char script[256];
		struct cordon_exec e = { .fd = { -1, -1, -1 } };

		/* this test killed half-way (timeout): the caller it made goes too, and its session */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(1);
		close(pp[0]);
		s = make_session(w, 0, CORDON_SESSION_REMOVE_WORKDIR);
		if (!s)
			_exit(1);
		snprintf(script, sizeof(script), "exec -a %s sleep 1000", mark);
		e.argv = ARGV("bash", "-c", script);
		if (cordon_session_exec(s, &e, &p, &err) < 0)
			_exit(1);
		dprintf(pp[1], "%d %s\n", (int)cordon_session_pid(s), cordon_session_id(s));
		for (;;)
			pause();
	}
	close(pp[1]);
	n = read(pp[0], line, sizeof(line) - 1);
	close(pp[0]);
	if (n <= 0 || sscanf(line, "%d %39s", &sup, id) != 2) {
		ok(0, "killed caller: the child made a session");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return;
	}
	ok(sleeper_running(mark) && pid_alive(sup), "killed caller: its session runs (supervisor %d, "
	   "id %s)", sup, id);
	{
		char cmd[256], found[512] = "";
		FILE *f;

		snprintf(cmd, sizeof(cmd), "find /sys/fs/cgroup -name '*%s*' 2>/dev/null", id);
		f = popen(cmd, "r");
		if (f) {
			found[fread(found, 1, sizeof(found) - 1, f)] = '\0';
			pclose(f);
		}
		diag("its cgroup while it runs: %s", found[0] ? found : "none (no cgroup here)");
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	{
		uint64_t end = now_ns() + 10 * SEC;

		while (now_ns() < end && (pid_alive(sup) || process_with(mark) || exists(w)))
			nap_ms(20);
	}
	ok(!pid_alive(sup), "killed caller: the supervisor is gone");
	ok(!process_with(mark), "killed caller: the command is gone");
	ok(!exists(w), "killed caller: the workdir is removed (REMOVE_WORKDIR)");
	if (access("/sys/fs/cgroup", R_OK) < 0) {
		skip("no /sys/fs/cgroup", "killed caller: no cgroup left");
	} else {
		char cmd[256], found[512] = "";
		FILE *f;

		snprintf(cmd, sizeof(cmd), "find /sys/fs/cgroup -name '*%s*' 2>/dev/null", id);
		f = popen(cmd, "r");
		if (f) {
			size_t k = fread(found, 1, sizeof(found) - 1, f);

			found[k] = '\0';
			pclose(f);
		}
		is_str(found, "", "killed caller: no cgroup named after the sandbox is left");
	}
}

/* One session used from 8 threads at once: commands and file operations interleaved */
struct worker {
	struct cordon_session *s;
	int id, good;
};

static void *worker_main(void *data)
{
	struct worker *w = data;

	for (int i = 0; i < 10; i++) {
		char script[128], want[64], name[64], *got = NULL;
		struct cordon_error err;
		uint64_t bytes;
		size_t n;
		struct run r;

		snprintf(script, sizeof(script), "echo t%d-%d", w->id, i);
		snprintf(want, sizeof(want), "t%d-%d\n", w->id, i);
		r = sh(w->s, script);
		w->good += r.r == 0 && !strcmp(r.out, want) && exited(r.status, 0);
		run_clear(&r);
		snprintf(name, sizeof(name), "threads/%d/%d", w->id, i);
		if (put_file(w->s, name, 0644, want, strlen(want), &bytes, &err) == 0 &&
		    get_file(w->s, name, &got, &n, &err) == 0 && n == strlen(want) &&
		    !memcmp(got, want, n))
			w->good++;
		free(got);
	}
	return NULL;
}

static void test_threads(struct cordon_session *s)
{
	struct worker w[8];
	pthread_t t[8];
	int good = 0;

	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){ .s = s, .id = i };
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		good += w[i].good;
	}
	is_int(good, 160, "threads: 8 threads x 10 commands and 10 file round trips on one session");
}

/* cordon_process_fd is readable once the process ended, not before */
static void test_process_fd(struct cordon_session *s)
{
	struct cordon_process *p;
	struct cordon_error err;
	struct pollfd pfd;
	int in[2], status = -1;

	if (pipe2(in, O_CLOEXEC) < 0)
		return;
	struct cordon_exec e = { .argv = ARGV("cat"), .fd = { in[0], -1, -1 } };

	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		ok(0, "process fd: exec: %s", err.msg);
		return;
	}
	close(in[0]);
	pfd = (struct pollfd){ cordon_process_fd(p), POLLIN, 0 };
	is_int(poll(&pfd, 1, 0), 0, "process fd: not readable while it runs");
	close(in[1]);
	ok(poll(&pfd, 1, 30000) == 1, "process fd: readable once it ended");
	ok(cordon_process_wait(p, 0, &status, &err) == 1 && exited(status, 0),
	   "process fd: then wait(0) has the status at once");
	cordon_process_free(p);
}

/* The sandbox's code kills the agent (its parent): the session ends on its own */
static void test_agent_killed(void)
{
	const char *w = fresh_dir("agent-killed");
	struct cordon_session *s = make_session(w, 0, 0);
	struct cordon_result res;
	struct cordon_error err;
	struct pollfd pfd;
	struct run r;
	int rr;

	if (!s) {
		ok(0, "agent killed: session created");
		return;
	}
	r = sh(s, "kill -KILL $PPID; sleep 5");
	diag("the killer: r %d status %#x", r.r, r.status);
	run_clear(&r);
	pfd = (struct pollfd){ cordon_session_fd(s), POLLIN, 0 };
	ok(poll(&pfd, 1, 15000) == 1, "agent killed: the session's fd becomes readable");
	r = sh(s, "echo still");
	ok(r.r < 0 && r.err.code == ESRCH, "agent killed: exec then fails with ESRCH (%d %s)",
	   r.err.code, r.err.msg);
	run_clear(&r);
	rr = cordon_session_destroy(s, &res, &err);
	ok(rr == 0 && res.id[0] && (res.outcome == CORDON_OUTCOME_SIGNALED ||
				     res.outcome == CORDON_OUTCOME_EXITED),
	   "agent killed: destroy returns 0 and says how it ended (r %d outcome %d exit %d)", rr,
	   res.outcome, res.exit_code);
}

/* pid's parent and its command name: 0, or -1 when it is gone */
static int stat_of(pid_t pid, pid_t *ret_ppid, char *ret_comm, size_t size, char *ret_state)
{
	char path[64], buf[512], *open_paren, *close_paren;
	int ppid = 0, r = -1;
	char st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f) && (open_paren = strchr(buf, '(')) &&
	    (close_paren = strrchr(buf, ')')) && sscanf(close_paren + 2, "%c %d", &st, &ppid) == 2) {
		*close_paren = '\0';
		snprintf(ret_comm, size, "%s", open_paren + 1);
		*ret_ppid = ppid;
		if (ret_state)
			*ret_state = st;
		r = 0;
	}
	if (f)
		fclose(f);
	return r;
}

/* The session's cordon-agent, on the host: the supervisor's grandchild of that name (0: none) */
static pid_t agent_of(pid_t supervisor)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (d && !found && (e = readdir(d))) {
		pid_t pid = atoi(e->d_name), ppid, gppid;
		char comm[32], pcomm[32];

		if (pid > 0 && stat_of(pid, &ppid, comm, sizeof(comm), NULL) == 0 &&
		    strcmp(comm, "cordon-agent") == 0 &&
		    stat_of(ppid, &gppid, pcomm, sizeof(pcomm), NULL) == 0 && gppid == supervisor)
			found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

static char state_of(pid_t pid)
{
	char comm[32], st = 0;
	pid_t ppid;

	return stat_of(pid, &ppid, comm, sizeof(comm), &st) == 0 ? st : 0;
}

struct stopped_call {
	struct cordon_session *s;
	struct cordon_process *p; /* signals to send, or NULL: a stat */
	int r, sent;
	bool joined;
	struct cordon_error err;
};

static void *stopped_main(void *data)
{
	struct stopped_call *q = data;
	struct cordon_file_info f = { 0 };

	if (!q->p) {
		q->r = cordon_session_stat(q->s, "/", &f, &q->err);
		cordon_file_info_clear(&f);
		return NULL;
	}
	for (q->sent = 0; q->sent < 10000; q->sent++) { /* until refused */
		q->r = cordon_process_signal(q->p, SIGWINCH, 0, &q->err);
		if (q->r < 0)
			break;
	}
	return NULL;
}

/* joined by the deadline (CLOCK_REALTIME): true */
static bool join_by(pthread_t t, const struct timespec *deadline)
{
	return pthread_timedjoin_np(t, NULL, deadline) == 0;
}

static struct timespec in_secs(int secs)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	return ts;
}

/* The agent is the sandbox's (its code can stop it): one that reads nothing holds no caller's
 * thread for ever. A signal is refused at once when its channel is full; a request whose channel
 * it does not take fails within the agent's 60 s (before: both blocked until the session ended). */
static void test_agent_stopped(void)
{
	const char *w = fresh_dir("agent-stopped");
	struct cordon_session *s = make_session(w, 0, 0);
	struct cordon_exec ex = { .argv = ARGV("sleep", "120"), .fd = { -1, -1, -1 } };
	struct cordon_process *p = NULL, *k = NULL;
	struct stopped_call sig = { 0 }, *q = NULL;
	struct cordon_error err = { 0 };
	struct timespec deadline;
	pthread_t st, *t = NULL;
	pid_t agent = 0;
	int n, ended = 0, refused = 0;

	if (!s || cordon_session_exec(s, &ex, &p, NULL) < 0) {
		ok(0, "agent stopped: a session and a process");
		destroy(s);
		return;
	}
	for (int i = 0; i < 100 && !agent; i++, nap_ms(50))
		agent = agent_of(cordon_session_pid(s));
	/* once the agent has answered this exec: a file in the workdir (no cwd: the workdir) */
	ex.argv = ARGV("sh", "-c", "while [ ! -e go ]; do sleep 0.05; done; kill -STOP $PPID");
	if (!agent || cordon_session_exec(s, &ex, &k, &err) < 0) {
		ok(0, "agent stopped: its pid (%d), a command stops it (%s: %s)", (int)agent, err.step,
		   err.msg);
		destroy(s);
		return;
	}
	{
		char go[PATH_MAX + 8];

		snprintf(go, sizeof(go), "%s/go", w);
		close(open(go, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	}
	for (int i = 0; i < 200 && state_of(agent) != 'T'; i++)
		nap_ms(50);
	ok(state_of(agent) == 'T', "agent stopped: the sandbox's command stopped the agent");
	sig = (struct stopped_call){ .s = s, .p = p };
	pthread_create(&st, NULL, stopped_main, &sig);
	deadline = in_secs(30);
	sig.joined = join_by(st, &deadline);
	ok(sig.joined && sig.r == -EAGAIN,
	   "agent stopped: signals are sent until its channel is full, then refused at once "
	   "(%d sent, r %d: %s)",
	   sig.sent, sig.r, sig.err.msg);
	/* more requests than the session socket holds: a socketpair's sender is bounded by its
	 * send buffer only (net.core.wmem_default, 208 KiB: about 280 messages) */
	n = 400;
	q = calloc((size_t)n, sizeof(*q));
	t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; q && t && i < n; i++) {
		q[i] = (struct stopped_call){ .s = s };
		pthread_create(&t[i], NULL, stopped_main, &q[i]);
	}
	deadline = in_secs(90);
	for (int i = 0; q && t && i < n; i++)
		if ((q[i].joined = join_by(t[i], &deadline))) {
			ended++;
			refused += q[i].r == -ETIMEDOUT;
		}
	ok(ended == n && refused == n,
	   "agent stopped: %d requests at once all fail within the agent's 60 s (%d ended, %d "
	   "ETIMEDOUT)",
	   n, ended, refused);
	cordon_process_free(k);
	cordon_process_free(p);
	destroy(s); /* everything inside dies: a call still blocked (before the fix) returns */
	for (int i = 0; q && t && i < n; i++)
		if (!q[i].joined)
			pthread_join(t[i], NULL);
	if (!sig.joined)
		pthread_join(st, NULL);
	free(q);
	free(t);
}

/* A session whose agent the sandbox stopped: cordon_session_set_bounds() ends a call when its
 * cancel descriptor becomes readable, or at its deadline for the whole call; cordon_session_kill()
 * ends the sandbox (the call in flight returns) without freeing the session. Before: each call
 * waited 60 s a message (a sandbox that answers a message a minute kept one for ever), and a
 * caller could not kill a session another thread was using. */
static void test_bounds(void)
{
	const char *w = fresh_dir("bounds");
	struct cordon_session *s = make_session(w, 0, 0);
	char mark[96];
	struct cordon_exec ex = { .argv = ARGV("bash", "-c", "sleep 1000 & while [ ! -e go ]; do "
					       "sleep 0.05; done; kill -STOP $PPID; wait",
					       mark),
				  .fd = { -1, -1, -1 } };
	struct cordon_process *k = NULL;
	struct stopped_call q = { 0 };
	struct timespec deadline;
	struct cordon_error err = { 0 };
	char go[PATH_MAX + 8];
	uint64_t one = 1;
	int cancel = eventfd(0, EFD_CLOEXEC);
	pid_t agent = 0;
	pthread_t t;
	bool gone = false;

	snprintf(mark, sizeof(mark), "%s-bounds", marker);
	if (!s || cancel < 0 || cordon_session_exec(s, &ex, &k, &err) < 0) {
		ok(0, "bounds: a session and a command (%s)", err.msg);
		destroy(s);
		return;
	}
	for (int i = 0; i < 100 && !agent; i++, nap_ms(50))
		agent = agent_of(cordon_session_pid(s));
	snprintf(go, sizeof(go), "%s/go", w);
	close(open(go, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	for (int i = 0; i < 200 && state_of(agent) != 'T'; i++)
		nap_ms(50);
	ok(agent && state_of(agent) == 'T', "bounds: the sandbox stopped its agent");
	/* a deadline of 1 s for the whole call */
	cordon_session_set_bounds(s, cancel, SEC, 0);
	q = (struct stopped_call){ .s = s };
	pthread_create(&t, NULL, stopped_main, &q);
	deadline = in_secs(30);
	q.joined = join_by(t, &deadline);
	ok(q.joined && q.r == -ETIMEDOUT, "bounds: a stat ends at the call's deadline (r %d: %s)",
	   q.r, q.err.msg);
	if (!q.joined)
		pthread_join(t, NULL);
	/* no deadline of its own (60 s a message): the cancel descriptor ends it */
	cordon_session_set_bounds(s, cancel, 0, 0);
	q = (struct stopped_call){ .s = s };
	pthread_create(&t, NULL, stopped_main, &q);
	nap_ms(200);
	if (write(cancel, &one, sizeof(one)) != sizeof(one))
		ok(0, "bounds: eventfd write");
	deadline = in_secs(30);
	q.joined = join_by(t, &deadline);
	ok(q.joined && q.r == -ECANCELED, "bounds: a stat ends once the cancel fd is readable "
	   "(r %d: %s)", q.r, q.err.msg);
	if (!q.joined)
		pthread_join(t, NULL);
	/* no cancel descriptor: cordon_session_kill() from another thread ends the call */
	cordon_session_set_bounds(s, -1, 0, 0);
	q = (struct stopped_call){ .s = s };
	pthread_create(&t, NULL, stopped_main, &q);
	nap_ms(200);
	ok(cordon_session_kill(s) == 0, "bounds: cordon_session_kill() while a call is in flight");
	deadline = in_secs(30);
	q.joined = join_by(t, &deadline);
	ok(q.joined && q.r == -ESRCH, "bounds: the call in flight ends: the session ended (r %d: %s)",
	   q.r, q.err.msg);
	if (!q.joined)
		pthread_join(t, NULL);
	for (uint64_t end = now_ns() + 10 * SEC; !gone && now_ns() < end; nap_ms(50))
		gone = !process_with(mark);
	ok(gone, "bounds: the sandbox's processes are gone before destroy");
	cordon_process_free(k);
	ok(destroy(s) >= 0, "bounds: destroy after kill");
	close(cancel);
}

/* The supervisor keeps none of the caller's descriptors */
static void test_supervisor_fds(void)
{
	const char *w = fresh_dir("sup-fds");
	int mine = open("/etc/hostname", O_RDONLY); /* not close-on-exec: fork keeps it */
	struct cordon_session *s = make_session(w, 0, 0);
	char path[64], link[PATH_MAX];
	struct dirent *de;
	bool leaked = false;
	DIR *d;

	if (!s) {
		ok(0, "supervisor fds: session created");
		if (mine >= 0)
			close(mine);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)cordon_session_pid(s));
	d = opendir(path);
	if (!d) {
		skip("its /proc/PID/fd is not readable", "supervisor fds: none of the caller's");
	} else {
		while ((de = readdir(d))) {
			char p2[128];
			ssize_t n;

			snprintf(p2, sizeof(p2), "%s/%s", path, de->d_name);
			n = readlink(p2, link, sizeof(link) - 1);
			if (n > 0) {
				link[n] = '\0';
				leaked |= !strcmp(link, "/etc/hostname");
			}
		}
		closedir(d);
		ok(!leaked, "supervisor fds: the caller's open file is not the supervisor's");
	}
	destroy(s);
	if (mine >= 0)
		close(mine);
}

/* What the config says holds for a session's commands: rlimits, environment, hostname, the
 * report; and files written through the session are the caller's on the host */
static void test_config_carried(void)
{
	const char *w = fresh_dir("configured");
	struct cordon_config *c = cordon_config_new();
	struct cordon_session *s = NULL;
	struct cordon_error err = { 0 };
	struct cordon_file_info fi;
	char report[PATH_MAX], path[PATH_MAX], id[33] = "", *out;
	uint64_t bytes;
	struct stat st;
	int r;

	snprintf(report, sizeof(report), "%s/configured-report.json", base);
	r = cordon_config_set_workdir(c, w, &err);
	if (r == 0)
		r = cordon_config_set_rlimit(c, RLIMIT_NOFILE, 100, 100, &err);
	if (r == 0)
		r = cordon_config_set_env(c, "SESSION_VAR", "from-config", &err);
	if (r == 0)
		r = cordon_config_set_hostname(c, "session-host", &err);
	if (r == 0)
		r = cordon_config_set_report_file(c, report, &err);
	if (r == 0)
		r = cordon_session_create(c, 0, &s, &err);
	cordon_config_free(c); /* the session keeps nothing of it */
	if (!ok(r == 0, "config: a session with rlimits, env, hostname, report (%s)", err.msg))
		return;
	snprintf(id, sizeof(id), "%s", cordon_session_id(s));
	out = sh_out(s, "ulimit -n; echo $SESSION_VAR; hostname", NULL);
	is_str(out, "100\nfrom-config\nsession-host\n",
	       "config: the commands get its rlimit, environment and hostname");
	free(out);
	{
		struct run rr = run_full(s, ARGV("sh", "-c", "echo $SESSION_VAR"),
					 ARGV("SESSION_VAR=from-exec"), NULL, NULL);

		is_str(rr.out, "from-exec\n", "config: an exec's env replaces the config's variable");
		run_clear(&rr);
	}
	r = put_file(s, "owned.txt", 0644, "mine", 4, &bytes, &err);
	snprintf(path, sizeof(path), "%s/owned.txt", w);
	ok(r == 0 && stat(path, &st) == 0 && st.st_uid == getuid() && st.st_gid == getgid(),
	   "files: a file written through the session is the caller's on the host (uid %d)",
	   r == 0 ? (int)st.st_uid : -1);
	out = sh_out(s, "echo $(id -u) $(id -g)", NULL);
	r = cordon_session_stat(s, "owned.txt", &fi, &err);
	{
		char ids[64];

		snprintf(ids, sizeof(ids), "%u %u\n", fi.uid, fi.gid);
		ok(r == 0 && !strcmp(out, ids), "files: ... and the sandbox's inside (stat %.*s, id %.*s)",
		   (int)strcspn(ids, "\n"), ids, (int)strcspn(out, "\n"), out);
	}
	free(out);
	if (r == 0)
		cordon_file_info_clear(&fi);
	r = put_file(s, "owned.txt/below", 0644, "x", 1, &bytes, &err);
	ok(r < 0 && err.code == ENOTDIR, "files: write below a file -> ENOTDIR (%d)", err.code);
	r = cordon_session_open_read(s, "missing.txt", &(int){ 0 }, &err);
	ok(r == -ENOENT && err.code == ENOENT, "files: open_read of a missing file -> ENOENT");
	{
		struct run rr = run_full(s, ARGV("pwd"), NULL, "owned.txt", NULL);

		ok(rr.r < 0 && rr.err.code == ENOTDIR, "exec: cwd a file -> ENOTDIR (%d)",
		   rr.err.code);
		run_clear(&rr);
	}
	ok(destroy(s) == 0, "config: destroyed");
	{
		char buf[65536] = "";
		int fd = open(report, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

		if (fd >= 0)
			close(fd);
		ok(n > 0 && strstr(buf, id), "config: destroy wrote the report, naming the session's id");
	}
}

/* A copy-on-write session (cordon_config_set_cow): checkpoint and fork. The fork starts from
 * the source's changes so far; from then on neither sees the other's changes; each keeps its
 * own layer when destroyed; the workdir on the host is never written. Where the kernel refuses
 * --cow, skipped with the reason. */
static struct cordon_config *cow_config(const char *w, const char *store, int cow)
{
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };

	if (!c || cordon_config_set_workdir(c, w, &err) < 0 ||
	    (cow && (cordon_config_set_cow(c, 1, &err) < 0 ||
		     cordon_config_set_layer_dir(c, store, &err) < 0))) {
		diag("cow config: %s: %s", err.step, err.msg);
		cordon_config_free(c);
		return NULL;
	}
	return c;
}

/* cordon diff --stat of a layer, malloc'd; NULL when it fails */
static char *layer_stat(const char *store, const char *id)
{
	struct cordon_error err = { 0 };
	FILE *t = tmpfile();
	char *buf = NULL;
	long n;

	if (!t || !id[0] || cordon_layer_diff(store, id, CORDON_DIFF_STAT, fileno(t), &err) < 0 ||
	    (n = ftell(t), fseek(t, 0, SEEK_END), n = ftell(t)) < 0 || fseek(t, 0, SEEK_SET) < 0 ||
	    !(buf = calloc(1, (size_t)n + 1)) || fread(buf, 1, (size_t)n, t) != (size_t)n) {
		if (err.msg[0])
			diag("diff %s: %s", id, err.msg);
		free(buf);
		buf = NULL;
	}
	if (t)
		fclose(t);
	return buf;
}

static void test_cow_fork(void)
{
	const char *w = fresh_dir("cow-work"), *store = fresh_dir("cow-layers");
	struct cordon_config *c;
	struct cordon_session *s = NULL, *f = NULL, *plain = NULL;
	struct cordon_result res_s, res_f;
	struct cordon_error err = { 0 };
	char id[17] = "", path[PATH_MAX], *out, *data = NULL;
	size_t len = 0;
	int r, status;

	chmod(store, 0700);
	snprintf(path, sizeof(path), "%s/orig.txt", w);
	{
		FILE *fp = fopen(path, "w");

		if (fp) {
			fputs("orig\n", fp);
			fclose(fp);
		}
	}
	c = cow_config(w, store, 1);
	r = c ? cordon_session_create(c, 0, &s, &err) : -ENOMEM;
	if (r < 0 && strstr(err.msg, "extended attributes")) {
		tap_skip_(err.msg, "cow sessions: --cow refused by this kernel");
		cordon_config_free(c);
		return;
	}
	if (!ok(r == 0 && s, "cow session: created (%s: %s)", err.step, err.msg)) {
		cordon_config_free(c);
		return;
	}
	out = sh_out(s, "echo a > f && echo ok", NULL);
	is_str(out, "ok\n", "cow session: sh -c 'echo a > f'");
	free(out);
	ok(put_file(s, "g", 0644, "g1\n", 3, NULL, &err) == 0,
	   "cow session: cordon_session_write g (%s)", err.msg);
	snprintf(path, sizeof(path), "%s/f", w);
	ok(!exists(path), "cow session: f is not in the workdir on the host");

	memset(&err, 0, sizeof(err));
	r = cordon_session_checkpoint(s, id, &err);
	ok(r == 0 && strlen(id) == 16, "cow session: checkpoint -> a layer id (%s %s)", id, err.msg);
	if (r == 0) {
		char *ids[2] = { id, NULL };
		struct cordon_layer_info *v = NULL;
		size_t n = 0;
		bool found = false;

		if (cordon_layer_list(store, &v, &n, &err) == 0)
			for (size_t i = 0; i < n; i++)
				found |= strcmp(v[i].id, ids[0]) == 0;
		cordon_layer_list_free(v, n);
		ok(found, "cow session: the checkpoint is a layer of the store");
	}
	out = sh_out(s, "cat f", NULL);
	is_str(out, "a\n", "cow session: runs on after the checkpoint");
	free(out);

	memset(&err, 0, sizeof(err));
	r = cordon_session_fork(s, c, 0, &f, &err);
	if (!ok(r == 0 && f, "cow session: fork (%s: %s)", err.step, err.msg)) {
		destroy(s);
		cordon_config_free(c);
		return;
	}
	out = sh_out(f, "cat f g", NULL);
	is_str(out, "a\ng1\n", "fork: sees the source's changes (f, g)");
	free(out);
	out = sh_out(s, "echo from-source > f; cat f", &status);
	is_str(out, "from-source\n", "source: changes f after the fork");
	free(out);
	out = sh_out(f, "echo from-fork > f; echo new > forkonly; cat f", &status);
	is_str(out, "from-fork\n", "fork: changes f too");
	free(out);
	out = sh_out(s, "cat f; test -e forkonly || echo no-forkonly", NULL);
	is_str(out, "from-source\nno-forkonly\n", "source: sees neither the fork's f nor its new file");
	free(out);
	r = get_file(f, "f", &data, &len, &err);
	ok(r == 0 && len == 10 && memcmp(data, "from-fork\n", 10) == 0,
	   "fork: reads its own f, not the source's");
	free(data);

	memset(&res_s, 0, sizeof(res_s));
	memset(&res_f, 0, sizeof(res_f));
	ok(cordon_session_destroy(s, &res_s, &err) == 0, "source destroyed");
	ok(cordon_session_destroy(f, &res_f, &err) == 0, "fork destroyed");
	ok(strlen(res_s.layer_id) == 16 && strlen(res_f.layer_id) == 16 &&
		   strcmp(res_s.layer_id, res_f.layer_id) != 0,
	   "both results carry a layer id of their own (%s, %s)", res_s.layer_id, res_f.layer_id);
	{
		char *o = layer_stat(store, res_s.layer_id), *p = layer_stat(store, res_f.layer_id);

		ok(o && strstr(o, "A f\n") && !strstr(o, "forkonly"),
		   "the source's layer: f, and not the fork's file");
		if (o && !strstr(o, "A f\n"))
			diag("source's layer: %s", o);
		ok(p && strstr(p, "A f\n") && strstr(p, "A forkonly\n"),
		   "the fork's layer: f and its own file");
		if (p && !strstr(p, "A forkonly\n"))
			diag("fork's layer: %s", p);
		free(o);
		free(p);
	}
	snprintf(path, sizeof(path), "%s/f", w);
	ok(!exists(path), "the workdir on the host is unchanged: no f");
	snprintf(path, sizeof(path), "%s/forkonly", w);
	ok(!exists(path), "... no forkonly");
	snprintf(path, sizeof(path), "%s/orig.txt", w);
	{
		char buf[16] = "";
		FILE *fp = fopen(path, "r");

		if (fp) {
			if (!fgets(buf, sizeof(buf), fp))
				buf[0] = '\0';
			fclose(fp);
		}
		is_str(buf, "orig\n", "... orig.txt as it was");
	}
	cordon_config_free(c);

	/* a session without --cow cannot be checkpointed */
	c = cow_config(w, store, 0);
	r = c ? cordon_session_create(c, 0, &plain, &err) : -ENOMEM;
	if (ok(r == 0, "a session without --cow")) {
		memset(&err, 0, sizeof(err));
		id[0] = '\0';
		r = cordon_session_checkpoint(plain, id, &err);
		is_int(r, -EINVAL, "... its checkpoint fails with EINVAL (%s)", err.msg);
		destroy(plain);
	}
	cordon_config_free(c);
}

/* cordon_session_connect(): a port of the sandbox's own loopback, reached through the agent */
static void connect_checks(struct cordon_session *s)
{
	struct cordon_error err;
	struct sockaddr_in host = { .sin_family = AF_INET, .sin_port = htons(18798),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[64] = "";
	int fd = -1, hfd, r;
	ssize_t n;

	r = cordon_session_connect(s, 18766, &fd, &err);
	if (!ok(r == 0, "connect: port 18766 inside (%s)", r < 0 ? err.msg : "ok"))
		return;
	ok((fcntl(fd, F_GETFL) & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	   "connect: the socket is O_NONBLOCK|O_CLOEXEC");
	fcntl(fd, F_SETFL, 0);
	n = write(fd, "ping", 4) == 4 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	is_str(buf, "pong ping", "connect: the server inside answers through it");
	close(fd);
	r = cordon_session_connect(s, 18799, &fd, &err);
	ok(r == -ECONNREFUSED && strstr(err.msg, "18799"),
	   "connect: nothing listens: ECONNREFUSED naming the port (%s)", err.msg);
	ok(cordon_session_connect(s, 0, &fd, &err) == -EINVAL &&
	   cordon_session_connect(s, 65536, &fd, &err) == -EINVAL, "connect: port 0, 65536: EINVAL");
	/* the escape test: the host's loopback is not the sandbox's */
	hfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (hfd >= 0 && bind(hfd, (struct sockaddr *)&host, sizeof(host)) == 0 &&
	    listen(hfd, 4) == 0) {
		r = cordon_session_connect(s, 18798, &fd, &err);
		ok(r == -ECONNREFUSED, "connect: a port listening on the host's loopback is not "
		   "reached (%d)", r);
		if (r == 0)
			close(fd);
	} else {
		skip("cannot listen on the host's 127.0.0.1:18798", "connect: the host's loopback");
	}
	if (hfd >= 0)
		close(hfd);
}

static void test_connect(struct cordon_session *s)
{
	struct cordon_process *p;
	struct cordon_error err;
	struct cordon_file_info fi;
	int got = -1, status = -1;
	struct cordon_exec e = {
		.argv = ARGV("python3", "-c",
			     "import socket\n"
			     "s = socket.socket()\n"
			     "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
			     "s.bind(('127.0.0.1', 18766))\n"
			     "s.listen(1)\n"
			     "open('connect.ready', 'w').close()\n"
			     "c, _ = s.accept()\n"
			     "c.sendall(b'pong ' + c.recv(100))\n"
			     "c.close()\n"),
		.fd = { -1, -1, -1 },
	};

	if (access("/usr/bin/python3", X_OK) < 0) {
		skip("no /usr/bin/python3", "connect: a server inside");
		return;
	}
	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		ok(0, "connect: start a server: %s", err.msg);
		return;
	}
	for (uint64_t end = now_ns() + 20 * SEC; now_ns() < end && got != 0; nap_ms(20))
		if ((got = cordon_session_stat(s, "connect.ready", &fi, &err)) == 0)
			cordon_file_info_clear(&fi);
	if (ok(got == 0, "connect: a server listens inside"))
		connect_checks(s);
	cordon_process_signal(p, SIGKILL, 0, &err);
	cordon_process_wait(p, 30 * SEC, &status, &err);
	cordon_process_free(p);
}

/* An idle sandbox's pid 1 gives back the stack pages its set-up dirtied (the command's vfork
 * child ran on its stack): cd_stack_trim. Without it, 28 KiB resident here (1,000 of 1,000 in
 * bench/session); with it, 16 or 20 (its frames and the exec's auxv, argv, environment): the
 * bound is a page from each. */
static void test_idle_stack(struct cordon_session *s)
{
	pid_t agent = agent_of(cordon_session_pid(s)), pid1 = 0;
	char comm[32], path[64], line[256];
	long rss = -1;
	bool in_stack = false;
	FILE *f;

	if (agent <= 0 || stat_of(agent, &pid1, comm, sizeof(comm), NULL) < 0) {
		ok(0, "idle stack: pid 1 found");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid1);
	f = fopen(path, "re");
	if (!f) {
		skip("pid 1's smaps unreadable here", "idle stack: pid 1's stack (%s)", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' ') && strchr(line, ' '))
			in_stack = strstr(line, "[stack]") != NULL;
		else if (in_stack && strncmp(line, "Rss:", 4) == 0)
			rss = atol(line + 4);
	}
	fclose(f);
	if (rss < 0) {
		skip("no [stack] in pid 1's smaps", "idle stack: pid 1's stack");
		return;
	}
	ok(rss <= 24, "idle stack: pid 1 keeps %ld KiB of stack resident (at most 24)", rss);
}

static void test_session_basics(void)
{
	const char *w = fresh_dir("main");
	struct cordon_session *s = make_session(w, 0, 0);
	char bgmark[128] = "";

	if (!ok(s != NULL, "create a session in %s", w))
		return;
	test_idle_stack(s);
	test_exec(s, w);
	test_concurrent(s);
	test_signals(s);
	test_tty(s);
	test_server(s);
	test_connect(s);
	test_background(s, bgmark, sizeof(bgmark));
	test_isolation(s, w);
	test_files(s, w);
	test_two_sessions(s, w);
	test_threads(s);
	test_symlinks_in_trees(s, w);
	test_process_fd(s);
	ok(destroy(s) == 0, "main session destroyed");
	ok(bgmark[0] && !process_with(bgmark), "background: the freed command died at destroy");
}

/* --- freezing (cordon_session_freeze) --- */

/* Can a session of ours have a cgroup of its own here? The library's rule (src/sandbox/cgroup.c):
 * a cgroup2 mount; as root, any; unprivileged, our own cgroup when it is writable (delegated). */
static bool cgroup_expected(void)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[4096], mnt[PATH_MAX] = "", own[PATH_MAX] = "", dir[2 * PATH_MAX + 2];
	char type[64];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %4095s %63s", mnt, type) == 2 && strcmp(type, "cgroup2") == 0)
			break;
		else
			mnt[0] = '\0';
	if (f)
		fclose(f);
	if (!mnt[0])
		return false;
	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(own, sizeof(own), "%s", strcmp(line + 3, "/") ? line + 3 : "");
		}
	if (f)
		fclose(f);
	snprintf(dir, sizeof(dir), "%s%s", mnt, own);
	return access(dir, W_OK) == 0;
}

static long read_count(const char *w)
{
	char path[PATH_MAX + 16], buf[32] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/count", w);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

/* Until the counter differs from old (10 s at most): its value */
static long count_past(const char *w, long old)
{
	long v = old;

	for (uint64_t end = now_ns() + 10 * SEC; now_ns() < end && v == old; nap_ms(20))
		v = read_count(w);
	return v;
}

/* A frozen session: its counter stands still, a command waits; thawed, both go on; killed
 * frozen, nothing of it is left. Without a cgroup: refused, saying why. */
static void test_freeze(void)
{
	const char *w = fresh_dir("freeze");
	struct cordon_session *s = make_session(w, 0, CORDON_SESSION_FREEZABLE);
	struct cordon_exec e = { .fd = { -1, -1, -1 } };
	struct cordon_error err = { 0 };
	struct cordon_process *p;
	char script[256], mark[128];
	long a, b;
	int r;

	if (!s) {
		ok(0, "freeze: session");
		return;
	}
	snprintf(mark, sizeof(mark), "%s-frozen", marker);
	snprintf(script, sizeof(script),
		 "i=0; while :; do i=$((i+1)); echo $i >count.new; mv count.new count; "
		 "sleep 0.02; done & exec -a %s sleep 1000", mark);
	e.argv = ARGV("bash", "-c", script);
	if (cordon_session_exec(s, &e, &p, &err) < 0) {
		ok(0, "freeze: start: %s", err.msg);
		destroy(s);
		return;
	}
	cordon_process_free(p);
	ok(count_past(w, -1) > 0, "freeze: the counter runs");
	r = cordon_session_freeze(s, 1, &err);
	if (!cgroup_expected()) {
		ok(r == -EOPNOTSUPP && strstr(err.msg, "no cgroup of its own"),
		   "freeze: no cgroup here: refused, saying why (%d: %s)", r, err.msg);
		ok(count_past(w, read_count(w)) > 0, "freeze: refused: the counter runs on");
		destroy(s);
		return;
	}
	ok(r == 0, "freeze: frozen (%d: %s)", r, err.msg);
	a = read_count(w);
	nap_ms(300); /* frozen: it cannot move, however long we look */
	b = read_count(w);
	ok(a > 0 && a == b, "freeze: the counter stands still (%ld, %ld)", a, b);
	ok(cordon_session_freeze(s, 1, &err) == 0, "freeze: again: nothing to do (%s)", err.msg);
	ok(cordon_session_freeze(s, 0, &err) == 0, "freeze: thawed (%s)", err.msg);
	ok(count_past(w, b) > b, "freeze: the counter goes on from where it stood");
	ok(cordon_session_freeze(s, 1, &err) == 0, "freeze: frozen again (%s)", err.msg);
	ok(destroy(s) == 0, "freeze: destroyed while frozen");
	ok(!process_with(mark), "freeze: nothing of the frozen session is left");
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (argc != 2 || !realpath(argv[1], base)) {
		fprintf(stderr, "usage: session-test BASE_DIR\n");
		return 2;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 2;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(bindir, sizeof(bindir), "%s/cordon", exe);
	setenv("CORDON", bindir, 0); /* the cordon binary: $CORDON, else beside this program */
	snprintf(marker, sizeof(marker), "cordon-session-test-%d-%ld", (int)getpid(),
		 (long)time(NULL));
	signal(SIGPIPE, SIG_IGN);
	umask(022);

	if (getenv("SESSION_TEST_ONLY") && strcmp(getenv("SESSION_TEST_ONLY"), "freeze") == 0) {
		test_freeze(); /* the VM tier's cgroup v2 (tests/vm/t-freeze.sh) */
		return done_testing();
	}
	test_session_basics();
	test_destroy_and_handles();
	test_ttl();
	test_id_slot();
	test_destroy_in_flight();
	test_remove_workdir();
	test_bad_create();
	test_many();
	test_threaded_creates();
	test_config_carried();
	test_agent_killed();
	test_agent_stopped();
	test_bounds();
	test_supervisor_fds();
	test_caller_killed();
	test_cow_fork();
	test_freeze();
	return done_testing();
}
