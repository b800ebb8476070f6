/* loomd.c - the daemon: start-up list, runtime loop, the list reversed. */
/* SPDX-License-Identifier: MIT */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adaptors/server.h"
#include "core/accounts.h"
#include "core/api/api.h"
#include "core/conf.h"
#include "core/directives.h"
#include "core/http.h"
#include "core/log.h"
#include "core/runtime.h"
#include "core/service_account.h"
#include "core/settings.h"
#include "core/store.h"
#include "core/tls.h"
#include "core/token.h"
#include "grid/grid.h"
#include "maintenance/maint.h"
#include "maintenance/maint_conf.h"
#include "scheduler/sched.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: loomd [-c loom.conf] [-f]\n"
               "  -c FILE  configuration (default %s/loom/loom.conf)\n"
               "  -f       stay in the foreground, log to stderr\n"
               "  -V       print the version\n", LOOM_SYSCONFDIR);
}

/* In the background, the parent waits on this pipe for "ok" or the one line
 * that says why start-up failed, and exits with it. */
static int ready_fd = -1;

static void die(const struct loom_error *err)
{
    fprintf(stderr, "loomd: %s\n", err->message);
    if (ready_fd >= 0)
        dprintf(ready_fd, "loomd: %s\n", err->message);
    exit(1);
}

static void ready(const char *state_dir)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/loomd.pid", state_dir);
    f = fopen(path, "w");
    if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
    }
    if (ready_fd >= 0) {
        dprintf(ready_fd, "ok\n");
        close(ready_fd);
        ready_fd = -1;
    }
}

static int mkdirs(const char *path, struct loom_error *err)
{
    char buf[4096];
    size_t n = strlen(path);

    if (n >= sizeof(buf))
        return loom_error_set(err, LOOM_EINVAL, "path too long: %s", path);
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return loom_error_set(err, LOOM_EINVAL, "cannot create %s: %s",
                                  buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0700) < 0 && errno != EEXIST)
        return loom_error_set(err, LOOM_EINVAL, "cannot create %s: %s", buf,
                              strerror(errno));
    return 0;
}

/* state_dir: made 0700 when missing; one that is not ours, or that group
 * or others may enter, is refused (it holds the log, the key by default
 * and the jobs' files). */
