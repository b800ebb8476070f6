/* adaptor.h - the server interface: one ops table per cluster system. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_ADAPTOR_H
#define LOOM_ADAPTORS_ADAPTOR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/conf.h"
#include "core/error.h"
#include "core/strv.h"

#define LOOM_ADAPTOR_VERSION 1

/* Capability bits: what a cluster system can do beyond the core ops
 * (nodes, jobs, queues, start, cancel). The server thread refuses an op
 * whose bit the cluster lacks before the adaptor sees it. */
enum {
    LOOM_CAP_SUSPEND = 1 << 0,    /* suspend + resume */
    LOOM_CAP_HOLD = 1 << 1,       /* hold + release */
    LOOM_CAP_NODE_STATE = 1 << 2, /* set_node_state */
    /* reserve + unreserve: a Loom reservation made in the cluster's own
     * system too, so that jobs submitted to it directly keep off the
     * nodes. A cluster that runs only what Loom starts (local, sim) has
     * no need of it: Loom's plan is the only one there. */
    LOOM_CAP_RESERVE = 1 << 3,
};
#define LOOM_CAP_ALL                                                        \
    (LOOM_CAP_SUSPEND | LOOM_CAP_HOLD | LOOM_CAP_NODE_STATE | LOOM_CAP_RESERVE)
/* The name of one capability bit ("suspend", "hold", "node_state",
 * "reserve"; static), or "?". */
const char *adaptor_cap_name(unsigned cap);

/* How the start decision is taken away from the cluster's own scheduler. */
enum adaptor_model {
    LOOM_MODEL_DISABLED_SCHEDULER,
    LOOM_MODEL_EXECUTION_QUEUE,
};

/* One node as the cluster reports it. All strings owned by the node. */
struct cl_node {
    char *name;
    char *state;       /* idle|mixed|allocated|draining|drained|down|maint|unknown */
    int cpus;
    int cpus_alloc;
    long memory_mb;
    long memory_alloc_mb;
    int gpus;
    int gpus_alloc;
    struct strv features;
    struct strv queues;
    char *reason;      /* why drained/down, or NULL */
};

/* What an ended job used, where its cluster measured it. */
struct cl_usage {
    int known;          /* 0: not measured (the rest is 0) */
    long long user_cpu_ms, system_cpu_ms; /* cpu time of its processes */
    long long max_rss_kb; /* the largest resident set of one of them */
};

/* Read a job's "usage" as clusters and Loom write it, {"user_cpu_ms": N,
 * "system_cpu_ms": N, "max_rss_kb": N} (each a non-negative integer), into
 * *u. Absent or null: *u is zeroed (not measured) and 0 is returned; any
 * other value leaves *u zeroed and returns -1. */
int cl_usage_read(const json_t *v, struct cl_usage *u);

/* One job as the cluster reports it. */
struct cl_job {
    char *native_id;
    int64_t loom_id;   /* the Loom job id it carries, or 0 (native job) */
    char *name;
    char *owner;
    char *state;       /* an API job state: pending|held|running|suspended|
                          completed|failed|cancelled */
    struct strv nodes;
    time_t submit_time, start_time, end_time; /* 0 = unknown */
    int has_exit_code;
    int exit_code;
    struct cl_usage usage; /* an ended job's */
    char *reason;
    int node_failure;  /* a failed job the cluster ended because a node
                          failed: Loom may requeue it, as a lost one */
    char *stdout_path, *stderr_path;
    /* What the job asked for, where the cluster says (0 = unknown): a
     * native job held for Loom is scheduled by it. */
    struct {
        int nodes, cpus_per_node, gpus;
        long memory_mb, walltime_s;
    } req;
};

struct cl_queue {
    char *name;
    char *state;       /* open|closed */
    int nodes;
    long max_walltime_s; /* 0 = no limit */
};

struct cl_node_list { struct cl_node *v; size_t n; };
struct cl_job_list { struct cl_job *v; size_t n; };
struct cl_queue_list { struct cl_queue *v; size_t n; };

void cl_node_list_fini(struct cl_node_list *l);   /* NULL-safe */
void cl_job_list_fini(struct cl_job_list *l);
void cl_queue_list_fini(struct cl_queue_list *l);
/* Append a zeroed element and return it, or NULL when out of memory. */
struct cl_node *cl_node_list_add(struct cl_node_list *l);
struct cl_job *cl_job_list_add(struct cl_job_list *l);
struct cl_queue *cl_queue_list_add(struct cl_queue_list *l);

