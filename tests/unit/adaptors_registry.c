/* adaptors_registry.c - adaptor types keep the contract; bad ones fail it. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/adaptor.h"
#include "tests/lib/tap.h"

/* Bad tables are checked with adaptor_table_check, the same code that
 * adaptor_type_check runs on every registered type. */
#include <string.h>

static int fake_create(struct conf_section *sec, const struct adaptor_env *env,
                       void **self, struct loom_error *err)
{
    return loom_error_set(err, LOOM_ENOTSUP, "fake");
}

static void fake_destroy(void *self)
{
}

static int fake_probe(void *self, struct loom_error *err)
{
    return 0;
}

static int fake_nodes(void *self, struct cl_node_list *out,
                      struct loom_error *err)
{
    return 0;
}

static int fake_jobs(void *self, struct cl_job_list *out, int *complete,
                     struct loom_error *err)
{
    return 0;
}

static int fake_queues(void *self, struct cl_queue_list *out,
                       struct loom_error *err)
{
    return 0;
}

static int fake_start(void *self, const struct start_req *req,
                      struct start_result *out, struct loom_error *err)
{
    return 0;
}

static int fake_job_op(void *self, const char *native_id,
                       struct loom_error *err)
{
    return 0;
}

static int fake_node_state(void *self, const char *node, const char *state,
                           const char *reason, struct loom_error *err)
{
    return 0;
}

static int fake_reserve(void *self, const struct resv_spec *spec,
                        char **native_id, struct loom_error *err)
{
    *native_id = strdup(spec->name);
    return *native_id ? 0 : loom_error_set(err, LOOM_EINTERNAL, "oom");
}

static const char *const fake_keys[] = {"nodes", NULL};

#define FAKE_CORE_OPS                                                        \
    .conf_keys = fake_keys, .version = LOOM_ADAPTOR_VERSION, .create = fake_create,                  \
    .destroy = fake_destroy, .probe = fake_probe, .nodes = fake_nodes,       \
    .jobs = fake_jobs, .queues = fake_queues, .start = fake_start,           \
    .cancel = fake_job_op

/* Claims suspend but has only half of the pair. */
static const struct adaptor_type bad_suspend_type = {
    .name = "bad-suspend",
    .caps = LOOM_CAP_SUSPEND,
    FAKE_CORE_OPS,
    .suspend = fake_job_op,
};

/* Has a set_node_state op without claiming the capability. */
static const struct adaptor_type bad_state_type = {
    .name = "bad-state",
    .caps = 0,
    FAKE_CORE_OPS,
    .set_node_state = fake_node_state,
};

/* Claims reservations with reserve alone. */
static const struct adaptor_type bad_reserve_type = {
    .name = "bad-reserve",
    .caps = LOOM_CAP_RESERVE,
    FAKE_CORE_OPS,
    .reserve = fake_reserve,
};

/* Has the reservation ops without claiming them. */
static const struct adaptor_type bad_unclaimed_type = {
    .name = "bad-unclaimed",
    .caps = 0,
    FAKE_CORE_OPS,
    .reserve = fake_reserve,
    .unreserve = fake_job_op,
};

/* An op the type lacks must be the registry's ENOTSUP default. */
static void check_default(const struct adaptor_type *t, const char *op,
                          int rc, struct loom_error *err)
{
    ok(rc < 0 && err->kind == LOOM_ENOTSUP, "%s: %s is the not-supported "
       "default", t->name, op);
}

