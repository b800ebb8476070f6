/* jsonx.c - strict JSON input checking. */
/* SPDX-License-Identifier: MIT */
#include "core/jsonx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"

json_t *jx_parse_object(const char *buf, size_t len, struct loom_error *err)
{
    json_error_t jerr;
    json_t *v;

    if (len == 0) {
        loom_error_set(err, LOOM_EINVAL, "the request body is empty; "
                       "expected a JSON object");
        return NULL;
    }
    v = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!v) {
        loom_error_set(err, LOOM_EINVAL, "malformed JSON at line %d column %d: "
                       "%s", jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        loom_error_set(err, LOOM_EINVAL, "the request body must be a JSON "
                       "object");
        return NULL;
    }
    return v;
}

static const char *type_name(int t)
{
    switch (t & 0xff) {
    case JX_STRING: return "a string";
    case JX_INT: return "an integer";
    case JX_BOOL: return "true or false";
    case JX_OBJECT: return "an object";
    case JX_ARRAY: return "an array";
    }
    return "?";
}

static int type_ok(json_t *v, int t)
{
    if (json_is_null(v))
        return (t & JX_NULLABLE) != 0;
    switch (t & 0xff) {
    case JX_STRING: return json_is_string(v);
    case JX_INT: return json_is_integer(v);
    case JX_BOOL: return json_is_boolean(v);
    case JX_OBJECT: return json_is_object(v);
    case JX_ARRAY: return json_is_array(v);
    }
    return 0;
}

static void join(char *out, size_t n, const char *path, const char *key)
{
    snprintf(out, n, "%s%s%s", path ? path : "", path && *path ? "." : "", key);
}

int jx_check(json_t *obj, const char *path, const struct jx_field *fields,
             struct loom_error *err)
{
    const char *key;
    json_t *v;
    char fp[96];

    json_object_foreach(obj, key, v) {
        const struct jx_field *f = fields;
        while (f->name && strcmp(f->name, key) != 0)
            f++;
        join(fp, sizeof(fp), path, key);
        if (!f->name)
            return loom_error_field(err, LOOM_EINVAL, fp,
                                    "unknown field '%s'", fp);
        if (!type_ok(v, f->type))
            return loom_error_field(err, LOOM_EINVAL, fp,
                                    "field '%s' must be %s%s", fp,
                                    type_name(f->type),
                                    f->type & JX_NULLABLE ? " or null" : "");
    }
    for (const struct jx_field *f = fields; f->name; f++) {
        if (f->required && !json_object_get(obj, f->name)) {
            join(fp, sizeof(fp), path, f->name);
            return loom_error_field(err, LOOM_EINVAL, fp,
                                    "field '%s' is required", fp);
        }
    }
    return 0;
}

const char *jx_str(json_t *obj, const char *key, const char *def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

long long jx_int(json_t *obj, const char *key, long long def)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

time_t jx_time(json_t *obj, const char *key)
{
    const char *s = jx_str(obj, key, NULL);
    time_t t = 0;

    if (s && time_parse(s, &t) < 0)
        t = 0;
    return t;
}

int jx_strv(json_t *arr, struct strv *out)
{
    size_t i;
    json_t *v;

    json_array_foreach(arr, i, v)
        if (json_is_string(v) && strv_push(out, json_string_value(v)) < 0)
            return -1;
    return 0;
}

int jx_set_kv(json_t *obj, const char *kv)
{
    const char *eq = strchr(kv, '=');
    char *name;
    int rc;

    if (!eq)
        return 0;
    if (!(name = strndup(kv, (size_t)(eq - kv))))
        return -1;
    rc = json_object_set_new(obj, name, json_string(eq + 1));
    free(name);
    return rc;
}

int jx_int_range(json_t *obj, const char *path, const char *key,
                 long long def, long long min, long long max, long long *out,
                 struct loom_error *err)
{
    long long v = jx_int(obj, key, def);
    char fp[96];

    if (v < min || v > max) {
        join(fp, sizeof(fp), path, key);
        return loom_error_field(err, LOOM_EINVAL, fp, "field '%s' must be "
                                "from %lld to %lld (got %lld)", fp, min, max, v);
    }
    *out = v;
    return 0;
}
