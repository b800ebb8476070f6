/* tls_priv.h - what tls.c and tls_peer.c share: the credentials object. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_TLS_PRIV_H
#define LOOM_CORE_TLS_PRIV_H

#include <pthread.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <openssl/x509_vfy.h>

#include "core/tls.h"

/* One reading of the TLS keys' files. Reference-counted (under tls.c's
 * lock): the installed one holds a reference, and so does every
 * connection that was opened while it was installed. */
struct tls_conf {
    int refs;
    gnutls_pcert_st *pcert;    /* the server's chain, leaf first */
    unsigned n_pcert;
    gnutls_privkey_t key;
    char desc[400];            /* subject, serial, end of validity */
    time_t not_after;
    char *priorities;
    enum tls_client_mode mode;
    int proxy_certs;
    char *ca_dir, *crl_dir;    /* crl_dir NULL: the CA directory's */
    pthread_mutex_t store_lock;
    X509_STORE *store;         /* built from the directories ... */
    time_t store_at;           /* ... then, built again after
                                  TLS_STORE_TTL_S, so that new CRLs count */
    unsigned store_gen;
};

#define TLS_STORE_TTL_S 300

/* A new reference to the credentials session was pinned to, or NULL. */
struct tls_conf *tls_pinned_ref(gnutls_session_t session);
/* Build c's X509_STORE from its directories (checked: they exist and hold
 * hashed certificates and CRLs). 0, or -1 with err. */
int tls_store_build(struct tls_conf *c, struct loom_error *err);
void tls_store_free(struct tls_conf *c);

#endif
