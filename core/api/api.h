/* api.h - the REST API: routing, authentication, handlers. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_API_API_H
#define LOOM_CORE_API_API_H

#include <jansson.h>

#include "core/http.h"
#include "core/msgq.h"
#include "core/snapshot.h"
#include "core/store.h"

struct job;
struct store;

/* Answer one request (any libmicrohttpd thread). */
void api_handle(struct http_req *rq, struct http_resp *rs,
                const unsigned char *key, size_t key_len);

/* A loomd that is not the active one (standby.c, core/leader.h) answers
 * itself only /healthz, /metrics, /openapi.json, GET /v1/runtime and its
 * own reload and shutdown; a fenced one also the other GETs, from what it last saw.
 * Anything else goes to the active loomd: 307 with its URL and the request
 * target in Location, or 503 with Retry-After while none is known (or
 * this one is taking over). Returns 1 when rs is the answer, 0 when the
 * request is to be served as usual. */
int api_not_active(struct http_req *rq, struct http_resp *rs);
/* GET /healthz: 200, "status": "ok" and the leader's status. */
void api_healthz(struct http_resp *rs);
/* The leader's status (core/leader.h) as a new JSON value. */
json_t *api_leader_json(void);
/* GET /v1/runtime while the threads of an epoch do not run: the version,
 * the uptime and the leader's status. */
void api_runtime_standby(struct http_resp *rs);

/* Authentication, in this order (route.c):
 *  1. On HTTPS, the client certificate is checked first: one presented
 *     and refused, or none where one is required, is a 401 whatever else
 *     the request carries.
 *  2. A bearer token wins over a certificate: a JWT of an outside issuer
 *     (grid/) acts as a gateway of identity ISSUER,SUBJECT, limited by its
 *     scopes and mapped by the SCITOKENS and GROUP lines; a Loom token
 *     acts with its roles, its subject mapped by the LOOM lines.
 *  3. Without a token, a verified certificate's DN acts as a user, mapped
 *     by the DN lines of the accounts file.
 *  4. Otherwise, a 401.
 * api_cert_auth does steps 1 and 3 (cert.c): -1 with a 401 (step 1, or
 * step 4 on a connection that asked for a certificate); 1 when the
 * certificate is the identity (no token was sent: rq->who is its DN, with
 * the role user, for the caller to map); 0 when a token decides. */
int api_cert_auth(struct http_req *rq, int has_token, struct loom_error *err);

/* On the listen_peer socket, a request without a token is the Unix user
 * that connected (SO_PEERCRED), with the role user, its subject that
 * user's account name (peer.c): 1 when it is (rq->who filled, for the
 * caller to map by the LOOM lines, as a token of that subject), 0 when
 * not a peer request or a token decides, -1 with a 401 or 403 when the
 * uid cannot be told or has no name. uid 0 is the identity root with
 * the role of listen_peer_root_role (rq->peer_root_roles), not a user;
 * refused (403) when that is none. */
int api_peer_auth(struct http_req *rq, int has_token, struct loom_error *err);

/* The VO of a grid request: the group whose GROUP line mapped it, else
 * the first of its token's groups; NULL for none. Borrowed from rq. */
const char *api_vo(const struct http_req *rq);
/* Audit a denial (401, 403, 429) of a grid request: a grid token's
 * (verified, or claimed: its claimed iss and sub, unverified) or a gateway
 * token's; others are not audited here. */
struct grid_claimed;
void api_audit_denial(const struct http_req *rq,
                      const struct grid_claimed *claimed,
                      const struct loom_error *err);

/* Post a command with a reply slot to a thread and wait for the answer
 * (its body and Location go to rs); a time-out is a 503. data is taken. */
void api_call(struct msgq *q, int type, void *data, void (*data_free)(void *),
              struct http_resp *rs);

/* What a reader may see of job v (privacy, [loomd] private_data): admins
 * and operators all of every job; users and gateways all of their own
 * (they own it, or submitted it for its owner) and nothing of another's
 * (with private_data false: all but its private fields); the other roles
 * every job without its private fields (command, script, env, directives,
 * output). */
enum api_see { API_SEE_NOTHING, API_SEE_PUBLIC, API_SEE_ALL };
enum api_see api_job_see(const struct http_req *rq, const struct jview *v);
/* What the reader may see of a job that is neither its own nor one it
 * submitted: the answer api_job_see gives for another's job. */
enum api_see api_others_see(const struct http_req *rq);

