/* sbatch.c - sbatch: a batch script (or --wrap's command) submitted to
 * the fabric. Its options are read by the same code that reads #SBATCH
 * lines in loomd (core/directives*.c): they become request fields, which
 * win over the script's own directives, as sbatch's command line does. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/directives.h"
#include "core/fdread.h"
#include "core/limits.h"

#define SCRIPT_MAX (4L << 20)
#define LINES_MAX 65536

extern char **environ;

struct sbatch {
    char lines[LINES_MAX]; /* the options as #SBATCH lines */
    size_t len;
    const char *wrap;
    const char *account;
    const char *cluster;
    int parsable, named, outputs, exports, quiet, user_env;
};

/* One option as an #SBATCH line: --name='value' (quoted as the directive
 * reader takes it). -1 to go on, or an exit status. */
static int line(struct sbatch *s, const char *name, const char *value)
{
    const char *q = !value ? "" : strchr(value, '\'') ? "\"" : "'";
    int n;

    if (value && strchr(value, '\'') && strchr(value, '"'))
        return sc_usage("--%s: a value with both ' and \" is not supported "
                        "by Loom", name);
    if (value && strpbrk(value, "\n\r"))
        return sc_usage("--%s: a value with a line break is not supported "
                        "by Loom", name);
    n = snprintf(s->lines + s->len, sizeof(s->lines) - s->len,
                 value ? "#SBATCH --%s=%s%s%s\n" : "#SBATCH --%s\n", name, q,
                 value ? value : "", q);
    if (n < 0 || (size_t)n >= sizeof(s->lines) - s->len)
        return sc_usage("the options are too long");
    s->len += (size_t)n;
    return -1;
}

/* SBATCH_* variables: below the command line, above the script. */
static const struct {
    const char *var, *opt;
} env_opts[] = {
    {"SBATCH_JOB_NAME", "job-name"},   {"SBATCH_PARTITION", "partition"},
    {"SBATCH_TIMELIMIT", "time"},      {"SBATCH_ARRAY_INX", "array"},
    {"SBATCH_EXPORT", "export"},       {"SBATCH_CONSTRAINT", "constraint"},
    {"SBATCH_GRES", "gres"},           {"SBATCH_MEM_PER_NODE", "mem"},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
    {"SBATCH_GPUS", "gpus"},           {"SBATCH_GPUS_PER_NODE",
                                        "gpus-per-node"},
};
static const char *const env_refused[] = {
    "SBATCH_QOS", "SBATCH_RESERVATION", "SBATCH_WAIT", "SBATCH_EXCLUSIVE",
    "SBATCH_REQUEUE", "SBATCH_NO_REQUEUE", "SBATCH_WCKEY", "SBATCH_DEBUG",
    NULL,
};

static int from_env(struct sbatch *s)
{
    const char *v;
    int rc;

    for (size_t i = 0; i < sizeof(env_opts) / sizeof(*env_opts); i++)
        if ((v = getenv(env_opts[i].var)) && *v) {
            if (!strcmp(env_opts[i].opt, "job-name"))
                s->named = 1;
            if (!strcmp(env_opts[i].opt, "export"))
                s->exports = 1;
            if ((rc = line(s, env_opts[i].opt, v)) >= 0)
                return rc;
        }
    for (size_t i = 0; env_refused[i]; i++)
        if ((v = getenv(env_refused[i])) && *v)
            return sc_unsupported(env_refused[i], "unset it to submit "
                                  "through Loom");
    if ((v = getenv("SBATCH_ACCOUNT")) && *v)
        s->account = v;
    if ((v = getenv("SBATCH_CLUSTERS")) && *v)
        s->cluster = v;
    return -1;
}

enum {
    O_PARSABLE = 256, O_WRAP, O_MEM, O_MEM_CPU, O_EXPORT, O_GRES, O_COMMENT,
    O_TPN, O_GPN, O_EXCLUSIVE, O_NO_REQUEUE, O_NICE, O_GET_USER_ENV,
    O_HELP, O_REFUSED,
};

