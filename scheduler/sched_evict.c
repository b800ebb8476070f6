/* sched_evict.c - ended jobs leave memory: job_memory_s after its end an
 * ended job's record and view are let go, and it is read from PostgreSQL
 * from then on (as Slurm's MinJobAge). What the dependencies that name it
 * need stays: its state and who owns it, four bytes. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "core/log.h"
#include "core/store_jobs.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

#define EVICT_EVERY_S 1.0 /* how often the ended jobs are looked at */
#define GONE_STATE_BITS 3 /* enum job_state fits in 3 bits */
#define TRIM_AFTER 256 /* jobs let go that give memory back */
#define TRIM_EVERY_S 60.0 /* and at most this often */

_Static_assert(JOB_CANCELLED < (1 << GONE_STATE_BITS),
               "a job state does not fit its bits in S.gone");

void sched_evict_note(struct job *j)
{
    /* A native job's end is its cluster's clock: one ahead of ours would
     * hold up every later end behind it at the head of the list. */
    time_t now = time(NULL),
           since = j->end_time && j->end_time < now ? j->end_time : now;

    /* An array and its tasks stay: its record counts them. Noted under
     * job_memory_s = 0 too, for a reload that sets it. */
    if (j->array || j->array_id)
        return;
    sched_lazy_compact(S.ended, &S.ended_head, &S.n_ended);
    if (sched_grow((void **)&S.ended, &S.cap_ended, S.n_ended + 1,
                   sizeof(*S.ended)) < 0) {
        log_err("job=%lld: out of memory; it stays in memory",
                (long long)j->id);
        return;
    }
    S.jf[j->id - 1] |= JF_ENDED;
    S.ended[S.n_ended++] = (struct lazy){j->id, (double)since};
}

/* The index + 1 of j's owner and submitter among those of the jobs let
 * go, or 0 when out of memory. */
static uint32_t who_of(const struct job *j)
{
    const char *by = j->submitted_by ? j->submitted_by : j->owner;
    char key[1024];
    void *ix;

    snprintf(key, sizeof(key), "%s\x1f%s", j->owner, by);
    if ((ix = hmap_get(&S.gone_who, key)))
        return (uint32_t)(uintptr_t)ix;
    if (S.gone_owner.n >= UINT32_MAX >> GONE_STATE_BITS ||
        strv_push(&S.gone_owner, j->owner) < 0)
        return 0;
    if (strv_push(&S.gone_by, by) < 0 ||
        hmap_put(&S.gone_who, key, (void *)(uintptr_t)S.gone_owner.n) < 0) {
        free(S.gone_owner.v[--S.gone_owner.n]);
        if (S.gone_by.n > S.gone_owner.n)
            free(S.gone_by.v[--S.gone_by.n]);
        return 0;
    }
    return (uint32_t)S.gone_owner.n;
}

int sched_gone(int64_t id, enum job_state *st, const char **owner,
               const char **submitted_by)
{
    uint32_t g = id > 0 && (size_t)id <= S.cap ? S.gone[id - 1] : 0;

    if (!g)
        return 0;
    *st = (enum job_state)(g & ((1u << GONE_STATE_BITS) - 1));
    if (owner)
        *owner = S.gone_owner.v[(g >> GONE_STATE_BITS) - 1];
    if (submitted_by)
        *submitted_by = S.gone_by.v[(g >> GONE_STATE_BITS) - 1];
    return 1;
}

/* May j leave memory now: ended, written, and named by nothing under way
 * (a queue entry; a change, an insert or an answer waiting for a turn, or
 * in a turn not back yet)? */
static int may_go(const struct job *j)
{
    return job_state_final(j->state) && !j->dirty &&
           j->turn <= S.turn_done &&
           !(S.jf[j->id - 1] & JF_QUEUED) && !j->array && !j->array_id;
}

/* What stays of ended job j once it is gone: its state and who owns it
 * in S.gone, the mark for readers, the counts. 0, or -1 when out of
 * memory (nothing changed). */
