/* grid_drmaa_paths.c - libdrmaa's paths: drmaa_wd, drmaa_output_path and
 * drmaa_error_path with their placeholders, checked and made into the
 * request's workdir, output and error. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grid/drmaa/template.h"
#include "tests/lib/tap.h"

#define HD DRMAA_PLACEHOLDER_HD
#define WD DRMAA_PLACEHOLDER_WD
#define INCR DRMAA_PLACEHOLDER_INCR

/* A template with wd, output, error and join (NULL: unset), the request's
 * paths for index: 0 and body, or -1 with e. */
static json_t *body;
static struct dr_error e;

static int apply(const char *wd, const char *out, const char *err,
                 const char *join, int index)
{
    drmaa_job_template_t jt = { 0 };

    jt.scalar[DR_WD] = (char *)wd;
    jt.scalar[DR_OUTPUT_PATH] = (char *)out;
    jt.scalar[DR_ERROR_PATH] = (char *)err;
    jt.scalar[DR_JOIN_FILES] = (char *)join;
    json_decref(body);
    body = json_object();
    memset(&e, 0, sizeof(e));
    return dr_paths_apply(&jt, index, body, &e);
}

static const char *get(const char *key)
{
    json_t *v = json_object_get(body, key);

    return v ? json_string_value(v) : "(absent)";
}

static void t_checks(void)
{
    struct dr_error err = { 0 };

    ok(dr_wd_check(DRMAA_WD, "/w/" INCR, &err) == 0, "wd: absolute, incr");
    ok(dr_wd_check(DRMAA_WD, HD, &err) == 0, "wd: the home alone");
    ok(dr_wd_check(DRMAA_WD, HD "/", &err) == 0, "wd: the home and a /");
    ok(dr_wd_check(DRMAA_WD, HD "/sub", &err) < 0 &&
       err.code == DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
       "wd: under the home is refused: %s", err.msg);
    ok(dr_wd_check(DRMAA_WD, "/a" HD, &err) < 0 &&
       err.code == DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
       "wd: the home later: %s", err.msg);
    ok(dr_wd_check(DRMAA_WD, WD, &err) < 0 &&
       err.code == DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
       "wd: $drmaa_wd_ph$ in it: %s", err.msg);
    ok(dr_iopath_check(DRMAA_OUTPUT_PATH, "h:" WD "/x." INCR, &err) == 0,
       "output: host, wd, incr");
    ok(dr_iopath_check(DRMAA_OUTPUT_PATH, "h:", &err) < 0 &&
       err.code == DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
       "output: no path: %s", err.msg);
    ok(dr_iopath_check(DRMAA_ERROR_PATH, ":" HD "/" HD, &err) < 0 &&
       err.code == DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
       "error: the home twice: %s", err.msg);
}

static void t_apply(void)
{
    char cwd[4096], want[8192];

    is_int(apply(NULL, NULL, NULL, NULL, 0), 0, "no paths");
    ok(!json_object_get(body, "workdir") && !json_object_get(body, "output"),
       "... no workdir, no output");
    is_str(get("error"), DR_ERROR_FILE, "... error %s", DR_ERROR_FILE);
    is_int(apply(NULL, NULL, NULL, "y", 0), 0, "join y");
    ok(!json_object_get(body, "error"), "... no error");

    is_int(apply("/w", "host:" WD "/o%." INCR, "/logs/e", "n", 7), 0,
           "wd, output with a host, wd, a %% and incr, index 7");
    is_str(get("workdir"), "/w", "... workdir /w");
    is_str(get("output"), "o%%.7", "... output o%%%%.7");
    is_str(get("error"), "/logs/e", "... error /logs/e");
    is_int(apply("/w/" INCR, "out", "/logs/e", "y", 12), 0,
           "incr in wd, join y with an error path");
    is_str(get("workdir"), "/w/12", "... workdir /w/12");
    is_str(get("output"), "out", "... output out (no host part)");
    ok(!json_object_get(body, "error"), "... no error: joined");

    is_int(apply(NULL, ":/x/dir/", ":" WD, NULL, 0), 0, "directories");
    is_str(get("output"), "/x/dir/%x.o%j", "... a path ending in /");
    is_str(get("error"), "%x.e%j", "... $drmaa_wd_ph$ alone");
    is_int(apply(NULL, ":/tmp", ":" HD "/", NULL, 0), 0,
           "a directory of this host; the home and a /");
    is_str(get("output"), "/tmp/%x.o%j", "... /tmp is a directory here");
    is_str(get("error"), "%x.e%j", "... the home itself");

    is_int(apply(HD, HD "/o", ":" HD "//e", NULL, 0), 0, "the home");
    ok(!json_object_get(body, "workdir"), "... no workdir");
    is_str(get("output"), "o", "... output relative to it");
    is_str(get("error"), "e", "... error too, its slashes dropped");

    ok(getcwd(cwd, sizeof(cwd)) != NULL, "getcwd");
    is_int(apply("rel/d", NULL, NULL, NULL, 0), 0, "a relative wd");
    snprintf(want, sizeof(want), "%s/rel/d", strcmp(cwd, "/") ? cwd : "");
    is_str(get("workdir"), want, "... made absolute with the cwd");

    is_int(apply("/w", HD "/o", NULL, NULL, 0), -1,
           "$drmaa_hd_ph$ with another wd is refused");
    is_int(e.code, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
           "... conflicting: %s", e.msg);
    is_int(apply(NULL, "o." INCR, NULL, NULL, 0), -1,
           "$drmaa_incr_ph$ in a single job is refused");
    is_int(e.code, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
           "... conflicting: %s", e.msg);
}

static void t_long(void)
{
    size_t k = strlen(INCR);
    char *big = malloc(k * 700 + 2);

    if (!big)
        return;
    big[0] = '/';
    for (int i = 0; i < 700; i++) /* 700 times 7 digits: over 4095 */
        memcpy(big + 1 + i * k, INCR, k);
    big[1 + 700 * k] = '\0';
    is_int(apply(NULL, big, NULL, NULL, 1000000), -1,
           "a path too long once its placeholders are replaced");
    ok(e.code == DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE &&
       strstr(e.msg, "4095 bytes"), "... says so: %s", e.msg);
    free(big);
    big = malloc(4097);
    if (!big)
        return;
    memset(big, 'x', 4096);
    big[0] = '/';
    big[4095] = '\0';
    is_int(apply(NULL, big, NULL, NULL, 0), 0, "a path of 4095 bytes");
    is_int(strlen(get("output")), 4095, "... is the output as it is");
    big[4095] = 'x';
    big[4096] = '\0';
    is_int(apply(NULL, big, NULL, NULL, 0), -1, "one of 4096 is refused");
    free(big);
}

int main(void)
{
    t_checks();
    t_apply();
    t_long();
    json_decref(body);
    return done_testing();
}
