/* state.c - Loom's jobs as Slurm names them: states, reasons, exit codes,
 * times and node lists; and the jobs read from loomd. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/hostlist.h"
#include "core/timeutil.h"

const char *sc_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "";
}

int sc_listed(const char *list, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = list; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && !strncmp(p, word, n))
            return 1;
        p += k;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* o's string member key, or NULL. */
static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int starts(const char *s, const char *prefix)
{
    return s && !strncmp(s, prefix, strlen(prefix));
}

/* An array's record stands for its waiting tasks in their state. */
static const char *loom_state(const json_t *job)
{
    const char *tasks = str(job, "array_tasks");
    const char *ts = str(job, "array_tasks_state");

    if (tasks && *tasks && ts)
        return ts;
    return str(job, "state");
}

const char *sc_state(const json_t *job)
{
    const char *s = loom_state(job), *why = str(job, "reason");

    if (!s)
        return "UNKNOWN";
    if (!strcmp(s, "pending") || !strcmp(s, "held"))
        return "PENDING";
    if (!strcmp(s, "starting"))
        return "CONFIGURING";
    if (!strcmp(s, "running"))
        return "RUNNING";
    if (!strcmp(s, "suspended"))
        return "SUSPENDED";
    if (!strcmp(s, "completed"))
        return "COMPLETED";
    if (!strcmp(s, "cancelled"))
        return "CANCELLED";
    if (!strcmp(s, "failed")) {
        if (starts(why, "walltime exceeded"))
            return "TIMEOUT";
        if (starts(why, "out of memory"))
            return "OUT_OF_MEMORY";
        return "FAILED";
    }
    return "UNKNOWN";
}

static const struct {
    const char *name, *code;
} states[] = {
    {"PENDING", "PD"},   {"CONFIGURING", "CF"}, {"RUNNING", "R"},
    {"SUSPENDED", "S"},  {"COMPLETED", "CD"},   {"CANCELLED", "CA"},
    {"FAILED", "F"},     {"TIMEOUT", "TO"},     {"OUT_OF_MEMORY", "OOM"},
    {"UNKNOWN", "?"},
};

const char *sc_state_short(const char *state)
{
    for (size_t i = 0; i < sizeof(states) / sizeof(*states); i++)
        if (!strcmp(states[i].name, state))
            return states[i].code;
    return "?";
}

/* Slurm's state names (and codes) as Loom's states. Slurm's states Loom
 * never has (BOOT_FAIL, NODE_FAIL, PREEMPTED, ...) select nothing. */
static const struct {
    const char *name, *code, *loom;
} filters[] = {
    {"PENDING", "PD", "pending,held"},
    {"CONFIGURING", "CF", "starting"},
    {"RUNNING", "R", "running"},
    {"SUSPENDED", "S", "suspended"},
    {"COMPLETED", "CD", "completed"},
    {"CANCELLED", "CA", "cancelled"},
    {"FAILED", "F", "failed"},
    {"TIMEOUT", "TO", "failed"},
    {"OUT_OF_MEMORY", "OOM", "failed"},
    {"COMPLETING", "CG", ""},
    {"BOOT_FAIL", "BF", ""},
    {"DEADLINE", "DL", ""},
    {"NODE_FAIL", "NF", ""},
    {"PREEMPTED", "PR", ""},
    {"REQUEUED", "RQ", ""},
    {"RESIZING", "RS", ""},
    {"REVOKED", "RV", ""},
    {"SPECIAL_EXIT", "SE", ""},
    {"STOPPED", "ST", ""},
};

