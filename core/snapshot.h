/* snapshot.h - the immutable, reference-counted view HTTP handlers read. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_SNAPSHOT_H
#define LOOM_CORE_SNAPSHOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/domain.h"
#include "core/hmap.h"
#include "core/strv.h"

/* One job as rendered JSON, shared by every snapshot that shows it. */
struct jview {
    atomic_int refs;
    int64_t id;
    char state[12];
    char source[16]; /* local, grid, maintenance or cluster */
    /* the strings below are the view's own, held in its allocation (owner
     * to cluster) and in match (name, nodes) */
    char *owner;
    char *submitted_by; /* the owner, or the gateway that submitted for it */
    char *account; /* "" when not known */
    char *cluster; /* where it runs or ran, else the one it asked for,
                      or NULL: what GET /v1/jobs?cluster= matches */
    char *name;    /* what ?name= matches */
    char *queue;   /* the queue it asked for (request.queue), or NULL:
                      what ?queue= matches */
    char *tasks;   /* an array's tasks without records of their own
                      ("8-10,12"), or NULL: what ?id=ID_N finds in it */
    char **nodes;  /* the names of the nodes of cluster it runs or ran on:
                      what ?nodelist= matches */
    size_t n_nodes;
    void *match;   /* name and nodes, one block (jview_set_match) */
    char *json;    /* the job object as the API shows it */
    size_t len;
    /* json[priv_off .. priv_off + priv_len) holds the fields only its
     * owner, operators and admins see (command, script, env): the JSON
     * without it is the job without them */
    size_t priv_off, priv_len;
    /* not an item of GET /v1/jobs: an array all of whose tasks have
     * records of their own (they are listed) */
    int unlisted;
    /* what ?id= matches beyond id: the array's id (of an array, its own;
     * of a task, its array's; 0 for other jobs) and a task's number in
     * it (-1 for every job that is no task) */
    int64_t array_id;
    long array_task;
};
/* Takes json; copies the rest; priv: the private span (see above; NULL:
 * none). NULL on no memory (json freed). */
struct jview *jview_create(int64_t id, const char *state, const char *source,
                           const char *owner, const char *submitted_by,
                           const char *account, const char *cluster,
                           char *json_take, const size_t priv[2]);
/* Give v the name, queue, waiting tasks (each may be NULL) and the
 * n_nodes nodes (copied) its list filters match. 0, or -1 when out of
 * memory (v keeps none of them). */
int jview_set_match(struct jview *v, const char *name, const char *queue,
                    const char *tasks, char *const *nodes, size_t n_nodes);
/* The view without its private span: a new string of *len bytes, or NULL
 * when out of memory. */
char *jview_redacted(const struct jview *v, size_t *len);
struct jview *jview_ref(struct jview *v);
/* Every job up to this id is committed (the committer says so, after each
 * batch); jobtab_get shows no job above it. Any thread. */
void jobs_committed_set(int64_t upto);
/* The id every job up to which is committed and shown. Any thread. */
int64_t jobs_committed_upto(void);
/* Job id has left memory (set before its view leaves the table), and the
 * highest such id: no job above it is read back from the database, so
 * that reads need the database only once a job has left. Any thread. */
void jobs_evicted_note(int64_t id);
int64_t jobs_evicted_max(void);
/* The same for maintenance requests and reservations: one has left
 * memory (noted before the list without it is published), and the
 * highest such id (0: none). Any thread. */
void maint_evicted_note(int64_t id);
int64_t maint_evicted_max(void);
void resv_evicted_note(int64_t id);
int64_t resv_evicted_max(void);
void jview_unref(struct jview *v); /* NULL-safe */

/* The table of jobs by id: chunks shared copy-on-write between the
 * scheduler thread's builder and published tables. The builder counts
 * its jobs as they come, change and go (core/jobcount.h). */
struct jobtab;
struct jobtab_builder {
    struct jobtab *work;
};
void jobtab_builder_init(struct jobtab_builder *b);
void jobtab_builder_fini(struct jobtab_builder *b);
/* Set the view of v->id (takes v). 0, or -1 when out of memory. */
int jobtab_builder_set(struct jobtab_builder *b, struct jview *v_take);
/* Remove the view of id, if any. */
void jobtab_builder_clear(struct jobtab_builder *b, int64_t id);
/* Job id was, but has no view: it left memory before one was set (read
 * light at start-up). The table's ids reach up to it (jobtab_max_id). */
void jobtab_builder_note_id(struct jobtab_builder *b, int64_t id);
/* A new immutable table with the builder's content (a reference). */
struct jobtab *jobtab_builder_publish(struct jobtab_builder *b);
void jobtab_unref(struct jobtab *t); /* NULL-safe */
/* Borrowed for the life of the table; NULL when there is no such job. */
struct jview *jobtab_get(const struct jobtab *t, int64_t id);
int64_t jobtab_max_id(const struct jobtab *t);
size_t jobtab_count(const struct jobtab *t);

