/* drmaa_check.c - drives libdrmaa against a real loomd, in TAP (for
 * 8101-drmaa-c.t). */
/* SPDX-License-Identifier: MIT */
/*
 * Environment (8101 sets it): LOOM_URL, LOOM_TOKEN_FILE (a user token),
 * DRMAA_CHECK_ADMIN (an admin token, for looking behind the library and
 * switching the scheduler off), DRMAA_CHECK_READER (a file with a token
 * that may read but not submit), DRMAA_CHECK_CLOSED (a URL nothing
 * listens on), DRMAA_CHECK_PROXY (a URL that forwards to loomd but drops
 * the answer to the first POST /v1/jobs), DRMAA_CHECK_DIR (a scratch
 * directory), DRMAA_CHECK_ACCOUNT (the account the jobs run as) and
 * DRMAA_CHECK_WD (a directory of that account, with a directory errs in
 * it). The local cluster has two nodes with 2 cpus, 1024 MB, one
 * gpu and the features ssd and fast.
 */
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/ctl/client.h"
#include "grid/drmaa/drmaa.h"
#include "tests/lib/tap.h"

#define D diag, sizeof(diag)

static char diag[DRMAA_ERROR_STRING_BUFFER];
static struct client *admin;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The job as Loom shows it to the admin (a new reference, or NULL). */
static json_t *loom_job(const char *id)
{
    struct loom_error err;
    json_t *reply = NULL;
    char path[96];

    snprintf(path, sizeof(path), "/v1/jobs/%s", id);
    if (client_request(admin, "GET", path, NULL, NULL, NULL, &reply, &err))
        printf("# GET %s: %s\n", path, err.message);
    return reply;
}

static void loom_cancel(const char *id)
{
    struct loom_error err;
    json_t *reply = NULL;
    char path[96];

    snprintf(path, sizeof(path), "/v1/jobs/%s", id);
    if (client_request(admin, "DELETE", path, NULL, NULL, NULL, &reply, &err))
        printf("# DELETE %s: %s\n", path, err.message);
    json_decref(reply);
}

static void scheduler_enable(int on)
{
    struct loom_error err;
    json_t *body = json_pack("{s:b}", "enabled", on), *reply = NULL;

    if (client_request(admin, "POST", "/v1/runtime/scheduler", body, NULL,
                       NULL, &reply, &err))
        printf("# scheduler %d: %s\n", on, err.message);
    json_decref(body);
    json_decref(reply);
}

/* Poll drmaa_job_ps until it says want (up to secs). The last state. */
static int wait_ps(const char *id, int want, double secs)
{
    double end = now_s() + secs;
    int ps = -1;

    while (drmaa_job_ps(id, &ps, D) == DRMAA_ERRNO_SUCCESS && ps != want &&
           now_s() < end)
        usleep(50000);
    return ps;
}

static drmaa_job_template_t *job(const char *cmd, const char *const *args)
{
    drmaa_job_template_t *jt = NULL;

    if (drmaa_allocate_job_template(&jt, D) != DRMAA_ERRNO_SUCCESS) {
        printf("# allocate: %s\n", diag);
        return NULL;
    }
    drmaa_set_attribute(jt, DRMAA_REMOTE_COMMAND, cmd, D);
    if (args)
        drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, (const char **)args, D);
    return jt;
}

/* Submit cmd args; the id into id. The return code. */
static int run(const char *cmd, const char *const *args, char *id,
               size_t size)
{
    drmaa_job_template_t *jt = job(cmd, args);
    int rc = drmaa_run_job(id, size, jt, D);

    drmaa_delete_job_template(jt, NULL, 0);
    return rc;
}

/* The rusage as one line, " name=value" each, and r released. */
static const char *usage_line(drmaa_attr_values_t *r)
{
    static char line[4096];
    char value[DRMAA_ATTR_BUFFER];
    size_t n = 0;

    line[0] = '\0';
    while (r && drmaa_get_next_attr_value(r, value, sizeof(value)) ==
                    DRMAA_ERRNO_SUCCESS && n < sizeof(line))
        n += (size_t)snprintf(line + n, sizeof(line) - n, " %s", value);
    drmaa_release_attr_values(r);
    return line;
}

/* The value of name in a usage line, as a number; -1 when absent. */
static long long usage_of(const char *line, const char *name)
{
    char key[64];
    const char *p;

    snprintf(key, sizeof(key), " %s=", name);
    p = strstr(line, key);
    return p ? atoll(p + strlen(key)) : -1;
}

/* ---- before a session, and init's failures -------------------------------- */

static void before_init(void)
{
    char buf[DRMAA_CONTACT_BUFFER];
    unsigned major = 0, minor = 9;
    drmaa_job_template_t *jt = NULL;

    is_int(drmaa_version(&major, &minor, D), DRMAA_ERRNO_SUCCESS,
           "drmaa_version");
    ok(major == 1 && minor == 0, "... is 1.0 (%u.%u)", major, minor);
    drmaa_get_contact(buf, sizeof(buf), D);
    is_str(buf, getenv("LOOM_URL"), "before init, the contact is $LOOM_URL");
    drmaa_get_DRM_system(buf, sizeof(buf), D);
    is_str(buf, "Loom", "before init, the DRM system is Loom");
    drmaa_get_DRMAA_implementation(buf, sizeof(buf), D);
    ok(!strncmp(buf, "Loom DRMAA ", 11), "the implementation: %s", buf);
    is_int(drmaa_allocate_job_template(&jt, D), DRMAA_ERRNO_NO_ACTIVE_SESSION,
           "no template without a session");
    is_int(drmaa_exit(D), DRMAA_ERRNO_NO_ACTIVE_SESSION,
           "drmaa_exit without a session");
    is_int(drmaa_job_ps("1", &(int){0}, D), DRMAA_ERRNO_NO_ACTIVE_SESSION,
           "drmaa_job_ps without a session");
    is_str(drmaa_strerror(DRMAA_ERRNO_INVALID_JOB), "no such job",
           "drmaa_strerror names a code");
    is_str(drmaa_strerror(DRMAA_NO_ERRNO), "unknown error code",
           "... and says when a code is none");
}

