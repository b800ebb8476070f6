/* script_parse.c - a pack's JSON answers into nodes, jobs and queues. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/script.h"
#include "core/domain.h"
#include "core/timeutil.h"

static const char *const job_states[] = {"pending", "held", "running",
    "suspended", "completed", "failed", "cancelled", NULL};

static int one_of(const char *v, const char *const *set)
{
    for (; v && *set; set++)
        if (!strcmp(v, *set))
            return 1;
    return 0;
}

static int bad(struct loom_error *err, const char *what, size_t i,
               const char *field, const char *why)
{
    return loom_error_set(err, LOOM_ETEMP, "answer does not follow the "
                          "protocol: %s[%zu].%s %s", what, i, field, why);
}

static json_t *items(json_t *answer, struct loom_error *err)
{
    json_t *a = json_object_get(answer, "items");

    if (!json_is_array(a))
        loom_error_set(err, LOOM_ETEMP, "answer does not follow the "
                       "protocol: no \"items\" array");
    return json_is_array(a) ? a : NULL;
}

/* An optional string field: NULL when absent or null; -1 when another type. */
static int opt_str(json_t *o, const char *k, char **out)
{
    json_t *v = json_object_get(o, k);

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) { /* ids may come as numbers */
        char buf[32];
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
        *out = strdup(buf);
        return *out ? 0 : -1;
    }
    if (!json_is_string(v))
        return -1;
    *out = strdup(json_string_value(v));
    return *out ? 0 : -1;
}

static int opt_int(json_t *o, const char *k, long long *out)
{
    json_t *v = json_object_get(o, k);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = json_integer_value(v);
    return 0;
}

static int opt_strv(json_t *o, const char *k, struct strv *out)
{
    json_t *v = json_object_get(o, k), *e;
    size_t i;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_array(v))
        return -1;
    json_array_foreach(v, i, e)
        if (!json_is_string(e) || strv_push(out, json_string_value(e)) < 0)
            return -1;
    return 0;
}

/* A time: RFC 3339 string, epoch seconds, or null. */
static int opt_time(json_t *o, const char *k, time_t *out)
{
    json_t *v = json_object_get(o, k);

    *out = 0;
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        *out = (time_t)json_integer_value(v);
        return 0;
    }
    return json_is_string(v) && time_parse(json_string_value(v), out) == 0
               ? 0 : -1;
}

int script_parse_nodes(json_t *answer, struct cl_node_list *out,
                       struct loom_error *err)
{
    json_t *a = items(answer, err), *o;
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o) {
        struct cl_node *n = cl_node_list_add(out);
        long long cpus = -1, ca = 0, mem = 0, ma = 0, gpus = 0, ga = 0;
        if (!n)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        if (!json_is_object(o))
            return bad(err, "items", i, "", "is not an object");
        if (opt_str(o, "name", &n->name) < 0 || !n->name || !*n->name)
            return bad(err, "items", i, "name", "is missing or not a string");
        if (opt_str(o, "state", &n->state) < 0 ||
            domain_find(&domain_node_states, n->state) < 0)
            return bad(err, "items", i, "state", "is not a node state");
        if (opt_int(o, "cpus", &cpus) < 0 || cpus < 0)
            return bad(err, "items", i, "cpus", "is missing or not a count");
        if (opt_int(o, "cpus_alloc", &ca) < 0 ||
            opt_int(o, "memory_mb", &mem) < 0 ||
            opt_int(o, "memory_alloc_mb", &ma) < 0 ||
            opt_int(o, "gpus", &gpus) < 0 || opt_int(o, "gpus_alloc", &ga) < 0)
            return bad(err, "items", i, "(a count)", "is not a count");
        if (opt_strv(o, "features", &n->features) < 0 ||
            opt_strv(o, "queues", &n->queues) < 0)
            return bad(err, "items", i, "features/queues",
                       "is not an array of strings");
        if (opt_str(o, "reason", &n->reason) < 0)
            return bad(err, "items", i, "reason", "is not a string");
        n->cpus = (int)cpus;
        n->cpus_alloc = (int)ca;
        n->memory_mb = (long)mem;
        n->memory_alloc_mb = (long)ma;
        n->gpus = (int)gpus;
        n->gpus_alloc = (int)ga;
    }
    return 0;
}

