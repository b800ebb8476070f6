/* notify.h - telling the service manager how loomd is: the readiness
 * protocol of systemd (sd_notify) without libsystemd. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_NOTIFY_H
#define LOOM_CORE_NOTIFY_H

/* Take $NOTIFY_SOCKET (an absolute path, or "@name" for an abstract
 * socket) and remove it from the environment, so that no job or script
 * inherits it. Without it, notify_send does nothing. Main thread, before
 * any other thread starts. */
void notify_init(void);
/* Send one datagram of NAME=VALUE lines ("READY=1\nSTATUS=serving"), as
 * the manager reads them: READY=1, RELOADING=1 (with MONOTONIC_USEC=),
 * STOPPING=1, STATUS=text. Any thread; a failure is logged at debug
 * level and ignored (the manager sees it as a missing notice). */
void notify_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Put $NOTIFY_SOCKET back, for loomd executing itself again (the same
 * process, which the manager still watches). */
void notify_env_restore(void);
/* "RELOADING=1\nMONOTONIC_USEC=<now>": a reload begins. */
void notify_reloading(void);

#endif
