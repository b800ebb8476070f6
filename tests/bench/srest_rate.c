/* srest_rate.c - the slurmrest adaptor alone against one slurmrestd: how
 * many operations a second it sustains with K under way at once, and how
 * fast it starts N jobs. Built by `make bench`; run by table2.sh.
 *
 *   srest_rate CONF OP N K
 *
 * CONF is a loom.conf with one [cluster sr] section (adaptor = slurmrest);
 * OP is nodes, jobs or start (a `true` job on the nodes in $SREST_NODES,
 * default n1, as the account $SREST_ACCOUNT, default the caller's); N calls
 * in all, K at most under way. Prints one line:
 * "OP N calls in S s: R/s, failed F" and the first failure, if any.
 * SPDX-License-Identifier: MIT */
#include <curl/curl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adaptors/adaptor.h"
#include "adaptors/curlloop.h"
#include "core/conf.h"
#include "core/timeutil.h"

static long started, ended, failed;
static char first_err[512];

struct slot {
    struct adaptor_call k;
    struct start_req req;
};

static void on_done(struct adaptor_call *k)
{
    ended++;
    if (k->rc < 0 && failed++ == 0)
        snprintf(first_err, sizeof(first_err), "%s", k->err.message);
    adaptor_call_fini(k);
}

int main(int argc, char **argv)
{
    static const char *const cmd[] = {"true", NULL};
    static const char *const env[] = {NULL};
    const char *nodes_env = getenv("SREST_NODES");
    const char *node[1] = {nodes_env ? nodes_env : "n1"};
    const char *account = getenv("SREST_ACCOUNT");
    char *own = NULL;
    const struct passwd *pw;
    const struct adaptor_type *t = adaptor_type_find("slurmrest");
    struct loom_error err = {0};
    struct conf *c;
    struct curlloop *loop;
    struct adaptor_env aenv = {.cluster = "sr", .state_dir = "/tmp"};
    struct slot *slots;
    void *inst = NULL;
    long n, k, id0;
    int op;
    double t0, dt;

    if (argc != 5 || !t) {
        fprintf(stderr, "usage: srest_rate CONF nodes|jobs|start N K\n");
        return 2;
    }
    op = !strcmp(argv[2], "nodes") ? LOOM_OP_NODES
         : !strcmp(argv[2], "jobs") ? LOOM_OP_JOBS : LOOM_OP_START;
    n = strtol(argv[3], NULL, 10);
    k = strtol(argv[4], NULL, 10);
    if (n < 1 || k < 1 || !(slots = calloc((size_t)n, sizeof(*slots))))
        return 2;
    /* copied: the adaptor may look up accounts too (getpwnam's buffer) */
    if (!account && (pw = getpwuid(getuid())))
        account = own = strdup(pw->pw_name);
    if (op == LOOM_OP_START && !account) {
        fprintf(stderr, "srest_rate: no account to start the jobs as: "
                "uid %ld has no name, and SREST_ACCOUNT is not set\n",
                (long)getuid());
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (!(c = conf_load(argv[1], &err)) || !(loop = curlloop_create(&err))) {
        fprintf(stderr, "srest_rate: %s\n", err.message);
        return 1;
    }
    aenv.loop = loop;
    if (getenv("SREST_STATE_DIR"))
        aenv.state_dir = getenv("SREST_STATE_DIR");
    if (t->create(conf_section(c, "cluster", "sr"), &aenv, &inst, &err) < 0) {
        fprintf(stderr, "srest_rate: %s\n", err.message);
        return 1;
    }
    id0 = 900000000L + (long)(time(NULL) % 1000000) * 100;
    t0 = time_mono();
    while (ended < n) {
        while (started < n && started - ended < k) {
            struct slot *s = &slots[started];
            s->k.op = op;
            s->k.done_cb = on_done;
            if (op == LOOM_OP_START) {
                s->req = (struct start_req){
                    .loom_id = id0 + started, .name = "rate",
                    .account = account, .command = cmd,
                    .env = env, .workdir = aenv.state_dir,
                    .nodes = node, .n_nodes = 1,
                    .cpus_per_node = 1, .walltime_s = 60};
                s->k.start = &s->req;
            }
            started++;
            if (t->call(inst, &s->k) != 0) {
                fprintf(stderr, "srest_rate: %s is not asynchronous\n",
                        argv[2]);
                return 1;
            }
        }
        curlloop_run(loop, 1.0);
    }
    dt = time_mono() - t0;
    printf("%s %ld calls in %.3f s: %.0f/s, failed %ld\n", argv[2], n, dt,
           (double)n / dt, failed);
    if (failed)
        printf("first failure: %s\n", first_err);
    t->destroy(inst);
    curlloop_destroy(loop);
    conf_destroy(c);
    free(slots);
    free(own);
    curl_global_cleanup();
    return failed ? 1 : 0;
}
