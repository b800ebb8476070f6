/* sched_depend.c - what a job's dependencies wait for: the jobs they name
 * (a job, an array as a whole, an array's task) are watched, and a job is
 * looked at again only when one of them changes how it counts (waiting,
 * active, completed, failed, cancelled) - never by a pass over the queue.
 * A singleton waits while another job of its owner's with its name is
 * active. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/accounts.h"
#include "core/log.h"
#include "core/vec.h"
#include "scheduler/sched_state.h"

#define CHECK_VISITS 100000 /* jobs a change's check for a cycle looks at */

/* The jobs that wait for one job. */
struct sched_waiters {
    int64_t *ids;
    size_t n, cap;
};

/* The jobs of one owner and name: how many are active (and the last that
 * became so), and the singletons among them that wait. */
struct sched_single {
    long active;
    int64_t holder;
    int64_t *ids;
    size_t n, cap;
};

enum verdict { MET, WAIT, NEVER };

/* What a dependency sees of the jobs it names, counted by class. */
struct seen {
    long n[TC_N];
    int array; /* an array as a whole */
};

static void id_key(int64_t id, char key[24])
{
    snprintf(key, 24, "%lld", (long long)id);
}

static void single_key(const struct job *j, char *key, size_t n)
{
    snprintf(key, n, "%s\x1f%s", j->owner, j->name);
}

static void due(int64_t id)
{
    if (sched_grow((void **)&S.dep_due, &S.cap_dep_due, S.n_dep_due + 1,
                   sizeof(*S.dep_due)) < 0) {
        log_err("out of memory: a dependency is looked at late");
        return;
    }
    S.dep_due[S.n_dep_due++] = id;
}

static int push_id(int64_t **v, size_t *n, size_t *cap, int64_t id)
{
    if (vec_grow((void **)v, cap, *n + 1, sizeof(**v), 4) < 0)
        return -1;
    (*v)[(*n)++] = id;
    return 0;
}

static void waiters_free(void *p)
{
    struct sched_waiters *w = p;

    if (!w)
        return;
    free(w->ids);
    free(w);
}

/* ---- the checks of a submit or a change ---------------------------------- */

/* Does the owner of j see a job of owner and submitted_by (private_data)? */
static int sees(const struct job *j, const char *owner,
                const char *submitted_by)
{
    return j->staff || !accounts_policy().private_data ||
           !strcmp(owner, j->owner) ||
           (j->submitted_by && submitted_by &&
            !strcmp(submitted_by, j->submitted_by));
}

/* Does what d names include job j (an array and its tasks)? */
static int names(const struct dep *d, const struct job *j)
{
    if (d->type == DEP_SINGLETON)
        return 0;
    if (d->task < 0)
        return d->job == j->id || (j->array_id && d->job == j->array_id);
    if (j->array_id)
        return d->job == j->array_id && d->task == j->array_task;
    return d->job == j->id && j->array; /* a task of the array j */
}

/* Does p wait, itself or through the jobs it waits for, for j? */
static int waits_for(const struct job *p, const struct job *j)
{
    struct hmap seen;
    int64_t *stack = NULL;
    size_t n = 0, cap = 0, visits = 0;
    int found = 0;
    char key[24];

    hmap_init(&seen);
    push_id(&stack, &n, &cap, p->id);
    while (n && !found && visits++ < CHECK_VISITS) {
        const struct job *q = sched_job(stack[--n]);
        for (size_t i = 0; q && !found && i < q->deps.n; i++) {
            const struct dep *d = &q->deps.v[i];
            if (d->type == DEP_SINGLETON)
                continue;
            if (names(d, j)) {
                found = 1;
                break;
            }
            id_key(d->job, key);
            if (hmap_get(&seen, key))
                continue;
            hmap_put(&seen, key, &seen);
            push_id(&stack, &n, &cap, d->job);
        }
    }
    free(stack);
    hmap_fini(&seen);
    return found;
}

