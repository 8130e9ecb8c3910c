/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* files.h - envd's /files: downloads and uploads (files.c). */
#pragma once

#include "req.h"

enum MHD_Result srv_files_get(struct srv_req *r);
/* An upload: at its head (routes.c), its body then taken as it comes; its end answers it */
enum MHD_Result srv_files_post_begin(struct srv_req *r);
enum MHD_Result srv_files_post_end(struct srv_req *r);
