/* cert.c - authentication by client certificate: on HTTPS, the verified
 * certificate's DN is the identity of a request without a token, a user
 * submitting for itself (as in a grid-mapfile); route.c maps it to its
 * account by the DN lines of the accounts file. */
/* SPDX-License-Identifier: MIT */
#include "core/api/api.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int api_cert_auth(struct http_req *rq, int has_token, struct loom_error *err)
{
    time_t now = time(NULL);

    if (!rq->tls)
        return 0;
    if (rq->cert_error)
        return loom_error_set(err, LOOM_EAUTH, "%s", rq->cert_error);
    if (rq->cert_required && !rq->cert_dn)
        return loom_error_set(err, LOOM_EAUTH, "a client certificate is "
                              "required (tls_client_cert = require), and "
                              "none was presented");
    if (has_token)
        return 0;
    if (!rq->cert_dn)
        return rq->cert_asked
                   ? loom_error_set(err, LOOM_EAUTH, "a bearer token "
                                    "(Authorization: Bearer <token>) or a "
                                    "client certificate is required")
                   : 0;
    if (strlen(rq->cert_dn) > LOOM_IDENTITY_MAX)
        return loom_error_set(err, LOOM_EPERM, "certificate DN '%.200s' is "
                              "longer than %d characters, the longest "
                              "identity Loom takes", rq->cert_dn,
                              LOOM_IDENTITY_MAX);
    memset(&rq->who, 0, sizeof(rq->who));
    snprintf(rq->who.subject, sizeof(rq->who.subject), "%s", rq->cert_dn);
    rq->who.roles = LOOM_ROLE_USER;
    rq->who.issued = rq->who.expires = now;
    rq->account[0] = rq->no_account[0] = '\0';
    return 1;
}
