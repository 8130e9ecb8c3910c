/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* terminal.c - the controlling terminal, lent and given back (terminal.h). Supervisor. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "terminal.h"
#include "util.h"

/* tcsetpgrp and tcsetattr from a background process group raise SIGTTOU unless it is blocked,
 * as a shell blocks it */
static void ttou(bool block, sigset_t *old)
{
	sigset_t set;

	if (!block) {
		pthread_sigmask(SIG_SETMASK, old, NULL);
		return;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* A window size set inside (TIOCSWINSZ on the terminal: stty cols, resize) would outlive the
 * run in every program of the caller's that reads it. The kernel cannot tell it from a resize of
 * the window itself during the run: that one is undone too, until the terminal's next resize. */
static void restore_size(const struct cd_terminal *t)
{
	struct winsize now;

	if (t->have_size && ioctl(t->fd, TIOCGWINSZ, &now) == 0 &&
	    (now.ws_row != t->size.ws_row || now.ws_col != t->size.ws_col ||
	     now.ws_xpixel != t->size.ws_xpixel || now.ws_ypixel != t->size.ws_ypixel))
		(void)ioctl(t->fd, TIOCSWINSZ, &t->size);
}

void cd_terminal_open(struct cd_terminal *t)
{
	*t = (struct cd_terminal){ .fd = -1 };
	t->fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (t->fd < 0)
		return;
	t->have_modes = tcgetattr(t->fd, &t->modes) == 0;
	t->have_size = ioctl(t->fd, TIOCGWINSZ, &t->size) == 0;
	t->fg = tcgetpgrp(t->fd);
	t->lent = t->fg == getpgrp();
}

bool cd_terminal_ours(const struct cd_terminal *t)
{
	return t->fd >= 0 && tcgetpgrp(t->fd) == getpgrp();
}

void cd_terminal_reclaim(struct cd_terminal *t)
{
	sigset_t old;

	if (t->fd < 0 || !t->lent)
		return;
	ttou(true, &old);
	tcsetpgrp(t->fd, getpgrp());
	ttou(false, &old);
	t->lent = false;
}

void cd_terminal_restore(struct cd_terminal *t)
{
	pid_t cur, target = 0;
	sigset_t old;

	if (t->fd < 0)
		return;
	ttou(true, &old);
	if (t->have_modes)
		tcsetattr(t->fd, TCSANOW, &t->modes);
	restore_size(t);
	tcflow(t->fd, TCOON); /* output stopped inside (TCOOFF) would stay stopped */
	cur = tcgetpgrp(t->fd);
	if (t->lent)
		target = getpgrp();
	/* the sandbox took the foreground while we were in the background: every process of it is
	 * gone now; give it back to whoever had it, unless somebody else took it since */
	else if (cur > 0 && cur != t->fg && t->fg > 0 && kill(-cur, 0) < 0 && errno == ESRCH)
		target = t->fg;
	if (target && target != cur)
		tcsetpgrp(t->fd, target);
	ttou(false, &old);
	t->fd = cd_safe_close(t->fd);
}