static void check_type(const struct adaptor_type *t)
{
    struct loom_error err = {0};
    int valid = adaptor_type_check(t, &err) == 0;

    ok(valid, "%s: contract check passes (%s)", t->name, err.message);
    ok(adaptor_type_find(t->name) == t, "%s: found by its name", t->name);
    is_int(t->version, LOOM_ADAPTOR_VERSION, "%s: interface version",
           t->name);
    ok(t->create && t->destroy && t->probe && t->nodes && t->jobs &&
       t->queues && t->start && t->cancel, "%s: core ops set", t->name);
    ok(t->set_node_state && t->suspend && t->resume && t->hold &&
       t->release && t->reserve && t->unreserve, "%s: optional ops filled",
       t->name);
    /* Only when bits and ops agree is a missing bit's op the default;
     * otherwise it may be the type's own op, which needs an instance. */
    if (!valid)
        return;
    if (!(t->caps & LOOM_CAP_NODE_STATE))
        check_default(t, "set_node_state",
                      t->set_node_state(NULL, "n1", "up", NULL, &err), &err);
    if (!(t->caps & LOOM_CAP_SUSPEND)) {
        check_default(t, "suspend", t->suspend(NULL, "1", &err), &err);
        check_default(t, "resume", t->resume(NULL, "1", &err), &err);
    }
    if (!(t->caps & LOOM_CAP_HOLD)) {
        check_default(t, "hold", t->hold(NULL, "1", &err), &err);
        check_default(t, "release", t->release(NULL, "1", &err), &err);
    }
    if (!(t->caps & LOOM_CAP_RESERVE)) {
        char *id = (char *)"unset";
        check_default(t, "reserve", t->reserve(NULL, NULL, &id, &err), &err);
        ok(id == NULL, "%s: the default reserve answers no id", t->name);
        check_default(t, "unreserve", t->unreserve(NULL, "1", &err), &err);
    }
}

static void t_registered(void)
{
    const struct adaptor_type *const *types;
    struct adaptor_type stranger = {.name = "stranger"};
    struct loom_error err = {0};
    size_t n;

    types = adaptor_types(&n);
    ok(n >= 2, "%zu types registered", n);
    for (size_t i = 0; i < n; i++)
        check_type(types[i]);
    ok(adaptor_type_find("local") != NULL, "local is registered");
    ok(adaptor_type_find("sim") != NULL, "sim is registered");
    ok(adaptor_type_find("slurmrest") != NULL &&
       adaptor_type_find("slurmrest")->call != NULL,
       "slurmrest is registered, with the asynchronous form");
    ok(adaptor_type_find("nope") == NULL, "no type nope");
    ok(adaptor_type_check(&stranger, &err) < 0 && err.kind == LOOM_EINVAL,
       "an unregistered type fails the check: %s", err.message);
}

static void t_bad(void)
{
    struct loom_error err = {0};
    const struct adaptor_type *t;

    t = &bad_suspend_type;
    ok(adaptor_table_check(t, &err) < 0 &&
       strstr(err.message, "suspend capability and ops disagree"),
       "a capability bit without its ops is caught: %s", err.message);
    loom_error_clear(&err);
    t = &bad_state_type;
    ok(adaptor_table_check(t, &err) < 0 &&
       strstr(err.message, "node-state capability and op disagree"),
       "an op without its capability bit is caught: %s", err.message);
    loom_error_clear(&err);
    ok(adaptor_table_check(&bad_reserve_type, &err) < 0 &&
       strstr(err.message, "reserve capability and ops disagree"),
       "reserve without unreserve is caught: %s", err.message);
    loom_error_clear(&err);
    ok(adaptor_table_check(&bad_unclaimed_type, &err) < 0 &&
       strstr(err.message, "reserve capability and ops disagree"),
       "reservation ops without their bit are caught: %s", err.message);
}

/* Each optional op is refused by the bit it needs, which has a name. */
static void t_caps(void)
{
    is_int(adaptor_op_cap(LOOM_OP_SUSPEND), LOOM_CAP_SUSPEND, "suspend "
           "needs the suspend bit");
    is_int(adaptor_op_cap(LOOM_OP_RESUME), LOOM_CAP_SUSPEND, "resume too");
    is_int(adaptor_op_cap(LOOM_OP_HOLD), LOOM_CAP_HOLD, "hold needs hold");
    is_int(adaptor_op_cap(LOOM_OP_RELEASE), LOOM_CAP_HOLD, "release too");
    is_int(adaptor_op_cap(LOOM_OP_SET_NODE_STATE), LOOM_CAP_NODE_STATE,
           "set_node_state needs node_state");
    is_int(adaptor_op_cap(LOOM_OP_RESERVE), LOOM_CAP_RESERVE, "reserve "
           "needs reserve");
    is_int(adaptor_op_cap(LOOM_OP_UNRESERVE), LOOM_CAP_RESERVE,
           "unreserve too");
    is_int(adaptor_op_cap(LOOM_OP_START), 0, "start is a core op");
    is_int(adaptor_op_cap(LOOM_OP_CANCEL), 0, "cancel is a core op");
    is_str(adaptor_cap_name(LOOM_CAP_NODE_STATE), "node_state",
           "the node-state bit's name");
    is_str(adaptor_cap_name(LOOM_CAP_RESERVE), "reserve",
           "the reserve bit's name");
    is_str(adaptor_op_name(LOOM_OP_UNRESERVE), "unreserve",
           "the unreserve op's name");
}

