/* maint_conf.c - the [maintenance], [action NAME] and [rule NAME] sections
 * of loom.conf. */
/* SPDX-License-Identifier: MIT */
#include "maintenance/maint_conf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int maint_split_words(const char *line, struct strv *out,
                      struct loom_error *err)
{
    size_t n = strlen(line);
    char *word = malloc(n + 1);
    const char *p = line;

    if (!word)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    while (*p) {
        size_t k = 0;
        int any = 0;
        while (*p == ' ' || *p == '\t')
            p++;
        while (*p && *p != ' ' && *p != '\t') {
            char q = *p;
            any = 1;
            if (q != '\'' && q != '"') {
                word[k++] = *p++;
                continue;
            }
            for (p++; *p && *p != q; p++) {
                if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
                    p++;
                word[k++] = *p;
            }
            if (*p != q) {
                free(word);
                return loom_error_set(err, LOOM_EINVAL, "unbalanced %c in "
                                      "'%s'", q, line);
            }
            p++;
        }
        word[k] = '\0';
        if (any && strv_push(out, word) < 0) {
            free(word);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    }
    free(word);
    return 0;
}

static int list_in(const char *v, struct strv *out, struct loom_error *err)
{
    char *copy = strdup(v ? v : ""), *save = NULL, *tok;

    if (!copy)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (tok = strtok_r(copy, ", \t", &save); tok;
         tok = strtok_r(NULL, ", \t", &save))
        if (strv_push(out, tok) < 0) {
            free(copy);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    free(copy);
    return 0;
}

static int action_read(struct conf_section *sec, struct maint_action *a,
                       struct loom_error *err)
{
    struct loom_error why = {0};
    const char *cmd;

    if (!(a->name = strdup(sec->name)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (conf_get_str(sec, "command", NULL, &cmd, err) < 0 ||
        conf_get_double(sec, "timeout_s", 3600, 1, 7 * 86400, &a->timeout_s,
                        err) < 0 ||
        conf_get_long(sec, "duration_s", 0, 0, 366L * 86400, &a->duration_s,
                      err) < 0 ||
        list_in(conf_get(sec, "fixes"), &a->fixes, err) < 0)
        return -1;
    if (!cmd)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [action %s] needs a "
                              "command", sec->file, sec->line, sec->name);
    if (maint_split_words(cmd, &a->argv, &why) < 0 || !a->argv.n)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [action %s] command: "
                              "%s", sec->file, sec->line, sec->name,
                              why.message[0] ? why.message : "empty");
    if (a->argv.v[0][0] != '/')
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [action %s] command "
                              "must start with an absolute path, not '%s'",
                              sec->file, sec->line, sec->name, a->argv.v[0]);
    return conf_check_unused(sec, err);
}

static int rule_read(struct conf_section *sec, const struct maint_conf *mc,
                     struct maint_rule *r, struct loom_error *err)
{
    static const char *const whens[] = {"differs", "unknown", "any"};
    const char *attr, *action, *cluster, *when;
    const struct maint_action *a;
    int w = -1;

    if (conf_get_str(sec, "attribute", NULL, &attr, err) < 0 ||
        conf_get_str(sec, "action", NULL, &action, err) < 0 ||
        conf_get_str(sec, "cluster", NULL, &cluster, err) < 0 ||
        conf_get_str(sec, "when", "differs", &when, err) < 0 ||
        conf_get_long(sec, "within_s", 3600, 1, 366L * 86400, &r->within_s,
                      err) < 0 ||
        conf_get_long(sec, "duration_s", 0, 0, 366L * 86400, &r->duration_s,
                      err) < 0 ||
        conf_get_long(sec, "max_nodes", 0, 0, 1000000, &r->max_nodes,
                      err) < 0 ||
        conf_get_long(sec, "max_percent", 0, 0, 100, &r->max_percent,
                      err) < 0 ||
        conf_get_long(sec, "backoff_s", 600, 0, 86400, &r->backoff_s,
                      err) < 0 ||
        conf_check_unused(sec, err) < 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(when, whens[i]))
            w = i;
    if (!attr || !action)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [rule %s] needs an "
                              "attribute and an action", sec->file, sec->line,
                              sec->name);
    if (w < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [rule %s] when must "
                              "be differs, unknown or any (got '%s')",
                              sec->file, sec->line, sec->name, when);
    a = maint_conf_action(mc, action);
    if (!a && strcmp(action, "node-off"))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [rule %s] action '%s' "
                              "is neither node-off nor an [action]",
                              sec->file, sec->line, sec->name, action);
    if (!r->duration_s && !(a && a->duration_s))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [rule %s] needs "
                              "duration_s (its action gives none)", sec->file,
                              sec->line, sec->name);
    r->when = (enum rule_when)w;
    if (!(r->name = strdup(sec->name)) || !(r->attribute = strdup(attr)) ||
        !(r->action = strdup(action)) ||
        (cluster && !(r->cluster = strdup(cluster))))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

