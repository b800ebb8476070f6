/* maint_conf.h - the [maintenance], [action NAME] and [rule NAME] sections
 * of loom.conf. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_MAINTENANCE_MAINT_CONF_H
#define LOOM_MAINTENANCE_MAINT_CONF_H

#include "core/conf.h"
#include "core/error.h"
#include "core/strv.h"

/* A command run once per node of a request. */
struct maint_action {
    char *name;
    struct strv argv;  /* the command split into words; %n %c %i %% */
    double timeout_s;
    long duration_s;   /* a request's default window, 0: none */
    struct strv fixes; /* attributes verification checks */
};

enum rule_when { WHEN_DIFFERS, WHEN_UNKNOWN, WHEN_ANY };

/* A mismatch of attribute (on cluster's nodes, or any) -> a request. */
struct maint_rule {
    char *name, *attribute, *action, *cluster; /* cluster may be NULL */
    enum rule_when when;
    long within_s, duration_s;
    long max_nodes, max_percent; /* 0: no such limit */
    long backoff_s;
};

struct maint_conf {
    double actual_ttl_s, compare_s, verify_s;
    double request_memory_s; /* an ended request leaves memory then */
    struct maint_action *actions;
    size_t n_actions;
    struct maint_rule *rules;
    size_t n_rules;
    char *url; /* the daemon's address, for actions (LOOM_URL) */
};

/* Read the sections (all optional). listen: [loomd] listen. 0, or -1 with
 * err naming file, line and key. */
int maint_conf_read(struct conf *c, const char *listen, struct maint_conf *out,
                    struct loom_error *err);
void maint_conf_fini(struct maint_conf *mc);
void maint_conf_free(void *mc); /* fini and free; NULL-safe */
/* The action of that name, or NULL ("node-off" has none). */
const struct maint_action *maint_conf_action(const struct maint_conf *mc,
                                             const char *name);
/* Split a command line into words: blanks separate, '...' and "..." quote
 * (no escapes inside '...'; \" and \\ inside "..."). 0, or -1 with err. */
int maint_split_words(const char *line, struct strv *out,
                      struct loom_error *err);

#endif
