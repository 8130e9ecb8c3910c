/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe - one test helper with subcommands, run inside the sandbox. It reports facts and
 * attempts; the test scripts judge. An attempt prints "ok" or the errno name ("EPERM") and exits
 * 0 when it succeeded, 1 when it failed; usage errors exit 2.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int result(int r)
{
	if (r >= 0) {
		puts("ok");
		return 0;
	}
	puts(strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
	return 1;
}

static int c_whoami(char **a)
{
	gid_t groups[64];
	int n = getgroups(64, groups);
	uid_t r, e, s;
	gid_t gr, ge, gs;

	(void)a;
	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	printf("uid=%u euid=%u suid=%u gid=%u egid=%u sgid=%u groups=", r, e, s, gr, ge, gs);
	for (int i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", groups[i]);
	putchar('\n');
	return 0;
}

static int c_status(char **a)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	(void)a;
	if (!f)
		return result(-1);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10) ||
		    !strncmp(line, "Seccomp", 7))
			fputs(line, stdout);
	fclose(f);
	return 0;
}

static int c_fds(char **a)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self;

	(void)a;
	if (!d)
		return result(-1);
	self = dirfd(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != self)
			printf("%s\n", e->d_name);
	closedir(d);
	return 0;
}

static int c_read(char **a)
{
	char buf[4096];
	int fd = open(a[0], O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return result(-1);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return result(-1);
	puts("ok");
	fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

static int c_write(char **a)
{
	int fd = open(a[0], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return result(-1);
	if (write(fd, "probe\n", 6) < 0) {
		close(fd);
		return result(-1);
	}
	return result(close(fd));
}

static int c_mkdir(char **a)
{
	return result(mkdir(a[0], 0755));
}

static int c_chmod(char **a)
{
	return result(chmod(a[0], (mode_t)strtol(a[1], NULL, 8)));
}

static int c_connect(char **a)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(a[1])) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return result(-1);
	inet_pton(AF_INET, a[0], &sin.sin_addr);
	return result(connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
}

static int c_kill(char **a)
{
	return result(kill(atoi(a[0]), atoi(a[1])));
}

static int c_mount(char **a)
{
	(void)a;
	return result(mount("none", "/tmp", "tmpfs", 0, NULL));
}

static int c_unshare_user(char **a)
{
	(void)a;
	return result(unshare(CLONE_NEWUSER));
}

static int c_ptrace(char **a)
{
	return result((int)ptrace(PTRACE_ATTACH, atoi(a[0]), NULL, NULL));
}

/* TIOCSTI on fd 0 and on /dev/tty: pushes a byte into the terminal's input queue */
static int c_tiocsti(char **a)
{
	const char *s = a[0] ? a[0] : "x";
	int tty = open("/dev/tty", O_RDWR | O_CLOEXEC), r0, r1 = -1, e0;

	r0 = ioctl(0, TIOCSTI, s);
	e0 = errno;
	if (tty >= 0)
		r1 = ioctl(tty, TIOCSTI, s);
	printf("fd0 %s\n", r0 == 0 ? "ok" : strerrorname_np(e0));
	printf("devtty %s\n", tty < 0 ? "ENXIO-open" : r1 == 0 ? "ok" : strerrorname_np(errno));
	return r0 == 0 || r1 == 0 ? 0 : 1;
}

static int c_env(char **a)
{
	(void)a;
	for (char **e = environ; *e; e++)
		puts(*e);
	return 0;
}

static int c_exit(char **a)
{
	return atoi(a[0]);
}

static int c_signal(char **a)
{
	signal(atoi(a[0]), SIG_DFL);
	raise(atoi(a[0]));
	return 99;
}

static int c_sleep(char **a)
{
	struct timespec ts = { atoi(a[0]), 0 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}

static const char *trap_file;

static void on_signal(int sig)
{
	int fd = open(trap_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	dprintf(fd, "%s\n", sigabbrev_np(sig));
	close(fd);
	_exit(100 + sig);
}

/* trap FILE: write the name of the first of HUP INT QUIT TERM USR1 USR2 that arrives, exit 100+N */
static int c_trap(char **a)
{
	int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH };

	trap_file = a[0];
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	close(open(a[1] ? a[1] : "/dev/null", O_WRONLY | O_CREAT | O_CLOEXEC, 0644)); /* ready */
	for (;;)
		pause();
	return 0;
}

/* ignore-term READYFILE: SIGTERM ignored, sleeps forever */
static int c_ignore_term(char **a)
{
	signal(SIGTERM, SIG_IGN);
	close(open(a[0], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	for (;;)
		pause();
	return 0;
}

/* daemon MARKER: double fork into the background, sleep; argv shows MARKER */
static int c_daemon(char **a)
{
	pid_t p = fork();

	if (p > 0) {
		waitpid(p, NULL, 0);
		return 0;
	}
	setsid();
	if (fork() > 0)
		_exit(0);
	execlp("sleep", "sleep", a[0], (char *)NULL);
	_exit(127);
}

static int c_spin(char **a)
{
	(void)a;
	for (volatile unsigned long i = 0;; i++)
		;
	return 0;
}

static int c_rlimit(char **a)
{
	static const struct { const char *n; int r; } t[] = {
		{ "core", RLIMIT_CORE }, { "nofile", RLIMIT_NOFILE }, { "fsize", RLIMIT_FSIZE },
		{ "cpu", RLIMIT_CPU },   { "as", RLIMIT_AS },         { "nproc", RLIMIT_NPROC },
		{ "stack", RLIMIT_STACK },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(a[0], t[i].n)) {
			struct rlimit l;

			getrlimit(t[i].r, &l);
			if (l.rlim_cur == RLIM_INFINITY)
				printf("unlimited ");
			else
				printf("%llu ", (unsigned long long)l.rlim_cur);
			if (l.rlim_max == RLIM_INFINITY)
				puts("unlimited");
			else
				printf("%llu\n", (unsigned long long)l.rlim_max);
			return 0;
		}
	return 2;
}

static int c_hostname(char **a)
{
	char h[128] = "";

	(void)a;
	gethostname(h, sizeof(h));
	puts(h);
	return 0;
}

static int c_sethostname(char **a)
{
	return result(sethostname(a[0], strlen(a[0])));
}

static int c_setuid0(char **a)
{
	(void)a;
	return result(setuid(0));
}

static int c_chroot(char **a)
{
	(void)a;
	return result(chroot("/tmp"));
}

static int c_mknod(char **a)
{
	return result(mknod(a[0], S_IFCHR | 0666, makedev(1, 3)));
}

static int c_pid(char **a)
{
	(void)a;
	printf("%d %d\n", getpid(), getppid());
	return 0;
}

static int c_ppid_reaped(char **a)
{
	/* orphan a child and check pid 1 reaps it: the zombie must disappear */
	pid_t p = fork();
	char path[300];
	struct timespec ts = { 0, 20000000 };

	(void)a;
	if (p == 0) {
		if (fork() > 0)
			_exit(0); /* middle exits: grandchild is adopted by pid 1 */
		_exit(0); /* grandchild exits at once: pid 1 must reap it */
	}
	waitpid(p, NULL, 0);
	for (int i = 0; i < 100; i++) {
		int zombies = 0;
		DIR *d = opendir("/proc");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char st[256];
			FILE *f;

			if (atoi(e->d_name) <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			f = fopen(path, "re");
			if (f && fgets(st, sizeof(st), f) && strstr(st, ") Z "))
				zombies++;
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
		if (!zombies) {
			puts("no zombies");
			return 0;
		}
		nanosleep(&ts, NULL);
	}
	puts("zombies remain");
	return 1;
}

/* exchange A B SECONDS: swap the names A and B (renameat2 RENAME_EXCHANGE) in a tight loop for
 * SECONDS, for races against a path the launcher resolves; says "running" once the first swap
 * is done and, at the end, how many swaps it made */
static int c_exchange(char **a)
{
	struct timespec now, end;
	unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += atoi(a[2]);
	do {
		for (int i = 0; i < 1000; i++, n++)
			if (renameat2(AT_FDCWD, a[0], AT_FDCWD, a[1], RENAME_EXCHANGE) < 0)
				return result(-1);
		if (n == 1000)
			puts("running");
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	printf("%lu swaps\n", n);
	return 0;
}

static const struct {
	const char *name;
	int nargs;
	int (*fn)(char **);
} cmds[] = {
	{ "whoami", 0, c_whoami },     { "status", 0, c_status },
	{ "fds", 0, c_fds },           { "read", 1, c_read },
	{ "write", 1, c_write },       { "mkdir", 1, c_mkdir },
	{ "chmod", 2, c_chmod },       { "connect", 2, c_connect },
	{ "kill", 2, c_kill },         { "mount", 0, c_mount },
	{ "unshare-user", 0, c_unshare_user }, { "ptrace", 1, c_ptrace },
	{ "tiocsti", 0, c_tiocsti },   { "env", 0, c_env },
	{ "exit", 1, c_exit },         { "signal", 1, c_signal },
	{ "sleep", 1, c_sleep },       { "trap", 1, c_trap },
	{ "ignore-term", 1, c_ignore_term }, { "daemon", 1, c_daemon },
	{ "spin", 0, c_spin },         { "rlimit", 1, c_rlimit },
	{ "hostname", 0, c_hostname }, { "sethostname", 1, c_sethostname },
	{ "setuid0", 0, c_setuid0 },   { "chroot", 0, c_chroot },
	{ "mknod", 1, c_mknod },       { "pid", 0, c_pid },
	{ "reap", 0, c_ppid_reaped },  { "exchange", 3, c_exchange },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			if (argc - 2 < cmds[i].nargs) {
				fprintf(stderr, "probe %s: needs %d arguments\n", argv[1],
					cmds[i].nargs);
				return 2;
			}
			return cmds[i].fn(argv + 2);
		}
	fprintf(stderr, "usage: probe COMMAND [ARGS]\n");
	return 2;
}
