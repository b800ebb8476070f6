/* loompeer_parse.c - the inner loomd's nodes, queues and jobs read into
 * the adaptor contract's lists. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/loompeer.h"
#include "core/jsonx.h"

static int bad(struct loom_error *err, const char *list, size_t i,
               const char *field, const char *why)
{
    return loom_error_set(err, LOOM_ETEMP, "%s[%zu].%s: %s", list, i, field,
                          why);
}

static int dup_str(char **dst, json_t *o, const char *key)
{
    const char *s = jx_str(o, key, NULL);

    *dst = s ? strdup(s) : NULL;
    return s && !*dst ? -1 : 0;
}

static json_t *items(json_t *doc, const char *what, struct loom_error *err)
{
    json_t *a = json_object_get(doc, "items");

    if (!json_is_array(a))
        loom_error_set(err, LOOM_ETEMP, "%s: the answer has no items[]",
                       what);
    return json_is_array(a) ? a : NULL;
}

/* A node state as the inner loomd shows it, as the contract names it: a
 * node idle in one of its reservations takes none of this loomd's jobs. */
static const char *node_state(const char *s)
{
    static const char *const known[] = {
        "idle", "mixed", "allocated", "draining", "drained", "down", "maint",
    };

    if (!strcmp(s, "reserved"))
        return "allocated";
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (!strcmp(s, known[i]))
            return s;
    return "unknown";
}

int lpeer_parse_nodes(json_t *doc, struct cl_node_list *out,
                      struct loom_error *err)
{
    json_t *a = items(doc, "nodes", err), *o;
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o) {
        const char *name = jx_str(o, "name", NULL);
        const char *st = jx_str(o, "state", NULL);
        struct cl_node *n;

        if (!name)
            return bad(err, "nodes", i, "name", "missing");
        if (!st)
            return bad(err, "nodes", i, "state", "missing");
        if (!(n = cl_node_list_add(out)))
            goto oom;
        n->cpus = (int)jx_int(o, "cpus", 0);
        n->cpus_alloc = (int)jx_int(o, "cpus_alloc", 0);
        n->memory_mb = (long)jx_int(o, "memory_mb", 0);
        n->memory_alloc_mb = (long)jx_int(o, "memory_alloc_mb", 0);
        n->gpus = (int)jx_int(o, "gpus", 0);
        n->gpus_alloc = (int)jx_int(o, "gpus_alloc", 0);
        if (!(n->name = strdup(name)) ||
            !(n->state = strdup(node_state(st))) ||
            dup_str(&n->reason, o, "reason") < 0 ||
            jx_strv(json_object_get(o, "features"), &n->features) < 0 ||
            jx_strv(json_object_get(o, "queues"), &n->queues) < 0)
            goto oom;
    }
    return 0;
oom:
    return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}

int lpeer_parse_queues(json_t *doc, struct cl_queue_list *out,
                       struct loom_error *err)
{
    json_t *a = items(doc, "queues", err), *o;
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o) {
        const char *name = jx_str(o, "name", NULL);
        struct cl_queue *q;

        if (!name)
            return bad(err, "queues", i, "name", "missing");
        if (!(q = cl_queue_list_add(out)) || !(q->name = strdup(name)) ||
            !(q->state = strdup(jx_str(o, "state", "open"))))
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        q->nodes = (int)jx_int(o, "nodes", 0);
        q->max_walltime_s = (long)jx_int(o, "max_walltime_s", 0);
    }
    return 0;
}

int lpeer_name_ok(const char *s)
{
    return *s && strlen(s) < 256 &&
           s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       "0123456789._-")] == '\0';
}

int lpeer_is_job_id(const char *id)
{
    size_t n = strspn(id, "0123456789");

    if (!n || n > 19)
        return 0;
    if (id[n] == '_')
        id += n + 1, n = strspn(id, "0123456789");
    else
        return id[n] == '\0';
    return n && n <= 19 && id[n] == '\0';
}

static int final_state(const char *s)
{
    return !strcmp(s, "completed") || !strcmp(s, "failed") ||
           !strcmp(s, "cancelled");
}

/* The state of an inner job as this loomd's record of it takes it: one
 * of its own jobs held or starting there is still being started. */
static const char *job_state(const char *s, int own)
{
    if (!strcmp(s, "starting") || (own && !strcmp(s, "held")))
        return "pending";
    return s;
}

struct lacct *lpeer_note_account(struct lpeer *p, const char *id,
                                 long long rec, const char *account,
                                 int final)
{
    struct lacct *a = hmap_get(&p->account, id);

    if (!a) {
        if (!(a = calloc(1, sizeof(*a))))
            return NULL;
        snprintf(a->id, sizeof(a->id), "%s", id);
        if (hmap_put(&p->account, id, a) < 0) {
            free(a);
            return NULL;
        }
    }
    a->rec = rec;
    a->final = final;
    snprintf(a->account, sizeof(a->account), "%s", account);
    return a;
}

