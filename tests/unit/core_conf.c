/* core_conf.c - the loom.conf parser: sections, keys, errors, getters. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/settings.h"
#include "core/token.h"
#include "tests/lib/tap.h"

static struct conf *parse(const char *text, struct loom_error *err)
{
    loom_error_clear(err);
    return conf_parse("t.conf", text, err);
}

static void t_good(void)
{
    struct loom_error err;
    struct conf *c = parse("# comment\n[loomd]\nlisten = 127.0.0.1:1 # x\n"
                           "\n[cluster a]\nadaptor = local\nnodes=4\n"
                           "env.X = y ; z\n", &err);
    struct conf_section *s;
    long n = 0;

    ok(c != NULL, "a good file parses (%s)", err.message);
    if (!c)
        return;
    is_int(c->n_sections, 2, "two sections");
    s = conf_section(c, "loomd", NULL);
    is_str(conf_get(s, "listen"), "127.0.0.1:1", "trailing comment stripped");
    s = conf_section(c, "cluster", "a");
    ok(s != NULL, "cluster a found by name");
    ok(conf_get_long(s, "nodes", 1, 1, 10, &n, &err) == 0 && n == 4,
       "integer key read");
    ok(conf_get_long(s, "cpus", 7, 1, 10, &n, &err) == 0 && n == 7,
       "absent key gives the default");
    ok(conf_check_unused(s, &err) < 0, "unread keys are errors");
    ok(strstr(err.message, "t.conf:6: unknown key 'adaptor' in [cluster a]")
           != NULL, "the error names file, line, key and section: %s",
       err.message);
    conf_get(s, "adaptor");
    is_str(conf_get(s, "env.X"), "y", "value with '; comment' cut");
    ok(conf_check_unused(s, &err) == 0, "all keys read: no error");
    conf_destroy(c);
}

static void t_bad(void)
{
    static const struct { const char *text, *want; } cases[] = {
        {"x = 1\n", "t.conf:1: key outside of any section"},
        {"[nonsense]\n", "t.conf:1: unknown section [nonsense]"},
        {"[loomd]\n[loomd]\n", "t.conf:2: duplicate section [loomd]"},
        {"[loomd]\na = 1\na = 2\n", "t.conf:3: duplicate key 'a'"},
        {"[cluster]\n", "t.conf:1: [cluster NAME] needs a name"},
        {"[cluster a b]\n", "t.conf:1: [cluster NAME] needs a name"},
        {"[loomd\n", "t.conf:1: bad section header"},
        {"[loomd]\njust words\n", "t.conf:2: expected 'key = value'"},
        {"[loomd]\n= 3\n", "t.conf:2: empty key"},
        {"[issuer]\n", "t.conf:1: [issuer NAME] needs a name"},
        {"[limits vo=atlas]\n", "t.conf:1: [limits vo=atlas]: give an "
                                 "account name"},
        {"[limits vo=/atlas/]\n", "vo=GROUP (a group such as /atlas)"},
        {"[limits gateway=]\n", "t.conf:1: [limits gateway=]"},
        {"[limits a/b]\n", "t.conf:1: [limits a/b]"},
    };
    struct loom_error err;

    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct conf *c = parse(cases[i].text, &err);
        ok(!c && strstr(err.message, cases[i].want), "refused: %s",
           err.message);
        conf_destroy(c);
    }
}

/* The sections of grid access: issuers, and limits by VO and gateway. */
static void t_grid_sections(void)
{
    struct loom_error err;
    struct conf *c = parse("[issuer atlas]\nurl = https://a.example\n"
                           "[limits vo=/atlas/prod]\n"
                           "[limits gateway=https://a.example,ce-1]\n"
                           "[limits alice]\n", &err);

    ok(c != NULL, "issuer and limits sections parse (%s)",
       c ? "" : err.message);
    if (!c)
        return;
    ok(conf_section(c, "issuer", "atlas") != NULL, "[issuer atlas]");
    ok(conf_section(c, "limits", "vo=/atlas/prod") != NULL,
       "[limits vo=/atlas/prod] is named vo=/atlas/prod");
    ok(conf_section(c, "limits", "gateway=https://a.example,ce-1") != NULL,
       "[limits gateway=...] keeps the identity whole");
    conf_destroy(c);
}

static void t_typed(void)
{
    struct loom_error err;
    struct conf *c = parse("[loomd]\nn = 12x\nd = 0.5\nb = maybe\nm = 99\n"
                           "e =\n", &err);
    struct conf_section *s = conf_section(c, "loomd", NULL);
    const char *str;
    double d = 0;
    long n;
    int b;

    ok(conf_get_long(s, "n", 0, 0, 100, &n, &err) < 0 &&
       strstr(err.message, "t.conf:2: key 'n': expected an integer"),
       "not an integer: %s", err.message);
    ok(conf_get_long(s, "m", 0, 0, 10, &n, &err) < 0, "out of range");
    ok(conf_get_double(s, "d", 0, 0, 1, &d, &err) == 0 && d == 0.5,
       "a double");
    ok(conf_get_bool(s, "b", 0, &b, &err) < 0, "not a boolean");
    ok(conf_get_str(s, "e", "x", &str, &err) < 0, "an empty value is refused");
    conf_destroy(c);
}