/* The blocking form of a call: adaptor_call_run runs the op it names. */
static const char *ran;

static int count_nodes(void *self, struct cl_node_list *out,
                       struct loom_error *err)
{
    ran = "nodes";
    return 0;
}

static int count_jobs(void *self, struct cl_job_list *out, int *complete,
                      struct loom_error *err)
{
    ran = "jobs";
    *complete = 1;
    return 0;
}

static int count_start(void *self, const struct start_req *req,
                       struct start_result *out, struct loom_error *err)
{
    ran = "start";
    return loom_error_set(err, LOOM_ETEMP, "busy");
}

static int count_suspend(void *self, const char *id, struct loom_error *err)
{
    ran = id;
    return 0;
}

static void t_call_run(void)
{
    struct adaptor_type t = {.name = "counting", FAKE_CORE_OPS,
                             .suspend = count_suspend, .resume = fake_job_op};
    struct start_req req = {.loom_id = 1};

    t.nodes = count_nodes;
    t.jobs = count_jobs;
    t.start = count_start;
    struct adaptor_call k = {.op = LOOM_OP_NODES, .blocking = 1};

    adaptor_call_run(&t, NULL, &k);
    ok(k.rc == 0 && ran && !strcmp(ran, "nodes") && !k.blocking,
       "a nodes call runs the nodes op (and is no longer handed back)");
    k = (struct adaptor_call){.op = LOOM_OP_JOBS};
    adaptor_call_run(&t, NULL, &k);
    ok(k.rc == 0 && !strcmp(ran, "jobs") && k.complete == 1,
       "a jobs call runs the jobs op, with its complete flag");
    k = (struct adaptor_call){.op = LOOM_OP_START, .start = &req};
    adaptor_call_run(&t, NULL, &k);
    ok(k.rc < 0 && k.err.kind == LOOM_ETEMP && !strcmp(k.err.message, "busy"),
       "a start call returns the op's error");
    k = (struct adaptor_call){.op = LOOM_OP_SUSPEND, .native_id = "77"};
    adaptor_call_run(&t, NULL, &k);
    ok(k.rc == 0 && !strcmp(ran, "77"), "a suspend call passes the job id");
    {
        const char *nodes[] = {"n2"};
        struct resv_spec spec = {.name = "loom-r7", .nodes = nodes,
                                 .n_nodes = 1};
        t.caps = LOOM_CAP_RESERVE;
        t.reserve = fake_reserve;
        t.unreserve = count_suspend;
        k = (struct adaptor_call){.op = LOOM_OP_RESERVE, .resv = &spec};
        adaptor_call_run(&t, NULL, &k);
        ok(k.rc == 0 && k.resv_id && !strcmp(k.resv_id, "loom-r7"),
           "a reserve call answers the native id");
        adaptor_call_fini(&k);
        ok(k.resv_id == NULL, "adaptor_call_fini frees it");
        k = (struct adaptor_call){.op = LOOM_OP_UNRESERVE,
                                  .native_id = "loom-r7"};
        adaptor_call_run(&t, NULL, &k);
        ok(k.rc == 0 && !strcmp(ran, "loom-r7"),
           "an unreserve call passes the native id");
    }
    k = (struct adaptor_call){.op = LOOM_N_OPS};
    adaptor_call_run(&t, NULL, &k);
    ok(k.rc < 0 && k.err.kind == LOOM_EINVAL, "no such op: %s",
       k.err.message);
    is_str(adaptor_op_name(LOOM_OP_SET_NODE_STATE), "set_node_state",
           "op names as the metrics show them");
}

int main(void)
{
    t_registered();
    t_bad();
    t_caps();
    t_call_run();
    return done_testing();
}
