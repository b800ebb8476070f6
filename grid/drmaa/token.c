/* token.c - the bearer token of a DRMAA session, from $LOOM_TOKEN_FILE. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "core/token_file.h"
#include "grid/drmaa/dr.h"

int dr_token_read(char **token, struct dr_error *e)
{
    const char *path = getenv("LOOM_TOKEN_FILE");
    struct loom_error err;

    *token = NULL;
    if (!path || !*path)
        return dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE,
                            "no token: set LOOM_TOKEN_FILE to a file that "
                            "holds a Loom token (loomctl token create)");
    if (!(*token = token_file_read(path, &err)))
        return dr_error_set(e, err.kind == LOOM_EINTERNAL
                                   ? DRMAA_ERRNO_NO_MEMORY
                                   : DRMAA_ERRNO_AUTH_FAILURE,
                            "%s", err.message);
    return 0;
}
