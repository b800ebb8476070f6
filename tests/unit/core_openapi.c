/* core_openapi.c - the route table (core/api/route.c) and the OpenAPI
 * document loomd serves (docs/openapi.json) describe the same API: every
 * route is an operation with its method, path, roles and query parameters
 * (their values those of the domains loomd checks), and the document has
 * no other operation and no other query parameter. */
/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/token.h"
#include "tests/lib/tap.h"

static json_t *doc;

/* A "$ref": "#/a/b" of the document resolved; other values as they are. */
static json_t *deref(json_t *v)
{
    const char *r = json_string_value(json_object_get(v, "$ref"));
    char key[128];

    if (!r || strncmp(r, "#/", 2) != 0)
        return v;
    v = doc;
    for (r += 2; v && *r;) {
        size_t n = strcspn(r, "/");
        snprintf(key, sizeof(key), "%.*s", (int)n, r);
        v = json_object_get(v, key);
        r += n + (r[n] == '/');
    }
    return v;
}

/* The query parameters of an operation, names joined by " " in order. */
static void query_names(json_t *op, char *out, size_t size)
{
    size_t i, o = 0;
    json_t *p;

    out[0] = '\0';
    json_array_foreach(json_object_get(op, "parameters"), i, p) {
        p = deref(p);
        if (strcmp(json_string_value(json_object_get(p, "in")), "query"))
            continue;
        o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%s",
                              o ? " " : "",
                              json_string_value(json_object_get(p, "name")));
    }
}

static json_t *query_param(json_t *op, const char *name)
{
    size_t i;
    json_t *p;

    json_array_foreach(json_object_get(op, "parameters"), i, p) {
        p = deref(p);
        if (!strcmp(json_string_value(json_object_get(p, "in")), "query") &&
            !strcmp(json_string_value(json_object_get(p, "name")), name))
            return p;
    }
    return NULL;
}

/* The domain whose names a parameter's values must be, or NULL. */
static const struct domain *domain_of(enum api_qdom d)
{
    switch (d) {
    case API_Q_JOB_STATE: return &domain_job_states;
    case API_Q_NODE_STATE: return &domain_node_states;
    case API_Q_RESV_STATE: return &domain_resv_states;
    case API_Q_PURPOSE: return &domain_resv_purposes;
    case API_Q_MAINT_STATE: return &domain_maint_states;
    default: return NULL;
    }
}

/* The enum of a schema is exactly the names of d, in order. */
static int same_enum(json_t *schema, const struct domain *d)
{
    json_t *e = json_object_get(schema, "enum");
    size_t n = 0;

    for (; d->names[n]; n++)
        if (!json_is_string(json_array_get(e, n)) ||
            strcmp(json_string_value(json_array_get(e, n)), d->names[n]))
            return 0;
    return json_array_size(e) == n;
}

/* The x-loom-roles of an operation as LOOM_ROLE_* bits; -1 for a name
 * that is not a role. */
static long roles_of(json_t *op)
{
    static const char *const names[] = {"admin", "operator", "user",
        "gateway", "scheduler", "monitor", "reader"};
    static const unsigned bits[] = {LOOM_ROLE_ADMIN, LOOM_ROLE_OPERATOR,
        LOOM_ROLE_USER, LOOM_ROLE_GATEWAY, LOOM_ROLE_SCHEDULER,
        LOOM_ROLE_MONITOR, LOOM_ROLE_READER};
    long bitset = 0;
    size_t i, k;
    json_t *r;

    json_array_foreach(json_object_get(op, "x-loom-roles"), i, r) {
        for (k = 0; k < 7 && strcmp(json_string_value(r), names[k]); k++)
            ;
        if (k == 7)
            return -1;
        bitset |= (long)bits[k];
    }
    return bitset;
}

/* The {names} of a pattern joined by " ", and the path parameters of the
 * path item and operation the same way. */
static void pattern_params(const char *pattern, char *out, size_t size)
{
    size_t o = 0;

    out[0] = '\0';
    for (const char *p = strchr(pattern, '{'); p; p = strchr(p + 1, '{'))
        o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%.*s",
                              o ? " " : "", (int)strcspn(p + 1, "}"), p + 1);
}

