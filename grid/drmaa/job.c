/* job.c - a Loom job as DRMAA sees it: its state, how it ended (the stat
 * of drmaa_wait and the drmaa_w* functions) and its resource usage. */
/* SPDX-License-Identifier: MIT */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "grid/drmaa/dr.h"

/*
 * The stat of drmaa_wait, opaque to the caller: the exit status in bits
 * 0-7, the signal in bits 8-15, and one flag for each way a job ends.
 * Loom records "128 + signal" as the exit code of a job a signal ended,
 * so an exit code from 129 to 192 is read as that signal.
 */
#define ST_EXITED 0x10000
#define ST_SIGNALED 0x20000
#define ST_ABORTED 0x40000
#define ST_CORE 0x80000 /* never set: Loom does not say */
#define SIG_MAX 64

/* RFC 3339 UTC to the second, as Loom writes it; -1 for null or other. */
static long long epoch(json_t *v)
{
    const char *s = json_string_value(v);
    struct tm tm;
    char *end;

    if (!s)
        return -1;
    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || strcmp(end, "Z") != 0)
        return -1;
    return (long long)timegm(&tm);
}

static int ps_of(const char *state, int *final)
{
    static const struct {
        const char *loom;
        int ps, final;
    } map[] = {
        { "pending", DRMAA_PS_QUEUED_ACTIVE, 0 },
        { "starting", DRMAA_PS_QUEUED_ACTIVE, 0 },
        { "held", DRMAA_PS_USER_ON_HOLD, 0 },
        { "running", DRMAA_PS_RUNNING, 0 },
        { "suspended", DRMAA_PS_USER_SUSPENDED, 0 },
        { "completed", DRMAA_PS_DONE, 1 },
        { "failed", DRMAA_PS_FAILED, 1 },
        { "cancelled", DRMAA_PS_FAILED, 1 },
    };

    *final = 0;
    for (size_t i = 0; state && i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(state, map[i].loom)) {
            *final = map[i].final;
            return map[i].ps;
        }
    return DRMAA_PS_UNDETERMINED;
}

/* How a final job ended, as a stat. */
static int stat_of(const struct dr_job *j)
{
    if (j->ps == DRMAA_PS_DONE)
        return ST_EXITED | (j->has_exit ? j->exit_code & 0xff : 0);
    if (!j->has_exit)
        return j->start_time < 0 ? ST_ABORTED : 0;
    if (j->exit_code > 128 && j->exit_code <= 128 + SIG_MAX)
        return ST_SIGNALED | (j->exit_code - 128) << 8;
    return ST_EXITED | (j->exit_code & 0xff);
}

int dr_job_id_check(const char *id, struct dr_error *e)
{
    size_t n = strspn(id, "0123456789");

    if (!n || id[n] || n > 18 || id[0] == '0')
        return dr_error_set(e, DRMAA_ERRNO_INVALID_JOB,
                            "'%.40s' is not a Loom job id (a positive "
                            "number)", id);
    return 0;
}

int dr_job_get(const char *id, struct dr_job *j, struct dr_error *e)
{
    char path[64];
    json_t *reply, *code;
    long status;

    memset(j, 0, sizeof(*j));
    if (dr_job_id_check(id, e) < 0)
        return -1;
    snprintf(j->id, sizeof(j->id), "%s", id);
    snprintf(path, sizeof(path), "/v1/jobs/%s", id);
    if (dr_rest("GET", path, NULL, NULL, &status, &reply, e) < 0) {
        if (status == 404)
            dr_error_set(e, DRMAA_ERRNO_INVALID_JOB,
                         "Loom has no job '%s'", id);
        return -1;
    }
    j->ps = ps_of(json_string_value(json_object_get(reply, "state")),
                  &j->final);
    j->submit_time = epoch(json_object_get(reply, "submit_time"));
    j->start_time = epoch(json_object_get(reply, "start_time"));
    j->end_time = epoch(json_object_get(reply, "end_time"));
    code = json_object_get(reply, "exit_code");
    j->has_exit = json_is_integer(code);
    j->exit_code = (int)json_integer_value(code);
    if (j->final)
        j->stat = stat_of(j);
    json_decref(reply);
    return 0;
}

