/* adaptors_annot.c - a node's annotations: the annotate keys of a
 * [cluster] section (every node, node lists, the errors), what the
 * maintenance thread sets over them, and the KEY=VALUE labels a job's
 * features match. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/annot.h"
#include "adaptors/infra.h"
#include "tests/lib/tap.h"

/* The cluster section of text (a whole file), read: 0 with *out and *cf
 * (destroy it), or -1 with err. */
static int read_text(const char *text, struct conf **cf,
                     struct annot_conf *out, struct loom_error *err)
{
    struct conf_section *sec;

    loom_error_clear(err);
    memset(out, 0, sizeof(*out));
    *cf = conf_parse("t.conf", text, err);
    if (!*cf)
        return -1;
    sec = conf_section(*cf, "cluster", "c");
    conf_get(sec, "adaptor");
    if (annot_conf_read(sec, out, err) < 0)
        return -1;
    return conf_check_unused(sec, err);
}

/* The annotations of node name of cluster c, as compact JSON (freed at
 * the next call). */
static const char *shown(const struct annot_conf *a, const char *name)
{
    static char *last;
    char id[64];
    json_t *o;

    snprintf(id, sizeof(id), "c/%s", name);
    o = annot_node(a, id, name);
    free(last);
    last = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return last ? last : "(null)";
}

static void t_config(void)
{
    struct loom_error err;
    struct annot_conf a;
    struct conf *cf;

    ok(read_text("[cluster c]\nadaptor = sim\nannotate.rack = r1\n"
                 "annotate[n[1-2],n4].kernel = 6.1\n"
                 "annotate[n3].kernel = 5.15\nannotate[n2].rack = r9\n",
                 &cf, &a, &err) == 0, "annotate.KEY and annotate[NODES].KEY "
       "are read, and no key is left unknown (%s)", err.message);
    is_int(a.n, 4, "four annotate keys");
    is_str(shown(&a, "n1"), "{\"kernel\":\"6.1\",\"rack\":\"r1\"}",
           "n1: the label of every node and that of n[1-2],n4");
    is_str(shown(&a, "n2"), "{\"kernel\":\"6.1\",\"rack\":\"r9\"}",
           "n2: a node list's label wins over that of every node");
    is_str(shown(&a, "n3"), "{\"kernel\":\"5.15\",\"rack\":\"r1\"}",
           "n3: its own kernel");
    is_str(shown(&a, "n5"), "{\"rack\":\"r1\"}",
           "n5: in no list, the label of every node only");
    annot_conf_fini(&a);
    is_int(a.n, 0, "annot_conf_fini empties it");
    conf_destroy(cf);

    ok(read_text("[cluster c]\nadaptor = sim\n", &cf, &a, &err) == 0 &&
       a.n == 0, "no annotate key: no labels");
    is_str(shown(&a, "n1"), "{}", "... and a node shows {}");
    conf_destroy(cf);
}

static void t_errors(void)
{
    static const struct {
        const char *line, *want;
    } cases[] = {
        {"annotated = x", "t.conf:3: unknown key 'annotated': an annotation "
         "is annotate.KEY (every node) or annotate[NODES].KEY"},
        {"annotate. = x", "t.conf:3: key 'annotate.': an annotation name "
         "has 1 to 64 letters"},
        {"annotate.a b = x", "t.conf:3: key 'annotate.a b': an annotation "
         "name"},
        {"annotate[n1]kernel = x", "t.conf:3: unknown key "
         "'annotate[n1]kernel'"},
        {"annotate[].kernel = x", "t.conf:3: key 'annotate[].kernel': the "
         "node list between [ and ] is empty"},
        {"annotate[n[1-].kernel = x", "t.conf:3: key "
         "'annotate[n[1-].kernel': node list 'n[1-': bad hostlist"},
        {"annotate[n[3-1]].kernel = x", "t.conf:3: key "
         "'annotate[n[3-1]].kernel': node list 'n[3-1]': bad range '3-1'"},
        {"annotate[n[1-3]].kernel = 6.1\nannotate[n3].kernel = 5.15",
         "t.conf:4: key 'annotate[n3].kernel': node n3 has annotation "
         "'kernel' from key 'annotate[n[1-3]].kernel' already"},
    };
    struct loom_error err;
    struct annot_conf a;
    struct conf *cf;
    char text[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text), "[cluster c]\nadaptor = sim\n%s\n",
                 cases[i].line);
        ok(read_text(text, &cf, &a, &err) < 0 &&
           strstr(err.message, cases[i].want) != NULL && a.n == 0,
           "refused: %s", err.message);
        ok(err.kind == LOOM_EINVAL, "... as invalid input");
        conf_destroy(cf);
    }
}

static void t_state(void)
{
    struct loom_error err;
    struct annot_conf a;
    struct conf *cf;
    json_t *attrs = json_pack("{s:i, s:s, s:[s,s]}", "kernel", 6, "rack",
                              "r7", "tags", "x", "y");

    read_text("[cluster c]\nadaptor = sim\nannotate.rack = r1\n"
              "annotate[n1].kernel = 6.1\nannotate.os = deb12\n", &cf, &a,
              &err);
    infra_annot_set("c/n1", attrs);
    is_str(shown(&a, "n1"), "{\"kernel\":6,\"os\":\"deb12\",\"rack\":\"r7\","
           "\"tags\":[\"x\",\"y\"]}", "goal and reports win over the labels "
           "of the configuration, and keep their JSON types");
    is_str(shown(&a, "n2"), "{\"os\":\"deb12\",\"rack\":\"r1\"}",
           "another node keeps its labels");
    infra_annot_set("c/n1", NULL);
    is_str(shown(&a, "n1"), "{\"kernel\":\"6.1\",\"os\":\"deb12\","
           "\"rack\":\"r1\"}", "set to NULL: the labels again");
    infra_annot_set("c/n1", attrs);
    infra_annot_clear();
    is_str(shown(&a, "n1"), "{\"kernel\":\"6.1\",\"os\":\"deb12\","
           "\"rack\":\"r1\"}", "infra_annot_clear: the labels again");
    json_decref(attrs);
    annot_conf_fini(&a);
    conf_destroy(cf);
}

static void t_labels(void)
{
    json_t *o = json_pack("{s:s, s:f, s:i, s:b, s:[s,s], s:n}", "a", "6.1",
                          "b", 6.1, "c", 42, "d", 1, "e", "x", "y", "f");
    struct strv v = {0};
    char all[256] = "", big[4001];

    ok(annot_labels(o, &v) == 0, "labels made");
    for (size_t i = 0; i < v.n; i++)
        snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s",
                 i ? " " : "", v.v[i]);
    is_str(all, "a=6.1 b=6.1 c=42 d=true e=x e=y", "text as a job names "
           "it: 6.1 and \"6.1\" alike, a list item by item, null left out");
    strv_fini(&v);
    json_decref(o);

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    o = json_pack("{s:s}", "long", big);
    ok(annot_labels(o, &v) == 0 && v.n == 1 && strlen(v.v[0]) == 5 + 4000,
       "a value of 4000 characters is a label too, whole");
    strv_fini(&v);
    json_decref(o);
}

int main(void)
{
    t_config();
    t_errors();
    t_state();
    t_labels();
    return done_testing();
}
