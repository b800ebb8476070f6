/* output.c - loomctl output: a job's output, through the API. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ctl/client.h"
#include "core/ctl/loomctl.h"

#define FOLLOW_EVERY_MS 500 /* between looks while nothing new comes */

struct output_opts {
    const char *stream;
    int follow;
};

static int output_options(int argc, char **argv, struct output_opts *o)
{
    static const struct option longs[] = {
        { "stream", required_argument, NULL, 's' },
        { "follow", no_argument, NULL, 'f' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":f", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            if (strcmp(optarg, "stdout") && strcmp(optarg, "stderr"))
                return ctl_usage("output", "--stream takes stdout or "
                                 "stderr, not '%s'", optarg);
            o->stream = optarg;
            break;
        case 'f':
            o->follow = 1;
            break;
        default:
            return ctl_opt_error("output", c, argv);
        }
    }
    if (argc - optind != 1)
        return ctl_usage("output", "give one job id");
    return ctl_check_id("output", "job", argv[optind]);
}

/* One answer: its data to stdout; *next, *done (all read and the job has
 * ended), *more (more is there right now). 0, or -1 with err. */
static int output_once(struct client *c, const char *id, const char *stream,
                       long long *next, int *done, int *more,
                       struct loom_error *err)
{
    struct client_path p;
    const char *path;
    char off[32];
    json_t *r = NULL, *data;
    long long size;

    snprintf(off, sizeof(off), "%lld", *next);
    client_path_init(&p, "/v1/jobs");
    client_path_segment(&p, id);
    client_path_segment(&p, "output");
    client_path_query(&p, "stream", stream);
    client_path_query(&p, "offset", off);
    if (!(path = client_path_get(&p, err)) ||
        client_request(c, "GET", path, NULL, NULL, NULL, &r, err) < 0)
        return -1;
    data = json_object_get(r, "data");
    if (!json_is_string(data) ||
        !json_is_integer(json_object_get(r, "next_offset"))) {
        json_decref(r);
        return loom_error_set(err, LOOM_EINTERNAL, "the answer has no data "
                              "or next_offset");
    }
    fwrite(json_string_value(data), 1, json_string_length(data), stdout);
    fflush(stdout);
    *next = json_integer_value(json_object_get(r, "next_offset"));
    size = json_integer_value(json_object_get(r, "size"));
    *done = json_is_true(json_object_get(r, "eof"));
    *more = *next < size && json_string_length(data) > 0;
    json_decref(r);
    return 0;
}

int cmd_output(struct ctl *ctl, int argc, char **argv)
{
    struct output_opts o = { "stdout", 0 };
    struct timespec pause = { 0, FOLLOW_EVERY_MS * 1000000L };
    struct loom_error err = { 0 };
    long long next = 0;
    int rc = output_options(argc, argv, &o), done = 0, more;
    struct client *c;

    if (rc >= 0)
        return rc;
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    for (;;) {
        if (output_once(c, argv[optind], o.stream, &next, &done, &more,
                        &err) < 0)
            return ctl_fail("job %s: %s", argv[optind], err.message);
        if (done || (!more && !o.follow))
            return CTL_OK;
        if (!more)
            nanosleep(&pause, NULL);
    }
}
