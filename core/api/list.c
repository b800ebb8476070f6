/* list.c - lists the snapshot holds whole (SNAP_*): all of a list, the
 * items a query's filters ask for, or one by id; merged by id with the
 * ended items that left memory, read back from PostgreSQL. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/snapshot.h"

#define MAX_FILTERS 8

/* What a list request asks for: an id, or fields' values; each also as
 * the text "key":value its items would hold, for a cheap test before a
 * parse. */
struct want {
    const char *key[MAX_FILTERS], *value[MAX_FILTERS];
    char *needle[MAX_FILTERS];
    int n;
};

static int want_add(struct want *w, const char *key, const char *value)
{
    json_t *v = json_string(value);
    char *enc = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    size_t len = enc ? strlen(key) + strlen(enc) + 4 : 0;

    json_decref(v);
    if (!enc || w->n == MAX_FILTERS || !(w->needle[w->n] = malloc(len))) {
        free(enc);
        return -1;
    }
    snprintf(w->needle[w->n], len, "\"%s\":%s", key, enc);
    free(enc);
    w->key[w->n] = key;
    w->value[w->n++] = value;
    return 0;
}

static void want_fini(struct want *w)
{
    for (int k = 0; k < w->n; k++)
        free(w->needle[k]);
}

/* What a list request asks for: the item with id (non-NULL), or those
 * whose fields equal the query's filters, and the reader's own only
 * (owner, non-NULL: added to its filters, never replacing them). 0, or
 * -1 out of memory. */
static int want_of(const struct api_route_args *a, const char *id,
                   const char *owner, struct want *w)
{
    int bad = id && want_add(w, "id", id) < 0;

    for (int p = 0; !id && a->params[p].name; p++)
        if (a->value[p])
            bad |= want_add(w, a->params[p].name, a->value[p]) < 0;
    if (owner)
        bad |= want_add(w, "owner", owner) < 0;
    return bad ? -1 : 0;
}

/* The filters as a JSON object whose members an item holds: a new
 * string; NULL when there are none, or out of memory (*oom set). */
static char *want_json(const struct want *w, int *oom)
{
    json_t *o = w->n ? json_object() : NULL;
    char *s;

    *oom = 0;
    if (!w->n)
        return NULL;
    for (int k = 0; o && k < w->n; k++)
        if (json_object_set_new(o, w->key[k], json_string(w->value[k])) < 0) {
            json_decref(o);
            o = NULL;
        }
    s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    *oom = !s;
    return s;
}

/* Is the item (text row) one asked for? */
static int wanted(const struct want *w, const char *row, size_t len)
{
    json_t *it;
    int ok = 1;

    for (int k = 0; k < w->n; k++)
        if (!memmem(row, len, w->needle[k], strlen(w->needle[k])))
            return 0;
    if (!(it = json_loadb(row, len, 0, NULL)))
        return 0;
    for (int k = 0; ok && k < w->n; k++)
        ok = !strcmp(jx_str(it, w->key[k], ""), w->value[k]);
    json_decref(it);
    return ok;
}

static void no_such(struct http_resp *rs, const char *what, const char *id)
{
    struct loom_error err;

    loom_error_set(&err, LOOM_ENOENT, "there is no %s '%.100s'", what, id);
    http_error(rs, &err);
}

/* Rows read from PostgreSQL beside a list's (the ended items that left
 * memory), in id order. */
struct stored {
    size_t n, cap;
    int64_t *id;
    char **doc;
};

static void stored_fini(struct stored *x)
{
    for (size_t i = 0; i < x->n; i++)
        free(x->doc[i]);
    free(x->id);
    free(x->doc);
}

/* The id of an item as a list holds it ({"id":"N",...}), or 0. */
static int64_t row_id(const char *row)
{
    return strncmp(row, "{\"id\":\"", 7) ? 0 : strtoll(row + 7, NULL, 10);
}

/* Append row (n bytes) to out, with a comma before all but the first. */
static int emit(char **out, size_t *len, size_t *cap, int *found,
                const char *row, size_t n, int one)
{
    char *grown;

    if (*len + n + 4 > *cap) {
        *cap = (*len + n + 4) * 2;
        if (!(grown = realloc(*out, *cap)))
            return -1;
        *out = grown;
    }
    if ((*found)++ && !one)
        (*out)[(*len)++] = ',';
    memcpy(*out + *len, row, n);
    *len += n;
    return 0;
}

/* A list published whole (SNAP_*): every item, or those whose fields
 * equal the query's filters, or (id non-NULL) the one with that id; with
 * x, its rows too, merged by id. Items are looked at in their text first,
 * and only the likely ones parsed. */
