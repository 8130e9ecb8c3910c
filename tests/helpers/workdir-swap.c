/* workdir-swap: a session made with CORDON_SESSION_REMOVE_WORKDIR on BASE/link/wd while
 * another user (the owner of BASE) swaps BASE/link between a directory and a symlink of its own
 * to VICTIM; then its supervisor dies without a result (SIGKILL: the OOM killer, an admin) and
 * the session is destroyed. t-session.sh runs it as root with swap-shim.so, which wins the race
 * every time: the swap back to the directory right after create's own look at the workdir.
 * Whatever create says, nothing of VICTIM may be removed (t-session.sh looks).
 * Usage: workdir-swap BASE VICTIM UID GID */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"

/* the supervisor: create's one child */
static pid_t child_of_ours(void)
{
	char path[64];
	FILE *f;
	int pid = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", getpid(), getpid());
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = -1;
		fclose(f);
	}
	return pid;
}

int main(int argc, char **argv)
{
	struct cordon_config *c;
	struct cordon_session *s = NULL;
	struct cordon_error err = { 0 };
	struct cordon_result res;
	char wd[4200], link[4096], real[4096];
	pid_t sup;

	if (argc != 5) {
		fprintf(stderr, "usage: workdir-swap BASE VICTIM UID GID\n");
		return 2;
	}
	snprintf(link, sizeof(link), "%s/link", argv[1]);
	snprintf(real, sizeof(real), "%s/real", argv[1]);
	snprintf(wd, sizeof(wd), "%s/wd", link);
	c = cordon_config_new();
	if (!c || cordon_config_set_workdir(c, wd, &err) < 0) {
		printf("set_workdir: %s\n", err.msg);
		return 1;
	}
	/* the other user: link becomes its symlink to the victim (swap-shim swaps it back) */
	if (rename(link, real) < 0 || symlink(argv[2], link) < 0 ||
	    lchown(link, (uid_t)atoi(argv[3]), (gid_t)atoi(argv[4])) < 0) {
		perror("workdir-swap: set-up");
		return 1;
	}
	if (cordon_session_create(c, CORDON_SESSION_REMOVE_WORKDIR, &s, &err) < 0) {
		printf("create refused: %s\n", err.msg);
		cordon_config_free(c);
		return 0;
	}
	cordon_config_free(c);
	sup = child_of_ours();
	if (sup > 0)
		kill(sup, SIGKILL);
	cordon_session_destroy(s, &res, &err);
	printf("created; supervisor %d killed; destroyed: %s\n", (int)sup, err.msg);
	return 0;
}
