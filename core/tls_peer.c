/* tls_peer.c - client certificates: the chain a client sent (as GnuTLS
 * received it) checked with OpenSSL against a hashed CA directory and the
 * CRLs of every certificate in it; the identity is the end entity's DN. */
/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <gnutls/gnutls.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core/log.h"
#include "core/tls_priv.h"

#define PEER_CHAIN_MAX 10 /* certificates a client may send */
#define VERDICT_S 60      /* a connection's verdict is kept this long */

static atomic_uint store_gen_; /* changes with every store built */

/* How many files of dir look like c_rehash's: HASH.N (crl: HASH.rN). */
static int hashed_files(const char *dir, int crl)
{
    struct dirent *e;
    DIR *d = opendir(dir);
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        size_t i = 0;
        while (i < 8 && s[i] && strchr("0123456789abcdef", s[i]))
            i++;
        if (i != 8 || s[8] != '.')
            continue;
        s += 9;
        if (crl && *s++ != 'r')
            continue;
        if (*s && strspn(s, "0123456789") == strlen(s))
            n++;
    }
    closedir(d);
    return n;
}

static int check_dir(const char *key, const char *dir, int crl,
                     struct loom_error *err)
{
    int n = hashed_files(dir, crl);

    if (n < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s %s: %s", key, dir,
                              strerror(errno));
    if (n == 0)
        return loom_error_set(err, LOOM_EINVAL, "%s %s holds no %s (files "
                              "named HASH.%s): run 'openssl rehash %s'%s",
                              key, dir, crl ? "CRL" : "CA certificate",
                              crl ? "rN" : "N", dir,
                              crl ? "; without a CRL for every CA, every "
                                    "client certificate is refused" : "");
    return 0;
}

int tls_store_build(struct tls_conf *c, struct loom_error *err)
{
    const char *crl_dir = c->crl_dir ? c->crl_dir : c->ca_dir;
    X509_STORE *st;
    X509_LOOKUP *lk;

    if (check_dir("tls_client_ca_dir", c->ca_dir, 0, err) < 0 ||
        check_dir(c->crl_dir ? "tls_crl_dir" : "tls_client_ca_dir", crl_dir,
                  1, err) < 0)
        return -1;
    if (!(st = X509_STORE_new()) ||
        !(lk = X509_STORE_add_lookup(st, X509_LOOKUP_hash_dir())) ||
        !X509_LOOKUP_add_dir(lk, c->ca_dir, X509_FILETYPE_PEM) ||
        (c->crl_dir && !X509_LOOKUP_add_dir(lk, c->crl_dir,
                                            X509_FILETYPE_PEM))) {
        X509_STORE_free(st);
        return loom_error_set(err, LOOM_EINTERNAL, "cannot make an OpenSSL "
                              "certificate store of %s", c->ca_dir);
    }
    /* every certificate of the chain against its issuer's CRL */
    X509_STORE_set_flags(st, X509_V_FLAG_CRL_CHECK |
                                 X509_V_FLAG_CRL_CHECK_ALL);
    X509_STORE_set_purpose(st, X509_PURPOSE_SSL_CLIENT);
    X509_STORE_set_depth(st, PEER_CHAIN_MAX);
    pthread_mutex_lock(&c->store_lock);
    X509_STORE_free(c->store);
    c->store = st;
    c->store_at = time(NULL);
    c->store_gen = atomic_fetch_add(&store_gen_, 1) + 1;
    pthread_mutex_unlock(&c->store_lock);
    return 0;
}

void tls_store_free(struct tls_conf *c)
{
    X509_STORE_free(c->store);
    c->store = NULL;
}

/* A reference to c's store, built again when it is older than
 * TLS_STORE_TTL_S (a failure keeps the old one, and says so). */
static X509_STORE *store_ref(struct tls_conf *c, unsigned *gen)
{
    struct loom_error err;
    X509_STORE *st;
    int stale;

    pthread_mutex_lock(&c->store_lock);
    stale = time(NULL) - c->store_at >= TLS_STORE_TTL_S;
    if (stale)
        c->store_at = time(NULL); /* this thread builds it */
    pthread_mutex_unlock(&c->store_lock);
    if (stale && tls_store_build(c, &err) < 0)
        log_err("client certificates: keeping the CAs and CRLs read before: "
                "%s", err.message);
    pthread_mutex_lock(&c->store_lock);
    st = c->store;
    if (st)
        X509_STORE_up_ref(st);
    *gen = c->store_gen;
    pthread_mutex_unlock(&c->store_lock);
    return st;
}

/* The name as /DC=org/DC=example/CN=Bob into buf; -1 when it does not
 * fit (it is then cut). */
static int oneline(X509 *x, char *buf, size_t size)
{
    char *s = x ? X509_NAME_oneline(X509_get_subject_name(x), NULL, 0) : NULL;
    int fits = s && strlen(s) < size;

    snprintf(buf, size, "%s", s ? s : "(no name)");
    OPENSSL_free(s);
    return fits ? 0 : -1;
}