int sched_depend_check(const struct job *j, const struct dep_list *deps,
                       struct loom_error *err)
{
    for (size_t i = 0; i < deps->n; i++) {
        const struct dep *d = &deps->v[i];
        const struct job *p = sched_job(d->job);
        char ref[48];
        if (d->type == DEP_SINGLETON)
            continue;
        if (d->task >= 0)
            snprintf(ref, sizeof(ref), "%lld_%ld", (long long)d->job,
                     d->task);
        else
            snprintf(ref, sizeof(ref), "%lld", (long long)d->job);
        if (!p) { /* ended and gone from memory: not an array */
            enum job_state st;
            const char *owner, *by;
            if (!sched_gone(d->job, &st, &owner, &by) || !sees(j, owner, by))
                return loom_error_field(err, LOOM_EINVAL, "dependency",
                                        "dependency: there is no job %s",
                                        ref);
            if (d->task >= 0)
                return loom_error_field(err, LOOM_EINVAL, "dependency",
                                        "dependency: job %lld is not an "
                                        "array: it has no task %ld",
                                        (long long)d->job, d->task);
            continue;
        }
        if (!sees(j, p->owner, p->submitted_by))
            return loom_error_field(err, LOOM_EINVAL, "dependency",
                                    "dependency: there is no job %s", ref);
        if (d->task >= 0 && !p->array)
            return loom_error_field(err, LOOM_EINVAL, "dependency",
                                    "dependency: job %lld is not an array: "
                                    "it has no task %ld", (long long)d->job,
                                    d->task);
        if (d->task >= 0 && array_spec_ord(&p->array->spec, d->task) < 0)
            return loom_error_field(err, LOOM_EINVAL, "dependency",
                                    "dependency: array %lld has no task %ld",
                                    (long long)d->job, d->task);
        if (j->id && names(d, j))
            return loom_error_field(err, LOOM_EINVAL, "dependency",
                                    "dependency: job %s cannot wait for "
                                    "itself", ref);
        if (j->id && waits_for(p, j))
            return loom_error_field(err, LOOM_EINVAL, "dependency",
                                    "dependency: job %s waits for this job "
                                    "already (itself or through others): "
                                    "the two would wait for each other",
                                    ref);
    }
    return 0;
}

/* ---- what a dependency sees ---------------------------------------------- */

static int see(const struct dep *d, struct seen *s)
{
    const struct job *p = sched_job(d->job), *t;
    const struct job_array *ar;
    long ord, unsplit;

    memset(s, 0, sizeof(*s));
    if (!p) { /* ended and gone from memory: what it ended as */
        struct job gone = {0};
        if (!sched_gone(d->job, &gone.state, NULL, NULL) || d->task >= 0)
            return -1;
        s->n[job_task_class(&gone)] = 1;
        return 0;
    }
    if (!(ar = p->array)) {
        s->n[job_task_class(p)] = 1;
        return 0;
    }
    unsplit = ar->spec.tasks - ar->n_split;
    if (d->task < 0) {
        memcpy(s->n, ar->count, sizeof(s->n));
        s->n[ar->tasks_state == JOB_CANCELLED ? TC_CANCELLED : TC_WAITING] +=
            unsplit;
        s->array = 1;
        return 0;
    }
    if ((ord = array_spec_ord(&ar->spec, d->task)) < 0)
        return -1;
    t = (size_t)ord < ar->cap_rec && ar->rec[ord] ? sched_job(ar->rec[ord])
                                                  : NULL;
    if (t)
        s->n[job_task_class(t)] = 1;
    else
        s->n[ar->tasks_state == JOB_CANCELLED ? TC_CANCELLED : TC_WAITING] =
            1;
    return 0;
}

static enum verdict one(const struct job *j, const struct dep *d, char *why,
                        size_t size)
{
    struct seen s;
    char ref[48];
    const char *name = dep_type_name(d->type), *bad;
    long waiting, ended_bad;

    if (d->type == DEP_SINGLETON) {
        char key[600];
        const struct sched_single *g;
        single_key(j, key, sizeof(key));
        g = hmap_get(&S.singles, key);
        if (!g || g->active <= 0)
            return MET;
        snprintf(why, size, "waiting for job %lld of the same name to end "
                 "(singleton)", (long long)g->holder);
        return WAIT;
    }
    if (d->task >= 0)
        snprintf(ref, sizeof(ref), "%lld_%ld", (long long)d->job, d->task);
    else
        snprintf(ref, sizeof(ref), "%lld", (long long)d->job);
    if (see(d, &s) < 0) {
        snprintf(why, size, "dependency never satisfied: job %s does not "
                 "exist (%s)", ref, name);
        return NEVER;
    }
    waiting = s.n[TC_WAITING];
    ended_bad = s.n[TC_FAILED] + s.n[TC_CANCELLED];
    bad = s.n[TC_FAILED] ? (s.array ? "has a failed task" : "failed")
                         : (s.array ? "has a cancelled task"
                                    : "was cancelled");
    switch (d->type) {
    case DEP_AFTER:
        if (!waiting)
            return MET;
        snprintf(why, size, "waiting for job %s to start (%s)", ref, name);
        return WAIT;
    case DEP_AFTERANY:
        if (!waiting && !s.n[TC_ACTIVE])
            return MET;
        snprintf(why, size, "waiting for job %s to end (%s)", ref, name);
        return WAIT;
    case DEP_AFTEROK:
        if (ended_bad) {
            snprintf(why, size, "dependency never satisfied: job %s %s "
                     "(%s)", ref, bad, name);
            return NEVER;
        }
        if (!waiting && !s.n[TC_ACTIVE])
            return MET;
        snprintf(why, size, "waiting for job %s to complete (%s)", ref, name);
        return WAIT;
    default: /* afternotok */
        if (waiting || s.n[TC_ACTIVE]) {
            snprintf(why, size, "waiting for job %s to fail (%s)", ref, name);
            return WAIT;
        }
        if (ended_bad)
            return MET;
        snprintf(why, size, "dependency never satisfied: job %s completed "
                 "(%s)", ref, name);
        return NEVER;
    }
}

