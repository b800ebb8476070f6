/* service_account.h - loomd's own account: becoming it at start-up. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_SERVICE_ACCOUNT_H
#define LOOM_CORE_SERVICE_ACCOUNT_H

#include "core/error.h"

/* Run as the account `user` ([loomd] user) from now on. Started as root
 * with a user other than "root": initgroups, setgid and setuid to it, then
 * checks that root cannot be regained (-1 when it can); HOME, USER and
 * LOGNAME are set to the account's. Started as root with user "root", or
 * as any other account: nothing changes. -1 with err naming the account
 * when it does not exist or cannot be become. Call it once, in the main
 * thread, before any other thread runs and before anything is opened. */
int service_account_become(const char *user, struct loom_error *err);

/* Log, once the log is where it stays, as whom loomd runs: a warning when
 * it is root, or not the account `user` names. */
void service_account_report(const char *user);

#endif
