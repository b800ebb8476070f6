/* template.h - the job template of libdrmaa: its attributes, by index. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_GRID_DRMAA_TEMPLATE_H
#define LOOM_GRID_DRMAA_TEMPLATE_H

#include "grid/drmaa/dr.h"

/* The scalar attributes a template holds. */
enum dr_attr {
    DR_REMOTE_COMMAND,
    DR_JS_STATE,
    DR_WD,
    DR_JOB_CATEGORY,
    DR_NATIVE_SPECIFICATION,
    DR_BLOCK_EMAIL,
    DR_START_TIME,
    DR_JOB_NAME,
    DR_INPUT_PATH,
    DR_OUTPUT_PATH,
    DR_ERROR_PATH,
    DR_JOIN_FILES,
    DR_WCT_HLIMIT,
    DR_N_SCALAR
};

/* The vector attributes. */
enum dr_vattr {
    DR_V_ARGV,
    DR_V_ENV,
    DR_V_EMAIL,
    DR_N_VECTOR
};

/* Values as the caller set them (NULL: unset), each checked when set. */
struct drmaa_job_template_s {
    char *scalar[DR_N_SCALAR];
    struct dr_strv vector[DR_N_VECTOR];
};

/* The error file of drmaa_join_files n without drmaa_error_path: its own,
 * beside the output file. */
#define DR_ERROR_FILE "loom-%j.err"

/* drmaa_wd, and drmaa_output_path or drmaa_error_path (their form and
 * placeholders; paths.c): 0, or -1 with e. */
int dr_wd_check(const char *name, const char *value, struct dr_error *e);
int dr_iopath_check(const char *name, const char *value, struct dr_error *e);
/* The template's paths as the request's workdir, output and error, into
 * body, for the bulk index (0: a single job). 0, or -1 with e. */
int dr_paths_apply(const drmaa_job_template_t *jt, int index, json_t *body,
                   struct dr_error *e);

/* "[[H:]M:]S" into seconds. 0, or -1 (not that form, or over 10^9 s). */
int dr_time_parse(const char *s, long long *seconds);

#endif