/* The optional "request" of a job: its size where the cluster says. */
static int request_in(json_t *r, struct cl_job *j)
{
    static const char *const keys[] = {"nodes", "cpus_per_node", "memory_mb",
                                       "gpus", "walltime_s"};
    long long v[5] = {0};

    if (!r || json_is_null(r))
        return 0;
    if (!json_is_object(r))
        return -1;
    for (int k = 0; k < 5; k++) {
        json_t *x = json_object_get(r, keys[k]);
        if (x && !json_is_null(x) &&
            (!json_is_integer(x) || (v[k] = json_integer_value(x)) < 0 ||
             v[k] > (1LL << 40)))
            return -1;
    }
    j->req.nodes = v[0] > 100000 ? 100000 : (int)v[0];
    j->req.cpus_per_node = v[1] > 100000 ? 100000 : (int)v[1];
    j->req.memory_mb = (long)v[2];
    j->req.gpus = v[3] > 4096 ? 4096 : (int)v[3];
    j->req.walltime_s = (long)v[4];
    return 0;
}

static int job_in(json_t *o, size_t i, struct cl_job *j,
                  struct loom_error *err)
{
    char *loom = NULL;
    long long code = -1;
    json_t *ec, *nf;

    if (!json_is_object(o))
        return bad(err, "items", i, "", "is not an object");
    if (opt_str(o, "native_id", &j->native_id) < 0 || !j->native_id)
        return bad(err, "items", i, "native_id", "is missing");
    if (opt_str(o, "state", &j->state) < 0 || !one_of(j->state, job_states))
        return bad(err, "items", i, "state", "is not a job state");
    if (opt_str(o, "loom_id", &loom) < 0)
        return bad(err, "items", i, "loom_id", "is not an id");
    j->loom_id = loom ? strtoll(loom, NULL, 10) : 0;
    free(loom);
    if (opt_str(o, "name", &j->name) < 0 || opt_str(o, "owner", &j->owner) < 0 ||
        opt_str(o, "reason", &j->reason) < 0 ||
        opt_str(o, "stdout", &j->stdout_path) < 0 ||
        opt_str(o, "stderr", &j->stderr_path) < 0)
        return bad(err, "items", i, "(a string)", "is not a string");
    if (opt_strv(o, "nodes", &j->nodes) < 0)
        return bad(err, "items", i, "nodes", "is not an array of strings");
    if (opt_time(o, "submit_time", &j->submit_time) < 0 ||
        opt_time(o, "start_time", &j->start_time) < 0 ||
        opt_time(o, "end_time", &j->end_time) < 0)
        return bad(err, "items", i, "(a time)", "is not a time");
    if (request_in(json_object_get(o, "request"), j) < 0)
        return bad(err, "items", i, "request", "is not an object of "
                   "non-negative integers (nodes, cpus_per_node, memory_mb, "
                   "gpus, walltime_s)");
    nf = json_object_get(o, "node_failure");
    if (nf && !json_is_boolean(nf) && !json_is_null(nf))
        return bad(err, "items", i, "node_failure", "is not a boolean");
    j->node_failure = json_is_true(nf) && !strcmp(j->state, "failed");
    ec = json_object_get(o, "exit_code");
    if (ec && !json_is_null(ec)) {
        if (!json_is_integer(ec))
            return bad(err, "items", i, "exit_code", "is not an integer");
        code = json_integer_value(ec);
        j->has_exit_code = 1;
        j->exit_code = (int)code;
    }
    if (cl_usage_read(json_object_get(o, "usage"), &j->usage) < 0)
        return bad(err, "items", i, "usage", "is not null or an object of "
                   "non-negative integers user_cpu_ms, system_cpu_ms, "
                   "max_rss_kb");
    return 0;
}