/* All of them (or, joined by '?', any of them). */
static enum verdict judge(const struct job *j, char *why, size_t size)
{
    char one_why[256], wait_why[256] = "", never_why[256] = "";
    int waits = 0;

    for (size_t i = 0; i < j->deps.n; i++) {
        enum verdict v = one(j, &j->deps.v[i], one_why, sizeof(one_why));
        if (v == MET && j->deps.any)
            return MET;
        if (v == NEVER && !j->deps.any) {
            snprintf(why, size, "%s", one_why);
            return NEVER;
        }
        if (v == WAIT && !waits++)
            snprintf(wait_why, sizeof(wait_why), "%s", one_why);
        if (v == NEVER && !never_why[0])
            snprintf(never_why, sizeof(never_why), "%s", one_why);
    }
    if (waits) {
        snprintf(why, size, "%s", wait_why);
        return WAIT;
    }
    if (j->deps.any) {
        snprintf(why, size, "%s", never_why);
        return NEVER;
    }
    return MET;
}

/* ---- looking at a job ---------------------------------------------------- */

/* Does j still wait for its dependencies to let it start? */
static int waiting(const struct job *j)
{
    if (j->array)
        return (j->array->tasks_state == JOB_PENDING ||
                j->array->tasks_state == JOB_HELD) &&
               j->array->n_split < j->array->spec.tasks;
    return j->state == JOB_PENDING || j->state == JOB_HELD;
}

static void never(struct job *j, const char *why)
{
    struct loom_error err;

    log_info("job=%lld %s", (long long)j->id, why);
    if (!S.conf.kill_invalid_depend) {
        j->dep_wait = 1;
        if (j->state == JOB_PENDING && (!j->reason || strcmp(j->reason, why)))
            job_set_str(&j->reason, why);
        sched_view(j);
    } else if (j->array) {
        sched_array_cancel(j, why, &err);
    } else {
        sched_finish_now(j, JOB_CANCELLED, why);
    }
}

void sched_depend_eval(struct job *j)
{
    char why[256];

    if (!j->deps.n || !waiting(j))
        return;
    switch (judge(j, why, sizeof(why))) {
    case MET:
        if (!j->dep_wait)
            return;
        j->dep_wait = 0;
        if (j->state == JOB_PENDING)
            sched_pending_push(j->id);
        if (j->state == JOB_PENDING && j->reason) {
            job_set_str(&j->reason, NULL); /* what it waited for */
            sched_touch_lazy(j);
        } else {
            sched_view(j);
        }
        return;
    case WAIT:
        j->dep_wait = 1;
        if (j->state == JOB_PENDING && (!j->reason || strcmp(j->reason, why)))
            job_set_str(&j->reason, why);
        sched_view(j);
        return;
    case NEVER:
        never(j, why);
        return;
    }
}

static void watch(int64_t parent, int64_t id)
{
    struct sched_waiters *w;
    char key[24];

    id_key(parent, key);
    if (!(w = hmap_get(&S.waiters, key))) {
        if (!(w = calloc(1, sizeof(*w))) || hmap_put(&S.waiters, key, w) < 0) {
            free(w);
            goto oom;
        }
    }
    if (push_id(&w->ids, &w->n, &w->cap, id) < 0)
        goto oom;
    if (parent > 0 && (size_t)parent <= S.cap)
        S.jf[parent - 1] |= JF_WATCHED;
    return;
oom:
    log_err("job=%lld: out of memory watching job %lld", (long long)id,
            (long long)parent);
}

/* The group of j's owner and name, made (with its active jobs counted) on
 * first sight. */
static struct sched_single *single_of(const struct job *j)
{
    struct sched_single *g;
    char key[600];