/* What a query parameter's value may be. */
enum api_qdom {
    API_Q_TEXT,        /* free text: no control characters */
    API_Q_CLUSTER,     /* a configured cluster */
    API_Q_NODE,        /* a node: its id, or its name with ?cluster= */
    API_Q_JOB_STATE,   /* the domains of core/domain.h */
    API_Q_JOB_STATES,  /* job states, comma-separated */
    API_Q_NODELIST,    /* a hostlist of nodes: ids, or names (of ?cluster=
                          when given) */
    API_Q_NODE_STATE,
    API_Q_RESV_STATE,
    API_Q_PURPOSE,
    API_Q_QUEUE_VIEW,
    API_Q_MAINT_STATE,
    API_Q_LIMIT,       /* 1 to LOOM_LIST_LIMIT_MAX */
    API_Q_AFTER,       /* a job id, or 0 */
    API_Q_STREAM,      /* stdout or stderr */
    API_Q_OFFSET,      /* a byte offset: 0 or more */
    API_Q_TIME,        /* RFC 3339 UTC, or seconds since the epoch */
    API_Q_JOB_FIELDS,  /* members of the job object, comma-separated */
    API_Q_JOB_IDS,     /* jobs (123) and array tasks (123_7), comma-
                          separated */
    API_Q_NAMES,       /* names, comma-separated, none empty */
};

/* A query parameter a route takes (route.c has a table per route). */
struct api_param {
    const char *name;
    enum api_qdom dom;
};
#define API_PARAMS_MAX 16

/* Handlers: segs are the path's parts after "/v1/" (of /healthz and the
 * others outside /v1, all of them) (borrowed); the query parameters are
 * checked against the route's table before the handler is called. */
struct api_route_args {
    char **seg;
    int n;
    const struct api_param *params;    /* the route's, NULL-terminated */
    const char *value[API_PARAMS_MAX]; /* checked, by index in params;
                                          NULL when not given */
    char node[512];                    /* a node parameter, as its id */
};

typedef void (*api_handler_f)(struct http_req *rq, struct http_resp *rs,
                              const struct api_route_args *a);

/* Who may call a route: roles (any of them), any valid token, or no
 * token at all. */
#define API_ROLES_ANY 0xffffu
#define API_ROLES_NONE 0u

/* One route of the API. */
struct api_route {
    const char *method;  /* NULL: any method; the handler refuses those
                            it does not take (the dashboard: GET, HEAD) */
    const char *pattern; /* "/v1/jobs/{id}": a {name} takes one segment */
    unsigned roles;      /* LOOM_ROLE_* bits, API_ROLES_ANY or _NONE */
    const struct api_param *params; /* the query parameters it takes */
    api_handler_f fn;
};
/* The route table (route.c), in the order a request is matched against
 * it; *n is its length. Borrowed, static. Its patterns are the route
 * labels of loom_http_request_seconds and the paths of the OpenAPI
 * document. */
const struct api_route *api_routes(size_t *n);

/* Check rq's query parameters against params (at most API_PARAMS_MAX)
 * into a: each must be one of them, given once, with a value of text in
 * its domain (a node becomes its id). 0, or -1 with a 400 naming the
 * parameter, its value and what is allowed. */
int api_query_check(const struct http_req *rq,
                    const struct api_param *params, struct api_route_args *a,
                    struct loom_error *err);
/* The checked value of the query parameter name, or NULL. Borrowed. */
const char *api_param(const struct api_route_args *a, const char *name);
/* The nodes of list (a hostlist such as "n[1-4],simA/n7": node ids, or
 * names, of cluster when it is not NULL, else of every cluster that has
 * one) as ids "CLUSTER/NAME", sorted, appended to ids. 0, or -1 with a
 * LOOM_EINVAL error on field "nodelist" naming a node that does not exist
 * and the nodes that do (LOOM_EINTERNAL: out of memory). Any thread. */
int api_nodelist_ids(const char *list, const char *cluster, struct strv *ids,
                     struct loom_error *err);
/* Does the sorted ids (of api_nodelist_ids) hold node name of cluster? */
int api_nodelist_has(const struct strv *ids, const char *cluster,
                     const char *name);
/* ?fields= (fields.c): the job object's members named in list
 * (comma-separated) as bits, by their place in the job object. 0, or -1
 * with a LOOM_EINVAL error on field "fields" naming the first that is
 * none and every member there is. Any thread. */
int api_fields_parse(const char *list, uint64_t *bits,
                     struct loom_error *err);
/* The filters of GET /v1/jobs (jobfilter.c). */
struct api_job_ref {
    int64_t id;
    long task; /* -1: the whole job */
};
struct api_job_filter {
    const char *cluster, *owner, *account, *name; /* borrowed, or NULL */
    unsigned states;             /* bits of the states asked for; 0: any */
    struct strv nodes;           /* node ids, sorted (nodelist) */
    struct strv users, queues;   /* sorted (user, queue) */
    struct api_job_ref *ids;     /* (id) */
    size_t n_ids;
    int by_nodes;                /* (nodelist); the others by their counts */
};
/* The filters of a's checked query parameters into f, which then holds
 * what it needs of a (borrowed) and is finished with
 * api_job_filter_fini. 0, or -1 with the error of a node list that is
 * not what it was when checked (or out of memory); f is then empty. */