drmaa_attr_values_t *dr_job_rusage(const struct dr_job *j)
{
    drmaa_attr_values_t *r = dr_values_new();
    struct dr_strv *s = r ? dr_values_strv(r) : NULL;
    char item[64];
    int rc = 0;

    if (!r)
        return NULL;
#define PUT(...)                                                             \
    do {                                                                     \
        snprintf(item, sizeof(item), __VA_ARGS__);                           \
        rc |= dr_strv_push(s, item);                                         \
    } while (0)
    if (j->submit_time >= 0)
        PUT("submission_time=%lld", j->submit_time);
    if (j->start_time >= 0)
        PUT("start_time=%lld", j->start_time);
    if (j->end_time >= 0)
        PUT("end_time=%lld", j->end_time);
    if (j->start_time >= 0 && j->end_time >= j->start_time)
        PUT("wallclock=%lld", j->end_time - j->start_time);
    if (j->has_exit)
        PUT("exit_status=%d", j->exit_code);
#undef PUT
    if (rc) {
        drmaa_release_attr_values(r);
        return NULL;
    }
    return r;
}

/* drmaa_job_ps ------------------------------------------------------------ */

int drmaa_job_ps(const char *job_id, int *remote_ps, char *error_diagnosis,
                 size_t error_diag_len)
{
    struct dr_error e = { 0 };
    struct dr_job j;

    if (!job_id || !remote_ps) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_job_ps needs a job id and remote_ps");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    if (dr_session_enter(&e) < 0)
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    if (dr_job_get(job_id, &j, &e) == 0)
        *remote_ps = j.ps;
    dr_session_leave();
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

/* The drmaa_w* functions: what a stat says -------------------------------- */

static int out_flag(int *out, int value, const char *fn, char *diag,
                    size_t len)
{
    struct dr_error e = { 0 };

    if (!out) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT, "%s needs an output",
                     fn);
        return dr_error_out(&e, diag, len);
    }
    *out = value;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_wifexited(int *exited, int stat, char *error_diagnosis,
                    size_t error_diag_len)
{
    return out_flag(exited, !!(stat & ST_EXITED), "drmaa_wifexited",
                    error_diagnosis, error_diag_len);
}

/* Meaningful only when drmaa_wifexited says so; 0 otherwise. */
int drmaa_wexitstatus(int *exit_status, int stat, char *error_diagnosis,
                      size_t error_diag_len)
{
    return out_flag(exit_status, stat & ST_EXITED ? stat & 0xff : 0,
                    "drmaa_wexitstatus", error_diagnosis, error_diag_len);
}

int drmaa_wifsignaled(int *signaled, int stat, char *error_diagnosis,
                      size_t error_diag_len)
{
    return out_flag(signaled, !!(stat & ST_SIGNALED), "drmaa_wifsignaled",
                    error_diagnosis, error_diag_len);
}

int drmaa_wcoredump(int *core_dumped, int stat, char *error_diagnosis,
                    size_t error_diag_len)
{
    return out_flag(core_dumped, !!(stat & ST_CORE), "drmaa_wcoredump",
                    error_diagnosis, error_diag_len);
}

int drmaa_wifaborted(int *aborted, int stat, char *error_diagnosis,
                     size_t error_diag_len)
{
    return out_flag(aborted, !!(stat & ST_ABORTED), "drmaa_wifaborted",
                    error_diagnosis, error_diag_len);
}

static const char *signal_name(int sig)
{
    static const char *const names[] = {
        [SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT",
        [SIGILL] = "SIGILL",   [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
        [SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",   [SIGKILL] = "SIGKILL",
        [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
        [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
        [SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",
        [SIGTSTP] = "SIGTSTP", [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
        [SIGURG] = "SIGURG",   [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
        [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
        [SIGWINCH] = "SIGWINCH", [SIGIO] = "SIGIO", [SIGPWR] = "SIGPWR",
        [SIGSYS] = "SIGSYS",
    };

    if (sig > 0 && (size_t)sig < sizeof(names) / sizeof(names[0]) &&
        names[sig])
        return names[sig];
    return NULL;
}

int drmaa_wtermsig(char *signal, size_t signal_len, int stat,
                   char *error_diagnosis, size_t error_diag_len)
{
    struct dr_error e = { 0 };
    int sig = (stat >> 8) & 0xff;
    char other[DRMAA_SIGNAL_BUFFER];

    if (!signal || !signal_len) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_wtermsig needs a buffer");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    if (!(stat & ST_SIGNALED)) {
        dr_copy(signal, signal_len, "");
        return DRMAA_ERRNO_SUCCESS;
    }
    if (signal_name(sig)) {
        dr_copy(signal, signal_len, signal_name(sig));
    } else {
        if (sig >= SIGRTMIN)
            snprintf(other, sizeof(other), "SIGRTMIN+%d", sig - SIGRTMIN);
        else
            snprintf(other, sizeof(other), "signal %d", sig);
        dr_copy(signal, signal_len, other);
    }
    return DRMAA_ERRNO_SUCCESS;
}
