/* loomctl.c - main() of loomctl: options, commands, where to connect. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "core/conf.h"
#include "core/ctl/client.h"
#include "core/ctl/loomctl.h"
#include "core/domain.h"
#include "core/token.h"
#include "core/token_file.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

struct command {
    const char *name;
    ctl_cmd_f *run;
    const char *usage; /* what follows "loomctl [options] " */
    const char *what;  /* one line for --help */
    const char *more;  /* printed by COMMAND --help, or NULL */
};

static const char submit_more[] =
    "  --name NAME            job name (default: the name the script's "
    "directives\n"
    "                         give, else the script's or the program's "
    "file name)\n"
    "  --comment TEXT         text kept with the job (sbatch's --comment)\n"
    "  --nodes N              number of nodes\n"
    "  --cpus-per-node N      CPUs on each node\n"
    "  --mem MB               memory in MiB\n"
    "  --gpus N               GPUs\n"
    "  --time TIME            walltime limit in Slurm's formats: MM, "
    "MM:SS,\n"
    "                         HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS\n"
    "  --time-s SECONDS       walltime limit in seconds\n"
    "  --cluster C            run on cluster C only\n"
    "  --queue Q              run in queue Q\n"
    "  --env NAME=VALUE       set a variable in the job's environment "
    "(repeatable)\n"
    "  --chdir DIR            run in DIR (default: the current directory)\n"
    "  --output NAME          the job's output file (default loom-%j.out;\n"
    "                         relative to its directory; %j %u %x %A %a %N)\n"
    "  --error NAME           its error file (default: the output file)\n"
    "  --export ALL|NONE      ALL: the job gets this environment too\n"
    "                         (default NONE: only --env and Loom's)\n"
    "  --priority N           priority within the fabric queue\n"
    "  --array TASKS          an array of tasks: 1-100, 1-100:2 (a step), "
    "1,3,5-7,\n"
    "                         with %N to run at most N of them at once\n"
    "  --dependency DEP       start after other jobs, in Slurm's terms:\n"
    "                         afterok:12:13,afterany:14 (all of them) or "
    "...?...\n"
    "                         (any of them); after, afterany, afterok, "
    "afternotok,\n"
    "                         singleton; a task of an array is 12_7\n"
    "  --hold                 submit it held (loomctl release starts it)\n"
    "  --idempotency-key K    a retry with the same key returns the same "
    "job\n"
    "  --json                 print the new job as JSON, not only its id\n"
    "SCRIPT's text is the job's script ('-' reads standard input); the "
    "words\nafter -- are its command and arguments, run without a shell.\n"
    "loomd reads the script's #SBATCH, #$ or #PBS directives; the options "
    "given\nhere win over them.\n";

static const char update_more[] =
    "FIELD is name, nodes, cpus-per-node, mem (MiB), gpus, time (Slurm's "
    "formats),\n"
    "time-s, cluster, queue, features (F1,F2; empty: none), reservation\n"
    "(an id; empty: none), dependency (Slurm's terms; empty: none) or "
    "priority\n"
    "(a user may lower it). JOBID may be an array (its waiting tasks "
    "change\n"
    "with it) or one of its tasks (123_7).\n";

static const char export_more[] =
    "The directives say the job's name, nodes, cpus, memory, time, queue,\n"
    "features and GPUs (Grid Engine: -pe smp, h_vmem and gpu per slot; a\n"
    "job of several nodes has no Grid Engine form). The job's env follows\n"
    "as export lines, then its script without its own directive lines, or\n"
    "exec and its command. Submitted again, the script asks for the same.\n";

static const char goal_more[] =
    "NODE is CLUSTER/NAME. goal set replaces the node's whole goal with\n"
    "the attributes given (--clear: with none). Every VALUE is sent as a\n"
    "string, except features=F1,F2, a list (features= an empty one).\n"
    "goal import FILE ('-': standard input) takes {\"items\": [{\"node\":\n"
    "\"c/n\", \"attributes\": {...}}, ...]} or {\"c/n\": {...}, ...}\n"
    "and sets all those goals at once, or none.\n";

