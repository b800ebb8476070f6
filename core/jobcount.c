/* jobcount.c - jobs by state, cluster, source and account; the accounts
 * beyond the top N folded into "other" when shown. */
/* SPDX-License-Identifier: MIT */
#include "core/jobcount.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "core/hmap.h"
#include "core/vec.h"

/* One (state, cluster, source, account) and its jobs. Kept when it falls
 * to zero, so that a series does not come and go. */
struct jc {
    int state; /* index in domain_job_states */
    char *cluster, *source, *account;
    long n;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct hmap counts; /* key -> struct jc * */
static atomic_size_t top_n = 20;

static void move(const struct jview *v, long d)
{
    int st = v ? domain_find(&domain_job_states, v->state) : -1;
    const char *cl = v && v->cluster ? v->cluster : "";
    char key[1024];
    struct jc *c;

    if (st < 0)
        return;
    snprintf(key, sizeof(key), "%d\x1f%s\x1f%s\x1f%s", st, cl, v->source,
             v->account);
    c = hmap_get(&counts, key);
    if (!c && (c = calloc(1, sizeof(*c)))) {
        c->state = st;
        c->cluster = strdup(cl);
        c->source = strdup(v->source);
        c->account = strdup(v->account);
        if (!c->cluster || !c->source || !c->account ||
            hmap_put(&counts, key, c) < 0) {
            free(c->cluster);
            free(c->source);
            free(c->account);
            free(c);
            c = NULL;
        }
    }
    if (c)
        c->n += d;
}

void jobcount_move(const struct jview *old, const struct jview *new_view)
{
    if (old == new_view)
        return;
    pthread_mutex_lock(&lock);
    move(old, -1);
    move(new_view, +1);
    pthread_mutex_unlock(&lock);
}

void jobcount_top_set(size_t n)
{
    atomic_store(&top_n, n);
}

/* An account and all its jobs; a combination shown and its counts. */
struct acct {
    const char *name;
    long n;
};
struct combo {
    const char *cluster, *source, *account;
    long n[DOMAIN_JOB_STATES_N];
};

static int by_jobs(const void *a, const void *b)
{
    const struct acct *x = *(struct acct *const *)a;
    const struct acct *y = *(struct acct *const *)b;

    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int by_labels(const void *a, const void *b)
{
    const struct combo *x = *(struct combo *const *)a;
    const struct combo *y = *(struct combo *const *)b;
    int c = strcmp(x->cluster, y->cluster);

    if (!c)
        c = strcmp(x->source, y->source);
    return c ? c : strcmp(x->account, y->account);
}

/* Every value of m (a map of malloc'd values) into a new array *out. */
static size_t values(struct hmap *m, void ***out)
{
    size_t n = 0;

    *out = calloc(m->n + 1, sizeof(**out));
    for (size_t i = 0; *out && i < m->cap; i++)
        if (hmap_slot_value(m, i))
            (*out)[n++] = hmap_slot_value(m, i);
    return *out ? n : 0;
}

/* Fold the counts into combinations: accounts, then (cluster, source,
 * account or "other"). 0, or -1 when out of memory. */
static int fold(struct hmap *accts, struct hmap *combos)
{
    size_t top = atomic_load(&top_n), n;
    struct acct **all = NULL;
    char key[1024];
    int rc = -1;

    for (size_t i = 0; i < counts.cap; i++) {
        struct jc *c = hmap_slot_value(&counts, i);
        struct acct *a;
        if (!c)
            continue;
        if (!(a = hmap_get(accts, c->account))) {
            if (!(a = calloc(1, sizeof(*a))) ||
                hmap_put(accts, c->account, a) < 0) {
                free(a);
                return -1;
            }
            a->name = c->account;
        }
        a->n += c->n;
    }
    n = values(accts, (void ***)&all);
    if (!all)
        return -1;
    qsort(all, n, sizeof(*all), by_jobs);
    for (size_t i = top; i < n; i++)
        all[i]->name = NULL; /* folded */
    for (size_t i = 0; i < counts.cap; i++) {
        struct jc *c = hmap_slot_value(&counts, i);
        struct acct *a = c ? hmap_get(accts, c->account) : NULL;
        const char *name = a && a->name ? a->name : "other";
        struct combo *k;
        if (!c)
            continue;
        snprintf(key, sizeof(key), "%s\x1f%s\x1f%s", c->cluster, c->source,
                 name);
        if (!(k = hmap_get(combos, key))) {
            if (!(k = calloc(1, sizeof(*k))) ||
                hmap_put(combos, key, k) < 0) {
                free(k);
                goto out;
            }
            *k = (struct combo){c->cluster, c->source, name, {0}};
        }
        k->n[c->state] += c->n;
    }
    rc = 0;
out:
    free(all);
    return rc;
}

void jobcount_render(struct metrics_out *o)
{
    struct hmap accts, combos;
    struct combo **all = NULL;
    size_t n = 0;

    hmap_init(&accts);
    hmap_init(&combos);
    metrics_family(o, "loom_jobs", "gauge", "Jobs of the fabric by state, "
                   "cluster (empty before it is placed), source and account "
                   "(the accounts beyond [loomd] metrics_accounts with the "
                   "most jobs as \"other\").");
    pthread_mutex_lock(&lock);
    if (fold(&accts, &combos) < 0 ||
        ((n = values(&combos, (void ***)&all)), !all)) {
        o->oom = 1;
        goto out;
    }
    qsort(all, n, sizeof(*all), by_labels);
    for (size_t i = 0; i < n; i++)
        for (size_t s = 0; s < DOMAIN_JOB_STATES_N; s++) {
            metrics_printf(o, "loom_jobs{state=\"%s\",cluster=\"",
                           domain_job_states.names[s]);
            metrics_label(o, all[i]->cluster);
            metrics_printf(o, "\",source=\"");
            metrics_label(o, all[i]->source);
            metrics_printf(o, "\",account=\"");
            metrics_label(o, all[i]->account);
            metrics_printf(o, "\"} %ld\n", all[i]->n[s]);
        }
out:
    pthread_mutex_unlock(&lock);
    free(all);
    hmap_fini_values(&accts, free);
    hmap_fini_values(&combos, free);
}

static void jc_free(void *p)
{
    struct jc *c = p;

    free(c->cluster);
    free(c->source);
    free(c->account);
    free(c);
}

void jobcount_reset(void)
{
    pthread_mutex_lock(&lock);
    hmap_fini_values(&counts, jc_free);
    hmap_init(&counts);
    pthread_mutex_unlock(&lock);
}
