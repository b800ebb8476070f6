/* tls.c - HTTPS for loomd: the TLS keys of [loomd], the server's
 * certificate and key, handed to GnuTLS per handshake so that a reload
 * can replace them without closing the listener. */
/* SPDX-License-Identifier: MIT */
#include "core/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>

#include "core/conf.h"
#include "core/hmap.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "core/tls_priv.h"

#define PEM_MAX (1 << 20)  /* bytes of a certificate or key file */
#define CHAIN_MAX 10       /* certificates in the server's chain */

static struct {
    pthread_mutex_t lock;
    struct tls_conf *cur;
    struct hmap pins; /* "%p" of a GnuTLS session -> its tls_conf */
    int pins_ready;
} T = {PTHREAD_MUTEX_INITIALIZER, NULL, {0}, 0};

/* The keys ------------------------------------------------------------- */

static int key_error(struct conf_section *sec, const char *key,
                     struct loom_error *err, const char *why)
{
    return loom_error_set(err, LOOM_EINVAL, "%s:%d: [loomd] %s %s",
                          sec->file, sec->line, key, why);
}

int tls_settings_read(struct conf_section *sec, struct tls_settings *s,
                      struct loom_error *err)
{
    const char *mode = NULL;
    gnutls_priority_t prio;
    const char *at = NULL;
    int rc;

    memset(s, 0, sizeof(*s));
    if (conf_get_str(sec, "listen_tls", NULL, &s->listen, err) < 0 ||
        conf_get_str(sec, "tls_cert_file", NULL, &s->cert_file, err) < 0 ||
        conf_get_str(sec, "tls_key_file", NULL, &s->key_file, err) < 0 ||
        conf_get_str(sec, "tls_client_ca_dir", NULL, &s->client_ca_dir,
                     err) < 0 ||
        conf_get_str(sec, "tls_crl_dir", NULL, &s->crl_dir, err) < 0 ||
        conf_get_str(sec, "tls_client_cert", NULL, &mode, err) < 0 ||
        conf_get_bool(sec, "tls_proxy_certs", 1, &s->proxy_certs, err) < 0 ||
        conf_get_str(sec, "tls_priorities", TLS_PRIORITIES_DEFAULT,
                     &s->priorities, err) < 0)
        return -1;
    if (!s->listen) {
        if (s->cert_file || s->key_file || s->client_ca_dir || s->crl_dir ||
            mode || conf_get(sec, "tls_priorities"))
            return key_error(sec, "listen_tls", err, "is needed by the "
                             "other tls_ keys: without it loomd serves no "
                             "HTTPS");
        return 0;
    }
    if (strncmp(s->listen, "unix:", 5) == 0)
        return key_error(sec, "listen_tls", err, "must be host:port (a Unix "
                         "socket is served by 'listen', without TLS)");
    if (!s->cert_file || !s->key_file)
        return key_error(sec, s->cert_file ? "tls_key_file"
                                           : "tls_cert_file", err,
                         "is needed with listen_tls");
    if (!s->client_ca_dir && (mode || s->crl_dir))
        return key_error(sec, mode ? "tls_client_cert" : "tls_crl_dir", err,
                         "needs tls_client_ca_dir (the CAs that client "
                         "certificates are checked against)");
    s->client_cert = !s->client_ca_dir ? TLS_CLIENT_OFF
                     : !mode || !strcmp(mode, "optional")
                         ? TLS_CLIENT_OPTIONAL
                         : !strcmp(mode, "require") ? TLS_CLIENT_REQUIRE
                                                     : (enum tls_client_mode)-1;
    if ((int)s->client_cert < 0)
        return key_error(sec, "tls_client_cert", err, "must be optional or "
                         "require");
    rc = gnutls_priority_init(&prio, s->priorities, &at);
    if (rc < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [loomd] "
                              "tls_priorities: GnuTLS does not take it (%s, "
                              "at '%.40s')", sec->file, sec->line,
                              gnutls_strerror(rc), at ? at : "");
    gnutls_priority_deinit(prio);
    return 0;
}

/* Files ---------------------------------------------------------------- */

/* The whole of path (at most PEM_MAX bytes) in a new buffer. secret: the
 * file must be a regular file others may not read. */
