/* core_http_target.c - a request target taken apart: the path decoded
 * strictly, the query's parameters with what is wrong in them marked. */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/http.h"
#include "tests/lib/tap.h"

int main(void)
{
    struct http_target t;

    ok(http_target_parse("/v1/jobs/13", &t) == 0 && t.path &&
           !strcmp(t.path, "/v1/jobs/13") && t.n_query == 0,
       "a plain path");
    http_target_fini(&t);
    http_target_parse("/v1/queues/a%20b", &t);
    is_str(t.path, "/v1/queues/a b", "%%20 decodes to a blank in a path");
    http_target_fini(&t);
    http_target_parse("/v1/jobs/a+b", &t);
    is_str(t.path, "/v1/jobs/a+b", "'+' stays itself in a path");
    http_target_fini(&t);
    http_target_parse("/v1/jobs/1%00", &t);
    ok(!t.path, "an escaped NUL: the path names nothing");
    is_str(t.printable, "/v1/jobs/1%00", "... and shows as sent");
    http_target_fini(&t);
    http_target_parse("/v1/nodes/s%2Fn1", &t);
    ok(!t.path, "an escaped '/' in a segment names nothing");
    http_target_fini(&t);
    http_target_parse("/v1/jobs/1%0a", &t);
    ok(!t.path, "an escaped control character names nothing");
    http_target_fini(&t);
    http_target_parse("/v1/jobs/%zz", &t);
    ok(!t.path, "a malformed escape names nothing");
    http_target_fini(&t);
    http_target_parse("/v1/jobs/%ff", &t);
    ok(!t.path, "bytes that are not UTF-8 name nothing");
    http_target_fini(&t);

    http_target_parse("/v1/jobs?state=running&owner=r%26d+team&x", &t);
    is_str(t.path, "/v1/jobs", "the path ends at '?'");
    is_int(t.n_query, 3, "three parameters");
    ok(!strcmp(t.query[0].key, "state") &&
           !strcmp(t.query[0].value, "running") && t.query[0].has_value &&
           t.query[0].value_text, "state=running");
    is_str(t.query[1].value, "r&d team", "%%26 and '+' decode in a value");
    ok(!strcmp(t.query[2].key, "x") && !t.query[2].has_value &&
           t.query[2].value_len == 0, "x without '=': no value");
    http_target_fini(&t);
    http_target_parse("/v1/jobs?state=%00&owner=%zz&a=%e2%82%ac&b=%ff", &t);
    ok(t.query[0].value_len == 1 && !t.query[0].value_text,
       "%%00: one byte, not text");
    ok(t.query[1].bad_escape, "%%zz is marked a malformed escape");
    ok(t.query[2].value_text && t.query[2].value_len == 3,
       "%%e2%%82%%ac is UTF-8 text (3 bytes)");
    ok(!t.query[3].value_text, "%%ff is not UTF-8");
    http_target_fini(&t);
    http_target_parse("/v1/jobs?&&a=1&", &t);
    ok(t.n_query == 1 && !strcmp(t.query[0].key, "a"),
       "empty pieces between '&' hold nothing");
    http_target_fini(&t);
    {
        char many[HTTP_QUERY_MAX * 4 + 32] = "/v1/jobs?";
        size_t len = strlen(many);
        for (int i = 0; i <= HTTP_QUERY_MAX; i++, len += 4)
            memcpy(many + len, "a=1&", 5);
        http_target_parse(many, &t);
        ok(t.over && t.n_query == HTTP_QUERY_MAX,
           "more than %d parameters are marked", HTTP_QUERY_MAX);
        http_target_fini(&t);
    }
    return done_testing();
}