static void init_failures(void)
{
    const char *url = getenv("LOOM_URL"), *tf = getenv("LOOM_TOKEN_FILE");
    char path[600];
    FILE *f;

    unsetenv("LOOM_URL");
    is_int(drmaa_init(NULL, D),
           DRMAA_ERRNO_NO_DEFAULT_CONTACT_STRING_SELECTED,
           "no contact and no LOOM_URL");
    setenv("LOOM_URL", "ftp://nowhere", 1);
    is_int(drmaa_init(NULL, D), DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR,
           "a LOOM_URL that is no URL: %s", diag);
    setenv("LOOM_URL", url, 1);
    is_int(drmaa_init("gopher:x", D), DRMAA_ERRNO_INVALID_CONTACT_STRING,
           "a contact string that is no URL");
    is_int(drmaa_init(getenv("DRMAA_CHECK_CLOSED"), D),
           DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE,
           "nobody listening: communication failure (%s)", diag);
    unsetenv("LOOM_TOKEN_FILE");
    is_int(drmaa_init(NULL, D), DRMAA_ERRNO_AUTH_FAILURE,
           "no LOOM_TOKEN_FILE: auth failure");
    ok(strstr(diag, "LOOM_TOKEN_FILE") != NULL, "... naming it: %s", diag);
    snprintf(path, sizeof(path), "%s/open.token",
             getenv("DRMAA_CHECK_DIR"));
    f = fopen(path, "w");
    fputs("loom1.bad.token\n", f);
    fclose(f);
    chmod(path, 0644);
    setenv("LOOM_TOKEN_FILE", path, 1);
    is_int(drmaa_init(NULL, D), DRMAA_ERRNO_AUTH_FAILURE,
           "a token file others may read is refused");
    ok(strstr(diag, "chmod 600") != NULL, "... saying why: %s", diag);
    chmod(path, 0600);
    is_int(drmaa_init(NULL, D), DRMAA_ERRNO_AUTH_FAILURE,
           "a token Loom does not take: auth failure");
    ok(strstr(diag, "not authorised") != NULL, "... with Loom's word: %s",
       diag);
    setenv("LOOM_TOKEN_FILE", tf, 1);
}

/* ---- attributes ---------------------------------------------------------- */

static int has_name(drmaa_attr_names_t *v, const char *name)
{
    char buf[DRMAA_ATTR_BUFFER];
    int found = 0;

    while (drmaa_get_next_attr_name(v, buf, sizeof(buf)) ==
           DRMAA_ERRNO_SUCCESS)
        found |= !strcmp(buf, name);
    return found;
}

static void attribute_names(void)
{
    drmaa_attr_names_t *v = NULL;
    size_t n = 0;

    is_int(drmaa_get_attribute_names(&v, D), DRMAA_ERRNO_SUCCESS,
           "drmaa_get_attribute_names");
    drmaa_get_num_attr_names(v, &n);
    is_int(n, 13, "13 scalar attributes");
    ok(has_name(v, DRMAA_WCT_HLIMIT), "... among them drmaa_wct_hlimit");
    is_int(drmaa_get_next_attr_name(v, (char[8]){0}, 8),
           DRMAA_ERRNO_NO_MORE_ELEMENTS, "... and then no more");
    drmaa_release_attr_names(v);
    is_int(drmaa_get_vector_attribute_names(&v, D), DRMAA_ERRNO_SUCCESS,
           "drmaa_get_vector_attribute_names");
    drmaa_get_num_attr_names(v, &n);
    is_int(n, 3, "3 vector attributes");
    ok(has_name(v, DRMAA_V_ENV), "... among them drmaa_v_env");
    drmaa_release_attr_names(v);
}

static void set_is(drmaa_job_template_t *jt, const char *name,
                   const char *value, int want, const char *want_in_diag)
{
    diag[0] = '\0';
    is_int(drmaa_set_attribute(jt, name, value, D), want, "%s = '%s'", name,
           value);
    if (want_in_diag)
        ok(strstr(diag, want_in_diag) != NULL, "... says '%s': %s",
           want_in_diag, diag);
}

