/* core_directives_io.c - the directives that name a job's files, its
 * working directory and its environment, in each system's terms: what
 * they become, what the request keeps, and each refusal with its message. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/directives.h"
#include "tests/lib/tap.h"

static struct loom_error err;
static json_t *body, *rec, *warns;

/* Apply the directives of script to the body given as JSON text (NULL:
 * {}) in mode; the results in body, rec, warns and err. */
static int apply_in(const char *script, const char *fields,
                    enum directives_mode mode)
{
    json_error_t je;

    json_decref(body);
    json_decref(rec);
    json_decref(warns);
    body = json_loads(fields ? fields : "{}", 0, &je);
    if (!body) {
        ok(0, "the test's body %s is JSON: %s", fields, je.text);
        body = json_object();
    }
    if (script)
        json_object_set_new(body, "script", json_string(script));
    memset(&err, 0, sizeof(err));
    return directives_apply(body, mode, &rec, &warns, &err);
}

static int apply(const char *script, const char *fields)
{
    return apply_in(script, fields, DIRECTIVES_STRICT);
}

/* body.key: its text, compact JSON for an object, or "(none)". */
static const char *get(const char *key)
{
    static char buf[1024];
    json_t *v = json_object_get(body, key);
    char *s;

    if (json_is_string(v))
        return json_string_value(v);
    s = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf(buf, sizeof(buf), "%s", s ? s : "(none)");
    free(s);
    return buf;
}

static const char *dump(json_t *v)
{
    static char buf[2048];
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

    snprintf(buf, sizeof(buf), "%s", s ? s : "(null)");
    free(s);
    return buf;
}

/* Refused in strict mode with msg (on field "script"); in warn mode too
 * when hard (a value Loom cannot work out, not a directive it does not
 * take), else accepted with msg as the warning. */
static void refused(const char *script, const char *fields, int hard,
                    const char *msg)
{
    ok(apply(script, fields) < 0 && err.kind == LOOM_EINVAL &&
       !strcmp(err.field, "script"), "refused: %s", msg);
    is_str(err.message, msg, "... with its message");
    if (hard)
        ok(apply_in(script, fields, DIRECTIVES_WARN) < 0 &&
           !strcmp(err.message, msg), "... in warn mode too");
    else
        ok(apply_in(script, fields, DIRECTIVES_WARN) == 0 &&
           json_array_size(warns) == 1 &&
           !strcmp(json_string_value(json_array_get(warns, 0)), msg),
           "... and in warn mode accepted with that warning: %s",
           dump(warns));
}

#define SUB "{\"submit_dir\":\"/home/u/w\"}"

static void slurm(void)
{
    ok(apply("#!/bin/sh\n#SBATCH --output=myout-%j.txt --chdir=sub\n", SUB)
       == 0, "#SBATCH --output=myout-%%j.txt --chdir=sub");
    is_str(get("output"), "myout-%j.txt", "... output as written");
    is_str(get("workdir"), "/home/u/w/sub", "... workdir in the submit "
           "directory");
    is_str(get("error"), "(none)", "... no error: it joins the output");
    is_str(dump(rec), "[{\"line\":2,\"directive\":\"#SBATCH "
           "--output=myout-%j.txt\",\"fields\":[\"output\"]},{\"line\":2,"
           "\"directive\":\"#SBATCH --chdir=sub\",\"fields\":[\"workdir\"]}]",
           "... recorded with their fields");
    apply("#SBATCH -e err-%x-%A_%a.txt -o %u.%N.%%\n", NULL);
    is_str(get("error"), "err-%x-%A_%a.txt", "-e with %%x %%A %%a");
    is_str(get("output"), "%u.%N.%%", "-o with %%u %%N %%%%");
    apply("#SBATCH -D /scratch/x\n", NULL);
    is_str(get("workdir"), "/scratch/x", "-D absolute: no submit_dir needed");
    apply("#SBATCH -D .\n", SUB);
    is_str(get("workdir"), "/home/u/w", "-D .: the submit directory");
    apply("#SBATCH -D ..\n", "{\"submit_dir\":\"/\"}");
    is_str(get("workdir"), "/..", "-D .. under /: one slash");
    apply("#SBATCH -N 1\n", SUB);
    is_str(get("workdir"), "/home/u/w", "no -D: the submit directory");
    apply(NULL, "{\"command\":[\"true\"],\"submit_dir\":\"/home/u/w\"}");
    is_str(get("workdir"), "/home/u/w", "a command: the submit directory");
    apply(NULL, "{\"command\":[\"true\"]}");
    is_str(get("workdir"), "(none)", "no submit_dir: no workdir");

    apply("#SBATCH -D sub -o o.txt\n",
          "{\"submit_dir\":\"/home/u/w\",\"workdir\":\"/mine\","
          "\"output\":\"mine.out\"}");
    is_str(get("workdir"), "/mine", "the request's workdir wins over -D");
    is_str(get("output"), "mine.out", "the request's output wins over -o");
    is_str(dump(rec), "[{\"line\":1,\"directive\":\"#SBATCH -D sub\","
           "\"fields\":[],\"ignored\":\"the request gives workdir\"},"
           "{\"line\":1,\"directive\":\"#SBATCH -o o.txt\",\"fields\":[],"
           "\"ignored\":\"the request gives output\"}]",
           "... both recorded as ignored");

    refused("#SBATCH -o out-%t.txt\n", NULL, 0, "line 1: #SBATCH -o "
            "out-%t.txt: field 'output': unknown pattern '%t' in "
            "'out-%t.txt' (the patterns are %j %u %x %A %a %N %%; %% is a "
            "%)");
    refused("#SBATCH --chdir=sub\n", NULL, 1, "line 1: #SBATCH --chdir=sub: "
            "the request does not say where it was submitted from "
            "(submit_dir): submit with loomctl, or give submit_dir or "
            "workdir");
    ok(apply("#SBATCH -D sub\n", "{\"submit_dir\":\"rel\"}") < 0 &&
       !strcmp(err.field, "submit_dir"), "a relative submit_dir: refused");
    is_str(err.message, "field 'submit_dir' must be an absolute path, not "
           "'rel'", "... saying so");
}

