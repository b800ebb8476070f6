/* directives.c - the directive lines of a script: found before its first
 * command, split into options, read with the table of their system. */
/* SPDX-License-Identifier: MIT */
#include "core/directives.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/directives_table.h"
#include "core/jsonw.h"

static const struct dir_system *const systems[] = {
    &dir_slurm, &dir_sge, &dir_pbs, NULL,
};

static atomic_int mode_now = DIRECTIVES_STRICT;

void directives_mode_set(enum directives_mode mode)
{
    atomic_store(&mode_now, (int)mode);
}

enum directives_mode directives_mode(void)
{
    return (enum directives_mode)atomic_load(&mode_now);
}

int directives_mode_parse(const char *text, enum directives_mode *mode)
{
    if (!strcmp(text, "strict"))
        *mode = DIRECTIVES_STRICT;
    else if (!strcmp(text, "warn"))
        *mode = DIRECTIVES_WARN;
    else
        return -1;
    return 0;
}

/* ---- lines ------------------------------------------------------------ */

/* The system whose prefix begins line [p, end), or NULL. */
static const struct dir_system *system_of(const char *p, const char *end)
{
    for (int i = 0; systems[i]; i++) {
        size_t n = strlen(systems[i]->prefix);
        if ((size_t)(end - p) >= n && !memcmp(p, systems[i]->prefix, n))
            return systems[i];
    }
    return NULL;
}

/* Is line [p, end) blank or a comment (which a directive also is)? */
static int not_a_command(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p == end || *p == '#';
}

/* Call fn for each line of the script's header: the lines before its
 * first command (blank lines and comments, the #! line among them), with
 * the system of the directive the line is, or NULL. fn returns 0 to go
 * on, -1 to stop. */
typedef int (*line_cb)(void *arg, int line, const char *p, const char *end,
                       const struct dir_system *sys);

static int each_header_line(const char *script, line_cb fn, void *arg)
{
    const char *p = script, *end;
    int line = 0;

    for (; *p; p = *end ? end + 1 : end) {
        end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        line++;
        if (!not_a_command(p, end))
            return 0;
        if (fn(arg, line, p, end, system_of(p, end)) < 0)
            return -1;
    }
    return 0;
}

/* ---- words -------------------------------------------------------------- */

/* The words of a directive's text [p, end) into w: split at blanks, quotes
 * ('...' and "...") removed, a word beginning with # and what follows it
 * a comment. 0, or -1 with err. */
static int words_of(const char *p, const char *end, struct strv *w,
                    struct loom_error *err)
{
    char *buf = malloc((size_t)(end - p) + 1);
    size_t n;
    char q;

    if (!buf)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p == end || *p == '#')
            break;
        for (n = 0, q = 0; p < end; p++) {
            if (q && *p == q) {
                q = 0;
            } else if (!q && (*p == '\'' || *p == '"')) {
                q = *p;
            } else if (!q && (*p == ' ' || *p == '\t' || *p == '\r')) {
                break;
            } else {
                buf[n++] = *p;
            }
        }
        buf[n] = '\0';
        if (q) {
            free(buf);
            return loom_error_set(err, LOOM_EINVAL, "a quote (%c) is not "
                                  "closed", q);
        }
        if (strv_push(w, buf) < 0) {
            free(buf);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    }
    free(buf);
    return 0;
}

/* "#SBATCH" and words [from, to) joined by blanks: a new string. */
static char *directive_text(const struct dir_system *sys,
                            const struct strv *w, size_t from, size_t to)
{
    size_t n = strlen(sys->prefix), len = n + 1;
    char *t;

    for (size_t i = from; i < to; i++)
        len += strlen(w->v[i]) + 1;
    t = malloc(len);
    if (!t)
        return NULL;
    memcpy(t, sys->prefix, n);
    for (size_t i = from; i < to; i++) {
        size_t k = strlen(w->v[i]);
        t[n++] = ' ';
        memcpy(t + n, w->v[i], k);
        n += k;
    }
    t[n] = '\0';
    return t;
}

/* ---- options ------------------------------------------------------------ */

/* The row of sys that word names, or NULL; *val is the value written in
 * the word itself (--time=5, -N2), or NULL. */
