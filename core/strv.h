/* strv.h - a list of owned strings, NULL-terminated for use as an argv. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STRV_H
#define LOOM_CORE_STRV_H

#include <stddef.h>

/* v[n] is NULL once anything was pushed; an empty list may have v NULL. */
struct strv {
    char **v;
    size_t n;
};

/* Append a copy of str. 0, or -1 when out of memory (s unchanged). */
int strv_push(struct strv *s, const char *str);
/* Append "name=value". 0, or -1 when out of memory (s unchanged). */
int strv_push_kv(struct strv *s, const char *name, const char *value);
/* Free every string and the array; s is empty afterwards. NULL-safe. */
void strv_fini(struct strv *s);

#endif
