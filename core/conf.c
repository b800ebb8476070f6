/* conf.c - the loom.conf parser and typed getters. */
/* SPDX-License-Identifier: MIT */
#include "core/conf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/domain.h"
#include "core/limits.h"

#define CONF_MAX_BYTES (4 << 20)

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static void section_fini(struct conf_section *s)
{
    for (size_t i = 0; i < s->n_entries; i++) {
        free(s->entries[i].key);
        free(s->entries[i].value);
    }
    free(s->entries);
    free(s->kind);
    free(s->name);
}

void conf_destroy(struct conf *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_sections; i++)
        section_fini(&c->sections[i]);
    free(c->sections);
    free(c->file);
    free(c);
}

struct conf_section *conf_section(struct conf *c, const char *kind,
                                  const char *name)
{
    for (size_t i = 0; i < c->n_sections; i++) {
        struct conf_section *s = &c->sections[i];
        if (strcmp(s->kind, kind) == 0 && (!name || strcmp(s->name, name) == 0))
            return s;
    }
    return NULL;
}

static int valid_name(const char *n)
{
    if (!*n || strlen(n) > 63)
        return 0;
    for (; *n; n++)
        if (!isalnum((unsigned char)*n) && *n != '-' && *n != '_' && *n != '.')
            return 0;
    return 1;
}

/* The name of a [limits] section: an account, vo=GROUP or gateway=NAME
 * (a gateway's identity: printable, no blanks). */
static int valid_limits_name(const char *n)
{
    if (!strncmp(n, "vo=", 3))
        return domain_group_valid(n + 3);
    if (!strncmp(n, "gateway=", 8)) {
        n += 8;
        if (!*n || strlen(n) > LOOM_GRID_IDENTITY_MAX)
            return 0;
        for (; *n; n++)
            if ((unsigned char)*n <= ' ' || (unsigned char)*n >= 0x7f)
                return 0;
        return 1;
    }
    return valid_name(n);
}

static int add_section(struct conf *c, char *hdr, int line,
                       struct loom_error *err)
{
    char *kind = trim(hdr), *name = "", *sp;
    struct conf_section *s;

    sp = strpbrk(kind, " \t");
    if (sp) {
        *sp = '\0';
        name = trim(sp + 1);
    }
    if (strcmp(kind, "loomd") == 0 || strcmp(kind, "scheduler") == 0 ||
        strcmp(kind, "maintenance") == 0) {
        if (*name)
            return loom_error_set(err, LOOM_EINVAL,
                                  "%s:%d: [%s] takes no name", c->file, line,
                                  kind);
    } else if (strcmp(kind, "limits") == 0) {
        /* [limits] for every account, [limits ACCOUNT] for one, and
         * [limits vo=GROUP] or [limits gateway=NAME] */
        if (*name && !valid_limits_name(name))
            return loom_error_set(err, LOOM_EINVAL,
                                  "%s:%d: [limits %s]: give an account "
                                  "name of letters, digits, '-', '_' or '.', "
                                  "vo=GROUP (a group such as /atlas) or "
                                  "gateway=NAME (a gateway's identity, "
                                  "without blanks)", c->file, line, name);
    } else if (strcmp(kind, "cluster") == 0 || strcmp(kind, "action") == 0 ||
               strcmp(kind, "rule") == 0 || strcmp(kind, "issuer") == 0) {
        if (!valid_name(name))
            return loom_error_set(err, LOOM_EINVAL,
                                  "%s:%d: [%s NAME] needs a name of "
                                  "letters, digits, '-', '_' or '.'",
                                  c->file, line, kind);
    } else {
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: unknown section [%s]",
                              c->file, line, kind);
    }
    if (conf_section(c, kind, name))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: duplicate section [%s%s%s]",
                              c->file, line, kind, *name ? " " : "", name);
    s = realloc(c->sections, (c->n_sections + 1) * sizeof(*s));
    if (!s)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    c->sections = s;
    s = &c->sections[c->n_sections++];
    memset(s, 0, sizeof(*s));
    s->kind = strdup(kind);
    s->name = strdup(name);
    s->line = line;
    s->file = c->file;
    return 0;
}

static int add_entry(struct conf *c, char *text, int line,
                     struct loom_error *err)
{
    struct conf_section *s;
    struct conf_entry *e;
    char *eq = strchr(text, '='), *key, *value;

