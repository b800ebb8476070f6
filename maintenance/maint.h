/* maint.h - the maintenance interface thread: goal and actual state, their
 * mismatches, recovery rules, maintenance requests. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_MAINTENANCE_MAINT_H
#define LOOM_MAINTENANCE_MAINT_H

#include <stdint.h>

#include "core/conf.h"
#include "core/error.h"
#include "core/msgq.h"

enum maint_msg {
    MAINT_STATUS = 1,  /* reply: {"requests", "open", "mismatches", ...} */
    MAINT_GOAL_PUT,    /* data: struct maint_op * (node or NULL: import) */
    MAINT_GOAL_GET,    /* data: struct maint_op * (node or NULL: all) */
    MAINT_ACTUAL_POST, /* data: struct maint_op * */
    MAINT_ACTUAL_GET,  /* data: struct maint_op * */
    MAINT_REQ_POST,    /* data: struct maint_op * */
    MAINT_REQ_CANCEL,  /* data: struct maint_op * (id) */
    MAINT_ACTION_DONE, /* data: struct action_done * (from a worker) */
    MAINT_CONFIG,      /* data: struct maint_conf * (a reload) */
    MAINT_NODE_PAUSE,  /* data: struct maint_op * (node; body: the state,
                          pause or resume, and the reason) */
};

/* A request from the API, with owned copies. */
struct maint_op {
    char *node;    /* "cluster/name" from the path, or NULL */
    char *body;    /* the request body, or NULL */
    int64_t id;    /* a request's id */
    char *subject; /* who asks */
    unsigned roles;
};
void maint_op_free(void *p);

struct maint_conf;
struct store;
/* Load the paused nodes from st (borrowed) and show them paused: before
 * the clusters are first rendered, so that a paused node takes no job
 * from the first (then maint_start). -1 with err. */
int maint_pauses_load(struct store *st, struct loom_error *err);
/* Load the state from the database (its own connection) and start the
 * thread, which takes mc (read by maint_conf_read). */
int maint_start(struct maint_conf *mc_take, const char *database,
                struct loom_error *err);
void maint_stop(void);
struct msgq *maint_queue(void);

#endif
