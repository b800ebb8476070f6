/* runas_call.c - loomd runs loom-runas, its privileged helper. */
/* SPDX-License-Identifier: MIT */
#include "core/runas_call.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOOM_LIBEXECDIR
#define LOOM_LIBEXECDIR "/usr/local/libexec/loom"
#endif
#define ARGS_MAX 16

char *const runas_call_env[] = {"PATH=/usr/bin:/bin", NULL};

static char path[4096];
static pthread_once_t path_once = PTHREAD_ONCE_INIT;

void runas_call_set_dir(const char *libexec)
{
    snprintf(path, sizeof(path), "%s/loom-runas", libexec);
}

static void path_default(void)
{
    const char *dir = getenv("LOOM_LIBEXECDIR");

    if (!path[0])
        runas_call_set_dir(dir && *dir ? dir : LOOM_LIBEXECDIR);
}

const char *runas_call_path(void)
{
    pthread_once(&path_once, path_default);
    return path;
}

/* The kind of a failure from what loom-runas said on stderr. */
static enum loom_err_kind kind_of(const char *said)
{
    if (strstr(said, "No such file") || strstr(said, "no account named"))
        return LOOM_ENOENT;
    if (strstr(said, "Permission denied") || strstr(said, "may not") ||
        strstr(said, "only "))
        return LOOM_EPERM;
    return LOOM_EINTERNAL;
}

int runas_call(const char *runas, const char *const *args, int fd3,
               double timeout_s, size_t max_out, struct proc_result *r,
               struct loom_error *err)
{
    char *argv[ARGS_MAX + 2];
    struct proc_spec sp = {.path = runas ? runas : runas_call_path(),
                           .argv = argv,
                           .envp = runas_call_env, .timeout_s = timeout_s,
                           .max_out = max_out, .max_err = 4096};
    size_t n = 0;
    int high = -1, rc;
    char *nl;

    argv[n++] = "loom-runas";
    for (; args[n - 1] && n <= ARGS_MAX; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    /* well above 3, so that handing it over cannot clobber a descriptor */
    if (fd3 > 0 && (high = fcntl(fd3, F_DUPFD_CLOEXEC, 10)) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "loom-runas %s: %s",
                              args[0], strerror(errno));
    sp.fd3 = high > 0 ? high : 0;
    rc = proc_run(&sp, r, err);
    if (high >= 0)
        close(high);
    if (rc < 0)
        return loom_error_prefix(err, "loom-runas %s", args[0]);
    if (r->exited && r->exit_code == 0 && !r->too_much)
        return 0;
    nl = strchr(r->err, '\n');
    if (nl)
        *nl = '\0';
    if (r->timed_out)
        loom_error_set(err, LOOM_ETEMP, "loom-runas %s: no answer within "
                       "%.0f s", args[0], timeout_s);
    else if (r->too_much)
        loom_error_set(err, LOOM_EINTERNAL, "loom-runas %s: more than %zu "
                       "bytes of output", args[0], max_out);
    else if (r->err[0])
        loom_error_set(err, kind_of(r->err), "%s", r->err);
    else if (r->exited)
        loom_error_set(err, LOOM_EINTERNAL, "loom-runas %s exited with "
                       "code %d", args[0], r->exit_code);
    else
        loom_error_set(err, LOOM_EINTERNAL, "loom-runas %s was killed by "
                       "signal %d", args[0], r->signal);
    proc_result_fini(r);
    return -1;
}