/* Start this Loom job on these nodes. Borrowed by the adaptor for the call. */
struct start_req {
    int64_t loom_id;
    const char *name;
    const char *owner;
    const char *account;        /* the local account it runs as, or NULL
                                   (a record from before accounts) */
    const char *const *command; /* argv, NULL-terminated, or NULL */
    const char *script;         /* script text, or NULL */
    const char *const *env;     /* "NAME=value", NULL-terminated */
    const char *workdir;        /* absolute, or NULL: the account's home */
    const char *output, *error; /* file names as asked (patterns of
                                   core/outpath.h, relative to workdir),
                                   or NULL: the cluster's default */
    const char *const *nodes;   /* node names chosen by the scheduler */
    size_t n_nodes;
    int cpus_per_node;
    long memory_mb;
    int gpus;
    long walltime_s;            /* 0 = none */
    const char *queue;          /* or NULL */
    /* Idempotence: a start of a loom_id the cluster already runs or ran
     * must not start it twice; the adaptor answers with the existing job
     * instead. `adopt` is set after a restart of loomd: start_time is then
     * the recorded start, and the adaptor re-attaches to the job if it still
     * knows it (a simulated cluster re-creates it at that start). */
    int adopt;
    time_t start_time;
    /* A native job the cluster holds for Loom: start this one (release it
     * onto the nodes) instead of submitting a new one. NULL otherwise. */
    const char *native_id;
    /* A task of an array: the array's id and the task's (what an output
     * name's %A and %a stand for); 0 and -1 for another job. Its variables
     * (SLURM_ARRAY_TASK_ID, SGE_TASK_ID, ...) are in env already. */
    int64_t array_id;
    long array_task;
    /* The job runs inside a Loom reservation whose twin in the cluster's
     * system this is (struct resv_spec): submitted into it, or it could
     * not start on the reserved nodes. NULL otherwise. */
    const char *reservation;
    /* The job's own priority and its "requeue" (no_requeue 1: false), for
     * a cluster system that keeps them itself (another loomd). */
    int priority;
    int no_requeue;
};

struct start_result {
    char *native_id;                 /* owned by the caller afterwards */
    char *stdout_path, *stderr_path; /* owned, or NULL */
    int adopted;                     /* 1: the job existed already */
    int queued;                      /* 1: the cluster took the job and runs
                                        it when it can (a CMS): the next
                                        jobs poll says when; 0: it runs */
};
void start_result_fini(struct start_result *r);

/* A native reservation to make: the Loom reservation's nodes, window and
 * purpose. Borrowed by the adaptor for the call. */
struct resv_spec {
    const char *name;           /* "loom-r<ID>": the same for every try, so
                                   that a cluster system that names its
                                   reservations finds one made already */
    const char *const *nodes;   /* node names in the cluster */
    size_t n_nodes;
    time_t start, end;          /* a start in the past means now */
    const char *purpose;        /* "user" or "maintenance" */
    const char *account;        /* the owner's local account (the one whose
                                   jobs may run inside), or NULL: the
                                   adaptor's own (a maintenance window) */
};

/* What an instance tells loomd of itself: describe() starts from its
 * type's caps and model, pinned_only and runs_as_user 0, single_account
 * and info NULL. */
struct adaptor_desc {
    unsigned caps;            /* LOOM_CAP_* */
    enum adaptor_model model;
    int pinned_only;          /* 1: the cluster takes only jobs that name it
                                 (request.cluster) or run in one of its
                                 reservations; the scheduler places no other
                                 job there (a simulated cluster runs nothing:
                                 a real job must not land on it by chance) */
    int runs_as_user;         /* 1: each job runs as its own account */
    const char *single_account; /* every job runs as this one account, so
                                   the cluster takes only its jobs; NULL:
                                   any account's. Borrowed from the
                                   instance, which outlives the cluster */
    json_t *info;             /* NULL, or a new object whose members the
                                 cluster's object in /v1/clusters shows too
                                 (the local executor's confinement); the
                                 caller owns it */
};

