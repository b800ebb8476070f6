/* output.c - GET /v1/jobs/{id}/output: a job's output, read as its
 * account through loom-runas. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "adaptors/server.h"
#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonw.h"
#include "core/runas_call.h"

#define READ_MAX (1 << 20)   /* bytes in one answer */
#define READ_TIMEOUT_S 15.0  /* loom-runas read gives up after 10 s */

/* What the job's record says of it. Strings borrowed from doc. */
struct out_job {
    json_t *doc;
    const char *id, *state, *cluster, *account, *path;
    int final;
};

static int job_final(const char *state)
{
    return !strcmp(state, "completed") || !strcmp(state, "failed") ||
           !strcmp(state, "cancelled");
}

/* The job as those who see all of it see it (api_job_see: its owner, the
 * gateway that submitted it, operators, admins); another's is as one
 * that does not exist. */
static int out_job_get(struct http_req *rq, const char *idstr,
                       const char *stream, struct out_job *j,
                       struct loom_error *err)
{
    struct snapshot *s = snapshot_get();
    struct jview *v = NULL, *stored = NULL;
    int64_t id = 0;

    memset(j, 0, sizeof(*j));
    if (domain_id_parse(idstr, &id) == 0)
        v = s ? jobtab_get(s->jobs, id) : NULL;
    /* ended and gone from memory: as it was stored */
    if (!v && id > 0 && s && id <= jobtab_max_id(s->jobs) &&
        api_stored_view(id, &stored, err) < 0) {
        snapshot_put(s);
        return -1;
    }
    if (!v)
        v = stored;
    if (v && api_job_see(rq, v) == API_SEE_ALL)
        j->doc = json_loadb(v->json, v->len, 0, NULL);
    jview_unref(stored);
    snapshot_put(s);
    if (!j->doc)
        return loom_error_set(err, LOOM_ENOENT, "no job '%s'", idstr);
    j->id = json_string_value(json_object_get(j->doc, "id"));
    j->state = json_string_value(json_object_get(j->doc, "state"));
    j->cluster = json_string_value(json_object_get(j->doc, "cluster"));
    j->account = json_string_value(json_object_get(j->doc, "account"));
    j->path = json_string_value(json_object_get(j->doc, stream));
    j->final = j->state && job_final(j->state);
    return 0;
}

/* args[2] (the path loom-runas opens) and, for a file of the job's run
 * directory, the directory open on *fd: its account owns it but cannot
 * reach it by its path. */
static void read_path(const struct out_job *j, char *buf, size_t size,
                      int *fd)
{
    char run[PATH_MAX];
    size_t n;

    *fd = -1;
    snprintf(buf, size, "%s", j->path);
    if (!j->cluster || server_run_dir(j->cluster, strtoll(j->id, NULL, 10),
                                      run, sizeof(run)) < 0)
        return;
    n = strlen(run);
    if (strncmp(j->path, run, n) != 0 || j->path[n] != '/' ||
        strchr(j->path + n + 1, '/'))
        return;
    *fd = open(run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd >= 0)
        snprintf(buf, size, "%s", j->path + n + 1);
}

/* {"stream", "path", "offset", "next_offset", "size", "data", "eof"}. */
static char *answer(const char *stream, const struct out_job *j,
                    long long offset, long long size, const char *data,
                    size_t len)
{
    long long next = offset + (long long)len;
    struct jw w;

    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_str(&w, "stream", stream);
    jw_kv_str(&w, "path", j->path);
    jw_kv_int(&w, "offset", offset);
    jw_kv_int(&w, "next_offset", next);
    jw_kv_int(&w, "size", size);
    jw_key(&w, "data");
    jw_strn(&w, data ? data : "", len);
    jw_key(&w, "eof");
    jw_bool(&w, j->final && next >= size);
    jw_close(&w, '}');
    return jw_finish(&w);
}

/* Read from offset as the job's account; the answer's text, or NULL with
 * err. */
static char *read_output(const char *stream, const struct out_job *j,
                         long long offset, struct loom_error *err)
{
    char path[PATH_MAX], off[32], max[32];
    const char *args[] = {"read", j->account, path, off, max, NULL};
    struct proc_result r;
    long long size;
    char *nl, *text;
    size_t len;
    int fd, rc;

    read_path(j, path, sizeof(path), &fd);
    snprintf(off, sizeof(off), "%lld", offset);
    snprintf(max, sizeof(max), "%d", READ_MAX);
    rc = runas_call(NULL, args, fd, READ_TIMEOUT_S, READ_MAX + 64, &r, err);
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        /* not written yet: the job has not come so far */
        if (err->kind == LOOM_ENOENT && !j->final)
            return answer(stream, j, offset, 0, NULL, 0);
        loom_error_prefix(err, "job %s: %s %s", j->id, stream, j->path);
        return NULL;
    }
    nl = memchr(r.out, '\n', r.out_len);
    if (!nl || sscanf(r.out, "size %lld", &size) != 1) {
        proc_result_fini(&r);
        loom_error_set(err, LOOM_EINTERNAL, "job %s: %s: loom-runas read "
                       "answered without its size", j->id, stream);
        return NULL;
    }
    len = r.out_len - (size_t)(nl + 1 - r.out);
    /* a character cut at the end comes whole with the next read */
    if (!(j->final && offset + (long long)len >= size))
        len = jw_utf8_whole(nl + 1, len);
    text = answer(stream, j, offset, size, nl + 1, len);
    proc_result_fini(&r);
    if (!text)
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return text;
}

void api_jobs_output(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a)
{
    const char *stream = api_param(a, "stream"), *o = api_param(a, "offset");
    long long offset = o ? strtoll(o, NULL, 10) : 0; /* checked: a number */
    struct loom_error err;
    struct out_job j;

    stream = stream ? stream : "stdout";
    loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    /* the route is /v1/jobs/{id}/output: a->seg[1] is the id */
    if (out_job_get(rq, a->seg[1], stream, &j, &err) < 0) {
        http_error(rs, &err);
        return;
    }
    if (!j.path && !j.final) { /* not started: nothing yet */
        rs->body = answer(stream, &j, offset, 0, NULL, 0);
    } else if (!j.path || !j.account) {
        loom_error_set(&err, LOOM_ENOENT, "job %s has no %s file to read (%s)",
                       j.id, stream, !j.path ? "it never ran, or its "
                       "cluster does not say where its output went"
                                          : "no account is known to read "
                                            "it as");
    } else {
        rs->body = read_output(stream, &j, offset, &err);
    }
    json_decref(j.doc);
    if (!rs->body) {
        http_error(rs, &err);
        return;
    }
    rs->status = 200;
}
