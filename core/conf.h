/* conf.h - loom.conf: an INI file with [loomd] and [cluster NAME] sections. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_CONF_H
#define LOOM_CORE_CONF_H

#include <stddef.h>

#include "core/error.h"
#include "core/strv.h"

struct conf_entry {
    char *key;
    char *value;
    int line;
    int used; /* set by the conf_get* calls; unused keys are errors */
};

struct conf_section {
    char *kind; /* "loomd", "cluster", "issuer", ... */
    char *name; /* the section's name (a cluster's, an issuer's), or "" */
    int line;
    const char *file; /* borrowed from struct conf */
    struct conf_entry *entries;
    size_t n_entries;
};

struct conf {
    char *file;
    struct conf_section *sections;
    size_t n_sections;
};

/* Parse a file. Returns a new conf (destroy with conf_destroy) or NULL with
 * err naming file and line. Section kinds other than loomd, scheduler,
 * maintenance, limits (with or without a name: an account, vo=GROUP or
 * gateway=NAME), cluster, action, rule and issuer, duplicate sections and
 * duplicate keys are errors. */
struct conf *conf_load(const char *path, struct loom_error *err);
/* The same for loomd's own loom.conf, which holds the database
 * connection: a file that group or others may read or write is refused
 * (naming its mode), as is anything but a regular file. */
struct conf *conf_load_private(const char *path, struct loom_error *err);
/* Parse text in memory; name is used in messages (e.g. "<embedded>"). */
struct conf *conf_parse(const char *name, const char *text,
                        struct loom_error *err);
void conf_destroy(struct conf *c); /* NULL-safe */

/* The section of that kind and name, or NULL. */
struct conf_section *conf_section(struct conf *c, const char *kind,
                                  const char *name);

/* Value of key or NULL when absent; marks the key used. Borrowed. */
const char *conf_get(struct conf_section *s, const char *key);
/* Typed getters: absent -> def; a bad value -> -1 with err naming
 * file, line and key. */
int conf_get_str(struct conf_section *s, const char *key, const char *def,
                 const char **out, struct loom_error *err);
int conf_get_long(struct conf_section *s, const char *key, long def,
                  long min, long max, long *out, struct loom_error *err);
int conf_get_double(struct conf_section *s, const char *key, double def,
                    double min, double max, double *out,
                    struct loom_error *err);
int conf_get_bool(struct conf_section *s, const char *key, int def, int *out,
                  struct loom_error *err);
/* Mark every key starting with prefix as used and call cb for each;
 * e.g. "env." keys. cb returning -1 stops with that error. */
int conf_each_prefixed(struct conf_section *s, const char *prefix,
                       int (*cb)(void *arg, const char *key_rest,
                                 const char *value, struct loom_error *err),
                       void *arg, struct loom_error *err);
/* The same for keys PREFIX.NAME = value: each as "NAME=value" appended to
 * out (the env.* keys of an adaptor). */
int conf_get_prefixed(struct conf_section *s, const char *prefix,
                      struct strv *out, struct loom_error *err);
/* -1 with "FILE:LINE: unknown key 'K' in [SECTION]" for the first key no
 * getter asked for. */
int conf_check_unused(struct conf_section *s, struct loom_error *err);

#endif