    single_key(j, key, sizeof(key));
    if ((g = hmap_get(&S.singles, key)))
        return g;
    if (!(g = calloc(1, sizeof(*g))) || hmap_put(&S.singles, key, g) < 0) {
        free(g);
        return NULL;
    }
    for (size_t i = 0; i < S.n_live; i++) {
        const struct job *o = sched_job(S.live[i]);
        if (o && !o->array && job_task_class(o) == TC_ACTIVE &&
            !strcmp(o->owner, j->owner) && !strcmp(o->name, j->name)) {
            g->active++;
            g->holder = o->id;
        }
    }
    return g;
}

void sched_depend_add(struct job *j)
{
    for (size_t i = 0; i < j->deps.n; i++) {
        const struct dep *d = &j->deps.v[i];
        struct sched_single *g;
        enum job_state st;
        if (d->type != DEP_SINGLETON) {
            /* one gone from memory ended: nothing to watch */
            if (sched_job(d->job) || !sched_gone(d->job, &st, NULL, NULL))
                watch(d->job, j->id);
        } else if (!(g = single_of(j)) ||
                   push_id(&g->ids, &g->n, &g->cap, j->id) < 0) {
            log_err("job=%lld: out of memory watching its name",
                    (long long)j->id);
        }
    }
    sched_depend_eval(j);
}

/* The active jobs of j's owner and name, as j leaves (old) or joins (c)
 * the active ones. */
static void single_count(const struct job *j, uint8_t old, uint8_t c)
{
    struct sched_single *g;
    char key[600];

    if (j->array || (old != TC_ACTIVE && c != TC_ACTIVE))
        return;
    single_key(j, key, sizeof(key));
    if (!(g = hmap_get(&S.singles, key)))
        return;
    if (c == TC_ACTIVE) {
        g->active++;
        g->holder = j->id;
    } else if (--g->active <= 0) {
        g->active = 0;
        for (size_t i = 0; i < g->n; i++)
            due(-g->ids[i]);
    }
}

void sched_depend_note(struct job *j)
{
    uint8_t c = (uint8_t)job_task_class(j), old = j->dep_class;

    if (c == old)
        return;
    j->dep_class = c;
    if (S.singles.n)
        single_count(j, old, c);
    if (S.jf[j->id - 1] & JF_WATCHED)
        due(j->id);
    if (j->array_id && (size_t)j->array_id <= S.cap &&
        (S.jf[j->array_id - 1] & JF_WATCHED))
        due(j->array_id); /* its array as a whole changed too */
}

void sched_depend_run(void)
{
    for (size_t k = 0; k < S.n_dep_due; k++) {
        int64_t id = S.dep_due[k];
        struct sched_waiters *w;
        char key[24];
        if (id < 0) { /* a job to look at itself */
            struct job *j = sched_job(-id);
            if (j && !job_state_final(j->state))
                sched_depend_eval(j);
            continue;
        }
        id_key(id, key);
        if (!(w = hmap_get(&S.waiters, key)))
            continue;
        for (size_t i = 0; i < w->n; i++) {
            struct job *j = sched_job(w->ids[i]);
            if (j && !job_state_final(j->state))
                sched_depend_eval(j); /* may add to dep_due: looked at in
                                         this same pass */
        }
    }
    S.n_dep_due = 0;
}

int sched_depend_may_start(struct job *j)
{
    char why[256];

    for (size_t i = 0; i < j->deps.n; i++) {
        if (j->deps.v[i].type != DEP_SINGLETON ||
            one(j, &j->deps.v[i], why, sizeof(why)) == MET)
            continue;
        j->dep_wait = 1;
        job_set_str(&j->reason, why);
        sched_view(j);
        return 0;
    }
    return 1;
}

void sched_depend_forget(int64_t id)
{
    char key[24];

    id_key(id, key);
    waiters_free(hmap_del(&S.waiters, key));
}

void sched_depend_load(void)
{
    size_t n = 0;

    for (size_t i = 0; i < S.cap; i++) {
        struct job *j = S.jobs[i];
        if (j && j->deps.n && !job_state_final(j->state)) {
            sched_depend_add(j);
            n++;
        }
    }
    if (n)
        log_info("looked at the dependencies of %zu job(s)", n);
}

static void single_free(void *p)
{
    struct sched_single *g = p;

    free(g->ids);
    free(g);
}


void sched_depend_fini(void)
{
    hmap_fini_values(&S.waiters, waiters_free);
    hmap_fini_values(&S.singles, single_free);
    free(S.dep_due);
}