/* Options Slurm has that Loom has no field for. */
static const char *const refused[] = {
    "qos", "reservation", "wait", "begin", "deadline", "mail-type",
    "mail-user", "requeue", "signal", "nodelist", "exclude", "licenses",
    "wckey", "test-only", "mincpus", "sockets-per-node",
    "cores-per-socket", "threads-per-core", "ntasks-per-core",
    "ntasks-per-socket", "distribution", "overcommit", "oversubscribe",
    "priority", "tmp", "uid", "gid", "input", "open-mode", "kill-on-invalid-dep",
    "propagate", "spread-job", "switches", "thread-spec", "core-spec",
    "profile", "power", "reboot", "cpu-freq", "gpu-bind", "gpus-per-task",
    "cpus-per-gpu", "mem-per-gpu", "hint", "container", "batch",
    "clusters-federation", "acctg-freq", "burst-buffer", "bb", "bbf",
    "checkpoint", "delay-boot", "ignore-pbs", "parsable2",
    NULL,
};

static int options(struct sbatch *s, int argc, char **argv)
{
    static struct option longs[128] = {
        {"parsable", no_argument, NULL, O_PARSABLE},
        {"wrap", required_argument, NULL, O_WRAP},
        {"job-name", required_argument, NULL, 'J'},
        {"output", required_argument, NULL, 'o'},
        {"error", required_argument, NULL, 'e'},
        {"partition", required_argument, NULL, 'p'},
        {"nodes", required_argument, NULL, 'N'},
        {"ntasks", required_argument, NULL, 'n'},
        {"cpus-per-task", required_argument, NULL, 'c'},
        {"mem", required_argument, NULL, O_MEM},
        {"mem-per-cpu", required_argument, NULL, O_MEM_CPU},
        {"time", required_argument, NULL, 't'},
        {"array", required_argument, NULL, 'a'},
        {"dependency", required_argument, NULL, 'd'},
        {"hold", no_argument, NULL, 'H'},
        {"export", required_argument, NULL, O_EXPORT},
        {"chdir", required_argument, NULL, 'D'},
        {"gres", required_argument, NULL, O_GRES},
        {"constraint", required_argument, NULL, 'C'},
        {"comment", required_argument, NULL, O_COMMENT},
        {"account", required_argument, NULL, 'A'},
        {"clusters", required_argument, NULL, 'M'},
        {"ntasks-per-node", required_argument, NULL, O_TPN},
        {"gpus", required_argument, NULL, 'G'},
        {"gpus-per-node", required_argument, NULL, O_GPN},
        {"exclusive", optional_argument, NULL, O_EXCLUSIVE},
        {"no-requeue", no_argument, NULL, O_NO_REQUEUE},
        {"nice", optional_argument, NULL, O_NICE},
        {"get-user-env", optional_argument, NULL, O_GET_USER_ENV},
        {"quiet", no_argument, NULL, 'Q'},
        {"help", no_argument, NULL, O_HELP},
    };
    static const char *const names[] = {
        ['J'] = "job-name", ['o'] = "output", ['e'] = "error",
        ['p'] = "partition", ['N'] = "nodes", ['n'] = "ntasks",
        ['c'] = "cpus-per-task", ['t'] = "time", ['a'] = "array",
        ['d'] = "dependency", ['C'] = "constraint", ['G'] = "gpus",
    };
    size_t nl = 0;
    int c, rc;
    char cwd[4096], *abs = NULL;

    while (longs[nl].name)
        nl++;
    for (size_t i = 0; refused[i] && nl + 1 < 128; i++, nl++) {
        longs[nl].name = refused[i];
        longs[nl].has_arg = optional_argument;
        longs[nl].flag = NULL;
        longs[nl].val = O_REFUSED;
    }
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:J:o:e:p:N:n:c:t:a:d:HD:C:A:M:G:Q",
                            longs, NULL)) != -1) {
        rc = -1;
        switch (c) {
        case O_PARSABLE: s->parsable = 1; break;
        case 'Q': s->quiet = 1; break;
        case O_WRAP: s->wrap = optarg; break;
        case 'J': s->named = 1; /* fall through */
        case 'p': case 'N': case 'n': case 'c': case 't': case 'a': case 'd':
        case 'C': case 'G':
            rc = line(s, names[c], optarg);
            break;
        case 'o': case 'e':
            s->outputs |= c == 'o' ? 1 : 2;
            rc = line(s, names[c], optarg);
            break;
        case O_MEM: rc = line(s, "mem", optarg); break;
        case O_MEM_CPU: rc = line(s, "mem-per-cpu", optarg); break;
        case O_TPN: rc = line(s, "ntasks-per-node", optarg); break;
        case O_GPN: rc = line(s, "gpus-per-node", optarg); break;
        case O_GRES: rc = line(s, "gres", optarg); break;
        case 'H': rc = line(s, "hold", NULL); break;
        case O_EXPORT:
            s->exports = 1;
            rc = line(s, "export", optarg);
            break;
        case 'D':
            if (optarg[0] != '/' && getcwd(cwd, sizeof(cwd)) &&
                asprintf(&abs, "%s/%s", cwd, optarg) > 0) {
                rc = line(s, "chdir", abs);
                free(abs);
                abs = NULL;
            } else {
                rc = line(s, "chdir", optarg);
            }
            break;
        case 'A': s->account = optarg; break;
        case 'M': s->cluster = optarg; break;
        case O_EXCLUSIVE: rc = line(s, "exclusive", NULL); break;
        case O_COMMENT: rc = line(s, "comment", optarg); break;
        case O_NO_REQUEUE: rc = line(s, "no-requeue", NULL); break;
        case O_NICE: rc = line(s, "nice", optarg); break;
        case O_GET_USER_ENV:
            s->user_env = 1;
            rc = line(s, "get-user-env", optarg);
            break;
        case O_REFUSED:
            return sc_unsupported(argv[optind - 1], "Loom's job request has "
                                  "no such field (see "
                                  "docs/slurm-commands.md)");
        case O_HELP:
            printf("Usage: sbatch [OPTIONS] [SCRIPT | --wrap=COMMAND]\n");
            return SC_OK;
        default:
            return sc_opt_error(c, argv);
        }
        if (rc >= 0)
            return rc;
    }
    /* Slurm loads the login environment only when root submits for
     * another user; say what Loom does instead. For the command line
     * only: ARC's submit script, whose #SBATCH lines carry it, reads the
     * job id from stdout and stderr together. */
    if (s->user_env && !s->quiet)
        fprintf(stderr, "sbatch: warning: --get-user-env: Loom passes the "
                "submit environment as --export says (the job runs as your "
                "own account)\n");
    if (s->cluster && strchr(s->cluster, ','))
        return sc_unsupported("--clusters with several clusters", "Loom "
                              "chooses among them itself when none is "
                              "named");
    return -1;
}

