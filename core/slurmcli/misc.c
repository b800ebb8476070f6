/* misc.c - scancel, sacctmgr (a user's default account) and srun (a
 * job's one step, in place). */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int cancel(struct client *c, const char *id, int quiet)
{
    struct loom_error err = {0};
    struct client_path p;
    const char *path;
    json_t *reply = NULL;
    long status = 0;

    client_path_init(&p, "/v1/jobs");
    client_path_segment(&p, id);
    if ((path = client_path_get(&p, &err)) &&
        client_request(c, "DELETE", path, NULL, NULL, &status, &reply,
                       &err) == 0) {
        json_decref(reply);
        return SC_OK;
    }
    if (status == 409) /* ended already */
        return quiet ? SC_OK
                     : sc_fail("Kill job error on job id %s: Job/step "
                               "already completing or completed", id);
    return sc_fail("Kill job error on job id %s: %s", id,
                   status == 404 ? "Invalid job id specified"
                                 : err.message);
}

int sc_scancel(int argc, char **argv)
{
    static const struct option longs[] = {
        {"user", required_argument, NULL, 'u'},
        {"name", required_argument, NULL, 'n'},
        {"state", required_argument, NULL, 't'},
        {"partition", required_argument, NULL, 'p'},
        {"quiet", no_argument, NULL, 'Q'},
        {"me", no_argument, NULL, 'm'},
        {"signal", required_argument, NULL, 's'},
        {"batch", no_argument, NULL, 'b'},
        {"full", no_argument, NULL, 'f'},
        {"interactive", no_argument, NULL, 'i'},
        {NULL, 0, NULL, 0},
    };
    const char *users = NULL, *names = NULL, *states = NULL, *parts = NULL;
    struct loom_error err = {0};
    struct client *c;
    json_t *items = NULL, *j;
    struct sc_jobs_query jq = {.fields = SC_JOB_MEMBERS};
    char lstates[256];
    int ch, quiet = 0, rc = SC_OK;
    size_t i;

    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":u:n:t:p:Qs:bfi", longs, NULL)) !=
           -1) {
        switch (ch) {
        case 'u': users = optarg; break;
        case 'n': names = optarg; break;
        case 't': states = optarg; break;
        case 'p': parts = optarg; break;
        case 'Q': quiet = 1; break;
        case 'm': users = sc_user(); break;
        case 's':
            return sc_unsupported("--signal", "Loom cancels a job, it sends "
                                  "no other signal");
        case 'b': case 'f':
            return sc_unsupported(argv[optind - 1], "Loom signals the whole "
                                  "job");
        case 'i':
            return sc_unsupported("--interactive", "nothing to confirm");
        default:
            return sc_opt_error(ch, argv);
        }
    }
    if (states && sc_state_filter(states, lstates, sizeof(lstates)) < 0)
        return sc_usage("--state: '%s' is not a list of job states", states);
    if (!(c = sc_client()))
        return SC_FAIL;
    if (optind < argc) {
        if (users || names || states || parts)
            return sc_unsupported("job ids with filters", "give one or the "
                                  "other");
        for (int k = optind; k < argc; k++)
            for (const char *q = argv[k]; *q;) {
                size_t n = strcspn(q, ", ");
                char id[64];
                snprintf(id, sizeof(id), "%.*s", (int)(n < 63 ? n : 63), q);
                if (n && cancel(c, id, quiet) != SC_OK)
                    rc = SC_FAIL;
                q += n;
                q += strspn(q, ", ");
            }
        return rc;
    }
    if (!users && !names && !states && !parts)
        return sc_usage("No job identification provided");
    jq.states = states ? lstates : "pending,held,starting,running,suspended";
    jq.users = users;
    jq.queues = parts;
    if (sc_jobs(&jq, NULL, &items, &err) < 0)
        return sc_fail("%s", err.message);
    json_array_foreach(items, i, j) {
        const char *q = sc_str(json_object_get(j, "request"), "queue");
        if ((users && !sc_listed(users, sc_str(j, "account")) &&
             !sc_listed(users, sc_str(j, "owner"))) ||
            (names && !sc_listed(names, sc_str(j, "name"))) ||
            (states && !sc_state_listed(states, sc_state(j))) ||
            (parts && !sc_listed(parts, q)))
            continue;
        if (cancel(c, sc_str(j, "id"), 1) != SC_OK)
            rc = SC_FAIL;
    }
    json_decref(items);
    return rc;
}

/* A column of sacctmgr: right-justified (cut with a +), or between |
 * with -P. */
static void cell(int i, int parsable, int width, const char *v)
{
    if (parsable)
        printf("%s%s", i ? "|" : "", v);
    else if ((int)strlen(v) > width && width > 1)
        printf("%s%.*s+", i ? " " : "", width - 1, v);
    else
        printf("%s%*s", i ? " " : "", width, v);
}

/* sacctmgr show|list user|assoc [NAME | name=NAME | user=NAME ...]
 * [format=F,...] [-n] [-P] [-s]: Loom has no Slurm accounts; a user's
 * one account is its own Unix account, the one its jobs run as. */
