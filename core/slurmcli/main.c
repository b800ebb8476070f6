/* main.c - loom-slurm: Slurm's commands over Loom's REST API, chosen by
 * the name it is called by (sbatch, squeue, ...); where loomd is, from
 * the environment or slurm.conf; messages as Slurm's. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "core/token_file.h"

#define CONF_LINE_MAX 1024

const char *sc_cmd = "loom-slurm";
static struct client *client_;

static void vsay(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: error: ", sc_cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int sc_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    return SC_FAIL;
}

int sc_usage(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    return SC_USAGE;
}

int sc_opt_error(int c, char **argv)
{
    const char *opt = argv[optind - 1];

    if (c == ':')
        return sc_usage("option %s requires an argument", opt);
    if (optopt && optopt < 256)
        return sc_usage("unrecognized option '-%c': Loom's %s does not "
                        "take it (see docs/slurm-commands.md)", optopt,
                        sc_cmd);
    return sc_usage("unrecognized option '%s': Loom's %s does not take it "
                    "(see docs/slurm-commands.md)", opt, sc_cmd);
}

int sc_unsupported(const char *opt, const char *why)
{
    return sc_usage("%s is not supported by Loom: %s", opt, why);
}

const char *sc_user(void)
{
    static char name[256];
    struct passwd pw, *res = NULL;
    char buf[4096];

    if (!name[0] && getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 &&
        res)
        snprintf(name, sizeof(name), "%s", pw.pw_name);
    return name[0] ? name : NULL;
}

/* slurm.conf of Loom: "key = value" lines (url, token_file), '#'
 * comments. Missing file: 0 with nothing set. */
static int read_conf(const char *path, int must, char *url, size_t url_n,
                     char *tfile, size_t tfile_n)
{
    FILE *f = fopen(path, "re");
    char line[CONF_LINE_MAX];
    int no = 0;

    if (!f) {
        if (errno == ENOENT && !must)
            return 0;
        sc_fail("cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *p = line, *eq, *k_end, *v, *v_end;
        no++;
        p += strspn(p, " \t");
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        eq = strchr(p, '=');
        if (!eq) {
            fclose(f);
            sc_fail("%s:%d: expected key = value", path, no);
            return -1;
        }
        for (k_end = eq; k_end > p && (k_end[-1] == ' ' || k_end[-1] == '\t');)
            k_end--;
        v = eq + 1 + strspn(eq + 1, " \t");
        v_end = v + strcspn(v, "\r\n");
        while (v_end > v && (v_end[-1] == ' ' || v_end[-1] == '\t'))
            v_end--;
        *k_end = *v_end = '\0';
        if (!strcmp(p, "url")) {
            snprintf(url, url_n, "%s", v);
        } else if (!strcmp(p, "token_file")) {
            snprintf(tfile, tfile_n, "%s", v);
        } else {
            fclose(f);
            sc_fail("%s:%d: unknown key '%s' (the keys are url and "
                    "token_file)", path, no, p);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

struct client *sc_client(void)
{
    const char *env_conf = getenv("LOOM_SLURM_CONF");
    const char *conf = env_conf && *env_conf ? env_conf : SC_CONF_DEFAULT;
    const char *e;
    char url[1024] = "", tfile[1024] = "", *tok = NULL;
    struct loom_error err = {0};

    if (client_)
        return client_;
    if (read_conf(conf, conf == env_conf, url, sizeof(url), tfile,
                  sizeof(tfile)) < 0)
        return NULL;
    if ((e = getenv("LOOM_URL")) && *e)
        snprintf(url, sizeof(url), "%s", e);
    if ((e = getenv("LOOM_TOKEN_FILE")) && *e)
        snprintf(tfile, sizeof(tfile), "%s", e);
    if (!url[0]) {
        sc_fail("no Loom to talk to: set LOOM_URL, or url in %s", conf);
        return NULL;
    }
    if (tfile[0] && !(tok = token_file_read(tfile, &err))) {
        sc_fail("%s", err.message);
        return NULL;
    }
    client_ = client_create(url, tok, 0, &err);
    if (tok) {
        OPENSSL_cleanse(tok, strlen(tok));
        free(tok);
    }
    if (!client_)
        sc_fail("%s", err.message);
    return client_;
}

int sc_get(const char *path, json_t **reply, struct loom_error *err)
{
    struct client *c = sc_client();

    *reply = NULL;
    if (!c)
        return loom_error_set(err, LOOM_EUNAVAIL, "no connection to Loom");
    return client_request(c, "GET", path, NULL, NULL, NULL, reply, err);
}

static const struct {
    const char *name;
    sc_cmd_f *fn;
} cmds[] = {
    {"sbatch", sc_sbatch},     {"squeue", sc_squeue},
    {"scancel", sc_scancel},   {"scontrol", sc_scontrol},
    {"sinfo", sc_sinfo},       {"sacct", sc_sacct},
    {"sacctmgr", sc_sacctmgr}, {"srun", sc_srun},
};

int main(int argc, char **argv)
{
    const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
    struct loom_error err = {0};
    int rc = -1;

    base = base ? base + 1 : argc > 0 ? argv[0] : "";
    if (!strcmp(base, "loom-slurm") && argc > 1) {
        argv++;
        argc--;
        base = argv[0];
    }
    for (size_t i = 0; i < sizeof(cmds) / sizeof(*cmds); i++)
        if (!strcmp(base, cmds[i].name)) {
            sc_cmd = cmds[i].name;
            if (client_global_init(&err) < 0)
                return sc_fail("%s", err.message);
            rc = cmds[i].fn(argc, argv);
            client_destroy(client_);
            client_global_cleanup();
            return rc;
        }
    fprintf(stderr, "loom-slurm: call it as sbatch, squeue, scancel, "
            "scontrol, sinfo, sacct, sacctmgr or srun (a link of that "
            "name), or as loom-slurm COMMAND [ARG...]\n");
    return SC_USAGE;
}
