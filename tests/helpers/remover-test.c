/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * remover-test WORKDIR CGROUP_PARENT - the cgroup's remover (src/sandbox/cgroup.c) shares the
 * memory of the caller of cordon_run() (CLONE_VM) and outlives the run. A library caller may
 * run cordon_run() with fast exit in a thread and then let the thread go, its stack and thread
 * block unmapped: the remover must not depend on them (a stack protector's canary is read
 * from the calling thread's block). The run makes a cgroup (--cgroup required, as root); this
 * program makes one below it, so that the remover has to wait and retry, unmaps the thread's
 * stack meanwhile, then lets the remover finish. Speaks TAP (tests/integration/t-cgroup.sh).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"
#include "../lib/tap.h"

#define THREAD_STACK (1 << 20)

static const char *workdir, *parent;

static void *run_sandbox(void *arg)
{
	const char *argv[] = { "sh", "-c", "while [ ! -e go ]; do sleep 0.02; done", NULL };
	struct cordon_config *c = cordon_config_new();
	struct cordon_error err = { 0 };
	struct cordon_result res;
	int *ret = arg;

	if (!c)
		return NULL;
	if (cordon_config_set_command(c, argv, &err) < 0 ||
	    cordon_config_set_workdir(c, workdir, &err) < 0 ||
	    cordon_config_set_cgroup_mode(c, CORDON_CGROUP_REQUIRED, &err) < 0)
		diag("config: %s", err.msg);
	cordon_config_set_fast_exit(c, 1);
	*ret = cordon_run(c, &res, &err);
	if (*ret < 0)
		diag("cordon_run: %s", err.msg);
	else
		*ret = res.exit_code;
	cordon_config_free(c);
	return NULL;
}

/* The sandbox cgroup below parent that is not in before (NULL-terminated names), into ret */
static bool new_cgroup(char **before, char *ret, size_t size)
{
	DIR *d = opendir(parent);
	struct dirent *de;
	bool found = false;

	while (d && !found && (de = readdir(d))) {
		bool old = strncmp(de->d_name, "cordon-", 7) != 0;

		for (char **b = before; *b && !old; b++)
			old = strcmp(*b, de->d_name) == 0;
		if (!old)
			found = (size_t)snprintf(ret, size, "%s/%s", parent, de->d_name) < size;
	}
	if (d)
		closedir(d);
	return found;
}

static char **list_cgroups(void)
{
	char **v = calloc(1024, sizeof(*v));
	DIR *d = opendir(parent);
	struct dirent *de;
	size_t n = 0;

	while (v && d && n < 1023 && (de = readdir(d)))
		if (strncmp(de->d_name, "cordon-", 7) == 0)
			v[n++] = strdup(de->d_name);
	if (d)
		closedir(d);
	return v;
}

/* The child of ours that holds dir open: the remover */
static pid_t find_remover(const char *dir)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d && !found && (de = readdir(d))) {
		char path[300], stat[512], link[4096], *p;
		int ppid = 0, fd;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		stat[n] = '\0';
		p = strrchr(stat, ')');
		if (!p || sscanf(p + 2, "%*c %d", &ppid) != 1 || ppid != getpid())
			continue;
		for (int i = 0; i < 64 && !found; i++) {
			snprintf(path, sizeof(path), "/proc/%s/fd/%d", de->d_name, i);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = '\0', strcmp(link, dir) == 0))
				found = atoi(de->d_name);
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* pid's end: its exit status, or 128 + the signal that ended it */
static int reap(pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	char cgroup[4096] = "", hold[4200] = "", go[4200];
	void *stack = mmap(NULL, THREAD_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char **before;
	pthread_attr_t attr;
	pthread_t t;
	pid_t remover;
	int ret = -1;

	if (argc != 3 || stack == MAP_FAILED) {
		fprintf(stderr, "usage: remover-test WORKDIR CGROUP_PARENT\n");
		return 2;
	}
	workdir = argv[1];
	parent = argv[2];
	snprintf(go, sizeof(go), "%s/go", workdir);
	unlink(go);
	before = list_cgroups();
	/* the thread's stack and its thread block (glibc puts it at the stack's top) are ours */
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack, THREAD_STACK);
	pthread_create(&t, &attr, run_sandbox, &ret);
	for (int i = 0; i < 500 && !new_cgroup(before, cgroup, sizeof(cgroup)); i++)
		usleep(10000);
	ok(cgroup[0] != '\0', "the run's cgroup is made (%s)", cgroup);
	snprintf(hold, sizeof(hold), "%s/hold", cgroup);
	ok(cgroup[0] && mkdir(hold, 0755) == 0, "a cgroup below it keeps it from being removed");
	fclose(fopen(go, "w"));
	pthread_join(t, NULL);
	is_int(ret, 0, "the command ran and exited 0");
	ok(munmap(stack, THREAD_STACK) == 0, "the thread that ran it is gone, its stack unmapped");
	usleep(100000); /* the remover retries its rmdir meanwhile */
	ok(access(cgroup, F_OK) == 0, "... while the remover waits, the cgroup is still there");
	remover = find_remover(cgroup);
	ok(remover > 0, "the remover runs (a child of ours holding the cgroup open)");
	ok(rmdir(hold) == 0, "the cgroup below it goes");
	is_int(remover > 0 ? reap(remover) : -1, 0, "the remover ends by itself, exit 0, not by a signal");
	while (wait(NULL) > 0 || errno == EINTR) /* pid 1, left to exit */
		;
	ok(cgroup[0] && access(cgroup, F_OK) < 0, "the remover removed the cgroup");
	for (char **b = before; b && *b; b++)
		free(*b);
	free(before);
	return done_testing();
}
