/* core_log.c - log lines as text and as JSON: the request id, the ids of
 * the message as fields, control characters escaped, one line each. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "tests/lib/tap.h"

/* What log_msg wrote to stderr while fn ran, in buf. */
static void capture(void (*fn)(void), char *buf, size_t size)
{
    FILE *f = tmpfile();
    int saved = dup(STDERR_FILENO);
    size_t n;

    fflush(stderr);
    dup2(fileno(f), STDERR_FILENO);
    fn();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(f);
    n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void a_job_line(void)
{
    log_info("job=%d cluster=%s node=%s: ended \"ok\"\nforged line", 42,
             "slurm-a", "n1");
}

static void a_plain_line(void)
{
    log_warn("nothing=1 jobless: reservation=7, maintenance=3; done");
}

int main(void)
{
    char out[4096];
    json_t *o;

    log_thread_name("test");
    capture(a_job_line, out, sizeof(out));
    ok(strstr(out, " info thread=test job=42 cluster=slurm-a node=n1: "
                   "ended \"ok\"\\nforged line\n") != NULL,
       "text: thread, then the message with its newline written out");
    is_int(strchr(out, '\n') - out + 1, (long long)strlen(out),
           "text: one line");

    log_request_set("5f1c09a2-7");
    capture(a_job_line, out, sizeof(out));
    ok(strstr(out, " thread=test request=5f1c09a2-7 job=42 ") != NULL,
       "text: the request id after the thread");
    is_str(log_request(), "5f1c09a2-7", "log_request: the thread's id");

    log_set_format((enum log_format)log_format_parse("json"));
    capture(a_job_line, out, sizeof(out));
    is_int(strchr(out, '\n') - out + 1, (long long)strlen(out),
           "json: one line");
    o = json_loads(out, 0, NULL);
    ok(o != NULL, "json: the line is a JSON object");
    is_str(json_string_value(json_object_get(o, "level")), "info",
           "json: level");
    is_str(json_string_value(json_object_get(o, "thread")), "test",
           "json: thread");
    is_str(json_string_value(json_object_get(o, "request")), "5f1c09a2-7",
           "json: request");
    is_str(json_string_value(json_object_get(o, "job")), "42", "json: job");
    is_str(json_string_value(json_object_get(o, "cluster")), "slurm-a",
           "json: cluster");
    is_str(json_string_value(json_object_get(o, "node")), "n1",
           "json: node (its value ends at the ':')");
    is_str(json_string_value(json_object_get(o, "msg")),
           "job=42 cluster=slurm-a node=n1: ended \"ok\"\nforged line",
           "json: the message whole, its control characters escaped");
    ok(strstr(out, "\\nforged line") != NULL,
       "json: the newline is written \\n");
    ok(json_string_length(json_object_get(o, "time")) == 24 &&
           json_string_value(json_object_get(o, "time"))[23] == 'Z',
       "json: time to the millisecond, UTC");
    json_decref(o);

    log_request_set(NULL);
    capture(a_plain_line, out, sizeof(out));
    o = json_loads(out, 0, NULL);
    ok(o && !json_object_get(o, "request") && !json_object_get(o, "job"),
       "json: no request and no job where there is none");
    is_str(json_string_value(json_object_get(o, "reservation")), "7",
           "json: reservation (its value ends at the ',')");
    is_str(json_string_value(json_object_get(o, "maintenance")), "3",
           "json: maintenance (its value ends at the ';')");
    is_str(json_string_value(json_object_get(o, "level")), "warning",
           "json: warning");
    json_decref(o);

    is_int(log_format_parse("yaml"), -1, "log_format: yaml is refused");
    is_int(log_format_parse("text"), LOG_FORMAT_TEXT, "log_format: text");
    return done_testing();
}
