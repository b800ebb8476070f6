/* http_accept.h - a listener's accept thread: it hands each new
 * connection to one of libmicrohttpd's pool threads by the connection's
 * socket, so that connections opened together are spread over the pool;
 * used by http.c only. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HTTP_ACCEPT_H
#define LOOM_CORE_HTTP_ACCEPT_H

#include <microhttpd.h>

#include "core/error.h"

struct http_accept;

/* Start a thread that accepts connections on the listening socket fd
 * (taken: closed by http_accept_stop, or here on error) and adds each to
 * daemon (started with MHD_USE_NO_LISTEN_SOCKET; borrowed, it outlives
 * the thread). Returns a new object, or NULL with err. */
struct http_accept *http_accept_start(int fd, struct MHD_Daemon *daemon,
                                      struct loom_error *err);
/* Stop accepting: the thread ends and the listening socket is closed
 * (the connections accepted stay the daemon's). NULL-safe. */
void http_accept_stop(struct http_accept *a);

#endif
