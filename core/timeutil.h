/* timeutil.h - clocks and RFC 3339 times. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_TIMEUTIL_H
#define LOOM_CORE_TIMEUTIL_H

#include <time.h>

double time_mono(void);  /* seconds on the monotonic clock */
double time_real(void);  /* seconds since the epoch, with fraction */
double time_thread_cpu(void); /* seconds of CPU the calling thread used */
/* "2026-11-21T20:00:00Z" into buf (at least 21 bytes); "" for t == 0. */
void time_format(time_t t, char buf[32]);
/* Parse an RFC 3339 UTC time (Z or +00:00). 0, or -1 when invalid. */
int time_parse(const char *s, time_t *out);
/* For start-up's light reads: now less age_s, rounded up to a whole
 * second, into buf as time_format writes it, so that whatever ended at
 * that text or before (compared as text, which sorts as the times do)
 * ended at least age_s before now. Returns buf; NULL (buf untouched)
 * when age_s <= 0: then nothing leaves memory. */
const char *time_format_before(time_t now, double age_s, char buf[32]);
/* A point in time as a client gives one: an RFC 3339 UTC time as
 * time_parse takes it, or whole seconds since the epoch (digits only,
 * from 0 to TIME_EPOCH_MAX, the end of year 9999). 0, or -1 when s is
 * neither. */
#define TIME_EPOCH_MAX 253402300799LL
int time_parse_when(const char *s, time_t *out);

#endif
