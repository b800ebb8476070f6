/* sched_ops.c - submits (group commit) and job operations. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/accounts.h"
#include "core/log.h"
#include "core/store_jobs.h"
#include "core/token.h"
#include "scheduler/sched_state.h"

void sched_idem_key(const struct job *j, char *key, size_t n)
{
    snprintf(key, n, "%s\x1f%s", j->submitted_by ? j->submitted_by : j->owner,
             j->idem_key);
}

/* A replay of a known key: the same job (200), or 409 for another body.
 * Returns 1 when answered. */
static int idem_replay(struct msg *m, struct job *j)
{
    struct loom_error err;
    struct job *old;
    char key[1024];

    if (!j->idem_key)
        return 0;
    sched_idem_key(j, key, sizeof(key));
    old = sched_job((int64_t)(intptr_t)hmap_get(&S.idem, key));
    if (!old)
        return 0;
    if (old->dirty == 2) {
        loom_error_field(&err, LOOM_ECONFLICT, "Idempotency-Key",
                         "a request with Idempotency-Key '%s' is in "
                         "progress; retry", j->idem_key);
        reply_send_error(m->reply, &err);
    } else if (strcmp(old->idem_hash ? old->idem_hash : "",
                      j->idem_hash ? j->idem_hash : "") != 0) {
        loom_error_field(&err, LOOM_ECONFLICT, "Idempotency-Key",
                         "Idempotency-Key '%s' was used for another request "
                         "(job %lld)", j->idem_key, (long long)old->id);
        reply_send_error(m->reply, &err);
    } else if (old->dirty) {
        sched_ack_later(m->reply, old->id, 200);
    } else {
        reply_send(m->reply, 200, strdup(old->view->json));
    }
    return 1;
}

/* Accept a submit into this turn: it gets its id and its place in the
 * table now, and is answered after the turn's commit (the group commit of
 * concurrent submits). */
void sched_submit(struct msg *m)
{
    struct job *j = m->data;
    struct loom_error err;

    if (idem_replay(m, j)) {
        msg_destroy(m);
        return;
    }
    if (sched_acct_submit_check(j, &err) < 0 ||
        sched_feasible(j, &err) < 0 ||
        (j->deps.n && sched_depend_check(j, &j->deps, &err) < 0)) {
        reply_send_error(m->reply, &err);
        msg_destroy(m);
        return;
    }
    j->id = S.next_id++;
    j->submit_time = time(NULL);
    j->dirty = 2; /* not committed yet: not shown, not scheduled */
    if (sched_job_add(j) < 0 || sched_insert_later(j->id, m) < 0) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        reply_send_error(m->reply, &err);
        msg_destroy(m);
        return;
    }
    m->data = NULL; /* the table owns the job now */
    m->data_free = NULL;
    if (j->deps.n)
        sched_depend_add(j);
    sched_place_now(j);
}

int sched_insert_later(int64_t id, struct msg *m)
{
    if (sched_grow((void **)&S.ins, &S.cap_ins, S.n_ins + 1,
                   sizeof(*S.ins)) < 0)
        return -1;
    S.ins[S.n_ins++] = (struct ins){id, m};
    sched_turn_queued(id);
    return 0;
}

/* Drop a job that was never acknowledged from the table and the view. */
void sched_forget(struct job *j)
{
    char key[1024];

    if (j->idem_key) {
        sched_idem_key(j, key, sizeof(key));
        hmap_del(&S.idem, key);
    }
    if (!strcmp(j->source, "cluster") && j->cluster && j->native_id) {
        sched_native_key(j->cluster, j->native_id, key, sizeof(key));
        hmap_del(&S.native, key);
    }
    if (job_holds_nodes(j)) /* placed at submit: free its nodes */
        sched_release(j);
    if (j->array_id) /* a task: its array stands for it again */
        sched_array_unsplit(j);
    sched_acct_forget(j);
    sched_job_drop(j); /* never queued: it was not committed */
}

void sched_insert_done(struct ins *in, int ok, int in_doubt,
                       const struct loom_error *cerr)
{
    struct job *j = sched_job(in->id);
    struct loom_error err = *cerr;

    if (ok) {
        j->dirty = 0; /* its view is in the table since it was accepted */
        /* its cluster schedules a native job, unless it holds it for Loom */
        if (j->state == JOB_PENDING &&
            (strcmp(j->source, "cluster") != 0 || j->held_for_loom))
            sched_pending_push(j->id);
        /* the committer answered the submit */
    } else {
        if (in_doubt) { /* the database may hold it: looked at later */
            sched_doubt_note(j);
            loom_error_set(&err, LOOM_EUNAVAIL, "database unavailable: the "
                           "connection was lost while the job was committed, "
                           "so it may be stored; if it is, Loom runs it once "
                           "the database is back: retry with the same "
                           "Idempotency-Key to learn its id, or list your "
                           "jobs");
        } else if (err.kind == LOOM_ETEMP) /* up, but the write failed: say why */
            loom_error_set(&err, LOOM_ETEMP, "the database could not store "
                           "the job (%s): it was not accepted; retry later",
                           cerr->message);
        else if (err.kind != LOOM_ECONFLICT)
            loom_error_set(&err, LOOM_EUNAVAIL, "database unavailable: the "
                           "job was not accepted; retry later");
        if (in->m)
            reply_send_error(in->m->reply, &err);
        sched_forget(j);
    }
    msg_destroy(in->m);
}

