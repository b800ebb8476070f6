/* directives.h - the #SBATCH, #$ and #PBS lines of a job script: read
 * into the job's request, and neutralised in the copy a cluster system
 * gets. The systems' tables and what each directive becomes:
 * docs/directives.md. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_DIRECTIVES_H
#define LOOM_CORE_DIRECTIVES_H

#include <jansson.h>

#include "core/error.h"

/* [loomd] directives: what a directive Loom cannot apply does to a submit. */
enum directives_mode {
    DIRECTIVES_STRICT, /* it is refused with a 400 */
    DIRECTIVES_WARN,   /* it is ignored, with a warning in the answer */
};

/* Read the directives of the script in body (a POST /v1/jobs body,
 * borrowed, changed in place): the lines of one system (#SBATCH, #$ or
 * #PBS) before the script's first command. Each request field the body
 * does not give itself (absent or null) is set from them; what the body
 * gives wins. A body without a script string is left alone.
 *
 * *record gets a new JSON array (NULL when the script has no directive):
 * one object per directive, {"line", "directive", "fields"} with the
 * fields it set, and "ignored" (why not) when it set none. *warnings
 * gets a new array of strings, or NULL when there are none.
 *
 * A request without workdir and without directives that set it works in
 * its submit_dir, unless the script's directives are Grid Engine's
 * (whose jobs work in the home directory without -cwd or -wd).
 *
 * A directive Loom cannot apply (an option it does not know or has no
 * request field for, a bad value, a directive of a second system) fails
 * with a 400 on field "script": "line 3: #SBATCH --mail-type=END: not
 * supported by Loom". In DIRECTIVES_WARN mode it is ignored instead and
 * the same text is a warning. Out of memory: -1, LOOM_EINTERNAL. On
 * failure body may have been changed. Any thread. */
int directives_apply(json_t *body, enum directives_mode mode,
                     json_t **record, json_t **warnings,
                     struct loom_error *err);

/* Do the script's directives pass the submitter's environment (Slurm's
 * --export=ALL or a NAME without its value, Grid Engine's and PBS's -V,
 * -v NAME), which a request carries as submit_env? 1 or 0 (also when the
 * directives are refused). For a client. Any thread. */
int directives_want_env(const char *script);

/* The script a cluster system gets: each directive line Loom read (the
 * lines before the first command that begin #SBATCH, #$ or #PBS) begins
 * with #LOOM- instead (#LOOM-SBATCH, #LOOM-$, #LOOM-PBS), so that sbatch
 * or qsub does not apply it a second time. A new string, or NULL when out
 * of memory. Any thread. */
char *directives_neutralise(const char *script);

/* The directive lines of script (as directives_neutralise finds them)
 * left out: a new string, or NULL when out of memory. For a script
 * written out again with other directives (loomctl export). */
char *directives_strip(const char *script);

/* The mode of [loomd] directives, set at start-up and on reload; read by
 * the API. Any thread. */
void directives_mode_set(enum directives_mode mode);
enum directives_mode directives_mode(void);
/* "strict" or "warn" into *mode: 0, or -1 for anything else. */
int directives_mode_parse(const char *text, enum directives_mode *mode);

#endif
