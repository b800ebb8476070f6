/* fields.c - the columns a --format list names, and their cells. */
/* SPDX-License-Identifier: MIT */
#include "core/ctl/fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/loomctl.h"
#include "core/hostlist.h"
#include "core/timeutil.h"

#define CELL_BYTES 1024

const char *ctl_fields_names(const struct ctl_field *all, char *buf,
                             size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; all[i].name && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "",
                                all[i].name);
    return buf;
}

int ctl_fields_pick(const char *cmd, const struct ctl_field *all,
                    const char *list, const struct ctl_field **pick)
{
    char names[600];
    const char *p = list;
    int n = 0;

    ctl_fields_names(all, names, sizeof(names));
    while (*p) {
        size_t len = strcspn(p, ","), i;
        for (i = 0; all[i].name; i++)
            if (strlen(all[i].name) == len && !strncmp(all[i].name, p, len))
                break;
        if (!all[i].name || n == CTL_FIELDS_MAX) {
            ctl_usage(cmd, "--format: unknown field '%.*s'; the fields are "
                      "%s", (int)(len < 100 ? len : 100), p, names);
            return -1;
        }
        pick[n++] = &all[i];
        p += len;
        if (*p == ',' && *++p == '\0')
            break; /* a trailing comma: the same as none */
    }
    if (!n) {
        ctl_usage(cmd, "--format needs a field; the fields are %s", names);
        return -1;
    }
    return n;
}

/* An array stands for its tasks without records of their own, in their
 * state: 123_[8-100] (a long list cut short, as squeue does). NULL for
 * another job. */
static const char *array_tasks(const json_t *j)
{
    const char *tasks = json_string_value(json_object_get(j,
                                                          "array_tasks"));

    if (!tasks || !*tasks ||
        !json_is_string(json_object_get(j, "array_tasks_state")))
        return NULL;
    return tasks;
}

static const char *job_id(const json_t *j, char *buf, size_t size)
{
    const char *id = json_string_value(json_object_get(j, "id"));
    const char *tasks = array_tasks(j);

    if (!tasks)
        return id;
    if (strlen(tasks) > 40)
        snprintf(buf, size, "%s_[%.36s...]", id ? id : "?", tasks);
    else
        snprintf(buf, size, "%s_[%s]", id ? id : "?", tasks);
    return buf;
}

/* How many nodes a job has, or, before it has any, asks for. */
static const char *job_nodes(const json_t *j, char *buf, size_t size)
{
    size_t n = json_array_size(json_object_get(j, "nodes"));
    long long want = json_integer_value(
        json_object_get(json_object_get(j, "request"), "nodes"));

    snprintf(buf, size, "%lld", n ? (long long)n : want);
    return buf;
}

/* An array of node names (or ids: their names) as a hostlist. */
static const char *node_list(const json_t *a, char *buf, size_t size)
{
    size_t n = json_array_size(a), k = 0, i;
    char **names = calloc(n + 1, sizeof(*names)), *list;
    const json_t *v;

    buf[0] = '\0';
    if (!names)
        return "?";
    json_array_foreach(a, i, v) {
        const char *s = json_string_value(v), *slash;
        if (!s)
            continue;
        slash = strchr(s, '/');
        names[k++] = (char *)(slash ? slash + 1 : s);
    }
    list = hostlist_compress(names, k);
    snprintf(buf, size, "%s", list ? list : "?");
    free(list);
    free(names);
    return buf;
}

/* Run time of a job: from start_time to end_time, or to now. */
static const char *elapsed(const json_t *job, time_t now, char *buf,
                           size_t size)
{
    const char *s = json_string_value(json_object_get(job, "start_time"));
    const char *e = json_string_value(json_object_get(job, "end_time"));
    time_t start, end = now;

    if (!s || time_parse(s, &start) < 0)
        return client_table_duration(0, buf, size);
    if (e && time_parse(e, &end) < 0)
        end = now;
    return client_table_duration((long long)(end - start), buf, size);
}

/* One cell of obj as field f shows it, into buf; NULL shows as "-". */
static const char *cell(const json_t *obj, const struct ctl_field *f,
                        time_t now, char *buf, size_t size)
{
    const json_t *v = json_object_get(obj, f->key);

    switch (f->kind) {
    case CTL_F_JOBID:
        return job_id(obj, buf, size);
    case CTL_F_JOBSTATE:
        if (array_tasks(obj))
            v = json_object_get(obj, "array_tasks_state");
        break;
    case CTL_F_NODECOUNT:
        return job_nodes(obj, buf, size);
    case CTL_F_NODELIST:
        return json_is_array(v) ? node_list(v, buf, size) : NULL;
    case CTL_F_ELAPSED:
        return elapsed(obj, now, buf, size);
    default:
        break;
    }
    if (json_is_string(v))
        return json_string_value(v);
    if (!json_is_number(v))
        return NULL; /* null or missing */
    if (f->kind == CTL_F_DURATION)
        return client_table_duration((long long)json_number_value(v), buf,
                                     size);
    snprintf(buf, size, f->kind == CTL_F_HOURS ? "%.2f" : "%.0f",
             json_number_value(v));
    return buf;
}

int ctl_fields_print(const struct ctl_field *const *pick, int n,
                     const json_t *rows, time_t now)
{
    struct client_table_col cols[CTL_FIELDS_MAX];
    const char *cells[CTL_FIELDS_MAX];
    struct client_table *t;
    char *bufs = malloc((size_t)n * CELL_BYTES);
    const json_t *o;
    size_t i;

    for (int k = 0; k < n; k++)
        cols[k] = pick[k]->col;
    if (!bufs || !(t = client_table_create(cols, (size_t)n))) {
        free(bufs);
        return ctl_fail("out of memory");
    }
    json_array_foreach(rows, i, o) {
        if (!json_is_object(o))
            continue;
        for (int k = 0; k < n; k++)
            cells[k] = cell(o, pick[k], now, bufs + (size_t)k * CELL_BYTES,
                            CELL_BYTES);
        if (client_table_add(t, cells) < 0) {
            client_table_destroy(t);
            free(bufs);
            return ctl_fail("out of memory");
        }
    }
    client_table_print(t, stdout);
    client_table_destroy(t);
    free(bufs);
    return CTL_OK;
}

int ctl_fields_show(const struct ctl *ctl,
                    const struct ctl_field *const *pick, int n,
                    const json_t *rows)
{
    json_t *wrap;

    if (!ctl->json)
        return ctl_fields_print(pick, n, rows, time(NULL));
    wrap = json_pack("{s:O}", "items", (json_t *)rows);
    ctl_print_json(wrap);
    json_decref(wrap);
    return CTL_OK;
}
