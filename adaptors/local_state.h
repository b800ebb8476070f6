/* local_state.h - the local adaptor's instance; private to local*.c. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_LOCAL_STATE_H
#define LOOM_ADAPTORS_LOCAL_STATE_H

#include <limits.h>
#include <stdint.h>

#include "adaptors/adaptor.h"
#include "adaptors/local_job.h"

enum admin { A_UP, A_DRAIN, A_DOWN };
extern const char *const local_admin_names[];

struct lnode {
    enum admin admin;
    char *reason;
    int cpus_alloc, gpus_alloc;
    long mem_alloc;
};

struct local {
    char *name;     /* the cluster */
    char *dir;      /* state_dir/clusters/<cluster> */
    char *jobs_dir; /* dir/jobs */
    char *runas;    /* libexec_dir/loom-runas (beside it loom-supervise) */
    struct local_ctx ctx; /* what its jobs borrow */
    int n_nodes, cpus, gpus;
    long memory_mb;
    struct strv features;
    struct lnode *nodes;
    struct local_job **jobs; /* running, and ended but not yet reported */
    size_t n_jobs, cap_jobs;
    int64_t *cg_left; /* ended jobs whose cgroups still wait for removal */
    size_t n_cg_left, cap_cg_left;
    int listed; /* jobs() was called: later calls list changes only */
};

/* local.c */
int local_oom(struct loom_error *err);
/* A positive decimal and nothing else (a native id, a node number), or -1. */
int64_t local_parse_id(const char *s);
/* "n1".."nN" to 0..N-1, or -1. */
int local_node_index(const struct local *l, const char *name);
/* The job of that id from memory, or else from its directory (1), or 0
 * when it never started; -1. */
int local_job_get_id(struct local *l, int64_t id, struct local_job **out,
                     struct loom_error *err);

/* local_setup.c: what create() and destroy() do beyond the bookkeeping. */
/* Config, paths, cgroups, node states and the jobs of the directories. */
int local_setup(struct local *l, struct conf_section *sec,
                const struct adaptor_env *env, struct loom_error *err);
void local_teardown(struct local *l);
int local_nodes_save(struct local *l, struct loom_error *err);
/* Remember that id's cgroups are to be removed (again at each poll). */
void local_cg_left_add(struct local *l, int64_t id);
/* Try again to remove the cgroups of ended jobs. */
void local_cg_left_retry(struct local *l);
/* adaptor describe(): confinement for /v1/clusters. */
void local_describe(void *self, struct adaptor_desc *d);

#endif
