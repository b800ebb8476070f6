/* loomd.c - the daemon: start-up list, runtime loop, the list reversed. */
/* SPDX-License-Identifier: MIT */
#include <curl/curl.h>
#include <dirent.h>
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
#include "core/jobcount.h"
#include "core/leader.h"
#include "core/log.h"
#include "core/notify.h"
#include "core/runtime.h"
#include "core/service_account.h"
#include "core/settings.h"
#include "core/store.h"
#include "core/timeutil.h"
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
    /* loomd runs on without it (a full state_dir, say), but says so */
    if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fflush(f) != 0 ||
        ferror(f))
        log_warn("cannot write %s: %s; loomd runs on without it", path,
                 strerror(errno));
    if (f)
        fclose(f);
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

/* The configuration: what the start-up checks, and the threads of an
 * epoch start from. */
struct config {
    struct conf *cf;
    struct settings set;
    struct sched_conf sconf;
    struct maint_conf mconf;
};

static void config_fini(struct config *c)
{
    maint_conf_fini(&c->mconf);
    settings_fini(&c->set);
    conf_destroy(c->cf);
    memset(c, 0, sizeof(*c));
}

static int config_read(const char *path, struct config *c,
                       struct loom_error *err)
{
    memset(c, 0, sizeof(*c));
    if (!(c->cf = conf_load_private(path, err)) ||
        settings_read(c->cf, &c->set, err) < 0 ||
        sched_conf_read(c->cf, &c->sconf, err) < 0 ||
        maint_conf_read(c->cf, c->set.listen, &c->mconf, err) < 0) {
        config_fini(c);
        return -1;
    }
    return 0;
}

static int threads_up; /* the threads of an epoch were started */

/* The start list of an epoch's threads: load the state as a restart does
 * (jobs, reservations, maintenance; the local jobs re-attached, the
 * cluster jobs adopted), and act only once the loomd before has surely
 * stopped. A takeover after start-up reads loom.conf again first. */
static int become_active(const char *conf_path, struct config *c, int again,
                         struct loom_error *err)
{
    struct config fresh;
    struct loom_error why;
    struct store *st;
    double t0 = time_mono();

    if (again && config_read(conf_path, &fresh, &why) < 0) {
        log_warn("takeover: %s: going on with the configuration read "
                 "before", why.message);
    } else if (again) {
        config_fini(c);
        *c = fresh;
    }
    threads_up = 1;
    if (!(st = store_open(c->set.database, err)) ||
        maint_pauses_load(st, err) < 0 ||
        server_start(c->cf, c->set.state_dir, err) < 0 ||
        sched_start(st, c->set.scheduler_enabled, &c->sconf, err) < 0)
        return -1;
    leader_wait_safe();
    if (server_run(err) < 0 ||
        maint_start(&c->mconf, c->set.database, err) < 0 ||
        grid_start(c->set.database, err) < 0)
        return -1;
    log_info("active: the state is loaded and the threads run (%.0f ms)",
             (time_mono() - t0) * 1000);
    return 0;
}

/* Where clients reach this loomd: listen's host (the host name for a
 * wildcard) and the bound port; none on a Unix socket. */
static void own_url(const char *listen)
{
    char host[256] = "", url[320];
    const char *colon = listen ? strrchr(listen, ':') : NULL;
    size_t n = colon ? (size_t)(colon - listen) : 0;

    if (!colon || !strncmp(listen, "unix:", 5) || !http_port())
        return;
    if (n == 0 || (n == 1 && *listen == '*') ||
        (n == 7 && !strncmp(listen, "0.0.0.0", 7)) ||
        (n == 4 && !strncmp(listen, "[::]", 4))) {
        if (gethostname(host, sizeof(host) - 1) < 0)
            snprintf(host, sizeof(host), "localhost");
    } else if (n < sizeof(host)) {
        memcpy(host, listen, n);
    }
    snprintf(url, sizeof(url), "http://%s:%d", host, http_port());
    leader_set_url(url);
}

/* Fenced for good: another loomd acts. Come back as a standby, as the
 * same process: nothing of this image (its threads, a CMS call they were
 * in) goes on, and no descriptor but the standard ones is inherited. */
static void start_again(char **argv)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    while (d && (e = readdir(d))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd <= 2 || fd == dirfd(d))
            continue;
        fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    }
    if (d)
        closedir(d);
    setenv("LOOM_STARTED_AGAIN", "1", 1);
    notify_env_restore();
    notify_send("STATUS=fenced: starting again as a standby");
    log_warn("fenced: executing loomd again, to stand by");
    execv("/proc/self/exe", argv);
    log_err("cannot execute loomd again (%s); exiting", strerror(errno));
    _exit(3);
}

