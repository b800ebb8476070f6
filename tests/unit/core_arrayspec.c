/* core_arrayspec.c - array task ids: the forms read, the ranges they
 * become, ordinals, the compressed text written back, every error with
 * its message. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/arrayspec.h"
#include "core/limits.h"
#include "tests/lib/tap.h"

/* text reads as tasks tasks and limit, and is written back as want. */
static void good(const char *text, long tasks, long limit, const char *want)
{
    struct array_spec s;
    struct loom_error err = {0};
    char *back;

    if (array_spec_parse(text, &s, &err) < 0) {
        ok(0, "'%s' is read", text);
        printf("#   %s\n", err.message);
        return;
    }
    back = array_spec_text(&s);
    ok(s.tasks == tasks && s.limit == limit, "'%s': %ld tasks, limit %ld",
       text, tasks, limit);
    is_str(back, want, "... written back as '%s'", want);
    free(back);
    array_spec_fini(&s);
}

static void bad(const char *text, const char *msg)
{
    struct array_spec s;
    struct loom_error err = {0};
    int rc = array_spec_parse(text, &s, &err);

    ok(rc < 0 && err.kind == LOOM_EINVAL && s.n == 0 && !s.r,
       "'%.40s' is refused", text);
    is_str(err.message, msg, "... saying: %s", msg);
}

#define FORMS "(N, N-M or N-M:S, joined by commas, then %LIMIT if any)"

int main(void)
{
    struct array_spec s;
    struct loom_error err;
    char *t, big[5000];
    long skip[3];

    good("1-100:2%10", 50, 10, "1-99:2%10");
    good("1-100", 100, 0, "1-100");
    good("0", 1, 0, "0");
    good("7", 1, 0, "7");
    good("1,3,5-7", 5, 0, "1-5:2,6-7");
    good("3,1,2,2", 3, 0, "1-3");
    good("1-100:3", 34, 0, "1-100:3");
    good("1-10:4", 3, 0, "1-9:4");
    good("1,5", 2, 0, "1,5");
    good("2-3", 2, 0, "2-3");
    good("10-20:5,1", 4, 0, "1,10-20:5");
    good("1-6%1", 6, 1, "1-6%1");
    good("0-999999", 1000000, 0, "0-999999");
    good("4000000", 1, 0, "4000000");

    /* ordinals */
    array_spec_parse("1-100:2", &s, &err);
    is_int(array_spec_task(&s, 0), 1, "1-100:2: the first task is 1");
    is_int(array_spec_task(&s, 49), 99, "... the 50th is 99");
    is_int(array_spec_ord(&s, 7), 3, "... task 7 is the 4th");
    is_int(array_spec_ord(&s, 8), -1, "... it has no task 8");
    is_int(array_spec_ord(&s, 101), -1, "... nor 101");
    is_int(array_spec_ord(&s, 0), -1, "... nor 0");
    skip[0] = 0;
    t = array_spec_format(&s, 0, skip, 1);
    is_str(t, "3-99:2", "without its first: 3-99:2");
    free(t);
    t = array_spec_format(&s, 50, NULL, 0);
    is_str(t, "", "from past its last: nothing");
    free(t);
    t = array_spec_format(&s, 48, NULL, 0);
    is_str(t, "97,99", "its last two: 97,99");
    free(t);
    array_spec_fini(&s);

    array_spec_parse("1-10,20,30-40:5", &s, &err);
    is_int(s.tasks, 14, "1-10,20,30-40:5: 14 tasks");
    is_int(array_spec_task(&s, 10), 20, "... the 11th is 20");
    is_int(array_spec_task(&s, 13), 40, "... the 14th is 40");
    is_int(array_spec_ord(&s, 35), 12, "... task 35 is the 13th");
    skip[0] = 5;
    skip[1] = 10;
    skip[2] = 12;
    t = array_spec_format(&s, 3, skip, 3);
    is_str(t, "4-5,7-10,30,40", "from the 4th, without 6, 20 and 35: "
           "4-5,7-10,30,40");
    free(t);
    array_spec_fini(&s);

    bad("", "give the array's task ids " FORMS);
    bad("%4", "give the array's task ids " FORMS);
    bad("x", "'x' is not a task id or range " FORMS);
    bad("1-", "'1-' is not a task id or range " FORMS);
    bad("1,,2", "'' is not a task id or range " FORMS);
    bad("1-5:", "'1-5:' is not a task id or range " FORMS);
    bad("-1", "'-1' is not a task id or range " FORMS);
    bad("1 -5", "'1 -5' is not a task id or range " FORMS);
    bad("5-1", "the range 5-1 ends before it begins");
    bad("1-10:0", "the range '1-10:0' has a step of 0: give 1 or more");
    bad("1-4000001", "task ids go from 0 to 4000000, not '1-4000001'");
    bad("99999999999999999999", "task ids go from 0 to 4000000, not "
        "'99999999999999999999'");
    bad("0-1000000", "an array has at most 1000000 tasks");
    bad("0-600000,0-600000", "an array has at most 1000000 tasks");
    bad("1-10%0", "'%0' is not a limit of tasks at once: give %N, N from 1 "
        "to 1000000");
    bad("1-10%x", "'%x' is not a limit of tasks at once: give %N, N from 1 "
        "to 1000000");
    bad("1-10%", "'%' is not a limit of tasks at once: give %N, N from 1 to "
        "1000000");
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    bad(big, "an array's task ids take at most 4096 characters");
    return done_testing();
}
