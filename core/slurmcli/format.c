/* format.c - Slurm's output formats: squeue's and sinfo's %-letters with
 * widths (-o "%.18i %T"), and lists of field names (squeue -O, sacct
 * --format, sacctmgr format=) with their widths. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CELL_BYTES 4096

static int add(struct sc_format *fmt, const struct sc_field *f,
               const char *text, size_t len, int width, int right)
{
    struct sc_item *it = realloc(fmt->items,
                                 (fmt->n + 1) * sizeof(*fmt->items));

    if (!it)
        return sc_fail("out of memory"), -1;
    fmt->items = it;
    it += fmt->n++;
    memset(it, 0, sizeof(*it));
    it->f = f;
    it->width = width;
    it->right = right;
    if (text && !(it->text = strndup(text, len)))
        return sc_fail("out of memory"), -1;
    return 0;
}

static void letters_of(const struct sc_field *fields, char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; fields[i].name && len + 4 < n; i++)
        if (fields[i].letter && fields[i].cell)
            len += (size_t)snprintf(buf + len, n - len, "%%%c",
                                    fields[i].letter);
}

static void names_of(const struct sc_field *fields, char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; fields[i].name && len < n; i++)
        if (fields[i].cell)
            len += (size_t)snprintf(buf + len, n - len, "%s%s",
                                    len ? "," : "", fields[i].name);
}

int sc_format_letters(const char *text, const struct sc_field *fields,
                      struct sc_format *fmt)
{
    const char *p = text, *lit;
    char all[512];

    memset(fmt, 0, sizeof(*fmt));
    while (*p) {
        int right = 0, width = 0;
        size_t i;

        lit = p;
        while (*p && *p != '%')
            p++;
        if (p > lit && add(fmt, NULL, lit, (size_t)(p - lit), 0, 0) < 0)
            return -1;
        if (!*p)
            break;
        p++;
        if (*p == '%') {
            if (add(fmt, NULL, "%", 1, 0, 0) < 0)
                return -1;
            p++;
            continue;
        }
        if (*p == '.') {
            right = 1;
            p++;
        }
        while (*p >= '0' && *p <= '9' && width < 10000)
            width = width * 10 + (*p++ - '0');
        for (i = 0; fields[i].name; i++)
            if (fields[i].letter && fields[i].letter == *p)
                break;
        if (!*p || !fields[i].name) {
            letters_of(fields, all, sizeof(all));
            sc_usage("format: %%%c is not a field Loom's %s has; it has "
                     "%s", *p ? *p : '?', sc_cmd, all);
            sc_format_fini(fmt);
            return -1;
        }
        if (!fields[i].cell) {
            sc_usage("format: %%%c (%s) is not supported by Loom: %s", *p,
                     fields[i].name, fields[i].header);
            sc_format_fini(fmt);
            return -1;
        }
        if (add(fmt, &fields[i], NULL, 0, width, right) < 0)
            return -1;
        p++;
    }
    return 0;
}

int sc_format_names(const char *text, const struct sc_field *fields,
                    struct sc_format *fmt)
{
    const char *p = text;
    char all[1024];

    memset(fmt, 0, sizeof(*fmt));
    fmt->fields_mode = 1;
    while (*p) {
        size_t n = strcspn(p, ","), k = strcspn(p, ":%"), i;
        int width = -1, right = 0;

        if (k > n)
            k = n;
        for (i = 0; fields[i].name; i++)
            if (strlen(fields[i].name) == k &&
                !strncasecmp(fields[i].name, p, k))
                break;
        if (!fields[i].name) {
            names_of(fields, all, sizeof(all));
            sc_usage("format: '%.*s' is not a field Loom's %s has; it has "
                     "%s", (int)(k < 64 ? k : 64), p, sc_cmd, all);
            sc_format_fini(fmt);
            return -1;
        }
        if (!fields[i].cell) {
            sc_usage("format: %s is not supported by Loom: %s",
                     fields[i].name, fields[i].header);
            sc_format_fini(fmt);
            return -1;
        }
        if (k < n) { /* :[.]W (squeue -O) or %W (sacct) */
            const char *w = p + k + 1;
            char *end;
            if (*w == '.') {
                right = 1;
                w++;
            }
            width = (int)strtol(w, &end, 10);
            if (end != p + n || width < 0 || width > 10000) {
                sc_usage("format: bad width in '%.*s'", (int)n, p);
                sc_format_fini(fmt);
                return -1;
            }
        }
        if (add(fmt, &fields[i], NULL, 0,
                width >= 0 ? width : fields[i].width, right) < 0)
            return -1;
        p += n;
        if (*p == ',')
            p++;
    }
    if (!fmt->n) {
        names_of(fields, all, sizeof(all));
        return sc_usage("format: give a field; the fields are %s", all),
               -1;
    }
    return 0;
}

void sc_format_fini(struct sc_format *fmt)
{
    for (size_t i = 0; i < fmt->n; i++)
        free(fmt->items[i].text);
    free(fmt->items);
    memset(fmt, 0, sizeof(*fmt));
}

static void put(const char *v, int width, int right, int pad_last,
                int plus)
{
    int n = (int)strlen(v);

    if (!width) {
        fputs(v, stdout);
        return;
    }
    if (n > width && plus && width > 1) { /* sacct: cut, and a + */
        printf(right ? "%.*s+" : "%.*s+", width - 1, v);
        return;
    }
    if (n > width)
        n = width; /* cut to the width, as Slurm does */
    if (right)
        printf("%*s%.*s", width - n, "", n, v);
    else if (pad_last)
        printf("%.*s%*s", n, v, width - n, "");
    else
        printf("%.*s", n, v);
}

static void line(const struct sc_format *fmt, const json_t *row,
                 const char *sep)
{
    char *buf = malloc(CELL_BYTES);

    for (size_t i = 0; i < fmt->n; i++) {
        const struct sc_item *it = &fmt->items[i];
        const char *v;
        int last = i + 1 == fmt->n;

        if (!it->f) {
            fputs(it->text, stdout);
            continue;
        }
        if (!row)
            v = it->f->header;
        else
            v = buf ? it->f->cell(row, buf, CELL_BYTES) : "";
        if (!v)
            v = "";
        if (sep) {
            printf("%s%s", i ? sep : "", v);
        } else if (fmt->fields_mode) {
            printf("%s", i ? " " : "");
            put(v, it->width, it->right, !last, !strcmp(sc_cmd, "sacct"));
        } else {
            put(v, it->width, it->right, 1, 0);
        }
    }
    if (sep && fmt->trail)
        fputs(sep, stdout);
    putchar('\n');
    free(buf);
}

void sc_format_header(const struct sc_format *fmt, const char *sep)
{
    line(fmt, NULL, sep);
    if (sep || !fmt->fields_mode || strcmp(sc_cmd, "sacct"))
        return;
    /* sacct underlines its header */
    for (size_t i = 0; i < fmt->n; i++) {
        printf("%s", i ? " " : "");
        for (int k = 0; k < fmt->items[i].width; k++)
            putchar('-');
    }
    putchar('\n');
}

void sc_format_row(const struct sc_format *fmt, const json_t *row,
                   const char *sep)
{
    line(fmt, row, sep);
}
