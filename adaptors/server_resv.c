/* server_resv.c - the server thread's reservation commands: a Loom
 * reservation made in, or removed from, its cluster's own system. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "adaptors/server_state.h"
#include "core/log.h"
#include "scheduler/sched.h"

void server_resv_free(void *p)
{
    struct server_resv *r = p;

    if (!r)
        return;
    free(r->cluster);
    free(r->name);
    free(r->purpose);
    free(r->account);
    free(r->native_id);
    strv_fini(&r->nodes);
    free(r);
}

void sched_resv_native_free(void *p)
{
    struct sched_resv_native *n = p;

    if (!n)
        return;
    free(n->native_id);
    free(n);
}

/* Tell the scheduler how it went (err NULL: it went well). */
static void answer(const struct server_resv *r, const char *native_id,
                   const struct loom_error *err)
{
    struct sched_resv_native *n = calloc(1, sizeof(*n));

    if (!n || (native_id && !(n->native_id = strdup(native_id)))) {
        log_err("reservation=%lld cluster=%s: out of memory answering the "
                "scheduler; it asks again later", (long long)r->id,
                r->cluster);
        sched_resv_native_free(n);
        return;
    }
    n->id = r->id;
    n->remove = r->remove;
    n->start = r->start;
    n->end = r->end;
    n->ok = !err;
    if (err)
        n->err = *err;
    msgq_post(sched_queue(), msg_create(SCHED_RESV_NATIVE, n,
                                        sched_resv_native_free, NULL));
}

static void resv_then(struct srv_call *sc)
{
    struct server_resv *r = sc->m->data;
    const char *id = r->remove ? r->native_id : sc->k.resv_id;

    if (sc->k.rc < 0) {
        server_error_prefix(&sc->k.err, sc->c->name, adaptor_op_name(sc->k.op));
        log_warn("reservation=%lld %s failed: %s", (long long)r->id,
                 adaptor_op_name(sc->k.op), sc->k.err.message);
        answer(r, NULL, &sc->k.err);
        return;
    }
    log_info("reservation=%lld cluster=%s native=%s %s", (long long)r->id,
             sc->c->name, id, r->remove ? "removed" : "made");
    answer(r, id, NULL);
}

/* m's data is a struct server_resv; m is the call's (or freed) after. */
void server_resv(struct msg *m)
{
    struct server_resv *r = m->data;
    struct srv_cluster *c = server_cluster(r->cluster);
    struct srv_call *sc;
    struct loom_error err;

    if (!c) {
        loom_error_set(&err, LOOM_ENOENT, "there is no cluster named %s",
                       r->cluster);
        answer(r, NULL, &err);
        msg_destroy(m);
        return;
    }
    sc = server_call_new(c, r->remove ? LOOM_OP_UNRESERVE : LOOM_OP_RESERVE,
                         resv_then, m);
    if (!sc) {
        log_err("reservation=%lld cluster=%s: out of memory; the scheduler "
                "asks again later", (long long)r->id, r->cluster);
        return;
    }
    sc->spec = (struct resv_spec){
        .name = r->name, .nodes = (const char *const *)r->nodes.v,
        .n_nodes = r->nodes.n, .start = r->start, .end = r->end,
        .purpose = r->purpose, .account = r->account};
    sc->k.resv = &sc->spec;
    sc->k.native_id = r->native_id;
    server_call_start(sc);
}
