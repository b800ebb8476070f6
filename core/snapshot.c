/* snapshot.c - reference counting, copy-on-write job table, publishing. */
/* SPDX-License-Identifier: MIT */
#include "core/snapshot.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobcount.h"
#include "core/timeutil.h"

/* Jobs a chunk. A publication costs a reference per chunk of the table,
 * and a change to a published chunk a copy of it (a reference per job in
 * it); with a few chunks changed a turn, 256 keeps the sum small from
 * 10,000 to a million jobs (1,024 cost twice as much at 150,000). */
#define CHUNK 256

struct jchunk {
    atomic_int refs;
    size_t n; /* views in v; a chunk that has none is let go */
    struct jview *v[CHUNK];
};

struct jobtab {
    atomic_int refs;
    struct jchunk **chunks;
    size_t n_chunks;
    int64_t max_id;
    size_t count;
};

/* Copy s (its n bytes and a NUL) to *at, which moves past it; the copy. */
static char *put(char **at, const char *s, size_t n)
{
    char *copy = memcpy(*at, s, n);

    copy[n] = '\0';
    *at += n + 1;
    return copy;
}

/* A view's short strings live in its own allocation, after the struct,
 * and what its list filters match in one more (jview_set_match): a job
 * table of 100,000 views held six to eight small blocks per view, each
 * with malloc's header and rounding, more than the strings themselves. */
struct jview *jview_create(int64_t id, const char *state, const char *source,
                           const char *owner, const char *submitted_by,
                           const char *account, const char *cluster,
                           char *json_take, const size_t priv[2])
{
    size_t n_owner, n_by, n_account, n_cluster;
    struct jview *v;
    char *at;

    owner = owner ? owner : "";
    submitted_by = submitted_by ? submitted_by : owner;
    account = account ? account : "";
    n_owner = strlen(owner);
    n_by = strlen(submitted_by);
    n_account = strlen(account);
    n_cluster = cluster ? strlen(cluster) + 1 : 0;
    if (!json_take || !(v = calloc(1, sizeof(*v) + n_owner + n_by +
                                          n_account + n_cluster + 3))) {
        free(json_take);
        return NULL;
    }
    atomic_init(&v->refs, 1);
    v->id = id;
    v->array_task = -1;
    strncpy(v->state, state, sizeof(v->state) - 1);
    strncpy(v->source, source ? source : "", sizeof(v->source) - 1);
    at = (char *)(v + 1);
    v->owner = put(&at, owner, n_owner);
    v->submitted_by = put(&at, submitted_by, n_by);
    v->account = put(&at, account, n_account);
    v->cluster = cluster ? put(&at, cluster, n_cluster - 1) : NULL;
    v->json = json_take;
    v->len = strlen(json_take);
    if (priv && priv[0] + priv[1] <= v->len) {
        v->priv_off = priv[0];
        v->priv_len = priv[1];
    }
    return v;
}

struct jview *jview_ref(struct jview *v)
{
    atomic_fetch_add(&v->refs, 1);
    return v;
}

void jview_unref(struct jview *v)
{
    if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
        return;
    free(v->match); /* name and nodes */
    free(v->json);
    free(v); /* and its short strings */
}

int jview_set_match(struct jview *v, const char *name, const char *queue,
                    const char *tasks, char *const *nodes, size_t n_nodes)
{
    size_t size = n_nodes * sizeof(char *), n_name;
    void *block;
    char **copy, *at;

    name = name ? name : "";
    n_name = strlen(name);
    size += n_name + 1;
    size += queue ? strlen(queue) + 1 : 0;
    size += tasks ? strlen(tasks) + 1 : 0;
    for (size_t i = 0; i < n_nodes; i++)
        size += strlen(nodes[i]) + 1;
    if (!(block = malloc(size)))
        return -1;
    copy = block; /* the pointers first: they are aligned */
    at = (char *)(copy + n_nodes);
    for (size_t i = 0; i < n_nodes; i++)
        copy[i] = put(&at, nodes[i], strlen(nodes[i]));
    free(v->match);
    v->match = block;
    v->name = put(&at, name, n_name);
    v->queue = queue ? put(&at, queue, strlen(queue)) : NULL;
    v->tasks = tasks ? put(&at, tasks, strlen(tasks)) : NULL;
    v->nodes = n_nodes ? copy : NULL;
    v->n_nodes = n_nodes;
    return 0;
}

char *jview_redacted(const struct jview *v, size_t *len)
{
    char *out = malloc(v->len - v->priv_len + 1);

    if (!out)
        return NULL;
    memcpy(out, v->json, v->priv_off);
    memcpy(out + v->priv_off, v->json + v->priv_off + v->priv_len,
           v->len - v->priv_off - v->priv_len);
    *len = v->len - v->priv_len;
    out[*len] = '\0';
    return out;
}

