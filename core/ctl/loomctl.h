/* loomctl.h - what the parts of loomctl share (not part of libloom). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_CTL_LOOMCTL_H
#define LOOM_CORE_CTL_LOOMCTL_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "core/ctl/client.h"
#include "core/error.h"

/* Exit statuses. */
#define CTL_OK 0
#define CTL_FAIL 1
#define CTL_USAGE 2

/* The same default as loomd's: SYSCONFDIR/loom/loom.conf. */
#ifdef LOOM_SYSCONFDIR
#define CTL_CONF_DEFAULT LOOM_SYSCONFDIR "/loom/loom.conf"
#else
#define CTL_CONF_DEFAULT "/etc/loom/loom.conf"
#endif
#define CTL_LISTEN_DEFAULT "127.0.0.1:8470"  /* as loomd's settings.c */
#define CTL_STATE_DIR_DEFAULT "/var/lib/loom" /* token.key is under it */
#define CTL_ADMIN_TTL_S 300 /* of the token minted from the key file */

/* The global options, and the client once one is open. */
struct ctl {
    int json;               /* --json: print the server's JSON */
    const char *conf_path;  /* -c FILE, or NULL */
    const char *url;        /* --url URL, or NULL */
    const char *token_file; /* --token-file FILE, or NULL */
    struct client_tls tls;  /* --cacert, --capath, --cert, --key */
    struct client *client;  /* opened by ctl_client; main destroys it */
};

/* A command: argv[0] is its name, argc counts it. Returns an exit status. */
typedef int ctl_cmd_f(struct ctl *ctl, int argc, char **argv);

/* Print "loomctl: MESSAGE" on stderr. Returns CTL_FAIL. */
int ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "loomctl: MESSAGE" and the usage line of command cmd (NULL: of
 * loomctl) on stderr. Returns CTL_USAGE. */
int ctl_usage(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The usage error for what getopt_long returned ('?' or ':'), with the
 * getopt state as it left it. Returns CTL_USAGE. */
int ctl_opt_error(const char *cmd, int c, char **argv);
/* Parse a whole decimal integer from min to max. Returns 0 or -1. */
int ctl_long(const char *s, long min, long max, long *out);
/* The checks of option values and arguments, with loomd's domains and
 * limits (core/domain.h, core/limits.h). Each returns -1 when value is
 * good, else prints the usage error of cmd naming what (an option such
 * as "--state", or "a job id"), value and what is allowed, and returns
 * CTL_USAGE. */
struct domain;
int ctl_check_name(const char *cmd, const char *what, const struct domain *d,
                   const char *value);
/* Text: not empty, no control characters. */
int ctl_check_text(const char *cmd, const char *what, const char *value);
/* A Loom id ([1-9][0-9]* within int64); kind: "job", "reservation", ... */
int ctl_check_id(const char *cmd, const char *kind, const char *value);
/* A job's id, or an array's task (123_7). */
int ctl_check_job(const char *cmd, const char *value);
/* Print j as indented JSON and a newline on stdout (nothing for NULL). */
void ctl_print_json(const json_t *j);
/* Options of a command that has only --json (cmd names it in errors; NULL:
 * argv[0]). Returns -1 with optind at the first operand, or an exit
 * status. */
int ctl_json_only(struct ctl *ctl, const char *cmd, int argc, char **argv);
/* Add a node id "CLUSTER/NAME" to p as two segments; -1 when it is not
 * one. */
int ctl_pair_segments(struct client_path *p, const char *id);
/* Carry out action (cancel, suspend, resume, hold, release) on the job
 * id through c; with --json, print the answer. Returns an exit status,
 * after printing why it failed; *stop is set when no answer came (the
 * next job would not fare better). */
int ctl_job_action(struct ctl *ctl, struct client *c, const char *action,
                   const char *id, int *stop);
/* Check the n job ids, then carry out action on each in turn through
 * ctl's client, until one gets no answer. Returns an exit status: a usage
 * error naming an id that is not one, else CTL_FAIL when any failed. */
int ctl_job_actions(struct ctl *ctl, const char *action, char **ids, int n);
/* The client for this call, opened on first use from the options, the
 * environment or loom.conf (see loomctl(1)); NULL after printing why. */
struct client *ctl_client(struct ctl *ctl);
/* Load the token key named by loom.conf (the -c file, $LOOM_CONF or the
 * default) for signing: *key and *len as token_key_load gives them, and
 * (max_ttl non-NULL) its [loomd] max_token_ttl_s. Returns 0 or -1 with
 * err. */
int ctl_signing_key(struct ctl *ctl, unsigned char **key, size_t *len,
                    long *max_ttl,
                    struct loom_error *err);

/* loomctl_cmd.c */
ctl_cmd_f cmd_clusters, cmd_nodes, cmd_queues, cmd_reservations,
    cmd_show,
    cmd_status, cmd_job_action, cmd_node_state, cmd_pause, cmd_runtime;
/* loomctl_submit.c */
ctl_cmd_f cmd_submit, cmd_token;
/* output.c */
ctl_cmd_f cmd_output;
/* history.c */
ctl_cmd_f cmd_history, cmd_usage;
/* queue.c */
ctl_cmd_f cmd_jobs, cmd_cancel, cmd_summary;
/* export.c */
ctl_cmd_f cmd_export;
/* update.c */
ctl_cmd_f cmd_update;
/* loomctl_resv.c */
ctl_cmd_f cmd_reserve, cmd_unreserve;
/* loomctl_maint.c */
ctl_cmd_f cmd_goal, cmd_actual, cmd_diff, cmd_maintenance;

#endif
