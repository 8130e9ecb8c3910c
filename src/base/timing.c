/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timing.c - steps of a run, timed for bench/phases (timing.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

static int enabled = -1; /* -1: the environment not read yet */

bool cd_timing_on(void)
{
	if (enabled < 0)
		enabled = getenv("CORDON_TIMING") != NULL;
	return enabled;
}

void cd_timing_enable(bool on)
{
	enabled = on;
}

void cd_timing(const char *step)
{
	struct timespec ts;
	struct rusage ru;
	char line[160];
	int n;

	if (!cd_timing_on())
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	getrusage(RUSAGE_SELF, &ru);
	n = snprintf(line, sizeof(line), "cordon-timing %lld %d %ld %s\n",
		     (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, (int)getpid(),
		     ru.ru_minflt + ru.ru_majflt, step);
	if (n > 0 && write(2, line, (size_t)n) < 0)
		enabled = 0;
}
