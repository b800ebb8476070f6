/* fields.c - ?fields= of GET /v1/jobs: the members of the job object a
 * client names, cut from each job's rendered text without parsing it. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "core/api/api.h"

/* Every member of the job object (scheduler/job_json.c's job_render; the
 * unit test core_api_fields holds the two together), in its order. */
static const char *const job_fields[] = {
    "id", "name", "comment", "owner", "account", "cluster_accounts", "source",
    "submitted_by", "grid_identity", "vo", "state", "request", "workdir",
    "submit_dir", "output", "error", "command", "script", "env", "directives",
    "priority", "cluster", "native_id", "nodes", "submit_time", "start_time",
    "end_time", "exit_code", "usage", "reason", "planned_start",
    "planned_cluster", "queue_position", "priority_factors", "stdout",
    "stderr", "requeues", "requeue", "held_for_loom", "array", "array_job_id",
    "array_task_id", "array_tasks", "array_tasks_state", "array_counts",
    "dependency", "loom_id", NULL};

#define N_FIELDS ((int)(sizeof(job_fields) / sizeof(*job_fields)) - 1)

/* The index of s[0..n) in job_fields, or -1; looked for from hint on,
 * since a job's members come in the list's order. */
static int field_find(const char *s, size_t n, int hint)
{
    for (int k = 0; k < N_FIELDS; k++) {
        int i = (hint + k) % N_FIELDS;
        if (job_fields[i][0] == s[0] && !strncmp(job_fields[i], s, n) &&
            !job_fields[i][n])
            return i;
    }
    return -1;
}

static int field_index(const char *s, size_t n)
{
    return n ? field_find(s, n, 0) : -1;
}

int api_fields_parse(const char *list, uint64_t *bits,
                     struct loom_error *err)
{
    char all[520];
    size_t len = 0;

    *bits = 0;
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        int k = field_index(p, n);
        if (k < 0) {
            for (int i = 0; job_fields[i] && len < sizeof(all); i++)
                len += (size_t)snprintf(all + len, sizeof(all) - len,
                                        "%s%s", i ? "," : "",
                                        job_fields[i]);
            /* every name, in the 511 bytes of a message */
            return loom_error_field(err, LOOM_EINVAL, "fields", "query "
                                    "parameter fields: no field '%.*s'; "
                                    "the fields are %s",
                                    (int)(n < 16 ? n : 16), p, all);
        }
        *bits |= UINT64_C(1) << k;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

/* The end of the JSON string that starts at s[0] == '"'. */
static const char *string_end(const char *s, const char *end)
{
    for (s++; s < end; s++) {
        if (*s == '\\')
            s++;
        else if (*s == '"')
            return s + 1;
    }
    return end;
}

/* The end of the JSON value that starts at s. */
static const char *value_end(const char *s, const char *end)
{
    int depth = 0;

    while (s < end) {
        if (*s == '"') {
            s = string_end(s, end);
            if (!depth)
                return s;
            continue;
        }
        if (*s == '{' || *s == '[') {
            depth++;
        } else if (*s == '}' || *s == ']') {
            if (!depth)
                return s; /* the end of the enclosing object */
            if (!--depth)
                return s + 1;
        } else if (*s == ',' && !depth) {
            return s;
        }
        s++;
    }
    return end;
}

static const char *blanks(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
        s++;
    return s;
}

size_t api_fields_cut(const char *json, size_t len, size_t skip_off,
                      size_t skip_len, uint64_t bits, struct api_span *out,
                      size_t max)
{
    const char *end = json + len, *p = blanks(json, end), *key, *key_end;
    size_t n = 0;
    int k = -1;

    if (p == end || *p != '{')
        return 0;
    for (p++; (p = blanks(p, end)) < end && *p == '"';) {
        key = p;
        key_end = string_end(p, end);
        p = blanks(key_end, end);
        if (p == end || *p != ':')
            break;
        p = value_end(blanks(p + 1, end), end);
        k = key_end - key > 2
                ? field_find(key + 1, (size_t)(key_end - key - 2), k + 1)
                : -1;
        if (k >= 0 && (bits & (UINT64_C(1) << k)) && n < max &&
            !((size_t)(key - json) >= skip_off &&
              (size_t)(key - json) < skip_off + skip_len)) {
            out[n].p = key;
            out[n++].len = (size_t)(p - key);
        }
        p = blanks(p, end);
        if (p == end || *p != ',')
            break;
        p++;
    }
    return n;
}
