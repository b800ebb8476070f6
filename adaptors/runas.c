/* runas.c - loom-runas: the one privileged program of Loom. */
/* SPDX-License-Identifier: MIT */
/*
 * Installed setuid root, owner root, group loomd's group, mode 4750: only
 * loomd's account (and root) may run it, and it checks that again. Each
 * verb checks its target account against the policy, then gives up root
 * for that account (initgroups, setgid, setuid) before it touches anything
 * of the account's; only `start` and `cgroups` do something as root first,
 * and only on cgroups that loomd's account owns. No path it is given
 * is followed through a symbolic link while it is root, and no descriptor
 * but those its verb is given outlives its start.
 *
 *   loom-runas start ACCOUNT RUNDIR [CGROUP...]
 *       A job's supervisor: RUNDIR (an empty directory loomd's account
 *       owns, in a directory it owns that nobody else may write) is given
 *       to the account (mode 2750, group loomd's); the process joins each
 *       CGROUP (a cgroup directory loomd's account owns), becomes the
 *       account and executes loom-supervise from its own directory with
 *       RUNDIR open on descriptor 5 (LOOM_RUNAS_RUN_FD). The descriptors
 *       0-4 are passed on as they are; the protocol of loom-supervise is
 *       in local_job.h. On a refusal the reason is written to fd 3 as
 *       "error: ..." (the ready pipe) and to stderr.
 *   loom-runas run ACCOUNT [-C DIR] [-t SECONDS] -- PROGRAM [ARG...]
 *       PROGRAM as the account (HOME, USER, LOGNAME and SHELL set, the
 *       rest of the environment as given), in DIR or the account's home;
 *       standard input, output and error as given (-C and -t in either
 *       order). With -t, SIGALRM ends PROGRAM after SECONDS (1 to 86400;
 *       an alarm survives exec): once it is the account, its caller
 *       (loomd's account) can no longer signal it.
 *   loom-runas signal ACCOUNT SIGNAL CGROUP | -g PGID
 *       As the account: the signal to every process in CGROUP (again
 *       until none is left, for KILL), or to the process group PGID.
 *   loom-runas read ACCOUNT PATH OFFSET MAX
 *       As the account: "size N" and a newline, then at most MAX bytes of
 *       PATH from OFFSET, on stdout; a PATH without a leading / is taken
 *       relative to the directory open on descriptor 3 (loomd passes a
 *       job's run directory so). It gives up after 10 s.
 *   loom-runas cgroups
 *       For each cgroup hierarchy, a directory loom.jobs in the caller's
 *       own cgroup, owned by the caller: loomd makes its jobs' cgroups
 *       there. Prints "HIERARCHY PATH" lines (HIERARCHY: a v1 controller
 *       name, or "unified").
 *
 * Policy: the target account must exist and must not be the caller's own
 * (loomd's); it must not be uid 0 and must have a uid of at least 1000,
 * unless the root-owned file LOOM_SYSCONFDIR/loom/runas.conf says
 * otherwise (`min_uid = N`, `allow_root_jobs = yes`, as loom.conf says
 * it); a file that others may write, a line of it that is not one of
 * these, or an unknown value is refused.
 * Exit status: 0, 1 on a refusal or failure (one line on stderr), 2 on bad
 * usage; `run` exits with the program's status (127 when it cannot run).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adaptors/runas.h"
#include "adaptors/runas_priv.h"

#ifndef LOOM_SYSCONFDIR
#define LOOM_SYSCONFDIR "/etc"
#endif
#ifndef LOOM_SERVICE_USER
#define LOOM_SERVICE_USER "loom"
#endif

int runas_ready_fd = -1; /* start: fd 3, where the refusal goes too */

void runas_fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (runas_ready_fd >= 0)
        dprintf(runas_ready_fd, "error: %s\n", msg);
    fprintf(stderr, "loom-runas: %s\n", msg);
    exit(1);
}

static void usage(void) __attribute__((noreturn));

static void usage(void)
{
    fputs("usage: loom-runas start ACCOUNT RUNDIR [CGROUP...]\n"
          "       loom-runas run ACCOUNT [-C DIR] [-t SECONDS] -- PROGRAM "
          "[ARG...]\n"
          "       loom-runas signal ACCOUNT SIGNAL CGROUP | -g PGID\n"
          "       loom-runas read ACCOUNT PATH OFFSET MAX\n"
          "       loom-runas cgroups\n", stderr);
    exit(2);
}