static void attributes(void)
{
    drmaa_job_template_t *jt = job("/bin/echo", NULL);
    const char *argv[] = { "a", "b c", NULL }, *env[] = { "A=1", "B=x=y",
                                                          NULL };
    const char *bad_env[] = { "1X=y", NULL }, *twice[] = { "A=1", "A=2",
                                                           NULL };
    const char *mail[] = { "a@b", NULL }, *none[] = { NULL };
    drmaa_attr_values_t *vals = NULL;
    char buf[DRMAA_ATTR_BUFFER];
    size_t n = 0;

    drmaa_get_attribute(jt, DRMAA_REMOTE_COMMAND, buf, sizeof(buf), D);
    is_str(buf, "/bin/echo", "get drmaa_remote_command");
    drmaa_get_attribute(jt, DRMAA_JOB_NAME, buf, sizeof(buf), D);
    is_str(buf, "", "an unset attribute reads empty");
    is_int(drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, argv, D),
           DRMAA_ERRNO_SUCCESS, "set drmaa_v_argv");
    drmaa_get_vector_attribute(jt, DRMAA_V_ARGV, &vals, D);
    drmaa_get_num_attr_values(vals, &n);
    drmaa_get_next_attr_value(vals, buf, sizeof(buf));
    drmaa_get_next_attr_value(vals, buf, sizeof(buf));
    ok(n == 2 && !strcmp(buf, "b c"), "get drmaa_v_argv: 2 values, 'b c'");
    drmaa_release_attr_values(vals);
    is_int(drmaa_set_vector_attribute(jt, DRMAA_V_ENV, env, D),
           DRMAA_ERRNO_SUCCESS, "set drmaa_v_env");
    is_int(drmaa_set_vector_attribute(jt, DRMAA_V_ENV, bad_env, D),
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, "1X is no variable name");
    is_int(drmaa_set_vector_attribute(jt, DRMAA_V_ENV, twice, D),
           DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES, "a variable set twice");
    is_int(drmaa_set_vector_attribute(jt, DRMAA_V_EMAIL, mail, D),
           DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, "mail cannot be honoured");
    is_int(drmaa_set_vector_attribute(jt, DRMAA_V_EMAIL, none, D),
           DRMAA_ERRNO_SUCCESS, "... an empty mail list can");
    is_int(drmaa_set_vector_attribute(jt, DRMAA_JOB_NAME, none, D),
           DRMAA_ERRNO_INVALID_ARGUMENT, "a scalar set as a vector");
    set_is(jt, DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_ACTIVE,
           DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_HOLD,
           DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, "cannot submit a job held");
    set_is(jt, DRMAA_WD, "/tmp", DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_WD, DRMAA_PLACEHOLDER_HD, DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_WD, DRMAA_PLACEHOLDER_HD "/sub",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, "is not known here");
    set_is(jt, DRMAA_WD, "/x/" DRMAA_PLACEHOLDER_HD,
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, "at the beginning only");
    set_is(jt, DRMAA_WD, DRMAA_PLACEHOLDER_WD "/x",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, "cannot be in it");
    drmaa_get_attribute(jt, DRMAA_WD, buf, sizeof(buf), D);
    is_str(buf, DRMAA_PLACEHOLDER_HD, "get drmaa_wd: the last good value");
    set_is(jt, DRMAA_OUTPUT_PATH, ":" DRMAA_PLACEHOLDER_HD "/out",
           DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_ERROR_PATH, "host:/tmp/e." DRMAA_PLACEHOLDER_INCR,
           DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_ERROR_PATH, "host:", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
           "has no path");
    set_is(jt, DRMAA_OUTPUT_PATH, ":/a/" DRMAA_PLACEHOLDER_WD,
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, "at the beginning only");
    set_is(jt, DRMAA_OUTPUT_PATH, ":" DRMAA_PLACEHOLDER_HD "/"
           DRMAA_PLACEHOLDER_WD, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
           "at the beginning only");
    set_is(jt, DRMAA_INPUT_PATH, ":/dev/null",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, "no standard input");
    set_is(jt, DRMAA_START_TIME, "10:00",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, NULL);
    set_is(jt, DRMAA_JOB_CATEGORY, "big",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, NULL);
    set_is(jt, DRMAA_JOIN_FILES, "y", DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_JOIN_FILES, "n", DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_JOIN_FILES, "maybe",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, NULL);
    set_is(jt, DRMAA_BLOCK_EMAIL, "1", DRMAA_ERRNO_SUCCESS, NULL);
    set_is(jt, DRMAA_BLOCK_EMAIL, "yes",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, NULL);
    set_is(jt, DRMAA_WCT_HLIMIT, "1:30", DRMAA_ERRNO_SUCCESS, NULL);
    drmaa_get_attribute(jt, DRMAA_WCT_HLIMIT, buf, sizeof(buf), D);
    is_str(buf, "1:30", "get drmaa_wct_hlimit");
    set_is(jt, DRMAA_WCT_HLIMIT, "1:x", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
           NULL);
    set_is(jt, DRMAA_WCT_SLIMIT, "60", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
           "not supported");
    set_is(jt, "drmaa_bogus", "1", DRMAA_ERRNO_INVALID_ARGUMENT,
           "unknown attribute");
    set_is(jt, DRMAA_V_ARGV, "1", DRMAA_ERRNO_INVALID_ARGUMENT,
           "vector attribute");
    set_is(jt, DRMAA_NATIVE_SPECIFICATION, "--nodes=1 --bogus=2",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, "unknown option '--bogus'");
    set_is(jt, DRMAA_NATIVE_SPECIFICATION, "--nodes=x",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, "whole number");
    set_is(jt, DRMAA_NATIVE_SPECIFICATION, "--nodes 1 --nodes=2",
           DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES, "twice");
    set_is(jt, DRMAA_NATIVE_SPECIFICATION, "nodes=2",
           DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, "not an option");
    drmaa_get_attribute(jt, DRMAA_NATIVE_SPECIFICATION, buf, sizeof(buf), D);
    is_str(buf, "", "a refused value leaves the attribute as it was");
    is_int(drmaa_delete_job_template(jt, D), DRMAA_ERRNO_SUCCESS,
           "drmaa_delete_job_template");
}

/* ---- jobs ------------------------------------------------------------------ */

/* Wait for id with rusage: the stat, or -1. */
static int reap(const char *id, drmaa_attr_values_t **r)
{
    char out[64] = "";
    int stat = -1, rc;

    rc = drmaa_wait(id, out, sizeof(out), &stat, 60, r, D);
    if (rc != DRMAA_ERRNO_SUCCESS)
        printf("# drmaa_wait %s: %d %s\n", id, rc, diag);
    return rc == DRMAA_ERRNO_SUCCESS && !strcmp(out, id) ? stat : -1;
}

