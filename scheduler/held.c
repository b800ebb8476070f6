/* held.c - what running jobs hold, kept beside the job flags, and the node
 * layouts of the clusters their node indices were found in: each cycle
 * draws the running jobs into its plan from these, without reading 16,000
 * job records and looking each node name up. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/held.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "scheduler/sched_state.h"

/* A cluster's nodes, in the order of the snapshot a cycle saw last. */
struct layout {
    char *cluster;
    struct scluster *sc; /* referenced: compared with the next one */
    unsigned id;
    int seen; /* in the fabric of the last held_layouts */
};

static struct {
    struct layout *v;
    size_t n, cap;
    unsigned next;
} L;

/* The slots: a job's is S.held_ix[id - 1] - 1 while it holds nodes (0:
 * none), so that an id costs 4 bytes, not a struct held, once its job
 * has ended; slots given back are taken again first. */
static struct {
    struct held *v;
    uint32_t *free;
    size_t n, cap, n_free, cap_free;
} H;

struct held *held_of(int64_t id)
{
    uint32_t ix = S.held_ix[id - 1];

    return ix ? &H.v[ix - 1] : NULL;
}

void held_fill(struct held *h, const struct job *j)
{
    *h = (struct held){
        .start = j->start_time, .walltime_s = j->req.walltime_s,
        .use = {j->req.cpus_per_node, j->req.gpus, j->req.memory_mb}};
}

void held_note(const struct job *j)
{
    uint32_t *ix = &S.held_ix[j->id - 1];

    if (!*ix) {
        if (H.n_free) {
            *ix = H.free[--H.n_free];
        } else if (H.n < UINT32_MAX &&
                   sched_grow((void **)&H.v, &H.cap, H.n + 1,
                              sizeof(*H.v)) == 0) {
            *ix = (uint32_t)++H.n;
        } else { /* its record stands in (sched_plan.c) */
            log_err("job=%lld: out of memory noting the nodes it holds",
                    (long long)j->id);
            return;
        }
    }
    held_fill(&H.v[*ix - 1], j);
}

void held_drop(int64_t id)
{
    uint32_t *ix = &S.held_ix[id - 1];

    if (!*ix)
        return;
    if (sched_grow((void **)&H.free, &H.cap_free, H.n_free + 1,
                   sizeof(*H.free)) == 0)
        H.free[H.n_free++] = *ix; /* else the slot is lost, not reused */
    *ix = 0;
}

static int same_nodes(const struct scluster *a, const struct scluster *b)
{
    if (a->n_nodes != b->n_nodes)
        return 0;
    for (size_t i = 0; i < a->n_nodes; i++)
        if (strcmp(a->nodes[i].name, b->nodes[i].name))
            return 0;
    return 1;
}

/* The layout id of a cluster's nodes: the same as last time while its
 * polls list the same names in the same order. 0 when out of memory. */
static unsigned layout_of(struct scluster *sc)
{
    struct layout *l = NULL;

    for (size_t i = 0; i < L.n && !l; i++)
        if (!strcmp(L.v[i].cluster, sc->name))
            l = &L.v[i];
    if (!l) {
        char *name = strdup(sc->name);
        if (!name || sched_grow((void **)&L.v, &L.cap, L.n + 1,
                                sizeof(*L.v)) < 0) {
            free(name);
            return 0;
        }
        l = &L.v[L.n++];
        *l = (struct layout){name, scluster_ref(sc), ++L.next, 1};
        return l->id;
    }
    l->seen = 1;
    if (l->sc != sc) {
        if (!same_nodes(l->sc, sc))
            l->id = ++L.next;
        scluster_unref(l->sc);
        l->sc = scluster_ref(sc);
    }
    return l->id;
}

void held_layouts(const struct fabric *f, unsigned *out)
{
    size_t keep = 0;

    for (size_t i = 0; i < L.n; i++)
        L.v[i].seen = 0;
    for (size_t c = 0; c < f->n; c++)
        out[c] = layout_of(f->snap->clusters[c]);
    for (size_t i = 0; i < L.n; i++) { /* a cluster gone by a reload */
        if (L.v[i].seen) {
            L.v[keep++] = L.v[i];
            continue;
        }
        free(L.v[i].cluster);
        scluster_unref(L.v[i].sc);
    }
    L.n = keep;
}

int held_known(const struct held *h, const unsigned *layouts, size_t n)
{
    return h->layout && h->cl < n && layouts[h->cl] == h->layout;
}

void held_remember(struct held *h, const unsigned *layouts, size_t c,
                   size_t idx)
{
    h->layout = layouts[c];
    h->cl = (uint32_t)c;
    h->idx = (uint32_t)idx;
}

void held_fini(void)
{
    free(H.v);
    free(H.free);
    memset(&H, 0, sizeof(H));
    for (size_t i = 0; i < L.n; i++) {
        free(L.v[i].cluster);
        scluster_unref(L.v[i].sc);
    }
    free(L.v);
    memset(&L, 0, sizeof(L));
}
