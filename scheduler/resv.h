/* resv.h - an advance reservation: nodes of one cluster kept for its owner
 * (a user, or maintenance) over a window; the request that asks for one. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_RESV_H
#define LOOM_SCHEDULER_RESV_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "core/error.h"
#include "core/strv.h"

enum resv_state { RESV_PLANNED, RESV_ACTIVE, RESV_DONE, RESV_CANCELLED };

struct resv {
    int64_t id;
    char *purpose; /* user|maintenance */
    char *owner;
    char *cluster;
    struct strv nodes; /* node names in the cluster */
    time_t start, end;
    enum resv_state state;
    char *reason; /* or NULL */
    time_t hold_from; /* maintenance: no new job from here on (0: start) */
    int64_t maint;    /* the maintenance request it serves, or 0 */
    char *account;    /* the owner's account on the cluster, or NULL */
    /* Its twin in the cluster's own system (a cluster whose adaptor can
     * reserve, sched_resv_native.c): the native id and the window it was
     * made with, or NULL; why it could not be made or removed, or NULL
     * (cleared once the reservation is over without a twin). */
    char *native_id;
    time_t native_start, native_end;
    char *native_error;
    /* Not stored: when the adaptor call under way was asked for (0:
     * none); when to try again; written to the store at least once (its
     * twin is made only then). */
    time_t native_asked;
    time_t native_retry;
    int stored;
    /* Not stored either: when it ended (done or cancelled; 0 while it
     * has not), from which it stays resv_memory_s in memory; the last turn
     * that writes it (sched_turn.c), which must be back before it goes. */
    time_t ended;
    uint64_t turn;
};

/* POST /v1/reservations, checked: nodes by id ("cluster/name") or a count
 * (with features) in a cluster; a fixed window (start, and duration_s or
 * end) or a flexible one (not_before, deadline, duration_s; with neither
 * start nor not_before nor deadline, from now on). */
struct resv_req {
    char *cluster;
    struct strv nodes; /* names */
    long count;
    struct strv features;
    int fixed;
    time_t start, not_before, deadline;
    long duration_s;
    char *purpose;
    char *reason;
    /* From the maintenance thread only (never from the API): */
    int asap;      /* the nodes take no new job from now on */
    int force;     /* cancel the jobs in the way of a fixed window */
    int64_t maint; /* the maintenance request */
    /* From the API, not the body: the asker's account on the cluster. */
    char *account;
};

/* A "nodes" array of node ids ("cluster/name"), all of one cluster (that
 * of *cluster when set, else set from the first), or with *cluster set
 * bare names (domain_node_add): names appended to names. 0, or -1 with a
 * 400 on the field "nodes". */
int node_ids_in(json_t *arr, char **cluster, struct strv *names,
                struct loom_error *err);
/* "nodes" (ids, or names with "cluster") or "count" with "cluster", one
 * of the two, from body: the cluster, node names or count set. 0, or -1
 * with a 400 on the field. */
int nodes_or_count_in(json_t *body, char **cluster, struct strv *nodes,
                      long *count, struct loom_error *err);
/* 0, or -1 with a 400 naming the field. now: for a default not_before. */
int resv_req_parse(json_t *body, time_t now, struct resv_req *rq,
                   struct loom_error *err);
void resv_req_fini(struct resv_req *rq);

const char *resv_state_name(enum resv_state s);
/* Done or cancelled: nothing changes it any more. */
int resv_state_final(enum resv_state s);
/* The reservation as the API shows it (new string), or NULL (OOM). */
char *resv_render(const struct resv *r);
/* From its stored document; NULL with err when unreadable. */
struct resv *resv_from_doc(json_t *doc, struct loom_error *err);
void resv_destroy(struct resv *r); /* NULL-safe */

#endif