    if (c->n_sections == 0)
        return loom_error_set(err, LOOM_EINVAL,
                              "%s:%d: key outside of any section", c->file, line);
    if (!eq)
        return loom_error_set(err, LOOM_EINVAL,
                              "%s:%d: expected 'key = value'", c->file, line);
    *eq = '\0';
    key = trim(text);
    value = trim(eq + 1);
    if (!*key)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: empty key", c->file, line);
    s = &c->sections[c->n_sections - 1];
    for (size_t i = 0; i < s->n_entries; i++)
        if (strcmp(s->entries[i].key, key) == 0)
            return loom_error_set(err, LOOM_EINVAL,
                                  "%s:%d: duplicate key '%s' (first on line %d)",
                                  c->file, line, key, s->entries[i].line);
    e = realloc(s->entries, (s->n_entries + 1) * sizeof(*e));
    if (!e)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    s->entries = e;
    e = &s->entries[s->n_entries++];
    e->key = strdup(key);
    e->value = strdup(value);
    e->line = line;
    e->used = 0;
    return 0;
}

/* A comment starts with '#' or ';' at the start of a line, or with " #" /
 * "\t#" after a value. */
static void strip_comment(char *s)
{
    char *p = s;

    while (isspace((unsigned char)*p))
        p++;
    if (*p == '#' || *p == ';') {
        *s = '\0';
        return;
    }
    for (p = s; *p; p++)
        if ((*p == '#' || *p == ';') && p > s && isspace((unsigned char)p[-1])) {
            *p = '\0';
            return;
        }
}

struct conf *conf_parse(const char *name, const char *text,
                        struct loom_error *err)
{
    struct conf *c = calloc(1, sizeof(*c));
    char *copy = strdup(text), *cur, *nl;
    int line = 0;

    if (!c || !copy) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    c->file = strdup(name);
    for (cur = copy; cur; cur = nl) {
        char *s;

        nl = strchr(cur, '\n');
        if (nl)
            *nl++ = '\0';
        line++;
        strip_comment(cur);
        s = trim(cur);
        if (!*s)
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end || *trim(end + 1)) {
                loom_error_set(err, LOOM_EINVAL, "%s:%d: bad section header",
                               c->file, line);
                goto error;
            }
            *end = '\0';
            if (add_section(c, s + 1, line, err) < 0)
                goto error;
        } else if (add_entry(c, s, line, err) < 0) {
            goto error;
        }
    }
    free(copy);
    return c;
error:
    free(copy);
    conf_destroy(c);
    return NULL;
}

/* The file open as f must be one that only its owner may read or write. */
static int check_private(FILE *f, const char *path, struct loom_error *err)
{
    struct stat st;

    if (fstat(fileno(f), &st) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s: %s", path,
                              strerror(errno));
    if (!S_ISREG(st.st_mode))
        return loom_error_set(err, LOOM_EINVAL, "%s is not a regular file",
                              path);
    if (st.st_mode & 077)
        return loom_error_set(err, LOOM_EINVAL,
                              "%s may be read or written by group or others "
                              "(mode %04o), and it holds the database "
                              "connection; chmod 600 it",
                              path, (unsigned)(st.st_mode & 07777));
    return 0;
}

static struct conf *load(const char *path, int private,
                         struct loom_error *err)
{
    FILE *f = fopen(path, "re");
    struct conf *c = NULL;
    char *buf = NULL;
    size_t len;

    if (!f) {
        loom_error_set(err, LOOM_EINVAL, "%s: cannot open: %s", path,
                       strerror(errno));
        return NULL;
    }
    if (private && check_private(f, path, err) < 0)
        goto out;
    buf = malloc(CONF_MAX_BYTES + 1);
    if (!buf) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    len = fread(buf, 1, CONF_MAX_BYTES + 1, f);
    if (ferror(f) || len > CONF_MAX_BYTES) {
        loom_error_set(err, LOOM_EINVAL, "%s: %s", path,
                       ferror(f) ? "read error" : "larger than 4 MiB");
        goto out;
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        loom_error_set(err, LOOM_EINVAL, "%s: contains a NUL byte", path);
        goto out;
    }
    c = conf_parse(path, buf, err);
out:
    free(buf);
    fclose(f);
    return c;
}

struct conf *conf_load(const char *path, struct loom_error *err)
{
    return load(path, 0, err);
}

struct conf *conf_load_private(const char *path, struct loom_error *err)
{
    return load(path, 1, err);
}