struct curlloop; /* adaptors/curlloop.h */

/* What every adaptor instance is given at creation. */
struct adaptor_env {
    const char *cluster;      /* the cluster's name */
    const char *state_dir;    /* loomd's state_dir; an adaptor may use
                                 state_dir/clusters/<cluster>/ */
    const char *libexec_dir;  /* where loom-supervise lives */
    struct curlloop *loop;    /* the server thread's HTTP requests, for
                                 call() (borrowed for the instance's life) */
};

/* The operations of the server interface, for the asynchronous form. */
enum adaptor_op {
    LOOM_OP_NODES,
    LOOM_OP_JOBS,
    LOOM_OP_QUEUES,
    LOOM_OP_START,
    LOOM_OP_CANCEL,
    LOOM_OP_SET_NODE_STATE,
    LOOM_OP_SUSPEND,
    LOOM_OP_RESUME,
    LOOM_OP_HOLD,
    LOOM_OP_RELEASE,
    LOOM_OP_RESERVE,
    LOOM_OP_UNRESERVE,
    LOOM_N_OPS
};
/* "nodes", "jobs", ..., "set_node_state" (static). */
const char *adaptor_op_name(enum adaptor_op op);
/* The capability bit op needs, or 0 for a core op. */
unsigned adaptor_op_cap(enum adaptor_op op);

/*
 * One operation in the asynchronous form (docs/internals/async-adaptors.md):
 * the request, the answer and whom to tell. The caller owns it and keeps
 * it (and what the request points to) until done_cb.
 */
struct adaptor_call {
    enum adaptor_op op;
    /* The request, borrowed. */
    const struct start_req *start;      /* LOOM_OP_START */
    const char *native_id;              /* CANCEL ... RELEASE, UNRESERVE */
    const char *node, *state, *reason;  /* SET_NODE_STATE */
    const struct resv_spec *resv;       /* RESERVE */
    /* The answer: rc 0 or -1 with err; the lists and start result are
     * the caller's afterwards (adaptor_call_fini frees them). */
    int rc;
    struct loom_error err;
    struct cl_node_list nodes;
    struct cl_job_list jobs;
    int complete;
    struct cl_queue_list queues;
    struct start_result started;
    char *resv_id;                      /* RESERVE: the native id, owned */
    /* An API adaptor's call (call()): the requests it sent and libcurl's
     * own time of them (struct fetch_result's transfer_s, added up): the
     * CMS's part of the call; the rest of its time is Loom's own
     * (loom_adaptor_own_seconds). 0 and 0 for a call that sent none. */
    int cms_requests;
    double cms_s;
    /* Set by the adaptor instead of an answer: "carry this one out with
     * my blocking op" (it found out only now, e.g. from the API version
     * it was offered); the caller then runs it on the cluster's worker. */
    int blocking;
    /* Called once when the call ended (or was handed back), on the server
     * thread, never from inside call(). */
    void (*done_cb)(struct adaptor_call *k);
    void *arg;                          /* the caller's */
};
/* Free the answer's lists and start result (the call itself is not). */
void adaptor_call_fini(struct adaptor_call *k);

/*
 * The ops table of one kind of cluster system. The blocking ops are called
 * on the cluster's worker thread, one at a time per instance; they may
 * block (a script adaptor up to its timeout), and return plain data: they
 * never touch the database or another room's state. call(), where a type
 * has it, is their asynchronous form, on the server thread. Each returns 0
 * or -1 with err filled (LOOM_ETEMP for a passing failure, LOOM_ENOTSUP
 * when the system cannot, LOOM_EINVAL / LOOM_ENOENT for a bad request).
 */
struct adaptor_type {
    const char *name;
    int version;                 /* LOOM_ADAPTOR_VERSION */
    unsigned caps;               /* LOOM_CAP_* */
    enum adaptor_model model;
    /* The keys create() reads from the cluster's section (NULL-terminated;
     * a key ending in '.' is a prefix such as "env."). A reload checks a
     * changed file against them without creating an instance. */
    const char *const *conf_keys;
    /* The poll interval when the section sets no poll_s (seconds). */
    double poll_s;