int api_job_filter_init(struct api_job_filter *f,
                        const struct api_route_args *a,
                        struct loom_error *err);
void api_job_filter_fini(struct api_job_filter *f);
/* Does the job v pass every filter of f? */
int api_job_filter_matches(const struct api_job_filter *f,
                           const struct jview *v);
/* ?id=: the comma-separated jobs (123) and tasks (123_7) of list into
 * *refs (a new array the caller frees), *n of them. 0, or -1 with a
 * LOOM_EINVAL error on field "id" naming the item that is neither. */
int api_job_ids_parse(const char *list, struct api_job_ref **refs,
                      size_t *n, struct loom_error *err);
/* A comma-separated list of names (?user=, ?queue=): -1 with a LOOM_EINVAL
 * error on field name when an item is empty. */
int api_list_check(const char *name, const char *list,
                   struct loom_error *err);
/* Sort s's strings (strcmp order), for api_strv_has (query.c). */
void api_strv_sort(struct strv *s);
/* Is name (NULL: no) among the strings of s, sorted by api_strv_sort? */
int api_strv_has(const struct strv *s, const char *name);
/* A span of text: a member "key":value of a job's JSON. */
struct api_span {
    const char *p;
    size_t len;
};
/* The members of bits in the job object json[0..len), as spans of it, in
 * its order (at most max); a member that begins inside json[skip_off ..
 * skip_off + skip_len) (the private span of a job its reader may not see
 * whole) is left out. Returns how many. Scans, never parses: json is a
 * job as loomd renders it. */
size_t api_fields_cut(const char *json, size_t len, size_t skip_off,
                      size_t skip_len, uint64_t bits, struct api_span *out,
                      size_t max);
#define API_FIELDS_MAX 64
/* Append "&name=value" to the query in out (n bytes), the value
 * percent-encoded; nothing for a NULL value. For the "next" link of a
 * list. */
void api_query_append(char *out, size_t n, const char *name,
                      const char *value);
void api_clusters(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a);
/* fresh.c: an uncached read of cluster's nodes when the request says
 * Cache-Control: no-cache: the server thread asks the cluster now and
 * publishes what it says (SERVER_REFRESH_NODES), and rs gets a
 * Server-Timing header of that call. 1 when the request did not ask (rs
 * untouched), 0 when the nodes are fresh in the snapshot, -1 with the
 * error in rs (400 without a cluster, 404, the cluster's failure). HTTP
 * threads. */
int api_fresh_nodes(struct http_req *rq, struct http_resp *rs,
                    const char *cluster);
void api_nodes(struct http_req *rq, struct http_resp *rs,
               const struct api_route_args *a);
void api_queues(struct http_req *rq, struct http_resp *rs,
                const struct api_route_args *a);
/* GET /v1/queues?view=fabric (fabric.c; api_queues hands it over). */
void api_queues_fabric(struct http_req *rq, struct http_resp *rs,
                       const struct api_route_args *a);
void api_jobs_get(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a);
void api_jobs_submit(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a);
void api_jobs_op(struct http_req *rq, struct http_resp *rs,
                 const struct api_route_args *a);
void api_jobs_patch(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a);
/* GET /v1/jobs/{id}/output (output.c): what the job wrote, read as its
 * account; to those who see all of the job (api_job_see: its owner and
 * the gateway that submitted it, operators, admins); 404 to anyone else. */
void api_jobs_output(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a);
void api_node_state(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a);
void api_runtime_get(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a);
void api_runtime_post(struct http_req *rq, struct http_resp *rs,
                      const struct api_route_args *a);
void api_resv_get(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a);
void api_resv_create(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a);
void api_resv_cancel(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a);
/* Answer from a list the snapshot holds whole (enum snap_text): all of
 * it, the items whose fields equal the route's query parameters given (each
 * parameter filters the field of its name), or (id non-NULL) the item with
 * that id; what names the kind of item in a 404. */
void api_list_text(const struct api_route_args *a, struct http_resp *rs,
                   enum snap_text which, const char *id, const char *what);
/* A list the snapshot holds whole whose ended items leave memory, read
 * back from PostgreSQL (list.c). */
struct api_stored_src {
    enum snap_text which;
    const char *what; /* the kind of item, for a 404 */
    int64_t (*evicted_max)(void); /* the highest id that left memory */
    /* id's state and document (new strings): 1, 0 when none, or -1 */
    int (*doc)(struct store *st, int64_t id, char **state, char **doc,
               struct loom_error *err);
    /* the ended items up to upto but those in but ("{1,2}") whose
     * documents hold match's members (a JSON object, or NULL), in id
     * order: cb(id, doc). 0 or -1 */
    int (*ended)(struct store *st, const char *but, int64_t upto,
                 const char *match, store_row_cb cb, void *arg,
                 struct loom_error *err);
    /* the states items leave memory in (NULL-terminated): a list whose
     * ?state= names another is the snapshot's alone */
    const char *const *gone_states;
};
/* As api_list_text (a->n == 2: the item a->seg[1]), with the items of
 * src that left memory read from the database, merged by id, and only
 * the items of owner (NULL: all; another's item is as one that does not
 * exist). The database
 * is read only up to the highest id that left memory (none before one
 * has); an error when it cannot be read then. */