/* ---- policy ------------------------------------------------------------ */

struct policy {
    long min_uid;
    int allow_root;
};

/* yes, true, on, 1: 1; no, false, off, 0: 0; else -1. */
static int yes_no(const char *v)
{
    static const char *const words[] = {"no", "false", "off", "0",
                                        "yes", "true", "on", "1"};

    for (int i = 0; i < 8; i++)
        if (!strcmp(v, words[i]))
            return i >= 4;
    return -1;
}

/* LOOM_SYSCONFDIR/loom/runas.conf: KEY = VALUE lines and # comments; a
 * line it cannot read, or an unknown key or value, ends the program. */
static void policy_read(struct policy *p)
{
    const char *path = LOOM_SYSCONFDIR "/loom/runas.conf";
    char line[256];
    struct stat st;
    FILE *f;
    int fd;

    p->min_uid = LOOM_RUNAS_MIN_UID;
    p->allow_root = 0;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return;
        runas_fail("%s: %s", path, strerror(errno));
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & 022))
        runas_fail("%s must be a file owned by root that only root may write",
             path);
    f = fdopen(fd, "r");
    if (!f)
        runas_fail("%s: %s", path, strerror(errno));
    for (int n = 1; fgets(line, sizeof(line), f); n++) {
        char key[64], val[64], *end;
        const char *text = line + strspn(line, " \t\n");
        int len = 0;
        long v;

        if (!*text || *text == '#')
            continue;
        if (sscanf(text, "%63[a-z_] = %63s %n", key, val, &len) != 2 ||
            text[len])
            runas_fail("%s:%d: expected KEY = VALUE (min_uid, "
                       "allow_root_jobs)", path, n);
        if (!strcmp(key, "min_uid")) {
            errno = 0;
            v = strtol(val, &end, 10);
            if (*end || errno || v < 0)
                runas_fail("%s:%d: min_uid must be a uid, not '%s'", path, n,
                           val);
            p->min_uid = v;
        } else if (!strcmp(key, "allow_root_jobs")) {
            /* the words loom.conf takes for its allow_root_jobs */
            if ((p->allow_root = yes_no(val)) < 0)
                runas_fail("%s:%d: allow_root_jobs must be yes or no, not "
                           "'%s'", path, n, val);
        } else {
            runas_fail("%s:%d: unknown key '%s' (known: min_uid, "
                       "allow_root_jobs)", path, n, key);
        }
    }
    fclose(f);
}

/* The caller must be loomd's account or root. */
static void check_caller(void)
{
    struct passwd *pw = getpwnam(LOOM_SERVICE_USER);
    uid_t uid = getuid();

    if (uid == 0)
        return;
    if (!pw || pw->pw_uid != uid)
        runas_fail("only %s (loomd's account) may run loom-runas, not uid %u",
             LOOM_SERVICE_USER, (unsigned)uid);
}

/* The target account, checked against the policy; a copy. */
static struct passwd target(const char *account)
{
    static char name[256], dir[PATH_MAX], shell[PATH_MAX];
    struct policy pol;
    struct passwd *pw, out;