    /* From the cluster's config section: read the keys it knows (the caller
     * then rejects unknown ones). Returns a new instance in *self. */
    int (*create)(struct conf_section *sec, const struct adaptor_env *env,
                  void **self, struct loom_error *err);
    void (*destroy)(void *self); /* NULL-safe */
    /* Is the cluster reachable? Cheap. */
    int (*probe)(void *self, struct loom_error *err);
    /* Optional: what this instance says of itself when it differs from
     * its type (a script pack declares its capabilities and model, a sim
     * cluster may take pinned jobs only). d comes filled with the type's
     * values; change what differs. Called once, after create(). */
    void (*describe)(void *self, struct adaptor_desc *d);

    /* Fill an empty list the caller owns afterwards. */
    int (*nodes)(void *self, struct cl_node_list *out, struct loom_error *err);
    /* Jobs: *complete = 1 when out holds every job the cluster knows (one
     * missing from it is gone); 0 when out holds only the jobs that changed
     * since the previous call (the first call is always complete).
     * Finished jobs are reported at least once. */
    int (*jobs)(void *self, struct cl_job_list *out, int *complete,
                struct loom_error *err);
    int (*queues)(void *self, struct cl_queue_list *out,
                  struct loom_error *err);

    int (*start)(void *self, const struct start_req *req,
                 struct start_result *out, struct loom_error *err);
    int (*cancel)(void *self, const char *native_id, struct loom_error *err);

    /* Optional: NULL in a type's table means "not supported"; the registry
     * fills one default that fails with LOOM_ENOTSUP. */
    int (*set_node_state)(void *self, const char *node, const char *state,
                          const char *reason, struct loom_error *err);
    int (*suspend)(void *self, const char *native_id, struct loom_error *err);
    int (*resume)(void *self, const char *native_id, struct loom_error *err);
    int (*hold)(void *self, const char *native_id, struct loom_error *err);
    int (*release)(void *self, const char *native_id, struct loom_error *err);
    /* Make the reservation in the cluster's system: 0 with its native id
     * (a new string the caller frees) in *native_id. Asked again for the
     * same name (a retry, a restart of loomd), the answer is the existing
     * one where the system names reservations. */
    int (*reserve)(void *self, const struct resv_spec *spec,
                   char **native_id, struct loom_error *err);
    /* Remove it; one that is gone already is no error. */
    int (*unreserve)(void *self, const char *native_id,
                     struct loom_error *err);

    /* Optional, the asynchronous form: start k->op and return at once,
     * never blocking; 0 when started (k->done_cb follows, from the server
     * thread's loop: the instance's transfers go through env->loop), or 1
     * when this instance carries that op out with its blocking op (the
     * caller then runs it on the cluster's worker, and done_cb is not
     * called). Called on the server thread, any number of calls at once;
     * the blocking ops run meanwhile on the worker, one at a time, and
     * must share no state with call() but what create() set. A type
     * without it is called only through its blocking ops, on the
     * worker. */
    int (*call)(void *self, struct adaptor_call *k);
    /* Optional: how the instance carries op out now, for people (shown in
     * /v1/clusters): "slurmrestd v0.0.38", "pack slurm". NULL to say
     * nothing. Server thread. */
    const char *(*via)(void *self, enum adaptor_op op);
};

/* Carry k out with t's blocking op on self (rc, err and the answer
 * filled; done_cb is not called). Any thread that may call self's ops. */
void adaptor_call_run(const struct adaptor_type *t, void *self,
                      struct adaptor_call *k);

/* The registered type of that name, with optional ops filled, or NULL. */
const struct adaptor_type *adaptor_type_find(const char *name);
/* 0 when every key of sec is one the type (or loomd itself: adaptor,
 * poll_s, preference) reads; else -1 naming file, line and key. */
int adaptor_conf_check(const struct adaptor_type *t,
                       const struct conf_section *sec,
                       struct loom_error *err);
/* All registered types (for tests). */
const struct adaptor_type *const *adaptor_types(size_t *n);
/* 0 when the registered table of t's name has every core op, the right
 * interface version, and every capability bit has its ops and no op lacks
 * its bit. */
int adaptor_type_check(const struct adaptor_type *t, struct loom_error *err);
/* The same checks on a raw table as a type declares it (before the
 * registry fills its optional ops). */
int adaptor_table_check(const struct adaptor_type *raw,
                        struct loom_error *err);

#endif
