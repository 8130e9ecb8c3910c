/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* share.c - a sandbox's part of the caller's per-user budgets (share.h). The plan in the
 * supervisor, the apply in pid 1. */
#include <fcntl.h>
#include <stdio.h>

#include "share.h"

unsigned long long cd_share_of(unsigned long long budget, unsigned n)
{
	unsigned long long part = n > 1 ? budget / n : budget;

	return part ? part : 1;
}

static unsigned long long read_number(const char *path, unsigned long long fallback)
{
	char buf[32];
	unsigned long long v;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fallback;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	return sscanf(buf, "%llu", &v) == 1 ? v : fallback;
}

/* a hard rlimit of 1/n of ours, unless the config sets it */
static void share_rlimit(struct cd_rlimit rl[RLIM_NLIMITS], int resource, unsigned n)
{
	struct rlimit cur;
	unsigned long long part;

	if (rl[resource].set || getrlimit(resource, &cur) < 0 || cur.rlim_max == RLIM_INFINITY)
		return;
	part = cd_share_of(cur.rlim_max, n);
	rl[resource] = (struct cd_rlimit){ .set = true,
					   .soft = cur.rlim_cur < part ? cur.rlim_cur : part,
					   .hard = part };
}

void cd_share_plan(unsigned user_share, const struct cd_log *log, const struct cd_identity *id,
		   struct cd_rlimit rl[RLIM_NLIMITS], struct cd_share *ret)
{
	unsigned n = user_share;

	*ret = (struct cd_share){ 0 };
	if (id->own_ids || n <= 1)
		return;
	ret->inotify_instances = (unsigned)cd_share_of(
		read_number("/proc/sys/fs/inotify/max_user_instances", 128), n);
	ret->inotify_watches = (unsigned)cd_share_of(
		read_number("/proc/sys/fs/inotify/max_user_watches", 8192), n);
	share_rlimit(rl, RLIMIT_MSGQUEUE, n);
	share_rlimit(rl, RLIMIT_SIGPENDING, n);
	/* counted up the namespaces' chain as the others are: without it one sandbox takes every
	 * process of the caller's uid (and the caller, or a server's next thread, cannot fork) */
	share_rlimit(rl, RLIMIT_NPROC, n);
	cd_log_line(log, "identity: the caller's uid shared by up to %u sandboxes: %u inotify "
			 "instances and %u watches here, processes, message queues and pending "
			 "signals divided",
		      n, ret->inotify_instances, ret->inotify_watches);
}

static int write_limit(int proc, const char *name, unsigned v, struct cordon_error *err)
{
	char path[64], value[16];
	int r;

	snprintf(path, sizeof(path), "sys/user/%s", name);
	snprintf(value, sizeof(value), "%u\n", v);
	r = cd_write_file_at(proc, path, value);
	return r < 0 ? cd_fail_errno(err, -r, "init", "set %s to %u in the sandbox's namespace",
				     name, v)
		     : 0;
}

int cd_share_apply(const struct cd_share *s, int proc, struct cordon_error *err)
{
	int r = 0;

	if (s->inotify_instances)
		r = write_limit(proc, "max_inotify_instances", s->inotify_instances, err);
	if (r >= 0 && s->inotify_watches)
		r = write_limit(proc, "max_inotify_watches", s->inotify_watches, err);
	return r;
}
