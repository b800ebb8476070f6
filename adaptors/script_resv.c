/* script_resv.c - the script adaptor's reserve and unreserve: a Loom
 * reservation made in the cluster's own system by its pack. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/script.h"
#include "core/accounts.h"

/* A native id as a pack may answer it: what Slurm and Grid Engine name
 * reservations with (letters, digits, '.', '_', '-'), not empty. */
static int id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;

    if (n == 0 || n > 128)
        return 0;
    return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789._-") == n;
}

/* The request as stdin (JSON) and as LOOM_RES_* variables. */
static int resv_input(const struct resv_spec *spec, json_t **in,
                      struct strv *extra)
{
    json_t *nodes = json_array();
    char list[8192], num[24];
    size_t off = 0;
    int rc = 0;

    list[0] = '\0';
    for (size_t i = 0; nodes && i < spec->n_nodes; i++) {
        size_t n = strlen(spec->nodes[i]);
        if (off + n + 2 > sizeof(list))
            rc = -1;
        if (rc)
            break;
        off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
                                i ? "," : "", spec->nodes[i]);
        rc |= json_array_append_new(nodes, json_string(spec->nodes[i]));
    }
    *in = nodes && !rc
              ? json_pack("{s:s, s:O, s:I, s:I, s:s, s:s?}", "name",
                          spec->name, "nodes", nodes, "start",
                          (json_int_t)spec->start, "end",
                          (json_int_t)spec->end, "purpose", spec->purpose,
                          "owner", spec->account)
              : NULL;
    json_decref(nodes);
    if (!*in)
        return -1;
    rc |= strv_push_kv(extra, "LOOM_RES_NAME", spec->name);
    rc |= strv_push_kv(extra, "LOOM_RES_NODES", list);
    snprintf(num, sizeof(num), "%lld", (long long)spec->start);
    rc |= strv_push_kv(extra, "LOOM_RES_START", num);
    snprintf(num, sizeof(num), "%lld", (long long)spec->end);
    rc |= strv_push_kv(extra, "LOOM_RES_END", num);
    rc |= strv_push_kv(extra, "LOOM_RES_PURPOSE", spec->purpose);
    rc |= strv_push_kv(extra, "LOOM_RES_OWNER",
                       spec->account ? spec->account : "");
    return rc ? -1 : 0;
}

int script_reserve(void *self, const struct resv_spec *spec,
                   char **native_id, struct loom_error *err)
{
    struct script *s = self;
    struct strv extra = {0};
    json_t *in = NULL, *a = NULL;
    const char *id;
    int rc = -1;

    *native_id = NULL;
    if (!s->has[OP_RESERVE])
        return loom_error_set(err, LOOM_ENOTSUP, "cluster %s: reserve is not "
                              "supported by pack %s", s->cluster, s->pack);
    if (!id_ok(spec->name) || !spec->n_nodes ||
        (spec->account && !accounts_name_ok(spec->account)))
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: reserve: a "
                              "reservation needs a name, nodes and an "
                              "account name, if any, a Unix account may "
                              "have", s->cluster);
    for (size_t i = 0; i < spec->n_nodes; i++)
        if (!id_ok(spec->nodes[i]))
            return loom_error_set(err, LOOM_EINVAL, "cluster %s: reserve: "
                                  "'%s' is no node name", s->cluster,
                                  spec->nodes[i]);
    if (resv_input(spec, &in, &extra) < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (script_run(s, OP_RESERVE, NULL, in, &extra, &a, err) < 0)
        goto out;
    id = json_string_value(json_object_get(a, "native_id"));
    if (!id_ok(id)) {
        loom_error_set(err, LOOM_ETEMP, "the answer has no native_id of "
                       "letters, digits, '.', '_' and '-'");
        script_fail(s, "reserve", err);
        goto out;
    }
    if (!(*native_id = strdup(id))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    rc = 0;
out:
    json_decref(in);
    json_decref(a);
    strv_fini(&extra);
    return rc;
}

int script_unreserve(void *self, const char *native_id,
                     struct loom_error *err)
{
    struct script *s = self;
    const char *args[] = {native_id, NULL};
    json_t *a = NULL;

    if (!s->has[OP_UNRESERVE])
        return loom_error_set(err, LOOM_ENOTSUP, "cluster %s: unreserve is "
                              "not supported by pack %s", s->cluster,
                              s->pack);
    if (!id_ok(native_id))
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: unreserve: "
                              "'%s' is no reservation id", s->cluster,
                              native_id ? native_id : "");
    if (script_run(s, OP_UNRESERVE, args, NULL, NULL, &a, err) < 0)
        return -1;
    json_decref(a);
    return 0;
}
