/* tls.h - HTTPS for loomd: the server's certificate and key (read again on
 * reload), and the check of client certificates (tls_peer.c). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_TLS_H
#define LOOM_CORE_TLS_H

#include <stddef.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "core/error.h"

/* tls_client_cert: whether a client certificate is asked for, and whether
 * every authenticated request must come with one. */
enum tls_client_mode {
    TLS_CLIENT_OFF,      /* no tls_client_ca_dir: none is asked for */
    TLS_CLIENT_OPTIONAL, /* asked for; a token does without */
    TLS_CLIENT_REQUIRE,  /* asked for; needed besides any token */
};

/* The TLS keys of [loomd], borrowed from the configuration. */
struct tls_settings {
    const char *listen;        /* listen_tls: host:port, or NULL (no HTTPS) */
    const char *cert_file;     /* PEM: the certificate, then its chain */
    const char *key_file;      /* PEM: its private key */
    const char *client_ca_dir; /* hashed CA directory, or NULL */
    const char *crl_dir;       /* hashed CRL directory, or NULL: the CA's */
    enum tls_client_mode client_cert;
    int proxy_certs;           /* RFC 3820 proxy certificates are taken */
    const char *priorities;    /* GnuTLS priority string */
};

/* loomd's default priorities: TLS 1.3 and 1.2 only, AEAD ciphers, ECDHE
 * key exchange (forward secrecy), no SHA-1 signatures. */
#define TLS_PRIORITIES_DEFAULT                                              \
    "SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:"            \
    "+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM:-MAC-ALL:+AEAD:"          \
    "-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:"      \
    "-SIGN-DSA-SHA1:%SERVER_PRECEDENCE"

/* Read the [loomd] TLS keys of sec's file into s (the strings borrowed from
 * the configuration). Refuses, naming the key: TLS keys without
 * listen_tls, listen_tls without a certificate and key, tls_client_cert or
 * tls_crl_dir without tls_client_ca_dir, an unknown tls_client_cert, a
 * priority string GnuTLS does not take. */
struct conf_section;
int tls_settings_read(struct conf_section *sec, struct tls_settings *s,
                      struct loom_error *err);

/* The credentials and client-certificate rules read from s's files: the
 * certificate and key (must match; the key file may not be readable by
 * others), the CA and CRL directories (must be directories). Returns a
 * new object, or NULL with err naming the file and why. Any thread. */
struct tls_conf;
struct tls_conf *tls_conf_load(const struct tls_settings *s,
                               struct loom_error *err);
void tls_conf_unref(struct tls_conf *c); /* NULL-safe */

/* Make c the credentials of every later connection (takes it); the
 * connections open now keep theirs until they close. Any thread. */
void tls_install(struct tls_conf *c_take);
/* Whether credentials are installed (HTTPS is served). */
int tls_active(void);
/* Drop the installed credentials (at shutdown, after the server stopped). */
void tls_shutdown(void);
/* The server certificate in use, for logs and the runtime status: its
 * subject, serial (hex) and end of validity. Borrowed until the next
 * tls_install; "" when none. */
void tls_describe(char *buf, size_t size);

/* For the HTTPS server (http.c) ---------------------------------------- */

/* The priority string of the installed credentials. Borrowed. */
const char *tls_priorities(void);
/* libmicrohttpd's MHD_OPTION_HTTPS_CERT_CALLBACK: GnuTLS asks it in each
 * handshake for the certificate and key, which are the ones the
 * connection was pinned to. */
gnutls_certificate_retrieve_function2 tls_retrieve;
/* A new HTTPS connection, before its handshake: pin the installed
 * credentials to its session and ask for a client certificate when
 * client certificates are configured. -1 when out of memory or none is
 * installed (the handshake then fails). tls_conn_close at its end
 * (NULL-safe). */
int tls_conn_open(gnutls_session_t session);
void tls_conn_close(gnutls_session_t session);

/* What a connection's client certificate proved. */
#define TLS_DN_MAX 512
struct tls_peer {
    int checked;       /* filled by tls_peer_check */
    unsigned gen;      /* of the CA store it was checked against */
    time_t until;      /* checked again after this */
    unsigned char leaf[32]; /* SHA-256 of the certificate checked */
    int presented;     /* the client sent a certificate */
    int ok;            /* ... and its chain verified */
    enum tls_client_mode mode; /* of the connection's credentials */
    char dn[TLS_DN_MAX];       /* ok: the identity, the end entity's
                                  subject as /DC=org/DC=example/CN=Bob */
    char why[480];     /* presented and not ok: why it was refused */
};

/* Check the client certificate of session (a gnutls_session_t) against
 * the CA and CRL directories of its credentials, unless p already holds
 * the verdict on the same certificate from the same store within the
 * last minute. Fills p. Any thread (one per connection at a time). */
void tls_peer_check(gnutls_session_t session, struct tls_peer *p);

/* The check itself, on a chain as sent (DER, leaf first): for tls_peer.c
 * and the fuzz target. store is an X509_STORE (NULL: every chain is
 * refused). Fills p's presented, ok, dn and why. */
void tls_chain_check(void *store, int proxy_certs,
                     const gnutls_datum_t *chain, unsigned n,
                     struct tls_peer *p);

#endif