static void exits(void)
{
    const char *three[] = { "-c", "sleep 1; exit 3", NULL };
    const char *kill9[] = { "-c", "kill -9 $$", NULL };
    drmaa_attr_values_t *r = NULL;
    char id[64], sig[DRMAA_SIGNAL_BUFFER] = "x";
    const char *u;
    int stat, v = -1, ps = -1;

    is_int(run("/bin/sh", three, id, sizeof(id)), DRMAA_ERRNO_SUCCESS,
           "drmaa_run_job: a job that exits 3 (%s)", id);
    stat = reap(id, &r);
    u = usage_line(r);
    drmaa_wifexited(&v, stat, D);
    is_int(v, 1, "it exited");
    drmaa_wexitstatus(&v, stat, D);
    is_int(v, 3, "... with status 3");
    drmaa_wifsignaled(&v, stat, D);
    is_int(v, 0, "... not signaled");
    drmaa_wifaborted(&v, stat, D);
    is_int(v, 0, "... not aborted");
    printf("# rusage:%s\n", u);
    is_int(usage_of(u, "exit_status"), 3, "rusage: exit_status=3");
    ok(usage_of(u, "start_time") > 1700000000, "rusage: start_time");
    ok(usage_of(u, "end_time") >= usage_of(u, "start_time"),
       "rusage: end_time, not before the start");
    ok(usage_of(u, "submission_time") > 1700000000 &&
       usage_of(u, "submission_time") <= usage_of(u, "start_time"),
       "rusage: submission_time, not after the start");
    is_int(usage_of(u, "wallclock"),
           usage_of(u, "end_time") - usage_of(u, "start_time"),
           "rusage: wallclock is end - start");
    is_int(drmaa_wait(id, NULL, 0, &stat, 0, NULL, D),
           DRMAA_ERRNO_INVALID_JOB, "a reaped job is forgotten: %s", diag);
    is_int(drmaa_job_ps(id, &ps, D), DRMAA_ERRNO_SUCCESS,
           "... but Loom still shows it");
    is_int(ps, DRMAA_PS_FAILED, "... failed");

    run("/bin/sh", kill9, id, sizeof(id));
    stat = reap(id, NULL);
    drmaa_wifsignaled(&v, stat, D);
    is_int(v, 1, "a job that kills itself with SIGKILL is signaled");
    drmaa_wtermsig(sig, sizeof(sig), stat, D);
    is_str(sig, "SIGKILL", "... by SIGKILL");
    drmaa_wifexited(&v, stat, D);
    is_int(v, 0, "... and has not exited");
    drmaa_wcoredump(&v, stat, D);
    is_int(v, 0, "... no core dump is reported");
}

/* The request Loom made of a template. */
static void mapping(void)
{
    const char *args[] = { "x", NULL }, *env[] = { "FOO=bar", NULL };
    drmaa_job_template_t *jt = job("/bin/true", args);
    json_t *j, *req;
    char id[64], out[64] = "", *feat;
    int stat = -1, v = -1;

    drmaa_set_attribute(jt, DRMAA_JOB_NAME, "mapped", D);
    drmaa_set_vector_attribute(jt, DRMAA_V_ENV, env, D);
    drmaa_set_attribute(jt, DRMAA_WCT_HLIMIT, "0:2:05", D);
    is_int(drmaa_set_attribute(jt, DRMAA_NATIVE_SPECIFICATION,
                               "--cluster=local --nodes 2 --cpus-per-node=2 "
                               "--mem=200 --gpus=1 --queue=default "
                               "--features=ssd,fast --priority=-5", D),
           DRMAA_ERRNO_SUCCESS, "a native specification with every option");
    is_int(drmaa_run_job(id, sizeof(id), jt, D), DRMAA_ERRNO_SUCCESS,
           "... submitted (%s)", diag);
    drmaa_delete_job_template(jt, NULL, 0);
    j = loom_job(id);
    req = json_object_get(j, "request");
    is_str(json_string_value(json_object_get(j, "name")), "mapped",
           "job name -> name");
    is_str(json_string_value(json_array_get(json_object_get(j, "command"),
                                            1)),
           "x", "remote command and args -> command");
    is_str(json_string_value(json_object_get(json_object_get(j, "env"),
                                             "FOO")),
           "bar", "drmaa_v_env -> env");
    is_int(json_integer_value(json_object_get(req, "walltime_s")), 125,
           "drmaa_wct_hlimit 0:2:05 -> walltime_s 125");
    is_str(json_string_value(json_object_get(req, "cluster")), "local",
           "--cluster");
    is_int(json_integer_value(json_object_get(req, "nodes")), 2, "--nodes");
    is_int(json_integer_value(json_object_get(req, "cpus_per_node")), 2,
           "--cpus-per-node");
    is_int(json_integer_value(json_object_get(req, "memory_mb")), 200,
           "--mem");
    is_int(json_integer_value(json_object_get(req, "gpus")), 1, "--gpus");
    is_str(json_string_value(json_object_get(req, "queue")), "default",
           "--queue");
    feat = json_dumps(json_object_get(req, "features"), JSON_COMPACT);
    is_str(feat, "[\"ssd\",\"fast\"]", "--features");
    free(feat);
    is_int(json_integer_value(json_object_get(j, "priority")), -5,
           "--priority");
    json_decref(j);
    is_int(drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof(out), &stat, 60,
                      NULL, D),
           DRMAA_ERRNO_SUCCESS, "drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY)");
    is_str(out, id, "... takes it");
    drmaa_wifexited(&v, stat, D);
    is_int(v, 1, "... it exited");
}

