/* cgroup.h - the local executor's cgroups: where loomd makes its jobs'
 * cgroups, what they can enforce here, and one job's cgroups. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_CGROUP_H
#define LOOM_ADAPTORS_CGROUP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/strv.h"

/*
 * At start, `loom-runas cgroups` makes a directory loom.jobs in loomd's own
 * cgroup of every hierarchy and gives it to loomd's account; loomd makes
 * its instance there, loom.jobs/<cluster>-<8 hex of a hash of state_dir>
 * (several loomd share a machine; the name is the same after a restart),
 * and one cgroup per job under it, <instance>/<loom id>, in each hierarchy
 * it uses. Per feature the best mechanism the machine offers is taken:
 *
 *   memory  v2 memory.max (+ memory.swap.max 0), else v1
 *           memory.limit_in_bytes (+ memory.memsw.limit_in_bytes)
 *   cpu     v2 cpu.max and cpu.weight, else v1 cpu.cfs_quota_us and
 *           cpu.shares: cpus x 100 ms per 100 ms, and a weight of cpus
 *   pids    v2 or v1 pids: counted; pids.max only when configured
 *   freeze  v2 cgroup.freeze, else v1 freezer.state
 *   kill    v2 cgroup.kill, else every pid of cgroup.procs signalled
 *           through `loom-runas signal` until none is left
 *   oom     v2 memory.events oom_kill, else v1 memory.oom_control oom_kill
 *
 * A v2 hierarchy without controllers still gives freeze, kill and the
 * list of a job's processes. Only a mix of v1 controllers and a bare v2
 * hierarchy was tried (see docs/internals/local-executor.md): a machine
 * with v2 controllers is handled by the same code paths, untested.
 * Without any usable hierarchy (or with `confine = no`), the cluster is
 * unconfined and says why; jobs then run in process groups only.
 */

enum cg_feature {
    CG_MEMORY,
    CG_CPU,
    CG_PIDS,
    CG_FREEZE,
    CG_KILL,
    CG_OOM,
    CG_PROCS, /* where a job's processes are listed (any hierarchy) */
    CG_N_FEATURES
};

struct cg_limits {
    long memory_mb; /* 0: none */
    int cpus;       /* 0: none */
    long pids_max;  /* 0: none */
};

struct cgroups;

/* One local cluster's cgroups, through the helper at runas. confine 0:
 * unconfined on purpose. Never NULL but when out of memory; a machine
 * without usable cgroups gives an unconfined object (see
 * cgroups_unconfined). At start-up; `loom-runas cgroups` runs once per
 * process, and every local cluster uses its answer. */
struct cgroups *cgroups_create(const char *runas, const char *instance,
                               int confine);
/* Removes the instance directories that hold no job. NULL-safe. */
void cgroups_destroy(struct cgroups *cg);

/* Why the cluster is unconfined, or NULL when it is confined. Borrowed. */
const char *cgroups_unconfined(const struct cgroups *cg);
/* What the cluster shows in /v1/clusters: {"memory": "v1", "freeze":
 * "v2", "pids": null, ...} (the cgroup version giving each feature, null
 * when none does), or NULL when unconfined. A new reference. */
json_t *cgroups_describe(const struct cgroups *cg);
/* "HIERARCHY PATH" lines of the instance directories jobs get cgroups in
 * (a new string; "" when unconfined), or NULL when out of memory. */
char *cgroups_instances(const struct cgroups *cg);
/* One line for the start-up log ("memory=v1 cpu=v1 ... freeze=v2"). */
void cgroups_summary(const struct cgroups *cg, char *buf, size_t size);

/* Make job id's cgroups and write its limits: their directories are
 * appended to dirs (for `loom-runas start`). An existing empty cgroup of
 * that id is used again. 0, or -1 with err (nothing left behind).
 * Unconfined: 0, no directory. */
int cgroups_job_make(struct cgroups *cg, int64_t id,
                     const struct cg_limits *lim, struct strv *dirs,
                     struct loom_error *err);
/* The path of a file of job id's cgroup in the hierarchy that gives
 * feature f (name "" for the directory itself), or -1 when none does. */
int cgroups_job_file(const struct cgroups *cg, int64_t id, enum cg_feature f,
                     const char *name, char *buf, size_t size);
/* The name of the file that counts out-of-memory kills ("memory.events" or
 * "memory.oom_control"), or NULL. Borrowed. */
const char *cgroups_oom_file(const struct cgroups *cg);
/* Freeze (on = 1) or thaw the job's cgroup; -1 with err when there is no
 * freezer or the write fails. */
int cgroups_job_freeze(struct cgroups *cg, int64_t id, int on,
                       struct loom_error *err);
/* Kill every process of the job's cgroup (its supervisor is gone):
 * cgroup.kill, or SIGKILL as account through loom-runas. 0 or -1. */
int cgroups_job_kill(struct cgroups *cg, int64_t id, const char *account,
                     struct loom_error *err);
/* sig to every process of the job's cgroup, as account through
 * loom-runas signal. 0 or -1. */
int cgroups_job_signal(struct cgroups *cg, int64_t id, const char *account,
                       int sig, struct loom_error *err);
/* The number of processes in the job's cgroup, or -1 (no cgroup). */
int cgroups_job_nprocs(const struct cgroups *cg, int64_t id);
/* The out-of-memory kills in the job's cgroup, or -1 when unknown. */
long cgroups_job_oom_kills(const struct cgroups *cg, int64_t id);
/* Remove the job's cgroups: 0 when none is left, -1 while one still holds
 * a process (try again later). */
int cgroups_job_remove(struct cgroups *cg, int64_t id);
/* Call fn for every job id that has a cgroup in the instance. */
void cgroups_job_each(const struct cgroups *cg,
                      void (*fn)(int64_t id, void *arg), void *arg);

#endif