static void path_params(json_t *item, json_t *op, char *out, size_t size)
{
    json_t *lists[2] = {json_object_get(item, "parameters"),
                        json_object_get(op, "parameters")}, *p;
    size_t i, o = 0;

    out[0] = '\0';
    for (int l = 0; l < 2; l++)
        json_array_foreach(lists[l], i, p) {
            p = deref(p);
            if (strcmp(json_string_value(json_object_get(p, "in")), "path"))
                continue;
            o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%s",
                                  o ? " " : "",
                                  json_string_value(json_object_get(p,
                                                                    "name")));
        }
}

int main(void)
{
    json_error_t jerr;
    const struct api_route *routes;
    size_t n, n_ops = 0;
    const char *path, *method;
    json_t *item, *op;
    char want[256], got[256], m[16];

    doc = json_loads(api_openapi_text(), 0, &jerr);
    ok(doc != NULL, "the served document is JSON (%s)", doc ? "" : jerr.text);
    if (!doc)
        return done_testing();
    is_str(json_string_value(json_object_get(doc, "openapi")), "3.1.0",
           "OpenAPI 3.1.0");
    is_str(json_string_value(json_object_get(json_object_get(doc, "info"),
                                             "version")),
           PACKAGE_VERSION, "info.version is loomd's version");
    routes = api_routes(&n);
    for (size_t i = 0; i < n; i++) {
        const struct api_route *r = &routes[i];
        size_t k;
        item = json_object_get(json_object_get(doc, "paths"), r->pattern);
        snprintf(m, sizeof(m), "%s", r->method ? r->method : "get");
        for (k = 0; m[k]; k++)
            m[k] = (char)tolower((unsigned char)m[k]);
        op = json_object_get(item, m);
        ok(op != NULL, "%s %s is in the document", m, r->pattern);
        if (!op)
            continue;
        if (r->roles == API_ROLES_NONE) {
            json_t *sec = json_object_get(op, "security");
            ok(json_is_array(sec) && !json_array_size(sec) &&
                   !json_object_get(op, "x-loom-roles"),
               "%s %s: no token (security: [])", m, r->pattern);
        } else {
            long want_roles = r->roles == API_ROLES_ANY ? (long)LOOM_ROLE_ALL
                                                        : (long)r->roles;
            ok(!json_object_get(op, "security"), "%s %s: a bearer token", m,
               r->pattern);
            is_int(roles_of(op), want_roles, "%s %s: x-loom-roles are the "
                   "route's", m, r->pattern);
        }
        want[0] = '\0';
        for (k = 0; r->params[k].name; k++)
            snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
                     k ? " " : "", r->params[k].name);
        query_names(op, got, sizeof(got));
        is_str(got, want, "%s %s: its query parameters, and no other", m,
               r->pattern);
        for (k = 0; r->params[k].name; k++) {
            const struct domain *d = domain_of(r->params[k].dom);
            json_t *p = query_param(op, r->params[k].name);
            if (d)
                ok(p && same_enum(json_object_get(p, "schema"), d),
                   "%s %s: %s is one of the %s", m, r->pattern,
                   r->params[k].name, d->whats);
        }
        pattern_params(r->pattern, want, sizeof(want));
        path_params(item, op, got, sizeof(got));
        is_str(got, want, "%s %s: its path parameters", m, r->pattern);
        ok(json_object_size(json_object_get(op, "responses")) > 0,
           "%s %s: its responses", m, r->pattern);
    }
    /* nothing else: every operation of the document is a route */
    json_object_foreach(json_object_get(doc, "paths"), path, item) {
        json_object_foreach(item, method, op) {
            int found = 0;
            if (!strcmp(method, "parameters"))
                continue;
            n_ops++;
            for (size_t i = 0; i < n && !found; i++) {
                snprintf(m, sizeof(m), "%s",
                         routes[i].method ? routes[i].method : "GET");
                for (size_t k = 0; m[k]; k++)
                    m[k] = (char)tolower((unsigned char)m[k]);
                found = !strcmp(routes[i].pattern, path) && !strcmp(m, method);
            }
            ok(found, "%s %s of the document is a route of loomd", method,
               path);
        }
    }
    is_int(n_ops, n, "as many operations as routes");
    json_decref(doc);
    return done_testing();
}
