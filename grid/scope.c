/* scope.c - the compute scopes of the WLCG profile, and the one each
 * request of the API needs. */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "grid/grid.h"

static const char *const names[] = {
    "compute.read", "compute.modify", "compute.create", "compute.cancel",
};

const char *grid_scope_name(unsigned bit)
{
    for (unsigned i = 0; i < 4; i++)
        if (bit == 1u << i)
            return names[i];
    return "?";
}

void grid_scopes_parse(const char *list, unsigned *bits, int *capabilities)
{
    const char *p = list;

    *bits = 0;
    *capabilities = 0;
    while (p && *p) {
        size_t n;
        p += strspn(p, " ");
        n = strcspn(p, " ");
        /* WLCG 2.2.3: any storage.* or compute.* is a capability */
        if ((n > 8 && !strncmp(p, "compute.", 8)) ||
            (n > 8 && !strncmp(p, "storage.", 8)))
            *capabilities = 1;
        for (unsigned i = 0; i < 4; i++)
            if (n == strlen(names[i]) && !strncmp(p, names[i], n))
                *bits |= 1u << i;
        p += n;
    }
}

unsigned grid_scope_needed(const char *method, const char *first, int n,
                           const char *op)
{
    if (!strcmp(method, "GET"))
        return GRID_SCOPE_READ;
    if (strcmp(first, "jobs") != 0)
        return 0;
    if (!strcmp(method, "POST") && n == 1)
        return GRID_SCOPE_CREATE;
    if (!strcmp(method, "DELETE") && n == 2)
        return GRID_SCOPE_CANCEL;
    if (!strcmp(method, "PATCH") && n == 2)
        return GRID_SCOPE_MODIFY;
    if (!strcmp(method, "POST") && n == 3 && op &&
        (!strcmp(op, "hold") || !strcmp(op, "release") ||
         !strcmp(op, "suspend") || !strcmp(op, "resume")))
        return GRID_SCOPE_MODIFY;
    return 0;
}