/* The text of the file at path when the account owns it; else "". */
static const char *owned_text(const char *path, uid_t uid)
{
    static char text[4096];
    struct stat st;
    size_t n = 0;
    FILE *f = fopen(path, "r");

    text[0] = '\0';
    if (!f) {
        printf("# %s: cannot open it\n", path);
        return text;
    }
    if (fstat(fileno(f), &st) == 0 && st.st_uid == uid)
        n = fread(text, 1, sizeof(text) - 1, f);
    else
        printf("# %s: not the account's (uid %u)\n", path, (unsigned)uid);
    text[n] = '\0';
    fclose(f);
    return text;
}

static const char *field(json_t *j, const char *key)
{
    const char *v = json_string_value(json_object_get(j, key));

    return v ? v : "(null)";
}

/* drmaa_wd, drmaa_output_path, drmaa_error_path and their placeholders:
 * the request Loom got and the files the job wrote, as the account. */
static void paths(void)
{
    const char *acct = getenv("DRMAA_CHECK_ACCOUNT");
    const char *wd = getenv("DRMAA_CHECK_WD");
    const char *args[] = { "-c", "id -un; pwd; echo oops >&2", NULL };
    struct passwd *pw = acct ? getpwnam(acct) : NULL;
    drmaa_job_template_t *jt = job("/bin/sh", args);
    drmaa_job_ids_t *ids = NULL;
    char id[2][64], path[4096], want[4096], v[64];
    json_t *j;

    if (!pw || !wd) {
        ok(0, "DRMAA_CHECK_ACCOUNT names an account and DRMAA_CHECK_WD is "
           "set");
        return;
    }
    /* a single job: its own workdir, output relative to it (a % in it),
     * errors into a directory (one that exists here) */
    drmaa_set_attribute(jt, DRMAA_JOB_NAME, "paths", D);
    drmaa_set_attribute(jt, DRMAA_WD, wd, D);
    drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH,
                        "elsewhere:" DRMAA_PLACEHOLDER_WD "/out%.txt", D);
    snprintf(path, sizeof(path), ":%s/errs", wd);
    drmaa_set_attribute(jt, DRMAA_ERROR_PATH, path, D);
    diag[0] = '\0';
    is_int(drmaa_run_job(id[0], sizeof(id[0]), jt, D), DRMAA_ERRNO_SUCCESS,
           "a job with drmaa_wd, drmaa_output_path and drmaa_error_path "
           "(%s)", diag);
    j = loom_job(id[0]);
    is_str(field(j, "workdir"), wd, "drmaa_wd -> workdir");
    is_str(field(j, "output"), "out%%.txt", "drmaa_output_path "
           "elsewhere:$drmaa_wd_ph$/out%%.txt -> output out%%%%.txt");
    snprintf(want, sizeof(want), "%s/errs/%%x.e%%j", wd);
    is_str(field(j, "error"), want, "drmaa_error_path of a directory -> the "
           "file %%x.e%%j in it");
    json_decref(j);
    ok(reap(id[0], NULL) != -1, "... it ends");
    snprintf(path, sizeof(path), "%s/out%%.txt", wd);
    snprintf(want, sizeof(want), "%s\n%s\n", acct, wd);
    is_str(owned_text(path, pw->pw_uid), want, "its output is in the "
           "workdir, the account's, with id -un and pwd");
    snprintf(path, sizeof(path), "%s/errs/paths.e%s", wd, id[0]);
    is_str(owned_text(path, pw->pw_uid), "oops\n", "its errors are in "
           "errs/paths.e%s, the account's", id[0]);

    /* bulk jobs in the home, output and errors joined, per index */
    drmaa_set_attribute(jt, DRMAA_WD, DRMAA_PLACEHOLDER_HD, D);
    drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":" DRMAA_PLACEHOLDER_HD
                        "/bulk." DRMAA_PLACEHOLDER_INCR ".out", D);
    drmaa_set_attribute(jt, DRMAA_ERROR_PATH, "", D);
    drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "y", D);
    diag[0] = '\0';
    is_int(drmaa_run_bulk_jobs(&ids, jt, 1, 2, 1, D), DRMAA_ERRNO_SUCCESS,
           "bulk jobs in $drmaa_hd_ph$ with $drmaa_incr_ph$ (%s)", diag);
    for (int k = 0; k < 2; k++) {
        drmaa_get_next_job_id(ids, id[k], sizeof(id[k]));
        j = loom_job(id[k]);
        snprintf(v, sizeof(v), "bulk.%d.out", k + 1);
        ok(json_is_null(json_object_get(j, "workdir")) &&
           json_is_null(json_object_get(j, "error")) &&
           !strcmp(field(j, "output"), v), "job %s: no workdir (the home), "
           "output %s, no error (joined)", id[k], v);
        json_decref(j);
        ok(reap(id[k], NULL) != -1, "... it ends");
        snprintf(path, sizeof(path), "%s/bulk.%d.out", pw->pw_dir, k + 1);
        snprintf(want, sizeof(want), "%s\n%s\noops\n", acct, pw->pw_dir);
        is_str(owned_text(path, pw->pw_uid), want, "... wrote %s, the "
               "account's, in its home, errors included", path);
    }
    drmaa_release_job_ids(ids);

    /* what cannot be honoured is refused at submit */
    is_int(drmaa_run_job(id[0], sizeof(id[0]), jt, D),
           DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
           "$drmaa_incr_ph$ in a single job is refused");
    ok(strstr(diag, "drmaa_run_bulk_jobs") != NULL, "... saying so: %s", diag);
    drmaa_set_attribute(jt, DRMAA_WD, wd, D);
    drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, DRMAA_PLACEHOLDER_HD "/x", D);
    is_int(drmaa_run_job(id[0], sizeof(id[0]), jt, D),
           DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
           "$drmaa_hd_ph$ in a path with drmaa_wd elsewhere is refused");
    ok(strstr(diag, "not known here") != NULL, "... saying why: %s", diag);
    drmaa_delete_job_template(jt, NULL, 0);
}