/* listen_peer_root_role: none by default, one role that is not a user's. */
static void t_peer_root(void)
{
    static const char *bad[] = {"user", "gateway", "root", "operator,admin"};
    struct loom_error err;
    struct settings set;
    struct conf *c = parse("[loomd]\ndatabase = x\n", &err);
    char text[128], want[256];

    ok(settings_read(c, &set, &err) == 0 && set.listen_peer_root_roles == 0,
       "listen_peer_root_role is none by default: root is refused");
    settings_fini(&set);
    conf_destroy(c);
    c = parse("[loomd]\ndatabase = x\nlisten_peer_root_role = operator\n",
              &err);
    ok(settings_read(c, &set, &err) == 0 &&
           set.listen_peer_root_roles == LOOM_ROLE_OPERATOR,
       "listen_peer_root_role = operator (%s)", err.message);
    settings_fini(&set);
    conf_destroy(c);
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        snprintf(text, sizeof(text), "[loomd]\ndatabase = x\n"
                 "listen_peer_root_role = %s\n", bad[i]);
        snprintf(want, sizeof(want), "t.conf: listen_peer_root_role must be "
                 "none, admin, operator, scheduler, monitor or reader (got "
                 "'%s')", bad[i]);
        c = parse(text, &err);
        ok(settings_read(c, &set, &err) < 0, "listen_peer_root_role = %s "
           "stops start-up", bad[i]);
        is_str(err.message, want, "... naming the values");
        settings_fini(&set);
        conf_destroy(c);
    }
}

static void t_settings(void)
{
    struct loom_error err;
    struct settings set;
    struct conf *c = parse("[loomd]\ndatabase = dbname=x\n", &err);

    ok(settings_read(c, &set, &err) == 0, "minimal [loomd] (%s)", err.message);
    is_str(set.listen, "127.0.0.1:8470", "default listen");
    is_int(set.max_body_bytes, 1 << 20, "default body limit 1 MiB");
    is_str(set.user, LOOM_SERVICE_USER, "default user: the service account "
           "(" LOOM_SERVICE_USER ")");
    is_int(set.directives, DIRECTIVES_STRICT, "directives strict by default");
    ok(conf_section(c, "cluster", "local") && conf_section(c, "cluster",
                                                           "sim1000"),
       "no cluster: the embedded default fabric is added");
    settings_fini(&set);
    conf_destroy(c);
    c = parse("[loomd]\ndatabase = x\nlisten_on = y\n", &err);
    ok(settings_read(c, &set, &err) < 0 &&
       strstr(err.message, "t.conf:3: unknown key 'listen_on' in [loomd]"),
       "a typo in [loomd] stops start-up: %s", err.message);
    settings_fini(&set);
    conf_destroy(c);
    c = parse("[loomd]\nlisten = x\n", &err);
    ok(settings_read(c, &set, &err) < 0 && strstr(err.message, "database"),
       "database is required");
    settings_fini(&set);
    conf_destroy(c);
    c = parse("[loomd]\ndatabase = x\ndirectives = warn\n", &err);
    ok(settings_read(c, &set, &err) == 0 && set.directives == DIRECTIVES_WARN,
       "directives = warn");
    settings_fini(&set);
    conf_destroy(c);
    c = parse("[loomd]\ndatabase = x\ndirectives = lax\n", &err);
    ok(settings_read(c, &set, &err) < 0, "directives = lax stops start-up");
    is_str(err.message, "t.conf: directives must be strict or warn (got "
           "'lax')", "... naming the values");
    settings_fini(&set);
    conf_destroy(c);
    t_peer_root();
}

/* loomd's own file: mode 0600 is read, anything open to group or others
 * is refused; loomctl's conf_load reads both. */
static void t_private(void)
{
    char path[] = "/tmp/loom-conf-XXXXXX";
    struct loom_error err;
    struct conf *c;
    char want[256];
    int fd = mkstemp(path);

    ok(fd >= 0 && write(fd, "[loomd]\n", 8) == 8, "a temporary conf");
    if (fd < 0)
        return;
    close(fd);
    chmod(path, 0600);
    c = conf_load_private(path, &err);
    ok(c != NULL, "mode 0600 is loaded%s%s", c ? "" : ": ",
       c ? "" : err.message);
    conf_destroy(c);
    chmod(path, 0640);
    c = conf_load_private(path, &err);
    snprintf(want, sizeof(want), "%s may be read or written by group or "
             "others (mode 0640), and it holds the database connection; "
             "chmod 600 it", path);
    ok(c == NULL, "mode 0640 is refused");
    is_str(c ? "" : err.message, want, "... saying why and what to do");
    conf_destroy(c);
    chmod(path, 0602);
    c = conf_load_private(path, &err);
    ok(c == NULL, "mode 0602 (others may write) is refused");
    conf_destroy(c);
    c = conf_load(path, &err);
    ok(c != NULL, "conf_load (loomctl's) does not check the mode");
    conf_destroy(c);
    unlink(path);
}

int main(void)
{
    t_good();
    t_bad();
    t_grid_sections();
    t_typed();
    t_settings();
    t_private();
    return done_testing();
}
