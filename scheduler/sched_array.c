/* sched_array.c - job arrays in the scheduler: an array is one record
 * that stands for its tasks until each gets a record of its own (when it
 * starts, or is held, cancelled or changed by itself); what its tasks do
 * is counted as they change, and its state follows from the counts. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/vec.h"
#include "scheduler/sched_state.h"

void sched_array_added(struct job *a)
{
    if (a->array->spec.limit && !a->array->limit_ix)
        a->array->limit_ix = sched_acct_array(a->id, a->array->spec.limit);
}

long sched_array_next(const struct job *a)
{
    const struct job_array *ar = a->array;

    return ar->next < ar->spec.tasks ? ar->next : -1;
}

/* Ordinal ord has a record now (id). 0, or -1 when out of memory. */
static int mark(struct job_array *ar, long ord, int64_t id)
{
    size_t k;

    if (vec_grow((void **)&ar->rec, &ar->cap_rec, (size_t)ord + 1,
                 sizeof(*ar->rec), 64) < 0)
        return -1;
    if (ord != ar->next) { /* out of order: kept in ooo, sorted */
        if (vec_grow((void **)&ar->ooo, &ar->cap_ooo, ar->n_ooo + 1,
                     sizeof(*ar->ooo), 8) < 0)
            return -1;
        for (k = ar->n_ooo; k > 0 && ar->ooo[k - 1] > ord; k--)
            ar->ooo[k] = ar->ooo[k - 1];
        ar->ooo[k] = ord;
        ar->n_ooo++;
    } else {
        ar->next++;
        for (k = 0; k < ar->n_ooo && ar->ooo[k] == ar->next; k++)
            ar->next++;
        if (k) {
            memmove(ar->ooo, ar->ooo + k,
                    (ar->n_ooo - k) * sizeof(*ar->ooo));
            ar->n_ooo -= k;
        }
    }
    ar->rec[ord] = id;
    ar->n_split++;
    return 0;
}

/* Ordinal ord has no record again. */
static void unmark(struct job_array *ar, long ord)
{
    size_t k = 0;

    if ((size_t)ord >= ar->cap_rec || !ar->rec[ord])
        return;
    ar->rec[ord] = 0;
    ar->n_split--;
    if (ord >= ar->next) { /* out of order: leaves ooo */
        while (k < ar->n_ooo && ar->ooo[k] != ord)
            k++;
        if (k < ar->n_ooo)
            memmove(ar->ooo + k, ar->ooo + k + 1,
                    (ar->n_ooo - k - 1) * sizeof(*ar->ooo));
        ar->n_ooo -= k < ar->n_ooo;
        return;
    }
    /* before next: the ones after it up to next go to ooo, in front */
    if (vec_grow((void **)&ar->ooo, &ar->cap_ooo,
                 ar->n_ooo + (size_t)(ar->next - ord - 1),
                 sizeof(*ar->ooo), 8) < 0) {
        log_err("out of memory: an array's tasks are miscounted");
        return;
    }
    if (ar->n_ooo)
        memmove(ar->ooo + (ar->next - ord - 1), ar->ooo,
                ar->n_ooo * sizeof(*ar->ooo));
    for (long o = ord + 1; o < ar->next; o++)
        ar->ooo[o - ord - 1] = o;
    ar->n_ooo += (size_t)(ar->next - ord - 1);
    ar->next = ord;
}

static int copy_strv(struct strv *dst, const struct strv *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (strv_push(dst, src->v[i]) < 0)
            return -1;
    return 0;
}

/* The task's record: its array's job, as a job of its own. */
static struct job *task_of(const struct job *a, long ord)
{
    struct job *t = calloc(1, sizeof(*t));
    int bad = 0;

    if (!t)
        return NULL;
    bad |= job_set_str(&t->name, a->name);
    bad |= job_set_str(&t->comment, a->comment);
    bad |= job_set_str(&t->owner, a->owner);
    bad |= job_set_str(&t->account, a->account);
    bad |= copy_strv(&t->cluster_accounts, &a->cluster_accounts);
    bad |= job_set_str(&t->source, a->source);
    bad |= job_set_str(&t->submitted_by, a->submitted_by);
    bad |= job_set_str(&t->grid_issuer, a->grid_issuer);
    bad |= job_set_str(&t->grid_subject, a->grid_subject);
    bad |= job_set_str(&t->vo, a->vo);
    bad |= job_request_copy(&t->req, &a->req);
    bad |= copy_strv(&t->command, &a->command);
    bad |= job_set_str(&t->script, a->script);
    bad |= copy_strv(&t->env, &a->env);
    bad |= job_set_str(&t->workdir, a->workdir);
    bad |= job_set_str(&t->output, a->output);
    bad |= job_set_str(&t->error, a->error);
    bad |= job_set_str(&t->directives, a->directives);
    bad |= dep_list_copy(&t->deps, &a->deps);
    t->priority = a->priority;
    t->no_requeue = a->no_requeue;
    t->submit_time = a->submit_time;
    t->staff = a->staff;
    t->dep_wait = a->dep_wait;
    t->array_id = a->id;
    t->array_task = array_spec_task(&a->array->spec, ord);
    t->arr_ix = a->array->limit_ix;
    if (a->array->tasks_state == JOB_HELD) {
        t->state = JOB_HELD;
        bad |= job_set_str(&t->reason, a->reason);
    } else {
        t->state = JOB_PENDING;
        bad |= job_set_str(&t->reason, a->dep_wait ? a->reason : NULL);
    }
    if (bad) {
        job_destroy(t);
        return NULL;
    }
    return t;
}

