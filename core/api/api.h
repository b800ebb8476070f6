/* api.h - the REST API: routing, authentication, handlers. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_API_API_H
#define LOOM_CORE_API_API_H

#include "core/http.h"
#include "core/msgq.h"
#include "core/snapshot.h"

/* Answer one request (any libmicrohttpd thread). */
void api_handle(struct http_req *rq, struct http_resp *rs,
                const unsigned char *key, size_t key_len);

/* Post a command with a reply slot to a thread and wait for the answer
 * (its body and Location go to rs); a time-out is a 503. data is taken. */
void api_call(struct msgq *q, int type, void *data, void (*data_free)(void *),
              struct http_resp *rs);

/* Handlers: segs are the path's parts after "/v1/" (borrowed). */
struct api_route_args {
    char **seg;
    int n;
};
void api_clusters(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a);
void api_nodes(struct http_req *rq, struct http_resp *rs,
               const struct api_route_args *a);
void api_queues(struct http_req *rq, struct http_resp *rs,
                const struct api_route_args *a);
void api_jobs_get(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a);
void api_jobs_submit(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a);
void api_jobs_op(struct http_req *rq, struct http_resp *rs,
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
 * it, the items whose fields equal the query parameters named in filters
 * (NULL-terminated), or (id non-NULL) the item with that id; what names
 * the kind of item in a 404. */
void api_list_text(struct http_req *rq, struct http_resp *rs,
                   enum snap_text which, const char *const *filters,
                   const char *id, const char *what);
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

#endif
