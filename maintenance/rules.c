/* rules.c - recovery rules: a mismatch a rule covers becomes a
 * maintenance request, within the rule's limits and back-off. */
/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/timeutil.h"
#include "maintenance/maint_state.h"

#define BACKOFF_MAX_S 86400.0
#define RETRY_S 60.0 /* after the scheduler found no window */

/* Why the rule makes no request now (once per reason in the event log). */
static void hold(struct mism *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void hold(struct mism *x, const char *fmt, ...)
{
    char why[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (x->held && !strcmp(x->held, why))
        return;
    free(x->held);
    x->held = strdup(why);
    maint_event("info", x->node, "rule %s: no request yet: %s",
                x->rule->name, why);
}

/* The back-off after this node's failed requests with this action: until
 * when the rule waits (0: it need not). */
static double backoff_until(const struct mism *x)
{
    size_t cl = strcspn(x->node, "/");
    double until = 0, wait = x->rule->backoff_s;
    int fails = 0;

    for (size_t i = 0; i < M.n_req; i++) {
        const struct mreq *r = M.req[i];
        int on = 0;
        if (strcmp(r->action, x->rule->action) || strlen(r->cluster) != cl ||
            strncmp(r->cluster, x->node, cl))
            continue;
        for (size_t k = 0; k < r->nodes.n && !on; k++)
            on = !strcmp(r->nodes.v[k], x->node + cl + 1);
        if (!on)
            continue;
        if (r->state == MS_DONE)
            fails = 0;
        else if (r->state == MS_FAILED) {
            double w = wait;
            fails++;
            for (int k = 1; k < fails && w < BACKOFF_MAX_S; k++)
                w *= 2; /* doubled per failure in a row */
            until = (double)r->since + (w < BACKOFF_MAX_S ? w : BACKOFF_MAX_S);
        }
    }
    return fails ? until : 0;
}

/* How many of the cluster's nodes may be in maintenance at once. */
static size_t limit_of(const struct maint_rule *rule, struct snapshot *s,
                       const char *cluster)
{
    struct scluster *c = snapshot_cluster(s, cluster);
    size_t n = c ? c->n_nodes : 0, lim = (size_t)-1;

    if (rule->max_nodes)
        lim = (size_t)rule->max_nodes;
    if (rule->max_percent) {
        size_t p = n * (size_t)rule->max_percent / 100;
        if (p < 1)
            p = 1;
        if (p < lim)
            lim = p;
    }
    return lim;
}

static void make_request(struct mism *x, double now)
{
    const struct maint_rule *rule = x->rule;
    const struct maint_action *a = maint_conf_action(&M.conf, rule->action);
    size_t cl = strcspn(x->node, "/");
    struct mreq *r = calloc(1, sizeof(*r));
    struct loom_error err;
    char reason[512], *gt = json_dumps(x->goal, JSON_ENCODE_ANY),
                      *at = x->actual ? json_dumps(x->actual, JSON_ENCODE_ANY)
                                      : NULL;

    snprintf(reason, sizeof(reason), "%s: goal %s, actual %s", x->attr,
             gt ? gt : "?", at ? at : "unknown");
    free(gt);
    free(at);
    if (!r || !(r->cluster = strndup(x->node, cl)) ||
        strv_push(&r->nodes, x->node + cl + 1) < 0 ||
        !(r->action = strdup(rule->action)) || !(r->reason = strdup(reason)) ||
        !(r->owner = strdup("loom")) || !(r->rule = strdup(rule->name))) {
        mreq_destroy(r);
        log_err("node=%s: out of memory making a maintenance request",
                x->node);
        return;
    }
    r->asap = 1;
    r->not_before = (time_t)now;
    r->deadline = (time_t)now + rule->within_s;
    r->duration_s = rule->duration_s ? rule->duration_s : a->duration_s;
    if (mreq_submit(r, &err) < 0) {
        mreq_destroy(r);
        x->retry_at = now + RETRY_S;
        hold(x, "%s (tried again in %.0f s)", err.message, RETRY_S);
        return;
    }
    free(x->held);
    x->held = NULL;
    maint_event("info", x->node, "rule %s: %s -> maintenance %lld (%s)",
                rule->name, reason, (long long)r->id, rule->action);
}

void rules_apply(double now)
{
    struct snapshot *s = NULL;

    for (size_t i = 0; i < M.mism.cap; i++) {
        struct mism *x = hmap_slot_value(&M.mism, i);
        size_t cl, lim, open;
        char cluster[256];
        double until;
        if (!x || !x->rule || now < x->retry_at ||
            mreq_open_on(x->node, x->rule->action))
            continue;
        if ((until = backoff_until(x)) > now) {
            char t[32];
            time_format((time_t)until, t);
            hold(x, "backing off after failed maintenance until %s", t);
            x->retry_at = until; /* nothing to look at before then */
            continue;
        }
        cl = strcspn(x->node, "/");
        snprintf(cluster, sizeof(cluster), "%.*s", (int)cl, x->node);
        if (!s)
            s = snapshot_get(); /* one for the whole pass */
        lim = limit_of(x->rule, s, cluster);
        open = mreq_nodes_open(cluster);
        if (open + 1 > lim) {
            hold(x, "the rule's limit of %zu node(s) of cluster %s in "
                 "maintenance at once is reached", lim, cluster);
            continue;
        }
        make_request(x, now);
    }
    snapshot_put(s);
}
