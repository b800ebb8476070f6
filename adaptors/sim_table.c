/* sim_table.c - the sim adaptor's jobs: report form, hash, heap and lists. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/sim_table.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FIRST_SIZE 64

void sim_job_free(struct sim_job *j)
{
    if (!j)
        return;
    free(j->name);
    free(j->owner);
    free(j->nodes);
    free(j);
}

static int dup_opt(char **out, const char *s)
{
    *out = NULL;
    return s && !(*out = strdup(s)) ? -1 : 0;
}

static int job_reason(const struct sim_job *j, char **out)
{
    char buf[48];

    *out = NULL;
    if (j->state == SIM_CANCELLED)
        return dup_opt(out, "cancelled");
    if (j->state == SIM_FAILED && j->killed)
        return dup_opt(out, "walltime exceeded");
    if (j->state != SIM_FAILED)
        return 0;
    snprintf(buf, sizeof(buf), "exited with code %d", j->exit_code);
    return dup_opt(out, buf);
}

int sim_job_fill(const struct sim_job *j, struct cl_job *out)
{
    static const char *const names[] = {
        [SIM_RUNNING] = "running",     [SIM_SUSPENDED] = "suspended",
        [SIM_COMPLETED] = "completed", [SIM_FAILED] = "failed",
        [SIM_CANCELLED] = "cancelled",
    };
    char buf[32];

    snprintf(buf, sizeof(buf), "sim-%" PRId64, j->loom_id);
    out->loom_id = j->loom_id;
    /* whole seconds; a sum of doubles a hair under one is that one */
    out->submit_time = out->start_time = (time_t)(j->start_wall + 1e-6);
    out->end_time = sim_job_over(j) ? (time_t)(j->end_wall + 1e-6) : 0;
    out->has_exit_code = j->state == SIM_COMPLETED || j->state == SIM_FAILED;
    out->exit_code = out->has_exit_code ? j->exit_code : 0;
    if (!(out->native_id = strdup(buf)) ||
        !(out->state = strdup(names[j->state])) ||
        dup_opt(&out->name, j->name) < 0 ||
        dup_opt(&out->owner, j->owner) < 0 || job_reason(j, &out->reason) < 0)
        return -1;
    for (size_t i = 0; i < j->n_nodes; i++) {
        snprintf(buf, sizeof(buf), "n%" PRIu32, j->nodes[i] + 1);
        if (strv_push(&out->nodes, buf) < 0)
            return -1;
    }
    return 0;
}

int sim_table_init(struct sim_table *t)
{
    t->buckets = calloc(FIRST_SIZE, sizeof(*t->buckets));
    t->heap = malloc(FIRST_SIZE * sizeof(*t->heap));
    if (!t->buckets || !t->heap)
        return -1;
    t->n_buckets = FIRST_SIZE;
    t->heap_cap = FIRST_SIZE;
    return 0;
}

void sim_table_fini(struct sim_table *t)
{
    for (size_t i = 0; t->buckets && i < t->n_buckets; i++) {
        struct sim_job *j = t->buckets[i], *next;
        for (; j; j = next) {
            next = j->hash_next;
            sim_job_free(j);
        }
    }
    free(t->buckets);
    free(t->heap);
    *t = (struct sim_table){0};
}

static size_t slot(int64_t id, size_t n_buckets)
{
    uint64_t h = (uint64_t)id * UINT64_C(0x9E3779B97F4A7C15);

    return (size_t)(h ^ (h >> 32)) & (n_buckets - 1);
}

struct sim_job *sim_table_find(const struct sim_table *t, int64_t loom_id)
{
    struct sim_job *j = t->buckets[slot(loom_id, t->n_buckets)];

    while (j && j->loom_id != loom_id)
        j = j->hash_next;
    return j;
}

