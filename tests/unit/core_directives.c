/* core_directives.c - the #SBATCH, #$ and #PBS readers: what each
 * directive becomes, what the request keeps, every refusal with its exact
 * message, warn mode, the record, and the copy a cluster system gets. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/directives.h"
#include "tests/lib/tap.h"

static struct loom_error err;
static json_t *body, *rec, *warns;

/* Apply the directives of script to a body with request (JSON text, or
 * NULL) in mode; the results in body, rec, warns and err. */
static int apply(const char *script, const char *request,
                 enum directives_mode mode)
{
    json_error_t je;

    json_decref(body);
    json_decref(rec);
    json_decref(warns);
    body = json_pack("{s:s}", "script", script);
    if (request)
        json_object_set_new(body, "request", json_loads(request, 0, &je));
    memset(&err, 0, sizeof(err));
    return directives_apply(body, mode, &rec, &warns, &err);
}

/* The body's request as compact JSON with sorted keys (a static buffer). */
static const char *req(void)
{
    static char buf[1024];
    char *s = json_dumps(json_object_get(body, "request"),
                         JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

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

static const char *name(void)
{
    const char *n = json_string_value(json_object_get(body, "name"));

    return n ? n : "(none)";
}

/* A script refused in strict mode with msg, and accepted in warn mode
 * with msg as its one warning. */
static void refused(const char *script, const char *msg)
{
    ok(apply(script, NULL, DIRECTIVES_STRICT) < 0 &&
       err.kind == LOOM_EINVAL && !strcmp(err.field, "script"),
       "refused: %s", msg);
    is_str(err.message, msg, "... with its message");
    ok(apply(script, NULL, DIRECTIVES_WARN) == 0 &&
       json_array_size(warns) == 1 &&
       !strcmp(json_string_value(json_array_get(warns, 0)), msg),
       "... and in warn mode accepted with that warning: %s", dump(warns));
}

static void slurm(void)
{
    ok(apply("#!/bin/bash\n#SBATCH --job-name=sbtest\n#SBATCH --nodes=2\n"
             "#SBATCH --time=00:05:00\necho hi\n", NULL,
             DIRECTIVES_STRICT) == 0, "the example script is read");
    is_str(name(), "sbtest", "#SBATCH --job-name: the name");
    is_str(req(), "{\"nodes\":2,\"walltime_s\":300}",
           "--nodes=2 and --time=00:05:00: 2 nodes, 300 s");
    is_str(dump(rec), "[{\"line\":2,\"directive\":\"#SBATCH --job-name="
           "sbtest\",\"fields\":[\"name\"]},{\"line\":3,\"directive\":"
           "\"#SBATCH --nodes=2\",\"fields\":[\"request.nodes\"]},{\"line\":"
           "4,\"directive\":\"#SBATCH --time=00:05:00\",\"fields\":"
           "[\"request.walltime_s\"]}]", "the record names line, directive "
           "and fields");
    ok(warns == NULL, "no warnings");

    apply("#SBATCH -J a -N 2 --time 10 -p debug # and a comment\n", NULL,
          DIRECTIVES_STRICT);
    is_str(req(), "{\"nodes\":2,\"queue\":\"debug\",\"walltime_s\":600}",
           "options on one line, short and long, values apart or attached");
    is_str(name(), "a", "... -J a");
    apply("#SBATCH -J \"my job\" -N3\n", NULL, DIRECTIVES_STRICT);
    is_str(name(), "my job", "a quoted value");
    is_str(req(), "{\"nodes\":3}", "-N3");

    apply("#SBATCH --nodes=2 --time=5\n#SBATCH --job-name=x\n",
          "{\"nodes\":1}", DIRECTIVES_STRICT);
    is_str(req(), "{\"nodes\":1,\"walltime_s\":300}",
           "the request's nodes win over --nodes");
    is_str(dump(json_array_get(rec, 0)), "{\"line\":1,\"directive\":"
           "\"#SBATCH --nodes=2\",\"fields\":[],\"ignored\":\"the request "
           "gives request.nodes\"}", "... and the record says so");
    apply("#SBATCH -J x\n", NULL, DIRECTIVES_STRICT);
    is_str(name(), "x", "a body without a name takes the directive's");
    json_decref(rec);
    json_object_set_new(body, "name", json_string("mine"));
    ok(directives_apply(body, DIRECTIVES_STRICT, &rec, &warns, &err) == 0,
       "a body with a name");
    is_str(name(), "mine", "... keeps it");
    json_object_set_new(body, "name", json_null());
    json_decref(rec);
    ok(directives_apply(body, DIRECTIVES_STRICT, &rec, &warns, &err) == 0,
       "a body with a null name");
    is_str(name(), "x", "... takes the directive's");

    apply("#SBATCH -N 2\n#SBATCH -N 3\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"nodes\":3}", "a later directive wins");
    is_str(json_string_value(json_object_get(json_array_get(rec, 0),
                                             "ignored")),
           "line 2 gives the node count again", "... the record says why");

    apply("#SBATCH --ntasks=8 --cpus-per-task=2 --nodes=2\n", NULL,
          DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":8,\"nodes\":2}",
           "8 tasks of 2 cpus over 2 nodes: 8 cpus per node");
    apply("#SBATCH --ntasks=8 --ntasks-per-node=4\n", NULL,
          DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":4,\"nodes\":2}",
           "8 tasks, 4 per node: 2 nodes of 4 cpus");
    apply("#SBATCH --ntasks=3\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":3}", "3 tasks on one node");
    apply("#SBATCH -c 4\n", "{\"cpus_per_node\":2}", DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":2}", "the request's cpus win");

    apply("#SBATCH --mem=2G\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"memory_mb\":2048}", "--mem=2G: 2048 MiB");
    apply("#SBATCH --mem=1500\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"memory_mb\":1500}", "--mem=1500: MiB");
    apply("#SBATCH --mem-per-cpu=500 -c 4\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":4,\"memory_mb\":2000}",
           "--mem-per-cpu=500 with 4 cpus: 2000 MiB per node");
    apply("#SBATCH --mem-per-cpu=1K\n", "{\"cpus_per_node\":3}",
          DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":3,\"memory_mb\":3}",
           "per cpu times the request's cpus (1K rounded up to 1 MiB)");
    apply("#SBATCH --mem=1G\n#SBATCH --mem-per-cpu=100\n", NULL,
          DIRECTIVES_STRICT);
    is_str(req(), "{\"memory_mb\":100}", "the memory directive given last "
           "wins");
    is_str(json_string_value(json_object_get(json_array_get(rec, 0),
                                             "ignored")),
           "line 2 gives the memory another way", "... the record says why");

    apply("#SBATCH --gres=gpu:2\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"gpus\":2}", "--gres=gpu:2");
    apply("#SBATCH --gres=gpu\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"gpus\":1}", "--gres=gpu: one");
    apply("#SBATCH --gpus-per-node=3\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"gpus\":3}", "--gpus-per-node=3");
    apply("#SBATCH --gpus=4 -N 2\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"gpus\":2,\"nodes\":2}", "--gpus=4 over 2 nodes");
    apply("#SBATCH --constraint=bigmem&ssd\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"features\":[\"bigmem\",\"ssd\"]}", "--constraint a&b");
    apply("#SBATCH -C a\n#SBATCH -C b\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"features\":[\"b\"]}", "a later -C replaces");

    apply("#!/bin/sh\n\n# comment\necho hi\n#SBATCH -N 3\n", NULL,
          DIRECTIVES_STRICT);
    ok(!json_object_get(body, "request") && rec == NULL,
       "a directive after the first command is not read");
    apply("  #SBATCH -N 3\n", NULL, DIRECTIVES_STRICT);
    ok(!json_object_get(body, "request"), "an indented #SBATCH is a "
       "comment");
    apply("#SBATCH -N 2\r\n#SBATCH -t 1\r\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"nodes\":2,\"walltime_s\":60}", "CRLF lines");
}

/* Arrays, dependencies and holds in each system's terms become Loom's
 * "array", "dependency" and "hold". */
static void arrays_and_dependencies(void)
{
    ok(apply("#SBATCH --array=1-6%2\n#SBATCH -d afterok:5:6_2\n#SBATCH -H\n",
             NULL, DIRECTIVES_STRICT) == 0, "#SBATCH --array, -d, -H");
    if (err.kind)
        printf("#   %s\n", err.message);
    is_str(dump(body), "{\"script\":\"#SBATCH --array=1-6%2\\n#SBATCH -d "
           "afterok:5:6_2\\n#SBATCH -H\\n\",\"array\":\"1-6%2\",\"dependency\":"
           "\"afterok:5:6_2\",\"hold\":true}", "... array 1-6%%2, dependency "
           "afterok:5:6_2, hold");
    is_str(dump(rec), "[{\"line\":1,\"directive\":\"#SBATCH --array=1-6%2\","
           "\"fields\":[\"array\"]},{\"line\":2,\"directive\":\"#SBATCH -d "
           "afterok:5:6_2\",\"fields\":[\"dependency\"]},{\"line\":3,"
           "\"directive\":\"#SBATCH -H\",\"fields\":[\"hold\"]}]",
           "... recorded with their fields");
    ok(apply("#$ -t 1-10:2\n#$ -tc 3\n#$ -hold_jid 12,13\n#$ -h\n", NULL,
             DIRECTIVES_STRICT) == 0, "#$ -t, -tc, -hold_jid, -h");
    is_str(json_string_value(json_object_get(body, "array")), "1-10:2%3",
           "... -t 1-10:2 with -tc 3: array 1-10:2%%3");
    is_str(json_string_value(json_object_get(body, "dependency")),
           "afterany:12:13", "... -hold_jid 12,13: afterany:12:13");
    ok(json_is_true(json_object_get(body, "hold")), "... -h: hold");
    ok(apply("#PBS -J 1-10\n#PBS -W depend=afterok:12.srv:13[].srv,"
             "afterany:14[2].srv\n#PBS -h\n", NULL, DIRECTIVES_STRICT) == 0,
       "#PBS -J, -W depend=, -h");
    is_str(json_string_value(json_object_get(body, "array")), "1-10",
           "... -J 1-10: array 1-10");
    is_str(json_string_value(json_object_get(body, "dependency")),
           "afterok:12:13,afterany:14_2", "... 12.srv, 13[].srv (an array) "
           "and 14[2].srv (its task): afterok:12:13,afterany:14_2");
    ok(json_is_true(json_object_get(body, "hold")), "... -h: hold");
    ok(apply("#PBS -t 1,3,5-7\n", NULL, DIRECTIVES_STRICT) == 0 &&
       !strcmp(json_string_value(json_object_get(body, "array")), "1,3,5-7"),
       "#PBS -t 1,3,5-7 (Torque): array 1,3,5-7");
    json_decref(body);
    json_decref(rec);
    json_decref(warns);
    body = json_pack("{s:s, s:s}", "script", "#$ -t 1-4\n#$ -tc 2\n",
                     "array", "1-2");
    ok(directives_apply(body, DIRECTIVES_STRICT, &rec, &warns, &err) == 0 &&
       !strcmp(json_string_value(json_object_get(body, "array")), "1-2"),
       "the request's own array wins over -t and -tc");
    is_str(dump(rec), "[{\"line\":1,\"directive\":\"#$ -t 1-4\",\"fields\":"
           "[],\"ignored\":\"the request gives array\"},{\"line\":2,"
           "\"directive\":\"#$ -tc 2\",\"fields\":[],\"ignored\":\"the "
           "request gives array\"}]", "... both recorded as ignored");
}

static void slurm_refused(void)
{
    refused("#!/bin/sh\n#SBATCH -J a\n#SBATCH --mail-type=END\n",
            "line 3: #SBATCH --mail-type=END: not supported by Loom");
    refused("#SBATCH --mail-type END -N 2\n",
            "line 1: #SBATCH --mail-type END -N 2: not supported by Loom");
    refused("#SBATCH --array=1-x\n", "line 1: #SBATCH --array=1-x: '1-x' "
            "is not a task id or range (N, N-M or N-M:S, joined by commas, "
            "then %LIMIT if any)");
    refused("#SBATCH -d afterfoo:5\n", "line 1: #SBATCH -d afterfoo:5: "
            "'afterfoo' is not a dependency type: Loom takes after, "
            "afterany, afterok, afternotok (each with job ids: "
            "afterok:12:13, or an array's task: 12_7) and singleton");
    refused("#SBATCH --exclusive\n", "line 1: #SBATCH --exclusive: not "
            "supported by Loom: the job request has no exclusive use of "
            "nodes");
    refused("#SBATCH --exclusive=user\n", "line 1: #SBATCH --exclusive=user: "
            "not supported by Loom: the job request has no exclusive use of "
            "nodes");
    refused("#SBATCH foo\n", "line 1: #SBATCH foo: not an option (an option "
            "begins with -)");
    refused("#SBATCH --nodes\n", "line 1: #SBATCH --nodes: needs a value");
    refused("#SBATCH -J \"a b\n", "line 1: #SBATCH -J: a quote (\") is not "
            "closed");
    refused("#SBATCH --nodes=0\n", "line 1: #SBATCH --nodes=0: the node count "
            "must be a whole number from 1 to 100000, not '0'");
    refused("#SBATCH -N 2-4\n", "line 1: #SBATCH -N 2-4: a range of node "
            "counts is not supported by Loom: give one count");
    refused("#SBATCH --time=1:2:3:4\n", "line 1: #SBATCH --time=1:2:3:4: "
            "'1:2:3:4' is not a time in Slurm's formats (MM, MM:SS, "
            "HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)");
    refused("#SBATCH -t UNLIMITED\n", "line 1: #SBATCH -t UNLIMITED: "
            "'UNLIMITED' asks for no time limit, which Loom does not take: "
            "give one of at most 366 days");
    refused("#SBATCH --mem=0\n", "line 1: #SBATCH --mem=0: 0 asks for all "
            "the memory of each node, which Loom does not take: give the "
            "MiB");
    refused("#SBATCH --mem=2X\n", "line 1: #SBATCH --mem=2X: '2X' is not a "
            "size (MiB, or a number with K, M, G or T)");
    refused("#SBATCH --gres=gpu:a100:2\n", "line 1: #SBATCH "
            "--gres=gpu:a100:2: --gres: Loom takes a number of GPUs without a "
            "type, not 'gpu:a100:2'");
    refused("#SBATCH --gres=mps:100\n", "line 1: #SBATCH --gres=mps:100: "
            "Loom takes gpu or gpu:N only, not 'mps:100'");
    refused("#SBATCH -C a|b\n", "line 1: #SBATCH -C a|b: Loom takes features "
            "joined by & (every one needed), each of letters, digits, '.', "
            "'_', '-'; not 'a|b'");
    refused("#SBATCH -p a,b\n", "line 1: #SBATCH -p a,b: several partitions "
            "are not supported by Loom: give one");
    refused("#SBATCH -N 2\n#PBS -N x\n", "line 2: #PBS -N x: the script's "
            "directives are #SBATCH lines (the first is line 1): Loom reads "
            "those of one system");
    refused("#SBATCH --hold=1\n", "line 1: #SBATCH --hold=1: takes no "
            "value");

    refused("#SBATCH --job-name=\n", "line 1: #SBATCH --job-name=: needs a "
            "value");
    refused("#SBATCH -n 0\n", "line 1: #SBATCH -n 0: the task count must be "
            "a whole number from 1 to 100000000, not '0'");
    refused("#SBATCH --ntasks-per-node=x\n", "line 1: #SBATCH "
            "--ntasks-per-node=x: the tasks per node must be a whole number "
            "from 1 to 100000, not 'x'");
    refused("#SBATCH -c 0\n", "line 1: #SBATCH -c 0: the cpus per task must "
            "be a whole number from 1 to 100000, not '0'");
    refused("#SBATCH --mem=00\n", "line 1: #SBATCH --mem=00: the memory must "
            "be at least 1 MiB, not '00'");
    refused("#SBATCH --mem-per-cpu=2000000T\n", "line 1: #SBATCH "
            "--mem-per-cpu=2000000T: '2000000T' is more than Loom's limit of "
            "1099511627776 MiB");
    refused("#SBATCH -p a@b\n", "line 1: #SBATCH -p a@b: 'a@b' is not a "
            "partition name (letters, digits, '.', '_', '-')");
    refused("#SBATCH --gpus-per-node=4097\n", "line 1: #SBATCH "
            "--gpus-per-node=4097: the GPU count must be a whole number from "
            "0 to 4096, not '4097'");
    {
        char big[400], msg[600];
        memset(big, 'x', 257);
        big[257] = '\0';
        snprintf(msg, sizeof(msg), "#SBATCH -J %s\n", big);
        ok(apply(msg, NULL, DIRECTIVES_STRICT) < 0 &&
           strstr(err.message, ": a name has 1 to 256 characters"),
           "a name of 257 characters: %s", err.message + 200);
    }

    ok(apply("#SBATCH -n 100000000 --ntasks-per-node=1\n", NULL,
             DIRECTIVES_STRICT) < 0, "tasks that need too many nodes");
    is_str(err.message, "line 1: #SBATCH -n 100000000: makes 100000000 nodes, "
           "more than Loom's limit of 100000", "... saying so");
    ok(apply("#SBATCH --mem-per-cpu=1000T -c 2000\n", NULL,
             DIRECTIVES_STRICT) < 0, "memory per cpu times cpus too much");
    is_str(err.message, "line 1: #SBATCH --mem-per-cpu=1000T: makes "
           "2097152000000 MiB per node, more than Loom's limit of "
           "1099511627776", "... saying so");
    ok(apply("#SBATCH --gpus=3 -N 2\n", NULL, DIRECTIVES_WARN) < 0,
       "--gpus=3 over 2 nodes is refused, in warn mode too");
    is_str(err.message, "line 1: #SBATCH --gpus=3: 3 GPUs do not divide "
           "evenly over 2 nodes (Loom's gpus are per node)", "... saying why");
    ok(apply("#SBATCH -n 100 -c 2000\n", NULL, DIRECTIVES_STRICT) < 0,
       "tasks times cpus past Loom's limit");
    is_str(err.message, "line 1: #SBATCH -c 2000: makes 200000 cpus per "
           "node, more than Loom's limit of 100000", "... saying so");

    apply("#SBATCH -J ok --exclusive -N 2\n", NULL, DIRECTIVES_WARN);
    is_str(name(), "ok", "warn mode: the others of the line apply");
    is_str(req(), "{\"nodes\":2}", "... -N 2 too");
    is_str(dump(json_array_get(rec, 1)), "{\"line\":1,\"directive\":"
           "\"#SBATCH --exclusive\",\"fields\":[],\"ignored\":\"not "
           "supported by Loom: the job request has no exclusive use of "
           "nodes\"}",
           "... and the record shows the one ignored");
}

static void gridengine(void)
{
    apply("#!/bin/sh\n#$ -N getest\n#$ -pe smp 4\n"
          "#$ -l h_rt=0:05:00,h_vmem=1G\n#$ -q all.q\ndate\n", NULL,
          DIRECTIVES_STRICT);
    is_str(name(), "getest", "#$ -N");
    is_str(req(), "{\"cpus_per_node\":4,\"memory_mb\":4096,\"queue\":"
           "\"all.q\",\"walltime_s\":300}", "-pe smp 4, -l h_rt, h_vmem per "
           "slot, -q");
    apply("#$ -l h_rt=600 -l gpu=1 -pe smp 2\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":2,\"gpus\":2,\"walltime_s\":600}",
           "h_rt in seconds; gpu per slot");
    apply("#$ -l bigmem=true -l ssd=TRUE\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"features\":[\"bigmem\",\"ssd\"]}",
           "boolean resources are features, every -l adds");
    apply("#$ -l h_vmem=1g\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"memory_mb\":954}", "1g is 10^9 bytes: 954 MiB");
    apply("#$ -l h_vmem=2048M\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"memory_mb\":2048}", "2048M");
    refused("#$ -pe mpi 4\n", "line 1: #$ -pe mpi 4: Loom takes the parallel "
            "environment smp (slots on one node), not 'mpi', whose slots Grid "
            "Engine's configuration places");
    refused("#$ -pe smp\n", "line 1: #$ -pe smp: needs two values");
    refused("#$ -t 10-1\n", "line 1: #$ -t 10-1: the range 10-1 ends before "
            "it begins");
    refused("#$ -hold_jid prep\n", "line 1: #$ -hold_jid prep: Loom takes "
            "job ids (12,13) in -hold_jid, not names or patterns: 'prep'");
    refused("#$ -hold_jid 12,,13\n", "line 1: #$ -hold_jid 12,,13: '' is "
            "not a job id (123) or an array's task (123_7)");
    ok(apply("#$ -tc 2\n", NULL, DIRECTIVES_WARN) < 0 &&
       !strcmp(err.field, "script"), "-tc without -t is refused, in warn "
       "mode too");
    is_str(err.message, "line 1: #$ -tc 2: the script has no array (-t) for "
           "it to limit", "... saying so");
    refused("#$ -tc 0\n#$ -t 1-4\n", "line 1: #$ -tc 0: the tasks at once "
            "must be a whole number from 1 to 1000000, not '0'");
    refused("#$ -l s_rt=10\n", "line 1: #$ -l s_rt=10: the resource s_rt is "
            "not supported by Loom (it takes h_rt, h_vmem, gpu and features "
            "as NAME=true)");
    refused("#$ -l h_rt\n", "line 1: #$ -l h_rt: 'h_rt' is not NAME=VALUE");
    refused("#$ -l h_rt=1:60:00\n", "line 1: #$ -l h_rt=1:60:00: h_rt: "
            "'1:60:00': the minutes must be 0 to 59");
    refused("#$ -l h_vmem=1T\n", "line 1: #$ -l h_vmem=1T: h_vmem: '1T' is "
            "not a size (bytes, or a number with k, m, g, K, M or G)");
    refused("#$ -q all.q@host1\n", "line 1: #$ -q all.q@host1: Loom takes "
            "one queue by its name (letters, digits, '.', '_', '-'), not "
            "'all.q@host1'");
    refused("#$ -S /bin/bash\n", "line 1: #$ -S /bin/bash: not supported by "
            "Loom");
    refused("#$ -pe smp 0\n", "line 1: #$ -pe smp 0: the slot count must be "
            "a whole number from 1 to 100000, not '0'");
    refused("#$ -l gpu=x\n", "line 1: #$ -l gpu=x: gpu must be a whole "
            "number from 0 to 4096, not 'x'");
    refused("#$ -j maybe\n", "line 1: #$ -j maybe: -j takes y or n, not "
            "'maybe'");
    ok(apply("#$ -pe smp 4 -l gpu=4096\n", NULL, DIRECTIVES_STRICT) < 0,
       "gpu per slot times slots too much");
    is_str(err.message, "line 1: #$ -l gpu=4096: makes 16384 GPUs per node, "
           "more than Loom's limit of 4096", "... saying so");
    {
        char script[2048] = "";
        for (int i = 0; i < 65; i++)
            snprintf(script + strlen(script), sizeof(script) - strlen(script),
                     "#$ -l f%d=true\n", i);
        ok(apply(script, NULL, DIRECTIVES_STRICT) < 0, "65 features");
        is_str(err.message, "line 65: #$ -l f64=true: makes 65 features, more "
               "than Loom's limit of 64", "... are more than Loom takes");
    }
}

static void pbs(void)
{
    apply("#!/bin/sh\n#PBS -N pbstest\n#PBS -l select=2:ncpus=4:mem=8gb\n"
          "#PBS -l walltime=00:05:00\n#PBS -q batch\nhostname\n", NULL,
          DIRECTIVES_STRICT);
    is_str(name(), "pbstest", "#PBS -N");
    is_str(req(), "{\"cpus_per_node\":4,\"memory_mb\":8192,\"nodes\":2,"
           "\"queue\":\"batch\",\"walltime_s\":300}",
           "select=2:ncpus=4:mem=8gb, walltime, -q");
    apply("#PBS -l nodes=2:ppn=4:bigmem,mem=4gb\n", NULL, DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":4,\"features\":[\"bigmem\"],"
           "\"memory_mb\":2048,\"nodes\":2}",
           "Torque's nodes=2:ppn=4:bigmem; mem is the job's, over its nodes");
    apply("#PBS -l select=ncpus=2:ngpus=1:bigmem=true\n", NULL,
          DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":2,\"features\":[\"bigmem\"],\"gpus\":1,"
           "\"nodes\":1}", "a chunk without a count: one node");
    apply("#PBS -lwalltime=1:00:00 -l pmem=100mb -l ncpus=3\n", NULL,
          DIRECTIVES_STRICT);
    is_str(req(), "{\"cpus_per_node\":3,\"memory_mb\":300,\"walltime_s\":"
           "3600}", "-l attached; pmem per cpu; ncpus");
    refused("#PBS -l nodes=2:ppn=4+1:ppn=2\n", "line 1: #PBS -l "
            "nodes=2:ppn=4+1:ppn=2: chunks of several kinds (+) are not "
            "supported by Loom: give one");
    refused("#PBS -l nodes=host1:ppn=2\n", "line 1: #PBS -l "
            "nodes=host1:ppn=2: naming hosts is not supported by Loom: give "
            "a node count, not 'host1:ppn=2'");
    refused("#PBS -l select=2:mpiprocs=4\n", "line 1: #PBS -l "
            "select=2:mpiprocs=4: 'mpiprocs' is not supported by Loom in "
            "select= (it takes N:ncpus=C:mem=M:ngpus=G and NAME=true)");
    refused("#PBS -l place=excl\n", "line 1: #PBS -l place=excl: not "
            "supported by Loom: the job request has no exclusive use of "
            "nodes");
    refused("#PBS -l vmem=1gb\n", "line 1: #PBS -l vmem=1gb: the resource "
            "vmem is not supported by Loom (it takes select, nodes, walltime, "
            "mem, pmem and ncpus)");
    refused("#PBS -J 1-\n", "line 1: #PBS -J 1-: '1-' is not a task id or "
            "range (N, N-M or N-M:S, joined by commas, then %LIMIT if any)");
    refused("#PBS -W depend=before:12\n", "line 1: #PBS -W "
            "depend=before:12: 'before' is not a dependency type: Loom "
            "takes after, afterany, afterok, afternotok (each with job ids: "
            "afterok:12:13, or an array's task: 12_7) and singleton");
    refused("#PBS -W depend=afterok:x.srv\n", "line 1: #PBS -W "
            "depend=afterok:x.srv: 'x.srv' is not a job id (123, 123.server, "
            "123[].server or 123[7].server)");
    refused("#PBS -W depend=afterok:12,group_list=x\n", "line 1: #PBS -W "
            "depend=afterok:12,group_list=x: the attribute group_list is not "
            "supported by Loom");
    refused("#PBS -W group_list=x\n", "line 1: #PBS -W group_list=x: the "
            "attribute group_list is not supported by Loom");
    refused("#PBS -q batch@server\n", "line 1: #PBS -q batch@server: Loom "
            "takes a queue by its name (letters, digits, '.', '_', '-'), not "
            "'batch@server'");
    refused("#PBS -l walltime=1h\n", "line 1: #PBS -l walltime=1h: walltime: "
            "'1h' is not a time in the form [[H:]M:]S (SS, MM:SS or "
            "HH:MM:SS)");
    refused("#PBS -l nodes=2:ppn=2:foo=bar\n", "line 1: #PBS -l "
            "nodes=2:ppn=2:foo=bar: 'foo' is not supported by Loom in nodes= "
            "(it takes N:ppn=C:gpus=G and features)");
    refused("#PBS -l select=0:ncpus=1\n", "line 1: #PBS -l select=0:ncpus=1: "
            "the chunk count must be a whole number from 1 to 100000, not "
            "'0'");
    refused("#PBS -j x\n", "line 1: #PBS -j x: -j takes oe, eo or n, not "
            "'x'");
    refused("#PBS -l mem=4XB\n", "line 1: #PBS -l mem=4XB: '4XB' is not a "
            "size (bytes, or a number with b, kb, mb, gb, tb or w, kw, mw, "
            "gw, tw)");
}

static void copies(void)
{
    const char *s = "#!/bin/sh\n#SBATCH -N 2\n#$ -N x\n#PBS -q a\n"
                    "# comment\necho hi\n#SBATCH -N 3\n";
    char *n = directives_neutralise(s), *t = directives_strip(s);

    is_str(n, "#!/bin/sh\n#LOOM-SBATCH -N 2\n#LOOM-$ -N x\n#LOOM-PBS -q a\n"
           "# comment\necho hi\n#SBATCH -N 3\n", "neutralised: the header's "
           "directive lines begin #LOOM-");
    is_str(t, "#!/bin/sh\n# comment\necho hi\n#SBATCH -N 3\n",
           "stripped: the header's directive lines are gone");
    free(n);
    free(t);
    n = directives_neutralise("#SBATCH -N 2");
    is_str(n, "#LOOM-SBATCH -N 2", "a last line without a newline");
    free(n);
    n = directives_neutralise("echo hi\n");
    is_str(n, "echo hi\n", "a script without directives stays as it is");
    free(n);
    ok(apply("#LOOM-SBATCH -N 2\necho\n", NULL, DIRECTIVES_STRICT) == 0 &&
       rec == NULL, "a neutralised line is not read again");
}

/* A warning is cut where a UTF-8 sequence ends: a cut through one would
 * not be a JSON string, and the directive was lost with it. */
static void utf8_cut(void)
{
    char script[512];
    size_t n;
    const char *w;

    n = (size_t)snprintf(script, sizeof(script), "#SBATCH --bogus=");
    while (n < 199)
        script[n++] = 'x';
    snprintf(script + n, sizeof(script) - n, "\xc3\xa9\xc3\xa9\n");
    ok(apply(script, NULL, DIRECTIVES_WARN) == 0 &&
       json_array_size(warns) == 1,
       "an unknown directive cut at 200 bytes inside a UTF-8 character: "
       "accepted with one warning (%s)", err.message);
    w = json_string_value(json_array_get(warns, 0));
    ok(w && strstr(w, "xxxx: ") && !strstr(w, "\xc3"),
       "... cut before the character: %.60s", w ? w + strlen(w) - 60 : "");
}

/* What ARC's slurm back-end (A-REX 6) writes into every job's script. */
static void slurm_arc(void)
{
    json_t *v;

    ok(apply("#!/bin/bash -l\n#SBATCH --no-requeue\n#SBATCH --export=NONE\n"
             "#SBATCH -e /s/j.comment\n#SBATCH -o /s/j.comment\n\n"
             "#SBATCH -p all.q\n#SBATCH --nice=50\n#SBATCH -J 'hello'\n"
             "#SBATCH --get-user-env=10L\n#SBATCH -n 1\n#SBATCH \n"
             "#SBATCH -t 10:0\necho hi\n", NULL, DIRECTIVES_STRICT) == 0,
       "ARC's script is read (%s)", err.message);
    is_str(req(), "{\"cpus_per_node\":1,\"queue\":\"all.q\","
           "\"walltime_s\":600}", "-p, -n and -t in the request");
    v = json_object_get(body, "priority");
    ok(json_integer_value(v) == -50, "--nice=50: priority -50 (%s)",
       dump(v));
    ok(json_is_false(json_object_get(body, "requeue")),
       "--no-requeue: requeue false");
    is_str(dump(json_array_get(rec, 7)), "{\"line\":10,\"directive\":"
           "\"#SBATCH --get-user-env=10L\",\"fields\":[],\"ignored\":"
           "\"the job is submitted as its own account, never by root: it "
           "has its account's environment as --export gives it (Slurm "
           "applies --get-user-env only for root)\"}",
           "--get-user-env sets nothing, and the record says why");
    apply("#SBATCH --nice\n#SBATCH --get-user-env\n", NULL,
          DIRECTIVES_STRICT);
    ok(json_integer_value(json_object_get(body, "priority")) == -100,
       "--nice alone: 100, priority -100 (%s)", err.message);
    apply("#SBATCH --nice=-5\n", "{}", DIRECTIVES_STRICT);
    ok(json_integer_value(json_object_get(body, "priority")) == 5,
       "--nice=-5: priority 5 (the API refuses it to a user)");
    apply("#SBATCH --nice 7 -J x\n", NULL, DIRECTIVES_STRICT);
    is_str(err.message, "line 1: #SBATCH 7 -J x: not an option (an "
           "option begins with -)", "--nice takes its value only attached");
    refused("#SBATCH --nice=x\n", "line 1: #SBATCH --nice=x: the adjustment "
            "must be a whole number from -1000000 to 1000000");
    refused("#SBATCH --get-user-env=10X\n", "line 1: #SBATCH "
            "--get-user-env=10X: the value must be seconds, S or L, or "
            "seconds followed by S or L");
    refused("#SBATCH --no-requeue=1\n", "line 1: #SBATCH --no-requeue=1: "
            "takes no value");
}

/* How a job is to be scheduled: Slurm's --comment; qsub's -p (priority)
 * and -r (rerun) in Grid Engine and PBS, each in its own range. */
static void scheduling(void)
{
    char big[1100], line[1200];

    ok(apply("#SBATCH --comment='a note, kept'\n", NULL,
             DIRECTIVES_STRICT) == 0 &&
       !strcmp(dump(json_object_get(body, "comment")), "\"a note, kept\""),
       "#SBATCH --comment: the comment (%s)",
       dump(json_object_get(body, "comment")));
    memset(big, 'c', 1025);
    big[1025] = '\0';
    snprintf(line, sizeof(line), "#SBATCH --comment=%s\n", big);
    apply(line, NULL, DIRECTIVES_STRICT);
    ok(strstr(err.message, ": a comment has at most 1024 bytes") != NULL,
       "a comment of 1025 bytes is refused (%.60s...)", err.message);
    ok(apply("#$ -p -12\n#$ -r n\n", NULL, DIRECTIVES_STRICT) == 0 &&
       json_integer_value(json_object_get(body, "priority")) == -12 &&
       json_is_false(json_object_get(body, "requeue")),
       "#$ -p -12 -r n: priority -12, requeue false (%s)", err.message);
    ok(apply("#PBS -p 1023\n#PBS -r n\n", NULL, DIRECTIVES_STRICT) == 0 &&
       json_integer_value(json_object_get(body, "priority")) == 1023 &&
       json_is_false(json_object_get(body, "requeue")),
       "#PBS -p 1023 -r n: priority 1023, requeue false (%s)", err.message);
    refused("#$ -p 1025\n", "line 1: #$ -p 1025: the priority must be a "
            "whole number from -1023 to 1024, not '1025'");
    refused("#PBS -p -1025\n", "line 1: #PBS -p -1025: the priority must "
            "be a whole number from -1024 to 1023, not '-1025'");
    refused("#$ -p x\n", "line 1: #$ -p x: the priority must be a whole "
            "number from -1023 to 1024, not 'x'");
    refused("#$ -r y\n", "line 1: #$ -r y: not supported by Loom: Loom "
            "submits a job again only when its cluster loses it, not when "
            "its node fails; n (never) is taken");
    refused("#PBS -r maybe\n", "line 1: #PBS -r maybe: takes y or n, not "
            "'maybe'");
}

int main(void)
{
    utf8_cut();
    slurm_arc();
    scheduling();
    slurm();
    slurm_refused();
    arrays_and_dependencies();
    gridengine();
    pbs();
    copies();
    json_decref(body);
    body = json_pack("{s:[s]}", "command", "true");
    ok(directives_apply(body, DIRECTIVES_STRICT, &rec, &warns, &err) == 0 &&
       rec == NULL && warns == NULL && json_object_size(body) == 1,
       "a command (no script) is left alone");
    json_decref(body);
    return done_testing();
}
