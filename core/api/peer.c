/* peer.c - authentication by peer credentials: on the listen_peer unix
 * socket, a request without a token is the Unix user that connected
 * (SO_PEERCRED), a user acting as the Loom identity of its account name
 * (core/http.c looks it up once per connection);
 * route.c maps it by the LOOM lines of the accounts file. Root is no user:
 * it has the role listen_peer_root_role gives it, or is refused. */
/* SPDX-License-Identifier: MIT */
#include "core/api/api.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* uid 0 is no account (no job runs as root): it acts with the role of
 * listen_peer_root_role, as the identity root, or not at all. Root on
 * loomd's host can read the token key and make itself any token; the
 * setting only spares it the token. */
static int root_auth(struct http_req *rq, time_t now, struct loom_error *err)
{
    if (!rq->peer_root_roles)
        return loom_error_set(err, LOOM_EPERM, "uid 0 (root) may not act "
                              "on the listen_peer socket: loom.conf's "
                              "listen_peer_root_role is none");
    memset(&rq->who, 0, sizeof(rq->who));
    snprintf(rq->who.subject, sizeof(rq->who.subject), "root");
    rq->who.roles = rq->peer_root_roles;
    rq->who.issued = rq->who.expires = now;
    rq->account[0] = rq->no_account[0] = '\0';
    return 1;
}

int api_peer_auth(struct http_req *rq, int has_token, struct loom_error *err)
{
    time_t now = time(NULL);

    if (!rq->peer || has_token)
        return 0;
    if (!rq->peer_known)
        return loom_error_set(err, LOOM_EAUTH, "the peer credentials of "
                              "this connection are unknown: send a bearer "
                              "token (Authorization: Bearer <token>)");
    if (rq->peer_uid == 0)
        return root_auth(rq, now, err);
    if (!rq->peer_name)
        return loom_error_set(err, LOOM_EPERM, "uid %lu has no account "
                              "name on this host (getpwuid): Loom cannot "
                              "tell who it is", (unsigned long)rq->peer_uid);
    if (strlen(rq->peer_name) > LOOM_IDENTITY_MAX)
        return loom_error_set(err, LOOM_EPERM, "account name of uid %lu is "
                              "longer than %d characters",
                              (unsigned long)rq->peer_uid, LOOM_IDENTITY_MAX);
    memset(&rq->who, 0, sizeof(rq->who));
    snprintf(rq->who.subject, sizeof(rq->who.subject), "%s", rq->peer_name);
    rq->who.roles = LOOM_ROLE_USER;
    rq->who.issued = rq->who.expires = now;
    rq->account[0] = rq->no_account[0] = '\0';
    return 1;
}