static int state_dir_make(const char *path, struct loom_error *err)
{
    struct stat st;

    if (mkdirs(path, err) < 0)
        return -1;
    if (stat(path, &st) < 0)
        return loom_error_set(err, LOOM_EINVAL, "state_dir %s: %s", path,
                              strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return loom_error_set(err, LOOM_EINVAL, "state_dir %s is not a "
                              "directory", path);
    if (st.st_uid != geteuid())
        return loom_error_set(err, LOOM_EINVAL, "state_dir %s belongs to uid "
                              "%u, not to uid %u that loomd runs as; chown "
                              "it", path, (unsigned)st.st_uid,
                              (unsigned)geteuid());
    if (st.st_mode & 077)
        return loom_error_set(err, LOOM_EINVAL, "state_dir %s may be entered "
                              "by group or others (mode %04o); chmod 700 it",
                              path, (unsigned)(st.st_mode & 07777));
    return 0;
}

/* After the switch to loomd's account: a reload reads the file again. */
static int conf_readable(const char *path, struct loom_error *err)
{
    if (access(path, R_OK) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s: uid %u that loomd runs "
                              "as cannot read it (%s), and a reload must; "
                              "chown it to that account", path,
                              (unsigned)geteuid(), strerror(errno));
    return 0;
}

/* The parent's side: relay the child's verdict on its start-up. */
static void await_child(int fd, pid_t pid)
{
    char buf[1024];
    ssize_t n, len = 0;

    while (len < (ssize_t)sizeof(buf) - 1 &&
           (n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
        len += n;
    buf[len] = '\0';
    if (strncmp(buf, "ok\n", 3) == 0)
        exit(0);
    fprintf(stderr, "%s", len ? buf : "loomd: the daemon ended during "
                                       "start-up (see its log)\n");
    (void)pid;
    exit(1);
}

/* Go to the background: the child logs to a file; the parent exits once the
 * child serves (0) or failed to start (1, with its reason). */
static void daemonize(const char *state_dir)
{
    char path[4096];
    int p[2], fd;
    pid_t pid;

    if (pipe(p) < 0 || (pid = fork()) < 0) {
        perror("loomd: fork");
        exit(1);
    }
    if (pid > 0) {
        close(p[1]);
        await_child(p[0], pid);
    }
    close(p[0]);
    ready_fd = p[1];
    setsid();
    snprintf(path, sizeof(path), "%s/loomd.log", state_dir);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        close(fd);
    }
}

int main(int argc, char **argv)
{
    const char *conf_path = LOOM_SYSCONFDIR "/loom/loom.conf";
    struct http_config hc = {0};
    struct settings set;
    struct sched_conf sconf;
    struct maint_conf mconf;
    struct loom_error err;
    unsigned char *key = NULL;
    size_t key_len = 0;
    struct store *st;
    struct accounts *accts;
    struct grid_issuers *issuers;
    struct tls_conf *tls = NULL;
    struct conf *cf;
    int fg = 0, opt;

    while ((opt = getopt(argc, argv, "c:fhV")) != -1) {
        switch (opt) {
        case 'c': conf_path = optarg; break;
        case 'f': fg = 1; break;
        case 'V': printf("loomd %s\n", PACKAGE_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    /* Start-up: any failure here ends the daemon with one clear line.
     * libcurl's global set-up is not thread-safe: once, before any
     * thread of ours uses it (issuers' key fetches, API adaptors). */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "loomd: libcurl cannot be initialised\n");
        return 1;
    }
    /* Read as whoever started loomd; then become [loomd] user before
     * anything else is opened or created. */
    cf = conf_load_private(conf_path, &err);
    if (!cf || settings_read(cf, &set, &err) < 0 ||
        sched_conf_read(cf, &sconf, &err) < 0 ||
        maint_conf_read(cf, set.listen, &mconf, &err) < 0 ||
        service_account_become(set.user, &err) < 0 ||
        conf_readable(conf_path, &err) < 0)
        die(&err);
    log_set_level(log_level_parse(set.log_level));
    directives_mode_set(set.directives);
    if (!(accts = accounts_read(set.accounts_file, &set.policy, &err)) ||
        !(issuers = grid_issuers_read(cf, &err)))
        die(&err);
    accounts_install(accts);
    grid_issuers_install(issuers);
    if (set.tls.listen && !(tls = tls_conf_load(&set.tls, &err)))
        die(&err);
    if (state_dir_make(set.state_dir, &err) < 0 ||
        token_key_load(set.token_key_file, 1, &key, &key_len, &err) < 0)
        die(&err);
    if (!fg)
        daemonize(set.state_dir);
    log_info("loomd %s starting, configuration %s", PACKAGE_VERSION,
             conf_path);
    service_account_report(set.user);
    if (runtime_init(conf_path, &err) < 0)
        die(&err);
    st = store_open(set.database, &err);
    if (!st || store_migrate(st, &err) < 0)
        die(&err);
    if (server_start(cf, set.state_dir, &err) < 0 ||
        sched_start(st, set.scheduler_enabled, &sconf, &err) < 0 ||
        server_run(&err) < 0 || maint_start(&mconf, set.database, &err) < 0 ||
        grid_start(set.database, &err) < 0)
        die(&err);
    tls_install(tls); /* logs the certificate it serves */
    hc.listen = set.listen;
    hc.listen_tls = set.tls.listen;
    hc.handle = api_handle;
    hc.max_body = (size_t)set.max_body_bytes;
    hc.key = key;
    hc.key_len = key_len;
    hc.max_conns = (unsigned)set.max_connections;
    hc.max_per_address = (unsigned)set.max_connections_per_address;
    hc.request_timeout_s = (unsigned)set.request_timeout_s;
    if (http_start(&hc, &err) < 0)
        die(&err);
    ready(set.state_dir);
    log_info("loomd ready");

    runtime_loop();

    /* The same list reversed: requests in flight finish first. */
    log_info("stopping: finishing requests in flight");
    http_stop();
    grid_stop();
    maint_stop();
    server_stop();
    sched_stop();
    server_fini();
    snapshot_shutdown();
    runtime_fini();
    accounts_shutdown();
    tls_shutdown();
    token_key_free(key, key_len);
    settings_fini(&set);
    conf_destroy(cf);
    curl_global_cleanup();
    log_info("loomd stopped");
    return 0;
}
