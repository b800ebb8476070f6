/* mreq.c - a maintenance request: the POST body, the record, its JSON. */
/* SPDX-License-Identifier: MIT */
#include "maintenance/mreq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "core/jsonx.h"
#include "core/limits.h"
#include "core/timeutil.h"
#include "maintenance/maint_conf.h"
#include "scheduler/resv.h"
#include "scheduler/job.h"

/* The states' names are the API's, kept in core/domain.c. */
_Static_assert(MS_CANCELLED + 1 == DOMAIN_MAINT_STATES_N,
               "enum mstate and domain_maint_states differ");

const char *mstate_name(enum mstate s)
{
    return domain_maint_states.names[s];
}

int mstate_open(enum mstate s)
{
    return s < MS_DONE;
}

static const struct jx_field body_fields[] = {
    {"nodes", JX_ARRAY, 0},
    {"count", JX_INT, 0},
    {"cluster", JX_STRING, 0},
    {"action", JX_STRING, 0},
    {"reason", JX_STRING, 0},
    {"window", JX_OBJECT, 0},
    {"force", JX_BOOL, 0},
    {NULL, 0, 0},
};

static const struct jx_field window_fields[] = {
    {"start", JX_STRING, 0},
    {"not_before", JX_STRING, 0},
    {"deadline", JX_STRING, 0},
    {"duration_s", JX_INT, 0},
    {NULL, 0, 0},
};

static int time_in(json_t *w, const char *key, time_t *out,
                   struct loom_error *err)
{
    const char *s = jx_str(w, key, NULL);

    if (s && time_parse(s, out) < 0)
        return loom_error_field(err, LOOM_EINVAL, key, "window.%s must be an "
                                "RFC 3339 time such as 2026-11-21T20:00:00Z",
                                key);
    return 0;
}

static int window_in(json_t *w, time_t now, long def_duration, struct mreq *r,
                     struct loom_error *err)
{
    long long d;

    if (jx_check(w, "window", window_fields, err) < 0 ||
        time_in(w, "start", &r->start, err) < 0 ||
        time_in(w, "not_before", &r->not_before, err) < 0 ||
        time_in(w, "deadline", &r->deadline, err) < 0 ||
        jx_int_range(w, "window", "duration_s", def_duration, 1,
                     LOOM_WINDOW_MAX_S, &d, err) < 0)
        return -1;
    if (!json_object_get(w, "duration_s") && !def_duration)
        return loom_error_field(err, LOOM_EINVAL, "window.duration_s",
                                "window.duration_s is required (the action "
                                "gives no default)");
    r->duration_s = (long)d;
    r->fixed = json_object_get(w, "start") != NULL;
    if (r->fixed && (r->not_before || r->deadline))
        return loom_error_field(err, LOOM_EINVAL, "window", "a window is "
                                "fixed (start) or flexible (not_before, "
                                "deadline), not both");
    if (r->fixed)
        return 0;
    r->asap = !r->not_before || r->not_before <= now;
    if (!r->not_before || r->not_before < now)
        r->not_before = now;
    if (!r->deadline)
        r->deadline = r->not_before + LOOM_WINDOW_MAX_S;
    if (r->deadline - r->not_before < r->duration_s)
        return loom_error_field(err, LOOM_EINVAL, "window.deadline", "the "
                                "window from not_before to deadline is "
                                "shorter than duration_s");
    return 0;
}

int mreq_parse(json_t *body, time_t now, const struct maint_conf *mc,
               struct mreq *r, struct loom_error *err)
{
    const struct maint_action *a;
    const char *action;
    json_t *w;
    int rc;