    policy_read(&pol);
    errno = 0;
    pw = getpwnam(account);
    if (!pw)
        runas_fail("no account named '%s'", account);
    if (pw->pw_uid == 0 && !pol.allow_root)
        runas_fail("account %s is root: root may not run jobs (allow_root_jobs "
             "is not set in %s/loom/runas.conf)", account, LOOM_SYSCONFDIR);
    if (pw->pw_uid != 0 && pw->pw_uid == getuid())
        runas_fail("account %s is loomd's own: jobs may not run as it",
             account);
    if (pw->pw_uid != 0 && (long)pw->pw_uid < pol.min_uid)
        runas_fail("account %s has uid %u, below min_uid %ld: system accounts "
             "may not run jobs", account, (unsigned)pw->pw_uid,
             pol.min_uid);
    snprintf(name, sizeof(name), "%s", pw->pw_name);
    snprintf(dir, sizeof(dir), "%s", pw->pw_dir ? pw->pw_dir : "/");
    snprintf(shell, sizeof(shell), "%s",
             pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
    out = *pw;
    out.pw_name = name;
    out.pw_dir = dir;
    out.pw_shell = shell;
    return out;
}

/* Become the account for good. */
static void become(const struct passwd *pw)
{
    if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
        setuid(pw->pw_uid) < 0)
        runas_fail("cannot become %s: %s", pw->pw_name, strerror(errno));
    if (pw->pw_uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
        runas_fail("still root after becoming %s", pw->pw_name);
}

static void set_user_env(const struct passwd *pw)
{
    if (setenv("HOME", pw->pw_dir, 1) < 0 ||
        setenv("USER", pw->pw_name, 1) < 0 ||
        setenv("LOGNAME", pw->pw_name, 1) < 0 ||
        setenv("SHELL", pw->pw_shell, 1) < 0)
        runas_fail("out of memory");
}

/* ---- verbs -------------------------------------------------------------- */

static int verb_start(int argc, char **argv)
{
    char exe[PATH_MAX], sup[PATH_MAX + 32], pid[32];
    struct passwd pw;
    struct stat st, pst;
    ssize_t n;
    char *slash;
    int dir, parent;

    runas_ready_fd = 3;
    if (argc < 4)
        usage();
    pw = target(argv[2]);
    /* The run directory: empty, the caller's, in a directory of the
     * caller's that nobody else may write. */
    dir = runas_open_nofollow(argv[3], O_RDONLY | O_DIRECTORY);
    if (dir < 0)
        runas_fail("run directory %s: %s", argv[3], strerror(errno));
    parent = openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fstat(dir, &st) < 0 || parent < 0 || fstat(parent, &pst) < 0 ||
        st.st_uid != getuid() || pst.st_uid != getuid() ||
        (pst.st_mode & 022))
        runas_fail("run directory %s: it and its parent must be owned by uid %u "
             "and its parent written by nobody else", argv[3],
             (unsigned)getuid());
    if (st.st_nlink != 2)
        runas_fail("run directory %s is not empty", argv[3]);
    if (fchown(dir, pw.pw_uid, getgid()) < 0 || fchmod(dir, 02750) < 0)
        runas_fail("run directory %s: %s", argv[3], strerror(errno));
    close(parent);
    /* open across exec: the copy that dup2 makes, or dir itself */
    if (dup2(dir, LOOM_RUNAS_RUN_FD) < 0 ||
        fcntl(LOOM_RUNAS_RUN_FD, F_SETFD, 0) < 0)
        runas_fail("run directory %s: %s", argv[3], strerror(errno));
    if (dir != LOOM_RUNAS_RUN_FD)
        close(dir);
    /* Into the job's cgroups, while still root. */
    snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    for (int i = 4; i < argc; i++) {
        int cg = runas_open_cgroup(argv[i]);
        int w = openat(cg, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        if (w < 0 || write(w, pid, strlen(pid)) != (ssize_t)strlen(pid))
            runas_fail("join cgroup %s: %s", argv[i], strerror(errno));
        close(w);
        close(cg);
    }
    /* loom-supervise beside us, as root installed it. */
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        runas_fail("cannot find my own directory: %s", strerror(errno));
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    *slash = '\0';
    snprintf(sup, sizeof(sup), "%s/loom-supervise", exe);
    if (stat(sup, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022) ||
        stat(exe, &pst) < 0 || pst.st_uid != 0 || (pst.st_mode & 022))
        runas_fail("%s and its directory must be owned by root and written by "
             "nobody else", sup);
    become(&pw);
    set_user_env(&pw);
    execl(sup, "loom-supervise", "--run", argv[3], (char *)NULL);
    runas_fail("exec %s: %s", sup, strerror(errno));
}

/* A number of seconds for alarm(): 1 to a day. */
static unsigned seconds(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);

    if (*end || end == text || v < 1 || v > 86400)
        runas_fail("-t: expected seconds from 1 to 86400, not '%s'", text);
    return (unsigned)v;
}

static int verb_run(int argc, char **argv)
{
    const char *cwd = NULL;
    unsigned timeout = 0;
    struct passwd pw;
    int i = 3;

    if (argc < 5)
        usage();
    pw = target(argv[2]);
    while (i + 1 < argc && (!strcmp(argv[i], "-C") || !strcmp(argv[i], "-t"))) {
        if (argv[i][1] == 'C')
            cwd = argv[i + 1];
        else
            timeout = seconds(argv[i + 1]);
        i += 2;
    }
    if (i >= argc || strcmp(argv[i], "--") || i + 1 >= argc)
        usage();
    become(&pw);
    /* The timer outlives exec; SIGALRM's default action (main() restored
     * it) ends the program. */
    alarm(timeout);
    set_user_env(&pw);
    if (chdir(cwd ? cwd : pw.pw_dir) < 0 && (cwd || chdir("/") < 0))
        runas_fail("%s cannot enter %s: %s", pw.pw_name, cwd ? cwd : pw.pw_dir,
             strerror(errno));
    execvp(argv[i + 1], argv + i + 1);
    fprintf(stderr, "loom-runas: %s: %s\n", argv[i + 1], strerror(errno));
    return 127;
}

