/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timing.c - steps of a run, timed for bench/phases (timing.h). Runs in every process of a run. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static int enabled = -1; /* -1: the environment not read yet */
/* per thread: a library caller may run sandboxes in several threads, each with its callback */
static _Thread_local struct cd_timing_sink sink;

static bool env_on(void)
{
	if (enabled < 0)
		enabled = getenv("CORDON_TIMING") != NULL;
	return enabled;
}

bool cd_timing_on(void)
{
	return env_on() && sink.fn;
}

struct cd_timing_sink cd_timing_sink_swap(struct cd_timing_sink to)
{
	struct cd_timing_sink before = sink;

	sink = to;
	return before;
}

/* One write, so that lines of processes writing at once do not mix; a stderr that fails
 * (closed, a broken pipe) ends the timing rather than costing each step a failed write. */
static void to_stderr(void *data, const char *line)
{
	char buf[192];
	int n = snprintf(buf, sizeof(buf), "%s\n", line);

	(void)data;
	if (n > 0 && write(2, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		enabled = 0;
}

void cd_timing_to_stderr(bool on)
{
	enabled = on;
	sink = (struct cd_timing_sink){ on ? to_stderr : NULL, NULL };
}

void cd_timing(const char *step)
{
	struct timespec ts;
	struct rusage ru;
	char line[160];

	if (!cd_timing_on())
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	getrusage(RUSAGE_SELF, &ru);
	snprintf(line, sizeof(line), CD_TIMING_PREFIX "%lld %d %ld %s",
		 (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, (int)getpid(),
		 ru.ru_minflt + ru.ru_majflt, step);
	sink.fn(sink.data, line);
}
