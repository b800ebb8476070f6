/* export.c - loomctl export: a job as a native script of Slurm, Grid
 * Engine or PBS, its directives followed by its script or command. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/client.h"
#include "core/ctl/export.h"
#include "core/ctl/loomctl.h"
#include "core/directives.h"
#include "core/timefmt.h"

/* A word quoted for sh: 'it'\''s'. */
static void put_word(const char *s)
{
    putchar('\'');
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*s);
    putchar('\'');
}

/* Names a directive can carry back to Loom: a queue, each feature. */
static int names_ok(const struct exp *e)
{
    static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
                             "vwxyz0123456789._-";
    size_t i;
    json_t *f;

    if (e->queue && strspn(e->queue, ok) != strlen(e->queue))
        return ctl_fail("job %s: its queue '%s' cannot be written as a "
                        "directive", e->id, e->queue);
    json_array_foreach(e->features, i, f)
        if (strspn(json_string_value(f), ok) !=
            strlen(json_string_value(f)))
            return ctl_fail("job %s: its feature '%s' cannot be written as "
                            "a directive", e->id, json_string_value(f));
    if (!export_value_ok(e->name))
        return ctl_fail("job %s: its name cannot be written as a directive "
                        "(a newline, or both kinds of quotes)", e->id);
    return -1;
}

static void slurm_out(const struct exp *e)
{
    char t[32];
    size_t i;
    json_t *f;

    timefmt_slurm_str(e->wall, t);
    fputs("#SBATCH --job-name=", stdout);
    export_put_value(e->name);
    printf("\n#SBATCH --nodes=%ld\n#SBATCH --ntasks-per-node=1\n"
           "#SBATCH --cpus-per-task=%ld\n#SBATCH --mem=%ld\n"
           "#SBATCH --time=%s\n", e->nodes, e->cpus, e->mem, t);
    if (e->gpus)
        printf("#SBATCH --gpus-per-node=%ld\n", e->gpus);
    if (e->queue)
        printf("#SBATCH --partition=%s\n", e->queue);
    json_array_foreach(e->features, i, f)
        printf("%s%s", i ? "&" : "#SBATCH --constraint=",
               json_string_value(f));
    if (json_array_size(e->features))
        putchar('\n');
    export_put_opt("#SBATCH", "--chdir", "=", e->workdir);
    export_put_opt("#SBATCH", "--output", "=", e->out_w);
    export_put_opt("#SBATCH", "--error", "=", e->err_w);
    export_put_opt("#SBATCH", "--export", "=", e->env_w);
}

/* Grid Engine counts memory and GPUs per slot: the node's over its cpus,
 * rounded up (said on stderr when it does not divide). */
static long per_slot(const struct exp *e, long v, const char *what,
                     const char *unit)
{
    long per = (v + e->cpus - 1) / e->cpus;

    if (v % e->cpus)
        fprintf(stderr, "loomctl: export: job %s: %s is per slot: %ld%s "
                "(%ld over %ld slots, rounded up)\n", e->id, what, per, unit,
                v, e->cpus);
    return per;
}

static void sge_out(const struct exp *e)
{
    char t[32];
    size_t i;
    json_t *f;

    timefmt_hms_str(e->wall, t);
    fputs("#$ -N ", stdout);
    export_put_value(e->name);
    putchar('\n');
    if (e->cpus > 1)
        printf("#$ -pe smp %ld\n", e->cpus);
    printf("#$ -l h_rt=%s\n#$ -l h_vmem=%ldM\n", t,
           per_slot(e, e->mem, "h_vmem", "M"));
    if (e->gpus)
        printf("#$ -l gpu=%ld\n", per_slot(e, e->gpus, "gpu", ""));
    if (e->queue)
        printf("#$ -q %s\n", e->queue);
    json_array_foreach(e->features, i, f)
        printf("#$ -l %s=true\n", json_string_value(f));
    export_put_opt("#$", "-wd", " ", e->workdir);
    export_put_opt("#$", "-o", " ", e->out_w);
    export_put_opt("#$", "-e", " ", e->err_w);
    if (!e->err_w) /* Loom's error stream goes to the output file */
        puts("#$ -j y");
    export_put_opt("#$", "-v", " ", e->env_w);
}

static void pbs_out(const struct exp *e)
{
    char t[32];
    size_t i;
    json_t *f;

    timefmt_hms_str(e->wall, t);
    fputs("#PBS -N ", stdout);
    export_put_value(e->name);
    printf("\n#PBS -l select=%ld:ncpus=%ld:mem=%ldmb", e->nodes, e->cpus,
           e->mem);
    if (e->gpus)
        printf(":ngpus=%ld", e->gpus);
    json_array_foreach(e->features, i, f)
        printf(":%s=true", json_string_value(f));
    printf("\n#PBS -l walltime=%s\n", t);
    if (e->queue)
        printf("#PBS -q %s\n", e->queue);
    export_put_opt("#PBS", "-d", " ", e->workdir);
    export_put_opt("#PBS", "-o", " ", e->out_w);
    export_put_opt("#PBS", "-e", " ", e->err_w);
    if (!e->err_w)
        puts("#PBS -j oe");
    export_put_opt("#PBS", "-v", " ", e->env_w);
}

/* After the directives: the script without its own directive lines (and
 * its #! line, written first), or its command. */
