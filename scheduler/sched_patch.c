/* sched_patch.c - PATCH /v1/jobs/{id}: a waiting job's name, request,
 * dependency and priority (a user may only lower it) change; an array's
 * change is its waiting tasks' too. Anything else is refused naming the
 * field, and a job that no longer waits is a 409. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/token.h"
#include "scheduler/sched_state.h"

/* The new values of a change, checked (has_*: the field is changed). */
struct change {
    char *name;
    int has_req, has_deps, has_prio;
    struct job_request req;
    struct dep_list deps;
    int priority;
};

static void change_fini(struct change *c)
{
    free(c->name);
    job_request_fini(&c->req);
    dep_list_fini(&c->deps);
}

static const char *const fields[] = {"name", "request", "dependency",
                                     "priority", NULL};

static int unknown(const char *key, struct loom_error *err)
{
    for (int i = 0; fields[i]; i++)
        if (!strcmp(fields[i], key))
            return 0;
    return loom_error_field(err, LOOM_EINVAL, key, "field '%.64s' cannot be "
                            "changed: a waiting job's name, request, "
                            "dependency and priority can", key);
}

static int name_in(json_t *v, struct change *c, struct loom_error *err)
{
    const char *s = json_string_value(v);

    if (!s || !*s || strlen(s) > LOOM_JOB_NAME_MAX)
        return loom_error_field(err, LOOM_EINVAL, "name", "field 'name' must "
                                "be a string of 1 to %d characters",
                                LOOM_JOB_NAME_MAX);
    if (!(c->name = strdup(s)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

/* The request over j's: a job chosen for a cluster at submit (its
 * account there) keeps it. */
static int request_in(const struct job *j, json_t *v, struct change *c,
                      struct loom_error *err)
{
    if (!json_is_object(v))
        return loom_error_field(err, LOOM_EINVAL, "request", "field "
                                "'request' must be an object");
    if (job_request_copy(&c->req, &j->req) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    c->has_req = 1;
    if (job_request_in(v, &c->req, err) < 0)
        return -1;
    if (j->req.cluster &&
        (!c->req.cluster || strcmp(c->req.cluster, j->req.cluster)))
        return loom_error_field(err, LOOM_EINVAL, "request.cluster", "job "
                                "%lld was submitted for cluster %s (and its "
                                "account there): submit it again to run "
                                "elsewhere", (long long)j->id,
                                j->req.cluster);
    return 0;
}

static int deps_in(const struct job *j, json_t *v, struct change *c,
                   struct loom_error *err)
{
    c->has_deps = 1;
    if (json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return loom_error_field(err, LOOM_EINVAL, "dependency", "field "
                                "'dependency' must be a string or null");
    if (dep_parse(json_string_value(v), &c->deps, err) < 0)
        return job_field_error(err, "dependency");
    for (size_t i = 0; j->array && i < c->deps.n; i++)
        if (c->deps.v[i].type == DEP_SINGLETON)
            return loom_error_field(err, LOOM_EINVAL, "dependency",
                                    "singleton is not for arrays: their "
                                    "tasks share one name");
    return 0;
}

/* A user lowers a priority; an operator or admin sets any. */
static int prio_in(const struct job *j, json_t *body, int staff,
                   struct change *c, struct loom_error *err)
{
    long long p;

    if (!json_is_integer(json_object_get(body, "priority")))
        return loom_error_field(err, LOOM_EINVAL, "priority", "field "
                                "'priority' must be an integer");
    if (jx_int_range(body, "", "priority", 0, -LOOM_JOB_PRIORITY_MAX,
                     LOOM_JOB_PRIORITY_MAX, &p, err) < 0)
        return -1;
    if (!staff && p > j->priority)
        return loom_error_field(err, LOOM_EPERM, "priority", "only an "
                                "operator or admin may raise a job's "
                                "priority (it is %d): a user may lower it",
                                j->priority);
    c->has_prio = 1;
    c->priority = (int)p;
    return 0;
}

/* The change body asks of j, checked against j. 0, or -1 with err. */
static int build(const struct job *j, json_t *body, int staff,
                 struct change *c, struct loom_error *err)
{
    const char *key;
    json_t *v;

    memset(c, 0, sizeof(*c));
    if (!json_object_size(body))
        return loom_error_set(err, LOOM_EINVAL, "the change is empty: give "
                              "name, request, dependency or priority");
    json_object_foreach(body, key, v) {
        int rc = unknown(key, err);
        if (rc == 0 && !strcmp(key, "name"))
            rc = name_in(v, c, err);
        else if (rc == 0 && !strcmp(key, "request"))
            rc = request_in(j, v, c, err);
        else if (rc == 0 && !strcmp(key, "dependency"))
            rc = deps_in(j, v, c, err);
        else if (rc == 0)
            rc = prio_in(j, body, staff, c, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Does j wait (and so may change)? */
static int waits(const struct job *j)
{
    if (j->array)
        return (j->array->tasks_state == JOB_PENDING ||
                j->array->tasks_state == JOB_HELD) &&
               j->array->n_split < j->array->spec.tasks;
    return (j->state == JOB_PENDING || j->state == JOB_HELD) &&
           !(j->state == JOB_HELD && j->native_id) &&
           strcmp(j->source, "cluster") != 0;
}

/* What the cycle's planner may read until the next refresh of the queue
 * (its entries borrow the request's strings): freed then. */
static struct job_request *graveyard;
static size_t n_graveyard, cap_graveyard;

void sched_patch_graveyard_free(void)
{
    for (size_t i = 0; i < n_graveyard; i++)
        job_request_fini(&graveyard[i]);
    n_graveyard = 0;
}

void sched_patch_fini(void)
{
    sched_patch_graveyard_free();
    free(graveyard);
    graveyard = NULL;
    cap_graveyard = 0;
}

static void retire(struct job_request *old)
{
    if (!S.planning || sched_grow((void **)&graveyard, &cap_graveyard,
                                  n_graveyard + 1, sizeof(*graveyard)) < 0) {
        job_request_fini(old); /* no cycle reads it, or (out of memory) the
                                  next one is to fill its entry first */
        return;
    }
    graveyard[n_graveyard++] = *old;
    memset(old, 0, sizeof(*old));
}

/* Put the change into j (taken from c). */
static void commit(struct job *j, struct change *c)
{
    if (c->name) {
        free(j->name);
        j->name = c->name;
        c->name = NULL;
    }
    if (c->has_req) {
        retire(&j->req);
        j->req = c->req;
        memset(&c->req, 0, sizeof(c->req));
    }
    if (c->has_prio)
        j->priority = c->priority;
    if (c->has_deps) {
        dep_list_fini(&j->deps);
        j->deps = c->deps;
        memset(&c->deps, 0, sizeof(c->deps));
        if (!j->deps.n && j->dep_wait) {
            j->dep_wait = 0;
            if (j->state == JOB_PENDING) {
                job_set_str(&j->reason, NULL);
                sched_pending_push(j->id);
            }
        }
        if (j->deps.n)
            sched_depend_add(j);
    }
    sched_touch(j);
}

struct tasks_arg {
    json_t *body;
    int staff;
};

/* A waiting task of a changed array changes with it. */
static void change_task(struct job *t, void *arg)
{
    struct tasks_arg *a = arg;
    struct loom_error err;
    struct change c;

    if (!waits(t))
        return;
    if (build(t, a->body, a->staff, &c, &err) == 0)
        commit(t, &c);
    else
        log_warn("job=%lld: not changed with its array: %s",
                 (long long)t->id, err.message);
    change_fini(&c);
}

int sched_patch(struct msg *m, struct job *j, struct sched_job_op *op,
                struct loom_error *err)
{
    int staff = (op->roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR)) != 0;
    struct change c;
    struct job probe;
    char ref[48];
    int rc = -1;

    job_id_text(j, ref);
    if (!waits(j))
        return loom_error_set(err, LOOM_ECONFLICT, "job %s is %s: only a "
                              "waiting job (pending or held) can be "
                              "changed", ref, job_state_name(j->state));
    if (build(j, op->body, staff, &c, err) < 0)
        goto out;
    probe = *j; /* j as it would be: may it run, and wait so? */
    if (c.has_req)
        probe.req = c.req;
    if ((c.has_req && sched_feasible(&probe, err) < 0) ||
        (c.has_deps && sched_depend_check(j, &c.deps, err) < 0))
        goto out;
    commit(j, &c);
    if (j->array) {
        struct tasks_arg a = {op->body, staff};
        sched_array_each(j, change_task, &a);
    }
    log_info("job=%s changed by %s", ref, op->subject);
    sched_ack_later(m->reply, j->id, 200);
    rc = 0;
out:
    change_fini(&c);
    return rc;
}
