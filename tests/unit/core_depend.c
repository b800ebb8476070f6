/* core_depend.c - dependencies in Slurm's syntax: what each form reads as,
 * the text written back, job references, every error with its message. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/depend.h"
#include "core/domain.h"
#include "tests/lib/tap.h"

/* text reads as n dependencies (any: joined by '?'), written back as
 * want. */
static void good(const char *text, size_t n, int any, const char *want)
{
    struct dep_list l;
    struct loom_error err = {0};
    char *back;

    if (dep_parse(text, &l, &err) < 0) {
        ok(0, "'%s' is read", text);
        printf("#   %s\n", err.message);
        return;
    }
    back = dep_format(&l);
    ok(l.n == n && l.any == any, "'%s': %zu jobs, %s", text, n,
       any ? "any of them" : "all of them");
    is_str(back, want, "... written back as '%s'", want);
    free(back);
    dep_list_fini(&l);
}

static void bad(const char *text, const char *msg)
{
    struct dep_list l;
    struct loom_error err = {0};
    int rc = dep_parse(text, &l, &err);

    ok(rc < 0 && err.kind == LOOM_EINVAL && !l.n && !l.v,
       "'%.40s' is refused", text);
    is_str(err.message, msg, "... saying: %s", msg);
}

static void ref(const char *s, int rc, long long id, long task)
{
    int64_t got_id = -7;
    long got_task = -7;
    int got = domain_job_ref_parse(s, &got_id, &got_task);

    if (rc == 0)
        ok(got == 0 && got_id == id && got_task == task,
           "'%s' is job %lld, task %ld", s, id, task);
    else
        ok(got < 0, "'%s' is not a job", s);
}

#define TAKES "Loom takes after, afterany, afterok, afternotok (each with " \
              "job ids: afterok:12:13, or an array's task: 12_7) and "      \
              "singleton"

int main(void)
{
    struct dep_list l;
    struct loom_error err;
    char big[3000];
    size_t n = 0;

    good("afterok:12:13,afterany:14", 3, 0, "afterok:12:13,afterany:14");
    good("afterok:12,afterok:13", 2, 0, "afterok:12:13");
    good("afterok:12?afternotok:13_7", 2, 1, "afterok:12?afternotok:13_7");
    good("afterok:12:13?after:14", 3, 1, "afterok:12?afterok:13?after:14");
    good("singleton", 1, 0, "singleton");
    good("afterok:12,singleton", 2, 0, "afterok:12,singleton");
    good("after:1", 1, 0, "after:1");
    good("afterany:123_0", 1, 0, "afterany:123_0");

    dep_parse("afterok:12:13_7,afternotok:14,singleton", &l, &err);
    ok(l.n == 4 && l.v[0].type == DEP_AFTEROK && l.v[0].job == 12 &&
       l.v[0].task == -1, "the first: afterok, job 12, whole");
    ok(l.v[1].type == DEP_AFTEROK && l.v[1].job == 13 && l.v[1].task == 7,
       "the second: afterok, job 13, task 7");
    ok(l.v[2].type == DEP_AFTERNOTOK && l.v[2].job == 14,
       "the third: afternotok, job 14");
    ok(l.v[3].type == DEP_SINGLETON && l.v[3].job == 0,
       "the fourth: singleton, no job");
    dep_list_fini(&l);

    bad("", "the dependency is empty: " TAKES);
    bad("afterok", "afterok needs the jobs it waits for (afterok:12:13)");
    bad("afterok:", "afterok needs the jobs it waits for (afterok:12:13)");
    bad("afterok:x", "'x' is not a job id (123) or an array's task (123_7)");
    bad("afterok:012", "'012' is not a job id (123) or an array's task "
        "(123_7)");
    bad("afterok:12_", "'12_' is not a job id (123) or an array's task "
        "(123_7)");
    bad("afterok:12::13", "'' is not a job id (123) or an array's task "
        "(123_7)");
    bad("foo:1", "'foo' is not a dependency type: " TAKES);
    bad("aftercorr:12", "'aftercorr' is not a dependency type: " TAKES);
    bad("after:12+5", "'12+5': a delay after a job (+MINUTES) is not "
        "supported by Loom");
    bad("afterok:1,afterok:2?afterany:3", "a dependency joins its parts "
        "with ',' (all of them) or '?' (any of them), not both");
    bad("afterok:1,", "the dependency 'afterok:1,' has an empty part");
    bad(",afterok:1", "the dependency ',afterok:1' has an empty part");
    bad("singleton:3", "singleton names no job: it waits for the owner's "
        "other jobs of the same name");
    n = (size_t)snprintf(big, sizeof(big), "afterok");
    for (int i = 1; i <= 257; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, ":%d", i);
    bad(big, "a dependency names at most 256 jobs");

    ref("123", 0, 123, -1);
    ref("123_7", 0, 123, 7);
    ref("123_0", 0, 123, 0);
    ref("1_4000000", 0, 1, 4000000);
    ref("123_07", -1, 0, 0);
    ref("0_1", -1, 0, 0);
    ref("123_", -1, 0, 0);
    ref("_7", -1, 0, 0);
    ref("123_4000001", -1, 0, 0);
    ref("12_3_4", -1, 0, 0);
    ref("123x", -1, 0, 0);
    return done_testing();
}
