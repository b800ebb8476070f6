/* fuzz_conf.c - loom.conf (core/conf.c) and what reads its sections:
 * [loomd] with the TLS keys (core/settings.c, core/tls.c), [scheduler] and
 * [limits] (scheduler/sched_conf.c), [maintenance], [action], [rule]
 * (maintenance/maint_conf.c). */
/* SPDX-License-Identifier: MIT */
#include "core/conf.h"
#include "core/settings.h"
#include "maintenance/maint_conf.h"
#include "scheduler/sched_conf.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_string(data, size);
    struct loom_error err;
    struct settings set;
    struct sched_conf *sc = calloc(1, sizeof(*sc));
    struct maint_conf mc = {0};
    struct conf *c;

    fuzz_quiet();
    if (!sc)
        abort();
    c = conf_parse("<fuzz>", text, &err);
    /* as loomd's reload: what failed half-way is freed by the caller */
    if (c && settings_read(c, &set, &err) == 0 &&
        sched_conf_read(c, sc, &err) == 0)
        maint_conf_read(c, set.listen, &mc, &err);
    maint_conf_fini(&mc);
    if (c)
        settings_fini(&set);
    conf_destroy(c);
    free(sc);
    free(text);
    return 0;
}