static void chunk_unref(struct jchunk *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    for (size_t i = 0; i < CHUNK; i++)
        jview_unref(c->v[i]);
    free(c);
}

void jobtab_unref(struct jobtab *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    for (size_t i = 0; i < t->n_chunks; i++)
        chunk_unref(t->chunks[i]);
    free(t->chunks);
    free(t);
}

void jobtab_builder_init(struct jobtab_builder *b)
{
    b->work = calloc(1, sizeof(*b->work));
    if (b->work)
        atomic_init(&b->work->refs, 1);
}

void jobtab_builder_fini(struct jobtab_builder *b)
{
    jobtab_unref(b->work);
    b->work = NULL;
}

/* The chunk for idx, private to the builder (copied if shared). */
static struct jchunk *own_chunk(struct jobtab *t, size_t ci)
{
    struct jchunk *c = t->chunks[ci], *copy;

    if (c && atomic_load(&c->refs) == 1)
        return c;
    copy = calloc(1, sizeof(*copy));
    if (!copy)
        return NULL;
    atomic_init(&copy->refs, 1);
    if (c) {
        copy->n = c->n;
        for (size_t i = 0; i < CHUNK; i++)
            copy->v[i] = c->v[i] ? jview_ref(c->v[i]) : NULL;
        chunk_unref(c);
    }
    t->chunks[ci] = copy;
    return copy;
}

int jobtab_builder_set(struct jobtab_builder *b, struct jview *v)
{
    struct jobtab *t = b->work;
    size_t ci, slot;
    struct jchunk *c;

    if (!t || v->id <= 0)
        goto error;
    ci = (size_t)(v->id - 1) / CHUNK;
    slot = (size_t)(v->id - 1) % CHUNK;
    if (ci >= t->n_chunks) {
        size_t n = t->n_chunks ? t->n_chunks : 16;
        struct jchunk **chunks;
        while (n <= ci)
            n *= 2;
        chunks = realloc(t->chunks, n * sizeof(*chunks));
        if (!chunks)
            goto error;
        memset(chunks + t->n_chunks, 0,
               (n - t->n_chunks) * sizeof(*chunks));
        t->chunks = chunks;
        t->n_chunks = n;
    }
    c = own_chunk(t, ci);
    if (!c)
        goto error;
    if (!c->v[slot]) {
        t->count++;
        c->n++;
    }
    jobcount_move(c->v[slot], v);
    jview_unref(c->v[slot]);
    c->v[slot] = v;
    if (v->id > t->max_id)
        t->max_id = v->id;
    return 0;
error:
    jview_unref(v);
    return -1;
}

void jobtab_builder_clear(struct jobtab_builder *b, int64_t id)
{
    struct jobtab *t = b->work;
    size_t ci = (size_t)(id - 1) / CHUNK, slot = (size_t)(id - 1) % CHUNK;
    struct jchunk *c;

    if (!t || id <= 0 || ci >= t->n_chunks || !t->chunks[ci] ||
        !t->chunks[ci]->v[slot])
        return;
    if (t->chunks[ci]->n == 1) { /* its last: the chunk goes, uncopied */
        jobcount_move(t->chunks[ci]->v[slot], NULL);
        chunk_unref(t->chunks[ci]);
        t->chunks[ci] = NULL;
        t->count--;
        return;
    }
    c = own_chunk(t, ci);
    if (!c)
        return;
    jobcount_move(c->v[slot], NULL);
    jview_unref(c->v[slot]);
    c->v[slot] = NULL;
    c->n--;
    t->count--;
}

void jobtab_builder_note_id(struct jobtab_builder *b, int64_t id)
{
    if (b->work && id > b->work->max_id)
        b->work->max_id = id;
}

struct jobtab *jobtab_builder_publish(struct jobtab_builder *b)
{
    struct jobtab *w = b->work, *t = calloc(1, sizeof(*t));

    if (!t || !w)
        goto error;
    t->chunks = calloc(w->n_chunks ? w->n_chunks : 1, sizeof(*t->chunks));
    if (!t->chunks)
        goto error;
    atomic_init(&t->refs, 1);
    t->n_chunks = w->n_chunks;
    t->max_id = w->max_id;
    t->count = w->count;
    for (size_t i = 0; i < w->n_chunks; i++)
        if (w->chunks[i]) {
            atomic_fetch_add(&w->chunks[i]->refs, 1);
            t->chunks[i] = w->chunks[i];
        }
    return t;
error:
    free(t);
    return NULL;
}

