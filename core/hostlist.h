/* hostlist.h - node names written compressed, as Slurm writes them. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HOSTLIST_H
#define LOOM_CORE_HOSTLIST_H

#include <stddef.h>

/* The n names as one hostlist: names that differ only in a number at
 * their end share a bracket of ranges, numbers in order ("n1", "n2", "n3",
 * "n5" -> "n[1-3,5]"); a zero-padded number keeps its width and joins
 * only numbers of as many digits ("n01", "n02", "n10" -> "n[01-02,10]");
 * other names stay as they are. Groups and lone names come in the order
 * of their first name, separated by ','; a name given twice is written
 * once. Returns a new string ("" for none) that the caller frees, or NULL
 * when out of memory. Any thread. */
char *hostlist_compress(char *const *names, size_t n);

#endif
