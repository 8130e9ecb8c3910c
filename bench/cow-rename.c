/* cow-rename MODE LOWER MNT CMD...: bench/cow-rename's overlay maker (run as root). Makes an
 * overlay of LOWER on a fresh tmpfs upper, then runs CMD in a new user and mount namespace (its
 * root mapped to root, who owns LOWER) with the overlay at MNT, and prints the overlay's making
 * time.
 * MODE "userxattr": the overlay is made inside that namespace with user.* xattrs, as cordon's
 * pid 1 does (redirect_dir=nofollow: directories cannot be renamed). MODE "redirect": made in
 * the initial namespace with trusted.* xattrs and redirect_dir=on, then attached inside with
 * move_mount (what a root supervisor could do; an unprivileged one cannot make it). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "cow-rename: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		die(path);
	close(fd);
}

/* a detached overlay of lower over a new tmpfs's upper */
static int overlay(const char *lower, int redirect)
{
	int t = fsopen("tmpfs", FSOPEN_CLOEXEC), m, up, wk, lo, fs, r;

	if (t < 0 || fsconfig(t, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		die("tmpfs");
	m = fsmount(t, FSMOUNT_CLOEXEC, 0);
	if (m < 0 || mkdirat(m, "upper", 0755) < 0 || mkdirat(m, "work", 0700) < 0)
		die("tmpfs's directories");
	up = openat(m, "upper", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	wk = openat(m, "work", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	lo = (int)syscall(SYS_open_tree, AT_FDCWD, lower, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (up < 0 || wk < 0 || lo < 0 || fs < 0)
		die("overlay's layers");
	r = fsconfig(fs, FSCONFIG_SET_FD, "lowerdir+", NULL, lo);
	r = r ?: fsconfig(fs, FSCONFIG_SET_FD, "upperdir", NULL, up);
	r = r ?: fsconfig(fs, FSCONFIG_SET_FD, "workdir", NULL, wk);
	if (redirect)
		r = r ?: fsconfig(fs, FSCONFIG_SET_STRING, "redirect_dir", "on", 0);
	else
		r = r ?: fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0);
	r = r ?: fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	if (r < 0)
		die("overlay");
	m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (m < 0)
		die("fsmount");
	return m;
}

static void child(int go, int redirect, const char *lower, const char *mnt, char **cmd)
{
	double t0;
	char c;
	int m = -1;

	if (redirect)
		m = overlay(lower, 1); /* in the initial namespace, before leaving it */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		die("unshare");
	if (write(go, "u", 1) != 1 || read(go, &c, 1) != 1) /* the parent writes our id maps */
		die("sync");
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		die("setresuid");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("make / private");
	t0 = now_us();
	if (!redirect)
		m = overlay(lower, 0);
	if (syscall(SYS_move_mount, m, "", AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		die("move_mount");
	/* redirect: the time to attach only (the making is timed by the parent's run below) */
	printf("overlay %s: made and attached in %.0f us\n", redirect ? "redirect" : "userxattr",
	       now_us() - t0);
	fflush(stdout);
	execvp(cmd[0], cmd);
	die(cmd[0]);
}

int main(int argc, char **argv)
{
	int sv[2], status, redirect;
	char path[64], c;
	pid_t pid;

	if (argc < 5)
		return fprintf(stderr, "usage: cow-rename userxattr|redirect LOWER MNT CMD...\n"), 2;
	redirect = strcmp(argv[1], "redirect") == 0;
	if (redirect) { /* the making's own time, in the initial namespace */
		double t0 = now_us();

		close(overlay(argv[2], 1));
		printf("overlay redirect: made in %.0f us\n", now_us() - t0);
		fflush(stdout);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		child(sv[1], redirect, argv[2], argv[3], argv + 4);
	}
	if (pid < 0 || read(sv[0], &c, 1) != 1)
		die("fork");
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	write_file(path, "0 0 1");
	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	write_file(path, "deny");
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	write_file(path, "0 0 1");
	if (write(sv[0], "g", 1) != 1 || waitpid(pid, &status, 0) < 0)
		die("child");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
