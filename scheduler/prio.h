/* prio.h - multifactor priority: age, fair share from decayed past usage
 * per owner, job size, and the job's explicit priority. Pure: no threads,
 * no clock; the scheduler and the replay benchmark give the times. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_PRIO_H
#define LOOM_SCHEDULER_PRIO_H

#include <stddef.h>

struct prio_weights {
    double age, fairshare, size, priority; /* weights of the factors */
    double age_max_s;   /* the age factor reaches 1 at this age */
    double half_life_s; /* past usage counts half after this long */
};

/* Loom's defaults: age 1000, fairshare 1000, size 100, priority 1000,
 * age_max_s 7 days, half_life_s 7 days. */
void prio_weights_default(struct prio_weights *w);

/* Each factor in [0, 1] (priority in [-1, 1]) and the weighted total. */
struct prio_factors {
    double age, fairshare, size, priority, total;
};

/* Decayed usage (cpu-seconds) per owner. */
struct prio_usage;
struct prio_usage *prio_usage_create(double half_life_s); /* NULL: OOM */
void prio_usage_destroy(struct prio_usage *u);            /* NULL-safe */
/* Charge cpu_seconds to owner at time at (a job's end, or a slice of a
 * running job). 0, or -1 when out of memory. */
int prio_usage_add(struct prio_usage *u, const char *owner,
                   double cpu_seconds, double at);
/* The owner's share of all decayed usage at now, in [0, 1] (0 when nobody
 * used anything). */
double prio_usage_share(const struct prio_usage *u, const char *owner,
                        double now);
/* How many owners have any usage. */
size_t prio_usage_owners(const struct prio_usage *u);
/* Call cb for every owner with usage: its decayed usage at now
 * (cpu-seconds) and its share (as prio_usage_share). owner is borrowed
 * for the call; u must not change during the walk. */
void prio_usage_each(const struct prio_usage *u, double now,
                     void (*cb)(void *arg, const char *owner, double usage,
                                double share),
                     void *arg);

/* The factors of one job.
 * age = min(1, (now - submit) / age_max_s);
 * fairshare = 2^(-share * n_owners): 1 for an owner with no past usage,
 *   0.5 for one who used exactly an equal share (n_owners: owners with
 *   usage or waiting jobs, at least 1);
 * size = min(1, job_cpus / fabric_cpus);
 * priority = clamp(explicit_priority, -10000, 10000) / 10000. */
void prio_compute(const struct prio_weights *w, double now, double submit,
                  int explicit_priority, long job_cpus, long fabric_cpus,
                  double share, size_t n_owners, struct prio_factors *out);

#endif
