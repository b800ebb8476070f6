/* jsonx.h - strict JSON input: parse with clear errors, check fields. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_JSONX_H
#define LOOM_CORE_JSONX_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "core/error.h"
#include "core/strv.h"

enum jx_type {
    JX_STRING = 1,
    JX_INT,
    JX_BOOL,
    JX_OBJECT,
    JX_ARRAY,
    JX_NULLABLE = 0x100, /* or'ed in: null is accepted too */
};

struct jx_field {
    const char *name;
    int type;     /* enum jx_type, maybe | JX_NULLABLE */
    int required;
};

/* Parse a request body that must be one JSON object. Returns a new
 * reference, or NULL with a 400 error naming line and column. */
json_t *jx_parse_object(const char *buf, size_t len, struct loom_error *err);

/* Check obj (a JSON object found at path, e.g. "request") against a
 * NULL-name-terminated field table: unknown fields, missing required ones
 * and wrong types are 400 errors naming the field's path. */
int jx_check(json_t *obj, const char *path, const struct jx_field *fields,
             struct loom_error *err);

/* Typed reads with a default for absent or null. For use after jx_check. */
const char *jx_str(json_t *obj, const char *key, const char *def);
long long jx_int(json_t *obj, const char *key, long long def);
/* A time (as time_parse takes it): 0 when absent, null or not a time. */
time_t jx_time(json_t *obj, const char *key);
/* The strings of the array arr appended to out (anything else in it, or
 * arr not an array, skipped): 0, or -1 when out of memory. */
int jx_strv(json_t *arr, struct strv *out);
/* The "NAME=value" entry kv into obj as NAME: "value", whatever the length
 * of NAME (an entry without '=' is skipped): 0, or -1 when out of memory. */
int jx_set_kv(json_t *obj, const char *kv);

/* An integer field in [min, max]; -1 with a 400 error on the field. */
int jx_int_range(json_t *obj, const char *path, const char *key,
                 long long def, long long min, long long max, long long *out,
                 struct loom_error *err);

#endif
