/* table.c - loomctl's tables and key: value listings. */
/* SPDX-License-Identifier: MIT */
#include "core/ctl/table.h"

#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"

struct client_table {
    const struct client_table_col *cols;
    size_t ncols;
    char **cells; /* nrows * ncols, row-major, cleaned copies */
    size_t nrows, cap;
};

/* Characters shown for a UTF-8 string: bytes that do not continue one. */
static size_t width_of(const char *s)
{
    size_t w = 0;

    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

/* Byte length of the first n characters of s. */
static size_t bytes_for(const char *s, size_t n)
{
    size_t i = 0;

    while (s[i] && n > 0) {
        i++;
        while (((unsigned char)s[i] & 0xc0) == 0x80)
            i++;
        n--;
    }
    return i;
}

/* A copy of s with control characters as '?', cut to max characters. */
static char *cell_copy(const char *s, int max)
{
    size_t keep, n;
    char *d;

    if (!s || !*s)
        s = "-";
    if (max <= 0)
        max = CLIENT_TABLE_CELL_MAX;
    keep = width_of(s) > (size_t)max ? bytes_for(s, (size_t)max - 1)
                                     : strlen(s);
    d = malloc(keep + 2);
    if (!d)
        return NULL;
    for (n = 0; n < keep; n++)
        d[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    if (keep < strlen(s))
        d[n++] = '+';
    d[n] = '\0';
    return d;
}

struct client_table *client_table_create(const struct client_table_col *cols,
                                         size_t ncols)
{
    struct client_table *t = calloc(1, sizeof(*t));

    if (t) {
        t->cols = cols;
        t->ncols = ncols;
    }
    return t;
}

void client_table_destroy(struct client_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}

int client_table_add(struct client_table *t, const char *const *cells)
{
    size_t base = t->nrows * t->ncols;

    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **more = realloc(t->cells, cap * t->ncols * sizeof(*more));
        if (!more)
            return -1;
        t->cells = more;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        t->cells[base + c] = cell_copy(cells[c], t->cols[c].max);
        if (!t->cells[base + c]) {
            while (c-- > 0)
                free(t->cells[base + c]);
            return -1;
        }
    }
    t->nrows++;
    return 0;
}

static void print_cell(FILE *out, const char *s, size_t width, int right,
                       int last)
{
    size_t pad = width - width_of(s);

    if (right)
        fprintf(out, "%*s", (int)pad, "");
    fputs(s, out);
    if (!right && !last)
        fprintf(out, "%*s", (int)pad, "");
    fputs(last ? "\n" : " ", out);
}

void client_table_print(const struct client_table *t, FILE *out)
{
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));

    if (!w)
        return;
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = width_of(t->cols[c].header);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = width_of(t->cells[r * t->ncols + c]);
            w[c] = cw > w[c] ? cw : w[c];
        }
    }
    for (size_t c = 0; c < t->ncols; c++)
        print_cell(out, t->cols[c].header, w[c], t->cols[c].right,
                   c + 1 == t->ncols);
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++)
            print_cell(out, t->cells[r * t->ncols + c], w[c],
                       t->cols[c].right, c + 1 == t->ncols);
    free(w);
}

/* Times ---------------------------------------------------------------- */