static const char maint_more[] =
    "  --cluster C            list: this cluster's requests only;\n"
    "                         request: the cluster of the NODE names\n"
    "  --state S              list: requests in this state only\n"
    "request:\n"
    "  --action A             node-off, or an [action NAME] of loom.conf\n"
    "  --reason R             why, shown in the drain reason\n"
    "  --duration S           the window in seconds (default: the action's)\n"
    "  --start T              a fixed window starting at T (RFC 3339)\n"
    "  --not-before T         a flexible window: not before T (default "
    "now)\n"
    "  --deadline T           ... and ending by T (default a year on)\n"
    "  --count N --cluster C  any N nodes of C instead of NODE...\n"
    "  --force                cancel the jobs in a fixed window's way "
    "(admin)\n"
    "NODE is CLUSTER/NAME (or NAME with --cluster). request prints the "
    "new request.\n";

static const char history_more[] =
    "T is an RFC 3339 time (2026-11-22T03:00:00Z) or seconds since the "
    "epoch.\n"
    "FIELDS (history): jobid,name,account,owner,state,exitcode,cluster,"
    "nodelist,\n  submit,start,end,elapsed,cpus,cpu_s,reason\n"
    "FIELDS (usage): cluster,account,owner,jobs,cpu_hours,cpu_s\n";

static const char pause_more[] =
    "NODE is CLUSTER/NAME, or NAME with --cluster. Prints the node's id\n"
    "and state. A job suspended on purpose stays suspended after unpause.\n";

static const char jobs_more[] =
    "--state takes job states, comma-separated (default: pending,held,"
    "starting,\nrunning,suspended; every state with --jobs); --owner is "
    "--user; LIST is a node\nlist such as n[1-4]; --jobs takes job ids and "
    "array tasks (123,124_7), --queue\nqueue names, comma-separated.\n"
    "FIELDS (jobs): jobid,name,owner,account,state,cluster,nodes,time,"
    "nodelist,\n  priority,submit,start,end,exitcode,reason (default: "
    "jobid,name,owner,state,\n  cluster,nodes,time,nodelist,reason)\n";

