/* submit.c - loomctl submit (building a job) and token create. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "core/arrayspec.h"
#include "core/ctl/client.h"
#include "core/ctl/loomctl.h"
#include "core/depend.h"
#include "core/directives.h"
#include "core/fdread.h"
#include "core/limits.h"
#include "core/timefmt.h"
#include "core/timeutil.h"
#include "core/token.h"

#define SCRIPT_MAX (4L << 20)

/* A job being built from the options. */
struct submit {
    json_t *job;
    json_t *request; /* borrowed from job */
    json_t *env;     /* borrowed from job */
    const char *idem;
    const char *chdir; /* --chdir, or NULL: the current directory */
    int export_all;    /* --export ALL */
    int export_given;  /* --export ALL or NONE: env is sent, even empty */
    int named;
};

enum {
    OPT_NAME = 256, OPT_NODES, OPT_CPUS, OPT_MEM, OPT_GPUS, OPT_TIME,
    OPT_TIME_S, OPT_CLUSTER, OPT_QUEUE, OPT_ENV, OPT_PRIORITY, OPT_IDEM,
    OPT_JSON, OPT_ARRAY, OPT_DEPEND, OPT_HOLD, OPT_CHDIR, OPT_OUTPUT,
    OPT_ERROR, OPT_EXPORT, OPT_COMMENT,
};

/* The option handlers below return -1 to go on, or the exit status to end
 * with (after printing why). */

/* obj.key = a whole number from the option's text. */
static int set_number(json_t *obj, const char *key, const char *opt,
                      const char *text, long min, long max)
{
    long v;

    if (ctl_long(text, min, max, &v) < 0)
        return ctl_usage("submit", "--%s needs a whole number from %ld to "
                         "%ld, not '%s'", opt, min, max, text);
    json_object_set_new(obj, key, json_integer(v));
    return -1;
}

/* --time in Slurm's formats (a bare number is minutes). */
static int set_time(json_t *r, const char *text)
{
    struct loom_error err;
    long s;

    if (timefmt_slurm(text, &s, &err) < 0)
        return ctl_usage("submit", "--time: %s", err.message);
    json_object_set_new(r, "walltime_s", json_integer(s));
    return -1;
}

static int set_text(json_t *obj, const char *key, const char *opt,
                    const char *text)
{
    if (!*text || json_object_set_new(obj, key, json_string(text)) < 0)
        return ctl_usage("submit", "--%s needs non-empty UTF-8 text", opt);
    return -1;
}

static int add_env(json_t *env, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;
    char name[256];

    if (!eq || n == 0 || n >= sizeof(name) || (arg[0] >= '0' && arg[0] <= '9'))
        return ctl_usage("submit", "--env needs NAME=VALUE, not '%s'", arg);
    memcpy(name, arg, n);
    name[n] = '\0';
    if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                     "0123456789_") != n)
        return ctl_usage("submit", "--env: '%s' is not a variable name "
                         "(letters, digits, '_')", name);
    if (json_object_get(env, name))
        return ctl_usage("submit", "--env %s is given twice", name);
    if (json_object_size(env) == LOOM_JOB_ENV_MAX)
        return ctl_usage("submit", "--env: at most %d variables",
                         LOOM_JOB_ENV_MAX);
    if (json_object_set_new(env, name, json_string(eq + 1)) < 0)
        return ctl_usage("submit", "--env %s: the value is not UTF-8 text",
                         name);
    return -1;
}

static int set_idem(struct submit *s, const char *key)
{
    size_t n = strlen(key);

    if (n < 1 || n > LOOM_IDEM_KEY_MAX)
        return ctl_usage("submit", "--idempotency-key needs 1 to %d "
                         "characters", LOOM_IDEM_KEY_MAX);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] <= 0x20 || (unsigned char)key[i] >= 0x7f)
            return ctl_usage("submit", "--idempotency-key takes visible "
                             "ASCII characters only");
    s->idem = key;
    return -1;
}

/* --array: checked as loomd checks it. */
static int set_array(json_t *job, const char *text)
{
    struct array_spec spec;
    struct loom_error err;

    if (array_spec_parse(text, &spec, &err) < 0)
        return ctl_usage("submit", "--array: %s", err.message);
    array_spec_fini(&spec);
    json_object_set_new(job, "array", json_string(text));
    return -1;
}

/* --dependency: checked as loomd checks it. */
static int set_depend(json_t *job, const char *text)
{
    struct dep_list l;
    struct loom_error err;

    if (dep_parse(text, &l, &err) < 0)
        return ctl_usage("submit", "--dependency: %s", err.message);
    dep_list_fini(&l);
    json_object_set_new(job, "dependency", json_string(text));
    return -1;
}

