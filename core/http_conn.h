/* http_conn.h - the HTTP server's connections and the deadline of their
 * requests (a watchdog thread); used by http.c only. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HTTP_CONN_H
#define LOOM_CORE_HTTP_CONN_H

#include "core/error.h"

struct http_conn;

/* Start the watchdog: a request not whole within timeout_s of its
 * connection or of the last answer on it is cut off (shutdown(2)). */
int http_conn_start(double timeout_s, struct loom_error *err);
/* Stop the watchdog (the connections are libmicrohttpd's to close). */
void http_conn_stop(void);

/* A new connection on socket fd (libmicrohttpd's notification of its
 * start): watched from now on. NULL when out of memory (not watched). */
struct http_conn *http_conn_open(int fd);
/* Its close notification, before the socket is closed: not watched any
 * more, and freed. NULL-safe. */
void http_conn_close(struct http_conn *c);
/* Its request is whole and being answered: no deadline meanwhile. */
void http_conn_handling(struct http_conn *c);
/* Its answer went out: the next request's deadline starts now. */
void http_conn_answered(struct http_conn *c);
/* Connections cut off so far. */
unsigned long http_conn_cut_total(void);

#endif