int sc_state_filter(const char *list, char *buf, size_t size)
{
    const char *p = list;
    size_t len = 0;

    buf[0] = '\0';
    while (*p) {
        size_t n = strcspn(p, ","), i;
        if (n == 3 && !strncasecmp(p, "all", 3))
            return buf[0] = '\0', 0;
        for (i = 0; i < sizeof(filters) / sizeof(*filters); i++)
            if ((strlen(filters[i].name) == n &&
                 !strncasecmp(p, filters[i].name, n)) ||
                (strlen(filters[i].code) == n &&
                 !strncasecmp(p, filters[i].code, n)))
                break;
        if (i == sizeof(filters) / sizeof(*filters))
            return -1;
        if (*filters[i].loom && !strstr(buf, filters[i].loom))
            len += (size_t)snprintf(buf + len, len < size ? size - len : 0,
                                    "%s%s", len ? "," : "", filters[i].loom);
        p += n;
        if (*p == ',')
            p++;
    }
    if (!buf[0]) /* only states Loom never has */
        snprintf(buf, size, "none");
    return 0;
}

int sc_state_listed(const char *list, const char *state)
{
    const char *code = sc_state_short(state);

    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if ((n == 3 && !strncasecmp(p, "all", 3)) ||
            (n == strlen(state) && !strncasecmp(p, state, n)) ||
            (n == strlen(code) && !strncasecmp(p, code, n)))
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

const char *sc_reason(const json_t *job, char *buf, size_t size)
{
    const char *s = loom_state(job), *r = str(job, "reason");

    if (!s || !r || !*r)
        return "None";
    if (!strcmp(s, "held"))
        return starts(r, "held in cluster") ? "JobHeldAdmin" : "JobHeldUser";
    if (strcmp(s, "pending") && strcmp(s, "starting")) {
        snprintf(buf, size, "%s", r);
        return buf;
    }
    if (starts(r, "dependency never satisfied"))
        return "DependencyNeverSatisfied";
    if (starts(r, "waiting for job"))
        return "Dependency";
    if (strstr(r, "(max_running_jobs)"))
        return "AssocMaxJobsLimit";
    if (starts(r, "array ") && strstr(r, "limit"))
        return "JobArrayTaskLimit";
    if (starts(r, "waiting: behind job") ||
        starts(r, "waiting: beyond the planning depth"))
        return "Priority";
    if (starts(r, "waiting: no usable nodes"))
        return "ReqNodeNotAvail";
    if (starts(r, "held in cluster") || starts(r, "released by"))
        return "None";
    return "Resources";
}

const char *sc_exit_code(const json_t *job, char *buf, size_t size)
{
    const json_t *v = json_object_get(job, "exit_code");
    const char *r = str(job, "reason");
    long long code = json_is_integer(v) ? json_integer_value(v) : 0;
    int sig = 0;

    if (starts(r, "killed by signal "))
        sig = (int)strtol(r + 17, NULL, 10);
    else if (code > 128 && code < 128 + 65 && starts(r, "cancelled"))
        sig = (int)(code - 128);
    if (sig)
        code = 0;
    snprintf(buf, size, "%lld:%d", code, sig);
    return buf;
}

const char *sc_time(const json_t *v, char *buf, size_t size)
{
    const char *s = json_string_value(v);
    struct tm tm;
    time_t t;

    if (!s || time_parse(s, &t) < 0)
        return "Unknown";
    /* local time, without a zone, as Slurm writes it */
    if (!localtime_r(&t, &tm) ||
        !strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm))
        return "Unknown";
    return buf;
}

int sc_time_arg(const char *s, time_t *out)
{
    struct tm tm = {0};
    const char *end;
    char *e;
    long n;

    if (!strcasecmp(s, "now")) {
        *out = time(NULL);
        return 0;
    }
    if (!strncasecmp(s, "now-", 4)) {
        n = strtol(s + 4, &e, 10);
        if (e == s + 4 || n < 0)
            return -1;
        if (!*e || !strcasecmp(e, "seconds"))
            ;
        else if (!strcasecmp(e, "minutes"))
            n *= 60;
        else if (!strcasecmp(e, "hours"))
            n *= 3600;
        else if (!strcasecmp(e, "days"))
            n *= 86400;
        else if (!strcasecmp(e, "weeks"))
            n *= 604800;
        else
            return -1;
        *out = time(NULL) - n;
        return 0;
    }
    if (time_parse(s, out) == 0)
        return 0;
    if (!(end = strptime(s, "%Y-%m-%d", &tm)))
        return -1;
    if (*end == 'T' && !(end = strptime(end + 1, "%H:%M", &tm)))
        return -1;
    if (*end == ':' && !(end = strptime(end + 1, "%S", &tm)))
        return -1;
    if (*end)
        return -1;
    tm.tm_isdst = -1;
    *out = mktime(&tm);
    return 0;
}

