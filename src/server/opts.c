/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* opts.c - the server's options, its log line (one writer at a time: the threads' lines do not
 * mix) and its wall clock. Runs in the server process. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "opts.h"

struct srv_options srv_opts;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void srv_log(const char *fmt, ...)
{
	va_list ap;

	if (!srv_opts.verbose)
		return;
	pthread_mutex_lock(&log_lock);
	fputs("cordon: serve: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_lock);
}

int64_t srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
