/* core_tls.c - the TLS keys of [loomd]: what goes together, what is
 * refused and how it is named; a client chain that cannot verify. */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/conf.h"
#include "core/tls.h"
#include "tests/lib/tap.h"

/* Read the [loomd] TLS keys of text; 0, or -1 with err. */
static int read_keys(const char *text, struct tls_settings *s,
                     struct loom_error *err)
{
    struct conf *c = conf_parse("t.conf", text, err);
    int rc;

    if (!c)
        return -1;
    rc = tls_settings_read(conf_section(c, "loomd", NULL), s, err);
    conf_destroy(c);
    return rc;
}

static void t_good(void)
{
    struct tls_settings s;
    struct loom_error err;

    loom_error_clear(&err);
    ok(read_keys("[loomd]\n", &s, &err) == 0 && !s.listen,
       "no TLS key: no HTTPS (%s)", err.message);
    ok(read_keys("[loomd]\nlisten_tls = 0.0.0.0:8443\ntls_cert_file = c\n"
                 "tls_key_file = k\n", &s, &err) == 0 &&
           s.client_cert == TLS_CLIENT_OFF && s.proxy_certs &&
           !strcmp(s.priorities, TLS_PRIORITIES_DEFAULT),
       "listen_tls with a certificate and key: no client certificates, "
       "proxies taken, the default priorities");
    ok(read_keys("[loomd]\nlisten_tls = :8443\ntls_cert_file = c\n"
                 "tls_key_file = k\ntls_client_ca_dir = /d\n", &s, &err) ==
               0 && s.client_cert == TLS_CLIENT_OPTIONAL,
       "with a CA directory: client certificates optional");
    ok(read_keys("[loomd]\nlisten_tls = :8443\ntls_cert_file = c\n"
                 "tls_key_file = k\ntls_client_ca_dir = /d\n"
                 "tls_client_cert = require\ntls_proxy_certs = no\n"
                 "tls_priorities = NORMAL:-VERS-ALL:+VERS-TLS1.3\n", &s,
                 &err) == 0 && s.client_cert == TLS_CLIENT_REQUIRE &&
           !s.proxy_certs,
       "require, no proxies, priorities of one's own");
}

static void t_refused(void)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"[loomd]\ntls_cert_file = c\n",
         "t.conf:1: [loomd] listen_tls is needed by the other tls_ keys"},
        {"[loomd]\ntls_priorities = NORMAL\n",
         "listen_tls is needed by the other tls_ keys"},
        {"[loomd]\nlisten_tls = 127.0.0.1:1\ntls_key_file = k\n",
         "[loomd] tls_cert_file is needed with listen_tls"},
        {"[loomd]\nlisten_tls = 127.0.0.1:1\ntls_cert_file = c\n",
         "[loomd] tls_key_file is needed with listen_tls"},
        {"[loomd]\nlisten_tls = unix:/x\ntls_cert_file = c\n"
         "tls_key_file = k\n", "listen_tls must be host:port"},
        {"[loomd]\nlisten_tls = :1\ntls_cert_file = c\ntls_key_file = k\n"
         "tls_client_cert = require\n",
         "tls_client_cert needs tls_client_ca_dir"},
        {"[loomd]\nlisten_tls = :1\ntls_cert_file = c\ntls_key_file = k\n"
         "tls_crl_dir = /d\n", "tls_crl_dir needs tls_client_ca_dir"},
        {"[loomd]\nlisten_tls = :1\ntls_cert_file = c\ntls_key_file = k\n"
         "tls_client_ca_dir = /d\ntls_client_cert = sometimes\n",
         "tls_client_cert must be optional or require"},
        {"[loomd]\nlisten_tls = :1\ntls_cert_file = c\ntls_key_file = k\n"
         "tls_priorities = NORMAL:+NOSUCH\n",
         "tls_priorities: GnuTLS does not take it"},
        {"[loomd]\nlisten_tls = :1\ntls_cert_file = c\ntls_key_file = k\n"
         "tls_proxy_certs = maybe\n", "tls_proxy_certs"},
    };
    struct tls_settings s;
    struct loom_error err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        loom_error_clear(&err);
        ok(read_keys(bad[i].text, &s, &err) < 0 &&
               strstr(err.message, bad[i].msg),
           "refused: %s", bad[i].msg);
        if (!strstr(err.message, bad[i].msg))
            printf("#   got: %s\n", err.message);
    }
}

static void t_chain(void)
{
    static unsigned char junk[] = {0x30, 0x03, 0x02, 0x01, 0x01};
    gnutls_datum_t chain[11];
    struct tls_peer p;

    memset(&p, 0, sizeof(p));
    tls_chain_check(NULL, 1, NULL, 0, &p);
    ok(!p.presented && !p.ok && !p.why[0], "no certificate: none presented");
    for (int i = 0; i < 11; i++) {
        chain[i].data = junk;
        chain[i].size = sizeof(junk);
    }
    tls_chain_check(NULL, 1, chain, 1, &p);
    is_str(p.why, "client certificate: certificate 1 of the chain is not DER "
           "X.509", "a certificate that is not X.509: refused, saying so");
    ok(p.presented && !p.ok && !p.dn[0], "... presented, not taken");
    tls_chain_check(NULL, 1, chain, 11, &p);
    is_str(p.why, "client certificate: the chain has 11 certificates; at most "
           "10 are taken", "a chain of 11: refused before parsing");
}

int main(void)
{
    t_good();
    t_refused();
    t_chain();
    return done_testing();
}
