/* native.c - the native specification: options that map onto the fields
 * of Loom's job request (docs/drmaa.md has the table). */
/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grid/drmaa/dr.h"

#define WORD_MAX 1024 /* longest word of a specification */

enum kind { K_STRING, K_INT, K_LIST };

static const struct option {
    const char *name;  /* after "--" */
    const char *field; /* in the request object, or "priority" at the top */
    enum kind kind;
} options[] = {
    { "cluster", "cluster", K_STRING },
    { "nodes", "nodes", K_INT },
    { "cpus-per-node", "cpus_per_node", K_INT },
    { "mem", "memory_mb", K_INT },
    { "gpus", "gpus", K_INT },
    { "queue", "queue", K_STRING },
    { "features", "features", K_LIST },
    { "reservation", "reservation", K_STRING },
    { "priority", "priority", K_INT },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static const char allowed[] =
    "--cluster=NAME, --nodes=N, --cpus-per-node=N, --mem=MB, --gpus=N, "
    "--queue=NAME, --features=A,B, --reservation=ID, --priority=N";

static json_t *value_of(const struct option *o, const char *v,
                        struct dr_error *e)
{
    json_t *list;
    long long n;
    char *end;

    if (!*v) {
        dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                     "%s: --%s needs a value", DRMAA_NATIVE_SPECIFICATION,
                     o->name);
        return NULL;
    }
    if (o->kind == K_STRING)
        return json_string(v);
    if (o->kind == K_INT) {
        errno = 0;
        n = strtoll(v, &end, 10);
        if (errno || *end || !(isdigit((unsigned char)*v) || *v == '-')) {
            dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                         "%s: --%s takes a whole number, not '%.100s'",
                         DRMAA_NATIVE_SPECIFICATION, o->name, v);
            return NULL;
        }
        return json_integer(n);
    }
    list = json_array();
    for (const char *p = v; list && *p;) {
        size_t n_item = strcspn(p, ",");
        if (!n_item) {
            json_decref(list);
            dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                         "%s: --%s has an empty item in '%.100s'",
                         DRMAA_NATIVE_SPECIFICATION, o->name, v);
            return NULL;
        }
        json_array_append_new(list, json_stringn(p, n_item));
        p += n_item;
        if (*p == ',' && !*++p) {
            json_decref(list);
            dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                         "%s: --%s ends with a comma",
                         DRMAA_NATIVE_SPECIFICATION, o->name);
            return NULL;
        }
    }
    return list;
}

/* One option (word holds "--name" or "--name=value"; next is the word
 * after it, or NULL). *used_next says whether it took next as its value. */
static int apply(const char *word, const char *next, int *used_next,
                 json_t *body, json_t *req, struct dr_error *e)
{
    const char *eq = strchr(word, '='), *v;
    size_t n = eq ? (size_t)(eq - word) - 2 : strlen(word) - 2;
    const struct option *o = NULL;
    json_t *target, *value;

    *used_next = 0;
    for (size_t i = 0; i < N_OPTIONS && !o; i++)
        if (strlen(options[i].name) == n &&
            !strncmp(options[i].name, word + 2, n))
            o = &options[i];
    if (!o)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                            "%s: unknown option '%.*s'; the options are %s",
                            DRMAA_NATIVE_SPECIFICATION,
                            (int)(n + 2 > 100 ? 100 : n + 2), word, allowed);
    if (eq) {
        v = eq + 1;
    } else if (next && strncmp(next, "--", 2) != 0) {
        v = next;
        *used_next = 1;
    } else {
        v = "";
    }
    target = strcmp(o->field, "priority") ? req : body;
    if (json_object_get(target, o->field))
        return dr_error_set(e, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
                            "%s: --%s is given twice",
                            DRMAA_NATIVE_SPECIFICATION, o->name);
    value = value_of(o, v, e);
    if (!value)
        return e->code ? -1 : dr_error_set(e, DRMAA_ERRNO_NO_MEMORY,
                                           "out of memory");
    if (json_object_set_new(target, o->field, value) < 0)
        return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    return 0;
}

/* The next blank-separated word of *p into word; 0 at the end. */
static int next_word(const char **p, char *word, struct dr_error *e)
{
    size_t n;

    while (isspace((unsigned char)**p))
        (*p)++;
    n = strcspn(*p, " \t\r\n\v\f");
    if (!n)
        return 0;
    if (n >= WORD_MAX)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                            "%s: a word is longer than %d characters",
                            DRMAA_NATIVE_SPECIFICATION, WORD_MAX - 1);
    memcpy(word, *p, n);
    word[n] = '\0';
    *p += n;
    return 1;
}

int dr_native_apply(const char *spec, json_t *body, struct dr_error *e)
{
    char word[WORD_MAX], next[WORD_MAX];
    const char *p = spec, *after;
    json_t *req = json_object_get(body, "request");
    int have, have_next, used;

    e->code = DRMAA_ERRNO_SUCCESS;
    if (!req) {
        req = json_object();
        if (!req || json_object_set_new(body, "request", req) < 0)
            return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    }
    have = next_word(&p, word, e);
    while (have > 0) {
        if (strncmp(word, "--", 2) != 0 || !word[2] || word[2] == '=')
            return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                                "%s: '%.100s' is not an option; the options "
                                "are %s", DRMAA_NATIVE_SPECIFICATION, word,
                                allowed);
        after = p;
        have_next = next_word(&after, next, e);
        if (have_next < 0)
            return -1;
        if (apply(word, have_next ? next : NULL, &used, body, req, e) < 0)
            return -1;
        if (used) {
            p = after;
            have = next_word(&p, word, e);
        } else if (have_next) {
            memcpy(word, next, strlen(next) + 1);
            p = after;
            have = 1;
        } else {
            have = 0;
        }
    }
    return have < 0 ? -1 : 0;
}