char *client_table_duration(long long s, char *buf, size_t size)
{
    long long d, h, m;

    if (s < 0)
        s = 0;
    d = s / 86400;
    h = s / 3600 % 24;
    m = s / 60 % 60;
    s %= 60;
    if (d)
        snprintf(buf, size, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
    else if (h)
        snprintf(buf, size, "%lld:%02lld:%02lld", h, m, s);
    else
        snprintf(buf, size, "%lld:%02lld", m, s);
    return buf;
}

/* Cells from JSON ------------------------------------------------------ */

/* A member as text in buf: strings as they are, numbers and booleans
 * written out, null or absent as "" (shown as "-"). Returns buf. */
static const char *text_of(const json_t *obj, const char *key, char *buf,
                           size_t size)
{
    const json_t *v = json_object_get(obj, key);

    buf[0] = '\0';
    if (json_is_string(v))
        snprintf(buf, size, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, size, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, size, "%s", json_is_true(v) ? "yes" : "no");
    return buf;
}

/* The strings of an array joined with ','. */
static const char *join_of(const json_t *obj, const char *key, char *buf,
                           size_t size)
{
    const json_t *a = json_object_get(obj, key), *v;
    size_t len = 0, i;
    int n;

    buf[0] = '\0';
    json_array_foreach(a, i, v) {
        if (!json_is_string(v))
            continue;
        n = snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                     json_string_value(v));
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
    return buf;
}

static long long int_of(const json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

static const char *age_of(const json_t *obj, const char *key, time_t now,
                          char *buf, size_t size)
{
    const char *s = json_string_value(json_object_get(obj, key));
    long long age;
    time_t t;

    buf[0] = '\0';
    if (!s)
        return buf;
    if (time_parse(s, &t) < 0) {
        snprintf(buf, size, "%s", s);
        return buf;
    }
    age = (long long)(now - t);
    age = age < 0 ? 0 : age;
    if (age < 120)
        snprintf(buf, size, "%llds ago", age);
    else if (age < 7200)
        snprintf(buf, size, "%lldm ago", age / 60);
    else if (age < 172800)
        snprintf(buf, size, "%lldh ago", age / 3600);
    else
        snprintf(buf, size, "%lldd ago", age / 86400);
    return buf;
}

/* Each list's rows -------------------------------------------------------- */

typedef int row_f(struct client_table *t, const json_t *item, time_t now);

static int table_run(FILE *out, const struct client_table_col *cols,
                     size_t ncols, const json_t *items, time_t now,
                     row_f *row, struct loom_error *err)
{
    struct client_table *t = client_table_create(cols, ncols);
    const json_t *item;
    size_t i;

    if (!t)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    json_array_foreach(items, i, item) {
        if (json_is_object(item) && row(t, item, now) < 0) {
            client_table_destroy(t);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    }
    client_table_print(t, out);
    client_table_destroy(t);
    return 0;
}

/* A node's state as sinfo words it where it is shorter: "resv" for a node
 * idle inside a reservation. */
static const char *node_state_of(const json_t *n, char *buf, size_t size)
{
    text_of(n, "state", buf, size);
    if (!strcmp(buf, "reserved"))
        snprintf(buf, size, "resv");
    return buf;
}

static int node_row(struct client_table *t, const json_t *n, time_t now)
{
    char name[256], cl[256], st[64], cpus[48], mem[32], gpus[32], feat[512],
        why[512];
    const char *cells[8];

    snprintf(cpus, sizeof(cpus), "%lld/%lld", int_of(n, "cpus_alloc"),
             int_of(n, "cpus"));
    cells[0] = text_of(n, "name", name, sizeof(name));
    cells[1] = text_of(n, "cluster", cl, sizeof(cl));
    cells[2] = node_state_of(n, st, sizeof(st));
    cells[3] = cpus;
    cells[4] = text_of(n, "memory_mb", mem, sizeof(mem));
    cells[5] = text_of(n, "gpus", gpus, sizeof(gpus));
    cells[6] = join_of(n, "features", feat, sizeof(feat));
    cells[7] = text_of(n, "reason", why, sizeof(why));
    if (!why[0] && json_is_string(json_object_get(n, "reservation")))
        snprintf(why, sizeof(why), "reservation %s",
                 json_string_value(json_object_get(n, "reservation")));
    return client_table_add(t, cells);
}

int client_table_nodes(FILE *out, const json_t *items, time_t now,
                       struct loom_error *err)
{
    static const struct client_table_col cols[] = {
        { "NODE", 0, 0 },   { "CLUSTER", 0, 0 },   { "STATE", 0, 0 },
        { "CPUS(A/T)", 1, 0 }, { "MEMORY", 1, 0 }, { "GPUS", 1, 0 },
        { "FEATURES", 0, 0 }, { "REASON", 0, 60 },
    };
    return table_run(out, cols, 8, items, now, node_row, err);
}

/* Which jobs the scheduler places on a cluster: "any", or "pinned" (only
 * the jobs that name it: a simulated cluster). How Loom takes the start
 * decision from its system (the model) is for `show cluster`. */
static const char *takes_of(const json_t *c)
{
    return json_is_false(json_object_get(c, "unpinned_jobs")) ? "pinned"
                                                              : "any";
}

static int cluster_row(struct client_table *t, const json_t *c, time_t now)
{
    char name[256], ad[64], st[64], nodes[32], poll[64], error[512];
    const char *cells[7];

    cells[0] = text_of(c, "name", name, sizeof(name));
    cells[1] = text_of(c, "adaptor", ad, sizeof(ad));
    cells[2] = text_of(c, "state", st, sizeof(st));
    cells[3] = text_of(c, "nodes", nodes, sizeof(nodes));
    cells[4] = takes_of(c);
    cells[5] = age_of(c, "last_poll", now, poll, sizeof(poll));
    cells[6] = text_of(c, "error", error, sizeof(error));
    return client_table_add(t, cells);
}

int client_table_clusters(FILE *out, const json_t *items, time_t now,
                          struct loom_error *err)
{
    static const struct client_table_col cols[] = {
        { "CLUSTER", 0, 0 }, { "ADAPTOR", 0, 0 }, { "STATE", 0, 0 },
        { "NODES", 1, 0 },   { "JOBS", 0, 0 },    { "LAST_POLL", 0, 0 },
        { "ERROR", 0, 60 },
    };
    return table_run(out, cols, 7, items, now, cluster_row, err);
}

static int queue_row(struct client_table *t, const json_t *q, time_t now)
{
    char name[256], cl[256], st[64], nodes[32], max[32];
    const char *cells[5];
    long long wall = int_of(q, "max_walltime_s");

    cells[0] = text_of(q, "name", name, sizeof(name));
    cells[1] = text_of(q, "cluster", cl, sizeof(cl));
    cells[2] = text_of(q, "state", st, sizeof(st));
    cells[3] = text_of(q, "nodes", nodes, sizeof(nodes));
    cells[4] = wall > 0 ? client_table_duration(wall, max, sizeof(max))
                        : "UNLIMITED";
    return client_table_add(t, cells);
}

int client_table_queues(FILE *out, const json_t *items, time_t now,
                        struct loom_error *err)
{
    static const struct client_table_col cols[] = {
        { "QUEUE", 0, 0 }, { "CLUSTER", 0, 0 }, { "STATE", 0, 0 },
        { "NODES", 1, 0 }, { "MAXTIME", 1, 0 },
    };
    return table_run(out, cols, 5, items, now, queue_row, err);
}

/* One partition of GET /v1/queues?view=fabric. */
static int partition_row(struct client_table *t, const json_t *p, time_t now)
{
    char name[256], st[64], nodes[32], idle[32], cpus[64], max[32];
    char list[1024] = "";
    const json_t *v;
    const char *cells[7];
    long long wall = int_of(p, "max_walltime_s");
    size_t i;

    (void)now;
    json_array_foreach(json_object_get(p, "nodes"), i, v) {
        const char *n = json_string_value(v);
        const char *slash = n ? strchr(n, '/') : NULL;
        size_t len = strlen(list);
        snprintf(list + len, sizeof(list) - len, "%s%s", i ? "," : "",
                 slash ? slash + 1 : n ? n : "?");
    }
    cells[0] = text_of(p, "name", name, sizeof(name));
    cells[1] = text_of(p, "state", st, sizeof(st));
    cells[2] = text_of(p, "node_count", nodes, sizeof(nodes));
    snprintf(idle, sizeof(idle), "%lld",
             int_of(json_object_get(p, "nodes_by_state"), "idle"));
    cells[3] = idle;
    snprintf(cpus, sizeof(cpus), "%lld/%lld", int_of(p, "cpus_alloc"),
             int_of(p, "cpus"));
    cells[4] = cpus;
    cells[5] = wall > 0 ? client_table_duration(wall, max, sizeof(max))
                        : "UNLIMITED";
    cells[6] = list;
    return client_table_add(t, cells);
}

int client_table_partitions(FILE *out, const json_t *items, time_t now,
                            struct loom_error *err)
{
    static const struct client_table_col cols[] = {
        { "PARTITION", 0, 0 }, { "STATE", 0, 0 }, { "NODES", 1, 0 },
        { "IDLE", 1, 0 },      { "CPUS", 1, 0 },  { "MAXTIME", 1, 0 },
        { "NODELIST", 0, 60 },
    };
    return table_run(out, cols, 7, items, now, partition_row, err);
}

static int resv_row(struct client_table *t, const json_t *r, time_t now)
{
    char id[32], purpose[32], owner[256], cl[256], st[32], start[32], end[32];
    char nodes[1024] = "", native[160];
    const json_t *v;
    const char *cells[9];
    size_t i;

    (void)now;
    json_array_foreach(json_object_get(r, "nodes"), i, v) {
        const char *n = json_string_value(v), *slash = n ? strchr(n, '/') : NULL;
        size_t len = strlen(nodes);
        snprintf(nodes + len, sizeof(nodes) - len, "%s%s", i ? "," : "",
                 slash ? slash + 1 : n ? n : "?");
    }
    cells[0] = text_of(r, "id", id, sizeof(id));
    cells[1] = text_of(r, "purpose", purpose, sizeof(purpose));
    cells[2] = text_of(r, "owner", owner, sizeof(owner));
    cells[3] = text_of(r, "cluster", cl, sizeof(cl));
    cells[4] = nodes;
    cells[5] = text_of(r, "start", start, sizeof(start));
    cells[6] = text_of(r, "end", end, sizeof(end));
    cells[7] = text_of(r, "state", st, sizeof(st));
    /* Its twin in the cluster system: the id, "failed" (native_error
     * says why), or "-" (none, or a cluster that keeps none). */
    cells[8] = text_of(json_object_get(r, "native"), "id", native,
                       sizeof(native));
    if (!*native)
        cells[8] = json_is_string(json_object_get(r, "native_error"))
                       ? "failed" : "-";
    return client_table_add(t, cells);
}

int client_table_reservations(FILE *out, const json_t *items, time_t now,
                              struct loom_error *err)
{
    static const struct client_table_col cols[] = {
        { "RESV", 1, 0 }, { "PURPOSE", 0, 0 }, { "OWNER", 0, 0 },
        { "CLUSTER", 0, 0 }, { "NODES", 0, 0 }, { "START", 0, 0 },
        { "END", 0, 0 }, { "STATE", 0, 0 }, { "NATIVE", 0, 0 },
    };
    return table_run(out, cols, 9, items, now, resv_row, err);
}

/* key: value ------------------------------------------------------------ */

/* Is key a time in milliseconds: "..._ms", or "..._ms_..." (compare_ms_max)? */
static int ms_key(const char *key)
{
    const char *p = strstr(key, "_ms");

    return p && (p[3] == '\0' || p[3] == '_');
}

void client_table_round_ms(json_t *obj, int in_ms)
{
    const char *key;
    json_t *v;
    void *tmp;
    char buf[32];

    json_object_foreach_safe(obj, tmp, key, v) {
        int ms = in_ms || ms_key(key);
        double d;
        if (json_is_object(v)) {
            client_table_round_ms(v, ms);
            continue;
        }
        if (!ms || !json_is_real(v))
            continue;
        d = json_real_value(v);
        if (d >= 99.5)
            snprintf(buf, sizeof(buf), "%.0f", d);
        else if (d >= 9.95)
            snprintf(buf, sizeof(buf), "%.1f", d);
        else if (d <= 0)
            snprintf(buf, sizeof(buf), "0");
        else if (d >= 0.005)
            snprintf(buf, sizeof(buf), "%.2f", d);
        else
            snprintf(buf, sizeof(buf), "<0.01");
        json_object_set_new(obj, key, json_string(buf));
    }
}

#define KV_DEPTH 6 /* deeper objects are shown as compact JSON */

static void put_clean(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* Whether an array holds only scalars that can be joined with ','. */
static int plain_array(const json_t *a)
{
    const json_t *v;
    size_t i;

    json_array_foreach(a, i, v) {
        const char *s = json_string_value(v);
        if (json_is_object(v) || json_is_array(v) ||
            (s && (!*s || strpbrk(s, ", \t\r\n\"'"))))
            return 0;
    }
    return 1;
}

static void put_compact(FILE *out, const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

    if (s)
        put_clean(out, s);
    free(s);
}

static void put_scalar(FILE *out, const json_t *v)
{
    if (json_is_string(v))
        put_clean(out, json_string_value(v));
    else if (json_is_null(v))
        fputs("-", out);
    else
        put_compact(out, v);
}

static void put_array(FILE *out, const json_t *a)
{
    const json_t *v;
    size_t i;

    if (!json_array_size(a)) {
        fputs("-", out);
        return;
    }
    if (!plain_array(a)) {
        put_compact(out, a);
        return;
    }
    json_array_foreach(a, i, v) {
        if (i)
            fputc(',', out);
        put_scalar(out, v);
    }
}

/* A string with line breaks: every line indented by four spaces. */
static void put_block(FILE *out, const char *s)
{
    fputs("\n    ", out);
    for (; *s; s++) {
        if (*s == '\n') {
            if (s[1])
                fputs("\n    ", out);
        } else {
            fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
        }
    }
}

static int nested(const json_t *v, int depth)
{
    return json_is_object(v) && json_object_size(v) && depth < KV_DEPTH;
}

/* The widest flattened key below obj, prefix characters included. */
static size_t kv_width(const json_t *obj, size_t prefix, int depth)
{
    const char *key;
    const json_t *v;
    size_t w = 0, k;

    json_object_foreach((json_t *)obj, key, v) {
        k = prefix + width_of(key);
        if (nested(v, depth))
            k = kv_width(v, k + 1, depth + 1);
        w = k > w ? k : w;
    }
    return w;
}

static void kv_print(FILE *out, const json_t *obj, const char *prefix,
                     size_t width, int depth)
{
    const char *key, *s;
    const json_t *v;
    char path[512];

    json_object_foreach((json_t *)obj, key, v) {
        if (nested(v, depth)) {
            snprintf(path, sizeof(path), "%s%s.", prefix, key);
            kv_print(out, v, path, width, depth + 1);
            continue;
        }
        snprintf(path, sizeof(path), "%s%s", prefix, key);
        put_clean(out, path);
        fputc(':', out);
        s = json_string_value(v);
        if (s && strchr(s, '\n')) {
            put_block(out, s);
        } else if (s && !*s) {
            /* nothing: no trailing blanks */
        } else {
            fprintf(out, "%*s", (int)(width - width_of(path) + 1), "");
            if (json_is_array(v))
                put_array(out, v);
            else if (json_is_object(v) && !json_object_size(v))
                fputs("-", out);
            else
                put_scalar(out, v);
        }
        fputc('\n', out);
    }
}

void client_table_object(FILE *out, const json_t *obj)
{
    if (!json_is_object(obj)) {
        put_scalar(out, obj);
        fputc('\n', out);
        return;
    }
    kv_print(out, obj, "", kv_width(obj, 0, 0), 0);
}
