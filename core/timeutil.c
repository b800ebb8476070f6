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

double time_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

const char *time_format_before(time_t now, double age_s, char buf[32])
{
    time_t age = (time_t)age_s;

    if (age_s <= 0)
        return NULL;
    if ((double)age < age_s)
        age++;
    time_format(now - age, buf);
    return buf;
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

int time_parse_when(const char *s, time_t *out)
{
    long long v = 0;
    size_t i;

    if (!s || !*s)
        return -1;
    for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
        if (i >= 12) /* more digits than TIME_EPOCH_MAX has */
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (s[i] != '\0')
        return time_parse(s, out);
    if (v > TIME_EPOCH_MAX || (s[0] == '0' && s[1]))
        return -1;
    *out = (time_t)v;
    return 0;
}
