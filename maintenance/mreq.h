/* mreq.h - a maintenance request: nodes of one cluster, an action, a
 * window, and where it is in its life. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_MAINTENANCE_MREQ_H
#define LOOM_MAINTENANCE_MREQ_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "core/error.h"
#include "core/msgq.h"
#include "core/strv.h"

enum mstate {
    MS_REQUESTED, MS_PLANNED, MS_DRAINING, MS_IN_PROGRESS, MS_VERIFYING,
    MS_DONE, MS_FAILED, MS_CANCELLED
};

struct mreq {
    int64_t id;
    char *cluster;
    struct strv nodes; /* names in the cluster */
    long count;        /* asked as a count: nodes chosen when placed */
    char *action;      /* node-off or an [action NAME] */
    char *reason, *owner;
    char *rule;        /* the rule that made it, or NULL */
    int fixed, asap, force;
    time_t start, not_before, deadline; /* the window asked for */
    long duration_s;
    int64_t resv;      /* its reservation, or 0 */
    time_t planned_start, planned_end;
    enum mstate state;
    char *error;       /* why it failed, or NULL */
    char *output;      /* the action's last output, or NULL */
    struct strv cancelled_jobs;
    json_t *history;   /* [{"state", "time"}] */
    time_t since;      /* when the current state began */
    time_t action_began;
    /* not stored: */
    struct reply *pending; /* a node-state change in flight, or NULL */
    time_t pending_until;  /* 0, or waited for until then only */
    int drain_sent;        /* draining: the drain went out */
    int marked;            /* draining: its nodes are shown "maint" */
    time_t retry_at;       /* a failed drain goes out again then */
    int running;           /* its action runs */
};

const char *mstate_name(enum mstate s);
int mstate_open(enum mstate s); /* not done, failed or cancelled */

/* POST /v1/maintenance: checked into r (id, owner and state unset).
 * actions: the configured ones (for the default duration). 0, or -1 with
 * a 400. */
struct maint_conf;
int mreq_parse(json_t *body, time_t now, const struct maint_conf *mc,
               struct mreq *r, struct loom_error *err);
/* The request as the API shows it (new string), or NULL (no memory). */
char *mreq_render(const struct mreq *r);
/* From its stored document; NULL with err when unreadable. */
struct mreq *mreq_from_doc(json_t *doc, struct loom_error *err);
/* Change state, recording it in the history. */
void mreq_set_state(struct mreq *r, enum mstate s, time_t now);
void mreq_destroy(struct mreq *r); /* NULL-safe */

#endif
