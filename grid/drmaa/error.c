/* error.c - DRMAA error codes: their texts and the diagnosis buffers. */
/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "grid/drmaa/dr.h"

static const char *const texts[] = {
    [DRMAA_ERRNO_SUCCESS] = "success",
    [DRMAA_ERRNO_INTERNAL_ERROR] = "internal error",
    [DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE] =
        "cannot communicate with Loom",
    [DRMAA_ERRNO_AUTH_FAILURE] = "authorisation failed",
    [DRMAA_ERRNO_INVALID_ARGUMENT] = "invalid argument",
    [DRMAA_ERRNO_NO_ACTIVE_SESSION] = "no active DRMAA session",
    [DRMAA_ERRNO_NO_MEMORY] = "out of memory",
    [DRMAA_ERRNO_INVALID_CONTACT_STRING] = "invalid contact string",
    [DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR] =
        "the default contact string ($LOOM_URL) cannot be used",
    [DRMAA_ERRNO_NO_DEFAULT_CONTACT_STRING_SELECTED] =
        "no contact string given and $LOOM_URL is not set",
    [DRMAA_ERRNO_DRMS_INIT_FAILED] = "initialisation of the session failed",
    [DRMAA_ERRNO_ALREADY_ACTIVE_SESSION] = "a DRMAA session is active already",
    [DRMAA_ERRNO_DRMS_EXIT_ERROR] = "leaving the session failed",
    [DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT] = "invalid attribute format",
    [DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE] = "invalid attribute value",
    [DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES] = "conflicting attribute values",
    [DRMAA_ERRNO_TRY_LATER] = "Loom cannot take the request now; try later",
    [DRMAA_ERRNO_DENIED_BY_DRM] = "Loom refused the job",
    [DRMAA_ERRNO_INVALID_JOB] = "no such job",
    [DRMAA_ERRNO_RESUME_INCONSISTENT_STATE] =
        "the job cannot be resumed in its state",
    [DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE] =
        "the job cannot be suspended in its state",
    [DRMAA_ERRNO_HOLD_INCONSISTENT_STATE] =
        "the job cannot be held in its state",
    [DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE] =
        "the job cannot be released in its state",
    [DRMAA_ERRNO_EXIT_TIMEOUT] = "timed out waiting for the job",
    [DRMAA_ERRNO_NO_RUSAGE] = "no resource usage for the job",
    [DRMAA_ERRNO_NO_MORE_ELEMENTS] = "no more elements",
};

const char *drmaa_strerror(int drmaa_errno)
{
    if (drmaa_errno < 0 || drmaa_errno >= DRMAA_NO_ERRNO)
        return "unknown error code";
    return texts[drmaa_errno];
}

int dr_error_set(struct dr_error *e, int code, const char *fmt, ...)
{
    va_list ap;

    e->code = code;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int dr_error_out(const struct dr_error *e, char *diag, size_t len)
{
    if (e->code != DRMAA_ERRNO_SUCCESS)
        dr_copy(diag, len, e->msg[0] ? e->msg : drmaa_strerror(e->code));
    return e->code;
}

void dr_copy(char *dst, size_t size, const char *src)
{
    size_t n;

    if (!dst || !size)
        return;
    n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}
