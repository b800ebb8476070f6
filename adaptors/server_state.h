/* server_state.h - the server thread's own state; private to its files. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_SERVER_STATE_H
#define LOOM_ADAPTORS_SERVER_STATE_H

#include <pthread.h>

#include "adaptors/annot.h"
#include "adaptors/curlloop.h"
#include "adaptors/server.h"

struct srv_cluster;

/* One adaptor operation under way: the call the adaptor sees, and what
 * the server thread does when it ended. Owned by the server thread (lent
 * to the worker while it runs the op there). */
struct srv_call {
    struct adaptor_call k;  /* first: the adaptor's done_cb gets &k */
    struct srv_cluster *c;
    void (*then)(struct srv_call *sc); /* server thread, after the op */
    struct msg *m;          /* the message that asked for it, or NULL */
    struct start_req req;   /* LOOM_OP_START: points into m's data */
    struct resv_spec spec;  /* LOOM_OP_RESERVE: points into m's data */
    double t0, t1;          /* the op's clock (opstats) */
    struct srv_call *prev, *next; /* every call alive (freed at the end) */
};

/* A poll under way: jobs, nodes, and now and then queues. */
struct srv_poll {
    struct sched_cluster_jobs *cj;
    struct cl_node_list nodes;
    int queues;                 /* queues are asked this time */
    unsigned long starts_at;    /* c->starts_done when jobs were asked */
    double nodes_asked;         /* when its nodes call began (time_mono) */
    struct msg *waiters;        /* node states answered when it ends */
};

/* One cluster, all of it the server thread's; the worker thread only runs
 * the blocking ops it is handed, one at a time. */
struct srv_cluster {
    char *name;
    const struct adaptor_type *type;
    void *inst;
    unsigned caps;
    enum adaptor_model model;
    double poll_s;
    double next_poll, last_poll_mono;
    int poll_inflight;
    struct srv_poll *poll;      /* the poll under way, or NULL */
    struct msg *waiting;        /* node states waiting for the next poll */
    struct msg *refreshing;     /* uncached reads for the next nodes call */
    struct msg *refresh_batch;  /* ... and those the call under way serves */
    int refresh_inflight;
    unsigned long starts_done;  /* starts that succeeded */
    struct msgq *wq;            /* the worker's queue */
    pthread_t worker;
    int worker_running;
    int index;
    int preference;
    int hold_for_loom;
    int pinned_only;     /* takes only jobs that name it */
    int runs_as_user;    /* each job runs as its own account */
    const char *single_account; /* borrowed from the instance, or NULL */
    json_t *info;        /* what describe() added to its object, or NULL */
    struct annot_conf annot; /* its annotate keys, read at start */
    int fails;
    char *error;
    unsigned long polls;
    time_t last_poll;
    struct cl_node_list nodes;  /* as last polled, or read uncached */
    double nodes_asked;         /* when the call that got them began: an
                                   answer to an older one replaces none */
    struct cl_queue_list queues;
};

struct server {
    struct msgq *q;
    struct curlloop *loop;
    pthread_t thread;
    int running, stopping;
    struct srv_cluster *c;
    size_t n;
    char *state_dir, *libexec;
    struct srv_call *calls;
};

extern struct server V;

/* Messages between the server thread and the workers (beyond SERVER_*). */
enum {
    WORK_CALL = 100,  /* to a worker: data = struct srv_call * (lent) */
    SERVER_CALL_DONE, /* to the server: the same call, carried out */
};

struct srv_cluster *server_cluster(const char *name);
/* Prefix err with "cluster NAME: WHAT" (WHAT may be NULL) unless the
 * message names the cluster already. Returns -1. */
int server_error_prefix(struct loom_error *err, const char *cluster,
                        const char *what);
void server_publish(struct srv_cluster *c);

/* server.c: a new call of op on c (NULL when out of memory); then runs
 * when it ended; m (taken, may be NULL) is freed with the call. */
struct srv_call *server_call_new(struct srv_cluster *c, enum adaptor_op op,
                                 void (*then)(struct srv_call *sc),
                                 struct msg *m);
/* Start it: through the adaptor's call() or on the cluster's worker. */
void server_call_start(struct srv_call *sc);
/* At start-up, before the threads: carry it out now (then is not run).
 * 0 when it ended (the answer in sc->k; the caller frees sc), or -1 with
 * err when it did not in time (sc is then the loop's, freed when it
 * ends). */
int server_call_now(struct srv_call *sc, struct loom_error *err);
void server_call_free(struct srv_call *sc);

/* server_poll.c */
void server_poll_begin(struct srv_cluster *c);
/* At start-up: nodes and queues only, so the first snapshot has them. */
void server_poll_nodes_only(struct srv_cluster *c);
/* Poll soon (an operation changed something), but not sooner than a
 * short gap after the last poll. */
void server_poll_soon(struct srv_cluster *c);
/* Answer m (a SERVER_NODE_STATE) when the next poll of c ended. */
void server_poll_wait(struct srv_cluster *c, struct msg *m);
/* At the end: free the poll under way and the waiting answers. */
void server_poll_drop(struct srv_cluster *c);

/* A SERVER_REFRESH_NODES (m taken): answered when a nodes call begun
 * after it ended. */
void server_refresh_nodes(struct srv_cluster *c, struct msg *m);

/* server_ops.c: one message on the server thread. */
void server_handle(struct msg *m);
/* server_resv.c: a SERVER_RESV (m taken). */
void server_resv(struct msg *m);

#endif
