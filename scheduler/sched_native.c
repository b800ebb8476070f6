/* sched_native.c - jobs a cluster knows that Loom did not start, and Loom
 * jobs a cluster forgot. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "scheduler/sched_state.h"

#define REQUEUE_MAX 1

/* The native job's record; NULL when there is none. *gone (when not
 * NULL) tells whether it ended and left memory. */
static struct job *native_find(const char *cluster, const char *native_id,
                               int *gone)
{
    char key[512];
    int64_t id;
    enum job_state st;

    sched_native_key(cluster, native_id, key, sizeof(key));
    id = (int64_t)(intptr_t)hmap_get(&S.native, key);
    if (gone)
        *gone = id && sched_gone(id, &st, NULL, NULL);
    return sched_job(id);
}

/* A new record for a job submitted to the cluster directly. */
static struct job *native_new(const char *cluster, const struct cl_job *c,
                              enum job_state st, int held_for_loom)
{
    struct job *j = calloc(1, sizeof(*j));
    int bad = 0;

    if (!j)
        return NULL;
    j->id = S.next_id++;
    j->state = st;
    j->held_for_loom = held_for_loom;
    j->req.nodes = c->req.nodes ? c->req.nodes
                                : c->nodes.n ? (int)c->nodes.n : 1;
    j->req.cpus_per_node = c->req.cpus_per_node ? c->req.cpus_per_node : 1;
    j->req.memory_mb = c->req.memory_mb;
    j->req.gpus = c->req.gpus;
    j->req.walltime_s = c->req.walltime_s ? c->req.walltime_s : 3600;
    if (held_for_loom) /* it can only run where it was submitted */
        bad |= job_set_str(&j->req.cluster, cluster);
    bad |= job_set_str(&j->name, c->name ? c->name : c->native_id);
    bad |= job_set_str(&j->owner, c->owner ? c->owner : "?");
    /* the cluster runs it as the user it names */
    bad |= job_set_str(&j->account, c->owner);
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

static int holds_for_loom(const char *cluster)
{
    struct snapshot *s = snapshot_get();
    const struct scluster *c = snapshot_cluster(s, cluster);
    int yes = c && c->hold_for_loom;

    snapshot_put(s);
    return yes;
}

/* A native job its cluster holds for Loom: pending in Loom's queue until
 * Loom starts it (the cluster then releases it onto the chosen nodes). */
static void held_for_loom(const char *cluster, const struct cl_job *c)
{
    struct job *j = native_new(cluster, c, JOB_PENDING, 1);
    char why[160];

    if (!j)
        return;
    snprintf(why, sizeof(why), "held in cluster %s for Loom to schedule",
             cluster);
    job_set_str(&j->reason, why);
    sched_view(j); /* queued once it is committed */
    log_info("job=%lld cluster=%s native job %s held for Loom: scheduled "
             "like Loom's own", (long long)j->id, cluster, c->native_id);
}

void sched_native_job(const char *cluster, const struct cl_job *c)
{
    int gone;
    struct job *j = native_find(cluster, c->native_id, &gone);
    enum job_state st;

    if (job_state_parse(c->state, &st) < 0 || gone ||
        (j && job_state_final(j->state)))
        return;
    if (!j && job_state_final(st) && !c->end_time)
        return; /* an old finished job we never saw running */
    if (!j && st == JOB_HELD && holds_for_loom(cluster)) {
        held_for_loom(cluster, c);
        return;
    }
    if (j && j->held_for_loom) {
        if (st == JOB_HELD)
            return; /* Loom's to start; or started and not yet released */
        if (st == JOB_PENDING)
            st = JOB_STARTING; /* released: queued in the cluster */
        if (!job_state_final(st) && st == j->state)
            return;
    }
    if (!j && !(j = native_new(cluster, c, st, 0)))
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

/* Stamp the jobs the list names: Loom's own by the Loom id they carry (a
 * CMS that forgot its jobs may give their ids to others), native ones by
 * their cluster id. The ended submission before a requeue, which carries
 * the same Loom id, does not stamp the job: the new one may be lost. */
static void stamp_listed(const char *cluster, const struct cl_job_list *l)
{
    S.list_gen++;
    for (size_t i = 0; i < l->n; i++) {
        const struct cl_job *c = &l->v[i];
        struct job *j = c->loom_id > 0
                            ? sched_job(c->loom_id)
                            : native_find(cluster, c->native_id, NULL);
        if (!j || (c->loom_id > 0) != !!strcmp(j->source, "cluster"))
            continue;
        if (c->loom_id > 0 && sched_old_submission(j, c))
            continue;
        j->seen = S.list_gen;
    }
}

int sched_requeue_lost(struct job *j, const char *how)
{
    char subject[32], why[320];

    if (j->no_requeue || j->requeues >= REQUEUE_MAX)
        return 0;
    j->requeues++;
    snprintf(subject, sizeof(subject), "job %lld", (long long)j->id);
    snprintf(why, sizeof(why), "requeued: cluster %s %s", j->cluster, how);
    sched_event("warn", "job", subject, "%s", why);
    job_set_str(&j->native_id, NULL);
    sched_to_pending(j, why);
    return 1;
}

/* A complete list lacks j, which the cluster had acknowledged. */
static void forgotten(struct job *j)
{
    char how[256];

    snprintf(how, sizeof(how), "no longer knows job %s", j->native_id);
    if (!strcmp(j->source, "cluster")) {
        job_set_str(&j->reason, "no longer listed by the cluster; its exit "
                    "status is unknown");
        sched_set_final(j, NULL, JOB_COMPLETED);
    } else if (j->no_requeue) {
        job_set_str(&j->reason, "lost: the cluster no longer knows the job, "
                    "which is not to be requeued (requeue false)");
        sched_set_final(j, NULL, JOB_FAILED);
    } else if (!sched_requeue_lost(j, how)) {
        job_set_str(&j->reason, "lost: the cluster no longer knows the job, "
                    "and it was requeued once already");
        sched_set_final(j, NULL, JOB_FAILED);
    }
    sched_touch(j);
}

void sched_missing_jobs(const char *cluster, const struct cl_job_list *l)
{
    size_t keep = 0;

    stamp_listed(cluster, l);
    for (size_t i = 0; i < S.n_live; i++) {
        struct job *j = sched_job(S.live[i]);
        if (!j || job_state_final(j->state))
            continue; /* ended: leaves the live list */
        S.live[keep++] = j->id;
        /* Only jobs the cluster acknowledged (they have its id). */
        if (j->dirty == 2 ||
            (!job_state_active(j->state) && j->state != JOB_PENDING &&
             j->state != JOB_HELD))
            continue;
        if (!j->cluster || !j->native_id || strcmp(j->cluster, cluster) ||
            j->seen == S.list_gen)
            continue;
        if (j->state == JOB_PENDING && strcmp(j->source, "cluster"))
            continue;
        forgotten(j);
    }
    S.n_live = keep;
}