static void slurm_export(void)
{
    apply("#SBATCH --export=NONE\n", NULL);
    is_str(get("env"), "{}", "--export=NONE: env {}");
    apply("#SBATCH --export=NIL\n", NULL);
    is_str(get("env"), "{}", "--export=NIL: env {}");
    apply("#SBATCH --export=A=1,B=x=y\n", NULL);
    is_str(get("env"), "{\"A\":\"1\",\"B\":\"x=y\"}", "--export=A=1,B=x=y "
           "without the submitter's environment");
    apply("#SBATCH --export=ALL\n",
          "{\"submit_env\":{\"X\":\"1\",\"Y\":\"2\"}}");
    is_str(get("env"), "{\"X\":\"1\",\"Y\":\"2\"}", "--export=ALL: "
           "submit_env");
    apply("#SBATCH --export=ALL,X=9,Z=3\n",
          "{\"submit_env\":{\"X\":\"1\",\"Y\":\"2\"}}");
    is_str(get("env"), "{\"X\":\"9\",\"Y\":\"2\",\"Z\":\"3\"}",
           "--export=ALL,X=9,Z=3: the values given win");
    apply("#SBATCH --export=Y,NOPE\n",
          "{\"submit_env\":{\"X\":\"1\",\"Y\":\"2\"}}");
    is_str(get("env"), "{\"Y\":\"2\"}", "--export=Y,NOPE: Y's value; NOPE "
           "is not set where it was submitted");
    apply("#SBATCH --export=ALL\n#SBATCH --export=A=1\n",
          "{\"submit_env\":{\"X\":\"1\"}}");
    is_str(get("env"), "{\"A\":\"1\"}", "a later --export replaces");
    is_str(json_string_value(json_object_get(json_array_get(rec, 0),
                                             "ignored")),
           "line 2 gives the environment again", "... the record says why");
    apply("#SBATCH --export=ALL\n", "{\"env\":{}}");
    is_str(get("env"), "{}", "the request's env wins over --export");
    {
        /* a name past 255 characters, with a value and from submit_env */
        char name[301], script[700], fields[400], want[400];
        memset(name, 'V', 300);
        name[300] = '\0';
        snprintf(script, sizeof(script), "#SBATCH --export=%s=1\n", name);
        apply(script, NULL);
        snprintf(want, sizeof(want), "{\"%s\":\"1\"}", name);
        is_str(get("env"), want, "--export=NAME=value with a name of 300 "
               "characters: in env");
        snprintf(script, sizeof(script), "#SBATCH --export=%s\n", name);
        snprintf(fields, sizeof(fields), "{\"submit_env\":{\"%s\":\"2\"}}",
                 name);
        apply(script, fields);
        snprintf(want, sizeof(want), "{\"%s\":\"2\"}", name);
        is_str(get("env"), want, "... and --export=NAME: its value from "
               "submit_env");
    }
    refused("#SBATCH --export=ALL\n", NULL, 1, "line 1: #SBATCH --export=ALL: "
            "it passes the submitter's environment, which only the client "
            "has: submit with 'loomctl submit --export ALL', or give the "
            "request's submit_env");
    refused("#SBATCH --export=NONE,A=1\n", NULL, 0, "line 1: #SBATCH "
            "--export=NONE,A=1: NONE stands alone: Loom takes NONE, or ALL, "
            "NAME and NAME=value joined by ','");
    refused("#SBATCH --export=1A=2\n", NULL, 0, "line 1: #SBATCH "
            "--export=1A=2: '1A' is not a variable name (letters, digits "
            "and '_', not first a digit); Loom takes NONE, or ALL, NAME and "
            "NAME=value, joined by ','");
    ok(directives_want_env("#SBATCH --export=ALL\n") == 1 &&
       directives_want_env("#SBATCH --export=A=1,B\n") == 1,
       "a client sends its environment for ALL or a bare name");
    ok(directives_want_env("#SBATCH --export=A=1\n") == 0 &&
       directives_want_env("#SBATCH --export=NONE\n") == 0 &&
       directives_want_env("#SBATCH -N 2\n") == 0 &&
       directives_want_env("#SBATCH --export=ALL\n#SBATCH --export=NONE\n")
           == 0,
       "... and not for values given, NONE, no --export or a later NONE");
}

