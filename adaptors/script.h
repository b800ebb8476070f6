/* script.h - the script adaptor's parts shared by its files. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_SCRIPT_H
#define LOOM_ADAPTORS_SCRIPT_H

#include <jansson.h>

#include "adaptors/adaptor.h"

/* Turn a pack's answers into adaptor lists. Each fills an empty list (the
 * caller owns it) or fails with LOOM_ETEMP naming the item and field. */
int script_parse_nodes(json_t *answer, struct cl_node_list *out,
                       struct loom_error *err);
int script_parse_jobs(json_t *answer, struct cl_job_list *out,
                      int *complete, struct loom_error *err);
int script_parse_queues(json_t *answer, struct cl_queue_list *out,
                        struct loom_error *err);

/* The job file a pack submits: the script (or the command's words, each
 * quoted) with the job's env exported after the #! line. New string. */
char *script_job_file(const struct start_req *req);

#endif
