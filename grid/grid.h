/* grid.h - grid access, the door of grid/: tokens of outside issuers
 * (JSON Web Tokens, WLCG and SciTokens profiles), their scopes, the audit
 * of grid submits, cancels and denials. core/api, loomd and the runtime
 * thread use it; grid/ itself uses only core/. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_GRID_GRID_H
#define LOOM_GRID_GRID_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/conf.h"
#include "core/error.h"
#include "core/limits.h"

/* The compute scopes of the WLCG profile, one bit each. */
#define GRID_SCOPE_READ 0x1u   /* compute.read: read its jobs */
#define GRID_SCOPE_MODIFY 0x2u /* compute.modify: hold, release, suspend,
                                  resume them */
#define GRID_SCOPE_CREATE 0x4u /* compute.create: submit */
#define GRID_SCOPE_CANCEL 0x8u /* compute.cancel: cancel them */
#define GRID_SCOPE_ALL 0xfu

#define GRID_ISSUER_NAME_MAX 63 /* characters of [issuer NAME] */

/* A verified token of an outside issuer: immutable, shared by reference
 * (the verified-token cache holds one, each request another). */
struct grid_who {
    atomic_int refs;
    char issuer[GRID_ISSUER_NAME_MAX + 1]; /* [issuer NAME] it verified by */
    char iss[LOOM_GRID_ISSUER_MAX + 1];
    char sub[LOOM_GRID_SUBJECT_MAX + 1];
    char identity[LOOM_GRID_IDENTITY_MAX + 1]; /* "ISS,SUB" */
    size_t n_groups;
    const char **groups; /* the groups claim, in its order */
    unsigned scopes;     /* GRID_SCOPE_* it may use */
    int capabilities;    /* its scope claim holds capabilities (storage.*
                            or compute.*): its groups then grant nothing */
    time_t iat, exp;
};
struct grid_who *grid_who_ref(struct grid_who *w);
void grid_who_unref(struct grid_who *w); /* NULL-safe */

/* What a token that failed claimed to be (unverified, for the audit):
 * "" when it could not be read. */
struct grid_claimed {
    char iss[LOOM_GRID_ISSUER_MAX + 1];
    char sub[LOOM_GRID_SUBJECT_MAX + 1];
};

/* ---- issuers: configuration and keys ---------------------------------- */

/* The [issuer NAME] sections of cf, each with its keys from pem_file or
 * jwks_file read now (jwks_url: fetched in the background once
 * installed). Returns a new set (install it or free it with
 * grid_issuers_free), or NULL with err naming file, line and key. No
 * section: an empty set. Any thread. */
struct grid_issuers;
struct grid_issuers *grid_issuers_read(struct conf *cf,
                                       struct loom_error *err);
void grid_issuers_free(struct grid_issuers *set); /* NULL-safe */
/* Make set the one every later verification uses (takes it). Keys fetched
 * from a jwks_url stay with an issuer of the same name and url. Any
 * thread. */
void grid_issuers_install(struct grid_issuers *set_take);
/* Are any issuers configured? */
int grid_enabled(void);

/* Start the background threads (JWKS fetches, the audit writer with its
 * own connection to conninfo). -1 with err when a thread cannot start. At
 * start-up, after the first install. */
int grid_start(const char *conninfo, struct loom_error *err);
/* Stop them (the audit writes what it holds first, for a few seconds at
 * most) and free the issuers. */
void grid_stop(void);

/* ---- tokens ------------------------------------------------------------- */

/* Does token look like a JSON Web Token (three base64url parts)? 1 or 0.
 * Loom's own tokens ("loom1.") do not. */
int grid_token_is_jwt(const char *token);

/* Verify token at now: the issuer its iss names, the key its kid names,
 * the signature, then exp, nbf and iat (60 s of skew), aud against the
 * issuer's audiences, sub (1 to 255 characters), wlcg.ver (1.x) or a
 * SciTokens ver, the groups claim (groups as the profile writes them) and
 * the scopes. A token verified before and not yet expired comes from a
 * cache (by its SHA-256, bounded) as long as its issuer's keys did not
 * change. 0 with *out (a reference: grid_who_unref it), or -1 with a 401
 * naming why (claimed: what it claimed to be; may be NULL). An unknown
 * kid asks for a fetch of the issuer's jwks_url (in the background, at
 * most once a minute). Any thread; never blocks on the network. */
int grid_verify(const char *token, time_t now, struct grid_who **out,
                struct grid_claimed *claimed, struct loom_error *err);

/* May a Loom gateway token of subject submit for identities of the
 * issuer whose url is iss ([issuer] gateways)? 0, or -1 with a 403 naming
 * the issuer and the rule. issuer_name (size bytes) gets its name. */
int grid_gateway_may_assert(const char *subject, const char *iss,
                            char *issuer_name, size_t size,
                            struct loom_error *err);

/* ---- scopes --------------------------------------------------------------- */

/* The scope a request needs: GET: compute.read; POST /v1/jobs:
 * compute.create; DELETE /v1/jobs/ID: compute.cancel; POST
 * /v1/jobs/ID/{hold,release,suspend,resume}: compute.modify. 0 for what no
 * scope grants (a grid token may not do it). */
unsigned grid_scope_needed(const char *method, const char *first, int n,
                           const char *op);
/* "compute.read", ...: the name of one scope bit. */
const char *grid_scope_name(unsigned bit);
/* The compute scopes named in a space-separated list (others ignored) into
 * *bits; *capabilities: 1 when any capability (storage.* or compute.*) is
 * named. */
void grid_scopes_parse(const char *list, unsigned *bits, int *capabilities);

/* ---- audit ---------------------------------------------------------------- */

/* One grid event: a submit, a cancel, a denial (401, 403, 429). */
struct grid_audit {
    const char *kind;     /* "submit", "cancel" or "denied" */
    const char *identity; /* "ISS,SUB", a Loom subject, or NULL */
    const char *iss, *sub; /* of a grid token (claimed when unverified) */
    int verified;         /* the token was verified */
    const char *vo, *account, *gateway; /* or NULL */
    int64_t job;          /* or 0 */
    int status;           /* the HTTP status of a denial, else 0 */
    const char *reason;   /* a denial's message, or NULL */
    const char *method, *path; /* the request */
};
/* Log a and queue it for the events table (kind "grid.KIND", subject the
 * identity, the fields as the row's detail). Never blocks: when the
 * writer is behind by more than 10,000 rows, the row is dropped and
 * counted (the log line is still written). Any thread. */
void grid_audit(const struct grid_audit *a);

/* ---- status --------------------------------------------------------------- */

/* The grid part of GET /v1/runtime: a JSON object (a new string) with the
 * issuers (keys, last fetch, last error), the token cache and the audit
 * writer's counts; NULL when out of memory. */
char *grid_status_json(void);

#endif