static int gone_note(const struct job *j)
{
    uint32_t who = who_of(j);

    if (!who)
        return -1;
    S.gone[j->id - 1] = who << GONE_STATE_BITS | (uint32_t)j->state;
    jobs_evicted_note(j->id);
    S.n_evicted++;
    S.evicted_by_state[j->state]++;
    return 0;
}

static void evict(struct job *j)
{
    int64_t id = j->id;
    char key[1024];

    if (gone_note(j) < 0)
        return; /* out of memory: it stays */
    if (j->idem_key) {
        sched_idem_key(j, key, sizeof(key));
        if ((int64_t)(intptr_t)hmap_get(&S.idem, key) == id)
            hmap_del(&S.idem, key);
    }
    /* A native job's entry in S.native stays: its cluster may list it,
     * ended, for a while yet, and it must not come back as a new job. */
    sched_depend_forget(id);
    sched_job_drop(j);
}

static time_t time_or_0(const char *s)
{
    time_t t = 0;

    if (s && time_parse(s, &t) < 0)
        t = 0;
    return t;
}

int sched_evict_loaded(const struct store_job_row *row)
{
    /* What the record would have given its own eviction: a job of these
     * fields only, borrowed from row for this call. */
    struct job j = {
        .id = row->id,
        .owner = (char *)row->owner,
        .submitted_by = (char *)row->submitted_by,
        .source = (char *)(row->source ? row->source : "local"),
        .cluster = (char *)row->cluster,
        .native_id = (char *)row->native_id,
        .start_time = time_or_0(row->start_time),
        .end_time = time_or_0(row->end_time),
        .req = {.nodes = row->nodes, .cpus_per_node = row->cpus_per_node},
    };

    if (job_state_parse(row->state, &j.state) < 0 ||
        !job_state_final(j.state)) {
        log_err("job=%lld: stored state '%s' is no final one; skipped",
                (long long)row->id, row->state);
        return 0;
    }
    if (sched_job_room(j.id) < 0 || gone_note(&j) < 0 ||
        sched_native_put(&j) < 0)
        return -1;
    jobtab_builder_note_id(&S.tab, j.id); /* read from the database */
    sched_charge(&j); /* fair share's past usage counts it still */
    return 0;
}

void sched_evict_tick(void)
{
    double now = time_mono(), wall = (double)time(NULL);
    size_t n = S.n_ended;

    /* what a turn or an answer may still name stays (may_go): the others
     * go while turns come and go, as they do under a steady load */
    if (now < S.evict_next || S.conf.job_memory_s <= 0)
        return;
    S.evict_next = now + EVICT_EVERY_S;
    while (S.ended_head < n &&
           S.ended[S.ended_head].since + S.conf.job_memory_s <= wall) {
        struct lazy e = S.ended[S.ended_head++];
        struct job *j = sched_job(e.id);
        if (!j)
            continue;
        if (!job_state_final(j->state)) { /* back in the queue */
            S.jf[j->id - 1] &= (uint8_t)~JF_ENDED;
            continue;
        }
        if (may_go(j)) {
            evict(j);
            continue;
        }
        /* not yet: looked at again with the next look */
        if (sched_grow((void **)&S.ended, &S.cap_ended, S.n_ended + 1,
                       sizeof(*S.ended)) == 0) {
            e.since = wall - S.conf.job_memory_s;
            S.ended[S.n_ended++] = e;
        } else {
            S.jf[j->id - 1] &= (uint8_t)~JF_ENDED;
        }
    }
    sched_lazy_compact(S.ended, &S.ended_head, &S.n_ended);
#ifdef __GLIBC__
    /* many let go (a wave of ends, a restart): their pages go back to
     * the system rather than wait in malloc's free lists; not more often
     * than TRIM_EVERY_S, as a trim walks the whole heap */
    if (S.n_evicted - S.trim_from >= TRIM_AFTER && now >= S.trim_next) {
        malloc_trim(0);
        S.trim_from = S.n_evicted;
        S.trim_next = now + TRIM_EVERY_S;
    }
#endif
}

void sched_evict_fini(void)
{
    free(S.ended);
    free(S.gone);
    hmap_fini(&S.gone_who);
    strv_fini(&S.gone_owner);
    strv_fini(&S.gone_by);
}
