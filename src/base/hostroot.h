/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hostroot.h - whether the caller is the host's root, not merely uid 0 (hostroot.c). */
#pragma once

#include <stdbool.h>

/* uid 0 that is the host's root (the initial namespace, one that maps root to root, or a chain
 * of maps that leads back to root: the kernel's own root-owned inode shows as ours): the caller
 * that leases host ids, id-maps trees and owns /run/cordon. uid 0 of a user namespace that maps it
 * to another user (rootless podman runs its OCI runtime so) holds no privilege over the host, and
 * is treated as the unprivileged user it is. */
bool cd_host_root(void);
