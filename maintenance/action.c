/* action.c - run a maintenance action: once per node of a request, in a
 * worker thread, each run in its own process group with a time-out and
 * its output captured; the end goes back to the maintenance thread. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/proc.h"
#include "maintenance/maint_state.h"

#define OUT_CAP (64 * 1024)
#define KEEP 4096 /* the output a request keeps */

extern char **environ;

/* The queue the workers answer to; NULL once the thread is gone. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct msgq *answer_to;
static int shut;

struct work {
    int64_t id;
    char *cluster, *url;
    struct strv nodes, argv;
    double timeout_s;
};

static void work_free(struct work *w)
{
    free(w->cluster);
    free(w->url);
    strv_fini(&w->nodes);
    strv_fini(&w->argv);
    free(w);
}

void action_done_free(void *p)
{
    struct action_done *d = p;

    if (!d)
        return;
    free(d->error);
    free(d->output);
    free(d);
}

/* word with %n %c %i %% replaced. */
static char *expand(const char *word, const char *node, const char *cluster,
                    int64_t id)
{
    size_t cap = strlen(word) + strlen(node) * 4 + strlen(cluster) * 4 + 64,
           k = 0;
    char *out = malloc(cap), num[24];

    if (!out)
        return NULL;
    snprintf(num, sizeof(num), "%lld", (long long)id);
    for (const char *p = word; *p && k + 1 < cap; p++) {
        const char *sub = NULL;
        if (*p == '%' && p[1]) {
            switch (p[1]) {
            case 'n': sub = node; break;
            case 'c': sub = cluster; break;
            case 'i': sub = num; break;
            case '%': sub = "%"; break;
            }
        }
        if (!sub) {
            out[k++] = *p;
            continue;
        }
        p++;
        if (k + strlen(sub) + 1 >= cap) {
            char *grown = realloc(out, cap = cap * 2 + strlen(sub));
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + k, sub, strlen(sub));
        k += strlen(sub);
    }
    out[k] = '\0';
    return out;
}

/* The daemon's environment with the action's own variables. */
static int env_for(struct strv *env, const struct work *w, const char *node)
{
    char buf[1024], num[24];
    int rc = 0;

    snprintf(num, sizeof(num), "%lld", (long long)w->id);
    for (char **e = environ; *e && rc == 0; e++)
        if (strncmp(*e, "LOOM_NODE=", 10) &&
            strncmp(*e, "LOOM_CLUSTER=", 13) &&
            strncmp(*e, "LOOM_MAINTENANCE_ID=", 20) &&
            strncmp(*e, "LOOM_URL=", 9))
            rc = strv_push(env, *e);
    snprintf(buf, sizeof(buf), "LOOM_NODE=%s", node);
    rc |= strv_push(env, buf);
    snprintf(buf, sizeof(buf), "LOOM_CLUSTER=%s", w->cluster);
    rc |= strv_push(env, buf);
    snprintf(buf, sizeof(buf), "LOOM_MAINTENANCE_ID=%s", num);
    rc |= strv_push(env, buf);
    snprintf(buf, sizeof(buf), "LOOM_URL=%s", w->url);
    rc |= strv_push(env, buf);
    return rc;
}

/* Keep the last KEEP bytes of what the runs printed. */
static void keep(char **acc, const char *node, const struct proc_result *pr)
{
    size_t old = *acc ? strlen(*acc) : 0;
    size_t add = strlen(node) + pr->out_len + pr->err_len + 8;
    char *s = malloc(old + add + 1), *t;

    if (!s)
        return;
    snprintf(s, old + add + 1, "%s[%s] %s%s", *acc ? *acc : "", node,
             pr->out ? pr->out : "", pr->err ? pr->err : "");
    free(*acc);
    if (strlen(s) > KEEP && (t = strdup(s + strlen(s) - KEEP))) {
        free(s);
        s = t;
    }
    *acc = s;
}