static int body_out(const struct exp *e, const char *rest)
{
    size_t i;
    json_t *v;

    if (rest) {
        fputs(rest, stdout);
        return CTL_OK;
    }
    fputs("exec", stdout);
    json_array_foreach(e->command, i, v) {
        putchar(' ');
        put_word(json_string_value(v));
    }
    putchar('\n');
    return CTL_OK;
}

/* The state of the job, or of an array's tasks that have no record of
 * their own yet. */
static const char *state_of(const json_t *job)
{
    const char *tasks = json_string_value(json_object_get(job,
                                                          "array_tasks"));
    const char *ts = json_string_value(json_object_get(job,
                                                       "array_tasks_state"));
    const char *s = json_string_value(json_object_get(job, "state"));

    if (tasks && *tasks && ts)
        return ts;
    return s ? s : "";
}

static int job_in(json_t *job, struct exp *e)
{
    json_t *r = json_object_get(job, "request");

    e->name = json_string_value(json_object_get(job, "name"));
    e->script = json_string_value(json_object_get(job, "script"));
    e->command = json_object_get(job, "command");
    e->env = json_object_get(job, "env");
    e->workdir = json_string_value(json_object_get(job, "workdir"));
    e->output = json_string_value(json_object_get(job, "output"));
    e->error = json_string_value(json_object_get(job, "error"));
    e->queue = json_string_value(json_object_get(r, "queue"));
    e->features = json_object_get(r, "features");
    e->nodes = (long)json_integer_value(json_object_get(r, "nodes"));
    e->cpus = (long)json_integer_value(json_object_get(r, "cpus_per_node"));
    e->mem = (long)json_integer_value(json_object_get(r, "memory_mb"));
    e->gpus = (long)json_integer_value(json_object_get(r, "gpus"));
    e->wall = (long)json_integer_value(json_object_get(r, "walltime_s"));
    e->priority = (long)json_integer_value(json_object_get(job, "priority"));
    e->no_requeue = json_is_false(json_object_get(job, "requeue"));
    e->held = !strcmp(state_of(job), "held");
    e->dependency = json_string_value(json_object_get(job, "dependency"));
    if (!e->name || e->nodes < 1 || e->cpus < 1 || e->mem < 1 ||
        e->wall < 1)
        return ctl_fail("job %s: the answer has no complete request", e->id);
    if (!e->script && !json_array_size(e->command))
        return ctl_fail("job %s has no script or command to export (its "
                        "cluster's user submitted it there, or they are "
                        "not shown to you)", e->id);
    return names_ok(e);
}

/* Write the job in format (slurm, gridengine or pbs) to stdout. */
static int export_job(json_t *job, const char *format, const char *id)
{
    struct exp e = {.id = id};
    char *rest = NULL;
    const char *body = NULL, *nl;
    int rc;

    if ((rc = job_in(job, &e)) >= 0)
        return rc;
    if (!strcmp(format, "gridengine") && e.nodes > 1)
        return ctl_fail("job %s asks for %ld nodes: a Grid Engine script has "
                        "no node count (-pe smp puts its slots on one node)",
                        id, e.nodes);
    if ((rc = export_files_in(&e, format)) >= 0 ||
        (rc = export_sched_in(&e, format)) >= 0)
        goto out;
    rc = CTL_FAIL;
    if (e.script && !(body = rest = directives_strip(e.script))) {
        ctl_fail("out of memory");
        goto out;
    }
    if (body && body[0] == '#' && body[1] == '!' && (nl = strchr(body, '\n'))) {
        printf("%.*s", (int)(nl - body + 1), body);
        body = nl + 1;
    } else {
        fputs("#!/bin/sh\n", stdout);
    }
    if (!strcmp(format, "slurm"))
        slurm_out(&e);
    else if (!strcmp(format, "pbs"))
        pbs_out(&e);
    else
        sge_out(&e);
    export_sched_out(&e, format);
    rc = body_out(&e, body);
out:
    free(rest);
    free(e.out_w);
    free(e.err_w);
    free(e.env_w);
    free(e.dep_w);
    return rc;
}

int cmd_export(struct ctl *ctl, int argc, char **argv)
{
    static const struct option longs[] = {
        { "format", required_argument, NULL, 'f' },
        { NULL, 0, NULL, 0 },
    };
    const char *format = NULL;
    struct loom_error err = { 0 };
    struct client_path p;
    const char *path;
    struct client *c;
    json_t *job;
    int opt, rc;

    while ((opt = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (opt != 'f')
            return ctl_opt_error("export", opt, argv);
        format = optarg;
    }
    if (!format || (strcmp(format, "slurm") && strcmp(format, "gridengine") &&
                    strcmp(format, "pbs")))
        return ctl_usage("export", "--format is slurm, gridengine or pbs%s%s%s",
                         format ? ", not '" : "", format ? format : "",
                         format ? "'" : "");
    if (argc - optind != 1)
        return ctl_usage("export", "give one job id");
    if ((rc = ctl_check_id("export", "job", argv[optind])) >= 0)
        return rc;
    client_path_init(&p, "/v1/jobs");
    client_path_segment(&p, argv[optind]);
    if (!(path = client_path_get(&p, &err)))
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_request(c, "GET", path, NULL, NULL, NULL, &job, &err) < 0)
        return ctl_fail("%s", err.message);
    rc = export_job(job, format, argv[optind]);
    json_decref(job);
    return rc;
}
