/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* version.c - the library's version (meson's project version) and its state directory. */
#include "cordon.h"
#include "marks.h"

const char *cordon_version(void)
{
	return CORDON_VERSION;
}

char *cordon_state_dir(void)
{
	return cd_marks_state_dir();
}
