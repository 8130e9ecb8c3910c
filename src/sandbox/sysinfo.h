/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysinfo.h - why the host refuses what cordon needs, in words a user can act on. */
#pragma once

/* When user namespaces are disabled or restricted on this host: what to change, else NULL.
 * Reads the sysctls below /proc/sys; call it while the host's /proc is visible. */
const char *cd_sysinfo_userns_hint(void);
