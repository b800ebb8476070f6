/* scheduler_swf.c - the SWF reader on small inline traces: comments, blank
 * lines, unknown fields, skipped jobs and malformed lines. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "scheduler/swf.h"
#include "tests/lib/tap.h"

/* Read text as a trace; the jobs stay in *jobs for the caller to free. */
static int read_text(const char *text, struct swf_job **jobs, size_t *n,
                     size_t *skipped, struct loom_error *err)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int r;

    if (!f)
        return -1;
    r = swf_read(f, jobs, n, skipped, err);
    fclose(f);
    return r;
}

static const char trace[] =
    "; Version: 2.2\n"
    "; Computer: a test\n"
    ";\n"
    "\n"
    /* a plain job: requested procs and time known */
    "1 0 5 100 4 -1 -1 4 200 -1 1 7 1 -1 -1 -1 -1 -1\n"
    /* requested procs unknown: allocated; requested time unknown */
    "  2\t10\t-1\t3600\t16\t12.5\t-1\t-1\t-1\t-1\t1\t3\t1\t2\t1\t-1\t-1\t-1\r\n"
    /* cancelled before it ran: run -1, skipped */
    "3 20 -1 -1 8 -1 -1 8 60 -1 5 7 1 -1 -1 -1 -1 -1\n"
    "   ; an indented comment\n"
    /* no processor count at all: skipped */
    "4 30 -1 50 -1 -1 -1 -1 60 -1 1 7 1 -1 -1 -1 -1 -1\n"
    /* run 0 is a real (empty) job; user unknown */
    "5 40 -1 0 1 -1 -1 1 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    /* requested time 0 means unknown too */
    "6 50 -1 7 2 -1 -1 2 0 -1 1 9 1 -1 -1 -1 -1 -1";

static void t_good(void)
{
    struct swf_job *j = NULL;
    size_t n = 0, skipped = 99;
    struct loom_error err;

    memset(&err, 0, sizeof(err));
    ok(read_text(trace, &j, &n, &skipped, &err) == 0, "the trace reads%s%s",
       err.message[0] ? ": " : "", err.message);
    is_int(n, 4, "four jobs kept");
    is_int(skipped, 2, "two skipped: no run time, no processors");
    if (n != 4)
        goto out;
    ok(j[0].id == 1 && j[0].submit == 0 && j[0].run == 100 && j[0].procs == 4 &&
           j[0].req_time == 200 && j[0].user == 7,
       "job 1: every field");
    ok(j[1].id == 2 && j[1].submit == 10 && j[1].run == 3600,
       "job 2: tabs, CR and a fractional cpu time");
    is_int(j[1].procs, 16, "job 2: procs from the allocated count");
    ok(j[1].req_time == -1, "job 2: requested time unknown is -1");
    is_int(j[1].user, 3, "job 2: user");
    ok(j[2].id == 5 && j[2].run == 0 && j[2].user == -1,
       "job 5: run 0 kept, user unknown");
    ok(j[3].id == 6 && j[3].req_time == -1,
       "job 6: requested time 0 is unknown");
out:
    free(j);
}

/* A bad trace must fail, with the line number and field in the message. */
static void bad(const char *text, const char *want, const char *what)
{
    struct swf_job *j = (struct swf_job *)&j; /* must stay untouched */
    size_t n = 77;
    struct loom_error err;
    int r;

    memset(&err, 0, sizeof(err));
    r = read_text(text, &j, &n, NULL, &err);
    ok(r == -1 && strstr(err.message, want) != NULL, "%s", what);
    if (r != -1 || !strstr(err.message, want))
        printf("#   got %d '%s', want '%s'\n", r, err.message, want);
    ok(n == 77 && j == (struct swf_job *)&j, "%s: outputs untouched", what);
}

static void t_bad(void)
{
    bad("; c\n1 0 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "2 5 -1 10 1 -1 -1 1 -1\n",
        "line 3: 9 fields", "a short line names its line");
    bad("1 0 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1 99\n",
        "line 1: more than 18", "a long line");
    bad("\n\n1 0 -1 ten 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
        "line 3: field 4 (run time): 'ten'", "a word where a number goes");
    bad("1 0 -1 10 2.5 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
        "field 5 (allocated processors)", "a fractional processor count");
    bad("1 0 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 nan\n", "field 18",
        "nan is not a number here");
    bad("1 0 -1 10 1 -1 -1 1e300000 -1 -1 1 1 1 -1 -1 -1 -1 -1\n", "field 8",
        "an overflowing number");
}

static void t_empty(void)
{
    struct swf_job *j = (struct swf_job *)&j;
    size_t n = 5, skipped = 5;
    struct loom_error err;

    ok(read_text("; only comments\n;\n", &j, &n, &skipped, &err) == 0 &&
           n == 0 && skipped == 0 && j == NULL,
       "a trace of comments has no jobs");
}

int main(void)
{
    t_good();
    t_bad();
    t_empty();
    return done_testing();
}
