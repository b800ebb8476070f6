/* web.c - the dashboard's static files (core/web/, installed in
 * DATADIR/web): read once at start-up and served from memory at / and
 * /ui/NAME, to GET and HEAD, without a token (the page holds no data; the
 * API it calls needs one). Only the names read at start-up exist, so no
 * path can reach another file. Each answer has an ETag and Cache-Control:
 * no-cache (the browser asks again each time; 304 when nothing changed). */
/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/api/api.h"
#include "core/log.h"

#define WEB_FILES_MAX 64
#define WEB_FILE_MAX (4 << 20)

struct wfile {
    char name[64];
    char *data;
    size_t len;
    const char *ctype;
    char etag[HTTP_ETAG_SIZE];
};

static struct {
    char dir[4096];
    struct wfile f[WEB_FILES_MAX];
    size_t n;
} W;

static const struct {
    const char *ext, *ctype;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
};

/* The page may load only its own files and talk only to its own server. */
#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; " \
            "img-src 'self' data:; connect-src 'self'; base-uri 'none'; " \
            "form-action 'none'; frame-ancestors 'none'"

static const char *ctype_of(const char *name)
{
    const char *dot = strrchr(name, '.');

    for (size_t i = 0; dot && i < sizeof(types) / sizeof(*types); i++)
        if (!strcmp(dot, types[i].ext))
            return types[i].ctype;
    return NULL;
}

static int name_ok(const char *n)
{
    size_t len = strlen(n);

    if (!len || len >= sizeof(W.f[0].name) || n[0] == '.')
        return 0;
    return strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._-") == len;
}

static int read_file(const char *path, struct wfile *f)
{
    FILE *fp = fopen(path, "rb");
    struct stat st;

    if (!fp)
        return -1;
    if (fstat(fileno(fp), &st) < 0 || !S_ISREG(st.st_mode) ||
        st.st_size > WEB_FILE_MAX ||
        !(f->data = malloc((size_t)st.st_size + 1))) {
        fclose(fp);
        return -1;
    }
    f->len = fread(f->data, 1, (size_t)st.st_size, fp);
    fclose(fp);
    if (f->len != (size_t)st.st_size) {
        free(f->data);
        f->data = NULL;
        return -1;
    }
    http_etag_of(f->data, f->len, f->etag);
    return 0;
}

void api_web_load(const char *dir)
{
    DIR *d;
    struct dirent *e;
    char path[4200];

    snprintf(W.dir, sizeof(W.dir), "%s", dir);
    if (!(d = opendir(dir))) {
        log_warn("dashboard: cannot read %s (%s): / answers 404", dir,
                 strerror(errno));
        return;
    }
    while ((e = readdir(d)) && W.n < WEB_FILES_MAX) {
        struct wfile *f = &W.f[W.n];
        if (!name_ok(e->d_name) || !(f->ctype = ctype_of(e->d_name)))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (read_file(path, f) < 0) {
            log_warn("dashboard: cannot read %s (not a regular file of at "
                     "most %d bytes?)", path, WEB_FILE_MAX);
            continue;
        }
        snprintf(f->name, sizeof(f->name), "%s", e->d_name);
        W.n++;
    }
    closedir(d);
    log_info("dashboard: %zu file(s) from %s", W.n, dir);
}

void api_web_free(void)
{
    for (size_t i = 0; i < W.n; i++)
        free(W.f[i].data);
    W.n = 0;
}

static const struct wfile *find(const char *name)
{
    for (size_t i = 0; i < W.n; i++)
        if (!strcmp(W.f[i].name, name))
            return &W.f[i];
    return NULL;
}

void api_web(struct http_req *rq, struct http_resp *rs,
             const struct api_route_args *a)
{
    const struct wfile *f;
    const char *name = !strcmp(rq->path, "/") ? "index.html"
                                                     : rq->path + 4;
    struct loom_error err;

    if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0) {
        loom_error_set(&err, LOOM_EINVAL, "%s is not allowed on %s (GET or "
                       "HEAD)", rq->method, rq->path);
        goto error;
    }
    (void)a; /* the route table has refused any query parameter */
    if (!(f = strchr(name, '/') ? NULL : find(name))) {
        if (!strcmp(rq->path, "/"))
            loom_error_set(&err, LOOM_ENOENT, "the dashboard is not "
                           "installed: %s has no index.html", W.dir);
        else
            loom_error_set(&err, LOOM_ENOENT, "no such resource: %s",
                           rq->path);
        goto error;
    }
    http_header_add(rs, "Cache-Control", "no-cache");
    http_header_add(rs, "X-Content-Type-Options", "nosniff");
    if (!strcmp(f->ctype, types[0].ctype)) {
        http_header_add(rs, "Content-Security-Policy", CSP);
        http_header_add(rs, "Referrer-Policy", "no-referrer");
    }
    if (http_etag_answer(rq, rs, f->etag))
        return;
    rs->status = 200;
    rs->ctype = f->ctype;
    rs->data = f->data;
    rs->data_len = f->len;
    return;
error:
    http_error(rs, &err);
}
