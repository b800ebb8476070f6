/* limits.h - the limits of what the API takes: one place that loomd's
 * checks and loomctl's read, so that the two never disagree. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_LIMITS_H
#define LOOM_CORE_LIMITS_H

/* A job request (POST /v1/jobs): each number from its MIN to its MAX. */
#define LOOM_JOB_NAME_MAX 256          /* characters of a job's name */
#define LOOM_JOB_COMMENT_MAX 1024      /* bytes of a job's comment */
#define LOOM_JOB_ARGS_MAX 4096         /* words of a command */
#define LOOM_JOB_ENV_MAX 1024          /* variables of env */
#define LOOM_JOB_FEATURES_MAX 64       /* features asked for */
#define LOOM_JOB_PRIORITY_MAX 1000000L /* and -LOOM_JOB_PRIORITY_MAX */
#define LOOM_JOB_NODES_MAX 100000L
#define LOOM_JOB_CPUS_MAX 100000L      /* per node */
/* Memory per node, in MiB. 0 would mean nothing the plan and the cluster
 * systems agree on (the plan: no memory; Slurm: the whole node), so the
 * least is 1. */
#define LOOM_JOB_MEMORY_MB_MIN 1L
#define LOOM_JOB_MEMORY_MB_MAX (1L << 40)
#define LOOM_JOB_MEMORY_MB_DEFAULT 100L
#define LOOM_JOB_GPUS_MAX 4096L        /* per node; the least is 0 */
#define LOOM_JOB_WALLTIME_MAX_S (366L * 86400)
#define LOOM_JOB_WALLTIME_DEFAULT_S 3600L

/* Job arrays ("array": "1-100:2%10"): task ids from 0 to INDEX_MAX, at most
 * TASKS_MAX tasks, the text at most SPEC_MAX characters. */
#define LOOM_ARRAY_INDEX_MAX 4000000L
#define LOOM_ARRAY_TASKS_MAX 1000000L
#define LOOM_ARRAY_SPEC_MAX 4096
/* Dependencies ("dependency": "afterok:12:13"): at most DEPS_MAX jobs
 * named, the text at most DEPEND_MAX characters. */
#define LOOM_JOB_DEPS_MAX 256
#define LOOM_JOB_DEPEND_MAX 4096

/* Reservations and maintenance windows. */
#define LOOM_WINDOW_MAX_S (366L * 86400) /* duration_s, and the default
                                            reach of a deadline */
#define LOOM_COUNT_MAX 100000L           /* "count" of nodes */

/* GET /v1/jobs paging. */
#define LOOM_LIST_LIMIT_MAX 100000L
#define LOOM_LIST_LIMIT_DEFAULT 10000L

#define LOOM_IDEM_KEY_MAX 255 /* characters of an Idempotency-Key */
#define LOOM_OFFSET_MAX (1LL << 50) /* ?offset= of a job's output */

/* Grid identities (WLCG common JWT profile): an issuer's URL and a
 * subject are at most 255 characters each; an identity is
 * "ISSUER,SUBJECT"; a group ("/atlas/production") at most 255. */
#define LOOM_GRID_ISSUER_MAX 255
#define LOOM_GRID_SUBJECT_MAX 255
#define LOOM_GRID_IDENTITY_MAX (LOOM_GRID_ISSUER_MAX + 1 + \
                                LOOM_GRID_SUBJECT_MAX)
#define LOOM_GRID_GROUP_MAX 255
#define LOOM_GRID_GROUPS_MAX 64 /* groups of one token kept */

#endif