static int rehash(struct sim_table *t)
{
    size_t n = t->n_buckets * 2;
    struct sim_job **b = calloc(n, sizeof(*b));

    if (!b)
        return -1;
    for (size_t i = 0; i < t->n_buckets; i++) {
        struct sim_job *j = t->buckets[i], *next;
        for (; j; j = next) {
            size_t k = slot(j->loom_id, n);
            next = j->hash_next;
            j->hash_next = b[k];
            b[k] = j;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->n_buckets = n;
    return 0;
}

int sim_table_reserve(struct sim_table *t)
{
    if (t->n_jobs + 1 > t->heap_cap) {
        size_t cap = t->heap_cap * 2;
        struct sim_job **h = realloc(t->heap, cap * sizeof(*h));
        if (!h)
            return -1;
        t->heap = h;
        t->heap_cap = cap;
    }
    if (t->n_jobs + 1 > t->n_buckets && rehash(t) < 0)
        return -1;
    return 0;
}

void sim_table_insert(struct sim_table *t, struct sim_job *j)
{
    size_t k = slot(j->loom_id, t->n_buckets);

    j->heap_pos = SIM_NOT_QUEUED;
    j->hash_next = t->buckets[k];
    t->buckets[k] = j;
    t->n_jobs++;
}

static void unhash(struct sim_table *t, struct sim_job *j)
{
    struct sim_job **p = &t->buckets[slot(j->loom_id, t->n_buckets)];

    while (*p != j)
        p = &(*p)->hash_next;
    *p = j->hash_next;
    t->n_jobs--;
}

static void heap_put(struct sim_table *t, size_t i, struct sim_job *j)
{
    t->heap[i] = j;
    j->heap_pos = i;
}

static void sift_up(struct sim_table *t, size_t i)
{
    struct sim_job *j = t->heap[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!(j->end < t->heap[parent]->end))
            break;
        heap_put(t, i, t->heap[parent]);
        i = parent;
    }
    heap_put(t, i, j);
}

static void sift_down(struct sim_table *t, size_t i)
{
    struct sim_job *j = t->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= t->heap_n)
            break;
        if (c + 1 < t->heap_n && t->heap[c + 1]->end < t->heap[c]->end)
            c++;
        if (!(t->heap[c]->end < j->end))
            break;
        heap_put(t, i, t->heap[c]);
        i = c;
    }
    heap_put(t, i, j);
}

void sim_table_queue(struct sim_table *t, struct sim_job *j)
{
    heap_put(t, t->heap_n, j);
    sift_up(t, t->heap_n++);
}

void sim_table_unqueue(struct sim_table *t, struct sim_job *j)
{
    size_t i = j->heap_pos;
    struct sim_job *last = t->heap[--t->heap_n];

    j->heap_pos = SIM_NOT_QUEUED;
    if (last == j)
        return;
    heap_put(t, i, last);
    sift_up(t, i);
    sift_down(t, last->heap_pos);
}

struct sim_job *sim_table_due(struct sim_table *t, double now)
{
    struct sim_job *j;

    if (!t->heap_n || t->heap[0]->end > now)
        return NULL;
    j = t->heap[0];
    sim_table_unqueue(t, j);
    return j;
}

void sim_table_mark(struct sim_table *t, struct sim_job *j)
{
    if (j->changed)
        return;
    j->changed = 1;
    j->changed_next = NULL;
    if (t->changed_last)
        t->changed_last->changed_next = j;
    else
        t->changed_first = j;
    t->changed_last = j;
}

static void retain(struct sim_table *t, struct sim_job *j, double now)
{
    j->retained = 1;
    j->reported = now;
    j->retained_next = NULL;
    if (t->retained_last)
        t->retained_last->retained_next = j;
    else
        t->retained_first = j;
    t->retained_last = j;
}

void sim_table_reported(struct sim_table *t, double now)
{
    struct sim_job *j, *next;

    for (j = t->changed_first; j; j = next) {
        next = j->changed_next;
        j->changed = 0;
        j->changed_next = NULL;
        if (sim_job_over(j) && !j->retained)
            retain(t, j, now);
    }
    t->changed_first = t->changed_last = NULL;
}

void sim_table_expire(struct sim_table *t, double before)
{
    struct sim_job *j;

    /* A retained job is over, so it never changes again: it is on neither
     * the heap nor the changed list, and only the hash still holds it. */
    while ((j = t->retained_first) && j->reported <= before) {
        t->retained_first = j->retained_next;
        if (!t->retained_first)
            t->retained_last = NULL;
        unhash(t, j);
        sim_job_free(j);
    }
}