/* One node: 0 when the action ended with status 0, else -1 with why. */
static int run_one(const struct work *w, const char *node, char **output,
                   char *why, size_t len)
{
    struct strv argv = {0}, env = {0};
    struct proc_result pr = {0};
    struct loom_error err;
    int rc = -1;

    for (size_t i = 0; i < w->argv.n; i++) {
        char *word = expand(w->argv.v[i], node, w->cluster, w->id);
        if (!word || strv_push(&argv, word) < 0) {
            free(word);
            snprintf(why, len, "node %s: out of memory", node);
            goto out;
        }
        free(word);
    }
    if (env_for(&env, w, node) < 0) { /* strv keeps v NULL-terminated */
        snprintf(why, len, "node %s: out of memory", node);
        goto out;
    }
    {
        struct proc_spec spec = {.path = argv.v[0], .argv = argv.v,
                                 .envp = env.v, .timeout_s = w->timeout_s,
                                 .max_out = OUT_CAP, .max_err = OUT_CAP};
        if (proc_run(&spec, &pr, &err) < 0) {
            snprintf(why, len, "node %s: %s", node, err.message);
            goto out;
        }
    }
    keep(output, node, &pr);
    if (pr.timed_out)
        snprintf(why, len, "node %s: the action ran over its %.0f s and was "
                 "killed", node, w->timeout_s);
    else if (pr.signal)
        snprintf(why, len, "node %s: the action was killed by signal %d",
                 node, pr.signal);
    else if (pr.exited && pr.exit_code != 0)
        snprintf(why, len, "node %s: the action exited with status %d%s%.200s",
                 node, pr.exit_code, pr.err && *pr.err ? ": " : "",
                 pr.err ? pr.err : "");
    else
        rc = 0;
out:
    proc_result_fini(&pr);
    strv_fini(&argv);
    strv_fini(&env);
    return rc;
}

static void *worker(void *arg)
{
    struct work *w = arg;
    struct action_done *d = calloc(1, sizeof(*d));
    char why[768] = "";
    int ok = 1;

    log_thread_name("action");
    for (size_t i = 0; i < w->nodes.n && ok; i++)
        ok = run_one(w, w->nodes.v[i], d ? &d->output : NULL, why,
                     sizeof(why)) == 0;
    if (d) {
        d->id = w->id;
        d->ok = ok;
        d->error = ok ? NULL : strdup(why);
    }
    pthread_mutex_lock(&lock);
    if (answer_to && d)
        msgq_post(answer_to, msg_create(MAINT_ACTION_DONE, d,
                                        action_done_free, NULL));
    else
        action_done_free(d);
    pthread_mutex_unlock(&lock);
    work_free(w);
    return NULL;
}

int action_start(const struct mreq *r, const struct maint_action *a,
                 struct loom_error *err)
{
    struct work *w = calloc(1, sizeof(*w));
    pthread_attr_t at;
    pthread_t t;
    int rc;

    if (!w || !(w->cluster = strdup(r->cluster)) ||
        !(w->url = strdup(M.conf.url))) {
        if (w)
            work_free(w);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    w->id = r->id;
    w->timeout_s = a->timeout_s;
    for (size_t i = 0; i < r->nodes.n; i++)
        if (strv_push(&w->nodes, r->nodes.v[i]) < 0) {
            work_free(w);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    for (size_t i = 0; i < a->argv.n; i++)
        if (strv_push(&w->argv, a->argv.v[i]) < 0) {
            work_free(w);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    pthread_mutex_lock(&lock);
    if (!shut)
        answer_to = M.q;
    pthread_mutex_unlock(&lock);
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &at, worker, w);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        work_free(w);
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start a thread "
                              "for the action");
    }
    log_info("maintenance=%lld: action %s started on %zu node(s)",
             (long long)r->id, a->name, r->nodes.n);
    return 0;
}

void action_shutdown(void)
{
    pthread_mutex_lock(&lock);
    answer_to = NULL;
    shut = 1;
    pthread_mutex_unlock(&lock);
}
