/* maintenance_conf.c - [maintenance], [action NAME] and [rule NAME]: what
 * is read, what is refused; command words; how goal and actual values
 * compare. */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/conf.h"
#include "maintenance/maint_conf.h"
#include "maintenance/maint_state.h"
#include "tests/lib/tap.h"


static int read_conf(const char *text, struct maint_conf *mc,
                     struct loom_error *err)
{
    struct conf *c = conf_parse("t.conf", text, err);
    int rc = c ? maint_conf_read(c, "127.0.0.1:8470", mc, err) : -1;

    conf_destroy(c);
    return rc;
}

static void t_defaults(void)
{
    struct maint_conf mc;
    struct loom_error err;

    ok(read_conf("[loomd]\n", &mc, &err) == 0, "no section: defaults");
    ok(mc.actual_ttl_s == 600 && mc.compare_s == 30 && mc.verify_s == 300,
       "ttl 600, compare 30, verify 300");
    ok(mc.request_memory_s == 300, "request_memory_s 300");
    is_str(mc.url, "http://127.0.0.1:8470", "LOOM_URL from listen");
    is_int(mc.n_rules, 0, "no rules");
    maint_conf_fini(&mc);
}

static void t_full(void)
{
    struct maint_conf mc;
    struct loom_error err;
    const struct maint_action *a;

    ok(read_conf("[maintenance]\nactual_ttl_s = 60\nverify_s = 20\n"
                 "request_memory_s = 0\n[action reinstall]\n"
                 "command = /usr/sbin/re 'a b' \"c \\\"d\\\"\" %n\n"
                 "timeout_s = 900\nduration_s = 1800\nfixes = kernel, os\n"
                 "[rule kernel]\nattribute = kernel\naction = reinstall\n"
                 "max_nodes = 2\nmax_percent = 10\nwhen = any\n"
                 "[rule down]\nattribute = state\naction = node-off\n"
                 "duration_s = 60\ncluster = slurm\n", &mc, &err) == 0,
       "a full configuration reads (%s)", err.message);
    a = maint_conf_action(&mc, "reinstall");
    ok(a != NULL, "the action is found by name");
    if (a) {
        is_int(a->argv.n, 4, "the command has 4 words");
        is_str(a->argv.v[1], "a b", "'...' quotes");
        is_str(a->argv.v[2], "c \"d\"", "\"...\" quotes with \\\"");
        is_int(a->fixes.n, 2, "fixes: two attributes");
        is_int(a->duration_s, 1800, "duration_s");
    }
    is_int(mc.n_rules, 2, "two rules");
    ok(mc.request_memory_s == 0, "request_memory_s 0: ended requests stay");
    is_int(mc.rules[0].when, WHEN_ANY, "when = any");
    is_int(mc.rules[0].max_nodes, 2, "max_nodes");
    is_str(mc.rules[1].cluster, "slurm", "a rule for one cluster");
    is_int(mc.rules[1].within_s, 3600, "within_s defaults to an hour");
    ok(maint_conf_action(&mc, "node-off") == NULL, "node-off is no action");
    maint_conf_fini(&mc);
}

static void refused(const char *text, const char *why, const char *name)
{
    struct maint_conf mc;
    struct loom_error err;

    ok(read_conf(text, &mc, &err) < 0 && strstr(err.message, why),
       "%s: %s", name, err.message);
    maint_conf_fini(&mc);
}

static void t_refused(void)
{
    refused("[maintenance]\nttl = 3\n", "unknown key 'ttl'", "unknown key");
    refused("[action x]\ntimeout_s = 3\n", "needs a command", "no command");
    refused("[action x]\ncommand = re %n\n", "absolute path",
            "a relative command");
    refused("[action x]\ncommand = /bin/x 'open\n", "unbalanced",
            "an open quote");
    refused("[rule r]\nattribute = k\naction = nothing\nduration_s = 1\n",
            "neither node-off nor an [action]", "an unknown action");
    refused("[rule r]\nattribute = k\naction = node-off\n", "duration_s",
            "node-off without duration_s");
    refused("[rule r]\nattribute = k\naction = node-off\nduration_s = 1\n"
            "when = sometimes\n", "differs, unknown or any", "a bad when");
    refused("[rule r]\naction = node-off\nduration_s = 1\n",
            "needs an attribute", "no attribute");
    refused("[rule]\n", "needs a name", "a rule without a name");
}

static void same(const char *goal, const char *actual, int want,
                 const char *name)
{
    json_t *g = json_loads(goal, JSON_DECODE_ANY, NULL);
    json_t *a = actual ? json_loads(actual, JSON_DECODE_ANY, NULL) : NULL;

    is_int(maint_same_value(g, a), want, "%s", name);
    json_decref(g);
    json_decref(a);
}

static void t_values(void)
{
    same("\"6.1\"", "\"6.1\"", 1, "equal strings agree");
    same("\"6.1\"", "6.1", 1, "a string and a number of the same text agree");
    same("32", "32", 1, "equal integers agree");
    same("\"5.10\"", "\"5.1\"", 0, "5.10 is not 5.1");
    same("[\"a\", \"b\"]", "[\"b\", \"a\"]", 1, "lists compare as sets");
    same("[\"a\"]", "[\"a\", \"b\"]", 0, "a list with more is different");
    same("[\"a\"]", "\"a\"", 0, "a list is no scalar");
    same("true", "true", 1, "booleans");
    same("\"up\"", NULL, 0, "unknown never agrees");
}

int main(void)
{
    t_defaults();
    t_full();
    t_refused();
    t_values();
    return done_testing();
}