void api_list_stored(const struct api_route_args *a, struct http_resp *rs,
                     const struct api_stored_src *src, const char *owner);
void api_maint_get(struct http_req *rq, struct http_resp *rs,
                   const struct api_route_args *a);
void api_maint_post(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a);
void api_maint_cancel(struct http_req *rq, struct http_resp *rs,
                      const struct api_route_args *a);
void api_diff(struct http_req *rq, struct http_resp *rs,
              const struct api_route_args *a);
void api_goal(struct http_req *rq, struct http_resp *rs,
              const struct api_route_args *a);
void api_actual(struct http_req *rq, struct http_resp *rs,
                const struct api_route_args *a);
void api_metrics(struct http_req *rq, struct http_resp *rs,
                 const struct api_route_args *a);
/* GET /openapi.json (openapi.c): the API described in OpenAPI 3.1. */
void api_openapi(struct http_req *rq, struct http_resp *rs,
                 const struct api_route_args *a);
/* The OpenAPI document as loomd serves it (static text). */
const char *api_openapi_text(void);

/* The jobs' history and their use (acct.c), read from the database at
 * conninfo through a connection of their own, opened at the first such
 * request and used by one request at a time. api_acct_init before the
 * HTTP server starts (-1 with err when out of memory), api_acct_fini
 * after it stopped.
 * GET /v1/accounting: the jobs that ran or ended in [start, end), a page
 * at a time; GET /v1/usage: their cpu time per cluster, account and
 * owner. A reader who may not see another's jobs (api_others_see) finds
 * only its own in both. */
int api_acct_init(const char *conninfo, struct loom_error *err);
void api_acct_fini(void);
/* That connection, locked: api_reader_put gives it back. NULL with err
 * (and unlocked) when the database cannot be reached. Any handler. */
struct store *api_reader_get(struct loom_error *err);
void api_reader_put(void);

/* Jobs that ended and left loomd's memory (job_memory_s), read from the
 * database (stored.c). */
/* The view of stored job id, built as the scheduler builds its views: 1
 * with *v (a new reference), 0 when there is no such job, -1 with err. */
int api_stored_view(int64_t id, struct jview **v, struct loom_error *err);
/* The record of stored job id (a new job the caller destroys): 1, 0 when
 * there is none, -1 with err. */
int api_stored_job(int64_t id, struct job **j, struct loom_error *err);
/* A submit's Idempotency-Key key, by submitter, already used by a stored
 * job that left memory: 1 when answered (200 with that job for the same
 * request, hash, or 409 naming it for another), 0 when not (the scheduler
 * looks for it in memory), -1 with err. Only jobs up to the highest id
 * that left memory are looked for: until one has, no database is asked. */
int api_stored_idem(const char *submitter, const char *key, const char *hash,
                    struct http_resp *rs, struct loom_error *err);
/* A page of the stored ended jobs after id `after` (at most n rows), that
 * f lets through (core/store_jobs_read.h), without those table t holds:
 * their views (new references) into v (room for n), *n_v of them, and
 * the last id read into *last. Returns the rows read (n: there may be
 * more), or -1 with err. */
struct store_ended_filter;
long api_stored_page(const struct jobtab *t, int64_t after, long n,
                     const struct store_ended_filter *f, struct jview **v,
                     size_t *n_v, int64_t *last, struct loom_error *err);
void api_accounting(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a);
void api_usage(struct http_req *rq, struct http_resp *rs,
               const struct api_route_args *a);

/* The dashboard (web.c): read the files of dir once, at start-up, before
 * the server starts (a directory that cannot be read is logged, and / then
 * answers 404); api_web_free at the end. api_web answers the routes /
 * and /ui/{name} (GET and HEAD), without a token. */
void api_web_load(const char *dir);
void api_web_free(void);
void api_web(struct http_req *rq, struct http_resp *rs,
             const struct api_route_args *a);

/* GET /v1/events (events.c): a stream of Server-Sent Events, one when
 * the snapshot changed (at most one a second), with the versions of what
 * it holds. The thread that renders them: started after the snapshot,
 * stopped after the HTTP server. */
int api_events_start(struct loom_error *err);
void api_events_stop(void);
void api_events(struct http_req *rq, struct http_resp *rs,
                const struct api_route_args *a);

#endif
