/* session MODE ... - the library side of bench/session: sessions of libcordon (include/cordon.h),
 * each with a fresh workdir under ROOT mounted at /home/user, as `cordon serve` makes them.
 * Prints one "label value" line per sample (microseconds) or figure; bench/session sums up.
 *
 *   session create ROOT N      create + exec /bin/true + wait, N times (destroy not timed)
 *   session exec ROOT N        one session; exec /bin/true + wait, N times (after 20 warm-ups)
 *   session login ROOT N       the same with /bin/bash -l -c true (what the SDK's commands.run
 *                              has the server start)
 *   session create-login ROOT N the same with /bin/bash -l -c true as the first command (what
 *                              the SDK's create + commands.run has the server start)
 *   session rate ROOT SECONDS [P]  create + destroy in a loop for SECONDS in P processes at once
 *                              (default 1): sessions per second, all of them together ("rate";
 *                              "rate_p" when P > 1), and each create's time ("rate_create",
 *                              "rate_p_create": microseconds)
 *   session loaded ROOT IDLE SECONDS P  IDLE idle sessions open, then rate's loop in P processes:
 *                              "loaded_create" per create, "loaded"
 *   session idle ROOT N        N idle sessions; prints "pid SUPERVISOR" for each, then "ready",
 *                              and destroys them all when its standard input closes
 *   session once ROOT          one create + exec + wait + destroy (for strace or perf)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon.h"

static const char *root;
static unsigned serial;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

_Noreturn static void fail(const char *what, const struct cordon_error *err)
{
	fprintf(stderr, "bench/session: %s: %s: %s\n", what, err->step, err->msg);
	exit(1);
}

static struct cordon_session *create(void)
{
	struct cordon_error err = {0};
	struct cordon_config *c = cordon_config_new();
	struct cordon_session *s;
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/%u", root, serial++);
	if (mkdir(dir, 0700) < 0) {
		perror(dir);
		exit(1);
	}
	if (!c || cordon_config_set_workdir(c, dir, &err) < 0 ||
	    cordon_config_set_workdir_target(c, "/home/user", &err) < 0)
		fail("config", &err);
	if (cordon_session_create(c, CORDON_SESSION_REMOVE_WORKDIR, &s, &err) < 0)
		fail("create", &err);
	cordon_config_free(c);
	return s;
}

static const char *const true_argv[] = {"/bin/true", NULL};
static const char *const login_argv[] = {"/bin/bash", "-l", "-c", "true", NULL};

static void run(struct cordon_session *s, const char *const *argv)
{
	struct cordon_exec e = {.argv = argv, .fd = {-1, -1, -1}};
	struct cordon_error err = {0};
	struct cordon_process *p;
	int status;

	if (cordon_session_exec(s, &e, &p, &err) < 0)
		fail("exec", &err);
	if (cordon_process_wait(p, UINT64_MAX, &status, &err) != 1 || status != 0)
		fail("wait", &err);
	cordon_process_free(p);
}

static void destroy(struct cordon_session *s)
{
	struct cordon_error err = {0};

	if (cordon_session_destroy(s, NULL, &err) < 0)
		fail("destroy", &err);
}

/* create + destroy in a loop for seconds in p processes forked from this one, each create timed
 * (the lines, one write each, go to our standard output: a pipe keeps them whole); then
 * "NAME RATE", the sessions of all of them over the time the slowest took */
static void rate(const char *name, double seconds, long p)
{
	double t0 = now_us(), end = t0 + seconds * 1e6;
	long total = 0;
	pid_t *pids = calloc((size_t)p, sizeof(*pids));
	int fds[2];

	fflush(stdout);
	if (pipe(fds) < 0) {
		perror("pipe");
		exit(1);
	}
	for (long i = 0; i < p; i++) {
		pid_t pid = pids[i] = fork();

		if (pid < 0) {
			perror("fork");
			exit(1);
		}
		if (pid == 0) {
			long count = 0;
			double t;

			close(fds[0]);
			serial = (unsigned)(i + 1) * 1000000u + serial;
			do {
				double c0 = now_us();
				struct cordon_session *s = create();

				printf("%s_create %.1f\n", name, now_us() - c0);
				destroy(s);
				count++;
				t = now_us();
			} while (t < end);
			if (write(fds[1], &count, sizeof(count)) != sizeof(count))
				_exit(1);
			fflush(stdout);
			_exit(0);
		}
	}
	close(fds[1]);
	for (long i = 0, c; i < p; i++) {
		if (read(fds[0], &c, sizeof(c)) != sizeof(c)) {
			fprintf(stderr, "bench/session: a creator failed\n");
			exit(1);
		}
		total += c;
	}
	close(fds[0]);
	for (long i = 0; i < p; i++) { /* them only: our sessions' supervisors are children too */
		int st;

		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			exit(1);
	}
	free(pids);
	printf("%s %.2f\n", name, (double)total / ((now_us() - t0) / 1e6));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	long n = argc > 3 ? atol(argv[3]) : 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: session create|create-login|exec|login|rate|loaded|idle|once ROOT [N]...\n");
		return 2;
	}
	root = argv[2];
	if (!strcmp(mode, "create") || !strcmp(mode, "once") || !strcmp(mode, "create-login")) {
		int login = !strcmp(mode, "create-login");

		for (long i = 0; i < n; i++) {
			double t0 = now_us();
			struct cordon_session *s = create();
			double t1 = now_us();

			run(s, login ? login_argv : true_argv);
			double t2 = now_us();
			if (login)
				printf("create_login %.1f\n", t2 - t0);
			else
				printf("create %.1f\ncreate_only %.1f\n", t2 - t0, t1 - t0);
			destroy(s);
			printf("destroy %.1f\n", now_us() - t2);
		}
	} else if (!strcmp(mode, "exec") || !strcmp(mode, "login")) {
		const char *const *argv = !strcmp(mode, "exec") ? true_argv : login_argv;
		struct cordon_session *s = create();

		for (int i = 0; i < 20; i++)
			run(s, argv);
		for (long i = 0; i < n; i++) {
			double t0 = now_us();

			run(s, argv);
			printf("%s %.1f\n", mode, now_us() - t0);
		}
		destroy(s);
	} else if (!strcmp(mode, "rate")) {
		long p = argc > 4 ? atol(argv[4]) : 1;

		rate(p > 1 ? "rate_p" : "rate", (double)n, p);
	} else if (!strcmp(mode, "loaded")) {
		long p = argc > 5 ? atol(argv[5]) : 1;
		struct cordon_session **v = calloc((size_t)n, sizeof(*v));
		double t0 = now_us();

		for (long i = 0; i < n; i++)
			v[i] = create();
		printf("loaded_idle_total %.1f\n", now_us() - t0);
		rate("loaded", argc > 4 ? atof(argv[4]) : 10, p);
		for (long i = 0; i < n; i++)
			destroy(v[i]);
		free(v);
	} else if (!strcmp(mode, "idle")) {
		struct cordon_session **v = calloc((size_t)n, sizeof(*v));
		double t0 = now_us();
		char buf[64];

		for (long i = 0; i < n; i++) {
			v[i] = create();
			printf("pid %d\n", (int)cordon_session_pid(v[i]));
		}
		printf("idle_create_total %.1f\nready\n", now_us() - t0);
		while (fgets(buf, sizeof(buf), stdin))
			;
		t0 = now_us();
		for (long i = 0; i < n; i++)
			destroy(v[i]);
		printf("idle_destroy_total %.1f\n", now_us() - t0);
		free(v);
	} else {
		fprintf(stderr, "bench/session: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
