/* submit.c - POST /v1/jobs: whom a job is for (its owner, the gateway
 * that submits it, a grid identity and its VO), the account it runs as,
 * its script's directives, the audit of grid submits. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/accounts.h"
#include "core/api/api.h"
#include "core/directives.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/limits.h"
#include "core/token.h"
#include "grid/grid.h"
#include "scheduler/sched.h"

/* Whom a submit is for: the identity it owns, the gateway that submits
 * it, and what the identity maps to. */
struct for_whom {
    const char *owner, *submitted_by, *source;
    const char *iss, *sub, *vo; /* of a grid identity, or NULL */
    const struct accounts_map *map;
    struct accounts_map own;    /* of a grid_identity a gateway names */
    char identity[LOOM_IDENTITY_MAX + 1];
    const char *groups[LOOM_GRID_GROUPS_MAX];
    json_t *named;              /* the grid_identity named (holds those
                                   strings once it leaves the body) */
};

static const struct jx_field grid_identity_fields[] = {
    {"issuer", JX_STRING, 1},
    {"subject", JX_STRING, 1},
    {"groups", JX_ARRAY, 0},
    {NULL, 0, 0},
};

/* A Loom gateway token submits for the grid identity it names
 * ("grid_identity": {"issuer", "subject", "groups"}), which it has
 * verified itself: allowed for the issuers that list it in gateways. The
 * member leaves the body. */
static int named_identity(struct http_req *rq, json_t *body,
                          struct for_whom *f, struct loom_error *err)
{
    json_t *gi = json_object_get(body, "grid_identity"), *g;
    struct accounts_who who = {0};
    char issuer[64];
    size_t i;

    if (!gi)
        return 0;
    f->named = json_incref(gi);
    if (rq->grid || !(rq->who.roles & LOOM_ROLE_GATEWAY))
        return loom_error_field(err, LOOM_EPERM, "grid_identity", "only a "
                                "gateway's Loom token may name the grid "
                                "identity a job is for");
    if (!json_is_object(gi))
        return loom_error_field(err, LOOM_EINVAL, "grid_identity", "field "
                                "'grid_identity' must be an object "
                                "{\"issuer\", \"subject\", \"groups\"}");
    if (jx_check(gi, "grid_identity", grid_identity_fields, err) < 0)
        return -1;
    f->iss = jx_str(gi, "issuer", "");
    f->sub = jx_str(gi, "subject", "");
    if (!*f->sub || strlen(f->sub) > LOOM_GRID_SUBJECT_MAX)
        return loom_error_field(err, LOOM_EINVAL, "grid_identity.subject",
                                "a subject is 1 to %d characters",
                                LOOM_GRID_SUBJECT_MAX);
    if (grid_gateway_may_assert(rq->who.subject, f->iss, issuer,
                                sizeof(issuer), err) < 0)
        return -1;
    g = json_object_get(gi, "groups");
    if (json_array_size(g) > LOOM_GRID_GROUPS_MAX)
        return loom_error_field(err, LOOM_EINVAL, "grid_identity.groups",
                                "more than %d groups", LOOM_GRID_GROUPS_MAX);
    for (i = 0; i < json_array_size(g); i++) {
        const char *s = json_string_value(json_array_get(g, i));
        if (!s || !domain_group_valid(s))
            return loom_error_field(err, LOOM_EINVAL, "grid_identity.groups",
                                    "entry %zu is not a group (/vo or "
                                    "/vo/sub)", i + 1);
        f->groups[i] = s;
    }
    who.iss = f->iss;
    who.sub = f->sub;
    who.groups = f->groups;
    who.n_groups = i;
    if (accounts_map_who(&who, &f->own, err) < 0)
        return -1;
    snprintf(f->identity, sizeof(f->identity), "%s,%s", f->iss, f->sub);
    f->owner = f->identity;
    f->source = "grid";
    f->map = &f->own;
    f->vo = f->own.group[0] ? f->own.group : i ? f->groups[0] : NULL;
    return 0;
}

