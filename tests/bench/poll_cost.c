/* poll_cost.c - what reading a jobs list costs an API adaptor, stage by
 * stage, without the network: the loom adaptor's answer of an inner loomd
 * (whole jobs, as before ?fields=, and jobs narrowed to what it reads)
 * parsed (json_loadb) and converted (lpeer_parse_jobs), and slurmrestd's
 * answer (a recorded one, its jobs repeated) scanned (srest_scan_jobs).
 * Built by `make bench`:
 *
 *   poll_cost SLURMREST_JOBS_JSON [N...]
 *
 * For each N (default 100 and 1000): one line per way, the median of
 * REPS (env POLL_COST_REPS, default 50) runs in microseconds, and the
 * answer's size. Under valgrind --tool=callgrind, with POLL_COST_REPS=1,
 * the instruction counts per stage are the machine-independent figure.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "adaptors/loompeer.h"
#include "adaptors/slurmrest.h"
#include "core/timeutil.h"

/* One job of an inner loomd as GET /v1/jobs shows it to an operator: one
 * of the outer loomd's, started there (a script of 1 KiB, 20 variables). */
static json_t *inner_job(struct lpeer *p, long id)
{
    char marker[LPEER_MARKER_MAX], script[1100], v[40];
    json_t *env = json_object(), *j;

    lpeer_marker(p, id, marker);
    memset(script, '#', sizeof(script) - 1);
    memcpy(script, "#!/bin/sh\n", 10);
    script[sizeof(script) - 1] = '\0';
    for (int i = 0; i < 20; i++) {
        snprintf(v, sizeof(v), "VAR_%d", i);
        json_object_set_new(env, v, json_string("/usr/local/bin:/usr/bin"));
    }
    json_object_set_new(env, LPEER_ID_VAR, json_string(marker));
    snprintf(v, sizeof(v), "%ld", id);
    j = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:i, s:i, s:i, s:i, s:i, "
        "s:[], s:s, s:n, s:n}, s:s, s:n, s:s, s:s, s:n, s:s, s:o, s:[], "
        "s:i, s:s, s:s, s:[s], s:s, s:s, s:n, s:n, s:n, s:n, s:n, s:n, "
        "s:n, s:s, s:s, s:i, s:b, s:b, s:s}",
        "id", v, "name", "bench", "comment", "", "owner", "alice",
        "account", "alice", "source", "local", "state", "running",
        "request", "nodes", 1, "cpus_per_node", 4, "memory_mb", 1000,
        "gpus", 0, "walltime_s", 3600, "features", "cluster", "slurm",
        "queue", "reservation",
        "workdir", "/home/alice", "submit_dir", "output", "loom-%j.out",
        "error", "loom-%j.out", "command", "script", script, "env", env,
        "directives", "priority", 0, "cluster", "slurm", "native_id", v,
        "nodes", "n1", "submit_time", "2026-11-26T10:34:01Z",
        "start_time", "2026-11-26T10:34:02Z", "end_time", "exit_code",
        "usage", "reason", "planned_start", "planned_cluster",
        "queue_position", "stdout", "/home/alice/loom-1.out", "stderr",
        "/home/alice/loom-1.out", "requeues", 0, "requeue", 1,
        "held_for_loom", 0, "loom_id", v);
    return j;
}

/* {"items":[N jobs]}: whole, or narrowed to the members the loom adaptor
 * asks for (LPEER_JOB_FIELDS, as GET /v1/jobs?fields= answers them). */
static char *inner_answer(struct lpeer *p, long n, int narrow)
{
    json_t *items = json_array(), *doc;
    char *text, name[32];

    for (long i = 0; i < n; i++) {
        json_t *j = inner_job(p, 1000 + i), *o = j;
        if (narrow) {
            o = json_object();
            for (const char *f = LPEER_JOB_FIELDS; *f;) {
                size_t len = strcspn(f, ",");
                snprintf(name, sizeof(name), "%.*s", (int)len, f);
                json_object_set(o, name, json_object_get(j, name));
                f += len + (f[len] == ',');
            }
            json_decref(j);
        }
        json_array_append_new(items, o);
    }
    doc = json_pack("{s:o}", "items", items);
    text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return text;
}