static const struct dir_opt *find_opt(const struct dir_system *sys,
                                      const char *word, const char **val)
{
    const struct dir_opt *o;
    size_t n;

    *val = NULL;
    if (word[0] != '-' || !word[1])
        return NULL;
    for (o = sys->opts; o->short_name || o->long_name; o++) {
        if (sys->style == DIR_GETOPT_LONG && word[1] == '-' &&
            o->long_name) {
            n = strlen(o->long_name);
            if (strncmp(word + 2, o->long_name, n) != 0 ||
                (word[2 + n] && word[2 + n] != '='))
                continue;
            *val = word[2 + n] ? word + 3 + n : NULL;
            return o;
        }
        if (sys->style == DIR_DASH_WORD && o->long_name &&
            !strcmp(word + 1, o->long_name))
            return o;
        if (sys->style != DIR_DASH_WORD && word[1] != '-' &&
            o->short_name == word[1]) {
            *val = word[2] ? word + 2 : NULL;
            return o;
        }
    }
    return NULL;
}

/* Read the option at w->v[*i] into ctx; *i is then past its words (past
 * the rest of the line for an option Loom does not know, whose values it
 * cannot tell). 0, or -1 with err saying why. */
static int read_option(const struct dir_system *sys, const struct strv *w,
                       size_t *i, struct dir_ctx *ctx, struct loom_error *err)
{
    const char *val, *val2 = NULL;
    const struct dir_opt *o = find_opt(sys, w->v[*i], &val);

    (*i)++;
    if (!o) {
        int option = w->v[*i - 1][0] == '-';
        *i = w->n;
        return loom_error_set(err, LOOM_EINVAL, "%s", option
                              ? "not supported by Loom"
                              : "not an option (an option begins with -)");
    }
    if ((o->arg == DA_ONE || o->arg == DA_TWO) && !val && *i < w->n)
        val = w->v[(*i)++];
    if (o->arg == DA_TWO && *i < w->n)
        val2 = w->v[(*i)++];
    if (!o->read && dir_slot_check(o->slot, err) < 0)
        return -1;
    if (o->arg == DA_NONE && val)
        return loom_error_set(err, LOOM_EINVAL, "takes no value");
    if ((o->arg == DA_ONE || o->arg == DA_TWO) &&
        (!val || !*val || (o->arg == DA_TWO && !val2)))
        return loom_error_set(err, LOOM_EINVAL, "needs %s",
                              o->arg == DA_TWO ? "two values" : "a value");
    if (o->read)
        return o->read(ctx, val, val2, err);
    if (o->arg == DA_NONE)
        return dir_put_num(ctx, o->slot, 1, err);
    return dir_put_text(ctx, o->slot, val, err);
}

/* ---- reading a script ---------------------------------------------------- */

struct reader {
    struct dir_set set;
    const struct dir_system *sys; /* of the first directive */
    int sys_line;
    enum directives_mode mode;
    json_t *warnings;
    struct loom_error *err;
};

/* A directive Loom cannot apply: refused, or (warn) kept as ignored with a
 * warning. text is taken. 0 to go on, -1 to stop (err set). */
static int cannot(struct reader *r, int line, char *text,
                  struct loom_error *why)
{
    struct loom_error *err = r->err;
    struct dir_ctx none = {0};
    char msg[sizeof(err->message)];

