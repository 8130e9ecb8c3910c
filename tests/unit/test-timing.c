/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-timing.c - CORDON_TIMING's lines (timing.h): each goes to the calling thread's sink, as
 * "cordon-timing <µs> <pid> <page faults> <step>"; a thread without a sink times nothing (the
 * library writes nothing itself), and one thread's sink never gets another's lines (a library
 * caller runs sandboxes in several threads, each with its log callback); the sandbox's own
 * processes write theirs on stderr, one line a write. TAP.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "timing.h"

#include "../lib/tap.h"

struct got {
	unsigned n;
	char last[256];
};

static void keep(void *data, const char *line)
{
	struct got *g = data;

	g->n++;
	snprintf(g->last, sizeof(g->last), "%s", line);
}

static void test_sink(void)
{
	struct got g = { 0 };
	struct cd_timing_sink before;
	long long us;
	int pid, fields, n = -1;
	long faults;
	char step[64] = "";

	ok(!cd_timing_on(), "CORDON_TIMING set, no sink yet: not on");
	cd_timing("nowhere");
	before = cd_timing_sink_swap((struct cd_timing_sink){ keep, &g });
	ok(before.fn == NULL, "a thread's first sink replaces none");
	ok(cd_timing_on(), "with a sink: on");
	cd_timing("a step");
	is_uint(g.n, 1, "one step, one line");
	fields = sscanf(g.last, CD_TIMING_PREFIX "%lld %d %ld %63[^\n]%n", &us, &pid, &faults, step,
			&n);
	ok(fields == 4 && n == (int)strlen(g.last),
	   "the line: prefix, microseconds, pid, page faults, step (%s)", g.last);
	ok(us > 0 && pid == (int)getpid() && faults > 0, "... the clock, our pid, our faults");
	is_str(step, "a step", "... and the step as given");
	before = cd_timing_sink_swap(before);
	ok(before.fn == keep && before.data == &g, "the swap gives back the sink it replaces");
	cd_timing("after");
	is_uint(g.n, 1, "the sink put back (none): nothing more");
}

static void *other_thread(void *arg)
{
	struct got *mine = arg;

	ok(!cd_timing_on(), "another thread has no sink of its own: not on there");
	cd_timing("other, without a sink");
	cd_timing_sink_swap((struct cd_timing_sink){ keep, mine });
	cd_timing("other, with its own");
	return NULL;
}

static void test_threads(void)
{
	struct got main_got = { 0 }, other_got = { 0 };
	pthread_t t;

	cd_timing_sink_swap((struct cd_timing_sink){ keep, &main_got });
	if (pthread_create(&t, NULL, other_thread, &other_got) != 0)
		return (void)ok(false, "pthread_create");
	pthread_join(t, NULL);
	cd_timing("main's");
	is_uint(main_got.n, 1, "this thread's sink got its own line only");
	like_str(main_got.last, " main's", "... this thread's step");
	is_uint(other_got.n, 1, "the other thread's sink got its own line only");
	like_str(other_got.last, " other, with its own", "... that thread's step");
	cd_timing_sink_swap((struct cd_timing_sink){ NULL, NULL });
}

static void test_stderr(void)
{
	int p[2], saved = dup(2);
	char buf[512];
	ssize_t n;

	if (saved < 0 || pipe(p) < 0)
		return (void)ok(false, "pipe");
	dup2(p[1], 2);
	cd_timing_to_stderr(true);
	cd_timing("one");
	cd_timing("two");
	cd_timing_to_stderr(false);
	cd_timing("off");
	dup2(saved, 2);
	close(saved);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	buf[n > 0 ? n : 0] = '\0';
	ok(n > 0 && strncmp(buf, CD_TIMING_PREFIX, strlen(CD_TIMING_PREFIX)) == 0 &&
		   strstr(buf, " one\n" CD_TIMING_PREFIX) && strstr(buf, " two\n") &&
		   buf[n - 1] == '\n',
	   "stderr: a line a step, each ended by a newline");
	unlike_str(buf, "off", "turned off: nothing more");
	ok(!cd_timing_on(), "... and not on");
}

int main(void)
{
	setenv("CORDON_TIMING", "1", 1); /* read once, at the first question */
	test_sink();
	test_threads();
	test_stderr();
	return done_testing();
}
