/* sinfo.c - sinfo: the fabric's partitions (each queue name, over every
 * cluster that has it) and their nodes by state. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FORMAT "%9P %.5a %.10l %.6D %.6t %N"
#define NODE_FORMAT "%N %.6D %9P %.6t"
#define DEFAULT_WALLTIME_S 3600 /* a request's default walltime_s */

static long long jnum(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* Node states as sinfo's short and long forms. */
static const struct {
    const char *loom, *code, *name;
} states[] = {
    {"idle", "idle", "idle"},       {"mixed", "mix", "mixed"},
    {"allocated", "alloc", "allocated"}, {"reserved", "resv", "reserved"},
    {"draining", "drng", "draining"}, {"drained", "drain", "drained"},
    {"down", "down", "down"},       {"maint", "maint", "maint"},
    {"paused", "drain", "drained"}, {"unknown", "unk", "unknown"},
};

static int state_of(const char *loom)
{
    for (size_t i = 0; i < sizeof(states) / sizeof(*states); i++)
        if (!strcmp(states[i].loom, loom))
            return (int)i;
    return (int)(sizeof(states) / sizeof(*states)) - 1;
}

static const char *f_partition(const json_t *r, char *b, size_t n)
{
    return sc_str(r, "partition");
}

static const char *f_avail(const json_t *r, char *b, size_t n)
{
    return sc_str(r, "avail");
}

static const char *f_limit(const json_t *r, char *b, size_t n)
{
    const json_t *v = json_object_get(r, "max_walltime_s");

    return json_is_integer(v) ? sc_duration(json_integer_value(v), 1, b, n)
                              : "infinite";
}

static const char *f_default_time(const json_t *r, char *b, size_t n)
{
    return sc_duration(DEFAULT_WALLTIME_S, 1, b, n);
}

static const char *f_count(const json_t *r, char *b, size_t n)
{
    snprintf(b, n, "%zu", json_array_size(json_object_get(r, "nodes")));
    return b;
}

static const char *f_state(const json_t *r, char *b, size_t n)
{
    return states[jnum(r, "state")].code;
}

static const char *f_state_long(const json_t *r, char *b, size_t n)
{
    return states[jnum(r, "state")].name;
}

static const char *f_nodelist(const json_t *r, char *b, size_t n)
{
    return sc_nodelist(json_object_get(r, "nodes"), b, n);
}

static const char *f_cpus(const json_t *r, char *b, size_t n)
{
    long long tot = jnum(r, "cpus"), alloc = jnum(r, "cpus_alloc");
    long long other = jnum(r, "cpus_other");

    snprintf(b, n, "%lld/%lld/%lld/%lld", alloc, tot - alloc - other, other,
             tot);
    return b;
}

static const char *f_cpn(const json_t *r, char *b, size_t n)
{
    snprintf(b, n, "%lld", jnum(r, "cpn"));
    return b;
}

static const char *f_mem(const json_t *r, char *b, size_t n)
{
    snprintf(b, n, "%lld", jnum(r, "mem"));
    return b;
}

static const char *f_cluster(const json_t *r, char *b, size_t n)
{
    return sc_str(r, "clusters");
}

static const struct sc_field fields[] = {
    {'P', "Partition", "PARTITION", 9, f_partition},
    {'R', "PartitionName", "PARTITION", 9, f_partition},
    {'a', "Available", "AVAIL", 5, f_avail},
    {'l', "TimeLimit", "TIMELIMIT", 10, f_limit},
    {'L', "DefaultTime", "DEFAULTTIME", 11, f_default_time},
    {'D', "Nodes", "NODES", 6, f_count},
    {'t', "StateCompact", "STATE", 6, f_state},
    {'T', "StateLong", "STATE", 9, f_state_long},
    {'N', "NodeList", "NODELIST", 20, f_nodelist},
    {'C', "CPUsState", "CPUS(A/I/O/T)", 13, f_cpus},
    {'c', "CPUs", "CPUS", 4, f_cpn},
    {'m', "Memory", "MEMORY", 6, f_mem},
    {'V', "Cluster", "CLUSTER", 8, f_cluster},
    {0, NULL, NULL, 0, NULL},
};

struct sinfo {
    const char *format, *fields, *parts, *clusters, *states;
    int noheader, by_node, summarize;
    enum sc_doc json; /* --json, --yaml */
};

static int options(struct sinfo *s, int argc, char **argv)
{
    static const struct option longs[] = {
        {"format", required_argument, NULL, 'o'},
        {"Format", required_argument, NULL, 'O'},
        {"noheader", no_argument, NULL, 'h'},
        {"partition", required_argument, NULL, 'p'},
        {"clusters", required_argument, NULL, 'M'},
        {"all", no_argument, NULL, 'a'},
        {"Node", no_argument, NULL, 'N'},
        {"states", required_argument, NULL, 't'},
        {"summarize", no_argument, NULL, 's'},
        {"json", no_argument, NULL, 'J'},
        {"yaml", no_argument, NULL, 'Y'},
        {"noconvert", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'H'},
        {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:O:hp:M:aNt:s", longs, NULL)) !=
           -1) {
        switch (c) {
        case 'o': s->format = optarg; break;
        case 'O': s->fields = optarg; break;
        case 'h': s->noheader = 1; break;
        case 'p': s->parts = optarg; break;
        case 'M': s->clusters = optarg; break;
        case 'a': case 'c': break; /* Loom hides none, converts none */
        case 'N': s->by_node = 1; break;
        case 't': s->states = optarg; break;
        case 's':
            return sc_unsupported("--summarize", "give -o with %C or %F");
        case 'J': s->json = SC_DOC_JSON; break;
        case 'Y': s->json = SC_DOC_YAML; break;
        case 'H':
            printf("Usage: sinfo [-p PARTITIONS] [-M CLUSTERS] [-t STATES] "
                   "[-N] [-h] [-o FORMAT | -O FIELDS | --json | --yaml]\n");
            return SC_OK;
        default:
            return sc_opt_error(c, argv);
        }
    }
    if (optind < argc)
        return sc_usage("unexpected argument '%s'", argv[optind]);
    if (s->json && (s->format || s->fields || s->by_node))
        return sc_usage("%s writes every node with every field Loom has; "
                        "it takes no %s", sc_doc_option(s->json),
                        s->format ? "--format" : s->fields ? "--Format"
                                                           : "--Node");
    return -1;
}

/* Is node n in a state -t names (its code or Loom's name)? */
static int state_wanted(const struct sinfo *s, const json_t *n)
{
    const char *st = sc_str(n, "state");

    return !s->states || sc_listed(s->states, states[state_of(st)].code) ||
           sc_listed(s->states, st);
}

/* Add node n to the row of partition part and its state (by_node: a row
 * of its own), made on first use. */
static json_t *row_for(json_t *rows, const json_t *q, const json_t *n,
                       int by_node)
{
    int st = state_of(sc_str(n, "state"));
    size_t i;
    json_t *r;

    json_array_foreach(rows, i, r)
        if (!strcmp(sc_str(r, "partition"), sc_str(q, "queue")) &&
            jnum(r, "state") == st &&
            (!by_node || !strcmp(json_string_value(json_array_get(
                                     json_object_get(r, "nodes"), 0)),
                                 sc_str(n, "id"))))
            return r;
    r = json_pack("{s:s, s:s, s:O, s:i, s:[], s:i, s:i, s:i, s:i, s:i, "
                  "s:s}", "partition", sc_str(q, "queue"), "avail",
                  !strcmp(sc_str(q, "state"), "open") ? "up" : "down",
                  "max_walltime_s", json_object_get(q, "max_walltime_s"),
                  "state", st, "nodes", "cpus", 0, "cpus_alloc", 0,
                  "cpus_other", 0, "cpn", (int)jnum(n, "cpus"), "mem",
                  (int)jnum(n, "memory_mb"), "clusters", sc_str(q, "cluster"));
    json_array_append_new(rows, r);
    return r;
}

/* Count node n in row r. */
static void add_node(json_t *r, const json_t *n)
{
    const char *st = sc_str(n, "state");
    int usable = !strcmp(st, "idle") || !strcmp(st, "mixed") ||
                 !strcmp(st, "allocated") || !strcmp(st, "reserved");

    json_array_append_new(json_object_get(r, "nodes"),
                          json_string(sc_str(n, "id")));
    json_object_set_new(r, "cpus", json_integer(jnum(r, "cpus") +
                                                jnum(n, "cpus")));
    json_object_set_new(r, "cpus_alloc", json_integer(
                                             jnum(r, "cpus_alloc") +
                                             jnum(n, "cpus_alloc")));
    if (!usable)
        json_object_set_new(r, "cpus_other",
                            json_integer(jnum(r, "cpus_other") +
                                         jnum(n, "cpus") -
                                         jnum(n, "cpus_alloc")));
    if (!strstr(sc_str(r, "clusters"), sc_str(n, "cluster"))) {
        char b[1024];
        snprintf(b, sizeof(b), "%s,%s", sc_str(r, "clusters"),
                 sc_str(n, "cluster"));
        json_object_set_new(r, "clusters", json_string(b));
    }
}

int sc_sinfo(int argc, char **argv)
{
    struct sinfo s = {0};
    struct sc_format fmt;
    struct loom_error err = {0};
    json_t *qs = NULL, *ns = NULL, *byid, *rows, *shown, *q, *n, *id;
    size_t i, k;
    int rc;

    if ((rc = options(&s, argc, argv)) >= 0)
        return rc;
    if ((s.fields ? sc_format_names(s.fields, fields, &fmt)
                  : sc_format_letters(s.format ? s.format
                                      : s.by_node ? NODE_FORMAT
                                                  : DEFAULT_FORMAT,
                                      fields, &fmt)) < 0)
        return SC_USAGE;
    if (sc_get("/v1/queues?view=fabric", &qs, &err) < 0 ||
        sc_get("/v1/nodes", &ns, &err) < 0) {
        json_decref(qs);
        sc_format_fini(&fmt);
        return sc_fail("slurm_load_partitions: %s", err.message);
    }
    byid = json_object();
    rows = json_array();
    shown = json_object();
    json_array_foreach(json_object_get(ns, "items"), i, n)
        json_object_set(byid, sc_str(n, "id"), n);
    json_array_foreach(json_object_get(qs, "items"), i, q) {
        if ((s.parts && !sc_listed(s.parts, sc_str(q, "queue"))) ||
            (s.clusters && !sc_listed(s.clusters, sc_str(q, "cluster"))))
            continue;
        json_array_foreach(json_object_get(q, "nodes"), k, id) {
            n = json_object_get(byid, json_string_value(id));
            if (!n || !state_wanted(&s, n))
                continue;
            if (s.json) /* each node once, whatever its partitions */
                json_object_set(shown, sc_str(n, "id"), n);
            else
                add_node(row_for(rows, q, n, s.by_node), n);
        }
    }
    if (s.json) {
        json_array_foreach(json_object_get(ns, "items"), i, n)
            if (json_object_get(shown, sc_str(n, "id")))
                json_array_append_new(rows, sc_json_node(n));
        rc = json_array_size(rows) ==
                     json_object_size(shown)
                 ? sc_doc_print(s.json, "openapi/v0.0.38",
                                "Slurm OpenAPI v0.0.38", "nodes",
                                json_incref(rows))
                 : sc_fail("out of memory");
    } else {
        if (!s.noheader)
            sc_format_header(&fmt, NULL);
        json_array_foreach(rows, i, q)
            sc_format_row(&fmt, q, NULL);
        rc = SC_OK;
    }
    json_decref(shown);
    json_decref(rows);
    json_decref(byid);
    json_decref(ns);
    json_decref(qs);
    sc_format_fini(&fmt);
    return rc;
}
