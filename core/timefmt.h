/* timefmt.h - walltimes as the cluster systems write them: Slurm's time
 * formats, and the [[H:]M:]S of Grid Engine's h_rt and PBS's walltime. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_TIMEFMT_H
#define LOOM_CORE_TIMEFMT_H

#include "core/error.h"

/* The formats, for messages and usage texts. */
#define TIMEFMT_SLURM_FORMATS "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"
#define TIMEFMT_HMS_FORMATS "SS, MM:SS or HH:MM:SS"

/* A walltime in one of Slurm's formats (a bare number is minutes) into
 * *secs: from 1 s to LOOM_JOB_WALLTIME_MAX_S. Minutes and seconds after
 * another field are 0 to 59, hours after days 0 to 23. 0, or -1 with a
 * 400 saying what is wrong with text (a format it is not in, a field out
 * of range, no limit at all: 0, INFINITE, UNLIMITED; too long). The
 * message does not name the option: callers prefix it. Any thread. */
int timefmt_slurm(const char *text, long *secs, struct loom_error *err);

/* A walltime as Grid Engine (h_rt) and PBS (walltime) write it: seconds,
 * MM:SS or HH:MM:SS (an empty field is 0, as Grid Engine's 1::30; the
 * last field may have a fraction, rounded up). As timefmt_slurm
 * otherwise (INFINITY is no limit). */
int timefmt_hms(const char *text, long *secs, struct loom_error *err);

/* secs as Slurm writes it: HH:MM:SS, or D-HH:MM:SS from a day. buf has
 * at least 32 bytes. timefmt_slurm reads it back as secs. */
void timefmt_slurm_str(long secs, char *buf);
/* secs as HH:MM:SS (hours past 99 as they are); buf >= 32 bytes. */
void timefmt_hms_str(long secs, char *buf);

#endif