/* Why verification failed, in a sentence about the certificate at fault. */
static void refusal(X509_STORE_CTX *ctx, X509 *leaf, struct tls_peer *p)
{
    int e = X509_STORE_CTX_get_error(ctx);
    X509 *at = X509_STORE_CTX_get_current_cert(ctx);
    char who[256], bad[256];
    const char *hint = "";

    oneline(leaf, who, sizeof(who));
    oneline(at ? at : leaf, bad, sizeof(bad));
    if (e == X509_V_ERR_UNABLE_TO_GET_CRL)
        hint = " (no CRL of its issuer in the CRL directory)";
    else if (e == X509_V_ERR_CRL_HAS_EXPIRED)
        hint = " (its issuer's CRL is past its next update: fetch a new one)";
    else if (e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
             e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT)
        hint = " (its CA is not in tls_client_ca_dir)";
    if (!at || X509_cmp(at, leaf) == 0)
        snprintf(p->why, sizeof(p->why), "client certificate %.200s: %.100s"
                 "%s", who, X509_verify_cert_error_string(e), hint);
    else
        snprintf(p->why, sizeof(p->why), "client certificate %.160s: "
                 "%.120s: %.100s%s", who, bad,
                 X509_verify_cert_error_string(e), hint);
}

/* The identity of a verified chain: the first certificate from the leaf
 * that is not an RFC 3820 proxy certificate (the end entity). */
static void identity(X509_STORE_CTX *ctx, struct tls_peer *p)
{
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(ctx);
    X509 *eec = NULL;

    for (int i = 0; chain && i < sk_X509_num(chain); i++) {
        X509 *x = sk_X509_value(chain, i);
        if (!(X509_get_extension_flags(x) & EXFLAG_PROXY)) {
            eec = x;
            break;
        }
    }
    if (!eec) {
        snprintf(p->why, sizeof(p->why), "client certificate: the chain "
                 "has no end-entity certificate");
        return;
    }
    if (oneline(eec, p->dn, sizeof(p->dn)) < 0) {
        snprintf(p->why, sizeof(p->why), "client certificate %.200s...: its "
                 "DN is longer than %d characters", p->dn, TLS_DN_MAX - 1);
        p->dn[0] = '\0';
        return;
    }
    p->ok = 1;
}

void tls_chain_check(void *store, int proxy_certs,
                     const gnutls_datum_t *chain, unsigned n,
                     struct tls_peer *p)
{
    STACK_OF(X509) *rest = NULL;
    X509_STORE_CTX *ctx = NULL;
    X509 *leaf = NULL;

    p->presented = n > 0;
    p->ok = 0;
    p->dn[0] = p->why[0] = '\0';
    if (!n)
        return;
    if (n > PEER_CHAIN_MAX) {
        snprintf(p->why, sizeof(p->why), "client certificate: the chain has "
                 "%u certificates; at most %d are taken", n, PEER_CHAIN_MAX);
        return;
    }
    if (!(rest = sk_X509_new_null()))
        goto nomem;
    for (unsigned i = 0; i < n; i++) {
        const unsigned char *d = chain[i].data;
        X509 *x = d2i_X509(NULL, &d, (long)chain[i].size);
        if (!x || d != chain[i].data + chain[i].size) {
            X509_free(x);
            snprintf(p->why, sizeof(p->why), "client certificate: "
                     "certificate %u of the chain is not DER X.509", i + 1);
            goto out;
        }
        if (!leaf)
            leaf = x;
        else if (!sk_X509_push(rest, x)) {
            X509_free(x);
            goto nomem;
        }
    }
    if (!store || !(ctx = X509_STORE_CTX_new()) ||
        !X509_STORE_CTX_init(ctx, store, leaf, rest))
        goto nomem;
    if (proxy_certs)
        X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_ALLOW_PROXY_CERTS);
    if (X509_verify_cert(ctx) == 1)
        identity(ctx, p);
    else
        refusal(ctx, leaf, p);
    goto out;
nomem:
    snprintf(p->why, sizeof(p->why), "client certificate: cannot check it "
             "(out of memory)");
out:
    X509_STORE_CTX_free(ctx);
    X509_free(leaf);
    sk_X509_pop_free(rest, X509_free);
}

void tls_peer_check(gnutls_session_t session, struct tls_peer *p)
{
    const gnutls_datum_t *chain;
    unsigned n = 0, gen = 0;
    unsigned char leaf[SHA256_DIGEST_LENGTH] = {0};
    struct tls_conf *c = tls_pinned_ref(session);
    X509_STORE *st = NULL;
    time_t now = time(NULL);

    chain = gnutls_certificate_get_peers(session, &n);
    if (!chain)
        n = 0;
    if (n)
        SHA256(chain[0].data, chain[0].size, leaf);
    if (!c) {
        memset(p, 0, sizeof(*p));
        p->checked = 1;
        p->presented = n > 0;
        snprintf(p->why, sizeof(p->why), "client certificate: the "
                 "connection has no TLS credentials");
        return;
    }
    if (c->mode != TLS_CLIENT_OFF)
        st = store_ref(c, &gen);
    if (p->checked && p->gen == gen && now < p->until &&
        !memcmp(p->leaf, leaf, sizeof(leaf))) {
        X509_STORE_free(st);
        tls_conf_unref(c);
        return;
    }
    p->mode = c->mode;
    if (c->mode == TLS_CLIENT_OFF) {
        p->presented = p->ok = 0; /* none was asked for: none counts */
        p->dn[0] = p->why[0] = '\0';
    } else {
        tls_chain_check(st, c->proxy_certs, chain, n, p);
        if (p->presented && !p->ok)
            log_info("refused %s", p->why);
    }
    p->checked = 1;
    p->gen = gen;
    p->until = now + VERDICT_S;
    memcpy(p->leaf, leaf, sizeof(leaf));
    X509_STORE_free(st);
    tls_conf_unref(c);
}
