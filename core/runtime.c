/* runtime.c - the runtime control thread: signals, reload, shutdown. */
/* SPDX-License-Identifier: MIT */
#include "core/runtime.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"
#include "core/log.h"
#include "core/server.h"
#include "core/timeutil.h"

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

static int apply_log_level(struct conf *cf, struct loom_error *err)
{
    static const char *const names[] = {"err", "warning", "notice", "info",
                                        "debug"};
    static const int levels[] = {LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO,
                                 LOG_DEBUG};
    struct conf_section *s = conf_section(cf, "loomd", NULL);
    const char *v = conf_get(s, "log_level");

    for (size_t i = 0; v && i < 5; i++)
        if (!strcmp(v, names[i])) {
            log_set_level(levels[i]);
            return 0;
        }
    if (v)
        return loom_error_set(err, LOOM_EINVAL, "%s: log_level must be err, "
                              "warning, notice, info or debug", cf->file);
    return 0;
}

/* Re-read the file; a bad file changes nothing and says why. */
static void reload(struct reply *r)
{
    struct loom_error err;
    struct conf *cf = conf_load(R.conf_path, &err);

    if (!cf || apply_log_level(cf, &err) < 0) {
        log_err("reload refused: %s", err.message);
        conf_destroy(cf);
        if (r)
            reply_send_error(r, &err);
        return;
    }
    msgq_post(server_queue(), msg_create(SERVER_RELOAD, cf,
                                         (void (*)(void *))conf_destroy, r));
    log_info("configuration %s reloaded", R.conf_path);
}

void runtime_loop(void)
{
    log_thread_name("ctl");
    for (;;) {
        struct msg *m = msgq_take(R.q, -1, 1);
        int type = m ? m->type : 0;
        if (type == RUNTIME_RELOAD)
            reload(m->reply);
        msg_destroy(m);
        if (type == RUNTIME_SHUTDOWN)
            return;
    }
}

void runtime_fini(void)
{
    msgq_destroy(R.q);
    free(R.conf_path);
    memset(&R, 0, sizeof(R));
}