    if (jx_check(body, "", body_fields, err) < 0)
        return -1;
    action = jx_str(body, "action", "node-off");
    a = maint_conf_action(mc, action);
    if (!a && strcmp(action, "node-off"))
        return loom_error_field(err, LOOM_EINVAL, "action", "action '%s' is "
                                "neither node-off nor an [action] of "
                                "loom.conf", action);
    if (nodes_or_count_in(body, &r->cluster, &r->nodes, &r->count, err) < 0)
        return -1;
    if (job_set_str(&r->action, action) < 0 ||
        job_set_str(&r->reason, jx_str(body, "reason", "")) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    r->force = json_is_true(json_object_get(body, "force"));
    w = json_object_get(body, "window");
    w = w ? json_incref(w) : json_object(); /* none: as soon as possible */
    rc = w ? window_in(w, now, a ? a->duration_s : 0, r, err)
           : loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    json_decref(w);
    if (rc < 0)
        return -1;
    return 0;
}

static void time_kv(json_t *o, const char *key, time_t t)
{
    char buf[32];

    if (!t) {
        json_object_set_new(o, key, json_null());
        return;
    }
    time_format(t, buf);
    json_object_set_new(o, key, json_string(buf));
}

static json_t *id_json(int64_t id)
{
    char buf[24];

    if (!id)
        return json_null();
    snprintf(buf, sizeof(buf), "%lld", (long long)id);
    return json_string(buf);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

char *mreq_render(const struct mreq *r)
{
    json_t *o = json_object(), *nodes = json_array(), *w = json_object(),
           *cj = json_array();
    char buf[512];
    char *text;

    if (!o || !nodes || !w || !cj) {
        json_decref(o);
        json_decref(nodes);
        json_decref(w);
        json_decref(cj);
        return NULL;
    }
    for (size_t i = 0; i < r->nodes.n; i++) {
        snprintf(buf, sizeof(buf), "%s/%s", r->cluster, r->nodes.v[i]);
        json_array_append_new(nodes, json_string(buf));
    }
    for (size_t i = 0; i < r->cancelled_jobs.n; i++)
        json_array_append_new(cj, json_string(r->cancelled_jobs.v[i]));
    if (r->fixed) {
        time_kv(w, "start", r->start);
    } else {
        time_kv(w, "not_before", r->not_before);
        time_kv(w, "deadline", r->deadline);
    }
    json_object_set_new(w, "duration_s", json_integer(r->duration_s));
    json_object_set_new(o, "id", id_json(r->id));
    json_object_set_new(o, "cluster", json_string(r->cluster));
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "action", json_string(r->action));
    json_object_set_new(o, "reason", json_string(r->reason ? r->reason : ""));
    json_object_set_new(o, "owner", str_or_null(r->owner));
    json_object_set_new(o, "window", w);
    json_object_set_new(o, "asap", json_boolean(r->asap));
    json_object_set_new(o, "reservation", id_json(r->resv));
    time_kv(o, "start", r->resv ? r->planned_start : 0);
    time_kv(o, "end", r->resv ? r->planned_end : 0);
    json_object_set_new(o, "state", json_string(mstate_name(r->state)));
    json_object_set_new(o, "rule", str_or_null(r->rule));
    json_object_set_new(o, "error", str_or_null(r->error));
    json_object_set_new(o, "output", str_or_null(r->output));
    time_kv(o, "action_began", r->action_began);
    json_object_set_new(o, "cancelled_jobs", cj);
    json_object_set(o, "history", r->history ? r->history : json_array());
    text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

static int time_of(json_t *o, const char *key, time_t *out)
{
    const char *s = jx_str(o, key, NULL);

    *out = 0;
    return s ? time_parse(s, out) : 0;
}

struct mreq *mreq_from_doc(json_t *doc, struct loom_error *err)
{
    struct mreq *r = calloc(1, sizeof(*r));
    json_t *w = json_object_get(doc, "window"), *v, *h;
    const char *st = jx_str(doc, "state", "");
    size_t i;
    int bad = !r, k;

    if (!r) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    r->id = strtoll(jx_str(doc, "id", "0"), NULL, 10);
    bad |= r->id <= 0;
    bad |= job_set_str(&r->cluster, jx_str(doc, "cluster", NULL)) < 0 ||
           !r->cluster;
    bad |= node_ids_in(json_object_get(doc, "nodes"), &r->cluster, &r->nodes,
                       err) < 0;
    json_array_foreach(json_object_get(doc, "cancelled_jobs"), i, v)
        bad |= strv_push(&r->cancelled_jobs, json_string_value(v) ?
                         json_string_value(v) : "?");
    bad |= job_set_str(&r->action, jx_str(doc, "action", "node-off"));
    bad |= job_set_str(&r->reason, jx_str(doc, "reason", ""));
    bad |= job_set_str(&r->owner, jx_str(doc, "owner", NULL));
    bad |= job_set_str(&r->rule, jx_str(doc, "rule", NULL));
    bad |= job_set_str(&r->error, jx_str(doc, "error", NULL));
    bad |= job_set_str(&r->output, jx_str(doc, "output", NULL));
    r->fixed = json_object_get(w, "start") != NULL;
    r->asap = json_is_true(json_object_get(doc, "asap"));
    bad |= time_of(w, "start", &r->start) < 0;
    bad |= time_of(w, "not_before", &r->not_before) < 0;
    bad |= time_of(w, "deadline", &r->deadline) < 0;
    r->duration_s = (long)jx_int(w, "duration_s", 0);
    r->resv = strtoll(jx_str(doc, "reservation", "0"), NULL, 10);
    bad |= time_of(doc, "start", &r->planned_start) < 0;
    bad |= time_of(doc, "end", &r->planned_end) < 0;
    bad |= time_of(doc, "action_began", &r->action_began) < 0;
    k = domain_find(&domain_maint_states, st);
    r->state = k >= 0 ? (enum mstate)k : MS_FAILED;
    r->history = json_object_get(doc, "history");
    r->history = r->history ? json_deep_copy(r->history) : json_array();
    /* an ended one's end: the last entry of its history (request_memory_s
     * and the rules' back-off count from it); an open one's steps wait
     * from the restart */
    h = json_array_get(r->history, json_array_size(r->history) - 1);
    if (mstate_open(r->state) || !h || time_of(h, "time", &r->since) < 0 ||
        !r->since)
        r->since = time(NULL);
    if (bad || !r->history || r->duration_s <= 0) {
        mreq_destroy(r);
        loom_error_set(err, LOOM_EINVAL, "stored maintenance request is "
                       "unreadable");
        return NULL;
    }
    return r;
}

void mreq_set_state(struct mreq *r, enum mstate s, time_t now)
{
    char buf[32];
    json_t *h;

    r->state = s;
    r->since = now;
    if (!r->history)
        r->history = json_array();
    time_format(now, buf);
    h = json_pack("{s:s, s:s}", "state", mstate_name(s), "time", buf);
    if (r->history && h)
        json_array_append_new(r->history, h);
    else
        json_decref(h);
}

void mreq_destroy(struct mreq *r)
{
    if (!r)
        return;
    free(r->cluster);
    strv_fini(&r->nodes);
    free(r->action);
    free(r->reason);
    free(r->owner);
    free(r->rule);
    free(r->error);
    free(r->output);
    strv_fini(&r->cancelled_jobs);
    json_decref(r->history);
    reply_unref(r->pending);
    free(r);
}
