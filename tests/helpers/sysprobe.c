/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysprobe GROUP... - try the system calls of a seccomp group from inside the sandbox and print
 * one line per call: "NAME ERRNO" (or "NAME ok"). Arguments are chosen so that a call the
 * filter lets through fails harmlessly (NULL pointers, bad fds: EFAULT, EBADF, EINVAL), which
 * tells a filter's answer (EPERM, ENOSYS) from the kernel's.
 *
 * Groups: mount keyring modules kexec reboot swap raw-io clock accounting debug bpf userfaultfd
 * io-uring namespaces handles handle-names kcmp obsolete userns tty personality sockets ldt; and
 * abi-i386, abi-x32, which must not return (the filter kills them).
 *
 * setuid and setgid: every system call that sets a mode, tried in the current directory with
 * S_ISUID and then S_ISGID ("chmod-suid EPERM"), and with a plain 0755 ("chmod-plain ok"), then
 * one line "left: NAME..." with the files of the directory that carry either bit ("left:" alone
 * when none). tty-persist: the terminal ioctls that outlive the run, on fd 0.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif

static void report(const char *name, long r)
{
	printf("%s %s\n", name, r >= 0 ? "ok" : strerrorname_np(errno));
}

#define TRY(name, ...) report(name, syscall(__VA_ARGS__))

static void g_mount(void)
{
	TRY("mount", SYS_mount, NULL, NULL, NULL, 0, NULL);
	TRY("umount2", SYS_umount2, "/nonexistent", 0);
	TRY("pivot_root", SYS_pivot_root, NULL, NULL);
	TRY("chroot", SYS_chroot, "/nonexistent");
	TRY("fsopen", SYS_fsopen, NULL, 0);
	TRY("fsconfig", SYS_fsconfig, -1, 0, NULL, NULL, 0);
	TRY("fsmount", SYS_fsmount, -1, 0, 0);
	TRY("fspick", SYS_fspick, -1, NULL, 0);
	TRY("open_tree", SYS_open_tree, -1, NULL, 0);
	TRY("move_mount", SYS_move_mount, -1, NULL, -1, NULL, 0);
	TRY("mount_setattr", SYS_mount_setattr, -1, NULL, 0, NULL, 0);
}

static void g_keyring(void)
{
	TRY("add_key", SYS_add_key, NULL, NULL, NULL, 0, 0);
	TRY("keyctl", SYS_keyctl, -1, 0, 0, 0, 0);
	TRY("request_key", SYS_request_key, NULL, NULL, NULL, 0);
}

static void g_modules(void)
{
	TRY("init_module", SYS_init_module, NULL, 0, NULL);
	TRY("finit_module", SYS_finit_module, -1, NULL, 0);
	TRY("delete_module", SYS_delete_module, NULL, 0);
}

static void g_kexec(void)
{
	TRY("kexec_load", SYS_kexec_load, 0, 0, NULL, 0xdead0000ul);
	TRY("kexec_file_load", SYS_kexec_file_load, -1, -1, 0, NULL, 0xdead0000ul);
}

static void g_reboot(void)
{
	TRY("reboot", SYS_reboot, 0, 0, 0, NULL); /* bad magic: EINVAL if it got through */
}

static void g_swap(void)
{
	TRY("swapon", SYS_swapon, NULL, 0);
	TRY("swapoff", SYS_swapoff, NULL);
}

static void g_raw_io(void)
{
	TRY("iopl", SYS_iopl, 4);
	TRY("ioperm", SYS_ioperm, 0x3ff, 1, 1);
}

static void g_clock(void)
{
	TRY("settimeofday", SYS_settimeofday, NULL, NULL); /* a no-op if it got through */
	TRY("clock_settime", SYS_clock_settime, CLOCK_REALTIME, NULL);
	TRY("clock_adjtime", SYS_clock_adjtime, CLOCK_REALTIME, NULL);
	TRY("adjtimex", SYS_adjtimex, NULL);
}

static void g_accounting(void)
{
	TRY("acct", SYS_acct, "/nonexistent");
	TRY("quotactl", SYS_quotactl, 0, NULL, 0, NULL);
}

static void g_debug(void)
{
	TRY("perf_event_open", SYS_perf_event_open, NULL, 0, -1, -1, 0);
}

static void g_bpf(void)
{
	TRY("bpf", SYS_bpf, 0, NULL, 0);
}

static void g_userfaultfd(void)
{
	TRY("userfaultfd", SYS_userfaultfd, 0x80000 /* O_CLOEXEC */);
}

static void g_io_uring(void)
{
	TRY("io_uring_setup", SYS_io_uring_setup, 0, NULL);
	TRY("io_uring_enter", SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0);
	/* not -1: newer kernels take that for a "blind" registration (EINVAL), 6.1 says EBADF */
	TRY("io_uring_register", SYS_io_uring_register, 0x7ffffff0, 0, NULL, 0);
}

static void g_namespaces(void)
{
	TRY("setns", SYS_setns, -1, 0);
}