/* Signal every process in the cgroup but us; the number signalled. */
static int signal_cgroup(const char *procs, int sig)
{
    char line[32];
    FILE *f = fopen(procs, "re");
    int n = 0;

    if (!f)
        runas_fail("%s: %s", procs, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        long p = strtol(line, NULL, 10);
        if (p > 1 && p != (long)getpid() && kill((pid_t)p, sig) == 0)
            n++;
    }
    fclose(f);
    return n;
}

static int verb_signal(int argc, char **argv)
{
    char procs[PATH_MAX + 16];
    struct passwd pw;
    int sig, cg;
    char *end;

    if (argc != 5 && argc != 6)
        usage();
    pw = target(argv[2]);
    sig = (int)strtol(argv[3], &end, 10);
    if (*end || sig < 0 || sig >= NSIG)
        runas_fail("bad signal '%s'", argv[3]);
    if (argc == 6) {
        long pg = strtol(argv[5], &end, 10);
        if (strcmp(argv[4], "-g") || *end || pg <= 1)
            usage();
        become(&pw);
        if (kill(-(pid_t)pg, sig) < 0 && errno != ESRCH)
            runas_fail("signal %d to group %ld: %s", sig, pg, strerror(errno));
        return 0;
    }
    cg = runas_open_cgroup(argv[4]); /* checked while root could still see it */
    close(cg);
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", argv[4]);
    become(&pw);
    /* Processes forked meanwhile are signalled by the next round; a
     * killed one cannot fork any more. */
    for (int round = 0; round < 100; round++)
        if (signal_cgroup(procs, sig) == 0 || sig != SIGKILL)
            break;
    return 0;
}

static int verb_read(int argc, char **argv)
{
    char buf[65536];
    unsigned long long off, max, left;
    struct passwd pw;
    struct stat st;
    char *end;
    int fd;

    if (argc != 6)
        usage();
    pw = target(argv[2]);
    off = strtoull(argv[4], &end, 10);
    if (*end)
        usage();
    max = strtoull(argv[5], &end, 10);
    if (*end)
        usage();
    become(&pw);
    alarm(LOOM_RUNAS_READ_TIMEOUT_S);
    fd = argv[3][0] == '/' ? open(argv[3], O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                           : openat(3, argv[3], O_RDONLY | O_CLOEXEC |
                                                    O_NONBLOCK);
    if (fd < 0)
        runas_fail("%s: %s", argv[3], strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        runas_fail("%s is not a regular file", argv[3]);
    printf("size %lld\n", (long long)st.st_size);
    fflush(stdout);
    if (lseek(fd, (off_t)off, SEEK_SET) < 0)
        return 0;
    for (left = max; left > 0;) {
        ssize_t n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));
        if (n <= 0 || write(1, buf, (size_t)n) != n)
            break;
        left -= (unsigned long long)n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    /* Nothing of loomd's but what the verb is given: start 0-4, read 0-3
     * (the run directory on 3), the others 0-2. */
    runas_close_from(!strcmp(argv[1], "start") ? LOOM_RUNAS_RUN_FD
                     : !strcmp(argv[1], "read") ? 4 : 3);
    check_caller();
    /* run's and read's alarm must end the program, even when the caller
     * ignored SIGALRM (an ignored signal stays ignored across exec). */
    signal(SIGALRM, SIG_DFL);
    if (!strcmp(argv[1], "start"))
        return verb_start(argc, argv);
    if (!strcmp(argv[1], "run"))
        return verb_run(argc, argv);
    if (!strcmp(argv[1], "signal"))
        return verb_signal(argc, argv);
    if (!strcmp(argv[1], "read"))
        return verb_read(argc, argv);
    if (!strcmp(argv[1], "cgroups") && argc == 2)
        return runas_cgroups();
    usage();
}