static int read_pem(const char *what, const char *path, int secret,
                    gnutls_datum_t *out, struct loom_error *err)
{
    struct stat st;
    ssize_t n;
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    out->data = NULL;
    out->size = 0;
    if (fd < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s %s: %s", what, path,
                              strerror(errno));
    if (fstat(fd, &st) < 0) {
        loom_error_set(err, LOOM_EINVAL, "%s %s: %s", what, path,
                       strerror(errno));
        goto error;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > PEM_MAX) {
        loom_error_set(err, LOOM_EINVAL, "%s %s: %s", what, path,
                       !S_ISREG(st.st_mode) ? "not a regular file"
                                            : "larger than 1 MiB");
        goto error;
    }
    if (secret && (st.st_mode & 007)) {
        loom_error_set(err, LOOM_EINVAL, "%s %s may be read by others (mode "
                       "%04o); chmod o-rwx it", what, path,
                       (unsigned)(st.st_mode & 07777));
        goto error;
    }
    if (!(out->data = malloc((size_t)st.st_size + 1))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    while (got < (size_t)st.st_size &&
           ((n = read(fd, out->data + got, (size_t)st.st_size - got)) > 0 ||
            (n < 0 && errno == EINTR)))
        got += n > 0 ? (size_t)n : 0;
    if (got != (size_t)st.st_size) {
        loom_error_set(err, LOOM_EINVAL, "%s %s: cannot read it whole",
                       what, path);
        goto error;
    }
    out->data[got] = '\0';
    out->size = (unsigned)got;
    close(fd);
    return 0;
error:
    free(out->data);
    out->data = NULL;
    close(fd);
    return -1;
}

static void wipe_free(gnutls_datum_t *d)
{
    if (d->data)
        OPENSSL_cleanse(d->data, d->size);
    free(d->data);
    d->data = NULL;
}

/* Credentials ------------------------------------------------------------ */

void tls_conf_unref(struct tls_conf *c)
{
    int last;

    if (!c)
        return;
    pthread_mutex_lock(&T.lock);
    last = --c->refs == 0;
    pthread_mutex_unlock(&T.lock);
    if (!last)
        return;
    for (unsigned i = 0; i < c->n_pcert; i++)
        gnutls_pcert_deinit(&c->pcert[i]);
    free(c->pcert);
    if (c->key)
        gnutls_privkey_deinit(c->key);
    tls_store_free(c);
    free(c->ca_dir);
    free(c->crl_dir);
    free(c->priorities);
    pthread_mutex_destroy(&c->store_lock);
    free(c);
}

/* "subject, serial S, valid until T" of the first certificate. */
static void describe(struct tls_conf *c)
{
    const unsigned char *d = c->pcert[0].cert.data;
    X509 *x = d2i_X509(NULL, &d, c->pcert[0].cert.size);
    char subject[256] = "?", until[32] = "?", *serial = NULL;
    BIGNUM *bn;
    int days = 0, secs = 0;

    if (x) {
        X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof(subject));
        bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
        serial = bn ? BN_bn2hex(bn) : NULL;
        BN_free(bn);
        c->not_after = time(NULL);
        if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(x)))
            c->not_after += (time_t)days * 86400 + secs;
        time_format(c->not_after, until);
    }
    snprintf(c->desc, sizeof(c->desc), "%s, serial %s, valid until %s",
             subject, serial ? serial : "?", until);
    OPENSSL_free(serial);
    X509_free(x);
}

/* The certificate (and chain) and key of s into c; they must match. */
static int load_pair(struct tls_conf *c, const struct tls_settings *s,
                     struct loom_error *err)
{
    gnutls_certificate_credentials_t check = NULL;
    gnutls_datum_t cert = {0}, key = {0};
    unsigned n = CHAIN_MAX;
    int rc = -1, g;

    if (read_pem("tls_cert_file", s->cert_file, 0, &cert, err) < 0 ||
        read_pem("tls_key_file", s->key_file, 1, &key, err) < 0)
        goto out;
    /* GnuTLS checks here that the key is the certificate's */
    if ((g = gnutls_certificate_allocate_credentials(&check)) < 0 ||
        (g = gnutls_certificate_set_x509_key_mem2(check, &cert, &key,
                                                  GNUTLS_X509_FMT_PEM, NULL,
                                                  0)) < 0) {
        loom_error_set(err, LOOM_EINVAL, "tls_cert_file %s with tls_key_file "
                       "%s: %s", s->cert_file, s->key_file,
                       gnutls_strerror(g));
        goto out;
    }
    if (!(c->pcert = calloc(CHAIN_MAX, sizeof(*c->pcert))) ||
        (g = gnutls_pcert_list_import_x509_raw(c->pcert, &n, &cert,
                                               GNUTLS_X509_FMT_PEM, 0)) < 0 ||
        (c->n_pcert = n) == 0 || (g = gnutls_privkey_init(&c->key)) < 0 ||
        (g = gnutls_privkey_import_x509_raw(c->key, &key, GNUTLS_X509_FMT_PEM,
                                            NULL, 0)) < 0) {
        loom_error_set(err, LOOM_EINVAL, "tls_cert_file %s: %s (at most %d "
                       "certificates)", s->cert_file,
                       c->pcert ? gnutls_strerror(g) : "out of memory",
                       CHAIN_MAX);
        goto out;
    }
    describe(c);
    rc = 0;
out:
    if (check)
        gnutls_certificate_free_credentials(check);
    free(cert.data);
    wipe_free(&key);
    return rc;
}