/* slurmrestd's recorded answer with its jobs repeated to n. */
static char *srest_answer(const char *file, long n)
{
    json_t *doc = json_load_file(file, 0, NULL), *jobs, *more;
    size_t have;
    char *text;

    if (!doc || !(jobs = json_object_get(doc, "jobs")) ||
        !(have = json_array_size(jobs)))
        return NULL;
    more = json_array();
    for (long i = 0; i < n; i++) {
        json_t *j = json_deep_copy(json_array_get(jobs, (size_t)i % have));
        json_object_set_new(j, "job_id", json_integer(1000 + i));
        json_array_append_new(more, j);
    }
    json_object_set_new(doc, "jobs", more);
    text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return v[(n - 1) / 2];
}

/* The loom adaptor's parse and conversion of text, REPS times. */
static void loom_way(struct lpeer *p, const char *what, long n,
                     const char *text, int reps)
{
    double *parse = calloc((size_t)reps, sizeof(*parse));
    double *conv = calloc((size_t)reps, sizeof(*conv));
    struct loom_error err = {0};

    if (!parse || !conv)
        exit(1);
    for (int r = 0; r < reps; r++) {
        struct cl_job_list l = {0};
        long long low = 0, high = 0;
        double t0 = time_mono(), t1, t2;
        json_t *doc = json_loadb(text, strlen(text), 0, NULL);
        t1 = time_mono();
        if (!doc || lpeer_parse_jobs(p, doc, &l, &low, &high, &err) < 0) {
            fprintf(stderr, "poll_cost: %s\n", err.message);
            exit(1);
        }
        t2 = time_mono();
        json_decref(doc);
        cl_job_list_fini(&l);
        parse[r] = (t1 - t0) * 1e6;
        conv[r] = (t2 - t1) * 1e6;
    }
    printf("loom adaptor  %-26s %5ld jobs %8zu bytes: parse %8.0f us, "
           "convert %6.0f us\n", what, n, strlen(text), median(parse, reps),
           median(conv, reps));
    free(parse);
    free(conv);
}

static void srest_way(long n, const char *text, int reps)
{
    double *t = calloc((size_t)reps, sizeof(*t));
    struct loom_error err = {0};

    if (!t)
        exit(1);
    for (int r = 0; r < reps; r++) {
        struct cl_job_list l = {0};
        unsigned long max = 0;
        double t0 = time_mono();
        if (srest_scan_jobs(text, strlen(text), &l, &max, &err) < 0) {
            fprintf(stderr, "poll_cost: %s\n", err.message);
            exit(1);
        }
        t[r] = (time_mono() - t0) * 1e6;
        cl_job_list_fini(&l);
    }
    printf("slurmrest     %-26s %5ld jobs %8zu bytes: scan and convert "
           "%6.0f us\n", "GET jobs", n, strlen(text), median(t, reps));
    free(t);
}

int main(int argc, char **argv)
{
    static unsigned char key[32] = "poll_cost bench marker key.....";
    struct lpeer p = {.cluster = "fed", .inner = "slurm", .key = key,
                      .key_len = sizeof(key)};
    static const char *const dflt[] = {"100", "1000"};
    const char *const *ns = argc > 2 ? (const char *const *)argv + 2 : dflt;
    int n_ns = argc > 2 ? argc - 2 : 2;
    const char *r = getenv("POLL_COST_REPS");
    int reps = r ? (int)strtol(r, NULL, 10) : 50;

    if (argc < 2 || reps < 1) {
        fprintf(stderr, "usage: poll_cost SLURMREST_JOBS_JSON [N...]\n");
        return 2;
    }
    hmap_init(&p.account);
    for (int i = 0; i < n_ns; i++) {
        long n = strtol(ns[i], NULL, 10);
        char *whole = inner_answer(&p, n, 0);
        char *narrow = inner_answer(&p, n, 1);
        char *srest = srest_answer(argv[1], n);
        if (!whole || !narrow || !srest) {
            fprintf(stderr, "poll_cost: cannot make the answers (%s)\n",
                    argv[1]);
            return 1;
        }
        loom_way(&p, "whole jobs", n, whole, reps);
        loom_way(&p, "?fields= (narrowed)", n, narrow, reps);
        printf("loom adaptor  %-26s %5ld jobs %8d bytes: nothing to parse\n",
               "304 (If-None-Match)", n, 0);
        srest_way(n, srest, reps);
        free(whole);
        free(narrow);
        free(srest);
    }
    hmap_fini_values(&p.account, free);
    return 0;
}
