/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * terminal.h - the caller's controlling terminal, lent to the command and given back as it
 * was. Supervisor side.
 *
 * The command runs in a process group of its own (no signal it sends to its group reaches the
 * caller's processes), so cordon moves the terminal's foreground to it when the caller had it,
 * follows it when it is stopped (Ctrl-Z: the terminal back, then cordon stops itself, as a
 * shell job does) and continued, and at the end puts back what the command may have changed:
 * the modes (termios), the window size, flow control, and the foreground process group.
 */
#pragma once

#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

struct cd_terminal {
	int fd;              /* /dev/tty, the controlling terminal; -1: none */
	bool have_modes;
	struct termios modes; /* as they were at the start */
	bool have_size;
	struct winsize size; /* the window size at the start (TIOCSWINSZ inside changes it) */
	pid_t fg;            /* the foreground process group at the start */
	bool lent;           /* the command has the foreground, which was ours */
};

/* Open the controlling terminal, if any (no error: without one there is nothing to do). */
void cd_terminal_open(struct cd_terminal *t);
/* Is our process group its foreground? */
bool cd_terminal_ours(const struct cd_terminal *t);
/* The foreground back to our process group (the command stopped). */
void cd_terminal_reclaim(struct cd_terminal *t);
/* Modes, window size, flow control and foreground as at the start (or ours, if we lent it);
 * closes. */
void cd_terminal_restore(struct cd_terminal *t);
