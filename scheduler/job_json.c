/* job_json.c - a job to and from the JSON the API shows and the store keeps. */
/* SPDX-License-Identifier: MIT */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "core/timeutil.h"
#include "scheduler/job.h"

static json_t *strv_json(const struct strv *s)
{
    json_t *a = json_array();

    for (size_t i = 0; i < s->n; i++)
        json_array_append_new(a, json_string(s->v[i]));
    return a;
}

static json_t *time_json(time_t t)
{
    char buf[32];

    if (!t)
        return json_null();
    time_format(t, buf);
    return json_string(buf);
}

static json_t *env_json(const struct strv *env)
{
    json_t *o = json_object();

    for (size_t i = 0; i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        char name[256];
        size_t n = eq ? (size_t)(eq - env->v[i]) : 0;
        if (!eq || n >= sizeof(name))
            continue;
        memcpy(name, env->v[i], n);
        name[n] = '\0';
        json_object_set_new(o, name, json_string(eq + 1));
    }
    return o;
}

json_t *job_to_json(const struct job *j)
{
    char id[24];

    snprintf(id, sizeof(id), "%lld", (long long)j->id);
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:{s:i, s:i, s:I, s:i, s:I, s:o, s:s?, "
        "s:s?}, s:o, s:s?, s:o, s:i, s:s?, s:s?, s:o, s:o, s:o, s:o, s:o, "
        "s:s?, s:n, s:n, s:s?, s:s?, s:i}",
        "id", id, "name", j->name, "owner", j->owner, "source", j->source,
        "state", job_state_name(j->state),
        "request", "nodes", j->req.nodes, "cpus_per_node",
        j->req.cpus_per_node, "memory_mb", (json_int_t)j->req.memory_mb,
        "gpus", j->req.gpus, "walltime_s", (json_int_t)j->req.walltime_s,
        "features", strv_json(&j->req.features), "cluster", j->req.cluster,
        "queue", j->req.queue,
        "command", j->command.n ? strv_json(&j->command) : json_null(),
        "script", j->script, "env", env_json(&j->env),
        "priority", j->priority, "cluster", j->cluster,
        "native_id", j->native_id, "nodes", strv_json(&j->nodes),
        "submit_time", time_json(j->submit_time),
        "start_time", time_json(j->start_time),
        "end_time", time_json(j->end_time),
        "exit_code", j->has_exit_code ? json_integer(j->exit_code)
                                      : json_null(),
        "reason", j->reason, "planned_start", "planned_cluster",
        "stdout", j->stdout_path, "stderr", j->stderr_path,
        "requeues", j->requeues);
}

char *job_render(const struct job *j)
{
    json_t *o = job_to_json(j);
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return s;
}

static time_t time_in(json_t *doc, const char *key)
{
    const char *s = jx_str(doc, key, NULL);
    time_t t = 0;

    if (s && time_parse(s, &t) < 0)
        t = 0;
    return t;
}

static int strv_in(json_t *arr, struct strv *s)
{
    size_t i;
    json_t *v;

    json_array_foreach(arr, i, v)
        if (json_is_string(v) && strv_push(s, json_string_value(v)) < 0)
            return -1;
    return 0;
}

/* The stored document is what job_to_json wrote: read it back leniently
 * (a newer field is ignored) but completely. */
struct job *job_from_doc(json_t *doc, struct loom_error *err)
{
    struct job *j = calloc(1, sizeof(*j));
    json_t *r = json_object_get(doc, "request"), *env, *v;
    const char *k;
    int bad = 0;

    if (!j || !r) {
        free(j);
        loom_error_set(err, LOOM_EINVAL, "stored job document is incomplete");
        return NULL;
    }
    j->id = strtoll(jx_str(doc, "id", "0"), NULL, 10);
    if (job_state_parse(jx_str(doc, "state", ""), &j->state) < 0 || j->id <= 0)
        bad = 1;
    j->req.nodes = (int)jx_int(r, "nodes", 1);
    j->req.cpus_per_node = (int)jx_int(r, "cpus_per_node", 1);
    j->req.memory_mb = (long)jx_int(r, "memory_mb", 0);
    j->req.gpus = (int)jx_int(r, "gpus", 0);
    j->req.walltime_s = (long)jx_int(r, "walltime_s", 3600);
    bad |= strv_in(json_object_get(r, "features"), &j->req.features);
    bad |= job_set_str(&j->req.cluster, jx_str(r, "cluster", NULL));
    bad |= job_set_str(&j->req.queue, jx_str(r, "queue", NULL));
    bad |= job_set_str(&j->name, jx_str(doc, "name", "job"));
    bad |= job_set_str(&j->owner, jx_str(doc, "owner", "?"));
    bad |= job_set_str(&j->source, jx_str(doc, "source", "local"));
    bad |= strv_in(json_object_get(doc, "command"), &j->command);
    bad |= job_set_str(&j->script, jx_str(doc, "script", NULL));
    env = json_object_get(doc, "env");
    json_object_foreach(env, k, v) {
        size_t n = strlen(k) + strlen(jx_str(env, k, "")) + 2;
        char *kv = malloc(n);
        if (!kv) {
            bad = 1;
            break;
        }
        snprintf(kv, n, "%s=%s", k, jx_str(env, k, ""));
        bad |= strv_push(&j->env, kv);
        free(kv);
    }
    j->priority = (int)jx_int(doc, "priority", 0);
    j->requeues = (int)jx_int(doc, "requeues", 0);
    bad |= job_set_str(&j->cluster, jx_str(doc, "cluster", NULL));
    bad |= job_set_str(&j->native_id, jx_str(doc, "native_id", NULL));
    bad |= strv_in(json_object_get(doc, "nodes"), &j->nodes);
    j->submit_time = time_in(doc, "submit_time");
    j->start_time = time_in(doc, "start_time");
    j->end_time = time_in(doc, "end_time");
    v = json_object_get(doc, "exit_code");
    j->has_exit_code = json_is_integer(v);
    j->exit_code = (int)json_integer_value(v);
    bad |= job_set_str(&j->reason, jx_str(doc, "reason", NULL));
    bad |= job_set_str(&j->stdout_path, jx_str(doc, "stdout", NULL));
    bad |= job_set_str(&j->stderr_path, jx_str(doc, "stderr", NULL));
    if (bad) {
        job_destroy(j);
        loom_error_set(err, LOOM_EINVAL, "stored job document is invalid");
        return NULL;
    }
    return j;
}

void job_body_hash(json_t *body, char out[65])
{
    char *canon = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned char md[32];
    unsigned int n = 0;

    EVP_Digest(canon ? canon : "", canon ? strlen(canon) : 0, md, &n,
               EVP_sha256(), NULL);
    for (unsigned int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    free(canon);
}
