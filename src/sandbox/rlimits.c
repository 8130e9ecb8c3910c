/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rlimits.c - resource limits. The check runs in the supervisor, the apply in the command's
 * process in the sandbox, after privileges are gone (so the limits can only go down). */
#include <stdio.h>

#include "rlimits.h"

static void format_limit(uint64_t v, char *buf, size_t len)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

int cd_rlimits_check(const struct cd_rlimit rl[RLIM_NLIMITS], struct cordon_error *err)
{
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		struct rlimit cur;
		char want[24], have[24];

		if (!rl[i].set || getrlimit(i, &cur) < 0)
			continue;
		if (rl[i].hard <= cur.rlim_max)
			continue;
		format_limit(rl[i].hard, want, sizeof(want));
		format_limit(cur.rlim_max, have, sizeof(have));
		return cd_fail(err, EPERM, "rlimit",
			       "%s: %s is above the current hard limit %s, which cannot be raised",
			       cd_rlimit_name(i), want, have);
	}
	return 0;
}

int cd_rlimits_apply(const struct cd_rlimit rl[RLIM_NLIMITS], struct cordon_error *err)
{
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		struct rlimit lim = { rl[i].soft, rl[i].hard };

		if (rl[i].set && setrlimit(i, &lim) < 0)
			return cd_fail_errno(err, errno, "rlimit", "set %s", cd_rlimit_name(i));
	}
	return 0;
}

int cd_rlimits_send(int sock, struct cordon_error *err)
{
	struct cd_msg m = { .type = CD_MSG_RLIMITS };
	int r;

	for (int i = 0; i < RLIM_NLIMITS; i++) {
		struct rlimit cur;

		if (getrlimit(i, &cur) < 0)
			return cd_fail_errno(err, errno, "rlimit", "read %s back",
					     cd_rlimit_name(i) ? cd_rlimit_name(i) : "?");
		m.rlim[i][0] = cur.rlim_cur;
		m.rlim[i][1] = cur.rlim_max;
	}
	r = cd_msg_send_msg(sock, &m, -1);
	if (r < 0)
		return cd_fail_errno(err, -r, "sync", "send the command's rlimits to the supervisor");
	return 0;
}

void cd_rlimits_received(struct cd_rlimits_got *got, const struct cd_msg *m)
{
	for (int i = 0; i < RLIM_NLIMITS; i++)
		got->r[i] = (struct rlimit){ m->rlim[i][0], m->rlim[i][1] };
	got->valid = true;
}