static void g_handles(void)
{
	TRY("open_by_handle_at", SYS_open_by_handle_at, -1, NULL, 0);
}

/* no side effect either way: a NULL handle (EFAULT from the kernel); kcmp of our own fd 0 with
 * itself (0 from the kernel) */
static void g_handle_names(void)
{
	TRY("name_to_handle_at", SYS_name_to_handle_at, AT_FDCWD, ".", NULL, NULL, 0);
}

static void g_kcmp(void)
{
	TRY("kcmp", SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, 0, 0);
}

static void g_obsolete(void)
{
	TRY("uselib", SYS_uselib, NULL);
	TRY("vhangup", SYS_vhangup);
	TRY("sysfs", SYS_sysfs, 0, NULL);
}

static void g_userns(void)
{
	TRY("unshare", SYS_unshare, CLONE_NEWUSER);
	TRY("unshare-hi", SYS_unshare, CLONE_NEWUSER | (1ul << 40));
	TRY("clone", SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
	TRY("clone3", SYS_clone3, NULL, 0);
}

static void g_tty(void)
{
	TRY("TIOCSTI", SYS_ioctl, 0, TIOCSTI, "x");
	TRY("TIOCSTI-hi", SYS_ioctl, 0, TIOCSTI | (1ul << 32), "x");
	TRY("TIOCLINUX", SYS_ioctl, 0, TIOCLINUX, NULL);
}

static void g_personality(void)
{
	TRY("default", SYS_personality, PER_LINUX);
	TRY("ADDR_NO_RANDOMIZE", SYS_personality, ADDR_NO_RANDOMIZE);
	TRY("READ_IMPLIES_EXEC", SYS_personality, READ_IMPLIES_EXEC);
	TRY("MMAP_PAGE_ZERO", SYS_personality, MMAP_PAGE_ZERO);
	TRY("PER_LINUX32", SYS_personality, PER_LINUX32);
	TRY("UNAME26", SYS_personality, UNAME26);
	TRY("restore", SYS_personality, PER_LINUX);
}

static void g_sockets(void)
{
	TRY("AF_UNIX", SYS_socket, AF_UNIX, SOCK_STREAM, 0);
	TRY("AF_INET", SYS_socket, AF_INET, SOCK_STREAM, 0);
	TRY("AF_INET6", SYS_socket, AF_INET6, SOCK_STREAM, 0);
	TRY("AF_VSOCK", SYS_socket, AF_VSOCK, SOCK_STREAM, 0);
	TRY("AF_ALG", SYS_socket, AF_ALG, SOCK_SEQPACKET, 0);
	TRY("AF_PACKET", SYS_socket, AF_PACKET, SOCK_RAW, 0);
	TRY("AF_VSOCK-hi", SYS_socket, AF_VSOCK | (1ul << 32), SOCK_STREAM, 0);
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* one route, three modes: the setuid bit, the setgid bit, and none (the control) */
static void mode_route(const char *name, long (*fn)(const char *file, unsigned mode))
{
	static const struct {
		const char *suffix;
		unsigned mode;
	} modes[] = { { "suid", 04755 }, { "sgid", 02755 }, { "plain", 0755 } };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char label[64], file[80];

		snprintf(label, sizeof(label), "%s-%s", name, modes[i].suffix);
		snprintf(file, sizeof(file), "f-%s", label);
		close(open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)); /* for the chmod routes */
		report(label, fn(file, modes[i].mode));
	}
}

static long r_chmod(const char *f, unsigned m) { return syscall(SYS_chmod, f, m); }
static long r_fchmodat(const char *f, unsigned m) { return syscall(SYS_fchmodat, AT_FDCWD, f, m); }
static long r_fchmodat2(const char *f, unsigned m)
{
	return syscall(SYS_fchmodat2, AT_FDCWD, f, m, 0);
}
static long r_fchmod(const char *f, unsigned m)
{
	int fd = open(f, O_RDONLY | O_CLOEXEC);
	long r = syscall(SYS_fchmod, fd, m);

	close(fd);
	return r;
}
static long fresh(long fd) /* a route that makes a file: close what it opened */
{
	if (fd >= 0)
		close((int)fd);
	return fd;
}
static long r_creat(const char *f, unsigned m) { unlink(f); return fresh(syscall(SYS_creat, f, m)); }
static long r_open(const char *f, unsigned m)
{
	unlink(f);
	return fresh(syscall(SYS_open, f, O_CREAT | O_WRONLY | O_CLOEXEC, m));
}
static long r_openat(const char *f, unsigned m)
{
	unlink(f);
	return fresh(syscall(SYS_openat, AT_FDCWD, f, O_CREAT | O_WRONLY | O_CLOEXEC, m));
}
static long r_mknod(const char *f, unsigned m) { unlink(f); return syscall(SYS_mknod, f, S_IFREG | m, 0); }
static long r_mknodat(const char *f, unsigned m)
{
	unlink(f);
	return syscall(SYS_mknodat, AT_FDCWD, f, S_IFREG | m, 0);
}
static long r_openat2(const char *f, unsigned m)
{
	struct open_how how = { .flags = O_CREAT | O_WRONLY | O_CLOEXEC, .mode = m };

	unlink(f);
	return fresh(syscall(SYS_openat2, AT_FDCWD, f, &how, sizeof(how)));
}
/* an unnamed file with the mode, then given a name */
static long r_tmpfile(const char *f, unsigned m)
{
	char proc[64];
	long fd = syscall(SYS_openat, AT_FDCWD, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, m);
	long r;

	unlink(f);
	if (fd < 0)
		return fd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%ld", fd);
	r = linkat(AT_FDCWD, proc, AT_FDCWD, f, AT_SYMLINK_FOLLOW);
	close((int)fd);
	return r;
}