struct job *sched_array_split(struct job *a, long ord)
{
    struct job *t = task_of(a, ord);

    if (!t)
        goto oom;
    t->id = S.next_id++;
    t->dirty = 2; /* inserted with the turn, like a submit */
    if (mark(a->array, ord, t->id) < 0)
        goto oom;
    if (sched_job_add(t) < 0) {
        unmark(a->array, ord);
        goto oom;
    }
    if (sched_insert_later(t->id, NULL) < 0) {
        sched_forget(t); /* which unmarks it */
        t = NULL;
        goto oom;
    }
    log_info("job=%lld task %lld_%ld has record %lld", (long long)a->id,
             (long long)a->id, t->array_task, (long long)t->id);
    sched_array_view_later(a);
    return t;
oom:
    log_err("job=%lld: out of memory making a record for a task",
            (long long)a->id);
    job_destroy(t);
    return NULL;
}

/* The array of task t and its ordinal there, or NULL. */
static struct job *array_of(const struct job *t, long *ord)
{
    struct job *a = sched_job(t->array_id);

    if (!a || !a->array)
        return NULL;
    *ord = array_spec_ord(&a->array->spec, t->array_task);
    return *ord < 0 ? NULL : a;
}

void sched_array_unsplit(struct job *t)
{
    long ord;
    struct job *a = array_of(t, &ord);

    if (!a)
        return;
    t->state = JOB_CANCELLED; /* counted as nothing from now on */
    if (t->task_class) {
        a->array->count[t->task_class]--;
        t->task_class = TC_NONE;
    }
    unmark(a->array, ord);
    sched_array_view_later(a);
}

void sched_array_link(struct job *t)
{
    long ord;
    struct job *a = array_of(t, &ord);

    if (!a) {
        log_err("job=%lld: task %lld_%ld of no array that has it",
                (long long)t->id, (long long)t->array_id, t->array_task);
        return;
    }
    t->arr_ix = a->array->limit_ix;
    if ((size_t)ord < a->array->cap_rec && a->array->rec[ord])
        log_err("job=%lld: task %lld_%ld has a record already (%lld)",
                (long long)t->id, (long long)t->array_id, t->array_task,
                (long long)a->array->rec[ord]);
    else if (mark(a->array, ord, t->id) < 0)
        log_err("job=%lld: out of memory linking it to its array",
                (long long)t->id);
    sched_array_task_note(t);
    sched_array_view_later(a);
}

enum job_state sched_array_state(const struct job *a)
{
    const struct job_array *ar = a->array;
    long unsplit = ar->spec.tasks - ar->n_split;

    if (unsplit && ar->tasks_state != JOB_CANCELLED)
        return ar->tasks_state;
    if (ar->count[TC_ACTIVE])
        return JOB_RUNNING;
    if (ar->count[TC_WAITING])
        return JOB_PENDING;
    if (ar->count[TC_FAILED])
        return JOB_FAILED;
    if (ar->count[TC_CANCELLED] || unsplit)
        return JOB_CANCELLED;
    return JOB_COMPLETED;
}

/* The array's state from its counts; written when it changes (a restart
 * counts again, but the record then says it). */
static void settle(struct job *a)
{
    enum job_state st = sched_array_state(a);

    if (st == a->state)
        return;
    if (job_state_active(st) && !a->start_time)
        a->start_time = time(NULL);
    if (job_state_final(st) && !a->end_time)
        a->end_time = time(NULL);
    a->state = st;
    if (st != JOB_PENDING && st != JOB_HELD) { /* nothing of it waits */
        job_plan_drop(a);
        if (a->reason && (!strncmp(a->reason, "waiting", 7) ||
                          !strncmp(a->reason, "array ", 6)))
            job_set_str(&a->reason, NULL); /* what a cycle said */
    }
    sched_touch_lazy(a);
}

void sched_array_task_note(struct job *t)
{
    enum task_class c = job_task_class(t);
    long ord;
    struct job *a;

    if (c == t->task_class || !(a = array_of(t, &ord)))
        return;
    if (t->task_class)
        a->array->count[t->task_class]--;
    a->array->count[c]++;
    t->task_class = (uint8_t)c;
    sched_array_view_later(a);
}

void sched_array_view_later(struct job *a)
{
    if (a->array->stale)
        return;
    if (sched_grow((void **)&S.arr_stale, &S.cap_arr_stale,
                   S.n_arr_stale + 1, sizeof(*S.arr_stale)) < 0) {
        settle(a);
        sched_view(a);
        return;
    }
    a->array->stale = 1;
    S.arr_stale[S.n_arr_stale++] = a->id;
}