static int submit_option(struct ctl *ctl, struct submit *s, int c,
                         char **argv)
{
    json_t *r = s->request;

    switch (c) {
    case OPT_NAME:
        s->named = 1;
        if (strlen(optarg) > LOOM_JOB_NAME_MAX)
            return ctl_usage("submit", "--name takes at most %d characters",
                             LOOM_JOB_NAME_MAX);
        return set_text(s->job, "name", "name", optarg);
    case OPT_COMMENT:
        if (strlen(optarg) > LOOM_JOB_COMMENT_MAX)
            return ctl_usage("submit", "--comment takes at most %d bytes",
                             LOOM_JOB_COMMENT_MAX);
        return set_text(s->job, "comment", "comment", optarg);
    case OPT_NODES:
        return set_number(r, "nodes", "nodes", optarg, 1,
                          LOOM_JOB_NODES_MAX);
    case OPT_CPUS:
        return set_number(r, "cpus_per_node", "cpus-per-node", optarg, 1,
                          LOOM_JOB_CPUS_MAX);
    case OPT_MEM:
        return set_number(r, "memory_mb", "mem", optarg,
                          LOOM_JOB_MEMORY_MB_MIN, LOOM_JOB_MEMORY_MB_MAX);
    case OPT_GPUS:
        return set_number(r, "gpus", "gpus", optarg, 0, LOOM_JOB_GPUS_MAX);
    case OPT_TIME:
        return set_time(r, optarg);
    case OPT_TIME_S:
        return set_number(r, "walltime_s", "time-s", optarg, 1,
                          LOOM_JOB_WALLTIME_MAX_S);
    case OPT_CLUSTER:
        return set_text(r, "cluster", "cluster", optarg);
    case OPT_QUEUE:
        return set_text(r, "queue", "queue", optarg);
    case OPT_ENV:
        return add_env(s->env, optarg);
    case OPT_PRIORITY:
        return set_number(s->job, "priority", "priority", optarg,
                          -LOOM_JOB_PRIORITY_MAX, LOOM_JOB_PRIORITY_MAX);
    case OPT_IDEM:
        return set_idem(s, optarg);
    case OPT_ARRAY:
        return set_array(s->job, optarg);
    case OPT_DEPEND:
        return set_depend(s->job, optarg);
    case OPT_HOLD:
        json_object_set_new(s->job, "hold", json_true());
        return -1;
    case OPT_JSON:
        ctl->json = 1;
        return -1;
    case OPT_CHDIR:
        s->chdir = optarg;
        return set_text(s->job, "workdir", "chdir", optarg);
    case OPT_OUTPUT:
        return set_text(s->job, "output", "output", optarg);
    case OPT_ERROR:
        return set_text(s->job, "error", "error", optarg);
    case OPT_EXPORT:
        if (strcmp(optarg, "ALL") && strcmp(optarg, "NONE"))
            return ctl_usage("submit", "--export takes ALL or NONE, not "
                             "'%s'", optarg);
        s->export_all = !strcmp(optarg, "ALL");
        s->export_given = 1;
        return -1;
    }
    return ctl_opt_error("submit", c, argv);
}

static int submit_options(struct ctl *ctl, struct submit *s, int argc,
                          char **argv)
{
    static const struct option longs[] = {
        { "name", required_argument, NULL, OPT_NAME },
        { "comment", required_argument, NULL, OPT_COMMENT },
        { "nodes", required_argument, NULL, OPT_NODES },
        { "cpus-per-node", required_argument, NULL, OPT_CPUS },
        { "mem", required_argument, NULL, OPT_MEM },
        { "gpus", required_argument, NULL, OPT_GPUS },
        { "time", required_argument, NULL, OPT_TIME },
        { "time-s", required_argument, NULL, OPT_TIME_S },
        { "cluster", required_argument, NULL, OPT_CLUSTER },
        { "queue", required_argument, NULL, OPT_QUEUE },
        { "env", required_argument, NULL, OPT_ENV },
        { "priority", required_argument, NULL, OPT_PRIORITY },
        { "idempotency-key", required_argument, NULL, OPT_IDEM },
        { "json", no_argument, NULL, OPT_JSON },
        { "array", required_argument, NULL, OPT_ARRAY },
        { "dependency", required_argument, NULL, OPT_DEPEND },
        { "hold", no_argument, NULL, OPT_HOLD },
        { "chdir", required_argument, NULL, OPT_CHDIR },
        { "output", required_argument, NULL, OPT_OUTPUT },
        { "error", required_argument, NULL, OPT_ERROR },
        { "export", required_argument, NULL, OPT_EXPORT },
        { NULL, 0, NULL, 0 },
    };
    int c, rc;

    /* '+': stop at the script or at "--", so a command keeps its options */
    while ((c = getopt_long(argc, argv, "+:", longs, NULL)) != -1)
        if ((rc = submit_option(ctl, s, c, argv)) >= 0)
            return rc;
    return -1;
}

