/* vector.c - the opaque string vectors of DRMAA: attribute names,
 * attribute values and job ids, with their iterators. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "grid/drmaa/dr.h"

/* Three distinct types, as drmaa.h declares them, with one inside. */
struct drmaa_attr_names_s {
    struct dr_strv s;
};
struct drmaa_attr_values_s {
    struct dr_strv s;
};
struct drmaa_job_ids_s {
    struct dr_strv s;
};

int dr_strv_push(struct dr_strv *s, const char *s_new)
{
    char **v, *copy;
    size_t cap;

    if (s->n == s->cap) {
        cap = s->cap ? 2 * s->cap : 8;
        v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    copy = strdup(s_new);
    if (!copy)
        return -1;
    s->v[s->n++] = copy;
    return 0;
}

void dr_strv_fini(struct dr_strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

drmaa_attr_names_t *dr_names_new(void)
{
    return calloc(1, sizeof(drmaa_attr_names_t));
}

drmaa_attr_values_t *dr_values_new(void)
{
    return calloc(1, sizeof(drmaa_attr_values_t));
}

drmaa_job_ids_t *dr_ids_new(void)
{
    return calloc(1, sizeof(drmaa_job_ids_t));
}

struct dr_strv *dr_names_strv(drmaa_attr_names_t *v)
{
    return &v->s;
}

struct dr_strv *dr_values_strv(drmaa_attr_values_t *v)
{
    return &v->s;
}

struct dr_strv *dr_ids_strv(drmaa_job_ids_t *v)
{
    return &v->s;
}

static int next(struct dr_strv *s, char *value, size_t value_len)
{
    if (!s)
        return DRMAA_ERRNO_INVALID_ARGUMENT;
    if (s->next >= s->n)
        return DRMAA_ERRNO_NO_MORE_ELEMENTS;
    dr_copy(value, value_len, s->v[s->next++]);
    return DRMAA_ERRNO_SUCCESS;
}

static int count(const struct dr_strv *s, size_t *size)
{
    if (!s || !size)
        return DRMAA_ERRNO_INVALID_ARGUMENT;
    *size = s->n;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_next_attr_name(drmaa_attr_names_t *values, char *value,
                             size_t value_len)
{
    return next(values ? &values->s : NULL, value, value_len);
}

int drmaa_get_next_attr_value(drmaa_attr_values_t *values, char *value,
                              size_t value_len)
{
    return next(values ? &values->s : NULL, value, value_len);
}

int drmaa_get_next_job_id(drmaa_job_ids_t *values, char *value,
                          size_t value_len)
{
    return next(values ? &values->s : NULL, value, value_len);
}

int drmaa_get_num_attr_names(drmaa_attr_names_t *values, size_t *size)
{
    return count(values ? &values->s : NULL, size);
}

int drmaa_get_num_attr_values(drmaa_attr_values_t *values, size_t *size)
{
    return count(values ? &values->s : NULL, size);
}

int drmaa_get_num_job_ids(drmaa_job_ids_t *values, size_t *size)
{
    return count(values ? &values->s : NULL, size);
}

void drmaa_release_attr_names(drmaa_attr_names_t *values)
{
    if (values) {
        dr_strv_fini(&values->s);
        free(values);
    }
}

void drmaa_release_attr_values(drmaa_attr_values_t *values)
{
    if (values) {
        dr_strv_fini(&values->s);
        free(values);
    }
}

void drmaa_release_job_ids(drmaa_job_ids_t *values)
{
    if (values) {
        dr_strv_fini(&values->s);
        free(values);
    }
}