void sched_array_views_flush(void)
{
    for (size_t i = 0; i < S.n_arr_stale; i++) {
        struct job *a = sched_job(S.arr_stale[i]);
        if (!a || !a->array)
            continue;
        a->array->stale = 0;
        settle(a);
        sched_view(a);
        sched_depend_note(a);
        /* tasks it stands for again (a record's insert failed); not
         * before its own insert is committed */
        if (a->dirty != 2 && job_ready(a) &&
            !(S.jf[a->id - 1] & JF_QUEUED))
            sched_pending_push(a->id);
    }
    S.n_arr_stale = 0;
}

void sched_array_each(struct job *a, void (*fn)(struct job *t, void *arg),
                      void *arg)
{
    const struct job_array *ar = a->array;

    for (size_t o = 0; o < ar->cap_rec; o++) {
        struct job *t = ar->rec[o] ? sched_job(ar->rec[o]) : NULL;
        if (t)
            fn(t, arg);
    }
}

static void cancel_task(struct job *t, void *why)
{
    if (!job_state_final(t->state))
        sched_cancel_job(t, why);
}

int sched_array_cancel(struct job *a, const char *why, struct loom_error *err)
{
    if (job_state_final(a->state))
        return loom_error_set(err, LOOM_ECONFLICT, "job %lld is %s already",
                              (long long)a->id, job_state_name(a->state));
    a->array->tasks_state = JOB_CANCELLED;
    job_set_str(&a->reason, why);
    sched_array_each(a, cancel_task, (void *)why);
    settle(a);
    sched_touch(a);
    return 0;
}

struct hold_arg {
    int hold, n;
    const char *why;
};

static void hold_task(struct job *t, void *arg)
{
    struct hold_arg *h = arg;

    if (t->state != (h->hold ? JOB_PENDING : JOB_HELD) ||
        (!h->hold && t->native_id))
        return; /* running, ended, or queued in its cluster */
    t->state = h->hold ? JOB_HELD : JOB_PENDING;
    job_set_str(&t->reason, h->why);
    if (!h->hold) {
        sched_pending_push(t->id);
        sched_depend_eval(t);
    }
    sched_touch(t);
    h->n++;
}

int sched_array_hold(struct job *a, int hold, const char *why,
                     struct loom_error *err)
{
    struct job_array *ar = a->array;
    enum job_state from = hold ? JOB_PENDING : JOB_HELD;
    struct hold_arg h = {hold, 0, why};
    int rest = ar->tasks_state == from && ar->n_split < ar->spec.tasks;

    sched_array_each(a, hold_task, &h);
    if (!rest && !h.n)
        return loom_error_set(err, LOOM_ECONFLICT, "job %lld has no %s task: "
                              "only a %s task can be %s", (long long)a->id,
                              hold ? "pending" : "held",
                              hold ? "pending" : "held",
                              hold ? "held" : "released");
    if (rest) {
        ar->tasks_state = hold ? JOB_HELD : JOB_PENDING;
        job_set_str(&a->reason, why);
        settle(a);
        if (!hold) {
            sched_pending_push(a->id);
            sched_depend_eval(a);
        }
    }
    sched_touch(a);
    return 0;
}

/* "NAME=value" into env. */
static int put(struct strv *env, const char *name, long v)
{
    char kv[96];

    snprintf(kv, sizeof(kv), "%s=%ld", name, v);
    return strv_push(env, kv);
}

int sched_array_env(const struct job *t, struct strv *env)
{
    long ord, id = (long)t->array_id, task = t->array_task;
    const struct job *a = array_of(t, &ord);
    const struct array_spec *s;
    long first, last, step;
    char pbs_id[48];

    if (!a)
        return 0;
    s = &a->array->spec;
    first = s->r[0].first;
    last = s->r[s->n - 1].last;
    step = s->n == 1 ? s->r[0].step : 1;
    snprintf(pbs_id, sizeof(pbs_id), "PBS_ARRAY_ID=%ld[]", id);
    if (put(env, "LOOM_ARRAY_JOB_ID", id) < 0 ||
        put(env, "LOOM_ARRAY_TASK_ID", task) < 0 ||
        put(env, "SLURM_ARRAY_JOB_ID", id) < 0 ||
        put(env, "SLURM_ARRAY_TASK_ID", task) < 0 ||
        put(env, "SLURM_ARRAY_TASK_COUNT", s->tasks) < 0 ||
        put(env, "SLURM_ARRAY_TASK_MIN", first) < 0 ||
        put(env, "SLURM_ARRAY_TASK_MAX", last) < 0 ||
        put(env, "SLURM_ARRAY_TASK_STEP", step) < 0 ||
        put(env, "SGE_TASK_ID", task) < 0 ||
        put(env, "SGE_TASK_FIRST", first) < 0 ||
        put(env, "SGE_TASK_LAST", last) < 0 ||
        put(env, "SGE_TASK_STEPSIZE", step) < 0 ||
        put(env, "PBS_ARRAY_INDEX", task) < 0 ||
        put(env, "PBS_ARRAYID", task) < 0)
        return -1;
    return strv_push(env, pbs_id);
}