/* The script's text becomes "script"; path "-" reads standard input. */
static int add_script(struct submit *s, const char *path)
{
    int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
    char *buf = NULL;
    json_t *text = NULL;
    ssize_t n = -1;

    if (fd < 0)
        return ctl_fail("script %s: cannot open: %s", path, strerror(errno));
    buf = malloc(SCRIPT_MAX + 1);
    if (buf)
        n = fd_read_all(fd, buf, SCRIPT_MAX + 1);
    if (fd > 0)
        close(fd);
    if (n < 0 || n > SCRIPT_MAX || !n || memchr(buf, '\0', (size_t)n) ||
        !(text = json_stringn(buf, (size_t)n))) {
        free(buf);
        if (n < 0)
            return ctl_fail("script %s: cannot read: %s", path,
                            buf ? strerror(errno) : "out of memory");
        return ctl_fail("script %s: %s", path,
                        n > SCRIPT_MAX ? "larger than 4 MiB"
                        : !n           ? "empty"
                                       : "not UTF-8 text");
    }
    free(buf);
    json_object_set_new(s->job, "script", text);
    return -1;
}

static int add_command(struct submit *s, int argc, char **argv)
{
    json_t *cmd = json_array();

    if (argc > LOOM_JOB_ARGS_MAX) {
        json_decref(cmd);
        return ctl_usage("submit", "a command has at most %d words",
                         LOOM_JOB_ARGS_MAX);
    }
    for (int i = 0; i < argc; i++)
        if (!*argv[i] ||
            json_array_append_new(cmd, json_string(argv[i])) < 0) {
            json_decref(cmd);
            return ctl_usage("submit", "word %d of the command is %s", i + 1,
                             *argv[i] ? "not UTF-8 text" : "empty");
        }
    json_object_set_new(s->job, "command", cmd);
    return -1;
}

/* Does a directive of the script name the job (#SBATCH -J, #$ -N, #PBS
 * -N)? loomd reads them; this only asks, as sbatch does, whether the
 * script's file name is the job's name. */
static int script_names_job(const json_t *job)
{
    json_t *copy = json_deep_copy(job), *rec = NULL, *warn = NULL;
    struct loom_error err;
    int named;

    if (!copy)
        return 0;
    directives_apply(copy, DIRECTIVES_WARN, &rec, &warn, &err);
    named = json_object_get(copy, "name") != NULL;
    json_decref(rec);
    json_decref(warn);
    json_decref(copy);
    return named;
}

/* Without --name a job is named after its script or program, unless the
 * script's directives name it. */
static void default_name(struct submit *s, const char *path)
{
    const char *base = strrchr(path, '/');

    base = base ? base + 1 : path;
    if (!s->named && *base && strcmp(path, "-") != 0 &&
        !script_names_job(s->job))
        json_object_set_new(s->job, "name", json_string(base));
}

/* What follows the options: "-- COMMAND [ARG...]" or one SCRIPT. */
static int submit_payload(struct submit *s, int argc, char **argv)
{
    int dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    int rest = argc - optind, rc;

    if (dashdash) {
        if (rest < 1 || !*argv[optind])
            return ctl_usage("submit", "give a command after --");
        default_name(s, argv[optind]);
        return add_command(s, rest, argv + optind);
    }
    if (rest < 1)
        return ctl_usage("submit", "give a script, or -- and a command");
    if (rest > 1)
        return ctl_usage("submit", "give one script, or -- before a command "
                         "and its arguments");
    if ((rc = add_script(s, argv[optind])) >= 0)
        return rc;
    default_name(s, argv[optind]);
    return -1;
}

/* submit_dir: the directory loomctl runs in; workdir: --chdir made
 * absolute. Without --chdir loomd works out workdir (the script's
 * directives, else submit_dir). */