int script_parse_jobs(json_t *answer, struct cl_job_list *out,
                      int *complete, struct loom_error *err)
{
    json_t *a = items(answer, err), *o;
    size_t i;

    if (!a)
        return -1;
    *complete = json_is_true(json_object_get(answer, "complete"));
    json_array_foreach(a, i, o) {
        struct cl_job *j = cl_job_list_add(out);
        if (!j)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        if (job_in(o, i, j, err) < 0)
            return -1;
    }
    return 0;
}

int script_parse_queues(json_t *answer, struct cl_queue_list *out,
                        struct loom_error *err)
{
    json_t *a = items(answer, err), *o;
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o) {
        struct cl_queue *q = cl_queue_list_add(out);
        long long nodes = 0, wall = 0;
        if (!q)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        if (!json_is_object(o) || opt_str(o, "name", &q->name) < 0 || !q->name)
            return bad(err, "items", i, "name", "is missing");
        if (opt_str(o, "state", &q->state) < 0 ||
            (q->state && strcmp(q->state, "open") && strcmp(q->state, "closed")))
            return bad(err, "items", i, "state", "is not open or closed");
        if (opt_int(o, "nodes", &nodes) < 0 ||
            opt_int(o, "max_walltime_s", &wall) < 0)
            return bad(err, "items", i, "(a count)", "is not a count");
        q->nodes = (int)nodes;
        q->max_walltime_s = (long)wall;
    }
    return 0;
}

/* Quote a word for sh: 'it'\''s'. Appends to the growing buffer. */
static int put(char **b, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        char *nb;
        while (c < *len + n + 1)
            c *= 2;
        nb = realloc(*b, c);
        if (!nb)
            return -1;
        *b = nb;
        *cap = c;
    }
    memcpy(*b + *len, s, n);
    *len += n;
    (*b)[*len] = '\0';
    return 0;
}

static int put_quoted(char **b, size_t *len, size_t *cap, const char *s)
{
    int rc = put(b, len, cap, "'", 1);

    for (; *s && rc == 0; s++)
        rc = *s == '\'' ? put(b, len, cap, "'\\''", 4) : put(b, len, cap, s, 1);
    return rc ? rc : put(b, len, cap, "'", 1);
}

char *script_job_file(const struct start_req *req)
{
    const char *body = req->script, *nl;
    char *b = NULL;
    size_t len = 0, cap = 0;
    int rc;

    if (body && body[0] == '#' && body[1] == '!' && (nl = strchr(body, '\n'))) {
        rc = put(&b, &len, &cap, body, (size_t)(nl - body + 1));
        body = nl + 1;
    } else {
        rc = put(&b, &len, &cap, "#!/bin/sh\n", 10);
    }
    rc = rc ? rc : put(&b, &len, &cap, "export LOOM_JOB_ID=", 19);
    if (rc == 0) {
        char id[32];
        snprintf(id, sizeof(id), "%lld\n", (long long)req->loom_id);
        rc = put(&b, &len, &cap, id, strlen(id));
    }
    for (size_t i = 0; req->env && req->env[i] && rc == 0; i++) {
        const char *eq = strchr(req->env[i], '=');
        if (!eq)
            continue;
        rc = put(&b, &len, &cap, "export ", 7);
        rc = rc ? rc : put(&b, &len, &cap, req->env[i], (size_t)(eq - req->env[i]));
        rc = rc ? rc : put(&b, &len, &cap, "=", 1);
        rc = rc ? rc : put_quoted(&b, &len, &cap, eq + 1);
        rc = rc ? rc : put(&b, &len, &cap, "\n", 1);
    }
    if (body && rc == 0) {
        rc = put(&b, &len, &cap, body, strlen(body));
    } else if (rc == 0) {
        rc = put(&b, &len, &cap, "exec", 4);
        for (size_t i = 0; req->command && req->command[i] && rc == 0; i++) {
            rc = put(&b, &len, &cap, " ", 1);
            rc = rc ? rc : put_quoted(&b, &len, &cap, req->command[i]);
        }
        rc = rc ? rc : put(&b, &len, &cap, "\n", 1);
    }
    if (rc) {
        free(b);
        return NULL;
    }
    return b;
}