static const struct command commands[] = {
    { "clusters", cmd_clusters, "clusters", "list the clusters", NULL },
    { "nodes", cmd_nodes, "nodes [--cluster C] [--state S]",
      "list nodes, like sinfo -N", NULL },
    { "queues", cmd_queues, "queues [--cluster C] [--fabric]", "list queues", NULL },
    { "reservations", cmd_reservations,
      "reservations [--cluster C] [--state S] [--owner O]",
      "list reservations, like scontrol show res", NULL },
    { "reserve", cmd_reserve,
      "reserve CLUSTER (--nodes N1,N2 | --count N [--feature F]...) "
      "(--start T | [--not-before T] [--deadline T]) --duration S "
      "[--reason R] [--maintenance]",
      "create an advance reservation; prints id, state, window, nodes",
      NULL },
    { "unreserve", cmd_unreserve, "unreserve ID",
      "cancel a reservation", NULL },
    { "jobs", cmd_jobs,
      "jobs [--all] [--cluster C] [-t|--state S,...] [-u|--user U] "
      "[-n|--name N] [-w|--nodelist LIST] [-j|--jobs ID,...] "
      "[-p|--queue Q,...] [-o|--format FIELDS]",
      "list the waiting and running jobs (--all: the ended ones too), "
      "like squeue", jobs_more },
    { "summary", cmd_summary, "summary [--cluster C]",
      "per cluster: its queues, nodes by state and cpus, like sinfo",
      NULL },
    { "history", cmd_history,
      "history [--start T] [--end T] [--account A] [-u|--user U] "
      "[--cluster C] [--state S] [--format FIELDS]",
      "the jobs that ran or ended in a window (default: the last day), "
      "like sacct", history_more },
    { "usage", cmd_usage,
      "usage [--start T] [--end T] [--account A] [--cluster C] "
      "[--format FIELDS]",
      "cpu hours per cluster, account and owner, like sreport",
      history_more },
    { "submit", cmd_submit,
      "submit [OPTIONS] SCRIPT | submit [OPTIONS] -- COMMAND [ARG...]",
      "submit a job to the fabric; prints its id", submit_more },
    { "output", cmd_output, "output [--stream stdout|stderr] [--follow] "
      "JOBID", "print a job's output (--follow: until it has ended)",
      NULL },
    { "export", cmd_export, "export --format slurm|gridengine|pbs JOBID",
      "write a job as a native batch script: directives, then its script "
      "or command", export_more },
    { "update", cmd_update, "update JOBID FIELD=VALUE...",
      "change a waiting job (pending or held)", update_more },
    { "cancel", cmd_cancel,
      "cancel JOBID... | cancel [-u|--user U] [-t|--state S,...] "
      "[-n|--name N] [--cluster C]",
      "cancel jobs: those named, or those that match (waiting and running "
      "ones unless --state says)", NULL },
    { "suspend", cmd_job_action, "suspend JOBID...", "suspend jobs", NULL },
    { "resume", cmd_job_action, "resume JOBID...", "resume suspended jobs",
      NULL },
    { "hold", cmd_job_action, "hold JOBID...", "hold pending jobs", NULL },
    { "release", cmd_job_action, "release JOBID...", "release held jobs",
      NULL },
    { "show", cmd_show,
      "show job ID | node CLUSTER/NAME | queue CLUSTER/NAME | cluster NAME"
      " | reservation ID | maintenance ID",
      "one object, as key: value lines", NULL },
    { "status", cmd_status, "status", "the daemon's runtime status", NULL },
    { "node-state", cmd_node_state,
      "node-state CLUSTER/NAME up|drain|down|pause|resume [--reason R]",
      "set the state of a node", NULL },
    { "pause", cmd_pause, "pause NODE [--cluster C] [--reason R]",
      "suspend the jobs on a node and place nothing there until unpause",
      pause_more },
    { "unpause", cmd_pause, "unpause NODE [--cluster C]",
      "resume the jobs the pause suspended; the node takes jobs again",
      pause_more },
    { "goal", cmd_goal,
      "goal set NODE NAME=VALUE... | goal set NODE --clear | goal show "
      "[NODE] | goal import FILE",
      "set, show or import the goal state of nodes", goal_more },
    { "actual", cmd_actual,
      "actual report NODE NAME=VALUE... [--time T] | actual show NODE",
      "report or show the actual state of a node", NULL },
    { "diff", cmd_diff, "diff [--cluster C] [--attribute A] [--node NODE]",
      "the mismatches between goal and actual state", NULL },
    { "maintenance", cmd_maintenance,
      "maintenance [list] [--cluster C] [--state S]"
      " | maintenance request --action A [--reason R] [--duration S]"
      " [--start T | [--not-before T] [--deadline T]] [--force]"
      " (NODE... | --count N --cluster C)"
      " | maintenance cancel ID",
      "list, request or cancel maintenance windows", maint_more },
    { "runtime", cmd_runtime, "runtime reload | shutdown | scheduler on|off",
      "reload loom.conf, stop loomd, switch the built-in scheduler", NULL },
    { "token", cmd_token,
      "token create --subject S --role R [--role R2] [--ttl SECONDS]",
      "sign a token with the daemon's key (needs -c)", NULL },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char usage_line[] =
    "usage: loomctl [-c loom.conf | --url URL (--token-file FILE | --cert "
    "FILE)] [--json] COMMAND [ARG...]\n";

/* Messages ------------------------------------------------------------- */

int ctl_fail(const char *fmt, ...)
{
    va_list ap;

    fputs("loomctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CTL_FAIL;
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; name && i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int ctl_usage(const char *cmd, const char *fmt, ...)
{
    const struct command *c = find_command(cmd);
    va_list ap;

    fputs("loomctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (c)
        fprintf(stderr, "usage: loomctl [OPTIONS] %s\n", c->usage);
    else
        fputs(usage_line, stderr);
    fputs("Try 'loomctl --help' for more information.\n", stderr);
    return CTL_USAGE;
}

int ctl_opt_error(const char *cmd, int c, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";

    if (c == ':')
        return ctl_usage(cmd, "option '%s' needs a value", arg);
    if (optopt && strncmp(arg, "--", 2) != 0)
        return ctl_usage(cmd, "unknown option '-%c'", optopt);
    return ctl_usage(cmd, "unknown option '%s'", arg);
}

int ctl_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int ctl_check_name(const char *cmd, const char *what, const struct domain *d,
                   const char *value)
{
    struct loom_error err;

    if (domain_check(d, value, "", &err) == 0)
        return -1;
    return ctl_usage(cmd, "%s: %s", what, err.message);
}

int ctl_check_text(const char *cmd, const char *what, const char *value)
{
    if (!*value)
        return ctl_usage(cmd, "%s needs a value", what);
    for (const char *p = value; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return ctl_usage(cmd, "%s: the value has a control character",
                             what);
    return -1;
}

int ctl_check_id(const char *cmd, const char *kind, const char *value)
{
    int64_t id;

    if (domain_id_parse(value, &id) == 0)
        return -1;
    return ctl_usage(cmd, "'%s' is not a %s id (a number from 1, without "
                     "leading zeros)", value, kind);
}

int ctl_check_job(const char *cmd, const char *value)
{
    int64_t id;
    long task;

    if (domain_job_ref_parse(value, &id, &task) == 0)
        return -1;
    return ctl_usage(cmd, "'%s' is not a job id (a number from 1, without "
                     "leading zeros) or an array's task (123_7)", value);
}

void ctl_print_json(const json_t *j)
{
    if (!j)
        return;
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY);
    fputc('\n', stdout);
}

static void help(void)
{
    fputs(usage_line, stdout);
    fputs("\nThe command-line client of loomd, the Loom fabric "
          "meta-scheduler.\n\n"
          "Options:\n"
          "  -c, --conf FILE        loom.conf of the loomd on this host: "
          "connect to its\n"
          "                         'listen' address with a 300 s admin "
          "token signed\n"
          "                         with its token key (default $LOOM_CONF, "
          "else\n"
          "                         " CTL_CONF_DEFAULT " when no URL is "
          "given)\n"
          "      --url URL          http://HOST:PORT, https://HOST:PORT or "
          "unix:/PATH\n"
          "                         (default $LOOM_URL)\n"
          "      --token-file FILE  a token from 'loomctl token create', "
          "readable by its\n"
          "                         owner only (default $LOOM_TOKEN_FILE)\n"
          "      --cacert FILE      https: verify loomd with these CAs "
          "(default\n"
          "                         $LOOM_CA_FILE, else the system's)\n"
          "      --capath DIR       https: ... or a hashed CA directory "
          "($LOOM_CA_DIR)\n"
          "      --cert FILE        https: a client certificate (PEM; its "
          "key may follow,\n"
          "                         as in a proxy file), instead of a token "
          "or with it\n"
          "                         ($LOOM_CERT_FILE)\n"
          "      --key FILE         https: the certificate's key "
          "($LOOM_KEY_FILE)\n"
          "      --json             print the server's JSON instead of "
          "tables\n"
          "  -h, --help             print this help; COMMAND --help prints "
          "its usage\n"
          "  -V, --version          print the version\n\nCommands:\n",
          stdout);
    for (size_t i = 0; i < N_COMMANDS; i++)
        printf("  %-11s %s\n", commands[i].name, commands[i].what);
    fputs("\nExit status: 0 on success, 1 on failure, 2 on a usage error.\n"
          "See loomctl(1).\n",
          stdout);
}

/* Where to connect, and as whom ------------------------------------------ */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static void wipe_free(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

/* Which loom.conf applies: -c, else $LOOM_CONF, else the default unless a
 * URL is given (--url or $LOOM_URL); NULL when a URL is used instead. */
static const char *conf_path(const struct ctl *ctl)
{
    if (ctl->conf_path)
        return ctl->conf_path;
    if (ctl->url)
        return NULL;
    if (env("LOOM_CONF"))
        return env("LOOM_CONF");
    return env("LOOM_URL") ? NULL : CTL_CONF_DEFAULT;
}

static struct conf *conf_open(const char *path, struct conf_section **loomd,
                              struct loom_error *err)
{
    struct conf *c = conf_load(path, err);

    if (!c)
        return NULL;
    *loomd = conf_section(c, "loomd", "");
    if (!*loomd) {
        loom_error_set(err, LOOM_EINVAL, "%s has no [loomd] section", path);
        conf_destroy(c);
        return NULL;
    }
    return c;
}

static int key_from_conf(const char *path, struct conf_section *loomd,
                         unsigned char **key, size_t *len,
                         struct loom_error *err)
{
    const char *file = conf_get(loomd, "token_key_file");
    const char *state = conf_get(loomd, "state_dir");
    char why[sizeof(err->message)], derived[4096];

    if (!file || !*file) { /* loomd's default: next to its state */
        snprintf(derived, sizeof(derived), "%s/token.key",
                 state && *state ? state : CTL_STATE_DIR_DEFAULT);
        file = derived;
    }
    if (token_key_load(file, 0, key, len, err) == 0)
        return 0;
    snprintf(why, sizeof(why), "%s", err->message);
    return loom_error_set(err, err->kind, "cannot sign a token: %.400s", why);
}

int ctl_signing_key(struct ctl *ctl, unsigned char **key, size_t *len,
                    long *max_ttl, struct loom_error *err)
{
    const char *path = ctl->conf_path ? ctl->conf_path : env("LOOM_CONF");
    struct conf_section *loomd;
    struct conf *c;
    int rc;

    if (!path && ctl->url)
        return loom_error_set(err, LOOM_EINVAL,
                              "signing needs the daemon's key: give -c "
                              "loom.conf instead of --url");
    path = path ? path : CTL_CONF_DEFAULT;
    if (!(c = conf_open(path, &loomd, err)))
        return -1;
    rc = max_ttl ? conf_get_long(loomd, "max_token_ttl_s",
                                 LOOM_TOKEN_TTL_DEFAULT_MAX, 60,
                                 LOOM_TOKEN_TTL_MAX, max_ttl, err) : 0;
    if (rc == 0)
        rc = key_from_conf(path, loomd, key, len, err);
    conf_destroy(c);
    return rc;
}

/* A token for this call from the key named in loom.conf. */
static char *token_from_conf(const char *path, struct conf_section *loomd,
                             struct loom_error *err)
{
    unsigned char *key;
    size_t len;
    char *tok, why[sizeof(err->message)];

    if (key_from_conf(path, loomd, &key, &len, err) < 0) {
        snprintf(why, sizeof(why), "%s", err->message);
        loom_error_set(err, err->kind, "%.400s; give --token-file FILE to "
                       "use a token instead", why);
        return NULL;
    }
    tok = token_create(key, len, "loomctl", LOOM_ROLE_ADMIN, CTL_ADMIN_TTL_S,
                       time(NULL), err);
    token_key_free(key, len);
    return tok;
}

/* URL (into url, size bytes) and token (new, secret) from loom.conf. */
static char *from_conf(const char *path, const char *token_file, char *url,
                       size_t size, struct loom_error *err)
{
    struct conf_section *loomd;
    struct conf *c = conf_open(path, &loomd, err);
    const char *listen;
    char *tok = NULL;

    if (!c)
        return NULL;
    listen = conf_get(loomd, "listen");
    if (client_url_from_listen(listen ? listen : CTL_LISTEN_DEFAULT, url,
                               size, err) == 0)
        tok = token_file ? token_file_read(token_file, err)
                         : token_from_conf(path, loomd, err);
    conf_destroy(c);
    return tok;
}

struct client *ctl_client(struct ctl *ctl)
{
    const char *conf = conf_path(ctl);
    const char *tfile = ctl->token_file ? ctl->token_file
                                        : env("LOOM_TOKEN_FILE");
    struct client_tls tls = ctl->tls;
    struct loom_error err = { 0 };
    char url[1024], *tok = NULL;
    int ok = 0;

    if (ctl->client)
        return ctl->client;
    if (!client_tls_given(&tls)) /* the environment's, for https only */
        client_tls_from_env(&tls);
    if (conf) {
        tok = from_conf(conf, tfile, url, sizeof(url), &err);
        if (!tok && !ctl->conf_path && !env("LOOM_CONF") &&
            access(conf, F_OK) < 0)
            loom_error_set(&err, LOOM_EINVAL,
                           "%s does not exist: give -c loom.conf, or --url "
                           "URL with --token-file FILE", conf);
        ok = tok != NULL;
    } else {
        snprintf(url, sizeof(url), "%s", ctl->url ? ctl->url : env("LOOM_URL"));
        if (strncmp(url, "https://", 8) != 0 && !client_tls_given(&ctl->tls))
            memset(&tls, 0, sizeof(tls));
        if (tfile)
            ok = (tok = token_file_read(tfile, &err)) != NULL;
        else if (tls.cert_file)
            ok = 1; /* the certificate is the identity */
        else
            loom_error_set(&err, LOOM_EINVAL,
                           "no token: give --token-file FILE (or set "
                           "LOOM_TOKEN_FILE) or, for https, --cert FILE "
                           "with a URL, or -c loom.conf on the daemon's "
                           "host");
    }
    if (conf && !client_tls_given(&ctl->tls))
        memset(&tls, 0, sizeof(tls)); /* loom.conf's listen is plain HTTP */
    if (ok && (ctl->client = client_create(url, tok, 0, &err)) &&
        client_set_tls(ctl->client, &tls, &err) < 0) {
        client_destroy(ctl->client);
        ctl->client = NULL;
    }
    wipe_free(tok);
    if (!ctl->client)
        ctl_fail("%s", err.message);
    return ctl->client;
}

/* main ------------------------------------------------------------------ */

/* Returns -1 to go on with the command at argv[*first], or the exit status
 * to end with. */
static int parse_global(struct ctl *ctl, int argc, char **argv, int *first)
{
    static const struct option longs[] = {
        { "conf", required_argument, NULL, 'c' },
        { "url", required_argument, NULL, 'u' },
        { "token-file", required_argument, NULL, 't' },
        { "cacert", required_argument, NULL, 'A' },
        { "capath", required_argument, NULL, 'P' },
        { "cert", required_argument, NULL, 'E' },
        { "key", required_argument, NULL, 'K' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:c:hV", longs, NULL)) != -1) {
        switch (c) {
        case 'c': ctl->conf_path = optarg; break;
        case 'u': ctl->url = optarg; break;
        case 't': ctl->token_file = optarg; break;
        case 'A': ctl->tls.ca_file = optarg; break;
        case 'P': ctl->tls.ca_dir = optarg; break;
        case 'E': ctl->tls.cert_file = optarg; break;
        case 'K': ctl->tls.key_file = optarg; break;
        case 'j': ctl->json = 1; break;
        case 'h': help(); return CTL_OK;
        case 'V': printf("loomctl %s\n", PACKAGE_VERSION); return CTL_OK;
        default: return ctl_opt_error(NULL, c, argv);
        }
    }
    if (ctl->conf_path && ctl->url)
        return ctl_usage(NULL, "give -c or --url, not both");
    if (optind >= argc)
        return ctl_usage(NULL, "no command given");
    *first = optind;
    return -1;
}

int main(int argc, char **argv)
{
    struct ctl ctl = { 0 };
    const struct command *cmd;
    struct loom_error err = { 0 };
    int first = 0, rc;

    rc = parse_global(&ctl, argc, argv, &first);
    if (rc >= 0)
        return rc;
    cmd = find_command(argv[first]);
    if (!cmd)
        return ctl_usage(NULL, "unknown command '%s'", argv[first]);
    if (first + 1 < argc && (!strcmp(argv[first + 1], "--help") ||
                             !strcmp(argv[first + 1], "-h"))) {
        printf("usage: loomctl [OPTIONS] %s\n", cmd->usage);
        if (cmd->more)
            printf("\n%s", cmd->more);
        return CTL_OK;
    }
    if (client_global_init(&err) < 0)
        return ctl_fail("%s", err.message);
    optind = 0; /* each command parses its own options from scratch */
    rc = cmd->run(&ctl, argc - first, argv + first);
    client_destroy(ctl.client);
    client_global_cleanup();
    if (fflush(stdout) == EOF || ferror(stdout))
        rc = ctl_fail("cannot write the output: %s", strerror(errno));
    return rc;
}
