/* core_proc.c - running a child: exit codes, pipes, time-out, output cap. */
/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/proc.h"
#include "tests/lib/tap.h"

static char *const env[] = {"PATH=/usr/bin:/bin", NULL};

static int sh(const char *script, const char *input, size_t input_len,
              double timeout, size_t max_out, struct proc_result *r)
{
    char *const argv[] = {"sh", "-c", (char *)script, NULL};
    struct proc_spec sp = {.path = "/bin/sh", .argv = argv, .envp = env,
                           .cwd = "/tmp", .input = input,
                           .input_len = input_len, .timeout_s = timeout,
                           .max_out = max_out, .max_err = 65536};
    struct loom_error err;

    return proc_run(&sp, r, &err);
}

static int gone(pid_t pid)
{
    char path[64], line[256];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "State:", 6)) {
            fclose(f);
            return strchr(line, 'Z') != NULL;
        }
    fclose(f);
    return 1;
}

int main(void)
{
    struct proc_result r;
    char *big = malloc(300000);
    FILE *f;
    int pid = 0;

    ok(sh("echo hi; echo oops >&2; exit 3", NULL, 0, 5, 1024, &r) == 0,
       "a child runs");
    ok(r.exited && r.exit_code == 3, "its exit status is 3");
    is_str(r.out, "hi\n", "standard output captured");
    is_str(r.err, "oops\n", "standard error captured");
    proc_result_fini(&r);

    memset(big, 'x', 300000);
    ok(sh("cat; cat >&2 </dev/null", big, 300000, 10, 1 << 20, &r) == 0 &&
       r.out_len == 300000 && r.exit_code == 0,
       "300 kB through stdin and back without a deadlock (%zu bytes)",
       r.out_len);
    proc_result_fini(&r);

    ok(sh("sleep 30 & echo $! > /tmp/loom-proc-t.pid; sleep 30", NULL, 0,
          0.3, 1024, &r) == 0 && r.timed_out,
       "a hanging child is stopped at its time-out");
    ok(r.elapsed_s < 29, "... before its sleep 30 would end (%.2f s)",
       r.elapsed_s);
    f = fopen("/tmp/loom-proc-t.pid", "r");
    if (f && fscanf(f, "%d", &pid) != 1)
        pid = 0;
    if (f)
        fclose(f);
    for (int i = 0; i < 100 && pid && !gone(pid); i++)
        usleep(20000);
    ok(pid > 0 && gone(pid), "... with its whole process group (pid %d)",
       pid);
    unlink("/tmp/loom-proc-t.pid");
    proc_result_fini(&r);

    ok(sh("exec >&-; exec 2>&-; sleep 30", NULL, 0, 0.3, 1024, &r) == 0 &&
       r.timed_out, "a child that closes its outputs and hangs times out");
    proc_result_fini(&r);

    ok(sh("head -c 10000000 /dev/zero", NULL, 0, 10, 1 << 20, &r) == 0 &&
       r.too_much, "10 MB of output is cut at the 1 MiB cap");
    ok(r.out_len <= (1 << 20), "... and no more is kept (%zu)", r.out_len);
    proc_result_fini(&r);

    ok(sh("kill -9 $$", NULL, 0, 5, 1024, &r) == 0 && !r.exited &&
       r.signal == SIGKILL, "a child killed by a signal says which");
    proc_result_fini(&r);

    {
        char *const argv[] = {"nope", NULL};
        struct proc_spec sp = {.path = "/nonexistent/nope", .argv = argv,
                               .envp = env, .timeout_s = 1, .max_out = 10,
                               .max_err = 10};
        struct loom_error err;
        int rc = proc_run(&sp, &r, &err);
        ok(rc < 0 || (r.exited && r.exit_code == 127),
           "a missing program fails clearly");
        if (rc == 0)
            proc_result_fini(&r);
    }
    {
        /* A descriptor the caller left open to exec is not the child's. */
        int fd = open("/dev/null", O_RDONLY);
        char script[96];
        snprintf(script, sizeof(script),
                 "[ -e /proc/$$/fd/%d ] && echo open || echo closed", fd);
        ok(fd >= 3 && sh(script, NULL, 0, 5, 1024, &r) == 0,
           "a child with descriptor %d of the caller's open", fd);
        is_str(r.out, "closed\n", "... does not have it");
        proc_result_fini(&r);
        close(fd);
    }
    free(big);
    return done_testing();
}