void lpeer_prune_accounts(struct lpeer *p)
{
    struct strv gone = {0};

    for (size_t i = 0; i < p->account.cap; i++) {
        struct lacct *a = hmap_slot_value(&p->account, i);
        if (a && a->final && a->rec <= p->after && strv_push(&gone, a->id) < 0)
            break; /* out of memory: the next poll prunes them */
    }
    for (size_t i = 0; i < gone.n; i++)
        free(hmap_del(&p->account, gone.v[i]));
    strv_fini(&gone);
}

static int job_in(struct lpeer *p, json_t *o, size_t i, long long rec,
                  struct cl_job_list *out, struct loom_error *err)
{
    json_t *env = json_object_get(o, "env"), *rq = json_object_get(o,
                                                                   "request");
    const char *id = jx_str(o, "id", NULL), *st = jx_str(o, "state", NULL);
    const char *marker = jx_str(env, LPEER_ID_VAR, NULL);
    const char *acc = jx_str(o, "account", NULL);
    json_t *ec = json_object_get(o, "exit_code");
    struct lacct *known;
    struct cl_job *j;

    if (!id || !lpeer_is_job_id(id))
        return bad(err, "jobs", i, "id", "missing, or not a job id");
    if (!st)
        return bad(err, "jobs", i, "state", "missing");
    if (!(j = cl_job_list_add(out)))
        goto oom;
    /* one look-up: the entry noted (with the marker and id of the last
     * poll; a new one has none), or the one there when it names no
     * account */
    known = acc ? lpeer_note_account(p, id, rec, acc, final_state(st))
                : hmap_get(&p->account, id);
    if (acc && !known)
        goto oom;
    if (marker && known && !strcmp(known->marker, marker))
        j->loom_id = known->loom_id; /* verified when it was listed first */
    else if (marker)
        j->loom_id = lpeer_marker_id(p, marker);
    if (!(j->native_id = strdup(id)) ||
        !(j->state = strdup(job_state(st, j->loom_id > 0))) ||
        dup_str(&j->name, o, "name") < 0 ||
        dup_str(&j->owner, o, "account") < 0 ||
        dup_str(&j->reason, o, "reason") < 0 ||
        dup_str(&j->stdout_path, o, "stdout") < 0 ||
        dup_str(&j->stderr_path, o, "stderr") < 0 ||
        jx_strv(json_object_get(o, "nodes"), &j->nodes) < 0)
        goto oom;
    if (acc && marker && strlen(marker) < sizeof(known->marker)) {
        snprintf(known->marker, sizeof(known->marker), "%s", marker);
        known->loom_id = j->loom_id;
    }
    j->submit_time = jx_time(o, "submit_time");
    j->start_time = jx_time(o, "start_time");
    j->end_time = jx_time(o, "end_time");
    if (json_is_integer(ec)) {
        j->has_exit_code = 1;
        j->exit_code = (int)json_integer_value(ec);
    }
    /* what the inner loomd's cluster measured, once the job ended there */
    if (cl_usage_read(json_object_get(o, "usage"), &j->usage) < 0)
        return bad(err, "jobs", i, "usage", "not null or an object of "
                   "non-negative integers user_cpu_ms, system_cpu_ms, "
                   "max_rss_kb");
    j->req.nodes = (int)jx_int(rq, "nodes", 0);
    j->req.cpus_per_node = (int)jx_int(rq, "cpus_per_node", 0);
    j->req.gpus = (int)jx_int(rq, "gpus", 0);
    j->req.memory_mb = (long)jx_int(rq, "memory_mb", 0);
    j->req.walltime_s = (long)jx_int(rq, "walltime_s", 0);
    return 0;
oom:
    return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}

int lpeer_parse_jobs(struct lpeer *p, json_t *doc, struct cl_job_list *out,
                     long long *low, long long *high, struct loom_error *err)
{
    json_t *a = items(doc, "jobs", err), *o;
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o) {
        const char *id = jx_str(o, "id", "");
        /* a task's own record number is its loom_id */
        long long rec = strtoll(strchr(id, '_') ? jx_str(o, "loom_id", "0")
                                                : id, NULL, 10);
        if (job_in(p, o, i, rec, out, err) < 0)
            return -1;
        if (rec > *high)
            *high = rec;
        if (!final_state(jx_str(o, "state", "")) && rec > 0 &&
            (!*low || rec < *low))
            *low = rec;
    }
    return 0;
}
