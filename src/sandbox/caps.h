/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* caps.h - give up every privilege for good. Child side. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "cordon.h"

/* Become uid/gid (inside ids) with no supplementary groups where that is allowed, lock the
 * securebits, empty every capability set (effective, permitted, inheritable, ambient, bounding),
 * set no_new_privs, and verify all of it. Fails closed. */
int cd_caps_drop(uid_t uid, gid_t gid, bool clear_groups, struct cordon_error *err);