static void g_setuid(void)
{
	DIR *d;
	struct dirent *e;

	mode_route("chmod", r_chmod);
	mode_route("fchmod", r_fchmod);
	mode_route("fchmodat", r_fchmodat);
	mode_route("fchmodat2", r_fchmodat2);
	mode_route("creat", r_creat);
	mode_route("open", r_open);
	mode_route("openat", r_openat);
	mode_route("openat2", r_openat2);
	mode_route("tmpfile", r_tmpfile);
	mode_route("mknod", r_mknod);
	mode_route("mknodat", r_mknodat);
	TRY("io_uring_setup", SYS_io_uring_setup, 1, NULL);
	printf("left:");
	d = opendir(".");
	while (d && (e = readdir(d))) {
		struct stat st;

		if (lstat(e->d_name, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
			printf(" %s", e->d_name);
	}
	printf("\n");
	if (d)
		closedir(d);
}

/* the terminal ioctls that would outlive the run, on fd 0 (arguments that change nothing when
 * the call gets through are not possible for all: run it on a terminal of the test's own) */
static void g_tty_persist(void)
{
	int ldisc = 0; /* N_TTY: if it got through, the discipline is what it was */

	TRY("TIOCSETD", SYS_ioctl, 0, TIOCSETD, &ldisc);
	TRY("TIOCCONS", SYS_ioctl, 0, TIOCCONS);
	TRY("TIOCEXCL", SYS_ioctl, 0, TIOCEXCL);
	TRY("TIOCNXCL", SYS_ioctl, 0, TIOCNXCL);
	TRY("KDGKBMODE", SYS_ioctl, 0, 0x4B44, &ldisc);
	TRY("VT_GETSTATE", SYS_ioctl, 0, 0x5603, NULL);
	TRY("TIOCSETD-hi", SYS_ioctl, 0, TIOCSETD | (1ul << 32), &ldisc);
}

/* modify_ldt, memfd_secret, fanotify_init (default.policy) */
static void g_ldt(void)
{
	TRY("modify_ldt", SYS_modify_ldt, 0, NULL, 0);
	TRY("memfd_secret", 447 /* SYS_memfd_secret */, 0);
	TRY("fanotify_init", SYS_fanotify_init, 0, 0);
}

/* getpid through the i386 ABI (int 0x80): the filter kills the process */
static void g_abi_i386(void)
{
	long r;

	fflush(stdout);
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
	printf("i386 returned %ld\n", r);
}

/* getpid through the x32 ABI */
static void g_abi_x32(void)
{
	fflush(stdout);
	printf("x32 returned %ld\n", syscall(0x40000000 | SYS_getpid));
}

static const struct {
	const char *name;
	void (*fn)(void);
} groups[] = {
	{ "mount", g_mount },           { "keyring", g_keyring },
	{ "modules", g_modules },       { "kexec", g_kexec },
	{ "reboot", g_reboot },         { "swap", g_swap },
	{ "raw-io", g_raw_io },         { "clock", g_clock },
	{ "accounting", g_accounting }, { "debug", g_debug },
	{ "bpf", g_bpf },               { "userfaultfd", g_userfaultfd },
	{ "io-uring", g_io_uring },     { "namespaces", g_namespaces },
	{ "handles", g_handles },       { "obsolete", g_obsolete },
	{ "userns", g_userns },         { "tty", g_tty },
	{ "personality", g_personality }, { "sockets", g_sockets },
	{ "abi-i386", g_abi_i386 },     { "abi-x32", g_abi_x32 },
	{ "setuid", g_setuid },         { "tty-persist", g_tty_persist },
	{ "ldt", g_ldt },               { "handle-names", g_handle_names },
	{ "kcmp", g_kcmp },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		size_t g = 0;

		while (g < sizeof(groups) / sizeof(groups[0]) && strcmp(groups[g].name, argv[i]))
			g++;
		if (g == sizeof(groups) / sizeof(groups[0])) {
			fprintf(stderr, "sysprobe: unknown group %s\n", argv[i]);
			return 2;
		}
		groups[g].fn();
	}
	return 0;
}