static void denied(void)
{
    static const struct {
        const char *native, *says;
        int code;
    } cases[] = {
        { "--nodes=3 --cluster=local", "no cluster could ever run",
          DRMAA_ERRNO_DENIED_BY_DRM },
        { "--cluster=nope", "no cluster named 'nope'",
          DRMAA_ERRNO_DENIED_BY_DRM },
        { "--nodes=0", "request.nodes", DRMAA_ERRNO_DENIED_BY_DRM },
    };
    drmaa_job_template_t *jt;
    char id[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        jt = job("/bin/true", NULL);
        drmaa_set_attribute(jt, DRMAA_NATIVE_SPECIFICATION, cases[i].native,
                            D);
        is_int(drmaa_run_job(id, sizeof(id), jt, D), cases[i].code,
               "%s is refused", cases[i].native);
        ok(strstr(diag, cases[i].says) != NULL, "... with Loom's message: %s",
           diag);
        drmaa_delete_job_template(jt, NULL, 0);
    }
    jt = NULL;
    drmaa_allocate_job_template(&jt, D);
    is_int(drmaa_run_job(id, sizeof(id), jt, D), DRMAA_ERRNO_INVALID_ARGUMENT,
           "a template without a command: %s", diag);
    drmaa_delete_job_template(jt, NULL, 0);
    is_int(drmaa_job_ps("999999", &(int){0}, D), DRMAA_ERRNO_INVALID_JOB,
           "drmaa_job_ps of a job Loom does not have");
    is_int(drmaa_job_ps("1/hold", &(int){0}, D), DRMAA_ERRNO_INVALID_JOB,
           "drmaa_job_ps of a job id that is no number: %s", diag);
    is_int(drmaa_control("1/hold", DRMAA_CONTROL_RELEASE, D),
           DRMAA_ERRNO_INVALID_JOB, "... drmaa_control too");
}

static void bulk(void)
{
    const char *args[] = { "-c", "exit $LOOM_TASK_ID", NULL };
    drmaa_job_template_t *jt = job("/bin/sh", args);
    drmaa_job_ids_t *ids = NULL;
    const char *all[] = { DRMAA_JOB_IDS_SESSION_ALL, NULL };
    char id[3][64], small[2];
    size_t n = 0;
    int stat, v, k;
    json_t *j;

    is_int(drmaa_run_bulk_jobs(&ids, jt, 1, 5, 2, D), DRMAA_ERRNO_SUCCESS,
           "drmaa_run_bulk_jobs 1..5 by 2");
    drmaa_get_num_job_ids(ids, &n);
    is_int(n, 3, "... three jobs");
    for (k = 0; k < 3; k++)
        drmaa_get_next_job_id(ids, id[k], sizeof(id[k]));
    is_int(drmaa_get_next_job_id(ids, small, sizeof(small)),
           DRMAA_ERRNO_NO_MORE_ELEMENTS, "... and no fourth");
    drmaa_release_job_ids(ids);
    for (k = 0; k < 3; k++) {
        j = loom_job(id[k]);
        is_str(json_string_value(json_object_get(json_object_get(j, "env"),
                                                 "LOOM_TASK_ID")),
               k == 0 ? "1" : k == 1 ? "3" : "5",
               "job %s has LOOM_TASK_ID of its index", id[k]);
        json_decref(j);
    }
    is_int(drmaa_synchronize(all, 60, 0, D), DRMAA_ERRNO_SUCCESS,
           "drmaa_synchronize(SESSION_ALL), keeping the jobs");
    for (k = 0; k < 3; k++) {
        stat = reap(id[k], NULL);
        drmaa_wexitstatus(&v, stat, D);
        is_int(v, 2 * k + 1, "job %s exited with its index", id[k]);
    }
    is_int(drmaa_run_bulk_jobs(&ids, jt, 3, 2, 1, D),
           DRMAA_ERRNO_INVALID_ARGUMENT, "end before start is refused");
    drmaa_delete_job_template(jt, NULL, 0);
}

