/* settings.c - the [loomd] section and the embedded default fabric. */
/* SPDX-License-Identifier: MIT */
#include "core/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/token.h"

static const char default_fabric[] =
    "[cluster local]\n"
    "adaptor = local\n"
    "nodes = 4\n"
    "cpus_per_node = 1\n"
    "memory_mb = 1024\n"
    "[cluster sim64]\n"
    "adaptor = sim\n"
    "nodes = 64\n"
    "cpus_per_node = 32\n"
    "memory_mb = 131072\n"
    "speed = 10\n"
    "[cluster sim1000]\n"
    "adaptor = sim\n"
    "nodes = 1000\n"
    "cpus_per_node = 32\n"
    "memory_mb = 131072\n"
    "speed = 10\n";

/* Move the embedded clusters into c. */
static int add_default_fabric(struct conf *c, struct loom_error *err)
{
    struct conf *d = conf_parse("<default fabric>", default_fabric, err);
    struct conf_section *s;

    if (!d)
        return -1;
    s = realloc(c->sections, (c->n_sections + d->n_sections) * sizeof(*s));
    if (!s) {
        conf_destroy(d);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    c->sections = s;
    for (size_t i = 0; i < d->n_sections; i++) {
        c->sections[c->n_sections] = d->sections[i];
        c->sections[c->n_sections++].file = c->file;
    }
    d->n_sections = 0;
    conf_destroy(d);
    log_info("no [cluster] in %s: using the embedded default fabric (local, "
             "sim64, sim1000)", c->file);
    return 0;
}

/* listen_peer_root_role: the role uid 0 acts with on the listen_peer
 * socket, or none. Never user or gateway: those act as a local account,
 * and no job runs as root. */
static int peer_root_role(const char *file, const char *name, unsigned *roles,
                          struct loom_error *err)
{
    unsigned r = token_role_parse(name);

    *roles = 0;
    if (!strcmp(name, "none"))
        return 0;
    if (!r || r == LOOM_ROLE_USER || r == LOOM_ROLE_GATEWAY)
        return loom_error_set(err, LOOM_EINVAL, "%s: listen_peer_root_role "
                              "must be none, admin, operator, scheduler, "
                              "monitor or reader (got '%s')", file, name);
    *roles = r;
    return 0;
}

int settings_read(struct conf *c, struct settings *s, struct loom_error *err)
{
    struct conf_section *sec = conf_section(c, "loomd", NULL);
    const char *key, *dirs, *fmt, *pmode, *proot;
    char *end;
    size_t n;

    memset(s, 0, sizeof(*s));
    if (!sec)
        return loom_error_set(err, LOOM_EINVAL, "%s: a [loomd] section is "
                              "required", c->file);
    if (conf_get_str(sec, "listen", "127.0.0.1:8470", &s->listen, err) < 0 ||
        conf_get_str(sec, "listen_peer", NULL, &s->listen_peer, err) < 0 ||
        conf_get_str(sec, "listen_peer_mode", "0666", &pmode, err) < 0 ||
        conf_get_str(sec, "listen_peer_root_role", "none", &proot,
                     err) < 0 ||
        conf_get_str(sec, "database", NULL, &s->database, err) < 0 ||
        conf_get_str(sec, "state_dir", "/var/lib/loom", &s->state_dir,
                     err) < 0 ||
        conf_get_str(sec, "token_key_file", NULL, &key, err) < 0 ||
        conf_get_long(sec, "max_body_bytes", 1 << 20, 1024, 64L << 20,
                      &s->max_body_bytes, err) < 0 ||
        conf_get_bool(sec, "scheduler", 1, &s->scheduler_enabled, err) < 0 ||
        conf_get_str(sec, "log_level", "info", &s->log_level, err) < 0 ||
        conf_get_str(sec, "log_format", "text", &fmt, err) < 0 ||
        conf_get_str(sec, "user", LOOM_SERVICE_USER, &s->user, err) < 0 ||
        conf_get_str(sec, "accounts_file", NULL, &s->accounts_file,
                     err) < 0 ||
        conf_get_long(sec, "min_uid", 1000, 0, 4294967294L,
                      &s->policy.min_uid, err) < 0 ||
        conf_get_bool(sec, "allow_root_jobs", 0, &s->policy.allow_root_jobs,
                      err) < 0 ||
        conf_get_bool(sec, "private_data", 1, &s->policy.private_data,
                      err) < 0 ||
        conf_get_long(sec, "max_token_ttl_s", LOOM_TOKEN_TTL_DEFAULT_MAX, 60,
                      LOOM_TOKEN_TTL_MAX, &s->policy.max_token_ttl_s,
                      err) < 0 ||
        conf_get_long(sec, "max_connections", 4096, 16, 1000000,
                      &s->max_connections, err) < 0 ||
        conf_get_long(sec, "max_connections_per_address", 64, 1, 1000000,
                      &s->max_connections_per_address, err) < 0 ||
        conf_get_long(sec, "request_timeout_s", 10, 1, 3600,
                      &s->request_timeout_s, err) < 0 ||
        conf_get_str(sec, "directives", "strict", &dirs, err) < 0 ||
        conf_get_long(sec, "metrics_accounts", 20, 0, 10000,
                      &s->metrics_accounts, err) < 0 ||
        conf_get_double(sec, "lease_s", 3, 1, 60, &s->lease_s, err) < 0 ||
        conf_get_str(sec, "advertise_url", NULL, &s->advertise_url,
                     err) < 0 ||
        tls_settings_read(sec, &s->tls, err) < 0)
        return -1;
    if (s->listen_peer && (strncmp(s->listen_peer, "unix:/", 6) != 0 ||
                           !strcmp(s->listen_peer + 5, "/")))
        return loom_error_set(err, LOOM_EINVAL, "%s: listen_peer must be "
                              "unix:/PATH, a socket whose clients are known "
                              "by their uid (got '%s')", c->file,
                              s->listen_peer);
    s->listen_peer_mode = strtol(pmode, &end, 8);
    if (!*pmode || *end || strspn(pmode, "01234567") != strlen(pmode) ||
        s->listen_peer_mode > 0777)
        return loom_error_set(err, LOOM_EINVAL, "%s: listen_peer_mode must "
                              "be an octal mode from 0 to 0777 (got '%s')",
                              c->file, pmode);
    if (peer_root_role(c->file, proot, &s->listen_peer_root_roles, err) < 0)
        return -1;
    if (directives_mode_parse(dirs, &s->directives) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s: directives must be "
                              "strict or warn (got '%s')", c->file, dirs);
    if ((s->log_format = log_format_parse(fmt)) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s: log_format must be text "
                              "or json (got '%s')", c->file, fmt);
    if (log_level_parse(s->log_level) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s: log_level must be err, "
                              "warning, notice, info or debug (got '%s')",
                              c->file, s->log_level);
    if (s->advertise_url &&
        ((strncmp(s->advertise_url, "http://", 7) != 0 &&
          strncmp(s->advertise_url, "https://", 8) != 0) ||
         strpbrk(s->advertise_url, " \t\r\n?#") ||
         s->advertise_url[strlen(s->advertise_url) - 1] == '/'))
        return loom_error_set(err, LOOM_EINVAL, "%s: advertise_url must be "
                              "http://HOST:PORT or https://HOST:PORT, "
                              "without a blank, query or trailing / (got "
                              "'%s')",
                              c->file, s->advertise_url);
    if (!s->database)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [loomd] needs "
                              "'database = <libpq connection string>'",
                              c->file, sec->line);
    if (conf_check_unused(sec, err) < 0)
        return -1;
    if (!key) { /* default: next to the state */
        n = strlen(s->state_dir) + sizeof("/token.key");
        s->key_file_buf = malloc(n);
        if (!s->key_file_buf)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        snprintf(s->key_file_buf, n, "%s/token.key", s->state_dir);
        key = s->key_file_buf;
    }
    s->token_key_file = key;
    if (!conf_section(c, "cluster", NULL))
        return add_default_fabric(c, err);
    return 0;
}

void settings_fini(struct settings *s)
{
    free(s->key_file_buf);
    memset(s, 0, sizeof(*s));
}