/* Its owner or the gateway that submitted it for the owner. */
static int owns(const struct job *j, const struct sched_job_op *op)
{
    return !strcmp(op->subject, j->owner) ||
           (j->submitted_by && !strcmp(op->subject, j->submitted_by));
}

/* The owner (or its gateway) and an admin control a job; the scheduler
 * role starts any job (an external scheduler steers the whole fabric). */
int sched_may_control(const struct job *j, const struct sched_job_op *op)
{
    return (op->roles & LOOM_ROLE_ADMIN) || owns(j, op) ||
           (!strcmp(op->op, "start") && (op->roles & LOOM_ROLE_SCHEDULER));
}

/* Users and gateways do not see others' jobs (private_data): for them
 * another's job does not exist. */
int sched_hidden_from(const struct job *j, const struct sched_job_op *op)
{
    return !(op->roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR)) &&
           (op->roles & (LOOM_ROLE_USER | LOOM_ROLE_GATEWAY)) &&
           !owns(j, op) && accounts_policy().private_data;
}

static void to_server(struct msg *m, struct job *j, const char *op)
{
    struct server_job_op *s = calloc(1, sizeof(*s));

    if (s) {
        s->id = j->id;
        snprintf(s->op, sizeof(s->op), "%s", op);
        s->cluster = strdup(j->cluster);
        s->native_id = j->native_id ? strdup(j->native_id) : NULL;
        s->view = strdup(j->view->json);
    }
    msgq_post(server_queue(),
              msg_create(SERVER_JOB_OP, s, server_job_op_free, m->reply));
}

void sched_finish_now(struct job *j, enum job_state st, const char *why)
{
    j->state = st;
    j->end_time = time(NULL);
    job_set_str(&j->reason, why);
    sched_touch(j);
}

void sched_cancel_job(struct job *j, const char *why)
{
    struct msg none = {0};

    if (job_state_final(j->state))
        return;
    if (j->state == JOB_PENDING || j->state == JOB_HELD) {
        sched_finish_now(j, JOB_CANCELLED, why);
        return;
    }
    job_set_str(&j->reason, why);
    j->own_reason = 1;
    if (j->state == JOB_STARTING && !j->native_id) {
        j->cancel_requested = 1;
        sched_view(j);
        return;
    }
    sched_touch(j);
    to_server(&none, j, "cancel");
}

static int do_start(struct msg *m, struct job *j, struct sched_job_op *op,
                    struct loom_error *err)
{
    struct strv nodes = {0};
    char why[160];

    if (!sched_acct_may_start(j, why, sizeof(why)))
        return loom_error_set(err, LOOM_ECONFLICT, "cannot start job %lld: "
                              "%s", (long long)j->id, why);
    if (!sched_depend_may_start(j) || (j->dep_wait && j->deps.n))
        return loom_error_set(err, LOOM_ECONFLICT, "cannot start job %lld: "
                              "%s", (long long)j->id, j->reason ? j->reason
                              : "it waits for its dependencies");
    if (sched_check_start(j, op->cluster, &op->nodes, err) < 0)
        return -1;
    for (size_t i = 0; i < op->nodes.n; i++)
        if (strv_push(&nodes, op->nodes.v[i]) < 0) {
            strv_fini(&nodes);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    sched_assign(j, op->cluster, &nodes);
    sched_ack_later(m->reply, j->id, 202);
    log_info("job=%lld start on cluster=%s requested by %s", (long long)j->id,
             op->cluster, op->subject);
    return 0;
}

int sched_job_op_one(struct msg *m, struct job *j, struct sched_job_op *op,
                     struct loom_error *err)
{
    char why[160], ref[48];
    const char *st = job_state_name(j->state);