/* The script's text: from the file, standard input, or --wrap. */
static char *script_text(struct sbatch *s, const char *path)
{
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : 0;
    char *buf;
    ssize_t n = -1;

    if (s->wrap) {
        if (asprintf(&buf, "#!/bin/sh\n# This script was created by sbatch "
                     "--wrap.\n\n%s\n", s->wrap) < 0)
            return sc_fail("out of memory"), NULL;
        return buf;
    }
    if (fd < 0)
        return sc_fail("Unable to open file %s: %s", path, strerror(errno)),
               NULL;
    buf = malloc(SCRIPT_MAX + 1);
    if (buf)
        n = fd_read_all(fd, buf, SCRIPT_MAX);
    if (fd > 0)
        close(fd);
    if (n < 0) {
        sc_fail("cannot read %s: %s", path ? path : "standard input",
                buf ? strerror(errno) : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (n >= SCRIPT_MAX || memchr(buf, '\0', (size_t)n)) {
        sc_fail("%s: not a text file of at most 4 MiB",
                path ? path : "standard input");
        free(buf);
        return NULL;
    }
    if (strncmp(buf, "#!", 2) != 0) {
        sc_fail("This does not look like a batch script.  The first line "
                "must start with #! followed by the path to an interpreter."
                "\nsbatch: error: For instance: #!/bin/sh");
        free(buf);
        return NULL;
    }
    return buf;
}

/* The calling process's environment, as submit_env. */
static json_t *environment(void)
{
    json_t *env = json_object();

    for (char **e = environ; env && *e; e++) {
        const char *eq = strchr(*e, '=');
        char *name;
        json_t *v;

        if (!eq || eq == *e || json_object_size(env) == LOOM_JOB_ENV_MAX)
            continue;
        if (!(name = strndup(*e, (size_t)(eq - *e))))
            break;
        if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvw"
                   "xyz0123456789_") == strlen(name) &&
            !(name[0] >= '0' && name[0] <= '9') && (v = json_string(eq + 1)))
            json_object_set_new(env, name, v);
        free(name);
    }
    return env;
}