    if (why->kind == LOOM_EINTERNAL || !text) {
        free(text);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    /* cut where a UTF-8 sequence ends: the warning is a JSON string */
    snprintf(msg, sizeof(msg), "line %d: %.*s: %.*s", line,
             (int)jw_utf8_whole(text, strnlen(text, 200)), text,
             (int)jw_utf8_whole(why->message, strnlen(why->message, 280)),
             why->message);
    if (r->mode == DIRECTIVES_STRICT) {
        free(text);
        return loom_error_field(err, LOOM_EINVAL, "script", "%s", msg);
    }
    if (json_array_append_new(r->warnings, json_string(msg)) < 0) {
        free(text);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    if (dir_commit(&r->set, line, text, &none, why->message) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

/* The options of one directive line. */
static int read_words(struct reader *r, int line, const struct strv *w)
{
    struct loom_error why = {0};
    struct dir_ctx ctx = {0};
    size_t i = 0, from;
    char *text;
    int rc;

    while (i < w->n) {
        from = i;
        rc = read_option(r->sys, w, &i, &ctx, &why);
        text = directive_text(r->sys, w, from, i);
        if (rc < 0) {
            dir_ctx_fini(&ctx);
            memset(&ctx, 0, sizeof(ctx));
            if (cannot(r, line, text, &why) < 0)
                return -1;
        } else if (!text || dir_commit(&r->set, line, text, &ctx, NULL) < 0) {
            dir_ctx_fini(&ctx);
            return loom_error_set(r->err, LOOM_EINTERNAL, "out of memory");
        }
    }
    return 0;
}

static int read_line(void *arg, int line, const char *p, const char *end,
                     const struct dir_system *sys)
{
    struct reader *r = arg;
    struct loom_error why = {0};
    struct strv w = {0};
    int rc;

    if (!sys)
        return 0;
    p += strlen(sys->prefix);
    if (!r->sys) {
        r->sys = sys;
        r->sys_line = line;
    }
    if (words_of(p, end, &w, &why) == 0 && sys != r->sys)
        loom_error_set(&why, LOOM_EINVAL, "the script's directives are %s "
                       "lines (the first is line %d): Loom reads those of "
                       "one system", r->sys->prefix, r->sys_line);
    if (why.kind == LOOM_OK) {
        rc = read_words(r, line, &w);
    } else {
        rc = cannot(r, line, directive_text(sys, &w, 0, w.n), &why);
    }
    strv_fini(&w);
    return rc;
}

int directives_apply(json_t *body, enum directives_mode mode,
                     json_t **record, json_t **warnings,
                     struct loom_error *err)
{
    const char *script = json_string_value(json_object_get(body, "script"));
    struct reader r = {.mode = mode, .err = err};
    int rc = -1;

    *record = *warnings = NULL;
    if (!script)
        return dir_workdir_default(body, NULL, err);
    if (!(r.warnings = json_array())) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (each_header_line(script, read_line, &r) < 0)
        goto out;
    r.set.sys = r.sys;
    if ((r.set.n && dir_request(&r.set, body, record, err) < 0) ||
        dir_workdir_default(body, r.sys, err) < 0)
        goto out;
    if (json_array_size(r.warnings)) {
        *warnings = r.warnings;
        r.warnings = NULL;
    }
    rc = 0;
out:
    json_decref(r.warnings);
    dir_set_fini(&r.set);
    return rc;
}

int directives_want_env(const char *script)
{
    struct loom_error err;
    struct reader r = {.mode = DIRECTIVES_WARN, .err = &err};
    int want;

    if (!(r.warnings = json_array()))
        return 0;
    want = each_header_line(script, read_line, &r) == 0 &&
           r.set.last[DS_EXPORT] &&
           dir_export_needs_env(r.set.text[DS_EXPORT]);
    json_decref(r.warnings);
    dir_set_fini(&r.set);
    return want;
}

/* ---- the copy a cluster system gets ------------------------------------ */

struct spans {
    size_t n, cap;
    size_t *start; /* offsets of the directive lines' first bytes */
    size_t *end;   /* and of their ends (a newline, or the string's end) */
    const char *base;
    int oom;
};

static int span_cb(void *arg, int line, const char *p, const char *end,
                   const struct dir_system *sys)
{
    struct spans *s = arg;

    if (!sys)
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        size_t *a = realloc(s->start, cap * sizeof(*a));
        size_t *b = a ? realloc(s->end, cap * sizeof(*b)) : NULL;
        if (a)
            s->start = a;
        if (!b) {
            s->oom = 1;
            return -1;
        }
        s->end = b;
        s->cap = cap;
    }
    s->start[s->n] = (size_t)(p - s->base);
    s->end[s->n++] = (size_t)(end - s->base);
    return 0;
}

/* The script with each directive line rewritten: "#LOOM-" and the line
 * after its '#' (neutralise), or nothing, its newline included (strip). */
static char *rewrite(const char *script, int strip)
{
    struct spans s = {.base = script};
    size_t len = strlen(script), at = 0, o = 0;
    char *out = NULL;

    each_header_line(script, span_cb, &s);
    if (!s.oom)
        out = malloc(len + 5 * s.n + 1);
    for (size_t i = 0; out && i <= s.n; i++) {
        size_t upto = i < s.n ? s.start[i] : len;
        memcpy(out + o, script + at, upto - at);
        o += upto - at;
        if (i == s.n)
            break;
        at = s.end[i] + (script[s.end[i]] == '\n');
        if (strip)
            continue;
        memcpy(out + o, "#LOOM-", 6);
        o += 6;
        memcpy(out + o, script + s.start[i] + 1, at - s.start[i] - 1);
        o += at - s.start[i] - 1;
    }
    if (out)
        out[o] = '\0';
    free(s.start);
    free(s.end);
    return out;
}

char *directives_neutralise(const char *script)
{
    return rewrite(script, 0);
}

char *directives_strip(const char *script)
{
    return rewrite(script, 1);
}