static void control(void)
{
    const char *sleep60[] = { "60", NULL };
    const char *one[2] = { NULL, NULL };
    char id[64], sig[DRMAA_SIGNAL_BUFFER] = "";
    drmaa_attr_values_t *r = NULL;
    int stat, v = -1, ps;

    /* Queued: the scheduler is off, so the job waits. */
    scheduler_enable(0);
    run("/bin/sleep", sleep60, id, sizeof(id));
    is_int(wait_ps(id, DRMAA_PS_QUEUED_ACTIVE, 5), DRMAA_PS_QUEUED_ACTIVE,
           "a pending job is queued (%s)", id);
    is_int(drmaa_control(id, DRMAA_CONTROL_HOLD, D), DRMAA_ERRNO_SUCCESS,
           "hold it");
    is_int(wait_ps(id, DRMAA_PS_USER_ON_HOLD, 5), DRMAA_PS_USER_ON_HOLD,
           "... it is held");
    is_int(drmaa_control(id, DRMAA_CONTROL_HOLD, D),
           DRMAA_ERRNO_HOLD_INCONSISTENT_STATE, "hold again: %s", diag);
    is_int(drmaa_control(id, DRMAA_CONTROL_RELEASE, D), DRMAA_ERRNO_SUCCESS,
           "release it");
    is_int(wait_ps(id, DRMAA_PS_QUEUED_ACTIVE, 5), DRMAA_PS_QUEUED_ACTIVE,
           "... it is queued again");
    is_int(drmaa_control(id, DRMAA_CONTROL_RELEASE, D),
           DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE, "release again: %s",
           diag);
    is_int(drmaa_control(id, DRMAA_CONTROL_SUSPEND, D),
           DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE,
           "suspend a queued job: %s", diag);
    is_int(drmaa_control(id, DRMAA_CONTROL_TERMINATE, D), DRMAA_ERRNO_SUCCESS,
           "terminate it");
    stat = reap(id, &r);
    drmaa_wifaborted(&v, stat, D);
    is_int(v, 1, "a job ended before it ran is aborted");
    is_int(usage_of(usage_line(r), "start_time"), -1,
           "... and its rusage has no start time");
    scheduler_enable(1);

    /* Running: suspend, resume, terminate. */
    run("/bin/sleep", sleep60, id, sizeof(id));
    is_int(wait_ps(id, DRMAA_PS_RUNNING, 20), DRMAA_PS_RUNNING,
           "a job runs (%s)", id);
    is_int(drmaa_control(id, DRMAA_CONTROL_HOLD, D),
           DRMAA_ERRNO_HOLD_INCONSISTENT_STATE, "hold a running job: %s",
           diag);
    is_int(drmaa_control(id, DRMAA_CONTROL_SUSPEND, D), DRMAA_ERRNO_SUCCESS,
           "suspend it");
    is_int(wait_ps(id, DRMAA_PS_USER_SUSPENDED, 10), DRMAA_PS_USER_SUSPENDED,
           "... it is suspended");
    is_int(drmaa_control(id, DRMAA_CONTROL_RESUME, D), DRMAA_ERRNO_SUCCESS,
           "resume it");
    is_int(wait_ps(id, DRMAA_PS_RUNNING, 10), DRMAA_PS_RUNNING,
           "... it runs again");
    is_int(drmaa_control(id, DRMAA_CONTROL_RESUME, D),
           DRMAA_ERRNO_RESUME_INCONSISTENT_STATE, "resume a running job: %s",
           diag);
    is_int(drmaa_wait(id, NULL, 0, &stat, DRMAA_TIMEOUT_NO_WAIT, NULL, D),
           DRMAA_ERRNO_EXIT_TIMEOUT, "drmaa_wait with NO_WAIT times out");
    {
        double t0 = now_s();
        one[0] = id;
        is_int(drmaa_synchronize(one, 1, 1, D), DRMAA_ERRNO_EXIT_TIMEOUT,
               "drmaa_synchronize with 1 s times out");
        ok(now_s() - t0 >= 0.9 && now_s() - t0 < 10,
           "... after about a second (%.2f s)", now_s() - t0);
    }
    is_int(drmaa_control(id, DRMAA_CONTROL_TERMINATE, D), DRMAA_ERRNO_SUCCESS,
           "terminate it");
    is_int(drmaa_synchronize(one, DRMAA_TIMEOUT_WAIT_FOREVER, 1, D),
           DRMAA_ERRNO_SUCCESS, "drmaa_synchronize until it ends, disposing");
    is_int(drmaa_wait(id, NULL, 0, &stat, 0, NULL, D),
           DRMAA_ERRNO_INVALID_JOB, "... dispose reaped it");
    ps = -1;
    drmaa_job_ps(id, &ps, D);
    is_int(ps, DRMAA_PS_FAILED, "a terminated job is failed");
    is_int(drmaa_control(id, DRMAA_CONTROL_TERMINATE, D),
           DRMAA_ERRNO_INVALID_JOB, "terminate it again: %s", diag);
    (void)sig;
}

static void terminate_all(void)
{
    const char *sleep60[] = { "60", NULL };
    char id[2][64], out[64];
    int stat, v = 0;

    run("/bin/sleep", sleep60, id[0], sizeof(id[0]));
    run("/bin/sleep", sleep60, id[1], sizeof(id[1]));
    wait_ps(id[0], DRMAA_PS_RUNNING, 20);
    is_int(wait_ps(id[1], DRMAA_PS_RUNNING, 20), DRMAA_PS_RUNNING,
           "two jobs run");
    is_int(drmaa_control(DRMAA_JOB_IDS_SESSION_ALL, DRMAA_CONTROL_TERMINATE,
                         D),
           DRMAA_ERRNO_SUCCESS, "terminate DRMAA_JOB_IDS_SESSION_ALL");
    for (int k = 0; k < 2; k++) {
        is_int(drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof(out), &stat,
                          30, NULL, D),
               DRMAA_ERRNO_SUCCESS, "wait SESSION_ANY: %s ended", out);
        drmaa_wifsignaled(&v, stat, D);
        is_int(v, 1, "... signaled (cancelled while running)");
    }
    is_int(drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, out, sizeof(out), &stat, 0,
                      NULL, D),
           DRMAA_ERRNO_INVALID_JOB, "then no job is left: %s", diag);
}

