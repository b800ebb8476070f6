/* timeutil.c - clocks and RFC 3339 formatting and parsing. */
/* SPDX-License-Identifier: MIT */
#include "core/timeutil.h"

#include <stdio.h>
#include <string.h>

double time_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double time_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void time_format(time_t t, char buf[32])
{
    struct tm tm;

    if (t == 0) {
        buf[0] = '\0';
        return;
    }
    gmtime_r(&t, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int time_parse(const char *s, time_t *out)
{
    struct tm tm;
    const char *end;

    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return -1;
    if (*end == '.') /* fractional seconds are accepted and dropped */
        for (end++; *end >= '0' && *end <= '9'; end++)
            ;
    if (strcmp(end, "Z") != 0 && strcmp(end, "+00:00") != 0)
        return -1;
    *out = timegm(&tm);
    return 0;
}
