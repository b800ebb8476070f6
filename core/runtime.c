/* runtime.c - the runtime control thread: signals, reload, shutdown. */
/* SPDX-License-Identifier: MIT */
#include "core/runtime.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/server.h"
#include "core/accounts.h"
#include "core/conf.h"
#include "core/directives.h"
#include "core/leader.h"
#include "core/log.h"
#include "core/settings.h"
#include "core/timeutil.h"
#include "core/tls.h"
#include "grid/grid.h"
#include "maintenance/maint.h"
#include "maintenance/maint_conf.h"
#include "scheduler/sched.h"

static struct {
    struct msgq *q;
    char *conf_path;
    double started;
    pthread_t sig_thread;
    sigset_t set;
} R;

/* The signal catcher: turns signals into runtime commands. */
static void *sig_main(void *arg)
{
    log_thread_name("signal");
    for (;;) {
        int sig = 0;
        if (sigwait(&R.set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            log_info("SIGHUP: reloading the configuration");
            msgq_post(R.q, msg_create(RUNTIME_RELOAD, NULL, NULL, NULL));
        } else {
            log_info("%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
            msgq_post(R.q, msg_create(RUNTIME_SHUTDOWN, NULL, NULL, NULL));
            return NULL;
        }
    }
}

int runtime_init(const char *conf_path, struct loom_error *err)
{
    R.q = msgq_create();
    R.conf_path = strdup(conf_path);
    R.started = time_real();
    if (!R.q || !R.conf_path)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    sigemptyset(&R.set);
    sigaddset(&R.set, SIGTERM);
    sigaddset(&R.set, SIGINT);
    sigaddset(&R.set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &R.set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (pthread_create(&R.sig_thread, NULL, sig_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the signal "
                              "thread");
    pthread_detach(R.sig_thread);
    return 0;
}

struct msgq *runtime_queue(void)
{
    return R.q;
}

double runtime_started_at(void)
{
    return R.started;
}

/* Re-read the file and what it names (the accounts file, the [issuer]
 * sections, the TLS certificate, key, CAs and CRLs); anything bad changes
 * nothing and says why. The server thread checks and applies the cluster
 * sections; the rest changes when they were accepted. */
static void reload(struct reply *asker)
{
    struct reply *r = reply_create();
    struct loom_error err;
    struct settings set = {0};
    struct conf *cf = conf_load_private(R.conf_path, &err);
    struct sched_conf *sc = calloc(1, sizeof(*sc));
    struct maint_conf *mc = calloc(1, sizeof(*mc));
    struct accounts *accts = NULL;
    struct grid_issuers *issuers = NULL;
    struct tls_conf *tls = NULL;
    enum directives_mode dirs = DIRECTIVES_STRICT;
    int level = -1;

    if (!sc || !mc)
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    else if (cf && settings_read(cf, &set, &err) == 0 &&
             sched_conf_read(cf, sc, &err) == 0 &&
             maint_conf_read(cf, set.listen, mc, &err) == 0 &&
             (accts = accounts_read(set.accounts_file, &set.policy, &err)) &&
             (issuers = grid_issuers_read(cf, &err)) &&
             (!set.tls.listen || (tls = tls_conf_load(&set.tls, &err))))
        level = log_level_parse(set.log_level);
    if (level >= 0 && !set.tls.listen != !tls_active())
        log_warn("reload: listen_tls %s takes effect at the next start",
                 set.tls.listen ? "added" : "removed");
    dirs = set.directives;
    settings_fini(&set);
    if (!cf || level < 0 || !r) {
        log_err("reload refused: %s", err.message);
        tls_conf_unref(tls);
        accounts_destroy(accts);
        grid_issuers_free(issuers);
        conf_destroy(cf);
        reply_unref(r);
        free(sc);
        maint_conf_free(mc);
        if (asker)
            reply_send_error(asker, &err);
        return;
    }
    if (!leader_threads_up()) { /* a standby: no thread to ask */
        reply_send(r, 200, strdup("{\"changed\":[],\"restart_needed\":[],"
                                  "\"at_takeover\":true}"));
        conf_destroy(cf);
    } else {
        msgq_post(server_queue(), msg_create(SERVER_RELOAD, cf,
                                             (void (*)(void *))conf_destroy,
                                             r));
    }
    if (reply_wait(r, 30) < 0) {
        loom_error_set(&err, LOOM_EUNAVAIL, "reload: the server thread did "
                       "not answer within 30 s");
        if (asker)
            reply_send_error(asker, &err);
    } else if (r->status >= 400) {
        if (asker)
            reply_send_error(asker, &r->err);
    } else {
        log_set_level(level);
        directives_mode_set(dirs);
        accounts_install(accts);
        accts = NULL;
        grid_issuers_install(issuers);
        issuers = NULL;
        if (tls && tls_active()) { /* new certificate, key, CAs, CRLs */
            tls_install(tls);
            tls = NULL;
        }
        if (leader_threads_up()) {
            msgq_post(sched_queue(), msg_create(SCHED_CONFIG, sc, free,
                                                NULL));
            msgq_post(maint_queue(), msg_create(MAINT_CONFIG, mc,
                                                maint_conf_free, NULL));
            sc = NULL;
            mc = NULL;
        }
        log_info("configuration %s reloaded", R.conf_path);
        if (asker) {
            reply_send(asker, r->status, r->body);
            r->body = NULL;
        }
    }
    reply_unref(r);
    accounts_destroy(accts);
    grid_issuers_free(issuers);
    tls_conf_unref(tls);
    free(sc);
    maint_conf_free(mc);
}

int runtime_loop(void)
{
    log_thread_name("ctl");
    for (;;) {
        struct msg *m = msgq_take(R.q, -1, 1);
        int type = m ? m->type : 0;
        if (type == RUNTIME_RELOAD)
            reload(m->reply);
        msg_destroy(m);
        if (type == RUNTIME_SHUTDOWN || type == RUNTIME_TAKEOVER ||
            type == RUNTIME_FENCED)
            return type;
    }
}

void runtime_fini(void)
{
    msgq_destroy(R.q);
    free(R.conf_path);
    memset(&R, 0, sizeof(R));
}
