/* core_outpath.c - a job's workdir and output names: what they may be,
 * and the patterns expanded. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/outpath.h"
#include "tests/lib/tap.h"

static void t_check(void)
{
    struct loom_error err;
    char big[LOOM_PATH_MAX + 2];

    ok(outpath_check("/home/alice/run", "workdir", 1, &err) == 0,
       "an absolute workdir");
    ok(outpath_check("run", "workdir", 1, &err) < 0 &&
       !strcmp(err.field, "workdir") &&
       strstr(err.message, "must be an absolute path, not 'run'"),
       "a relative workdir: %s", err.message);
    ok(outpath_check("a\nb", "output", 0, &err) < 0 &&
       strstr(err.message, "control character"), "a control character: %s",
       err.message);
    ok(outpath_check("", "error", 0, &err) < 0 &&
       !strcmp(err.field, "error"), "empty: %s", err.message);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ok(outpath_check(big, "output", 0, &err) < 0 &&
       strstr(err.message, "longer than 4095 bytes"), "too long: %s",
       err.message);
    ok(outpath_check("o/%x-%j-%u-%N-%A-%a-%%.out", "output", 0, &err) == 0,
       "every pattern");
    ok(outpath_check("x-%q.out", "output", 0, &err) < 0 &&
       strstr(err.message, "unknown pattern '%q'") &&
       strstr(err.message, LOOM_OUTPUT_PATTERNS), "an unknown one: %s",
       err.message);
    ok(outpath_check("x-%", "output", 0, &err) < 0, "a lone %% at the end");
    ok(outpath_check("%%q", "output", 0, &err) == 0, "%%%% then a letter");
}

static void t_expand(void)
{
    struct outpath_vars v = {42, "alice", "sum", 0, 0, "n3"};
    struct outpath_vars task = {57, "alice", "sum", 40, 7, "n3"};
    char *s;

    s = outpath_expand("o/%x-%j-%u-%N-%A-%a-%%.out", &v);
    is_str(s, "o/sum-42-alice-n3-42-0-%.out", "expanded");
    free(s);
    s = outpath_expand(LOOM_OUTPUT_DEFAULT, &v);
    is_str(s, "loom-42.out", "the default name");
    free(s);
    s = outpath_expand("plain", &v);
    is_str(s, "plain", "no pattern");
    free(s);
    s = outpath_expand("%A_%a-%j.out", &task);
    is_str(s, "40_7-57.out", "an array's task: %%A its array, %%a its task, "
           "%%j its own record");
    free(s);
}

int main(void)
{
    t_check();
    t_expand();
    return done_testing();
}