static int set_dirs(struct submit *s)
{
    char cwd[4096], *abs = NULL;
    json_t *dir = NULL;
    int rc;

    if (getcwd(cwd, sizeof(cwd)) && !(dir = json_string(cwd)))
        errno = EILSEQ; /* not UTF-8 */
    if (!dir) {
        if (s->chdir && s->chdir[0] != '/')
            return ctl_fail("cannot tell the current directory (%s): give "
                            "--chdir an absolute path", strerror(errno));
        fprintf(stderr, "loomctl: cannot tell the current directory (%s): "
                "the job is sent without submit_dir\n", strerror(errno));
        return -1;
    }
    json_object_set_new(s->job, "submit_dir", dir);
    if (!s->chdir || s->chdir[0] == '/')
        return -1;
    if (asprintf(&abs, "%s/%s", cwd, s->chdir) < 0)
        return ctl_fail("out of memory");
    rc = set_text(s->job, "workdir", "chdir", abs);
    free(abs);
    return rc;
}

extern char **environ;

/* loomctl's whole environment into env (what: the option or field, for
 * messages), under what env has. What loomd could not take is left out,
 * and said. */
static int add_environ(json_t *env, const char *what)
{
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : 0;
        char *name;
        json_t *v;

        if (!eq || !n)
            continue;
        if (!(name = strndup(*e, n)))
            return ctl_fail("out of memory");
        if (json_object_get(env, name)) {
            free(name);
            continue; /* --env wins */
        }
        if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                         "0123456789_") != n || (name[0] >= '0' &&
                                                  name[0] <= '9') ||
            !(v = json_string(eq + 1))) {
            fprintf(stderr, "loomctl: %s: %s is not exported (not a "
                    "variable name, or its value is not UTF-8)\n", what,
                    name);
            free(name);
            continue;
        }
        if (json_object_size(env) == LOOM_JOB_ENV_MAX) {
            json_decref(v);
            free(name);
            return ctl_fail("%s: more than %d variables", what,
                            LOOM_JOB_ENV_MAX);
        }
        json_object_set_new(env, name, v);
        free(name);
    }
    return -1;
}

/* env: --export ALL adds loomctl's environment; with --export (ALL or
 * NONE) or --env it is sent, and wins over the script's directives.
 * Without them, a script whose directives pass the submitter's
 * environment (--export=ALL, -V, -v NAME) gets it as submit_env. */
static int export_env(struct submit *s)
{
    const char *script = json_string_value(json_object_get(s->job,
                                                           "script"));
    json_t *senv;

    if (s->export_all)
        return add_environ(s->env, "--export ALL");
    if (s->export_given || json_object_size(s->env) || !script ||
        !directives_want_env(script))
        return -1;
    if (!(senv = json_object()))
        return ctl_fail("out of memory");
    json_object_set_new(s->job, "submit_env", senv);
    return add_environ(senv, "the script's export of the environment");
}

static int submit_send(struct ctl *ctl, const struct submit *s)
{
    struct loom_error err = { 0 };
    char idem[LOOM_IDEM_KEY_MAX + 32];
    const char *headers[] = { s->idem ? idem : NULL, NULL };
    const json_t *id;
    struct client *c;
    json_t *reply;

    snprintf(idem, sizeof(idem), "Idempotency-Key: %s", s->idem ? s->idem : "");
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_request(c, "POST", "/v1/jobs", s->job, headers, NULL, &reply,
                       &err) < 0)
        return ctl_fail("%s", err.message);
    id = json_object_get(reply, "id");
    if (ctl->json)
        ctl_print_json(reply);
    else if (json_is_string(id))
        printf("%s\n", json_string_value(id));
    else if (json_is_integer(id))
        printf("%lld\n", (long long)json_integer_value(id));
    else
        ctl_print_json(reply);
    json_decref(reply);
    return CTL_OK;
}

int cmd_submit(struct ctl *ctl, int argc, char **argv)
{
    struct submit s = { 0 };
    int rc;

    s.job = json_object();
    s.request = json_object();
    s.env = json_object();
    if (!s.job || !s.request || !s.env) {
        json_decref(s.request);
        json_decref(s.env);
        json_decref(s.job);
        return ctl_fail("out of memory");
    }
    json_object_set(s.job, "request", s.request);
    json_object_set(s.job, "env", s.env);
    rc = submit_options(ctl, &s, argc, argv);
    if (rc < 0)
        rc = submit_payload(&s, argc, argv);
    if (rc < 0)
        rc = set_dirs(&s);
    if (rc < 0)
        rc = export_env(&s);
    if (rc < 0 && !json_object_size(s.env) && !s.export_given)
        json_object_del(s.job, "env");
    if (rc < 0)
        rc = submit_send(ctl, &s);
    json_decref(s.request);
    json_decref(s.env);
    json_decref(s.job);
    return rc;
}

