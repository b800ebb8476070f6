/* core_domain.c - the API's named values, ids and node ids. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "tests/lib/tap.h"

/* ref given with cluster (NULL: none): 0 with "cluster/name" in out, or
 * -1 with err. */
static int node(const char *ref, const char *cluster, char *out, size_t n,
                struct loom_error *err)
{
    char *cl = cluster ? strdup(cluster) : NULL;
    struct strv names = {0};
    int rc = domain_node_add(ref, &cl, &names, "nodes", err);

    if (rc == 0)
        snprintf(out, n, "%s/%s", cl, names.v[0]);
    strv_fini(&names);
    free(cl);
    return rc;
}

int main(void)
{
    struct loom_error err;
    char buf[256];
    int64_t id;
    unsigned bits = 0;

    is_int(domain_find(&domain_job_states, "pending"), 0, "pending is first");
    is_int(domain_find(&domain_job_states, "cancelled"),
           DOMAIN_JOB_STATES_N - 1, "cancelled is last");
    is_int(domain_find(&domain_job_states, "PENDING"), -1,
           "names are matched exactly");
    is_int(domain_find(&domain_job_states, NULL), -1, "NULL is no name");
    is_str(domain_list(&domain_resv_purposes, buf, sizeof(buf)),
           "user and maintenance", "two names: 'a and b'");
    is_str(domain_list(&domain_goal_states, buf, sizeof(buf)),
           "up, down and drained", "three: 'a, b and c'");
    ok(domain_check(&domain_node_states, "idle", "state", &err) == 0,
       "idle is a node state");
    is_int(domain_find(&domain_node_states, "paused"),
           DOMAIN_NODE_STATES_N - 2, "paused is a node state, before unknown");
    is_str(domain_list(&domain_node_state_set, buf, sizeof(buf)),
           "up, drain, down, pause and resume",
           "a node is set up, drain, down, pause or resume");
    ok(domain_check(&domain_node_states, "bogus", "state", &err) < 0 &&
           err.kind == LOOM_EINVAL && !strcmp(err.field, "state") &&
           strstr(err.message, "'bogus' is not a node state") &&
           strstr(err.message, "idle, mixed, allocated"),
       "a check names the value and the allowed ones: %s", err.message);

    ok(domain_list_parse(&domain_job_states, "pending,running,held", &bits,
                         "state", &err) == 0 &&
           bits == (1u << 0 | 1u << 3 | 1u << 1),
       "a list of states: their bits (0x%x)", bits);
    ok(domain_list_parse(&domain_job_states, "cancelled", &bits, "state",
                         &err) == 0 && bits == 1u << 7,
       "a list of one");
    ok(domain_list_parse(&domain_job_states, "pending,bogus", &bits,
                         "state", &err) < 0 &&
           strstr(err.message, "'bogus' is not a job state; the job "
                               "states are pending, held"),
       "a list with a name that is none: named (%s)", err.message);
    ok(domain_list_parse(&domain_job_states, "pending,", &bits, "state",
                         &err) < 0 && strstr(err.message, "'' is not"),
       "an empty name (a trailing comma) is none");
    ok(domain_list_parse(&domain_job_states, "", &bits, "state", &err) < 0,
       "nor is an empty list");

    ok(domain_id_parse("13", &id) == 0 && id == 13, "13 is an id");
    ok(domain_id_parse("9223372036854775807", &id) == 0 &&
           id == INT64_MAX, "the largest int64 is an id");
    ok(domain_id_parse("9223372036854775808", &id) < 0,
       "one more is not");
    ok(domain_id_parse("013", &id) < 0, "a leading zero is refused");
    ok(domain_id_parse("+13", &id) < 0, "a sign is refused");
    ok(domain_id_parse("0", &id) < 0, "0 is no id");
    ok(domain_id_parse("", &id) < 0, "nor is the empty string");
    ok(domain_id_parse("1 ", &id) < 0, "nor a trailing blank");
    ok(domain_id_parse("1x", &id) < 0, "nor a trailing letter");

    ok(node("s/n1", NULL, buf, sizeof(buf), &err) == 0 &&
           !strcmp(buf, "s/n1"), "an id alone: %s", buf);
    ok(node("s/n1", "s", buf, sizeof(buf), &err) == 0 &&
           !strcmp(buf, "s/n1"), "an id of the cluster given");
    ok(node("n1", "s", buf, sizeof(buf), &err) == 0 &&
           !strcmp(buf, "s/n1"), "a bare name with the cluster");
    ok(node("t/n1", "s", buf, sizeof(buf), &err) < 0 &&
           err.kind == LOOM_EINVAL && !strcmp(err.field, "nodes") &&
           strstr(err.message, "node t/n1 is of cluster t, not s"),
       "an id of another cluster: %s", err.message);
    ok(node("n1", NULL, buf, sizeof(buf), &err) < 0 &&
           strstr(err.message, "'n1'") && strstr(err.message, "cluster"),
       "a bare name without a cluster: %s", err.message);
    ok(node("s/", "s", buf, sizeof(buf), &err) < 0 &&
           strstr(err.message, "is not a node"), "'s/': %s", err.message);
    ok(node("/n1", NULL, buf, sizeof(buf), &err) < 0, "'/n1' is refused");
    ok(node("s/n1/x", NULL, buf, sizeof(buf), &err) < 0,
       "'s/n1/x' is refused");
    ok(node("", "s", buf, sizeof(buf), &err) < 0 &&
           strstr(err.message, "is not a node"), "'' is refused");

    /* groups of grid identities, as the WLCG profile writes them */
    is_int(domain_group_valid("/atlas"), 1, "/atlas is a group");
    is_int(domain_group_valid("/atlas/prod-1.x_y"), 1,
           "/atlas/prod-1.x_y is a group");
    is_int(domain_group_valid("atlas"), 0, "a group begins with '/'");
    is_int(domain_group_valid("/"), 0, "'/' alone is no group");
    is_int(domain_group_valid("/atlas/"), 0, "no trailing '/'");
    is_int(domain_group_valid("/atlas//x"), 0, "no empty name");
    is_int(domain_group_valid("/-atlas"), 0,
           "a name begins with a letter or digit");
    is_int(domain_group_valid("/at las"), 0, "no blank");
    memset(buf, 'a', 255);
    buf[0] = '/';
    buf[255] = '\0';
    is_int(domain_group_valid(buf), 1, "255 characters are a group");
    {
        char big[300];
        memset(big, 'a', 256);
        big[0] = '/';
        big[256] = '\0';
        is_int(domain_group_valid(big), 0, "256 characters are too many");
    }
    return done_testing();
}