/* The account of job j from f's map: its cluster's when it names one, else
 * every cluster's, with the clusters where it differs. 0 or -1 (403). */
static int job_accounts(struct job *j, const struct for_whom *f,
                        const struct http_req *rq, struct loom_error *err)
{
    const struct accounts_map *m = f->map;
    const char *acc;

    if (!m)
        return loom_error_set(err, LOOM_EPERM, "%s may not submit jobs: %s",
                              rq->who.subject, rq->no_account);
    acc = accounts_on(m, j->req.cluster);
    if (!acc && j->req.cluster)
        return loom_error_field(err, LOOM_EPERM, "request.cluster", "identity "
                                "'%s' has no account on cluster %s",
                                f->owner, j->req.cluster);
    if (!acc)
        return loom_error_field(err, LOOM_EPERM, "request.cluster", "identity "
                                "'%s' has an account only on some clusters "
                                "(cluster= lines of the accounts file): name "
                                "one in request.cluster", f->owner);
    /* an account of this machine, unless a cluster= line named the
     * cluster's own */
    if (acc == m->account && accounts_may_run(acc, err) < 0)
        return -1;
    if (acc != m->account &&
        accounts_may_run_on(acc, j->req.cluster, err) < 0)
        return -1;
    if (job_set_str(&j->account, acc) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (size_t i = 0; !j->req.cluster && i <= m->n_clusters; i++) {
        char kv[128];
        if (!m->n_clusters)
            break;
        if (i < m->n_clusters &&
            accounts_may_run_on(m->clusters[i].account,
                                m->clusters[i].cluster, err) < 0)
            return -1;
        if (i < m->n_clusters)
            snprintf(kv, sizeof(kv), "%s=%s", m->clusters[i].cluster,
                     m->clusters[i].account);
        else /* and on every other cluster */
            snprintf(kv, sizeof(kv), "*=%s", m->account);
        if (strv_push(&j->cluster_accounts, kv) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

/* The 201 answer with "warnings": [...] added (the directives Loom
 * ignored under directives = warn). */
static void add_warnings(struct http_resp *rs, json_t *warnings)
{
    char *w = json_dumps(warnings, JSON_COMPACT), *body;
    size_t n = rs->body ? strlen(rs->body) : 0;

    if (!w || n < 2 || rs->body[n - 1] != '}' ||
        !(body = malloc(n + strlen(w) + 16))) {
        free(w);
        return;
    }
    snprintf(body, n + strlen(w) + 16, "%.*s,\"warnings\":%s}", (int)(n - 1),
             rs->body, w);
    free(rs->body);
    rs->body = body;
    free(w);
}

/* The script's directives into body (see core/directives.h); what they
 * did into the job's record. 0, or -1 with err. */
static int directives_in(json_t *body, char **record, json_t **warnings,
                         struct loom_error *err)
{
    json_t *rec = NULL;

    *record = NULL;
    if (directives_apply(body, directives_mode(), &rec, warnings, err) < 0)
        return -1;
    if (rec && !(*record = json_dumps(rec, JSON_COMPACT))) {
        json_decref(rec);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    json_decref(rec);
    return 0;
}

/* Audit a grid submit that was taken (201). */
static void audit_submit(const struct http_req *rq, const struct http_resp *rs,
                         const struct for_whom *f, const struct job *shown)
{
    struct grid_audit a = {.kind = "submit", .verified = 1};
    const char *loc = rs->location ? strrchr(rs->location, '/') : NULL;

    if (strcmp(f->source, "grid") != 0)
        return;
    a.identity = f->owner;
    a.iss = f->iss;
    a.sub = f->sub;
    a.vo = f->vo;
    a.account = shown ? shown->account : NULL;
    a.gateway = strcmp(f->submitted_by, f->owner) ? f->submitted_by : NULL;
    a.job = loc ? strtoll(loc + 1, NULL, 10) : 0;
    a.method = rq->method;
    a.path = rq->path;
    grid_audit(&a);
}

void api_jobs_submit(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a)
{
    const char *key = http_header(rq, "Idempotency-Key");
    struct for_whom *f = calloc(1, sizeof(*f));
    struct loom_error err;
    struct job *j = NULL;
    char account[64] = "", hash[65] = "", *record = NULL;
    json_t *body = NULL, *warnings = NULL;

    if (!f) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    f->owner = f->submitted_by = rq->who.subject;
    f->source = rq->grid || ((rq->who.roles & LOOM_ROLE_GATEWAY) &&
                             !(rq->who.roles & LOOM_ROLE_USER))
                    ? "grid" : "local";
    f->map = rq->map;
    if (rq->grid) {
        f->iss = rq->grid->iss;
        f->sub = rq->grid->sub;
        f->vo = api_vo(rq);
    }
    if (key && (!*key || strlen(key) > LOOM_IDEM_KEY_MAX)) {
        loom_error_field(&err, LOOM_EINVAL, "Idempotency-Key",
                         "Idempotency-Key must be 1 to 255 characters");
        goto error;
    }
    if (!(body = jx_parse_object(rq->body, rq->len, &err)))
        goto error;
    if (key) /* the request as sent, grid_identity with it */
        job_body_hash(body, hash);
    if (named_identity(rq, body, f, &err) < 0)
        goto error;
    json_object_del(body, "grid_identity");
    if (directives_in(body, &record, &warnings, &err) < 0 ||
        !(j = job_from_request(body, f->owner, NULL, f->source, &err)))
        goto error;
    j->directives = record; /* the job's now */
    record = NULL;
    if (job_accounts(j, f, rq, &err) < 0)
        goto error;
    if (job_set_str(&j->submitted_by, f->submitted_by) < 0 ||
        job_set_str(&j->grid_issuer, f->iss) < 0 ||
        job_set_str(&j->grid_subject, f->iss ? f->sub : NULL) < 0 ||
        job_set_str(&j->vo, f->vo) < 0 ||
        (key && (job_set_str(&j->idem_key, key) < 0 ||
                 job_set_str(&j->idem_hash, hash) < 0))) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    /* admins and operators may raise a priority past max_user_priority */
    j->staff = (rq->who.roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR)) != 0;
    snprintf(account, sizeof(account), "%s", j->account);
    if (key) { /* a job that left memory keeps its key */
        int rc = api_stored_idem(j->submitted_by, key, hash, rs, &err);
        if (rc < 0)
            goto error;
        if (rc > 0) {
            job_destroy(j);
            json_decref(body);
            json_decref(f->named);
            json_decref(warnings);
            free(f);
            return;
        }
    }
    json_decref(body);
    /* a 201 comes with its Location from the committer */
    api_call(sched_queue(), SCHED_SUBMIT, j, (void (*)(void *))job_destroy,
             rs);
    if (rs->status == 201 && warnings)
        add_warnings(rs, warnings);
    if (rs->status == 201) {
        struct job shown = {.account = account};
        audit_submit(rq, rs, f, &shown);
    } else if (rs->status == 429 || rs->status == 403) {
        json_t *e = rs->body ? json_loads(rs->body, 0, NULL) : NULL;
        loom_error_set(&err, rs->status == 429 ? LOOM_ELIMIT : LOOM_EPERM,
                       "%s", jx_str(json_object_get(e, "error"), "message",
                                    "refused"));
        json_decref(e);
        api_audit_denial(rq, NULL, &err);
    }
    json_decref(f->named);
    json_decref(warnings);
    free(f);
    return;
error:
    if (err.kind == LOOM_EPERM || err.kind == LOOM_ELIMIT)
        api_audit_denial(rq, NULL, &err);
    job_destroy(j);
    json_decref(body);
    json_decref(warnings);
    free(record);
    if (f)
        json_decref(f->named);
    free(f);
    http_error(rs, &err);
}
