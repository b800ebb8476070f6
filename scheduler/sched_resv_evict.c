/* sched_resv_evict.c - ended reservations leave memory: resv_memory_s
 * after it ended (done or cancelled) a reservation is let go, and read
 * from PostgreSQL from then on (as an ended job after job_memory_s). What
 * an operation on it needs without the database stays: its state and
 * whether it is a maintenance reservation, a byte. Start-up notes the
 * long-ended ones so without loading them (store_resv_load reads them
 * light). */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/domain.h"
#include "core/log.h"
#include "core/snapshot.h"
#include "core/store_resv.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

#define EVICT_EVERY_S 1.0 /* how often the ended ones are looked at */

/* S.resv_gone[id - 1]: 0, or GONE with its state and GONE_MAINT */
enum { GONE_STATE = 0x0f, GONE = 0x40, GONE_MAINT = 0x80 };

_Static_assert((int)RESV_CANCELLED <= (int)GONE_STATE,
               "a reservation state does not fit its bits in S.resv_gone");

int sched_resv_gone(int64_t id, enum resv_state *st, int *maint)
{
    uint8_t g = id > 0 && (size_t)id <= S.cap_resv_gone ? S.resv_gone[id - 1]
                                                         : 0;

    if (!(g & GONE))
        return 0;
    *st = (enum resv_state)(g & GONE_STATE);
    *maint = !!(g & GONE_MAINT);
    return 1;
}

static int is_dirty(int64_t id)
{
    for (size_t i = 0; i < S.n_resv_dirty; i++)
        if (S.resv_dirty[i] == id)
            return 1;
    return 0;
}

/* May r leave memory now: ended resv_memory_s ago, written as it is, no
 * turn under way that writes it, and no twin in its cluster's system
 * (made or being removed) that an adaptor's answer would name? */
static int may_go(const struct resv *r, time_t now)
{
    return resv_state_final(r->state) && r->ended &&
           (double)r->ended + S.conf.resv_memory_s <= (double)now &&
           r->stored && r->turn <= S.turn_done && !r->native_asked &&
           !r->native_id && !is_dirty(r->id);
}

/* Note reservation id as gone, with its state and whether it is a
 * maintenance window: 0, or -1 when out of memory (it stays). */
static int note_gone(int64_t id, enum resv_state st, int maint)
{
    size_t need = (size_t)id, cap = S.cap_resv_gone;

    if (need > cap) {
        size_t grown = need > 2 * cap ? need + 64 : 2 * cap;
        uint8_t *g = realloc(S.resv_gone, grown);
        if (!g)
            return -1;
        for (size_t i = cap; i < grown; i++)
            g[i] = 0;
        S.resv_gone = g;
        S.cap_resv_gone = grown;
    }
    S.resv_gone[id - 1] =
        (uint8_t)(GONE | (unsigned)st | (maint ? GONE_MAINT : 0));
    return 0;
}

/* What a reservation that left memory leaves behind: its byte, the
 * highest id that left (noted before the list without it is published),
 * the count. */
static int let_go(int64_t id, enum resv_state st, int maint)
{
    if (note_gone(id, st, maint) < 0)
        return -1;
    resv_evicted_note(id);
    S.n_resv_evicted++;
    return 0;
}

void sched_resv_evict_tick(void)
{
    double mono = time_mono();
    time_t now = time(NULL);
    size_t k = 0, n = S.n_resv;

    if (mono < S.resv_evict_next || S.conf.resv_memory_s <= 0)
        return;
    S.resv_evict_next = mono + EVICT_EVERY_S;
    for (size_t i = 0; i < n; i++) {
        struct resv *r = S.resv[i];
        if (!may_go(r, now) ||
            let_go(r->id, r->state,
                   !strcmp(r->purpose, "maintenance")) < 0) {
            S.resv[k++] = r;
            continue;
        }
        resv_destroy(r);
    }
    if (k < n) {
        S.n_resv = k;
        S.resv_changed = 1;
    }
}

int sched_resv_evict_loaded(const struct store_resv_row *row)
{
    int st = domain_find(&domain_resv_states, row->state);

    if (st < 0 || !resv_state_final((enum resv_state)st)) {
        log_err("reservation=%lld: stored state '%s' is no final one; "
                "skipped", (long long)row->id, row->state);
        return 0;
    }
    if (let_go(row->id, (enum resv_state)st, row->maint) < 0)
        return -1;
    /* ids go on after it, as after one loaded in full */
    if (row->id >= S.next_resv)
        S.next_resv = row->id + 1;
    return 0;
}

void sched_resv_evict_fini(void)
{
    free(S.resv_gone);
    S.resv_gone = NULL;
    S.cap_resv_gone = 0;
}