/* token create -------------------------------------------------------- */

/* Add the roles named in text ("user" or "user,reader") to *roles. */
static int add_roles(const char *text, unsigned *roles)
{
    const char *p = text, *end;
    char name[32];
    unsigned bit;
    size_t n;

    do {
        end = strchr(p, ',');
        n = end ? (size_t)(end - p) : strlen(p);
        bit = 0;
        if (n < sizeof(name)) {
            memcpy(name, p, n);
            name[n] = '\0';
            bit = token_role_parse(name);
        }
        if (!bit)
            return ctl_usage("token", "unknown role '%.*s' (roles: admin, "
                             "operator, user, gateway, scheduler, monitor, "
                             "reader)", (int)(n < 64 ? n : 64), p);
        *roles |= bit;
        p = end + 1;
    } while (end);
    return -1;
}

struct token_req {
    const char *subject;
    unsigned roles;
    long ttl;
};

static int token_options(struct ctl *ctl, int argc, char **argv,
                         struct token_req *t)
{
    static const struct option longs[] = {
        { "subject", required_argument, NULL, 's' },
        { "role", required_argument, NULL, 'r' },
        { "ttl", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    int c, rc;

    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            t->subject = optarg;
            break;
        case 'r':
            if ((rc = add_roles(optarg, &t->roles)) >= 0)
                return rc;
            break;
        case 't':
            if (ctl_long(optarg, 1, LOOM_TOKEN_TTL_MAX, &t->ttl) < 0)
                return ctl_usage("token", "--ttl needs seconds from 1 to "
                                 "%ld, not '%s'", LOOM_TOKEN_TTL_MAX, optarg);
            break;
        case 'j':
            ctl->json = 1;
            break;
        default:
            return ctl_opt_error("token", c, argv);
        }
    }
    if (optind < argc)
        return ctl_usage("token", "unexpected argument '%s'", argv[optind]);
    if (!t->subject || !t->roles)
        return ctl_usage("token", "give --subject and at least one --role");
    if (!token_subject_valid(t->subject))
        return ctl_usage("token", "the subject must be 1 to %d printable "
                         "characters without quotes or backslashes",
                         LOOM_TOKEN_SUBJECT_MAX);
    return -1;
}

static void token_print(const struct ctl *ctl, const char *tok,
                        const struct token_req *t, time_t now)
{
    char issued[32], expires[32];
    json_t *j, *roles = json_array();

    if (!ctl->json) {
        printf("%s\n", tok);
        json_decref(roles);
        return;
    }
    for (unsigned bit = 1; bit & LOOM_ROLE_ALL; bit <<= 1)
        if (t->roles & bit)
            json_array_append_new(roles, json_string(token_role_name(bit)));
    time_format(now, issued);
    time_format(now + t->ttl, expires);
    j = json_pack("{s:s, s:s, s:o, s:s, s:s}", "token", tok, "subject",
                  t->subject, "roles", roles, "issued", issued, "expires",
                  expires);
    ctl_print_json(j);
    json_decref(j);
}

int cmd_token(struct ctl *ctl, int argc, char **argv)
{
    struct token_req t = { NULL, 0, 3600 };
    struct loom_error err = { 0 };
    unsigned char *key;
    time_t now = time(NULL);
    long max_ttl = 0;
    size_t len;
    char *tok;
    int rc;

    if (argc < 2 || strcmp(argv[1], "create") != 0)
        return ctl_usage("token", "the only token command is 'create'");
    if (ctl->url && !ctl->conf_path)
        return ctl_usage("token", "token create signs with the daemon's "
                         "key: give -c loom.conf, not --url");
    rc = token_options(ctl, argc - 1, argv + 1, &t);
    if (rc >= 0)
        return rc;
    if (ctl_signing_key(ctl, &key, &len, &max_ttl, &err) < 0)
        return ctl_fail("%s", err.message);
    if (t.ttl > max_ttl) { /* loomd would refuse it */
        token_key_free(key, len);
        return ctl_usage("token", "--ttl %ld is longer than the daemon's "
                         "max_token_ttl_s %ld", t.ttl, max_ttl);
    }
    tok = token_create(key, len, t.subject, t.roles, t.ttl, now, &err);
    token_key_free(key, len);
    if (!tok)
        return ctl_fail("%s", err.message);
    token_print(ctl, tok, &t, now);
    OPENSSL_cleanse(tok, strlen(tok));
    free(tok);
    return CTL_OK;
}
