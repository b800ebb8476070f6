/* sched_native.c - jobs a cluster knows that Loom did not start, and Loom
 * jobs a cluster forgot. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "scheduler/sched_state.h"

#define REQUEUE_MAX 1

static struct job *native_find(const char *cluster, const char *native_id)
{
    char key[512];

    snprintf(key, sizeof(key), "%s\x1f%s", cluster, native_id);
    return sched_job((int64_t)(intptr_t)hmap_get(&S.native, key));
}

/* A new record for a job submitted to the cluster directly. */
static struct job *native_new(const char *cluster, const struct cl_job *c,
                              enum job_state st)
{
    struct job *j = calloc(1, sizeof(*j));
    int bad = 0;

    if (!j)
        return NULL;
    j->id = S.next_id++;
    j->state = st;
    j->req.nodes = c->nodes.n ? (int)c->nodes.n : 1;
    j->req.cpus_per_node = 1;
    bad |= job_set_str(&j->name, c->name ? c->name : c->native_id);
    bad |= job_set_str(&j->owner, c->owner ? c->owner : "?");
    bad |= job_set_str(&j->source, "cluster");
    bad |= job_set_str(&j->cluster, cluster);
    bad |= job_set_str(&j->native_id, c->native_id);
    j->submit_time = c->submit_time ? c->submit_time : time(NULL);
    j->dirty = 2;
    if (bad || sched_job_add(j) < 0 || sched_insert_later(j->id, NULL) < 0) {
        log_err("cluster=%s native job %s: out of memory", cluster,
                c->native_id);
        if (sched_job(j->id) != j)
            job_destroy(j);
        return NULL;
    }
    return j;
}

void sched_native_job(const char *cluster, const struct cl_job *c)
{
    struct job *j = native_find(cluster, c->native_id);
    enum job_state st;

    if (job_state_parse(c->state, &st) < 0 || (j && job_state_final(j->state)))
        return;
    if (!j && job_state_final(st) && !c->end_time)
        return; /* an old finished job we never saw running */
    if (!j && !(j = native_new(cluster, c, st)))
        return;
    strv_fini(&j->nodes);
    for (size_t i = 0; i < c->nodes.n; i++)
        strv_push(&j->nodes, c->nodes.v[i]);
    if (!j->start_time && c->start_time)
        j->start_time = c->start_time;
    if (job_state_final(st)) {
        sched_set_final(j, c, st);
    } else {
        j->state = st;
        job_set_str(&j->reason, c->reason);
    }
    if (j->dirty == 2)
        sched_view(j);
    else
        sched_touch(j);
}

/* Does the list hold j? Loom's own jobs by the Loom id they carry (a CMS
 * that forgot its jobs may give their ids to others), native ones by id. */
static int in_list(const struct cl_job_list *l, const struct job *j)
{
    int native = !strcmp(j->source, "cluster");

    for (size_t i = 0; i < l->n; i++)
        if (native ? (!l->v[i].loom_id && j->native_id &&
                      !strcmp(l->v[i].native_id, j->native_id))
                   : l->v[i].loom_id == j->id)
            return 1;
    return 0;
}

/* A complete list lacks j, which the cluster had acknowledged. */
static void forgotten(struct job *j)
{
    char why[256];

    if (!strcmp(j->source, "cluster")) {
        job_set_str(&j->reason, "no longer listed by the cluster; its exit "
                    "status is unknown");
        sched_set_final(j, NULL, JOB_COMPLETED);
    } else if (j->requeues < REQUEUE_MAX) {
        /* The cluster lost it (e.g. its controller restarted without the
         * state it had acknowledged): submit it again, once. */
        j->requeues++;
        snprintf(why, sizeof(why), "requeued: cluster %s no longer knows "
                 "job %s", j->cluster, j->native_id);
        log_warn("job=%lld %s", (long long)j->id, why);
        job_set_str(&j->native_id, NULL);
        sched_to_pending(j, why);
    } else {
        job_set_str(&j->reason, "lost: the cluster no longer knows the job, "
                    "and it was requeued once already");
        sched_set_final(j, NULL, JOB_FAILED);
    }
    sched_touch(j);
}

void sched_missing_jobs(const char *cluster, const struct cl_job_list *l)
{
    for (size_t i = 0; i < S.cap; i++) {
        struct job *j = S.jobs[i];
        /* Only jobs the cluster acknowledged (they have its id). */
        if (!j || j->dirty == 2 ||
            (!job_state_active(j->state) && j->state != JOB_PENDING &&
             j->state != JOB_HELD))
            continue;
        if (!j->cluster || !j->native_id || strcmp(j->cluster, cluster) ||
            in_list(l, j))
            continue;
        if (j->state == JOB_PENDING && strcmp(j->source, "cluster"))
            continue;
        forgotten(j);
    }
}