/* What the script's own directives set (read as loomd will). */
static json_t *script_reads(const char *script, json_t *senv)
{
    json_t *b = json_pack("{s:s, s:O}", "script", script, "submit_env", senv);
    json_t *rec = NULL, *warn = NULL;
    struct loom_error err;

    if (b)
        directives_apply(b, DIRECTIVES_WARN, &rec, &warn, &err);
    json_decref(rec);
    json_decref(warn);
    return b;
}

/* The options' lines read into the fields of job; they win over the
 * script's directives (loomd fills only the fields a request leaves
 * out). Returns -1 to go on, or an exit status. */
static int options_into(struct sbatch *s, json_t *job, json_t *senv)
{
    char *text = NULL;
    json_t *b, *rec = NULL, *warn = NULL, *v, *req;
    struct loom_error err = {0};
    const char *key;
    int rc = -1;

    if (!s->len)
        return -1;
    if (asprintf(&text, "#!/bin/sh\n%.*s", (int)s->len, s->lines) < 0)
        return sc_fail("out of memory");
    b = json_pack("{s:s, s:O}", "script", text, "submit_env", senv);
    free(text);
    if (!b)
        return sc_fail("out of memory");
    if (directives_apply(b, DIRECTIVES_STRICT, &rec, &warn, &err) < 0) {
        /* "line 3: #SBATCH --foo=x: why": name the option alone */
        const char *m = strstr(err.message, "#SBATCH ");
        rc = sc_usage("%s", m ? m + 8 : err.message);
    } else {
        json_object_foreach(b, key, v) {
            if (!strcmp(key, "script") || !strcmp(key, "submit_env") ||
                !strcmp(key, "directives"))
                continue;
            if (strcmp(key, "request") || !(req = json_object_get(job,
                                                                 key)))
                json_object_set(job, key, v);
            else
                json_object_update(req, v);
        }
    }
    json_decref(rec);
    json_decref(warn);
    json_decref(b);
    return rc;
}

/* -A: Loom has no Slurm accounts; a job runs as its owner's account. */
static int check_account(const char *account)
{
    const char *me = sc_user();

    if (me && !strcmp(account, me))
        return -1;
    return sc_usage("--account %s: Loom has no Slurm accounts: a job runs "
                    "as your own account (%s), the only one -A takes",
                    account, me ? me : "unknown");
}

/* Tries of a submit that got no answer or a 503 (loomd busy, its
 * database down, a standby): sbatch waits and tries again, as Slurm's
 * does when its controller is busy; the Idempotency-Key makes a retry
 * of a submit that was taken return that job, never a second one. */
#define SUBMIT_TRIES 5

