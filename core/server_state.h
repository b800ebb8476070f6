/* server_state.h - the server thread's own state; private to its files. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_SERVER_STATE_H
#define LOOM_CORE_SERVER_STATE_H

#include <pthread.h>

#include "core/server.h"

struct srv_cluster {
    char *name;
    const struct adaptor_type *type;
    void *inst;
    double poll_s;
    double next_poll, last_poll_mono;
    int preference;
    int fails;
    char *error;
    unsigned long polls;
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

struct srv_cluster *server_cluster(const char *name);
void server_publish(struct srv_cluster *c);
void server_poll(struct srv_cluster *c);
void server_poll_soon(struct srv_cluster *c);
/* At start-up: nodes and queues only, so the first snapshot has them. */
void server_poll_nodes_only(struct srv_cluster *c);
/* server_ops.c: one message. */
void server_handle(struct msg *m);

#endif
