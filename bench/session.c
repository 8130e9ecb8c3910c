/* session MODE ... - the library side of bench/session: sessions of libcordon (include/cordon.h),
 * each with a fresh workdir under ROOT mounted at /home/user, as `cordon serve` makes them.
 * Prints one "label value" line per sample (microseconds) or figure; bench/session sums up.
 *
 *   session create ROOT N      create + exec /bin/true + wait, N times (destroy not timed)
 *   session exec ROOT N        one session; exec /bin/true + wait, N times (after 20 warm-ups)
 *   session login ROOT N       the same with /bin/bash -l -c true (what the SDK's commands.run
 *                              has the server start)
 *   session rate ROOT SECONDS  create + destroy in a loop for SECONDS: sessions per second
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

static void run_true(struct cordon_session *s)
{
	run(s, true_argv);
}

static void destroy(struct cordon_session *s)
{
	struct cordon_error err = {0};

	if (cordon_session_destroy(s, NULL, &err) < 0)
		fail("destroy", &err);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	long n = argc > 3 ? atol(argv[3]) : 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: session create|exec|login|rate|idle|once ROOT [N]\n");
		return 2;
	}
	root = argv[2];
	if (!strcmp(mode, "create") || !strcmp(mode, "once")) {
		for (long i = 0; i < n; i++) {
			double t0 = now_us();
			struct cordon_session *s = create();
			double t1 = now_us();

			run_true(s);
			double t2 = now_us();
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
		double t0 = now_us(), end = t0 + (double)n * 1e6, t;
		long count = 0;

		do {
			destroy(create());
			count++;
			t = now_us();
		} while (t < end);
		printf("rate %.2f\n", (double)count / ((t - t0) / 1e6));
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
