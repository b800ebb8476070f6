/* server_state.h - the server thread's own state; private to its files. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_SERVER_STATE_H
#define LOOM_ADAPTORS_SERVER_STATE_H

#include <pthread.h>

#include "adaptors/server.h"

/* One cluster. The server thread owns the polling schedule (poll_s,
 * next_poll, poll_inflight); the cluster's worker thread owns the adaptor
 * instance and what it last reported (the rest). */
struct srv_cluster {
    char *name;
    const struct adaptor_type *type;
    void *inst;
    unsigned caps;
    enum adaptor_model model;
    double poll_s;
    double next_poll, last_poll_mono;
    int poll_inflight;
    struct msgq *wq;     /* the worker's queue */
    pthread_t worker;
    int worker_running;
    int index;
    int preference;
    int hold_for_loom;
    int pinned_only;     /* takes only jobs that name it */
    int runs_as_user;    /* each job runs as its own account */
    const char *single_account; /* borrowed from the instance, or NULL */
    json_t *info;        /* what describe() added to its object, or NULL */
    int fails;
    char *error;
    unsigned long polls;
    double op_t0;        /* when the worker's current adaptor call began */
    time_t last_poll;
    struct cl_node_list nodes;   /* as last polled */
    struct cl_queue_list queues;
};

struct server {
    struct msgq *q;
    pthread_t thread;
    int running, stopping;
    struct srv_cluster *c;
    size_t n;
    char *state_dir, *libexec;
};

extern struct server V;

/* Messages between the server thread and the workers (beyond SERVER_*). */
enum {
    WORK_POLL = 100,  /* to a worker: poll now */
    SERVER_POLL_DONE, /* to the server: data = cluster index */
    SERVER_POLL_SOON, /* to the server: data = cluster index */
};

struct srv_cluster *server_cluster(const char *name);
/* Prefix err with "cluster NAME: WHAT" (WHAT may be NULL) unless the
 * message names the cluster already. Returns -1. */
int server_error_prefix(struct loom_error *err, const char *cluster,
                        const char *what);
void server_publish(struct srv_cluster *c);
/* Worker thread: poll the cluster and publish it. */
void server_poll(struct srv_cluster *c);
/* Worker thread: record the duration of the adaptor call that returned rc
 * (begun at c->op_t0, which it resets); returns rc. */
int server_timed(struct srv_cluster *c, const char *op, int rc);
/* Worker thread: ask the server thread for a poll soon. */
void server_poll_soon(struct srv_cluster *c);
/* Worker thread: the worker's loop. */
void *server_worker(void *arg);
/* At start-up: nodes and queues only, so the first snapshot has them. */
void server_poll_nodes_only(struct srv_cluster *c);
/* server_ops.c: one message on the server thread. */
void server_handle(struct msg *m);

#endif
