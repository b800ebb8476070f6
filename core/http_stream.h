/* http_stream.h - streamed answers of unknown length (Server-Sent
 * Events) on libmicrohttpd: a stream with nothing to send is suspended,
 * holding no thread, until it is woken; used by http.c only. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HTTP_STREAM_H
#define LOOM_CORE_HTTP_STREAM_H

#include <microhttpd.h>

#include "core/http.h"

/* A response for conn that asks s for its bytes (s's cls is the
 * response's from now on, also on failure). NULL when out of memory. */
struct MHD_Response *http_stream_response(struct MHD_Connection *conn,
                                          const struct http_stream *s);
/* Stopping: every stream ends at its next call; all are woken. */
void http_stream_end_all(void);
/* The server starts again (tests start and stop it more than once). */
void http_stream_reset(void);

#endif