/* Threads: concurrent submits, and drmaa_exit ending a wait. */
static void *submitter(void *arg)
{
    const char *t[] = { "-c", "true", NULL };
    char (*ids)[64] = arg, d[256];
    drmaa_job_template_t *jt = NULL;

    drmaa_allocate_job_template(&jt, d, sizeof(d));
    drmaa_set_attribute(jt, DRMAA_REMOTE_COMMAND, "/bin/sh", d, sizeof(d));
    drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, t, d, sizeof(d));
    for (int i = 0; i < 5; i++)
        if (drmaa_run_job(ids[i], sizeof(ids[i]), jt, d, sizeof(d)))
            snprintf(ids[i], sizeof(ids[i]), "failed: %.50s", d);
    drmaa_delete_job_template(jt, NULL, 0);
    return NULL;
}

static void *waiter(void *arg)
{
    char d[256];
    int stat;

    *(int *)arg = drmaa_wait(DRMAA_JOB_IDS_SESSION_ANY, NULL, 0, &stat,
                             DRMAA_TIMEOUT_WAIT_FOREVER, NULL, d, sizeof(d));
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void threads(void)
{
    static char ids[20][64];
    const char *all[] = { DRMAA_JOB_IDS_SESSION_ALL, NULL };
    const char *sleep60[] = { "60", NULL };
    pthread_t t[4];
    int distinct = 1, rc = -1;
    double t0;
    char id[64];

    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, submitter, ids[5 * i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    qsort(ids, 20, sizeof(ids[0]), cmp);
    for (int i = 0; i < 20; i++)
        distinct &= strncmp(ids[i], "failed", 6) != 0 &&
                    (i == 0 || strcmp(ids[i], ids[i - 1]) != 0);
    ok(distinct, "4 threads submit 20 jobs: 20 distinct ids");
    is_int(drmaa_synchronize(all, 60, 1, D), DRMAA_ERRNO_SUCCESS,
           "... and all 20 end");
    run("/bin/sleep", sleep60, id, sizeof(id));
    pthread_create(&t[0], NULL, waiter, &rc);
    usleep(300000); /* the waiter may or may not be waiting yet: either way */
    t0 = now_s();
    is_int(drmaa_exit(D), DRMAA_ERRNO_SUCCESS,
           "drmaa_exit while another thread waits");
    pthread_join(t[0], NULL);
    is_int(rc, DRMAA_ERRNO_NO_ACTIVE_SESSION,
           "... the waiting thread returns: no active session");
    ok(now_s() - t0 < 5, "... at once (%.2f s)", now_s() - t0);
    loom_cancel(id); /* the job itself went on */
}

/* A token that may read but not submit: init works, a submit is refused. */
static void reader(void)
{
    const char *tf = getenv("LOOM_TOKEN_FILE");
    char id[64];

    setenv("LOOM_TOKEN_FILE", getenv("DRMAA_CHECK_READER"), 1);
    is_int(drmaa_init(NULL, D), DRMAA_ERRNO_SUCCESS,
           "drmaa_init with a reader's token");
    is_int(run("/bin/true", NULL, id, sizeof(id)), DRMAA_ERRNO_AUTH_FAILURE,
           "... its submit is an auth failure: %s", diag);
    drmaa_exit(D);
    setenv("LOOM_TOKEN_FILE", tf, 1);
}

/* Through a proxy that loses the answer to the first submit: the library
 * sends it again with the same Idempotency-Key, and Loom makes one job. */
static void retried(void)
{
    drmaa_job_template_t *jt;
    struct loom_error err;
    json_t *list = NULL, *j;
    char id[64] = "";
    size_t i, n = 0;

    is_int(drmaa_init(getenv("DRMAA_CHECK_PROXY"), D), DRMAA_ERRNO_SUCCESS,
           "drmaa_init through the proxy");
    jt = job("/bin/true", NULL);
    drmaa_set_attribute(jt, DRMAA_JOB_NAME, "retried", D);
    is_int(drmaa_run_job(id, sizeof(id), jt, D), DRMAA_ERRNO_SUCCESS,
           "a submit whose first answer is lost succeeds (%s)", id);
    drmaa_delete_job_template(jt, NULL, 0);
    if (client_get_all(admin, "/v1/jobs", &list, &err) < 0)
        printf("# GET /v1/jobs: %s\n", err.message);
    json_array_foreach(list, i, j)
        n += !strcmp(json_string_value(json_object_get(j, "name")),
                     "retried");
    json_decref(list);
    is_int(n, 1, "... and Loom has one job of it, not two");
    is_int(drmaa_exit(D), DRMAA_ERRNO_SUCCESS, "drmaa_exit");
}

int main(void)
{
    struct loom_error err;
    char buf[DRMAA_CONTACT_BUFFER];
    const char *url = getenv("LOOM_URL");

    setvbuf(stdout, NULL, _IOLBF, 0);
    admin = client_create(url, getenv("DRMAA_CHECK_ADMIN"), 0, &err);
    if (!admin) {
        printf("Bail out! %s\n", err.message);
        return 1;
    }
    before_init();
    init_failures();
    diag[0] = '\0';
    is_int(drmaa_init(NULL, D), DRMAA_ERRNO_SUCCESS, "drmaa_init(NULL)%s%s",
           diag[0] ? ": " : "", diag);
    is_int(drmaa_init(NULL, D), DRMAA_ERRNO_ALREADY_ACTIVE_SESSION,
           "a second drmaa_init");
    drmaa_get_contact(buf, sizeof(buf), D);
    is_str(buf, url, "the contact is $LOOM_URL");
    drmaa_get_DRM_system(buf, sizeof(buf), D);
    ok(!strncmp(buf, "Loom 0.", 7), "the DRM system is Loom with its "
       "version: %s", buf);
    attribute_names();
    attributes();
    exits();
    mapping();
    paths();
    denied();
    bulk();
    control();
    terminate_all();
    threads();
    reader();
    retried();
    client_destroy(admin);
    return done_testing();
}
