/* sched_doubt.c - new jobs whose commit lost its connection under it: they
 * may be stored or not. Once the database is back the committer looks:
 * a stored submit is taken back into memory (it runs, as its key's retry
 * is told), a stored task or cluster job is deleted (its array or its
 * cluster's list made it again under a new id). */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

/* A task is made again by its array, a cluster's job by its next list. */
static int made_again(const struct job *j)
{
    return j->array_id || !strcmp(j->source, "cluster");
}

void sched_doubt_note(const struct job *j)
{
    struct sched_doubt_ids *d = made_again(j) ? &S.doubt.drop : &S.doubt.take;

    if (sched_grow((void **)&d->v, &d->cap, d->n + 1, sizeof(*d->v)) < 0) {
        log_err("job=%lld: out of memory noting that its commit is in "
                "doubt; a restart takes it if it is stored",
                (long long)j->id);
        return;
    }
    d->v[d->n++] = j->id;
    /* A server that lost its client still ends a transaction whose COMMIT
     * it has read: the look waits a moment for it. (A server killed or
     * restarted, the usual cause, ended it already.) */
    S.doubt.at = time_mono() + DB_RETRY_S;
}

int sched_doubt_due(void)
{
    return (S.doubt.take.n || S.doubt.drop.n) && !S.doubt.inflight &&
           time_mono() >= S.doubt.at;
}

static int64_t *copy_ids(const struct sched_doubt_ids *d)
{
    int64_t *v = malloc((d->n + 1) * sizeof(*v));

    if (v && d->n)
        memcpy(v, d->v, d->n * sizeof(*v));
    return v;
}

int sched_doubt_attach(struct commit_batch *b)
{
    struct commit_doubt *d;

    if (!sched_doubt_due())
        return 0;
    if (!(d = calloc(1, sizeof(*d))) || !(d->take = copy_ids(&S.doubt.take)) ||
        !(d->drop = copy_ids(&S.doubt.drop))) {
        if (d) {
            free(d->take);
            free(d);
        }
        return -1;
    }
    d->n_take = S.doubt.take.n;
    d->n_drop = S.doubt.drop.n;
    b->doubt = d;
    S.doubt.inflight = 1;
    return 0;
}

/* The first n of d settled: the ones noted since stay. */
static void settled(struct sched_doubt_ids *d, size_t n)
{
    if (n && d->n > n)
        memmove(d->v, d->v + n, (d->n - n) * sizeof(*d->v));
    d->n -= n;
}

/* A stored submit back in memory, as if just committed. */
static void take_back(const struct store_job_row *row)
{
    struct job *j = sched_job_of_row(row);
    char subject[32];
    int placed;

    if (!j || sched_job(j->id)) {
        log_err("job=%lld: stored after a commit in doubt, but %s; a "
                "restart takes it", (long long)row->id,
                j ? "an id in memory is the same" : "its record is "
                                                    "unreadable");
        job_destroy(j);
        return;
    }
    /* placed at its submit: that start went with the failed turn, and the
     * job never started; it waits again */
    placed = job_holds_nodes(j) || j->state == JOB_STARTING;
    if (placed) {
        j->state = JOB_PENDING;
        job_set_str(&j->cluster, NULL);
        strv_fini(&j->nodes);
        job_set_str(&j->reason, NULL);
        sched_acct_move(j, job_account_on(j, NULL));
    }
    if (sched_job_add(j) < 0) {
        log_err("job=%lld: out of memory taking it back; a restart takes it",
                (long long)j->id);
        job_destroy(j);
        return;
    }
    if (j->deps.n)
        sched_depend_add(j);
    if (j->state == JOB_PENDING)
        sched_pending_push(j->id);
    if (placed)
        sched_touch(j);
    /* shown: every lower id was in a batch that is back (the one that
     * failed came back before this look went) */
    jobs_committed_set(j->id);
    S.need_cycle = 1;
    snprintf(subject, sizeof(subject), "job %lld", (long long)j->id);
    sched_event("warn", "job", subject, "its commit lost the database "
                "connection under it, and it is stored: taken back");
}

void sched_doubt_back(struct commit_batch *b)
{
    struct commit_doubt *d = b->doubt;

    if (!d)
        return;
    S.doubt.inflight = 0;
    if (!d->settled) { /* the database is away still: look again later */
        S.db_retry_at = time_mono() + DB_RETRY_S;
        return;
    }
    settled(&S.doubt.take, d->n_take);
    settled(&S.doubt.drop, d->n_drop);
    for (size_t i = 0; i < d->n_found; i++)
        take_back(&d->found[i]);
    if (d->n_take > d->n_found || d->n_drop)
        log_info("commits in doubt settled: %zu of %zu new job(s) were "
                 "stored and are taken back; %zu task(s) and cluster "
                 "job(s) made again", d->n_found, d->n_take, d->n_drop);
}

void sched_doubt_fini(void)
{
    if (S.doubt.take.n || S.doubt.drop.n)
        log_warn("stopping with %zu new job(s) whose commit is in doubt: "
                 "the next start loads those that are stored",
                 S.doubt.take.n + S.doubt.drop.n);
    free(S.doubt.take.v);
    free(S.doubt.drop.v);
    memset(&S.doubt, 0, sizeof(S.doubt));
}