static void list_text(const struct api_route_args *a, struct http_resp *rs,
                      struct snapshot *s, enum snap_text which,
                      const char *id, const char *what, const char *owner,
                      const struct stored *x)
{
    struct stext *t = s ? s->text[which] : NULL;
    struct loom_error err;
    struct want w = {0};
    size_t cap = 64, len = 0, k = 0;
    char *out = NULL;
    int64_t n_id;
    int found = 0;

    if (id && domain_id_parse(id, &n_id) < 0) { /* "013" is not 13 */
        no_such(rs, what, id);
        return;
    }
    if (want_of(a, id, owner, &w) < 0)
        goto nomem;
    if (!w.n && !(x && x->n)) { /* the common case: the text as it is */
        size_t n = t ? t->len : 2;
        if ((rs->body = malloc(n + 12))) {
            snprintf(rs->body, n + 12, "{\"items\":%s}", t ? t->text : "[]");
            rs->status = 200;
        }
        return;
    }
    if (!(out = malloc(cap)))
        goto nomem;
    len = (size_t)snprintf(out, cap, "%s", id ? "" : "{\"items\":[");
    for (size_t i = 0; i <= (t && t->row ? t->n_rows : 0) && !(id && found);
         i++) {
        int in_t = t && t->row && i < t->n_rows;
        const char *row = in_t ? t->text + t->row[i] : NULL;
        size_t n = in_t ? t->row[i + 1] - 1 - t->row[i] : 0;
        int64_t rid = in_t ? row_id(row) : INT64_MAX;
        for (; x && k < x->n && x->id[k] < rid && !(id && found); k++)
            if (wanted(&w, x->doc[k], strlen(x->doc[k])) &&
                emit(&out, &len, &cap, &found, x->doc[k], strlen(x->doc[k]),
                     !!id) < 0)
                goto nomem;
        if (in_t && !(id && found) && wanted(&w, row, n) &&
            emit(&out, &len, &cap, &found, row, n, !!id) < 0)
            goto nomem;
    }
    want_fini(&w);
    if (id && !found) {
        free(out);
        no_such(rs, what, id);
        return;
    }
    if (!id) {
        memcpy(out + len, "]}", 2);
        len += 2;
    }
    out[len] = '\0';
    rs->status = 200;
    rs->body = out;
    return;
nomem:
    want_fini(&w);
    free(out);
    loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    http_error(rs, &err);
}

void api_list_text(const struct api_route_args *a, struct http_resp *rs,
                   enum snap_text which, const char *id, const char *what)
{
    struct snapshot *s = snapshot_get();

    list_text(a, rs, s, which, id, what, NULL, NULL);
    snapshot_put(s);
}

static int stored_row(void *arg, int n, const char *const *cols)
{
    struct stored *x = arg;

    if (n < 2)
        return 0;
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        int64_t *id = realloc(x->id, cap * sizeof(*id));
        char **doc;
        if (!id)
            return -1;
        x->id = id;
        if (!(doc = realloc(x->doc, cap * sizeof(*doc))))
            return -1;
        x->doc = doc;
        x->cap = cap;
    }
    if (!(x->doc[x->n] = strdup(cols[1])))
        return -1;
    x->id[x->n++] = strtoll(cols[0], NULL, 10);
    return 0;
}

/* The ended items that left memory (those not in t, up to the highest
 * id that left, and of them those the request's filters ask for: read
 * so), or the one with that id. 0, or -1 with err. */
static int stored_read(const struct api_route_args *a,
                       const struct api_stored_src *src,
                       const struct stext *t, const char *id,
                       const char *owner, int64_t upto, struct stored *x,
                       struct loom_error *err)
{
    struct store *st;
    struct want w = {0};
    char *but, *match = NULL, *state = NULL, *doc = NULL;
    size_t len = 0, n = t && t->row ? t->n_rows : 0;
    int rc, oom = 0;

    if (!id && (want_of(a, NULL, owner, &w) < 0 ||
                (match = want_json(&w, &oom), oom))) {
        want_fini(&w);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    want_fini(&w);
    if (!(st = api_reader_get(err))) {
        free(match);
        return -1;
    }
    if (id) {
        rc = src->doc(st, strtoll(id, NULL, 10), &state, &doc, err);
        api_reader_put();
        if (rc > 0 && stored_row(x, 2, (const char *const[]){id, doc}) < 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        free(state);
        free(doc);
        return rc < 0 ? -1 : 0;
    }
    if (!(but = malloc(24 * (n + 1) + 2))) {
        api_reader_put();
        free(match);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    but[len++] = '{';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(but + len, 24, "%s%lld", i ? "," : "",
                                (long long)row_id(t->text + t->row[i]));
    memcpy(but + len, "}", 2);
    rc = src->ended(st, but, upto, match, stored_row, x, err);
    api_reader_put();
    free(but);
    free(match);
    return rc;
}

/* Does a list's ?state= (NULL: any) ask for a state src's items leave
 * memory in? */
static int asks_gone(const struct api_stored_src *src, const char *state)
{
    for (size_t i = 0; state && src->gone_states[i]; i++)
        if (!strcmp(state, src->gone_states[i]))
            return 1;
    return !state;
}

void api_list_stored(const struct api_route_args *a, struct http_resp *rs,
                     const struct api_stored_src *src, const char *owner)
{
    struct snapshot *s = snapshot_get();
    const char *id = a->n == 2 ? a->seg[1] : NULL;
    struct stored x = {0};
    struct loom_error err;
    int64_t n_id = 0, upto;

    if (id) {
        list_text(a, rs, s, src->which, id, src->what, owner, NULL);
        if (rs->status != 404 || domain_id_parse(id, &n_id) < 0) {
            snapshot_put(s);
            return;
        }
        free(rs->body);
        rs->body = NULL;
        rs->status = 0;
    }
    /* Read after the snapshot was taken: an item that left memory since
     * is in the snapshot, and not read. The database only up to the
     * highest id that left memory: until one has, the snapshot is the
     * whole answer, and works while the database is down; so it is for a
     * list of a state items do not leave memory in. */
    upto = src->evicted_max();
    if (upto > 0 && n_id <= upto &&
        (id || asks_gone(src, api_param(a, "state"))) &&
        stored_read(a, src, s ? s->text[src->which] : NULL, id, owner, upto,
                    &x, &err) < 0)
        http_error(rs, &err);
    else
        list_text(a, rs, s, src->which, id, src->what, owner, &x);
    stored_fini(&x);
    snapshot_put(s);
}
