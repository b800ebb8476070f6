/* settings.h - the [loomd] section, and the embedded default fabric. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_SETTINGS_H
#define LOOM_CORE_SETTINGS_H

#include <stddef.h>

#include "core/accounts.h"
#include "core/conf.h"
#include "core/directives.h"
#include "core/tls.h"

struct settings {
    const char *listen;         /* borrowed from the conf */
    const char *listen_peer;    /* unix:PATH whose connections are their
                                   peer's uid (SO_PEERCRED), or NULL */
    long listen_peer_mode;      /* that socket's mode (who may connect) */
    unsigned listen_peer_root_roles; /* the role uid 0 has there (a
                                   LOOM_ROLE_ bit), 0: root is refused */
    struct tls_settings tls;    /* listen_tls and the tls_ keys */
    const char *database;
    const char *token_key_file; /* owned copy (may be derived) */
    const char *state_dir;
    long max_body_bytes;
    int scheduler_enabled;
    const char *log_level;
    int log_format;             /* enum log_format */
    const char *user; /* the account loomd runs as */
    const char *accounts_file;  /* or NULL */
    struct accounts_policy policy;
    long max_connections;       /* at once, from all addresses */
    long max_connections_per_address;
    long request_timeout_s;     /* for a request's headers and body */
    enum directives_mode directives; /* of scripts: strict or warn */
    long metrics_accounts;      /* accounts with series of their own in
                                   loom_jobs (the others: "other") */
    double lease_s;             /* the active loomd's lease (core/leader.h) */
    const char *advertise_url;  /* where clients reach this loomd, or NULL */
    char *key_file_buf;
};

/* Read [loomd] (unknown keys are errors naming file, line and key). When
 * the file declares no cluster, the embedded default fabric is added: a
 * local cluster of 4 nodes and sim clusters of 64 and 1,000 nodes. */
int settings_read(struct conf *c, struct settings *s, struct loom_error *err);
void settings_fini(struct settings *s);

#endif
