/* sched_conf.c - the [scheduler] section of loom.conf. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/sched_conf.h"

#include <stdio.h>
#include <string.h>

#include "core/limits.h"

static const char *const backfills[] = {"none", "easy", "conservative"};
static const char *const policies[] = {"fifo", "priority"};

static int pick(struct conf_section *sec, const char *key, const char *def,
                const char *const *names, int n, int *out,
                struct loom_error *err)
{
    const char *v;

    if (sec && conf_get_str(sec, key, def, &v, err) < 0)
        return -1;
    if (!sec)
        v = def;
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return 0;
        }
    return loom_error_set(err, LOOM_EINVAL, "%s:%d: [scheduler] %s must be "
                          "%s%s%s%s%s (got '%s')", sec->file, sec->line, key,
                          names[0], n > 1 ? " or " : "", n > 1 ? names[1] : "",
                          n > 2 ? " or " : "", n > 2 ? names[2] : "", v);
}

/* One [limits] section into l (from def: what it does not say). */
static int limits_read(struct conf_section *sec, const struct sched_limits *def,
                       struct sched_limits *l, struct loom_error *err)
{
    if (conf_get_long(sec, "max_pending_jobs", def->max_pending_jobs, 0,
                      100000000, &l->max_pending_jobs, err) < 0 ||
        conf_get_long(sec, "max_running_jobs", def->max_running_jobs, 0,
                      100000000, &l->max_running_jobs, err) < 0 ||
        conf_get_long(sec, "max_submits_per_minute",
                      def->max_submits_per_minute, 0,
                      LOOM_SUBMITS_PER_MINUTE_MAX,
                      &l->max_submits_per_minute, err) < 0 ||
        conf_check_unused(sec, err) < 0)
        return -1;
    return 0;
}

/* [limits] for every account, then each [limits ACCOUNT] over it; [limits
 * vo=GROUP] and [limits gateway=NAME] alone (an account's limits are not a
 * VO's). */
static int limits_all(struct conf *c, struct sched_conf *out,
                      struct loom_error *err)
{
    struct conf_section *all = conf_section(c, "limits", "");
    const struct sched_limits none = {0, 0, 0};

    if (all && limits_read(all, &none, &out->limits, err) < 0)
        return -1;
    for (size_t i = 0; i < c->n_sections; i++) {
        struct conf_section *s = &c->sections[i];
        size_t n = out->n_acct_limits;
        if (strcmp(s->kind, "limits") != 0 || !*s->name)
            continue;
        if (n == LOOM_LIMITS_ACCOUNTS_MAX)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: more than %d "
                                  "[limits ACCOUNT] sections", s->file,
                                  s->line, LOOM_LIMITS_ACCOUNTS_MAX);
        snprintf(out->acct_limits[n].name, sizeof(out->acct_limits[n].name),
                 "%s", s->name);
        if (limits_read(s, strchr(s->name, '=') ? &none : &out->limits,
                        &out->acct_limits[n].l, err) < 0)
            return -1;
        out->n_acct_limits++;
    }
    return 0;
}

const struct sched_limits *sched_limits_of(const struct sched_conf *conf,
                                           const char *name)
{
    static const struct sched_limits none = {0, 0, 0};

    for (size_t i = 0; name && i < conf->n_acct_limits; i++)
        if (!strcmp(conf->acct_limits[i].name, name))
            return &conf->acct_limits[i].l;
    return name && strchr(name, '=') ? &none : &conf->limits;
}

int sched_conf_read(struct conf *c, struct sched_conf *out,
                    struct loom_error *err)
{
    struct conf_section *sec = conf_section(c, "scheduler", NULL);
    struct prio_weights *w = &out->weights;
    int policy, backfill;
    long depth = 1000, width = 32, max_prio = 0;
    double gather_ms = 5;

    memset(out, 0, sizeof(*out));
    prio_weights_default(w);
    out->interval_s = 5;
    out->plan.overdue_s = 60;
    out->kill_invalid_depend = 1;
    out->job_memory_s = 300;
    out->resv_memory_s = 300;
    if (pick(sec, "policy", "fifo", policies, 2, &policy, err) < 0 ||
        pick(sec, "backfill", "easy", backfills, 3, &backfill, err) < 0)
        return -1;
    if (sec &&
        (conf_get_long(sec, "depth", 1000, 1, 10000000, &depth, err) < 0 ||
         conf_get_long(sec, "search_width", 32, 0, 10000000, &width,
                       err) < 0 ||
         conf_get_double(sec, "interval_s", 5, 0.01, 3600, &out->interval_s,
                         err) < 0 ||
         conf_get_double(sec, "gather_ms", 5, 0, 1000, &gather_ms,
                         err) < 0 ||
         conf_get_double(sec, "overdue_s", 60, 1, 86400,
                         &out->plan.overdue_s, err) < 0 ||
         conf_get_double(sec, "weight_age", w->age, 0, 1e9, &w->age, err) < 0 ||
         conf_get_double(sec, "weight_fairshare", w->fairshare, 0, 1e9,
                         &w->fairshare, err) < 0 ||
         conf_get_double(sec, "weight_size", w->size, 0, 1e9, &w->size,
                         err) < 0 ||
         conf_get_double(sec, "weight_priority", w->priority, 0, 1e9,
                         &w->priority, err) < 0 ||
         conf_get_double(sec, "age_max_s", w->age_max_s, 1, 1e9,
                         &w->age_max_s, err) < 0 ||
         conf_get_double(sec, "half_life_s", w->half_life_s, 1, 1e10,
                         &w->half_life_s, err) < 0 ||
         conf_get_long(sec, "max_user_priority", 0, -LOOM_JOB_PRIORITY_MAX,
                       LOOM_JOB_PRIORITY_MAX, &max_prio, err) < 0 ||
         conf_get_bool(sec, "kill_invalid_depend", 1,
                       &out->kill_invalid_depend, err) < 0 ||
         conf_get_double(sec, "job_memory_s", 300, 0, 1e9,
                         &out->job_memory_s, err) < 0 ||
         conf_get_double(sec, "resv_memory_s", 300, 0, 1e9,
                         &out->resv_memory_s, err) < 0 ||
         conf_check_unused(sec, err) < 0))
        return -1;
    out->policy = (enum sched_policy)policy;
    out->plan.backfill = (enum plan_backfill)backfill;
    out->plan.depth = (size_t)depth;
    out->plan.width = (size_t)width;
    out->max_user_priority = (int)max_prio;
    out->gather_s = gather_ms / 1000;
    return limits_all(c, out, err);
}

const char *sched_policy_name(const struct sched_conf *sc)
{
    static const char *const names[2][3] = {
        {"fifo", "fifo+easy", "fifo+conservative"},
        {"priority", "priority+easy", "priority+conservative"},
    };
    return names[sc->policy][sc->plan.backfill];
}