const char *sc_duration(long long s, int shorter, char *buf, size_t size)
{
    if (s < 0)
        s = 0;
    if (s >= 86400)
        snprintf(buf, size, "%lld-%02lld:%02lld:%02lld", s / 86400,
                 s % 86400 / 3600, s % 3600 / 60, s % 60);
    else if (shorter && s < 3600)
        snprintf(buf, size, "%lld:%02lld", s / 60, s % 60);
    else
        snprintf(buf, size, "%02lld:%02lld:%02lld", s / 3600, s % 3600 / 60,
                 s % 60);
    return buf;
}

long long sc_elapsed(const json_t *job, time_t now)
{
    const char *s = str(job, "start_time"), *e = str(job, "end_time");
    time_t start, end = now;

    if (!s || time_parse(s, &start) < 0)
        return 0;
    if (e && time_parse(e, &end) < 0)
        end = now;
    return (long long)(end - start);
}

const char *sc_nodelist(const json_t *nodes, char *buf, size_t size)
{
    size_t n = json_array_size(nodes), k = 0, i;
    char **names = calloc(n + 1, sizeof(*names)), *list;
    const json_t *v;

    buf[0] = '\0';
    if (!names)
        return buf;
    json_array_foreach(nodes, i, v)
        if (json_is_string(v))
            names[k++] = (char *)json_string_value(v);
    list = hostlist_compress(names, k);
    snprintf(buf, size, "%s", list ? list : "");
    free(list);
    free(names);
    return buf;
}

/* GET /v1/jobs with q's filters into p; its lists (ids, users, queues)
 * too when with_lists. */
static void jobs_path(struct client_path *p, const struct sc_jobs_query *q,
                      int with_lists)
{
    client_path_init(p, "/v1/jobs");
    if (!q)
        return;
    client_path_query(p, "state", q->states && *q->states ? q->states
                                                           : NULL);
    client_path_query(p, "name", q->name);
    client_path_query(p, "cluster", q->cluster);
    client_path_query(p, "fields", q->fields);
    client_path_query(p, "id", with_lists ? q->ids : NULL);
    client_path_query(p, "user", with_lists ? q->users : NULL);
    client_path_query(p, "queue", with_lists ? q->queues : NULL);
}

int sc_jobs(const struct sc_jobs_query *q, const char *id, json_t **items,
            struct loom_error *err)
{
    struct client_path p;
    struct client *c = sc_client();
    const char *path;
    json_t *one = NULL;

    *items = NULL;
    if (!c)
        return loom_error_set(err, LOOM_EUNAVAIL, "no connection to Loom");
    if (id) {
        client_path_init(&p, "/v1/jobs");
        client_path_segment(&p, id);
        if (!(path = client_path_get(&p, err)) ||
            client_request(c, "GET", path, NULL, NULL, NULL, &one, err) < 0)
            return -1;
        *items = json_array();
        json_array_append_new(*items, one);
        return 0;
    }
    /* more jobs, users or queues than a path holds (a scan of hundreds):
     * every job, and the caller's filter picks them (it always checks the
     * ids, users and queues itself) */
    jobs_path(&p, q, 1);
    if (p.overflow && q && (q->ids || q->users || q->queues))
        jobs_path(&p, q, 0);
    if (!(path = client_path_get(&p, err)))
        return -1;
    return client_get_all(c, path, items, err);
}
