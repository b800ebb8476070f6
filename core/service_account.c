/* service_account.c - loomd's own account: becoming it at start-up. */
/* SPDX-License-Identifier: MIT */
#include "core/service_account.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/log.h"

/* Every uid (real, effective, saved) is uid, every gid gid, and neither
 * setuid(0) nor seteuid(0) works. */
static int dropped_for_good(uid_t uid, gid_t gid)
{
    uid_t r, e, s;
    gid_t rg, eg, sg;

    if (getresuid(&r, &e, &s) < 0 || getresgid(&rg, &eg, &sg) < 0)
        return 0;
    if (r != uid || e != uid || s != uid || rg != gid || eg != gid ||
        sg != gid)
        return 0;
    return setuid(0) < 0 && seteuid(0) < 0;
}

int service_account_become(const char *user, struct loom_error *err)
{
    struct passwd *pw;

    if (geteuid() != 0 || strcmp(user, "root") == 0)
        return 0;
    errno = 0;
    pw = getpwnam(user);
    if (!pw)
        return loom_error_set(err, LOOM_EINVAL,
                              "[loomd] user: there is no account '%s' to run "
                              "as%s%s (create it: useradd --system "
                              "--user-group --no-create-home --shell "
                              "/usr/sbin/nologin %s)",
                              user, errno ? ": " : "",
                              errno ? strerror(errno) : "", user);
    if (pw->pw_uid == 0)
        return loom_error_set(err, LOOM_EINVAL, "[loomd] user: account '%s' "
                              "has uid 0; name an unprivileged account, or "
                              "root itself", user);
    if (initgroups(pw->pw_name, pw->pw_gid) < 0 ||
        setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
        return loom_error_set(err, LOOM_EINVAL, "cannot become %s (uid %u, "
                              "gid %u): %s", user, (unsigned)pw->pw_uid,
                              (unsigned)pw->pw_gid, strerror(errno));
    if (!dropped_for_good(pw->pw_uid, pw->pw_gid))
        return loom_error_set(err, LOOM_EINVAL, "became %s but could regain "
                              "root; refusing to run", user);
    if (setenv("HOME", pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/", 1) < 0 ||
        setenv("USER", pw->pw_name, 1) < 0 ||
        setenv("LOGNAME", pw->pw_name, 1) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    /* Changing uids made the process undumpable: no core file, and
     * LeakSanitizer cannot inspect it at exit. It holds nothing its own
     * account may not read from disk (the key, the database connection),
     * and only that account may inspect it. */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return 0;
}

void service_account_report(const char *user)
{
    struct passwd *pw = getpwuid(geteuid());
    const char *name = pw ? pw->pw_name : "?";

    if (geteuid() == 0)
        log_warn("running as root ([loomd] user = %s): a flaw in loomd, "
                 "in a script pack or in a maintenance action has the whole "
                 "machine", user);
    else if (strcmp(name, user) != 0)
        log_warn("running as %s (uid %u), not as [loomd] user = %s: started "
                 "by that account, not by root", name, (unsigned)geteuid(),
                 user);
    else
        log_info("running as %s (uid %u, gid %u)", name, (unsigned)geteuid(),
                 (unsigned)getegid());
}