    job_id_text(j, ref);
    if (!strcmp(op->op, "start")) { /* the role was checked: scheduler */
        if (j->state != JOB_PENDING && j->state != JOB_HELD)
            return loom_error_set(err, LOOM_ECONFLICT, "job %s is %s: only "
                                  "a pending or held job can be started",
                                  ref, st);
        return do_start(m, j, op, err);
    }
    if (!sched_may_control(j, op) && sched_hidden_from(j, op))
        return loom_error_set(err, LOOM_ENOENT, "no job %s",
                              ref); /* as if there were none */
    if (!sched_may_control(j, op))
        return loom_error_set(err, LOOM_EPERM, "job %s belongs to %s", ref,
                              j->owner);
    if (!strcmp(op->op, "patch"))
        return sched_patch(m, j, op, err);
    if (!strcmp(j->source, "cluster")) { /* its cluster owns it */
        if (job_state_final(j->state))
            return loom_error_set(err, LOOM_ECONFLICT, "job %s is %s "
                                  "already", ref, st);
        to_server(m, j, op->op);
        return 0;
    }
    if (!strcmp(op->op, "cancel")) {
        if (job_state_final(j->state))
            return loom_error_set(err, LOOM_ECONFLICT, "job %s is %s "
                                  "already", ref, st);
        if (j->state == JOB_PENDING || j->state == JOB_HELD) {
            snprintf(why, sizeof(why), "cancelled by %s", op->subject);
            sched_finish_now(j, JOB_CANCELLED, why);
            sched_ack_later(m->reply, j->id, 200);
        } else if (j->state == JOB_STARTING && !j->native_id) {
            j->cancel_requested = 1;
            job_set_str(&j->reason, "cancel requested while starting");
            sched_view(j);
            reply_send(m->reply, 202, strdup(j->view->json));
        } else {
            to_server(m, j, "cancel");
        }
        return 0;
    }
    if (!strcmp(op->op, "hold") || !strcmp(op->op, "release")) {
        int hold = !strcmp(op->op, "hold");
        /* Queued in its cluster already: the cluster holds or releases it
         * (a cluster that cannot answers 501). */
        if (j->native_id && (hold ? j->state == JOB_STARTING
                                  : j->state == JOB_HELD)) {
            to_server(m, j, op->op);
            return 0;
        }
        if (j->state != (hold ? JOB_PENDING : JOB_HELD))
            return loom_error_set(err, LOOM_ECONFLICT, "job %s is %s: only "
                                  "a %s job can be %s", ref, st,
                                  hold ? "pending" : "held",
                                  hold ? "held" : "released");
        j->state = hold ? JOB_HELD : JOB_PENDING;
        snprintf(why, sizeof(why), "%s by %s", hold ? "held" : "released",
                 op->subject);
        job_set_str(&j->reason, why);
        if (!hold) {
            sched_pending_push(j->id);
            sched_depend_eval(j); /* its reason, if it waits for a job */
        }
        sched_touch(j);
        sched_ack_later(m->reply, j->id, 200);
        return 0;
    }
    if (!strcmp(op->op, "suspend") || !strcmp(op->op, "resume")) {
        int sus = !strcmp(op->op, "suspend");
        if (j->state != (sus ? JOB_RUNNING : JOB_SUSPENDED))
            return loom_error_set(err, LOOM_ECONFLICT, "job %s is %s: only "
                                  "a %s job can be %s", ref, st,
                                  sus ? "running" : "suspended",
                                  sus ? "suspended" : "resumed");
        to_server(m, j, op->op);
        return 0;
    }
    return loom_error_set(err, LOOM_EINVAL, "unknown job operation '%s'",
                          op->op);
}

void sched_job_op(struct msg *m)
{
    struct sched_job_op *op = m->data;
    struct job *j = sched_job(op->id);
    struct loom_error err;
    enum job_state st;
    int rc;

    /* ended and gone from memory: it answers as it did before it went */
    if (!j && op->task < 0 && op->stored && op->stored->id == op->id &&
        sched_gone(op->id, &st, NULL, NULL))
        j = op->stored;
    if (!j) {
        if (op->task >= 0)
            loom_error_set(&err, LOOM_ENOENT, "no job %lld_%ld",
                           (long long)op->id, op->task);
        else
            loom_error_set(&err, LOOM_ENOENT, "no job %lld",
                           (long long)op->id);
        reply_send_error(m->reply, &err);
        return;
    }
    if (op->task >= 0 || (j->array && strcmp(op->op, "patch") != 0))
        rc = sched_array_op(m, j, op, &err);
    else
        rc = sched_job_op_one(m, j, op, &err);
    if (rc < 0)
        reply_send_error(m->reply, &err);
}

void sched_job_op_free(void *p)
{
    struct sched_job_op *op = p;

    if (!op)
        return;
    free(op->subject);
    free(op->cluster);
    strv_fini(&op->nodes);
    json_decref(op->body);
    job_destroy(op->stored);
    free(op);
}