static int send(const struct sbatch *s, json_t *job)
{
    struct client *c = sc_client();
    struct loom_error err = {0};
    unsigned char rnd[16];
    char key[64], hdr[96];
    const char *headers[] = {hdr, NULL};
    json_t *reply = NULL;
    const char *id;
    long status = 0;
    int rc = -1;

    if (!c)
        return SC_FAIL;
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return sc_fail("cannot make an Idempotency-Key: %s",
                       strerror(errno));
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(key + 2 * i, 3, "%02x", rnd[i]);
    snprintf(hdr, sizeof(hdr), "Idempotency-Key: sbatch-%s", key);
    for (int t = 1; rc < 0 && t <= SUBMIT_TRIES; t++) {
        rc = client_request(c, "POST", "/v1/jobs", job, headers, &status,
                            &reply, &err);
        if (rc < 0 && (status == 503 || status == 0) && t < SUBMIT_TRIES) {
            fprintf(stderr, "sbatch: error: %s\nsbatch: Loom is not "
                    "taking jobs now, retrying in %d s\n", err.message, t);
            sleep((unsigned)t);
        } else if (rc < 0) {
            return sc_fail("Batch job submission failed: %s", err.message);
        }
    }
    id = json_string_value(json_object_get(reply, "id"));
    /* -Q prints nothing, as Slurm's: not even the job's id */
    if (s->parsable && !s->quiet)
        printf("%s%s%s\n", id ? id : "?", s->cluster ? ";" : "",
               s->cluster ? s->cluster : "");
    else if (!s->quiet)
        printf("Submitted batch job %s%s%s\n", id ? id : "?",
               s->cluster ? " on cluster " : "",
               s->cluster ? s->cluster : "");
    json_decref(reply);
    return SC_OK;
}

int sc_sbatch(int argc, char **argv)
{
    struct sbatch *s = calloc(1, sizeof(*s));
    json_t *job = json_object(), *senv = environment(), *own = NULL;
    char cwd[4096], *script = NULL;
    const char *path = NULL, *base;
    int rc = -1;

    if (!s || !job || !senv) {
        rc = sc_fail("out of memory");
        goto out;
    }
    if ((rc = from_env(s)) >= 0 || (rc = options(s, argc, argv)) >= 0)
        goto out;
    if (optind < argc && s->wrap) {
        rc = sc_usage("a script and --wrap are given: give one");
        goto out;
    }
    if (optind + 1 < argc) {
        rc = sc_usage("arguments to the script ('%s') are not supported by "
                      "Loom: a job is its script", argv[optind + 1]);
        goto out;
    }
    if (optind < argc)
        path = argv[optind];
    if (s->account && (rc = check_account(s->account)) >= 0)
        goto out;
    if (!(script = script_text(s, path))) {
        rc = SC_FAIL;
        goto out;
    }
    json_object_set_new(job, "script", json_string(script));
    if (getcwd(cwd, sizeof(cwd)))
        json_object_set_new(job, "submit_dir", json_string(cwd));
    json_object_set(job, "submit_env", senv);
    own = script_reads(script, senv);
    /* sbatch's defaults where neither the options nor the script say */
    if (!s->exports && !json_object_get(own, "env") &&
        (rc = line(s, "export", "ALL")) >= 0)
        goto out;
    if ((rc = options_into(s, job, senv)) >= 0)
        goto out;
    if (!json_object_get(job, "name") && !json_object_get(own, "name")) {
        base = path ? strrchr(path, '/') : NULL;
        base = s->wrap ? "wrap" : !path ? "sbatch" : base ? base + 1 : path;
        json_object_set_new(job, "name", json_string(base));
    }
    if (!json_object_get(job, "output") && !json_object_get(own, "output"))
        json_object_set_new(job, "output", json_string(
            json_object_get(job, "array") || json_object_get(own, "array")
                ? "slurm-%A_%a.out" : "slurm-%j.out"));
    if (s->cluster) {
        json_t *req = json_object_get(job, "request");
        if (!req)
            json_object_set_new(job, "request", req = json_object());
        json_object_set_new(req, "cluster", json_string(s->cluster));
    }
    rc = send(s, job);
out:
    free(script);
    json_decref(own);
    json_decref(senv);
    json_decref(job);
    free(s);
    return rc;
}
