/* domain.c - the values Loom's API knows by name, its ids, its node ids. */
/* SPDX-License-Identifier: MIT */
#include "core/domain.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"

static const char *const job_states[DOMAIN_JOB_STATES_N + 1] = {
    "pending", "held", "starting", "running", "suspended", "completed",
    "failed", "cancelled", NULL};
static const char *const node_states[DOMAIN_NODE_STATES_N + 1] = {
    "idle",  "mixed", "allocated", "reserved", "draining", "drained",
    "down",  "maint", "paused",    "unknown",  NULL};
static const char *const node_state_set[] = {"up",    "drain",  "down",
                                             "pause", "resume", NULL};
static const char *const resv_states[DOMAIN_RESV_STATES_N + 1] = {
    "planned", "active", "done", "cancelled", NULL};
static const char *const resv_purposes[] = {"user", "maintenance", NULL};
static const char *const queue_views[] = {"clusters", "fabric", NULL};
static const char *const maint_states[DOMAIN_MAINT_STATES_N + 1] = {
    "requested", "planned", "draining", "in-progress", "verifying", "done",
    "failed", "cancelled", NULL};
static const char *const goal_states[] = {"up", "down", "drained", NULL};

const struct domain domain_job_states = {"job state", "job states",
                                         job_states};
const struct domain domain_node_states = {"node state", "node states",
                                          node_states};
const struct domain domain_node_state_set = {
    "state a node can be set to", "states a node can be set to",
    node_state_set};
const struct domain domain_resv_states = {"reservation state",
                                          "reservation states", resv_states};
const struct domain domain_resv_purposes = {
    "reservation purpose", "reservation purposes", resv_purposes};
const struct domain domain_queue_views = {"queue view", "queue views",
                                          queue_views};
const struct domain domain_maint_states = {
    "maintenance request state", "maintenance request states",
    maint_states};
const struct domain domain_goal_states = {"goal state", "goal states",
                                          goal_states};

int domain_find(const struct domain *d, const char *name)
{
    for (int i = 0; name && d->names[i]; i++)
        if (!strcmp(d->names[i], name))
            return i;
    return -1;
}

const char *domain_list(const struct domain *d, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int i = 0; d->names[i] && len < size; i++) {
        const char *sep = !i ? "" : d->names[i + 1] ? ", " : " and ";
        int n = snprintf(buf + len, size - len, "%s%s", sep, d->names[i]);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return buf;
}

int domain_check(const struct domain *d, const char *value,
                 const char *field, struct loom_error *err)
{
    char all[256];

    if (domain_find(d, value) >= 0)
        return 0;
    return loom_error_field(err, LOOM_EINVAL, field, "'%.100s' is not a %s; "
                            "the %s are %s", value ? value : "", d->what,
                            d->whats, domain_list(d, all, sizeof(all)));
}

int domain_list_parse(const struct domain *d, const char *list,
                      unsigned *bits, const char *field,
                      struct loom_error *err)
{
    char one[64];
    int k;

    *bits = 0;
    for (const char *p = list ? list : "";; p++) {
        size_t len = strcspn(p, ",");
        snprintf(one, sizeof(one), "%.*s", (int)(len < 63 ? len : 63), p);
        if ((k = domain_find(d, one)) < 0)
            return domain_check(d, one, field, err);
        *bits |= 1u << (k & 31);
        p += len;
        if (!*p)
            return 0;
    }
}

int domain_id_parse(const char *s, int64_t *out)
{
    int64_t v = 0;

    if (!s || *s < '1' || *s > '9')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 0;
}

int domain_job_ref_parse(const char *s, int64_t *id, long *task)
{
    const char *us = s ? strchr(s, '_') : NULL;
    char head[24];
    long t = 0;

    if (!us) {
        *task = -1;
        return domain_id_parse(s, id);
    }
    if ((size_t)(us - s) >= sizeof(head) || !us[1] ||
        (us[1] == '0' && us[2]))
        return -1;
    memcpy(head, s, (size_t)(us - s));
    head[us - s] = '\0';
    for (const char *p = us + 1; *p; p++) {
        if (*p < '0' || *p > '9' || t > LOOM_ARRAY_INDEX_MAX)
            return -1;
        t = t * 10 + (*p - '0');
    }
    if (t > LOOM_ARRAY_INDEX_MAX || domain_id_parse(head, id) < 0)
        return -1;
    *task = t;
    return 0;
}

int domain_node_add(const char *ref, char **cluster, struct strv *names,
                    const char *field, struct loom_error *err)
{
    const char *slash = strchr(ref, '/');
    size_t cl = slash ? (size_t)(slash - ref) : 0;

    if (!*ref || (slash && (!cl || !slash[1] || strchr(slash + 1, '/'))))
        return loom_error_field(err, LOOM_EINVAL, field, "'%.200s' is not a "
                                "node: give its id (CLUSTER/NAME) or, with "
                                "the cluster, its name", ref);
    if (!slash && !*cluster)
        return loom_error_field(err, LOOM_EINVAL, field, "node '%.200s' is "
                                "a name without its cluster: give its id "
                                "(CLUSTER/NAME) or the cluster", ref);
    if (slash && !*cluster && !(*cluster = strndup(ref, cl)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (slash && (strlen(*cluster) != cl || strncmp(*cluster, ref, cl)))
        return loom_error_field(err, LOOM_EINVAL, field, "node %.200s is of "
                                "cluster %.*s, not %.100s", ref, (int)cl, ref,
                                *cluster);
    if (strv_push(names, slash ? slash + 1 : ref) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

int domain_group_valid(const char *s)
{
    size_t n = strlen(s);

    if (!n || n > LOOM_GRID_GROUP_MAX || *s != '/')
        return 0;
    while (*s == '/') {
        s++;
        if (!isalnum((unsigned char)*s))
            return 0;
        while (isalnum((unsigned char)*s) || (*s && strchr("_.-", *s)))
            s++;
    }
    return *s == '\0';
}
