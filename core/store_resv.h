/* store_resv.h - reservations in PostgreSQL: upsert within a turn's
 * transaction, load at start-up. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STORE_RESV_H
#define LOOM_CORE_STORE_RESV_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/store.h"

struct store_resv_row {
    int64_t id;
    const char *state;
    const char *doc; /* the reservation as JSON text; NULL: read light */
    int maint;       /* read light: a maintenance window (its purpose) */
};

/* Write n rows whole (insert or replace), inside the caller's transaction.
 * 0, or -1 with err. n == 0 does nothing. */
int store_resv_upsert(struct store *st, const struct store_resv_row *rows,
                      size_t n, struct loom_error *err);

/* Call cb for every reservation in id order (row valid during the call);
 * cb returns 0 to go on. With light_upto (time_format_before), one that
 * would leave memory at the first look comes light: without its document,
 * with its state and whether it is a maintenance window, all that stays of
 * it (see store_resv.c). 0, or -1 with err. */
int store_resv_load(struct store *st, const char *light_upto,
                    int (*cb)(void *arg, const struct store_resv_row *row),
                    void *arg, struct loom_error *err);
/* The highest maintenance request a reservation serves (its document's
 * "maintenance"), into *max (0: none). 0, or -1 with err. */
int store_resv_maint_max(struct store *st, int64_t *max,
                         struct loom_error *err);

/* Reservation id's state and document (new strings): 1, 0 when there is
 * none, or -1 with err. */
int store_resv_doc(struct store *st, int64_t id, char **state, char **doc,
                   struct loom_error *err);
/* The ended reservations (done, cancelled) with ids up to upto but those
 * in but (a PostgreSQL array, "{1,2}") whose documents hold match's
 * members (a JSON object; NULL: all): cb(id, doc) in id order; cb
 * returns 0 to go on, -1 (out of memory) to stop. 0 or -1 with err. */
int store_resv_ended(struct store *st, const char *but, int64_t upto,
                     const char *match, store_row_cb cb, void *arg,
                     struct loom_error *err);

#endif