static size_t count_kind(const struct conf *c, const char *kind)
{
    size_t n = 0;

    for (size_t i = 0; i < c->n_sections; i++)
        n += !strcmp(c->sections[i].kind, kind);
    return n;
}

int maint_conf_read(struct conf *c, const char *listen, struct maint_conf *out,
                    struct loom_error *err)
{
    struct conf_section *sec = conf_section(c, "maintenance", NULL);
    char url[512];

    memset(out, 0, sizeof(*out));
    out->actual_ttl_s = 600;
    out->compare_s = 30;
    out->verify_s = 300;
    out->request_memory_s = 300;
    if (sec && (conf_get_double(sec, "actual_ttl_s", 600, 1, 366.0 * 86400,
                                &out->actual_ttl_s, err) < 0 ||
                conf_get_double(sec, "compare_s", 30, 0.1, 86400,
                                &out->compare_s, err) < 0 ||
                conf_get_double(sec, "verify_s", 300, 1, 86400,
                                &out->verify_s, err) < 0 ||
                conf_get_double(sec, "request_memory_s", 300, 0,
                                366.0 * 86400, &out->request_memory_s,
                                err) < 0 ||
                conf_check_unused(sec, err) < 0))
        return -1;
    if (!strncmp(listen, "unix:", 5))
        snprintf(url, sizeof(url), "%s", listen);
    else
        snprintf(url, sizeof(url), "http://%s", listen);
    out->actions = calloc(count_kind(c, "action") + 1, sizeof(*out->actions));
    out->rules = calloc(count_kind(c, "rule") + 1, sizeof(*out->rules));
    if (!(out->url = strdup(url)) || !out->actions || !out->rules)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (size_t i = 0; i < c->n_sections; i++)
        if (!strcmp(c->sections[i].kind, "action") &&
            action_read(&c->sections[i], &out->actions[out->n_actions++],
                        err) < 0)
            return -1;
    for (size_t i = 0; i < c->n_sections; i++)
        if (!strcmp(c->sections[i].kind, "rule") &&
            rule_read(&c->sections[i], out, &out->rules[out->n_rules++],
                      err) < 0)
            return -1;
    return 0;
}

void maint_conf_fini(struct maint_conf *mc)
{
    for (size_t i = 0; mc->actions && i < mc->n_actions; i++) {
        free(mc->actions[i].name);
        strv_fini(&mc->actions[i].argv);
        strv_fini(&mc->actions[i].fixes);
    }
    for (size_t i = 0; mc->rules && i < mc->n_rules; i++) {
        free(mc->rules[i].name);
        free(mc->rules[i].attribute);
        free(mc->rules[i].action);
        free(mc->rules[i].cluster);
    }
    free(mc->actions);
    free(mc->rules);
    free(mc->url);
    memset(mc, 0, sizeof(*mc));
}

void maint_conf_free(void *mc)
{
    if (mc) {
        maint_conf_fini(mc);
        free(mc);
    }
}

const struct maint_action *maint_conf_action(const struct maint_conf *mc,
                                             const char *name)
{
    for (size_t i = 0; i < mc->n_actions; i++)
        if (!strcmp(mc->actions[i].name, name))
            return &mc->actions[i];
    return NULL;
}
