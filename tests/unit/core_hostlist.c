/* core_hostlist.c - node names compressed into a hostlist, the times a
 * client may give (RFC 3339 or epoch seconds), and the bound of start-up's
 * light reads. */
/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/hostlist.h"
#include "core/timeutil.h"
#include "tests/lib/tap.h"

static void compressed(const char *want, size_t n, ...)
{
    char *names[16], *got;
    va_list ap;

    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        names[i] = va_arg(ap, char *);
    va_end(ap);
    got = hostlist_compress(names, n);
    is_str(got, want, "%zu name(s) compress to '%s'", n, want);
    free(got);
}

static void when(const char *s, long long want)
{
    time_t t = -1;
    int rc = time_parse_when(s, &t);

    ok(rc == 0 && (long long)t == want, "time '%s' is %lld", s, want);
}

static void not_when(const char *s)
{
    time_t t = 12345;

    ok(time_parse_when(s, &t) < 0 && t == 12345, "'%s' is not a time", s);
}

/* time_format_before(now, age_s): want, or NULL */
static void before(time_t now, double age_s, const char *want)
{
    char buf[32] = "untouched";
    const char *got = time_format_before(now, age_s, buf);

    if (want)
        ok(got == buf && !strcmp(buf, want), "%g s before %lld is %s",
           age_s, (long long)now, want);
    else
        ok(!got && !strcmp(buf, "untouched"), "%g s before: none", age_s);
}

int main(void)
{
    compressed("", 0);
    compressed("n1", 1, "n1");
    compressed("login", 1, "login");
    compressed("n[1-3,5]", 4, "n1", "n2", "n3", "n5");
    compressed("n[1-3]", 3, "n3", "n1", "n2");
    compressed("n[1-2]", 3, "n1", "n2", "n1");
    compressed("n[01-02,10]", 3, "n01", "n02", "n10");
    compressed("n[01-02],n[1-2]", 4, "n01", "n1", "n02", "n2");
    compressed("n[01,10],n1", 3, "n10", "n1", "n01");
    compressed("a[1-2],login,b7", 4, "a1", "login", "b7", "a2");
    compressed("rack1-n[8-11]", 4, "rack1-n8", "rack1-n9", "rack1-n10",
               "rack1-n11");
    compressed("n[9,11]", 2, "n11", "n9");
    compressed("n[0-1]", 2, "n0", "n1");

    when("0", 0);
    when("1795687200", 1795687200);
    when("2026-11-26T10:00:00Z", 1795687200);
    when("2026-11-26T10:00:00+00:00", 1795687200);
    when("253402300799", 253402300799LL);
    not_when("");
    not_when("253402300800");
    not_when("1234567890123");
    not_when("-5");
    not_when("12x");
    not_when("01");
    not_when("2026-11-26T10:00:00+01:00");
    not_when("yesterday");

    /* rounded up: what ended at the text or before ended age_s ago */
    before(1795687200, 600, "2026-11-26T09:50:00Z");
    before(1795687200, 0.5, "2026-11-26T09:59:59Z");
    before(1795687200, 299.2, "2026-11-26T09:55:00Z");
    before(1795687200, 0, NULL);
    before(1795687200, -1, NULL);
    return done_testing();
}
