/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* version.c - the library's version (meson's project version). */
#include "cordon.h"

const char *cordon_version(void)
{
	return CORDON_VERSION;
}
