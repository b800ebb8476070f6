/* strv.c - a list of owned strings. */
/* SPDX-License-Identifier: MIT */
#include "core/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strv_push(struct strv *s, const char *str)
{
    char **v = realloc(s->v, (s->n + 2) * sizeof(*v));
    char *copy = strdup(str);

    if (v)
        s->v = v;
    if (!v || !copy) {
        free(copy);
        return -1;
    }
    s->v[s->n++] = copy;
    s->v[s->n] = NULL;
    return 0;
}

int strv_push_kv(struct strv *s, const char *name, const char *value)
{
    size_t n = strlen(name) + strlen(value) + 2;
    char *kv = malloc(n);
    int rc;

    if (!kv)
        return -1;
    snprintf(kv, n, "%s=%s", name, value);
    rc = strv_push(s, kv);
    free(kv);
    return rc;
}

void strv_fini(struct strv *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
