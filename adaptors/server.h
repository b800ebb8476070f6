/* server.h - the server interface thread: adaptors, polls, the snapshot. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_SERVER_H
#define LOOM_ADAPTORS_SERVER_H

#include <stdint.h>

#include "adaptors/adaptor.h"
#include "core/conf.h"
#include "core/msgq.h"

enum server_msg {
    SERVER_START_JOB = 1, /* data: struct server_start * */
    SERVER_JOB_OP,        /* data: struct server_job_op *; may carry reply */
    SERVER_NODE_STATE,    /* data: struct server_node_state *; reply */
    SERVER_RELOAD,        /* data: struct conf * (taken); reply */
    SERVER_REPUBLISH,     /* data: a cluster's name (malloc'd); reply */
    SERVER_RESV,          /* data: struct server_resv *; answered with a
                             SCHED_RESV_NATIVE to the scheduler */
    SERVER_REFRESH_NODES, /* data: a cluster's name (malloc'd); reply */
};

/* A start decision, with owned copies of what the adaptor needs. */
struct server_start {
    char *cluster;
    int64_t loom_id;
    char *name, *owner, *account, *script, *queue;
    char *workdir, *output, *error;
    struct strv command, env, nodes;
    int cpus_per_node, gpus;
    long memory_mb, walltime_s;
    int adopt;
    time_t start_time;
    char *native_id; /* a native job held for Loom: release this one */
    char *reservation; /* the native reservation it runs in, or NULL */
    int64_t array_id; /* a task: its array and task ids; else 0 and -1 */
    long array_task;
    int priority;     /* the job's priority, as given */
    int no_requeue;   /* "requeue": false */
};
void server_start_free(void *p);

struct server_job_op {
    int64_t id;
    char op[16]; /* cancel|suspend|resume */
    char *cluster;
    char *native_id;
    char *view;  /* the job's JSON to answer with, or NULL */
};
void server_job_op_free(void *p);

struct server_node_state {
    char *cluster, *node, *state, *reason;
};
void server_node_state_free(void *p);

/* Make a Loom reservation in its cluster's own system (remove 0), or
 * remove the one made (remove 1, native_id set); owned copies. */
struct server_resv {
    int64_t id;
    int remove;
    char *cluster, *name, *purpose, *account, *native_id;
    struct strv nodes;
    time_t start, end;
};
void server_resv_free(void *p);

/* Create every cluster's adaptor from the configuration (errors name file,
 * line and key), publish the first snapshot, start the thread. */
int server_start(struct conf *c, const char *state_dir,
                 struct loom_error *err);
/* Start the thread (after the scheduler queued its re-attachments, so they
 * are carried out before the first poll of jobs). */
int server_run(struct loom_error *err);
/* End the thread; its queue stays open (messages wait) until server_fini. */
void server_stop(void);
/* Destroy the adaptors (local jobs keep running under their supervisors)
 * and the queue. */
void server_fini(void);
struct msgq *server_queue(void);
/* Any thread: the run directory of job id on a local cluster (loomd's
 * account may open it, the job's account owns it but cannot reach it by
 * its path): 0 with its path in buf, or -1. */
int server_run_dir(const char *cluster, int64_t id, char *buf, size_t size);
/* Any thread: have the server thread render the cluster's part again from
 * what it last polled (no adaptor call) and publish it, so that what
 * changed in how it is shown (nodes marked with infra_maint_mark) is seen.
 * The reply (referenced; may be NULL) is answered 200 once the part is
 * published, or 404 when there is no such cluster. A poll that ends later
 * renders the marks too. */
void server_republish(const char *cluster, struct reply *reply);
/* SERVER_REFRESH_NODES (an uncached read): the server thread asks the
 * cluster for its nodes with one call begun after the message came (the
 * messages that come while one is under way share the next), publishes
 * them, then answers 200 with how long the call took:
 * {"seconds": S, "cms_s": C, "loom_s": L}, cms_s and loom_s only when
 * the call went to the cluster over HTTP (libcurl's time of its requests,
 * and the rest); 404 for no such cluster, the call's error when it
 * failed. */

#endif