static struct conf_entry *find(struct conf_section *s, const char *key)
{
    for (size_t i = 0; i < s->n_entries; i++)
        if (strcmp(s->entries[i].key, key) == 0) {
            s->entries[i].used = 1;
            return &s->entries[i];
        }
    return NULL;
}

const char *conf_get(struct conf_section *s, const char *key)
{
    struct conf_entry *e = s ? find(s, key) : NULL;
    return e ? e->value : NULL;
}

static int bad(struct conf_section *s, struct conf_entry *e,
               struct loom_error *err, const char *what)
{
    return loom_error_set(err, LOOM_EINVAL, "%s:%d: key '%s': %s (got '%s')",
                          s->file, e->line, e->key, what, e->value);
}

int conf_get_str(struct conf_section *s, const char *key, const char *def,
                 const char **out, struct loom_error *err)
{
    struct conf_entry *e = s ? find(s, key) : NULL;

    if (e && !*e->value)
        return bad(s, e, err, "empty value");
    *out = e ? e->value : def;
    return 0;
}

int conf_get_long(struct conf_section *s, const char *key, long def,
                  long min, long max, long *out, struct loom_error *err)
{
    struct conf_entry *e = s ? find(s, key) : NULL;
    char *end, what[96];
    long v;

    if (!e) {
        *out = def;
        return 0;
    }
    errno = 0;
    v = strtol(e->value, &end, 10);
    snprintf(what, sizeof(what), "expected an integer from %ld to %ld", min, max);
    if (errno || end == e->value || *end || v < min || v > max)
        return bad(s, e, err, what);
    *out = v;
    return 0;
}

int conf_get_double(struct conf_section *s, const char *key, double def,
                    double min, double max, double *out,
                    struct loom_error *err)
{
    struct conf_entry *e = s ? find(s, key) : NULL;
    char *end, what[96];
    double v;

    if (!e) {
        *out = def;
        return 0;
    }
    errno = 0;
    v = strtod(e->value, &end);
    snprintf(what, sizeof(what), "expected a number from %g to %g", min, max);
    if (errno || end == e->value || *end || !(v >= min && v <= max))
        return bad(s, e, err, what);
    *out = v;
    return 0;
}

int conf_get_bool(struct conf_section *s, const char *key, int def, int *out,
                  struct loom_error *err)
{
    struct conf_entry *e = s ? find(s, key) : NULL;

    if (!e) {
        *out = def;
        return 0;
    }
    if (!strcmp(e->value, "yes") || !strcmp(e->value, "true") ||
        !strcmp(e->value, "1") || !strcmp(e->value, "on"))
        *out = 1;
    else if (!strcmp(e->value, "no") || !strcmp(e->value, "false") ||
             !strcmp(e->value, "0") || !strcmp(e->value, "off"))
        *out = 0;
    else
        return bad(s, e, err, "expected yes or no");
    return 0;
}

int conf_each_prefixed(struct conf_section *s, const char *prefix,
                       int (*cb)(void *arg, const char *key_rest,
                                 const char *value, struct loom_error *err),
                       void *arg, struct loom_error *err)
{
    size_t plen = strlen(prefix);

    for (size_t i = 0; s && i < s->n_entries; i++) {
        struct conf_entry *e = &s->entries[i];
        if (strncmp(e->key, prefix, plen) != 0)
            continue;
        e->used = 1;
        if (!e->key[plen])
            return bad(s, e, err, "a name must follow the prefix");
        if (cb(arg, e->key + plen, e->value, err) < 0)
            return loom_error_prefix(err, "%s:%d", s->file, e->line);
    }
    return 0;
}

static int push_kv(void *out, const char *name, const char *value,
                   struct loom_error *err)
{
    return strv_push_kv(out, name, value) < 0
               ? loom_error_set(err, LOOM_EINTERNAL, "out of memory")
               : 0;
}

int conf_get_prefixed(struct conf_section *s, const char *prefix,
                      struct strv *out, struct loom_error *err)
{
    return conf_each_prefixed(s, prefix, push_kv, out, err);
}

int conf_check_unused(struct conf_section *s, struct loom_error *err)
{
    for (size_t i = 0; i < s->n_entries; i++)
        if (!s->entries[i].used)
            return loom_error_set(err, LOOM_EINVAL,
                                  "%s:%d: unknown key '%s' in [%s%s%s]",
                                  s->file, s->entries[i].line, s->entries[i].key,
                                  s->kind, *s->name ? " " : "", s->name);
    return 0;
}
