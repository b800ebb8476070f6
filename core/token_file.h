/* token_file.h - a bearer token read from a file. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_TOKEN_FILE_H
#define LOOM_CORE_TOKEN_FILE_H

#include "core/error.h"

/* The bearer token in the file at path (token_file.c): one word of at
 * most 16 KiB, surrounding blanks dropped. A file that is not a regular
 * file, or that group or others may read or write, is refused (as ssh
 * refuses such keys). A new string, a secret: wipe it (OPENSSL_cleanse)
 * before free. NULL with err: LOOM_EINVAL naming path and why, or
 * LOOM_EINTERNAL when out of memory. Thread-safe. */
char *token_file_read(const char *path, struct loom_error *err);

#endif