/* Jobs are marked committed in id order (the committer answers its
 * batches, each with the ids accepted since the last, in the order they
 * were handed over); a job above the mark is published but not yet
 * committed, and not shown. */
static atomic_llong committed_upto;
/* The highest ids that left memory: of jobs, maintenance requests and
 * reservations. */
static atomic_llong evicted_max[3];

/* Raise *v to x if x is higher (never lowers it). */
static void raise_to(atomic_llong *v, int64_t x)
{
    long long cur = atomic_load(v);

    while (x > cur && !atomic_compare_exchange_weak(v, &cur, x))
        ;
}

void jobs_committed_set(int64_t upto)
{
    raise_to(&committed_upto, upto);
}

int64_t jobs_committed_upto(void)
{
    return atomic_load(&committed_upto);
}

void jobs_evicted_note(int64_t id)
{
    raise_to(&evicted_max[0], id);
}

int64_t jobs_evicted_max(void)
{
    return atomic_load(&evicted_max[0]);
}

void maint_evicted_note(int64_t id)
{
    raise_to(&evicted_max[1], id);
}

int64_t maint_evicted_max(void)
{
    return atomic_load(&evicted_max[1]);
}

void resv_evicted_note(int64_t id)
{
    raise_to(&evicted_max[2], id);
}

int64_t resv_evicted_max(void)
{
    return atomic_load(&evicted_max[2]);
}

struct jview *jobtab_get(const struct jobtab *t, int64_t id)
{
    size_t ci;

    if (!t || id <= 0 || id > atomic_load(&committed_upto))
        return NULL;
    ci = (size_t)(id - 1) / CHUNK;
    if (ci >= t->n_chunks || !t->chunks[ci])
        return NULL;
    return t->chunks[ci]->v[(size_t)(id - 1) % CHUNK];
}

int64_t jobtab_max_id(const struct jobtab *t)
{
    return t ? t->max_id : 0;
}

size_t jobtab_count(const struct jobtab *t)
{
    return t ? t->count : 0;
}

/* ---- clusters ---------------------------------------------------------- */

struct scluster *scluster_ref(struct scluster *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}

void scluster_unref(struct scluster *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    for (size_t i = 0; i < c->n_nodes; i++) {
        struct snode *n = &c->nodes[i];
        free(n->id);
        free(n->name);
        free(n->state);
        strv_fini(&n->features);
        strv_fini(&n->match);
        strv_fini(&n->queues);
        free(n->json);
    }
    for (size_t i = 0; i < c->n_queues; i++) {
        free(c->queues[i].id);
        free(c->queues[i].name);
        free(c->queues[i].state);
        free(c->queues[i].json);
    }
    hmap_fini(&c->node_index);
    free(c->nodes);
    free(c->queues);
    free(c->name);
    free(c->adaptor);
    free(c->state);
    free(c->error);
    free(c->single_account);
    free(c->json);
    free(c->nodes_json);
    free(c);
}

int snode_usable(const struct snode *n)
{
    return !strcmp(n->state, "idle") || !strcmp(n->state, "mixed") ||
           !strcmp(n->state, "allocated") || !strcmp(n->state, "reserved");
}

struct snode *scluster_node(const struct scluster *c, const char *name)
{
    return hmap_get(&c->node_index, name);
}

/* ---- publishing -------------------------------------------------------- */

static pthread_mutex_t pub_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pub_cond = PTHREAD_COND_INITIALIZER;
static struct snapshot *current;
static uint64_t generation; /* publications so far (under pub_lock) */

struct stext *stext_create(const char *text)
{
    size_t n = strlen(text);
    struct stext *t = malloc(sizeof(*t) + n + 1);

    if (!t)
        return NULL;
    atomic_init(&t->refs, 1);
    t->len = n;
    t->n_rows = 0;
    t->row = NULL;
    memcpy(t->text, text, n + 1);
    return t;
}

struct stext *stext_array(char *const *parts, size_t n)
{
    size_t len = 2, k = 0;
    struct stext *t;

    for (size_t i = 0; i < n; i++)
        len += parts[i] ? strlen(parts[i]) + 1 : 0;
    if (!(t = malloc(sizeof(*t) + len + 1)))
        return NULL;
    if (!(t->row = malloc((n + 1) * sizeof(*t->row)))) {
        free(t);
        return NULL;
    }
    atomic_init(&t->refs, 1);
    t->n_rows = 0;
    t->text[k++] = '[';
    for (size_t i = 0; i < n; i++) {
        size_t m = parts[i] ? strlen(parts[i]) : 0;
        if (!parts[i])
            continue;
        if (k > 1)
            t->text[k++] = ',';
        t->row[t->n_rows++] = k;
        memcpy(t->text + k, parts[i], m);
        k += m;
    }
    t->row[t->n_rows] = k + 1; /* as if a comma followed the last */
    t->text[k++] = ']';
    t->text[k] = '\0';
    t->len = k;
    return t;
}

