/* directives_req.c - the slots the directives of a script filled into
 * the request's fields, and the record of what each directive did. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/directives_table.h"
#include "core/limits.h"
#include "core/outpath.h"

/* ---- slots into the request ---------------------------------------------- */

/* What became of each slot. */
enum use { U_NONE, U_APPLIED, U_GIVEN, U_OTHER };

struct fill {
    struct dir_set *set;
    json_t *body, *req; /* req: body's request object, or NULL */
    enum use use[DS_N];
    const char *also[DS_N]; /* a second field a slot set */
    struct loom_error *err;
};

/* Does the body give field ("name", "request.x") itself? */
static int given(const struct fill *f, const char *field)
{
    json_t *v;

    if (!strncmp(field, "request.", 8))
        v = f->req ? json_object_get(f->req, field + 8) : NULL;
    else
        v = json_object_get(f->body, field);
    return v && !json_is_null(v);
}

/* Set field to v (taken). 0, or -1 when out of memory. */
static int put(struct fill *f, const char *field, json_t *v)
{
    json_t *obj = f->body;

    if (!strncmp(field, "request.", 8)) {
        if (!f->req) {
            f->req = json_object();
            if (!f->req || json_object_set_new(f->body, "request", f->req)) {
                f->req = NULL;
                json_decref(v);
                return loom_error_set(f->err, LOOM_EINTERNAL, "out of "
                                      "memory");
            }
        }
        obj = f->req;
        field += 8;
    }
    if (!v || json_object_set_new(obj, field, v) < 0)
        return loom_error_set(f->err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

/* The body's value of a request number, or def. */
static long given_num(const struct fill *f, const char *key, long def)
{
    json_t *v = f->req ? json_object_get(f->req, key) : NULL;

    return json_is_integer(v) ? (long)json_integer_value(v) : def;
}

/* A value computed from the directive that filled slot, out of Loom's
 * range: a 400 naming it. */
static int too_much(struct fill *f, enum dir_slot slot, const char *what,
                    long v, long max)
{
    const struct dir_one *d = &f->set->d[f->set->last[slot] - 1];

    return loom_error_field(f->err, LOOM_EINVAL, "script", "line %d: %.200s: "
                            "makes %ld %s, more than Loom's limit of %ld",
                            d->line, d->text, v, what, max);
}

/* Of the slots in mask that directives filled, the one filled last
 * (DS_N: none). */
static enum dir_slot latest(const struct fill *f, unsigned long long mask)
{
    enum dir_slot best = DS_N;

    for (int s = 0; s < DS_N; s++)
        if ((mask & DIR_BIT(s)) && f->set->last[s] &&
            (best == DS_N || f->set->last[s] > f->set->last[best]))
            best = (enum dir_slot)s;
    return best;
}

/* The slots of mask that directives filled: given (the body has field),
 * or to be applied (1 returned; the one that wins is the caller's). */
static int claim(struct fill *f, unsigned long long mask, const char *field)
{
    int any = 0, giv = given(f, field);

    for (int s = 0; s < DS_N; s++)
        if ((mask & DIR_BIT(s)) && f->set->last[s]) {
            f->use[s] = giv ? U_GIVEN : U_OTHER;
            any = 1;
        }
    return any && !giv;
}

/* The array's tasks, with Grid Engine's -tc (tasks at once) as its %N:
 * a new JSON string. */
static json_t *array_text(struct fill *f)
{
    const char *t = f->set->text[DS_ARRAY];
    char buf[LOOM_ARRAY_SPEC_MAX + 32];

    if (!f->set->last[DS_ARRAY_LIMIT])
        return json_string(t);
    f->use[DS_ARRAY_LIMIT] = U_APPLIED;
    snprintf(buf, sizeof(buf), "%.*s%%%ld", (int)strcspn(t, "%"), t,
             f->set->num[DS_ARRAY_LIMIT]);
    return json_string(buf);
}

/* A limit of tasks at once without an array to limit. */
static int limit_alone(struct fill *f)
{
    const struct dir_one *d;

    if (!f->set->last[DS_ARRAY_LIMIT] || f->use[DS_ARRAY_LIMIT] != U_NONE)
        return 0;
    if (given(f, "array")) {
        f->use[DS_ARRAY_LIMIT] = U_GIVEN;
        return 0;
    }
    d = &f->set->d[f->set->last[DS_ARRAY_LIMIT] - 1];
    return loom_error_field(f->err, LOOM_EINVAL, "script", "line %d: %.200s: "
                            "the script has no array (-t) for it to limit",
                            d->line, d->text);
}

/* Text and flag slots, and the plain numbers: nodes, walltime, priority. */
static int fill_simple(struct fill *f)
{
    static const enum dir_slot plain[] = {DS_NODES, DS_TIME, DS_PRIORITY};

    for (int s = 0; s < DS_N; s++) {
        const struct dir_slot_def *sd = &dir_slot_defs[s];
        json_t *v;
        if (sd->kind == SK_NUM || sd->kind == SK_OWN || !sd->field ||
            !claim(f, DIR_BIT(s), sd->field))
            continue;
        v = s == DS_ARRAY ? array_text(f)
            : sd->kind == SK_TEXT ? json_string(f->set->text[s])
            : s == DS_NO_REQUEUE ? json_false() /* "requeue": false */
                                  : json_true();
        if (put(f, sd->field, v) < 0)
            return -1;
        f->use[s] = U_APPLIED;
    }
    if (limit_alone(f) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        enum dir_slot s = plain[i];
        if (!claim(f, DIR_BIT(s), dir_slot_defs[s].field))
            continue;
        if (put(f, dir_slot_defs[s].field, json_integer(f->set->num[s])) < 0)
            return -1;
        f->use[s] = U_APPLIED;
    }
    return 0;
}

#define CPU_SLOTS                                                            \
    (DIR_BIT(DS_NTASKS) | DIR_BIT(DS_TASKS_PER_NODE) |                       \
     DIR_BIT(DS_CPUS_PER_TASK) | DIR_BIT(DS_CPUS_PER_NODE))
#define MEM_SLOTS                                                            \
    (DIR_BIT(DS_MEM_PER_NODE) | DIR_BIT(DS_MEM_PER_CPU) |                    \
     DIR_BIT(DS_MEM_TOTAL))
#define GPU_SLOTS                                                            \
    (DIR_BIT(DS_GPUS) | DIR_BIT(DS_GPUS_PER_CPU) | DIR_BIT(DS_GPUS_TOTAL))

/* cpus_per_node: Grid Engine's and PBS's cpus on a node, or Slurm's tasks
 * per node (--ntasks-per-node, or --ntasks over the nodes) times cpus per
 * task. Slurm's --ntasks with --ntasks-per-node and no node count asks
 * for as many nodes as the tasks need. */
static int fill_cpus(struct fill *f)
{
    const struct dir_set *set = f->set;
    long nodes, tpn, c;
    enum dir_slot by = DS_CPUS_PER_NODE;

    if (set->last[DS_NTASKS] && set->last[DS_TASKS_PER_NODE] &&
        !set->last[DS_NODES] && !given(f, "request.nodes")) {
        nodes = (set->num[DS_NTASKS] + set->num[DS_TASKS_PER_NODE] - 1) /
                set->num[DS_TASKS_PER_NODE];
        if (nodes > LOOM_JOB_NODES_MAX)
            return too_much(f, DS_NTASKS, "nodes", nodes, LOOM_JOB_NODES_MAX);
        if (put(f, "request.nodes", json_integer(nodes)) < 0)
            return -1;
        f->also[DS_NTASKS] = "request.nodes";
    }
    if (!claim(f, CPU_SLOTS, "request.cpus_per_node"))
        return 0;
    nodes = given_num(f, "nodes", 1);
    if (set->last[DS_CPUS_PER_NODE]) {
        c = set->num[DS_CPUS_PER_NODE];
    } else {
        tpn = set->last[DS_TASKS_PER_NODE] ? set->num[DS_TASKS_PER_NODE]
              : set->last[DS_NTASKS] ? (set->num[DS_NTASKS] + nodes - 1) / nodes
                                     : 1;
        c = tpn * (set->last[DS_CPUS_PER_TASK] ? set->num[DS_CPUS_PER_TASK]
                                               : 1);
        by = latest(f, CPU_SLOTS);
    }
    for (int s = 0; s < DS_N; s++)
        if ((CPU_SLOTS & DIR_BIT(s)) && set->last[s])
            f->use[s] = U_APPLIED;
    if (c > LOOM_JOB_CPUS_MAX)
        return too_much(f, by, "cpus per node", c, LOOM_JOB_CPUS_MAX);
    return put(f, "request.cpus_per_node", json_integer(c));
}

/* memory_mb: per node, per cpu times the cpus, or the job's over its
 * nodes (rounded up); the directive filled last wins. */
static int fill_mem(struct fill *f)
{
    enum dir_slot by = latest(f, MEM_SLOTS);
    long nodes = given_num(f, "nodes", 1), v, mb;

    if (!claim(f, MEM_SLOTS, "request.memory_mb"))
        return 0;
    v = f->set->num[by];
    mb = by == DS_MEM_PER_NODE ? v
         : by == DS_MEM_PER_CPU ? v * given_num(f, "cpus_per_node", 1)
                                : (v + nodes - 1) / nodes;
    f->use[by] = U_APPLIED;
    if (mb > LOOM_JOB_MEMORY_MB_MAX)
        return too_much(f, by, "MiB per node", mb, LOOM_JOB_MEMORY_MB_MAX);
    return put(f, "request.memory_mb", json_integer(mb));
}

/* gpus: per node, per cpu times the cpus, or the job's over its nodes
 * (which must divide them). */
static int fill_gpus(struct fill *f)
{
    enum dir_slot by = latest(f, GPU_SLOTS);
    long nodes = given_num(f, "nodes", 1), v, g;
    const struct dir_one *d;

    if (!claim(f, GPU_SLOTS, "request.gpus"))
        return 0;
    v = f->set->num[by];
    d = &f->set->d[f->set->last[by] - 1];
    if (by == DS_GPUS_TOTAL && nodes > 0 && v % nodes)
        return loom_error_field(f->err, LOOM_EINVAL, "script", "line %d: "
                                "%.200s: %ld GPUs do not divide evenly over "
                                "%ld nodes (Loom's gpus are per node)",
                                d->line, d->text, v, nodes);
    g = by == DS_GPUS ? v
        : by == DS_GPUS_PER_CPU ? v * given_num(f, "cpus_per_node", 1)
                                : v / (nodes > 0 ? nodes : 1);
    f->use[by] = U_APPLIED;
    if (g > LOOM_JOB_GPUS_MAX)
        return too_much(f, by, "GPUs per node", g, LOOM_JOB_GPUS_MAX);
    return put(f, "request.gpus", json_integer(g));
}

static int fill_features(struct fill *f)
{
    const struct strv *ft = &f->set->features;
    json_t *a;

    if (!claim(f, DIR_BIT(DS_FEATURES), "request.features"))
        return 0;
    if (ft->n > LOOM_JOB_FEATURES_MAX)
        return too_much(f, DS_FEATURES, "features", (long)ft->n,
                        LOOM_JOB_FEATURES_MAX);
    if (!(a = json_array()))
        return put(f, "request.features", NULL);
    for (size_t i = 0; i < ft->n; i++)
        json_array_append_new(a, json_string(ft->v[i]));
    f->use[DS_FEATURES] = U_APPLIED;
    return put(f, "request.features", a);
}

/* ---- files, working directory, environment ------------------------------ */

/* A 400 on the directive that filled slot: "line 3: #SBATCH ...: why". */
static int refuse(struct fill *f, enum dir_slot slot, const char *why)
{
    const struct dir_one *d = &f->set->d[f->set->last[slot] - 1];

    return loom_error_field(f->err, LOOM_EINVAL, "script", "line %d: "
                            "%.200s: %.280s", d->line, d->text, why);
}

/* The body's submit_dir (checked), or NULL into *dir. 0, or -1 with err. */
static int submit_dir(struct fill *f, const char **dir)
{
    json_t *v = json_object_get(f->body, "submit_dir");

    *dir = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return loom_error_field(f->err, LOOM_EINVAL, "submit_dir", "field "
                                "'submit_dir' must be a string");
    if (outpath_check(json_string_value(v), "submit_dir", 1, f->err) < 0)
        return -1;
    *dir = json_string_value(v);
    return 0;
}

/* dir/rel (escape: dir's '%' doubled, for a name with patterns), or rel
 * when it is absolute: a new JSON string. */
static json_t *under(const char *dir, const char *rel, int escape)
{
    size_t n, o = 0;
    char *buf;
    json_t *v;

    if (rel[0] == '/' || !dir)
        return json_string(rel);
    n = strlen(dir);
    if (!(buf = malloc(2 * n + strlen(rel) + 2)))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (escape && dir[i] == '%')
            buf[o++] = '%';
        buf[o++] = dir[i];
    }
    if (!o || buf[o - 1] != '/')
        buf[o++] = '/';
    memcpy(buf + o, rel, strlen(rel) + 1);
    if (!strcmp(rel, "."))
        buf[o - (o > 1)] = '\0';
    v = json_string(buf);
    free(buf);
    return v;
}

/* One of output and error from slot: PBS's relative paths are the submit
 * directory's, the others' the working directory's. */
static int fill_name(struct fill *f, enum dir_slot slot, const char *field,
                     const char *sdir)
{
    int pbs = f->set->sys == &dir_pbs;

    if (!claim(f, DIR_BIT(slot), field))
        return 0;
    f->use[slot] = U_APPLIED;
    if (slot == DS_ERROR && !strcmp(field, "output"))
        f->also[slot] = "output";
    return put(f, field, under(pbs ? sdir : NULL, f->set->text[slot], 1));
}

/* output and error; joined (-j y, -j oe), error goes to the output file,
 * which is what Loom does when error is absent; PBS's -j eo puts both in
 * the error file; -j n without -e: the error file Grid Engine and PBS
 * name by default. */
static int fill_files(struct fill *f)
{
    const struct dir_set *set = f->set;
    long join = set->last[DS_JOIN] ? set->num[DS_JOIN] : -1;
    enum dir_slot out = join == 2 ? DS_ERROR : DS_OUTPUT;
    const char *sdir;

    if (submit_dir(f, &sdir) < 0 || fill_name(f, out, "output", sdir) < 0)
        return -1;
    if (join > 0) {
        enum dir_slot other = join == 2 ? DS_OUTPUT : DS_ERROR;
        if (claim(f, DIR_BIT(DS_JOIN), "error"))
            f->use[DS_JOIN] = U_APPLIED;
        if (set->last[other] && f->use[DS_JOIN] == U_APPLIED)
            f->use[other] = U_OTHER;
        else if (set->last[other])
            claim(f, DIR_BIT(other), "error");
        return 0;
    }
    if (fill_name(f, DS_ERROR, "error", sdir) < 0)
        return -1;
    if (join == 0 && f->use[DS_ERROR] == U_NONE &&
        claim(f, DIR_BIT(DS_JOIN), "error")) {
        f->use[DS_JOIN] = U_APPLIED;
        return put(f, "error", json_string("%x.e%j"));
    }
    return 0;
}

/* workdir: -D, -wd, -d (absolute, or relative to the submit directory)
 * or -cwd (the submit directory), the one given last. */
static int fill_workdir(struct fill *f)
{
    const unsigned long long mask = DIR_BIT(DS_WORKDIR) | DIR_BIT(DS_CWD);
    enum dir_slot by = latest(f, mask);
    const char *sdir, *text = f->set->text[DS_WORKDIR];
    struct loom_error why;
    json_t *v;

    if (!claim(f, mask, "workdir"))
        return 0;
    f->use[by] = U_APPLIED;
    if (submit_dir(f, &sdir) < 0)
        return -1;
    if (!sdir && (by == DS_CWD || text[0] != '/'))
        return refuse(f, by, "the request does not say where it was "
                      "submitted from (submit_dir): submit with loomctl, or "
                      "give submit_dir or workdir");
    v = by == DS_CWD ? json_string(sdir) : under(sdir, text, 0);
    if (v && outpath_check(json_string_value(v), "workdir", 1, &why) < 0) {
        json_decref(v);
        return refuse(f, by, why.message);
    }
    return put(f, "workdir", v);
}

int dir_export_needs_env(const char *text)
{
    size_t n;

    for (const char *p = text; *p; p += n + (p[n] == ',')) {
        n = strcspn(p, ",");
        if ((n != 4 || strncmp(p, "NONE", 4)) && strcspn(p, "=,") == n)
            return 1;
    }
    return 0;
}

/* env from NONE, ALL, NAME and NAME=value (the submitter's values from
 * the body's submit_env, which only a client can give). */
static int fill_env(struct fill *f)
{
    const char *text = f->set->text[DS_EXPORT], *p, *k;
    json_t *senv = json_object_get(f->body, "submit_env"), *env, *v;
    size_t n, name;
    char *key;

    if (!claim(f, DIR_BIT(DS_EXPORT), "env"))
        return 0;
    f->use[DS_EXPORT] = U_APPLIED;
    if (!json_is_object(senv))
        senv = NULL;
    if (!senv && dir_export_needs_env(text))
        return refuse(f, DS_EXPORT, "it passes the submitter's environment, "
                      "which only the client has: submit with 'loomctl "
                      "submit --export ALL', or give the request's "
                      "submit_env");
    if (!(env = json_object()))
        return put(f, "env", NULL);
    for (p = text; *p; p += n + (p[n] == ',')) {
        n = strcspn(p, ",");
        name = strcspn(p, "=,");
        if (name == 3 && !strncmp(p, "ALL", 3) && n == 3)
            json_object_foreach(senv, k, v)
                if (json_is_string(v))
                    json_object_set(env, k, v);
        if ((n == 4 && !strncmp(p, "NONE", 4)) ||
            (n == 3 && !strncmp(p, "ALL", 3)))
            continue;
        if (!(key = strndup(p, name))) {
            json_decref(env);
            return put(f, "env", NULL);
        }
        v = name < n ? json_stringn(p + name + 1, n - name - 1)
                     : json_incref(json_object_get(senv, key));
        if (json_is_string(v))
            json_object_set(env, key, v);
        json_decref(v);
        free(key);
    }
    if ((n = json_object_size(env)) > LOOM_JOB_ENV_MAX) {
        json_decref(env);
        return too_much(f, DS_EXPORT, "variables", (long)n, LOOM_JOB_ENV_MAX);
    }
    return put(f, "env", env);
}

int dir_workdir_default(json_t *body, const struct dir_system *sys,
                        struct loom_error *err)
{
    json_t *w = json_object_get(body, "workdir"),
           *sd = json_object_get(body, "submit_dir");

    if ((w && !json_is_null(w)) || !json_is_string(sd) || sys == &dir_sge)
        return 0;
    if (json_object_set(body, "workdir", sd) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

/* ---- the record ---------------------------------------------------------- */

/* Did directive i apply slot s? */
static int applied(const struct fill *f, size_t i, int s)
{
    if (f->use[s] != U_APPLIED)
        return 0;
    if (s == DS_FEATURES)
        return i >= f->set->features_from;
    if (s == DS_EXPORT)
        return i >= f->set->export_from;
    return f->set->last[s] == (int)i + 1;
}

/* Why directive i applied its slot s not, into why. */
static void why_not(const struct fill *f, size_t i, int s, char *why,
                    size_t n)
{
    const struct dir_set *set = f->set;
    const char *field = dir_slot_defs[s].field;

    if (f->use[s] == U_GIVEN) {
        snprintf(why, n, "the request gives %s", field);
    } else if (s == DS_FEATURES || s == DS_EXPORT ||
               set->last[s] != (int)i + 1) {
        size_t by = s == DS_FEATURES ? set->features_from
                    : s == DS_EXPORT ? set->export_from
                                     : (size_t)set->last[s] - 1;
        snprintf(why, n, "line %d gives the %s again", set->d[by].line,
                 dir_slot_defs[s].what);
    } else {
        for (int t = 0; t < DS_N; t++)
            if (f->use[t] == U_APPLIED && dir_slot_defs[t].field &&
                !strcmp(dir_slot_defs[t].field, field))
                snprintf(why, n, "line %d gives the %s another way",
                         set->d[set->last[t] - 1].line, dir_slot_defs[t].what);
    }
}

static void add_field(json_t *fields, const char *field)
{
    size_t i;
    json_t *v;

    json_array_foreach(fields, i, v)
        if (!strcmp(json_string_value(v), field))
            return;
    json_array_append_new(fields, json_string(field));
}

static int record_of(const struct fill *f, json_t **record)
{
    const struct dir_set *set = f->set;
    json_t *arr = json_array(), *o, *fields;
    char why[256];

    for (size_t i = 0; arr && i < set->n; i++) {
        const struct dir_one *d = &set->d[i];
        snprintf(why, sizeof(why), "%s", d->ignored ? d->ignored : "");
        fields = json_array();
        for (int s = 0; fields && s < DS_N; s++) {
            if (!(d->slots & DIR_BIT(s)))
                continue;
            if (applied(f, i, s)) {
                add_field(fields, dir_slot_defs[s].field);
                if (f->also[s])
                    add_field(fields, f->also[s]);
            } else if (!why[0]) {
                why_not(f, i, s, why, sizeof(why));
            }
        }
        o = json_pack("{s:i, s:s, s:o*}", "line", d->line, "directive",
                      d->text, "fields", fields);
        if (o && !json_array_size(fields) && why[0])
            json_object_set_new(o, "ignored", json_string(why));
        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    if (!arr)
        return loom_error_set(f->err, LOOM_EINTERNAL, "out of memory");
    *record = arr;
    return 0;
}

int dir_request(struct dir_set *set, json_t *body, json_t **record,
                struct loom_error *err)
{
    struct fill f = {.set = set, .body = body, .err = err};
    json_t *r = json_object_get(body, "request");

    if (r && !json_is_object(r))
        return 0; /* the request's own check refuses it */
    f.req = r;
    if (fill_simple(&f) < 0 || fill_cpus(&f) < 0 || fill_mem(&f) < 0 ||
        fill_gpus(&f) < 0 || fill_features(&f) < 0 || fill_files(&f) < 0 ||
        fill_workdir(&f) < 0 || fill_env(&f) < 0)
        return -1;
    return record_of(&f, record);
}
