/* stored.c - jobs that ended and left loomd's memory (the scheduler's
 * job_memory_s), read from PostgreSQL through the history's connection:
 * one job by id, and a submit's Idempotency-Key used before. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/jsonx.h"
#include "core/log.h"
#include "core/store_jobs_read.h"
#include "scheduler/job.h"

/* The highest id a read of the database looks at: one that left memory
 * and is shown; those above are the table's (or not shown yet). */
static int64_t stored_upto(void)
{
    int64_t gone = jobs_evicted_max(), shown = jobs_committed_upto();

    return gone < shown ? gone : shown;
}

/* Job id's stored document (a new string): 1, 0 when none, -1. A job
 * not yet shown (committed while a smaller id is not) is none yet, as in
 * the job table; one above every id that left memory was never there. */
static int doc_of(int64_t id, char **doc, struct loom_error *err)
{
    struct store *st;
    int rc;

    *doc = NULL;
    if (id > stored_upto())
        return 0;
    if (!(st = api_reader_get(err)))
        return -1;
    rc = store_job_doc(st, id, doc, err);
    api_reader_put();
    return rc;
}

/* A stored row that is not a job loomd wrote: an internal error, not the
 * asker's. -1. */
static int unreadable(int64_t id, struct loom_error *err)
{
    char why[sizeof(err->message)];

    snprintf(why, sizeof(why), "%s", err->message);
    return loom_error_set(err, LOOM_EINTERNAL, "job %lld: its stored row is "
                          "not a job Loom can read (%.200s)", (long long)id,
                          why);
}

int api_stored_view(int64_t id, struct jview **v, struct loom_error *err)
{
    char *doc = NULL;
    int rc = doc_of(id, &doc, err);

    if (rc <= 0)
        return rc;
    *v = job_view_from_doc(doc, err);
    free(doc);
    if (!*v && err->kind == LOOM_EINVAL) /* not the asker's fault */
        return unreadable(id, err);
    return *v ? 1 : -1;
}

int api_stored_job(int64_t id, struct job **j, struct loom_error *err)
{
    char *doc = NULL;
    json_t *o;
    int rc = doc_of(id, &doc, err);

    if (rc <= 0)
        return rc;
    o = json_loads(doc, 0, NULL);
    free(doc);
    if (!o)
        return loom_error_set(err, LOOM_EINTERNAL, "job %lld: its stored "
                              "document is not JSON", (long long)id);
    *j = job_from_doc(o, err);
    json_decref(o);
    if (!*j && err->kind == LOOM_EINVAL)
        return unreadable(id, err);
    return *j ? 1 : -1;
}

int api_stored_idem(const char *submitter, const char *key, const char *hash,
                    struct http_resp *rs, struct loom_error *err)
{
    struct store *st = api_reader_get(err);
    struct snapshot *s;
    struct jview *v;
    char *old_hash = NULL, *doc = NULL;
    int64_t id = 0;
    int rc;

    /* Always the database, and without a bound: besides the jobs that
     * left memory, a commit whose answer was lost (PostgreSQL killed
     * after its COMMIT) leaves a job there that loomd answered 503 and
     * forgot; its retry must get it, not a second job (9007). */
    if (!st)
        return -1;
    rc = store_job_by_idem(st, submitter, key, &id, &old_hash, &doc, err);
    api_reader_put();
    if (rc <= 0)
        return rc;
    if (strcmp(old_hash, hash) != 0) {
        loom_error_field(err, LOOM_ECONFLICT, "Idempotency-Key",
                         "Idempotency-Key '%s' was used for another request "
                         "(job %lld)", key, (long long)id);
        http_error(rs, err);
        rc = 1;
        goto out;
    }
    /* the job as it is now: from memory while it is there */
    s = snapshot_get();
    v = s ? jobtab_get(s->jobs, id) : NULL;
    if (v) {
        rs->view = jview_ref(v);
        rs->status = 200;
    }
    snapshot_put(s);
    if (!v && !(v = job_view_from_doc(doc, err))) {
        rc = -1;
        goto out;
    }
    if (!rs->view) {
        rs->view = v;
        rs->status = 200;
    }
out:
    free(old_hash);
    free(doc);
    return rc;
}

/* A row of a page read, kept as text until the reader is given back. */
struct row {
    int64_t id;
    char *doc;
};

struct page {
    const struct jobtab *t;
    struct row *row;
    size_t n_row;
    int64_t last;
    int oom;
};

static int page_row(void *arg, int64_t id, const char *doc)
{
    struct page *p = arg;

    p->last = id;
    /* still in memory: shown from there; not shown yet: not listed */
    if (id > jobs_committed_upto() || jobtab_get(p->t, id))
        return 0;
    if (!(p->row[p->n_row].doc = strdup(doc))) {
        p->oom = 1;
        return 1;
    }
    p->row[p->n_row++].id = id;
    return 0;
}

/* The views of p's rows into v, *n_v of them: 0, or -1 with err (none
 * kept). A row loomd did not write as a job is not one, and said so. */
static int page_views(const struct page *p, struct jview **v, size_t *n_v,
                      struct loom_error *err)
{
    struct loom_error e;

    for (size_t i = 0; i < p->n_row; i++) {
        if ((v[*n_v] = job_view_from_doc(p->row[i].doc, &e))) {
            (*n_v)++;
            continue;
        }
        if (e.kind != LOOM_EINVAL) {
            while (*n_v)
                jview_unref(v[--*n_v]);
            *err = e;
            return -1;
        }
        log_warn("job %lld: its stored row is not a job Loom can read "
                 "(%s); not listed", (long long)p->row[i].id, e.message);
    }
    return 0;
}

long api_stored_page(const struct jobtab *t, int64_t after, long n,
                     const struct store_ended_filter *f, struct jview **v,
                     size_t *n_v, int64_t *last, struct loom_error *err)
{
    struct page p = {t, calloc((size_t)n, sizeof(*p.row)), 0, after, 0};
    struct store *st;
    long rows;

    *n_v = 0;
    *last = after;
    if (!p.row)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (!(st = api_reader_get(err))) {
        free(p.row);
        return -1;
    }
    rows = store_jobs_ended(st, after, n, stored_upto(), f, page_row, &p,
                            err);
    api_reader_put();
    if (rows >= 0 && p.oom)
        rows = loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (rows >= 0 && page_views(&p, v, n_v, err) < 0)
        rows = -1;
    for (size_t i = 0; i < p.n_row; i++)
        free(p.row[i].doc);
    free(p.row);
    *last = p.last;
    return rows;
}