int sc_sacctmgr(int argc, char **argv)
{
    static const struct sc_field_row {
        const char *name, *header;
        int width, user;
    } cols[] = {
        {"User", "User", 10, 1},        {"Account", "Account", 10, 0},
        {"DefaultAccount", "Def Acct", 10, 0},
        {"Cluster", "Cluster", 10, 2},  {"Partition", "Partition", 10, 3},
        {"Admin", "Admin", 9, 4},
    };
    const char *me = sc_user(), *who = NULL, *what = NULL;
    const char *fmt = NULL;
    int noheader = 0, parsable = 0, picks[16], widths[16], n = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-n") || !strcmp(a, "--noheader"))
            noheader = 1;
        else if (!strcmp(a, "-P") || !strcmp(a, "--parsable2") ||
                 !strcmp(a, "-p") || !strcmp(a, "--parsable"))
            parsable = 1;
        else if (!strcmp(a, "-s") || !strcmp(a, "--associations") ||
                 !strcmp(a, "-i") || !strcmp(a, "--immediate"))
            continue;
        else if (a[0] == '-')
            return sc_usage("invalid option '%s': Loom's sacctmgr takes -n, "
                            "-P, -p and -s", a);
        else if (!strcasecmp(a, "show") || !strcasecmp(a, "list"))
            continue;
        else if (!what && (!strcasecmp(a, "user") || !strcasecmp(a,
                                                                "users") ||
                           !strcasecmp(a, "assoc") ||
                           !strcasecmp(a, "association") ||
                           !strcasecmp(a, "associations")))
            what = a;
        else if (!strncasecmp(a, "format=", 7))
            fmt = a + 7;
        else if (!strncasecmp(a, "name=", 5) || !strncasecmp(a, "user=", 5)
                 || !strncasecmp(a, "users=", 6))
            who = strchr(a, '=') + 1;
        else if (what && !who && !strchr(a, '='))
            who = a;
        else
            return sc_usage("'%s': Loom's sacctmgr shows users and "
                            "associations only (show user [NAME] "
                            "[format=...])", a);
    }
    if (!what)
        return sc_usage("Loom's sacctmgr shows users and associations "
                        "only: sacctmgr show user [NAME] [format=...]");
    if (!me)
        return sc_fail("cannot tell the calling user's name");
    for (const char *p = fmt ? fmt : "User,DefaultAccount,Admin"; *p;) {
        size_t k = strcspn(p, ",%"), len = strcspn(p, ","), c;
        for (c = 0; c < sizeof(cols) / sizeof(*cols); c++)
            if (strlen(cols[c].name) == k &&
                !strncasecmp(p, cols[c].name, k))
                break;
        if (c == sizeof(cols) / sizeof(*cols) || n == 16)
            return sc_usage("format: '%.*s' is not a field Loom's sacctmgr "
                            "has; it has User, Account, DefaultAccount, "
                            "Cluster, Partition, Admin", (int)k, p);
        widths[n] = cols[c].width;
        if (k < len) { /* Name%W */
            char *end;
            long w = strtol(p + k + 1, &end, 10);
            if (end != p + len || w < 1 || w > 1000)
                return sc_usage("format: bad width in '%.*s'", (int)len, p);
            widths[n] = (int)w;
        }
        picks[n++] = (int)c;
        p += len;
        if (*p == ',')
            p++;
    }
    if (!noheader) {
        for (int i = 0; i < n; i++)
            cell(i, parsable, widths[i], cols[picks[i]].header);
        putchar('\n');
    }
    /* only the caller's own: Loom shows no one else's account here */
    if (who && !sc_listed(who, me))
        return SC_OK;
    for (int i = 0; i < n; i++) {
        const char *v = cols[picks[i]].user == 1   ? me
                        : cols[picks[i]].user == 2 ? "loom"
                        : cols[picks[i]].user == 3 ? ""
                        : cols[picks[i]].user == 4 ? "None"
                                                   : me;
        cell(i, parsable, widths[i], v);
    }
    putchar('\n');
    return SC_OK;
}

/* srun inside a job (LOOM_JOB_ID or SLURM_JOB_ID set) runs its command
 * in place as the job's one step, with the job's cpus, memory and nodes;
 * anything else it cannot do. */
int sc_srun(int argc, char **argv)
{
    static const struct option longs[] = {
        {"ntasks", required_argument, NULL, 'n'},
        {"nodes", required_argument, NULL, 'N'},
        {"cpu-bind", required_argument, NULL, 'B'},
        {"job-name", required_argument, NULL, 'J'},
        {"quiet", no_argument, NULL, 'Q'},
        {NULL, 0, NULL, 0},
    };
    const char *in_job = getenv("LOOM_JOB_ID");
    int c;

    if (!in_job || !*in_job)
        in_job = getenv("SLURM_JOB_ID");
    if (!in_job || !*in_job)
        return sc_fail("srun is not supported by Loom outside a job: Loom "
                       "runs batch jobs on whichever cluster it chooses and "
                       "has no interactive allocation; submit with sbatch "
                       "(--wrap=COMMAND for one command)");
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:n:N:J:Q", longs, NULL)) != -1) {
        switch (c) {
        case 'n': case 'N':
            if (strcmp(optarg, "1") != 0)
                return sc_unsupported(c == 'n' ? "--ntasks" : "--nodes",
                                      "inside a Loom job srun runs one task "
                                      "(-n1) in place");
            break;
        case 'B':
            if (strcmp(optarg, "q") && strcmp(optarg, "quiet") &&
                strcmp(optarg, "none") && strcmp(optarg, "no"))
                return sc_unsupported("--cpu-bind", "the step runs on the "
                                      "job's cpus; only q, quiet and none "
                                      "are taken");
            break;
        case 'J': case 'Q':
            break;
        default:
            return sc_opt_error(c, argv);
        }
    }
    if (optind >= argc)
        return sc_usage("give a command to run");
    execvp(argv[optind], argv + optind);
    return sc_fail("cannot run %s: %s", argv[optind], strerror(errno));
}