static void gridengine(void)
{
    apply("#$ -o out.$JOB_ID.$TASK_ID -e $USER-$JOB_NAME-$HOSTNAME.err\n",
          NULL);
    is_str(get("output"), "out.%j.%a", "#$ -o: $JOB_ID, $TASK_ID");
    is_str(get("error"), "%u-%x-%N.err", "#$ -e: $USER, $JOB_NAME, "
           "$HOSTNAME (the first node's host)");
    apply("#$ -o 50%.log\n", NULL);
    is_str(get("output"), "50%%.log", "a '%%' is itself");
    apply("#$ -o logs/ -e logs/\n", NULL);
    is_str(get("output"), "logs/%x.o%j", "-o DIR/: Grid Engine's name in it");
    is_str(get("error"), "logs/%x.e%j", "-e DIR/: likewise");
    apply("#$ -N x\n", SUB);
    is_str(get("workdir"), "(none)", "without -cwd: the home directory, as "
           "Grid Engine's");
    apply("#$ -cwd\n", SUB);
    is_str(get("workdir"), "/home/u/w", "-cwd: the submit directory");
    apply("#$ -wd /data/run\n", SUB);
    is_str(get("workdir"), "/data/run", "-wd DIR");
    apply("#$ -cwd\n#$ -wd run\n", SUB);
    is_str(get("workdir"), "/home/u/w/run", "-wd after -cwd wins");
    is_str(json_string_value(json_object_get(json_array_get(rec, 0),
                                             "ignored")),
           "line 2 gives the working directory another way",
           "... the record says why");
    apply("#$ -j y -o o.txt -e e.txt\n", NULL);
    is_str(get("output"), "o.txt", "-j y: the output file");
    is_str(get("error"), "(none)", "... and no error file: joined");
    is_str(json_string_value(json_object_get(json_array_get(rec, 2),
                                             "ignored")),
           "line 1 gives the joining of error and output another way",
           "... -e recorded as ignored");
    apply("#$ -j n\n", NULL);
    is_str(get("error"), "%x.e%j", "-j n: the error file of its own, "
           "named as Grid Engine names it");
    apply("#$ -j n -e e.txt\n", NULL);
    is_str(get("error"), "e.txt", "-j n -e: that file");
    apply("#$ -V\n#$ -v A=1,B\n", "{\"submit_env\":{\"B\":\"b\",\"C\":\"c\"}}");
    is_str(get("env"), "{\"A\":\"1\",\"B\":\"b\",\"C\":\"c\"}",
           "-V and -v A=1,B: all, A given, B's value");
    is_str(dump(rec), "[{\"line\":1,\"directive\":\"#$ -V\",\"fields\":"
           "[\"env\"]},{\"line\":2,\"directive\":\"#$ -v A=1,B\",\"fields\":"
           "[\"env\"]}]", "... both recorded");
    apply("#$ -v A=1\n#$ -v B=2\n", NULL);
    is_str(get("env"), "{\"A\":\"1\",\"B\":\"2\"}", "each -v adds");
    ok(directives_want_env("#$ -V\n") && directives_want_env("#$ -v A\n") &&
       !directives_want_env("#$ -v A=1\n"), "-V and -v NAME want the "
       "submitter's environment, -v NAME=value not");

    refused("#$ -o $HOME/x.out\n", NULL, 0, "line 1: #$ -o $HOME/x.out: "
            "$HOME is not supported by Loom (it does not know the account's "
            "home where it takes the job): give the path relative to the "
            "working directory, or absolute");
    refused("#$ -o $SGE_CELL.out\n", NULL, 0, "line 1: #$ -o $SGE_CELL.out: "
            "'$SGE_CELL' is not one of the pseudo variables Loom takes "
            "($JOB_ID, $TASK_ID, $USER, $JOB_NAME, $HOSTNAME)");
    refused("#$ -e node1:/tmp/e\n", NULL, 0, "line 1: #$ -e node1:/tmp/e: the "
            "host 'node1:' is not supported by Loom (the file is written "
            "where the job runs): give the path alone");
    refused("#$ -o a,b\n", NULL, 0, "line 1: #$ -o a,b: a path for each host "
            "is not supported by Loom: give one path");
    refused("#$ -cwd\n", NULL, 1, "line 1: #$ -cwd: the request does not say "
            "where it was submitted from (submit_dir): submit with loomctl, "
            "or give submit_dir or workdir");
    refused("#$ -v ALL\n", NULL, 0, "line 1: #$ -v ALL: Loom does not pass a "
            "variable named ALL (-V passes the whole environment)");
    refused("#$ -v A-B=1\n", NULL, 0, "line 1: #$ -v A-B=1: 'A-B' is not a "
            "variable name (letters, digits and '_', not first a digit); "
            "Loom takes NAME and NAME=value, joined by ','");
    refused("#$ -V\n", NULL, 1, "line 1: #$ -V: it passes the submitter's "
            "environment, which only the client has: submit with 'loomctl "
            "submit --export ALL', or give the request's submit_env");
}