/* One node of a cluster as last polled. */
struct snode {
    char *id;   /* "<cluster>/<name>" */
    char *name;
    char *state; /* as its cluster says, but "maint" in maintenance and
                    "reserved" when idle in an active reservation */
    int cpus, cpus_alloc, gpus, gpus_alloc;
    long memory_mb, memory_alloc_mb;
    struct strv features;
    struct strv queues; /* the queues it serves; empty: every queue */
    /* what a job's features are matched against: its features, then
     * KEY=VALUE of each of its annotations (adaptors/annot.h) */
    struct strv match;
    char *json;
    size_t len;
};

struct squeue {
    char *id;
    char *name;
    char *state;
    int nodes;
    long max_walltime_s;
    char *json;
    size_t len;
};

/* One cluster as last polled: built by the server thread, then immutable. */
struct scluster {
    atomic_int refs;
    char *name;
    char *adaptor;
    const char *model;
    char *state;      /* up|degraded|unreachable */
    char *error;      /* or NULL */
    unsigned caps;
    int preference;
    int hold_for_loom; /* its held native jobs are Loom's to schedule */
    int pinned_only;   /* it takes only jobs that name it (request.cluster)
                          or run in one of its reservations */
    int runs_as_user;  /* each job runs as its own account */
    char *single_account; /* every job runs as this account, so it takes
                             only this account's jobs; NULL: anyone's */
    time_t last_poll;
    struct snode *nodes;
    size_t n_nodes;
    /* its nodes by the state they show (domain_node_states; a state not
     * in it counts as unknown) */
    size_t nodes_by_state[DOMAIN_NODE_STATES_N];
    struct hmap node_index; /* name -> struct snode * */
    struct squeue *queues;
    size_t n_queues;
    char *json;       /* the cluster object */
    char *nodes_json; /* node objects joined by commas */
    size_t nodes_len;
};
struct scluster *scluster_ref(struct scluster *c);
void scluster_unref(struct scluster *c); /* NULL-safe */
/* Does the node take jobs (idle, mixed, allocated, or reserved: idle
 * inside an active reservation, whose jobs it takes)? */
int snode_usable(const struct snode *n);
struct snode *scluster_node(const struct scluster *c, const char *name);

/* A reference-counted, immutable text (e.g. the reservations as a JSON
 * array), published as a whole. */
struct stext {
    atomic_int refs;
    size_t len;
    size_t n_rows; /* an array's items: text[row[i] .. row[i+1] - 1) */
    size_t *row;   /* n_rows + 1 offsets, or NULL */
    char text[];
};
struct stext *stext_create(const char *text); /* NULL when out of memory */
/* "[p0,p1,...]" from n JSON texts (borrowed; a NULL part is skipped). */
struct stext *stext_array(char *const *parts, size_t n);
void stext_unref(struct stext *t); /* NULL-safe */

/* The lists published whole, as JSON arrays of their objects. */
enum snap_text {
    SNAP_RESV,  /* reservations (scheduler thread) */
    SNAP_MAINT, /* maintenance requests (maintenance thread) */
    SNAP_DIFF,  /* mismatches of goal and actual state (maintenance) */
    SNAP_N_TEXTS
};

struct snapshot {
    atomic_int refs;
    struct scluster **clusters; /* in configuration order */
    size_t n_clusters;
    struct jobtab *jobs;
    struct stext *text[SNAP_N_TEXTS]; /* each NULL until published */
};

/* Start with these clusters (takes the references in cs). */
void snapshot_init(struct scluster **cs, size_t n);
void snapshot_shutdown(void);
/* The current snapshot, referenced: release with snapshot_put. Any thread. */
struct snapshot *snapshot_get(void);
void snapshot_put(struct snapshot *s); /* NULL-safe */
/* Publish a new version of one cluster (server thread; takes c). */
void snapshot_publish_cluster(struct scluster *c_take);
/* Publish a new job table (scheduler thread; takes t). */
void snapshot_publish_jobs(struct jobtab *t_take);
/* Publish one of the lists (its owning thread; takes t). */
void snapshot_publish_text(enum snap_text which, struct stext *t_take);
struct scluster *snapshot_cluster(const struct snapshot *s, const char *name);
/* Wait until something is published after publication number seen (0:
 * none yet), at most timeout_s: the number of the last publication (seen
 * again when none came). Any thread. */
uint64_t snapshot_wait(uint64_t seen, double timeout_s);

#endif
