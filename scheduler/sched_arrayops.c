/* sched_arrayops.c - what is asked of an array as a whole (cancel, hold,
 * release, change) and of one of its tasks (123_7): a task without a
 * record of its own gets one first, unless the question is only what it
 * shows. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/accounts.h"
#include "core/token.h"
#include "scheduler/sched_state.h"

/* What op's asker may see of j: 2 all, 1 all but its private fields, 0
 * nothing (as GET /v1/jobs/{id} decides, core/api/read.c). */
static int sees(const struct job *j, const struct sched_job_op *op)
{
    if (op->roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR))
        return 2;
    if (op->roles & (LOOM_ROLE_USER | LOOM_ROLE_GATEWAY)) {
        if (!strcmp(op->subject, j->owner) ||
            (j->submitted_by && !strcmp(op->subject, j->submitted_by)))
            return 2;
        return accounts_policy().private_data ? 0 : 1;
    }
    return 1;
}

/* Answer with json (taken), without its private span unless level is 2. */
static void answer(struct msg *m, char *json, const size_t priv[2],
                   int level)
{
    size_t len = json ? strlen(json) : 0;

    if (json && level < 2 && priv[0] + priv[1] <= len) {
        memmove(json + priv[0], json + priv[0] + priv[1],
                len - priv[0] - priv[1] + 1);
    }
    if (!json) {
        struct loom_error err;
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        reply_send_error(m->reply, &err);
        return;
    }
    reply_send(m->reply, 200, json);
}

/* GET /v1/jobs/A_T: the task's record, or (without one) the array's job
 * as that task. */
static int task_get(struct msg *m, struct job *a, long ord, long task,
                    struct sched_job_op *op, struct loom_error *err)
{
    const struct job_array *ar = a->array;
    struct job *t = (size_t)ord < ar->cap_rec && ar->rec[ord]
                        ? sched_job(ar->rec[ord]) : NULL;
    struct job v;
    size_t priv[2] = {0, 0};
    int level = sees(t ? t : a, op);

    if (!level)
        return loom_error_set(err, LOOM_ENOENT, "no job %lld_%ld",
                              (long long)a->id, task);
    if (t) {
        const struct jview *jv = t->view;
        priv[0] = jv->priv_off;
        priv[1] = jv->priv_len;
        answer(m, strdup(jv->json), priv, level);
        return 0;
    }
    v = *a; /* borrowed strings: only rendered */
    v.id = 0;
    v.array = NULL;
    v.array_id = a->id;
    v.array_task = task;
    v.state = ar->tasks_state;
    v.start_time = v.end_time = 0;
    answer(m, job_render(&v, priv), priv, level);
    return 0;
}

/* The whole array. */
static int whole(struct msg *m, struct job *a, struct sched_job_op *op,
                 struct loom_error *err)
{
    char why[160];
    int hold = !strcmp(op->op, "hold");

    if (!strcmp(op->op, "patch"))
        return sched_patch(m, a, op, err);
    if (!strcmp(op->op, "cancel")) {
        snprintf(why, sizeof(why), "cancelled by %s", op->subject);
        if (sched_array_cancel(a, why, err) < 0)
            return -1;
    } else if (hold || !strcmp(op->op, "release")) {
        snprintf(why, sizeof(why), "%s by %s", hold ? "held" : "released",
                 op->subject);
        if (sched_array_hold(a, hold, why, err) < 0)
            return -1;
    } else {
        return loom_error_set(err, LOOM_ECONFLICT, "job %lld is an array: "
                              "%s its tasks one by one (%lld_N)",
                              (long long)a->id, op->op, (long long)a->id);
    }
    sched_ack_later(m->reply, a->id, 200);
    return 0;
}

int sched_array_op(struct msg *m, struct job *a, struct sched_job_op *op,
                   struct loom_error *err)
{
    struct job_array *ar = a->array;
    long ord = -1;
    struct job *t;

    if (!sched_may_control(a, op) && sched_hidden_from(a, op)) {
        if (op->task < 0)
            return loom_error_set(err, LOOM_ENOENT, "no job %lld",
                                  (long long)a->id);
        return loom_error_set(err, LOOM_ENOENT, "no job %lld_%ld",
                              (long long)a->id, op->task);
    }
    if (!ar)
        return loom_error_set(err, LOOM_ENOENT, "no job %lld_%ld: job %lld "
                              "is not an array", (long long)a->id, op->task,
                              (long long)a->id);
    if (op->task >= 0 &&
        (ord = array_spec_ord(&ar->spec, op->task)) < 0)
        return loom_error_set(err, LOOM_ENOENT, "no job %lld_%ld: array "
                              "%lld has no task %ld", (long long)a->id,
                              op->task, (long long)a->id, op->task);
    if (!strcmp(op->op, "get") && op->task >= 0)
        return task_get(m, a, ord, op->task, op, err);
    if (!sched_may_control(a, op))
        return loom_error_set(err, LOOM_EPERM, "job %lld belongs to %s",
                              (long long)a->id, a->owner);
    if (op->task < 0)
        return whole(m, a, op, err);
    t = (size_t)ord < ar->cap_rec && ar->rec[ord] ? sched_job(ar->rec[ord])
                                                  : NULL;
    if (!t && ar->tasks_state == JOB_CANCELLED)
        return loom_error_set(err, LOOM_ECONFLICT, "job %lld_%ld is "
                              "cancelled already", (long long)a->id,
                              op->task);
    if (!t && (!strcmp(op->op, "suspend") || !strcmp(op->op, "resume")))
        return loom_error_set(err, LOOM_ECONFLICT, "job %lld_%ld is %s: "
                              "only a %s job can be %s", (long long)a->id,
                              op->task, job_state_name(ar->tasks_state),
                              op->op[0] == 's' ? "running" : "suspended",
                              op->op[0] == 's' ? "suspended" : "resumed");
    if (!t && !(t = sched_array_split(a, ord)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return sched_job_op_one(m, t, op, err);
}