void stext_unref(struct stext *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) {
        free(t->row);
        free(t);
    }
}

static void snapshot_free(struct snapshot *s)
{
    for (size_t i = 0; i < s->n_clusters; i++)
        scluster_unref(s->clusters[i]);
    free(s->clusters);
    jobtab_unref(s->jobs);
    for (int k = 0; k < SNAP_N_TEXTS; k++)
        stext_unref(s->text[k]);
    free(s);
}

void snapshot_put(struct snapshot *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        snapshot_free(s);
}

struct snapshot *snapshot_get(void)
{
    struct snapshot *s;

    pthread_mutex_lock(&pub_lock);
    s = current;
    if (s)
        atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&pub_lock);
    return s;
}

/* Replace current with a copy where cluster `c` (or the job table, or
 * the text `which`) is new. Called with pub_lock held. Allocation failure
 * keeps the old snapshot. */
static void republish(struct scluster *c, struct jobtab *jobs, int which,
                      struct stext *text)
{
    struct snapshot *old = current, *s = calloc(1, sizeof(*s));
    size_t n = old ? old->n_clusters : 0, i;

    if (!s || !(s->clusters = calloc(n + 1, sizeof(*s->clusters)))) {
        free(s);
        scluster_unref(c);
        jobtab_unref(jobs);
        stext_unref(text);
        return;
    }
    atomic_init(&s->refs, 1);
    for (i = 0; i < n; i++) {
        struct scluster *oc = old->clusters[i];
        s->clusters[i] = (c && strcmp(oc->name, c->name) == 0)
                             ? c : scluster_ref(oc);
        if (s->clusters[i] == c)
            c = NULL;
    }
    s->n_clusters = n;
    if (c) /* a cluster not seen before */
        s->clusters[s->n_clusters++] = c;
    if (jobs)
        s->jobs = jobs;
    else if (old && old->jobs) {
        atomic_fetch_add(&old->jobs->refs, 1);
        s->jobs = old->jobs;
    }
    for (int k = 0; k < SNAP_N_TEXTS; k++) {
        if (text && k == which)
            s->text[k] = text;
        else if (old && old->text[k]) {
            atomic_fetch_add(&old->text[k]->refs, 1);
            s->text[k] = old->text[k];
        }
    }
    current = s;
    generation++;
    pthread_cond_broadcast(&pub_cond);
    snapshot_put(old);
}

void snapshot_init(struct scluster **cs, size_t n)
{
    pthread_mutex_lock(&pub_lock);
    for (size_t i = 0; i < n; i++)
        republish(cs[i], NULL, 0, NULL);
    pthread_mutex_unlock(&pub_lock);
}

void snapshot_shutdown(void)
{
    pthread_mutex_lock(&pub_lock);
    snapshot_put(current);
    current = NULL;
    pthread_mutex_unlock(&pub_lock);
}

void snapshot_publish_cluster(struct scluster *c)
{
    pthread_mutex_lock(&pub_lock);
    republish(c, NULL, 0, NULL);
    pthread_mutex_unlock(&pub_lock);
}

void snapshot_publish_jobs(struct jobtab *t)
{
    pthread_mutex_lock(&pub_lock);
    republish(NULL, t, 0, NULL);
    pthread_mutex_unlock(&pub_lock);
}

void snapshot_publish_text(enum snap_text which, struct stext *t)
{
    pthread_mutex_lock(&pub_lock);
    republish(NULL, NULL, (int)which, t);
    pthread_mutex_unlock(&pub_lock);
}

uint64_t snapshot_wait(uint64_t seen, double timeout_s)
{
    struct timespec ts;
    double end = time_real() + timeout_s;
    uint64_t g;

    ts.tv_sec = (time_t)end;
    ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
    pthread_mutex_lock(&pub_lock);
    while (generation == seen &&
           pthread_cond_timedwait(&pub_cond, &pub_lock, &ts) == 0)
        ;
    g = generation;
    pthread_mutex_unlock(&pub_lock);
    return g;
}

struct scluster *snapshot_cluster(const struct snapshot *s, const char *name)
{
    for (size_t i = 0; s && i < s->n_clusters; i++)
        if (strcmp(s->clusters[i]->name, name) == 0)
            return s->clusters[i];
    return NULL;
}
