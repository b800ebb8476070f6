/* core_timefmt.c - walltimes: every Slurm format, [[H:]M:]S, every error
 * with its message, and the strings written back. */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/timefmt.h"
#include "tests/lib/tap.h"

static void good(int slurm, const char *text, long want)
{
    struct loom_error err = {0};
    long s = -1;
    int rc = slurm ? timefmt_slurm(text, &s, &err)
                   : timefmt_hms(text, &s, &err);

    ok(rc == 0 && s == want, "%s '%s' is %ld s", slurm ? "slurm" : "hms",
       text, want);
    if (rc != 0 || s != want)
        printf("#   got rc %d, %ld s: %s\n", rc, s, err.message);
}

static void bad(int slurm, const char *text, const char *msg)
{
    struct loom_error err = {0};
    long s = -1;
    int rc = slurm ? timefmt_slurm(text, &s, &err)
                   : timefmt_hms(text, &s, &err);

    ok(rc < 0 && err.kind == LOOM_EINVAL && s == -1, "%s '%s' is refused",
       slurm ? "slurm" : "hms", text);
    is_str(err.message, msg, "... saying: %s", msg);
}

#define SLURM_NOT(t)                                                         \
    "'" t "' is not a time in Slurm's formats (MM, MM:SS, HH:MM:SS, D-HH, " \
    "D-HH:MM or D-HH:MM:SS)"
#define HMS_NOT(t)                                                           \
    "'" t "' is not a time in the form [[H:]M:]S (SS, MM:SS or HH:MM:SS)"
#define NO_LIMIT(t)                                                          \
    "'" t "' asks for no time limit, which Loom does not take: give one of " \
    "at most 366 days"

int main(void)
{
    char buf[32];
    struct loom_error err;
    long s;

    /* Slurm: every format */
    good(1, "5", 300);
    good(1, "90", 5400);
    good(1, "5:30", 330);
    good(1, "00:05:00", 300);
    good(1, "1:00:00", 3600);
    good(1, "2-3", 2 * 86400 + 3 * 3600);
    good(1, "2-03:30", 2 * 86400 + 3 * 3600 + 30 * 60);
    good(1, "1-00:00:01", 86401);
    good(1, "0:1", 1);
    good(1, "366-00", 366L * 86400);
    /* Slurm: every error */
    bad(1, "", SLURM_NOT(""));
    bad(1, "1:2:3:4", SLURM_NOT("1:2:3:4"));
    bad(1, "1h", SLURM_NOT("1h"));
    bad(1, "1-2-3", SLURM_NOT("1-2-3"));
    bad(1, "-5", SLURM_NOT("-5"));
    bad(1, "1-", SLURM_NOT("1-"));
    bad(1, "1::2", SLURM_NOT("1::2"));
    bad(1, "1-2:3:4:5", SLURM_NOT("1-2:3:4:5"));
    bad(1, " 5", SLURM_NOT(" 5"));
    bad(1, "1-24", "'1-24': the hours must be 0 to 23");
    bad(1, "1:60:00", "'1:60:00': the minutes must be 0 to 59");
    bad(1, "1-1:60", "'1-1:60': the minutes must be 0 to 59");
    bad(1, "5:60", "'5:60': the seconds must be 0 to 59");
    bad(1, "0", NO_LIMIT("0"));
    bad(1, "00:00:00", NO_LIMIT("00:00:00"));
    bad(1, "INFINITE", NO_LIMIT("INFINITE"));
    bad(1, "unlimited", NO_LIMIT("unlimited"));
    bad(1, "-1", NO_LIMIT("-1"));
    bad(1, "367-00", "'367-00' is longer than Loom's limit of 366 days");
    bad(1, "527041", "'527041' is longer than Loom's limit of 366 days");
    bad(1, "99999999999999999999",
        "'99999999999999999999' is longer than Loom's limit of 366 days");
    /* [[H:]M:]S */
    good(0, "300", 300);
    good(0, "5:00", 300);
    good(0, "1:00:00", 3600);
    good(0, "100:00:00", 360000);
    good(0, "1::30", 3630);
    good(0, ":5:", 300);
    good(0, "1:00:00.5", 3601);
    good(0, "59.0", 59);
    bad(0, "", HMS_NOT(""));
    bad(0, "1:2:3:4", HMS_NOT("1:2:3:4"));
    bad(0, "1h", HMS_NOT("1h"));
    bad(0, "1-00:00:00", HMS_NOT("1-00:00:00"));
    bad(0, "0x10", HMS_NOT("0x10"));
    bad(0, "1.5:00", HMS_NOT("1.5:00"));
    bad(0, "1:00:60", "'1:00:60': the seconds must be 0 to 59");
    bad(0, "1:60:00", "'1:60:00': the minutes must be 0 to 59");
    bad(0, "0", NO_LIMIT("0"));
    bad(0, "INFINITY", NO_LIMIT("INFINITY"));
    bad(0, "31622401", "'31622401' is longer than Loom's limit of 366 days");
    /* written back, and read back the same */
    timefmt_slurm_str(300, buf);
    is_str(buf, "00:05:00", "300 s as Slurm writes it");
    timefmt_slurm_str(2 * 86400 + 3723, buf);
    is_str(buf, "2-01:02:03", "2 days and 3723 s as Slurm writes it");
    ok(timefmt_slurm(buf, &s, &err) == 0 && s == 2 * 86400 + 3723,
       "... which reads back the same");
    timefmt_hms_str(2 * 86400 + 3723, buf);
    is_str(buf, "49:02:03", "2 days and 3723 s as HH:MM:SS");
    ok(timefmt_hms(buf, &s, &err) == 0 && s == 2 * 86400 + 3723,
       "... which reads back the same");
    return done_testing();
}
