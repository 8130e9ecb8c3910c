/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* envd_fs.h - envd's filesystem service (envd_fs.c). */
#pragma once

#include "req.h"

/* The filesystem service's RPCs (routes.c: /filesystem.Filesystem/<name>) */
enum MHD_Result srv_fs_stat(struct srv_req *r);
enum MHD_Result srv_fs_list_dir(struct srv_req *r);
enum MHD_Result srv_fs_make_dir(struct srv_req *r);
enum MHD_Result srv_fs_move(struct srv_req *r);
enum MHD_Result srv_fs_remove(struct srv_req *r);
