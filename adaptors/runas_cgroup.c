/* runas_cgroup.c - loom-runas: paths opened without following links, the
 * job cgroups' directories, and loom.jobs in the caller's cgroups. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "adaptors/runas_priv.h"

#define CGROUP_SUPER_MAGIC 0x27e0eb
#define CGROUP2_SUPER_MAGIC 0x63677270

/* ---- paths, opened without following links ------------------------------ */

/* Open an absolute path one component at a time, never through a symbolic
 * link; the last component with flags. -1 with errno. */
int runas_open_nofollow(const char *path, int flags)
{
    char buf[PATH_MAX], *p, *slash;
    int dir, fd;

    if (path[0] != '/' || strlen(path) >= sizeof(buf)) {
        errno = EINVAL;
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", path);
    dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (p = buf + 1; dir >= 0; p = slash + 1) {
        while (*p == '/')
            p++;
        slash = strchr(p, '/');
        while (slash && slash[1] == '/')
            *slash++ = '\0';
        if (!slash || !slash[1]) {
            if (slash)
                *slash = '\0';
            if (!*p || !strcmp(p, "..")) {
                close(dir);
                errno = EINVAL;
                return -1;
            }
            fd = openat(dir, p, flags | O_NOFOLLOW | O_CLOEXEC);
            close(dir);
            return fd;
        }
        *slash = '\0';
        if (!strcmp(p, "..")) {
            close(dir);
            errno = EINVAL;
            return -1;
        }
        fd = openat(dir, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(dir);
        dir = fd;
    }
    return -1;
}

/* A cgroup directory that the caller owns: an open O_PATH descriptor. */
int runas_open_cgroup(const char *path)
{
    struct statfs sf;
    struct stat st;
    int fd = runas_open_nofollow(path, O_PATH | O_DIRECTORY);

    if (fd < 0)
        runas_fail("cgroup %s: %s", path, strerror(errno));
    if (fstatfs(fd, &sf) < 0 || (sf.f_type != CGROUP_SUPER_MAGIC &&
                                 sf.f_type != CGROUP2_SUPER_MAGIC))
        runas_fail("%s is not a cgroup", path);
    if (fstat(fd, &st) < 0 || st.st_uid != getuid())
        runas_fail("cgroup %s is not owned by uid %u", path, (unsigned)getuid());
    return fd;
}

int runas_write_at(int dir, const char *name, const char *text)
{
    int fd = openat(dir, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* ---- loom.jobs in the caller's cgroups ----------------------------------- */

/* Is every name of the comma-separated list want among the mount options
 * opts? */
static int has_all(const char *opts, const char *want)
{
    for (const char *w = want; *w;) {
        size_t n = strcspn(w, ",");
        const char *o = opts;
        int seen = 0;
        while (!seen && *o) {
            size_t m = strcspn(o, ",");
            seen = m == n && !strncmp(o, w, n);
            o += m + (o[m] == ',');
        }
        if (!seen)
            return 0;
        w += n + (w[n] == ',');
    }
    return 1;
}

/* Does a v1 hierarchy carry a controller Loom uses? */
static int wanted(const char *ctrls)
{
    static const char *const use[] = {"memory", "cpu", "pids", "freezer"};

    for (size_t i = 0; i < sizeof(use) / sizeof(use[0]); i++)
        if (has_all(ctrls, use[i]))
            return 1;
    return 0;
}

/* The mount point of the hierarchy named by a /proc/self/cgroup line's
 * controller list ("" for the unified one), from /proc/self/mountinfo. */
static int hierarchy_mount(const char *ctrls, char *out, size_t len)
{
    char line[4096];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    int found = 0;

    if (!f)
        return -1;
    while (!found && fgets(line, sizeof(line), f)) {
        char mnt[PATH_MAX], fstype[64], opts[1024], *sep;
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
            !(sep = strstr(line, " - ")) ||
            sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) != 2)
            continue;
        if (!*ctrls)
            found = !strcmp(fstype, "cgroup2");
        else if (!strcmp(fstype, "cgroup"))
            found = has_all(opts, ctrls);
        if (found)
            snprintf(out, len, "%s", mnt);
    }
    fclose(f);
    return found ? 0 : -1;
}

/* cgroup v2: hand the controllers Loom uses down to loom.jobs where the
 * caller's cgroup has them. Where the caller's cgroup holds processes the
 * kernel refuses (no internal processes): loomd then runs without them in
 * v2 and says so; under systemd, Delegate=yes avoids it. */
static void enable_v2(int base, int jobs)
{
    static const char *const use[] = {"memory", "cpu", "pids"};
    char have[512] = "";
    int fd = openat(base, "cgroup.controllers", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, have, sizeof(have) - 1) : -1;

    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    have[n] = '\0';
    for (size_t i = 0; i < sizeof(use) / sizeof(use[0]); i++) {
        char plus[32];
        if (!strstr(have, use[i]))
            continue;
        snprintf(plus, sizeof(plus), "+%s", use[i]);
        runas_write_at(base, "cgroup.subtree_control", plus);
        runas_write_at(jobs, "cgroup.subtree_control", plus);
    }
}

int runas_cgroups(void)
{
    char line[4096];
    FILE *f = fopen("/proc/self/cgroup", "re");

    if (!f)
        runas_fail("/proc/self/cgroup: %s", strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        char ctrls[256], path[PATH_MAX], mnt[PATH_MAX], dir[PATH_MAX * 2 + 16];
        int base, fd;
        if (sscanf(line, "%*[0-9]:%255[^:]:%4095s", ctrls, path) != 2) {
            if (sscanf(line, "%*[0-9]::%4095s", path) != 1)
                continue;
            ctrls[0] = '\0';
        }
        if ((*ctrls && !wanted(ctrls)) ||
            hierarchy_mount(ctrls, mnt, sizeof(mnt)) < 0)
            continue;
        snprintf(dir, sizeof(dir), "%s%s", mnt, strcmp(path, "/") ? path
                                                                  : "");
        base = runas_open_nofollow(dir, O_PATH | O_DIRECTORY);
        if (base < 0)
            continue;
        if (mkdirat(base, "loom.jobs", 0755) < 0 && errno != EEXIST)
            runas_fail("mkdir %s/loom.jobs: %s", dir, strerror(errno));
        fd = openat(base, "loom.jobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                           O_CLOEXEC);
        if (fd < 0 || fchown(fd, getuid(), getgid()) < 0)
            runas_fail("%s/loom.jobs: %s", dir, strerror(errno));
        if (!*ctrls) {
            /* The files a delegated v2 cgroup's owner writes. */
            static const char *const own[] = {
                "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"};
            enable_v2(base, fd);
            for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
                if (fchownat(fd, own[i], getuid(), getgid(),
                             AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOENT)
                    runas_fail("%s/loom.jobs/%s: %s", dir, own[i],
                         strerror(errno));
        }
        printf("%s %s/loom.jobs\n", *ctrls ? ctrls : "unified", dir);
        close(fd);
        close(base);
    }
    fclose(f);
    return 0;
}

