/* core_jsonx.c - strict JSON input: parse errors, fields, types, ranges. */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/jsonx.h"
#include "tests/lib/tap.h"

static const struct jx_field fields[] = {
    {"name", JX_STRING, 1},
    {"n", JX_INT, 0},
    {"opt", JX_STRING | JX_NULLABLE, 0},
    {"list", JX_ARRAY, 0},
    {NULL, 0, 0},
};

static int check(const char *text, struct loom_error *err)
{
    json_t *o = jx_parse_object(text, strlen(text), err);
    int rc = o ? jx_check(o, "req", fields, err) : -1;

    json_decref(o);
    return rc;
}

int main(void)
{
    struct loom_error err;
    long long v;
    json_t *o;
    struct strv sv = {0};

    ok(check("{\"name\":\"a\",\"n\":3,\"opt\":null,\"list\":[]}", &err) == 0,
       "a good object passes");
    ok(check("{\"name\":\"a\",\"x\":1}", &err) < 0 &&
       !strcmp(err.field, "req.x") && err.kind == LOOM_EINVAL,
       "unknown field named with its path: %s", err.message);
    ok(check("{\"n\":1}", &err) < 0 && !strcmp(err.field, "req.name"),
       "missing required field: %s", err.message);
    ok(check("{\"name\":1}", &err) < 0 &&
       strstr(err.message, "must be a string"), "wrong type: %s",
       err.message);
    ok(check("{\"name\":\"a\",\"n\":null}", &err) < 0,
       "null where not nullable");
    ok(check("{\"name\":\"a\",\"n\":1.5}", &err) < 0, "a real is no integer");
    ok(check("{\"name\":", &err) < 0 && strstr(err.message, "malformed JSON"),
       "malformed JSON: %s", err.message);
    ok(check("[1,2]", &err) < 0 && strstr(err.message, "must be a JSON "
                                          "object"), "not an object");
    ok(check("", &err) < 0 && strstr(err.message, "empty"), "empty body");
    ok(check("{\"name\":\"a\",\"name\":\"b\"}", &err) < 0,
       "duplicate keys refused");
    o = json_pack("{s:i}", "k", 50);
    ok(jx_int_range(o, "r", "k", 1, 1, 10, &v, &err) < 0 &&
       !strcmp(err.field, "r.k"), "out of range: %s", err.message);
    ok(jx_int_range(o, "r", "absent", 7, 1, 10, &v, &err) == 0 && v == 7,
       "absent gives the default");
    json_decref(o);
    o = json_loads("{\"t\":\"2026-11-26T10:00:00Z\",\"bad\":\"noon\","
                   "\"list\":[\"a\",1,\"b\"]}", 0, NULL);
    ok(jx_time(o, "t") == 1795687200 && jx_time(o, "bad") == 0 &&
       jx_time(o, "absent") == 0, "a time field; one not a time, or "
       "absent: 0");
    ok(jx_strv(json_object_get(o, "list"), &sv) == 0 && sv.n == 2 &&
       !strcmp(sv.v[0], "a") && !strcmp(sv.v[1], "b") &&
       jx_strv(json_object_get(o, "t"), &sv) == 0 && sv.n == 2,
       "an array's strings, the rest skipped; a non-array adds none");
    strv_fini(&sv);
    json_decref(o);
    {
        char kv[310];
        memset(kv, 'N', 300);
        snprintf(kv + 300, sizeof(kv) - 300, "=x=y");
        o = json_object();
        ok(jx_set_kv(o, kv) == 0 && jx_set_kv(o, "NOEQUALS") == 0 &&
           json_object_size(o) == 1, "NAME=value set, an entry without = "
           "skipped");
        kv[300] = '\0';
        is_str(json_string_value(json_object_get(o, kv)), "x=y",
               "... a name of 300 characters whole, the value after the "
               "first =");
        json_decref(o);
    }
    return done_testing();
}
