/* grid.c - grid access started and stopped: the threads of grid/ (key
 * fetches, the audit writer). */
/* SPDX-License-Identifier: MIT */
#include "grid/issuer.h"

int grid_start(const char *conninfo, struct loom_error *err)
{
    if (audit_start(conninfo, err) < 0)
        return -1;
    if (fetch_start(err) < 0) {
        audit_stop();
        return -1;
    }
    return 0;
}

void grid_stop(void)
{
    fetch_stop();
    audit_stop();
    tcache_clear();
    grid_issuers_install(NULL);
}
