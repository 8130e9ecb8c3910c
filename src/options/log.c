/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.c - the library's messages to its caller: debug lines and notices, through the callbacks
 * the caller set (cordon_config_set_log, _set_notice), none when unset. Runs in the supervisor. */
#include <stdarg.h>
#include <stdio.h>

#include "config.h"

static void emit(cordon_log_fn fn, void *data, const char *fmt, va_list ap)
{
	char line[1024];

	if (!fn)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fn(data, line);
}

void cd_log_line(const struct cd_log *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(l->fn, l->data, fmt, ap);
	va_end(ap);
}

void cd_log_notice(const struct cd_log *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(l->notice, l->notice_data, fmt, ap);
	va_end(ap);
}