struct tls_conf *tls_conf_load(const struct tls_settings *s,
                               struct loom_error *err)
{
    struct tls_conf *c = calloc(1, sizeof(*c));

    if (!c) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    c->refs = 1;
    pthread_mutex_init(&c->store_lock, NULL);
    c->mode = s->client_cert;
    c->proxy_certs = s->proxy_certs;
    if (!(c->priorities = strdup(s->priorities)) ||
        (s->client_ca_dir && !(c->ca_dir = strdup(s->client_ca_dir))) ||
        (s->crl_dir && !(c->crl_dir = strdup(s->crl_dir)))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (load_pair(c, s, err) < 0)
        goto error;
    if (c->mode != TLS_CLIENT_OFF && tls_store_build(c, err) < 0)
        goto error;
    return c;
error:
    tls_conf_unref(c);
    return NULL;
}

void tls_install(struct tls_conf *c)
{
    struct tls_conf *old;
    long days;

    pthread_mutex_lock(&T.lock);
    if (!T.pins_ready) {
        hmap_init(&T.pins);
        T.pins_ready = 1;
    }
    old = T.cur;
    T.cur = c;
    pthread_mutex_unlock(&T.lock);
    tls_conf_unref(old);
    if (!c)
        return;
    days = (long)((c->not_after - time(NULL)) / 86400);
    if (c->not_after <= time(NULL))
        log_err("the server certificate has expired: %s", c->desc);
    else if (days < 14)
        log_warn("the server certificate expires in %ld day(s): %s", days,
                 c->desc);
    log_info("TLS: serving certificate %s; client certificates %s", c->desc,
             c->mode == TLS_CLIENT_OFF ? "not asked for"
             : c->mode == TLS_CLIENT_OPTIONAL ? "optional" : "required");
}

int tls_active(void)
{
    int on;

    pthread_mutex_lock(&T.lock);
    on = T.cur != NULL;
    pthread_mutex_unlock(&T.lock);
    return on;
}

void tls_shutdown(void)
{
    tls_install(NULL);
    pthread_mutex_lock(&T.lock);
    if (T.pins_ready)
        hmap_fini(&T.pins);
    T.pins_ready = 0;
    pthread_mutex_unlock(&T.lock);
}

void tls_describe(char *buf, size_t size)
{
    pthread_mutex_lock(&T.lock);
    snprintf(buf, size, "%s", T.cur ? T.cur->desc : "");
    pthread_mutex_unlock(&T.lock);
}

const char *tls_priorities(void)
{
    const char *p;

    pthread_mutex_lock(&T.lock);
    p = T.cur ? T.cur->priorities : TLS_PRIORITIES_DEFAULT;
    pthread_mutex_unlock(&T.lock);
    return p;
}

/* Connections ---------------------------------------------------------- */

static void pin_key(const void *session, char key[32])
{
    snprintf(key, 32, "%p", session);
}

struct tls_conf *tls_pinned_ref(gnutls_session_t session)
{
    struct tls_conf *c;
    char key[32];

    pin_key(session, key);
    pthread_mutex_lock(&T.lock);
    c = T.pins_ready ? hmap_get(&T.pins, key) : NULL;
    if (c)
        c->refs++;
    pthread_mutex_unlock(&T.lock);
    return c;
}

int tls_conn_open(gnutls_session_t session)
{
    struct tls_conf *c;
    char key[32];
    int rc = -1;

    pin_key(session, key);
    pthread_mutex_lock(&T.lock);
    c = T.cur;
    if (c && T.pins_ready && hmap_put(&T.pins, key, c) == 0) {
        c->refs++;
        rc = 0;
    }
    pthread_mutex_unlock(&T.lock);
    /* ask for a certificate, never demand one: a missing or bad one is
     * answered in HTTP, saying why, not with a TLS alert */
    if (rc == 0 && c->mode != TLS_CLIENT_OFF)
        gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
    return rc;
}

void tls_conn_close(gnutls_session_t session)
{
    struct tls_conf *c;
    char key[32];

    if (!session)
        return;
    pin_key(session, key);
    pthread_mutex_lock(&T.lock);
    c = T.pins_ready ? hmap_del(&T.pins, key) : NULL;
    pthread_mutex_unlock(&T.lock);
    tls_conf_unref(c);
}

/* GnuTLS asks, in the handshake, for the certificate to send: the one the
 * connection was pinned to (its credentials outlive the connection). */
int tls_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
                 int nreqs, const gnutls_pk_algorithm_t *pk_algos,
                 int pk_algos_length, gnutls_pcert_st **pcert,
                 unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
    struct tls_conf *c = tls_pinned_ref(session);

    (void)req_ca_dn;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    if (!c)
        return -1;
    *pcert = c->pcert;
    *pcert_length = c->n_pcert;
    *pkey = c->key;
    tls_conf_unref(c); /* the pin holds it until the connection closes */
    return 0;
}