static void pbs(void)
{
    apply("#PBS -o out.txt -e /abs/err.txt\n", SUB);
    is_str(get("output"), "/home/u/w/out.txt", "#PBS -o relative: the "
           "submit directory's, as qsub makes it");
    is_str(get("error"), "/abs/err.txt", "#PBS -e absolute");
    is_str(get("workdir"), "/home/u/w", "... the job works in the submit "
           "directory");
    apply("#PBS -o out.txt\n", NULL);
    is_str(get("output"), "out.txt", "without submit_dir: the working "
           "directory's");
    apply("#PBS -o 100%.out\n", "{\"submit_dir\":\"/a%b\"}");
    is_str(get("output"), "/a%%b/100%%.out", "'%%' is itself, the submit "
           "directory's too");
    apply("#PBS -o logs/\n", NULL);
    is_str(get("output"), "logs/%x.o%j", "-o DIR/: PBS's name in it");
    apply("#PBS -j oe -o o.txt -e e.txt\n", SUB);
    is_str(get("output"), "/home/u/w/o.txt", "-j oe: the output file");
    is_str(get("error"), "(none)", "... no error file: joined");
    apply("#PBS -j eo -o o.txt -e e.txt\n", SUB);
    is_str(get("output"), "/home/u/w/e.txt", "-j eo: both in the error "
           "file");
    is_str(get("error"), "(none)", "... as Loom's output");
    apply("#PBS -j n\n", NULL);
    is_str(get("error"), "%x.e%j", "-j n: an error file of its own");
    apply("#PBS -d run\n", SUB);
    is_str(get("workdir"), "/home/u/w/run", "-d (Torque's): in the submit "
           "directory");
    apply("#PBS -V -v A=1\n", "{\"submit_env\":{\"X\":\"x\"}}");
    is_str(get("env"), "{\"A\":\"1\",\"X\":\"x\"}", "-V and -v");
    refused("#PBS -o host1:/tmp/o\n", NULL, 0, "line 1: #PBS -o host1:/tmp/o: "
            "the host 'host1:' is not supported by Loom (the file is written "
            "where the job runs): give the path alone");
    refused("#PBS -w /tmp\n", NULL, 0, "line 1: #PBS -w /tmp: not supported "
            "by Loom");
    refused("#PBS -v B\n", NULL, 1, "line 1: #PBS -v B: it passes the "
            "submitter's environment, which only the client has: submit "
            "with 'loomctl submit --export ALL', or give the request's "
            "submit_env");
}

int main(void)
{
    slurm();
    slurm_export();
    gridengine();
    pbs();
    json_decref(body);
    json_decref(rec);
    json_decref(warns);
    return done_testing();
}
