/* getppid N [ioctl]: ns per getppid() system call over N calls (the best of 5 rounds); with
 * "ioctl", per ioctl(-1, FIONREAD) instead: a call whose rules test arguments, so the kernel's
 * seccomp action cache cannot skip the BPF program. */
#include <sys/ioctl.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	int ioc = argc > 2 && strcmp(argv[2], "ioctl") == 0;
	double best = 1e18;

	for (int round = 0; round < 5; round++) {
		double t0 = now_ns();

		for (long i = 0; i < n; i++)
			if (ioc)
				syscall(SYS_ioctl, -1, FIONREAD, 0);
			else
				syscall(SYS_getppid);
		double per = (now_ns() - t0) / (double)n;
		if (per < best)
			best = per;
	}
	printf("%.1f\n", best);
	return 0;
}
