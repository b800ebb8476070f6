/* http_bare.c - a bare libmicrohttpd server with a fixed 200-byte JSON
 * answer, run beside loomd by the read-path benchmark (same threading
 * mode as loomd, same client). */
/* SPDX-License-Identifier: MIT */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char body[201];

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (!*con_cls) {
        *con_cls = body;
        return MHD_YES;
    }
    r = MHD_create_response_from_buffer(200, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

int main(int argc, char **argv)
{
    struct MHD_Daemon *d;
    sigset_t set;
    int sig, port = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 0;

    if (port <= 0 || port > 65535) {
        fprintf(stderr, "usage: http_bare PORT\n");
        return 2;
    }
    memset(body, ' ', 200);
    memcpy(body, "{\"id\":\"1\",\"state\":\"running\",\"pad\":\"", 36);
    memcpy(body + 198, "\"}", 2);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
                             MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
                         (uint16_t)port, NULL, NULL, answer, NULL,
                         MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "http_bare: cannot listen on port %d\n", port);
        return 1;
    }
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
