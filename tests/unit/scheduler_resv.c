/* scheduler_resv.c - a reservation's stored document: its twin in the
 * cluster system and the owner's account kept across a restart. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "scheduler/resv.h"
#include "tests/lib/tap.h"

/* r rendered and read back, as a restart reads it; NULL when unreadable. */
static struct resv *round_trip(const struct resv *r, char **text)
{
    struct loom_error err = {0};
    json_t *doc;
    struct resv *back;

    *text = resv_render(r);
    doc = *text ? json_loads(*text, 0, NULL) : NULL;
    back = doc ? resv_from_doc(doc, &err) : NULL;
    json_decref(doc);
    return back;
}

static void t_native(void)
{
    char *nodes[] = {"n2", NULL};
    struct resv r = {
        .id = 5, .purpose = "user", .owner = "alice", .cluster = "slurm",
        .nodes = {nodes, 1}, .start = 1795294800, .end = 1795298400,
        .state = RESV_ACTIVE, .account = "alice-acct",
        .native_id = "loom-r5", .native_start = 1795294800,
        .native_end = 1795298400, .native_asked = 1795294801, .stored = 1};
    struct resv *back;
    char *text;

    back = round_trip(&r, &text);
    ok(back != NULL, "a reservation with a twin reads back (%s)", text);
    if (back) {
        is_str(back->account, "alice-acct", "... the owner's account");
        is_str(back->native_id, "loom-r5", "... the twin's id");
        ok(back->native_start == r.native_start &&
           back->native_end == r.native_end, "... and the window it was "
           "made for");
        ok(back->native_error == NULL, "... no error");
        ok(!back->native_asked, "... no call under way (that is not "
           "stored)");
    }
    ok(text && strstr(text, "\"native\":{\"id\":\"loom-r5\","),
       "the JSON shows native as an object");
    free(text);
    resv_destroy(back);

    r.native_id = NULL;
    r.native_error = "cluster slurm: pack slurm: reserve: refused";
    r.account = NULL;
    back = round_trip(&r, &text);
    ok(back && !back->native_id && !back->account && back->native_error &&
       !strcmp(back->native_error, r.native_error),
       "without a twin: native null, the error kept");
    ok(text && strstr(text, "\"native\":null") &&
       strstr(text, "\"account\":null"), "... shown as null (%s)", text);
    free(text);
    resv_destroy(back);
}

static void t_older(void)
{
    struct loom_error err = {0};
    json_t *doc = json_loads("{\"id\":\"3\",\"purpose\":\"user\",\"owner\":"
                             "\"a\",\"cluster\":\"c\",\"nodes\":[\"c/n1\"],"
                             "\"start\":\"2026-11-21T20:00:00Z\",\"end\":"
                             "\"2026-11-21T21:00:00Z\",\"state\":\"planned\","
                             "\"reason\":null}", 0, NULL);
    struct resv *r = doc ? resv_from_doc(doc, &err) : NULL;

    ok(r && !r->native_id && !r->native_error && !r->account,
       "a document stored before twins reads with none");
    resv_destroy(r);
    json_decref(doc);
    doc = json_loads("{\"id\":\"3\",\"purpose\":\"user\",\"owner\":\"a\","
                     "\"cluster\":\"c\",\"nodes\":[\"c/n1\"],\"start\":"
                     "\"2026-11-21T20:00:00Z\",\"end\":\"2026-11-21T21:00:00Z\","
                     "\"state\":\"planned\",\"native\":{\"start\":\"x\"}}", 0,
                     NULL);
    r = doc ? resv_from_doc(doc, &err) : NULL;
    ok(r == NULL && err.kind == LOOM_EINVAL, "a twin without an id is "
       "unreadable: %s", err.message);
    resv_destroy(r);
    json_decref(doc);
}

int main(void)
{
    t_native();
    t_older();
    return done_testing();
}
