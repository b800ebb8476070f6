/* prio.c - multifactor priority: decayed usage per owner and the factors. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/prio.h"

#include <math.h>
#include <stdlib.h>

#include "core/hmap.h"

/* A decayed sum: its value at time t; at a later time x it is worth
 * value * 2^(-(x - t) / half_life). Every owner and the total keep one,
 * each referred to its own latest charge, so a share is O(1). */
struct decayed {
    double value, t;
};

struct prio_usage {
    double half_life_s; /* <= 0: no decay */
    struct hmap owners; /* owner -> struct decayed */
    struct decayed total;
    size_t n_owners;
};

void prio_weights_default(struct prio_weights *w)
{
    w->age = 1000;
    w->fairshare = 1000;
    w->size = 100;
    w->priority = 1000;
    w->age_max_s = 7 * 86400.0;
    w->half_life_s = 7 * 86400.0;
}

/* The factor that carries a value from time from to time to. */
static double decay(double half_life_s, double from, double to)
{
    if (half_life_s <= 0)
        return 1;
    return exp2(-(to - from) / half_life_s);
}

static void decayed_add(struct decayed *d, double half_life_s, double amount,
                        double at)
{
    if (d->value == 0) {
        d->value = amount;
        d->t = at;
    } else if (at >= d->t) {
        d->value = d->value * decay(half_life_s, d->t, at) + amount;
        d->t = at;
    } else { /* a charge from the past counts as already decayed */
        d->value += amount * decay(half_life_s, at, d->t);
    }
}

struct prio_usage *prio_usage_create(double half_life_s)
{
    struct prio_usage *u = calloc(1, sizeof(*u));

    if (!u)
        return NULL;
    u->half_life_s = half_life_s;
    hmap_init(&u->owners);
    return u;
}

void prio_usage_destroy(struct prio_usage *u)
{
    if (!u)
        return;
    hmap_fini_values(&u->owners, free);
    free(u);
}

int prio_usage_add(struct prio_usage *u, const char *owner, double cpu_seconds,
                   double at)
{
    struct decayed *d;

    if (!(cpu_seconds > 0) || !isfinite(cpu_seconds) || !isfinite(at))
        return 0; /* nothing to charge */
    d = hmap_get(&u->owners, owner);
    if (!d) {
        d = calloc(1, sizeof(*d));
        if (!d)
            return -1;
        if (hmap_put(&u->owners, owner, d) < 0) {
            free(d);
            return -1;
        }
        u->n_owners++;
    }
    decayed_add(d, u->half_life_s, cpu_seconds, at);
    decayed_add(&u->total, u->half_life_s, cpu_seconds, at);
    return 0;
}

/* The part of all usage that d (an owner's) is, at now. */
static double share_of(const struct prio_usage *u, const struct decayed *d,
                       double now)
{
    double total, mine;

    if (!(u->total.value > 0))
        return 0;
    /* Both decay by the same factor up to now; refer both to now anyway so
     * that the ratio stays exact whatever the order of the charges. */
    total = u->total.value * decay(u->half_life_s, u->total.t, now);
    mine = d->value * decay(u->half_life_s, d->t, now);
    if (!(total > 0))
        return 0;
    mine /= total;
    return mine < 0 ? 0 : mine > 1 ? 1 : mine;
}

double prio_usage_share(const struct prio_usage *u, const char *owner,
                        double now)
{
    const struct decayed *d = hmap_get(&u->owners, owner);

    return d ? share_of(u, d, now) : 0;
}

size_t prio_usage_owners(const struct prio_usage *u)
{
    return u->n_owners;
}

void prio_usage_each(const struct prio_usage *u, double now,
                     void (*cb)(void *arg, const char *owner, double usage,
                                double share),
                     void *arg)
{
    for (size_t i = 0; i < u->owners.cap; i++) {
        const struct decayed *d = hmap_slot_value(&u->owners, i);
        const char *owner = hmap_slot_key(&u->owners, i);
        if (d && owner)
            cb(arg, owner, d->value * decay(u->half_life_s, d->t, now),
               share_of(u, d, now));
    }
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

void prio_compute(const struct prio_weights *w, double now, double submit,
                  int explicit_priority, long job_cpus, long fabric_cpus,
                  double share, size_t n_owners, struct prio_factors *out)
{
    double n = n_owners ? (double)n_owners : 1;

    if (w->age_max_s > 0)
        out->age = clamp((now - submit) / w->age_max_s, 0, 1);
    else
        out->age = 1;
    out->fairshare = exp2(-clamp(share, 0, 1) * n);
    out->size = fabric_cpus > 0
                    ? clamp((double)job_cpus / (double)fabric_cpus, 0, 1)
                    : 0;
    out->priority = clamp(explicit_priority, -10000, 10000) / 10000.0;
    out->total = w->age * out->age + w->fairshare * out->fairshare +
                 w->size * out->size + w->priority * out->priority;
}
