/* export_sched.c - loomctl export: how the job is to be scheduled (its
 * priority, whether it is submitted again, its hold, its dependency) as
 * each system's directives write it, or why a system cannot carry it. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/export.h"
#include "core/ctl/loomctl.h"
#include "core/depend.h"

/* Each system's range of -p (Slurm's --nice is Loom's whole range). */
static const struct {
    const char *format, *sys;
    long min, max;
} prio_range[] = {
    {"gridengine", "Grid Engine's -p", -1023, 1024},
    {"pbs", "PBS's -p", -1024, 1023},
};

/* One job waited for as the system names it: 12, or an array's task as
 * 12_7 (Slurm) or 12[7] (PBS). */
static int put_job(char *b, size_t n, const struct dep *d, int pbs)
{
    if (d->task < 0)
        return snprintf(b, n, "%lld", (long long)d->job);
    return snprintf(b, n, pbs ? "%lld[%ld]" : "%lld_%ld",
                    (long long)d->job, d->task);
}

/* Grid Engine's -hold_jid waits for jobs to end, however they end: only
 * afterany of whole jobs, all of them, can be written. */
static int sge_depend(struct exp *e, const struct dep_list *l, char *b,
                      size_t n)
{
    size_t o = 0;

    for (size_t i = 0; i < l->n; i++) {
        const struct dep *d = &l->v[i];

        if (d->type != DEP_AFTERANY || d->task >= 0 || (l->any && l->n > 1))
            return ctl_fail("job %s: its dependency '%s' cannot be written "
                            "as Grid Engine's -hold_jid, which waits for "
                            "whole jobs to end, all of them, however they "
                            "end (afterany)", e->id, e->dependency);
        o += (size_t)snprintf(b + o, o < n ? n - o : 0, "%s", o ? "," : "");
        o += (size_t)put_job(b + o, o < n ? n - o : 0, d, 0);
    }
    return o < n ? -1 : ctl_fail("job %s: its dependency is too long to "
                                 "write", e->id);
}

/* PBS's -W depend=TYPE:ID[:ID],TYPE:...: all of them, no singleton. */
static int pbs_depend(struct exp *e, const struct dep_list *l, char *b,
                      size_t n)
{
    size_t o = 0;

    for (size_t i = 0; i < l->n; i++) {
        const struct dep *d = &l->v[i];
        int same = i && l->v[i - 1].type == d->type;

        if (d->type == DEP_SINGLETON || (l->any && l->n > 1))
            return ctl_fail("job %s: its dependency '%s' cannot be written "
                            "as PBS's -W depend=, which has no %s", e->id,
                            e->dependency, l->any ? "'any of' ('?')"
                                                  : "singleton");
        if (!same)
            o += (size_t)snprintf(b + o, o < n ? n - o : 0, "%s%s",
                                  i ? "," : "", dep_type_name(d->type));
        o += (size_t)snprintf(b + o, o < n ? n - o : 0, ":");
        o += (size_t)put_job(b + o, o < n ? n - o : 0, d, 1);
    }
    return o < n ? -1 : ctl_fail("job %s: its dependency is too long to "
                                 "write", e->id);
}

int export_sched_in(struct exp *e, const char *format)
{
    struct loom_error err = {0};
    struct dep_list l = {0};
    char b[8192];
    int rc = -1;

    for (size_t i = 0; i < sizeof(prio_range) / sizeof(*prio_range); i++)
        if (!strcmp(format, prio_range[i].format) &&
            (e->priority < prio_range[i].min ||
             e->priority > prio_range[i].max))
            return ctl_fail("job %s: its priority %ld cannot be written as "
                            "%s (%ld to %ld)", e->id, e->priority,
                            prio_range[i].sys, prio_range[i].min,
                            prio_range[i].max);
    if (!e->dependency || !strcmp(format, "slurm"))
        return -1; /* Slurm's syntax is Loom's */
    if (dep_parse(e->dependency, &l, &err) < 0)
        return ctl_fail("job %s: its dependency '%s': %s", e->id,
                        e->dependency, err.message);
    rc = !strcmp(format, "pbs") ? pbs_depend(e, &l, b, sizeof(b))
                                : sge_depend(e, &l, b, sizeof(b));
    dep_list_fini(&l);
    if (rc < 0 && !(e->dep_w = strdup(b)))
        return ctl_fail("out of memory");
    return rc;
}

void export_sched_out(const struct exp *e, const char *format)
{
    const char *prefix = !strcmp(format, "pbs") ? "#PBS" : "#$";

    if (!strcmp(format, "slurm")) {
        if (e->priority) /* --nice N is priority -N */
            printf("#SBATCH --nice=%ld\n", -e->priority);
        if (e->no_requeue)
            puts("#SBATCH --no-requeue");
        if (e->held)
            puts("#SBATCH --hold");
        export_put_opt("#SBATCH", "--dependency", "=", e->dependency);
        return;
    }
    if (e->priority)
        printf("%s -p %ld\n", prefix, e->priority);
    if (e->no_requeue)
        printf("%s -r n\n", prefix);
    if (e->held)
        printf("%s -h\n", prefix);
    if (e->dep_w && !strcmp(format, "pbs"))
        printf("#PBS -W depend=%s\n", e->dep_w);
    else if (e->dep_w)
        printf("#$ -hold_jid %s\n", e->dep_w);
}