int main(int argc, char **argv)
{
    const char *conf_path = LOOM_SYSCONFDIR "/loom/loom.conf";
    struct http_config hc = {0};
    struct leader_conf lc = {0};
    struct config c;
    struct loom_error err;
    unsigned char *key = NULL;
    size_t key_len = 0;
    struct accounts *accts;
    struct grid_issuers *issuers;
    struct tls_conf *tls = NULL;
    int fg = 0, opt, why, active;
    const char *web_dir;

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
    notify_init(); /* before any thread: it changes the environment */
    /* Start-up: any failure here ends the daemon with one clear line.
     * libcurl's global set-up is not thread-safe: once, before any
     * thread of ours uses it (issuers' key fetches, API adaptors). */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "loomd: libcurl cannot be initialised\n");
        return 1;
    }
    /* Read as whoever started loomd; then become [loomd] user before
     * anything else is opened or created. */
    if (config_read(conf_path, &c, &err) < 0 ||
        service_account_become(c.set.user, &err) < 0 ||
        conf_readable(conf_path, &err) < 0)
        die(&err);
    log_set_level(log_level_parse(c.set.log_level));
    log_set_format((enum log_format)c.set.log_format);
    directives_mode_set(c.set.directives);
    jobcount_top_set((size_t)c.set.metrics_accounts);
    if (!(accts = accounts_read(c.set.accounts_file, &c.set.policy, &err)) ||
        !(issuers = grid_issuers_read(c.cf, &err)))
        die(&err);
    accounts_install(accts);
    grid_issuers_install(issuers);
    if (c.set.tls.listen && !(tls = tls_conf_load(&c.set.tls, &err)))
        die(&err);
    if (state_dir_make(c.set.state_dir, &err) < 0 ||
        token_key_load(c.set.token_key_file, 1, &key, &key_len, &err) < 0)
        die(&err);
    /* Executed again after a fence: in the background already. */
    if (!fg && !getenv("LOOM_STARTED_AGAIN"))
        daemonize(c.set.state_dir);
    unsetenv("LOOM_STARTED_AGAIN");
    log_info("loomd %s starting, configuration %s", PACKAGE_VERSION,
             conf_path);
    service_account_report(c.set.user);
    if (runtime_init(conf_path, &err) < 0)
        die(&err);
    /* Active at once (the lock was free), or a standby. */
    notify_send("STATUS=starting: the lease, database, jobs, clusters");
    lc.database = c.set.database;
    lc.lease_s = c.set.lease_s;
    lc.url = c.set.advertise_url;
    if ((active = leader_start(&lc, &err)) < 0 ||
        (active && become_active(conf_path, &c, 0, &err) < 0))
        die(&err);
    tls_install(tls); /* logs the certificate it serves */
    hc.listen = c.set.listen;
    hc.listen_tls = c.set.tls.listen;
    hc.listen_peer = c.set.listen_peer;
    hc.peer_mode = c.set.listen_peer_mode;
    hc.peer_root_roles = c.set.listen_peer_root_roles;
    hc.handle = api_handle;
    hc.max_body = (size_t)c.set.max_body_bytes;
    hc.key = key;
    hc.key_len = key_len;
    hc.max_conns = (unsigned)c.set.max_connections;
    hc.max_per_address = (unsigned)c.set.max_connections_per_address;
    hc.request_timeout_s = (unsigned)c.set.request_timeout_s;
    web_dir = getenv("LOOM_WEB_DIR");
    api_web_load(web_dir && *web_dir ? web_dir : LOOM_DATADIR "/web");
    if (api_acct_init(c.set.database, &err) < 0 ||
        api_events_start(&err) < 0 || http_start(&hc, &err) < 0)
        die(&err);
    own_url(c.set.listen);
    if (active)
        leader_serving();
    ready(c.set.state_dir);
    log_info("loomd ready (%s)", leader_role_name());
    notify_send("READY=1\nSTATUS=serving the API on %s (%s)", c.set.listen,
                leader_role_name());

    while ((why = runtime_loop()) == RUNTIME_TAKEOVER) {
        if (become_active(conf_path, &c, 1, &err) < 0) {
            log_err("takeover failed: %s", err.message);
            break;
        }
        leader_serving();
        log_info("loomd ready (%s)", leader_role_name());
        notify_send("STATUS=serving the API on %s (%s)", c.set.listen,
                    leader_role_name());
    }
    if (why == RUNTIME_FENCED)
        start_again(argv);

    /* The same list reversed: requests in flight finish first. */
    log_info("stopping: finishing requests in flight");
    notify_send("STOPPING=1\nSTATUS=stopping: finishing requests in flight");
    http_stop();
    api_events_stop();
    api_acct_fini();
    api_web_free();
    if (threads_up) {
        grid_stop();
        maint_stop();
        server_stop();
        sched_stop();
        server_fini();
    }
    /* Let go of the lease only now that nothing acts. */
    leader_stop(why == RUNTIME_SHUTDOWN);
    snapshot_shutdown();
    runtime_fini();
    accounts_shutdown();
    tls_shutdown();
    token_key_free(key, key_len);
    config_fini(&c);
    curl_global_cleanup();
    log_info("loomd stopped");
    return why == RUNTIME_SHUTDOWN ? 0 : 1;
}
