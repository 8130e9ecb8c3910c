/* swap-shim.so (LD_PRELOAD, for workdir-swap): the first socketpair() call, which is the next
 * thing cordon_session_create() does once it has looked at the workdir, is preceded by the
 * renames CORDON_TEST_SWAP names ("A B C D": A to B, then C to D): an attacker's race, won
 * every time, between the caller's look at the workdir and the supervisor's. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

int socketpair(int domain, int type, int protocol, int sv[2])
{
	static int done;
	int (*real)(int, int, int, int *) = (int (*)(int, int, int, int *))dlsym(RTLD_NEXT, "socketpair");
	const char *swap = getenv("CORDON_TEST_SWAP");
	char a[1024], b[1024], c[1024], d[1024];

	if (!done++ && swap && sscanf(swap, "%1023s %1023s %1023s %1023s", a, b, c, d) == 4 &&
	    (rename(a, b) < 0 || rename(c, d) < 0))
		perror("swap-shim: rename");
	return real(domain, type, protocol, sv);
}
