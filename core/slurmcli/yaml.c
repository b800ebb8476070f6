/* yaml.c - --yaml: the document --json writes, as YAML in block style
 * the way Slurm 22.05's serializer_yaml (libyaml) writes it. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Can s be written plain after its !!str tag, read back as the same
 * string? Printable ASCII without what begins or ends YAML's other
 * forms: an indicator first, ": " or " #" inside, a blank at either end,
 * a colon last. */
static int plain(const char *s)
{
    size_t n = strlen(s);

    if (!n || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) || s[n - 1] == ' ' ||
        s[n - 1] == ':' || strstr(s, ": ") || strstr(s, " #"))
        return 0;
    for (const char *p = s; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            return 0;
    return 1;
}

/* A string as libyaml writes one: plain, else in single quotes (a quote
 * doubled), else, with a control character or beyond ASCII, in double
 * quotes with JSON's escapes (which are YAML's). */
static int string(FILE *out, const char *s)
{
    json_t *js;
    char *q;
    int printable = 1;

    if (plain(s))
        return fputs(s, out) < 0 ? -1 : 0;
    for (const char *p = s; *p; p++)
        printable &= *p >= 0x20 && *p <= 0x7e;
    if (printable) {
        fputc('\'', out);
        for (const char *p = s; *p; p++) {
            if (*p == '\'')
                fputc('\'', out);
            fputc(*p, out);
        }
        fputc('\'', out);
        return 0;
    }
    js = json_string(s);
    q = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
    json_decref(js);
    if (!q)
        return -1;
    fputs(q, out);
    free(q);
    return 0;
}

static int nested(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v)) ||
           (json_is_array(v) && json_array_size(v));
}

static int node(FILE *out, const json_t *v, int indent);

/* A mapping's entries, each at indent: "!!str key: VALUE". */
static int mapping(FILE *out, const json_t *v, int indent)
{
    const char *key;
    json_t *child;

    json_object_foreach((json_t *)v, key, child) {
        fprintf(out, "%*s!!str ", indent, "");
        if (string(out, key) < 0)
            return -1;
        fputs(": ", out);
        /* a sequence in a mapping is not indented further (libyaml's) */
        if (node(out, child, json_is_array(child) ? indent : indent + 2) < 0)
            return -1;
    }
    return 0;
}

/* A sequence's items, each at indent: "- VALUE". */
static int sequence(FILE *out, const json_t *v, int indent)
{
    json_t *child;
    size_t i;

    json_array_foreach(v, i, child) {
        fprintf(out, "%*s- ", indent, "");
        if (node(out, child, indent + 2) < 0)
            return -1;
    }
    return 0;
}

/* A value, after "key: " or "- ", with its tag, as Slurm's: a scalar to
 * the end of the line; a mapping or sequence on the lines below, its
 * entries at indent. An empty string is null, as Slurm writes one. */
static int node(FILE *out, const json_t *v, int indent)
{
    char b[400];

    switch (json_typeof(v)) {
    case JSON_STRING:
        if (!*json_string_value(v))
            break;
        fputs("!!str ", out);
        if (string(out, json_string_value(v)) < 0)
            return -1;
        fputc('\n', out);
        return 0;
    case JSON_INTEGER:
        fprintf(out, "!!int %" JSON_INTEGER_FORMAT "\n",
                json_integer_value(v));
        return 0;
    case JSON_REAL: /* "%f" as Slurm's, unless it loses digits */
        snprintf(b, sizeof(b), "%f", json_real_value(v));
        if (strtod(b, NULL) != json_real_value(v))
            snprintf(b, sizeof(b), "%.17e", json_real_value(v));
        fprintf(out, "!!float %s\n", b);
        return 0;
    case JSON_TRUE:
    case JSON_FALSE:
        fprintf(out, "!!bool %s\n", json_is_true(v) ? "true" : "false");
        return 0;
    case JSON_OBJECT:
        fputs(nested(v) ? "!!map\n" : "!!map {}\n", out);
        return nested(v) ? mapping(out, v, indent) : 0;
    case JSON_ARRAY:
        fputs(nested(v) ? "!!seq\n" : "!!seq []\n", out);
        return nested(v) ? sequence(out, v, indent) : 0;
    default:
        break;
    }
    fputs("!!null null\n", out);
    return 0;
}

int sc_yaml_write(const json_t *doc, FILE *out)
{
    fputs("%YAML 1.1\n--- ", out);
    return node(out, doc, 0);
}
