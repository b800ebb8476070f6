/* template.c - job templates: allocation, the attributes with the check of
 * each value, and the lists of attribute names. */
/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "grid/drmaa/template.h"

/* Check value for an attribute; 0, or -1 with e. */
typedef int (*check_f)(const char *name, const char *value,
                       struct dr_error *e);

static int check_any(const char *name, const char *value, struct dr_error *e)
{
    return 0;
}

/* What Loom's job request has no field for: any value is refused, so that
 * nothing set is silently dropped. */
static int check_none(const char *name, const char *value, struct dr_error *e)
{
    static const struct {
        const char *name, *why;
    } whys[] = {
        { DRMAA_INPUT_PATH, "Loom's job request has no standard input: "
                            "a job's standard input is not redirected" },
        { DRMAA_START_TIME, "a job starts when the scheduler places it" },
        { DRMAA_JOB_CATEGORY, "Loom has no job categories; use "
                              "drmaa_native_specification" },
        { DRMAA_V_EMAIL, "Loom sends no mail" },
    };
    const char *why = "";

    if (!*value)
        return 0; /* "" unsets */
    for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
        if (!strcmp(whys[i].name, name))
            why = whys[i].why;
    return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                        "%s cannot be honoured (%s)", name, why);
}

static int check_js_state(const char *name, const char *value,
                          struct dr_error *e)
{
    if (!strcmp(value, DRMAA_SUBMISSION_STATE_ACTIVE))
        return 0;
    if (!strcmp(value, DRMAA_SUBMISSION_STATE_HOLD))
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                            "%s '%s' cannot be honoured: Loom's job request "
                            "cannot submit a job held (hold it afterwards "
                            "with drmaa_control)", name, value);
    return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                        "%s must be '%s' or '%s', not '%s'", name,
                        DRMAA_SUBMISSION_STATE_ACTIVE,
                        DRMAA_SUBMISSION_STATE_HOLD, value);
}

/* Loom sends no mail, so blocking it or not changes nothing. */
static int check_block_email(const char *name, const char *value,
                             struct dr_error *e)
{
    if (strcmp(value, "0") && strcmp(value, "1"))
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                            "%s must be 0 or 1, not '%s'", name, value);
    return 0;
}

/* y: output and errors in one file (Loom's default); n: the library asks
 * for the errors in a file of their own (dr_template_request). */
static int check_join_files(const char *name, const char *value,
                            struct dr_error *e)
{
    if (!strcmp(value, "n") || !strcmp(value, "y"))
        return 0;
    return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                        "%s must be 'y' or 'n', not '%s'", name, value);
}

int dr_time_parse(const char *s, long long *seconds)
{
    long long total = 0, part;
    int parts = 0, digits;

    do {
        part = 0;
        for (digits = 0; isdigit((unsigned char)*s); s++, digits++) {
            if (digits == 10)
                return -1;
            part = part * 10 + (*s - '0');
        }
        if (!digits || ++parts > 3)
            return -1;
        total = total * 60 + part;
    } while (*s == ':' && *++s);
    if (*s || total > 1000000000LL)
        return -1;
    *seconds = total;
    return 0;
}

static int check_time(const char *name, const char *value, struct dr_error *e)
{
    long long s;

    if (dr_time_parse(value, &s) < 0)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                            "%s must be seconds or [[H:]M:]S, not '%s'",
                            name, value);
    if (s == 0)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                            "%s must be at least 1 second", name);
    return 0;
}

static int check_native(const char *name, const char *value,
                        struct dr_error *e)
{
    json_t *body = json_object();
    int rc;

    if (!body)
        return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    rc = dr_native_apply(value, body, e);
    json_decref(body);
    return rc;
}

static const struct {
    const char *name;
    check_f check;
} scalars[DR_N_SCALAR] = {
    [DR_REMOTE_COMMAND] = { DRMAA_REMOTE_COMMAND, check_any },
    [DR_JS_STATE] = { DRMAA_JS_STATE, check_js_state },
    [DR_WD] = { DRMAA_WD, dr_wd_check },
    [DR_JOB_CATEGORY] = { DRMAA_JOB_CATEGORY, check_none },
    [DR_NATIVE_SPECIFICATION] = { DRMAA_NATIVE_SPECIFICATION, check_native },
    [DR_BLOCK_EMAIL] = { DRMAA_BLOCK_EMAIL, check_block_email },
    [DR_START_TIME] = { DRMAA_START_TIME, check_none },
    [DR_JOB_NAME] = { DRMAA_JOB_NAME, check_any },
    [DR_INPUT_PATH] = { DRMAA_INPUT_PATH, check_none },
    [DR_OUTPUT_PATH] = { DRMAA_OUTPUT_PATH, dr_iopath_check },
    [DR_ERROR_PATH] = { DRMAA_ERROR_PATH, dr_iopath_check },
    [DR_JOIN_FILES] = { DRMAA_JOIN_FILES, check_join_files },
    [DR_WCT_HLIMIT] = { DRMAA_WCT_HLIMIT, check_time },
};

static const char *const vectors[DR_N_VECTOR] = {
    [DR_V_ARGV] = DRMAA_V_ARGV,
    [DR_V_ENV] = DRMAA_V_ENV,
    [DR_V_EMAIL] = DRMAA_V_EMAIL,
};

/* Optional attributes of the standard that Loom has nothing for. */
static const char *const unsupported[] = {
    DRMAA_TRANSFER_FILES, DRMAA_DEADLINE_TIME, DRMAA_WCT_SLIMIT,
    DRMAA_DURATION_HLIMIT, DRMAA_DURATION_SLIMIT,
};

static int scalar_index(const char *name)
{
    for (int i = 0; i < DR_N_SCALAR; i++)
        if (!strcmp(scalars[i].name, name))
            return i;
    return -1;
}

static int vector_index(const char *name)
{
    for (int i = 0; i < DR_N_VECTOR; i++)
        if (!strcmp(vectors[i], name))
            return i;
    return -1;
}

/* Why name is not a scalar attribute (or not a vector one: vector set). */
static int bad_name(const char *name, int vector, struct dr_error *e)
{
    for (size_t i = 0; i < sizeof(unsupported) / sizeof(*unsupported); i++)
        if (!strcmp(unsupported[i], name))
            return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                                "%s is not supported: Loom has nothing to "
                                "honour it with", name);
    if (vector && scalar_index(name) >= 0)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ARGUMENT,
                            "%s is a scalar attribute: use "
                            "drmaa_set_attribute", name);
    if (!vector && vector_index(name) >= 0)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ARGUMENT,
                            "%s is a vector attribute: use "
                            "drmaa_set_vector_attribute", name);
    return dr_error_set(e, DRMAA_ERRNO_INVALID_ARGUMENT,
                        "unknown attribute '%.100s' (drmaa_get_attribute_"
                        "names and drmaa_get_vector_attribute_names list "
                        "them)", name);
}

/* Templates ---------------------------------------------------------------- */

int drmaa_allocate_job_template(drmaa_job_template_t **jt,
                                char *error_diagnosis, size_t error_diag_len)
{
    struct dr_error e = { 0 };

    if (!jt) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_allocate_job_template needs jt");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    if (!dr_session_active()) {
        dr_error_set(&e, DRMAA_ERRNO_NO_ACTIVE_SESSION,
                     "no active session: call drmaa_init first");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    *jt = calloc(1, sizeof(**jt));
    if (!*jt)
        dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

int drmaa_delete_job_template(drmaa_job_template_t *jt, char *error_diagnosis,
                              size_t error_diag_len)
{
    struct dr_error e = { 0 };

    if (!jt) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_delete_job_template needs jt");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    for (int i = 0; i < DR_N_SCALAR; i++)
        free(jt->scalar[i]);
    for (int i = 0; i < DR_N_VECTOR; i++)
        dr_strv_fini(&jt->vector[i]);
    free(jt);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_set_attribute(drmaa_job_template_t *jt, const char *name,
                        const char *value, char *error_diagnosis,
                        size_t error_diag_len)
{
    struct dr_error e = { 0 };
    char *copy = NULL;
    int i;

    if (!jt || !name || !value) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_set_attribute needs jt, name and value");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    i = scalar_index(name);
    if (i < 0)
        bad_name(name, 0, &e);
    else if (scalars[i].check(name, value, &e) == 0 && *value &&
             !(copy = strdup(value)))
        dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    if (e.code == DRMAA_ERRNO_SUCCESS) {
        free(jt->scalar[i]);
        jt->scalar[i] = copy; /* NULL for "": unset */
    }
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

int drmaa_get_attribute(drmaa_job_template_t *jt, const char *name,
                        char *value, size_t value_len, char *error_diagnosis,
                        size_t error_diag_len)
{
    struct dr_error e = { 0 };
    int i;

    if (!jt || !name || !value || !value_len) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_get_attribute needs jt, name and a buffer");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    i = scalar_index(name);
    if (i < 0)
        bad_name(name, 0, &e);
    else
        dr_copy(value, value_len, jt->scalar[i] ? jt->scalar[i] : "");
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

/* An environment entry: NAME=value, NAME as Loom takes it. */
static int env_check(const char *kv, const struct dr_strv *seen,
                     struct dr_error *e)
{
    const char *eq = strchr(kv, '=');
    size_t n = eq ? (size_t)(eq - kv) : 0;

    if (!n || isdigit((unsigned char)kv[0]))
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                            "%s: '%.100s' is not NAME=value", DRMAA_V_ENV,
                            kv);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)kv[i]) && kv[i] != '_')
            return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                                "%s: '%.*s' is not a variable name "
                                "([A-Za-z_][A-Za-z0-9_]*)", DRMAA_V_ENV,
                                (int)(n > 100 ? 100 : n), kv);
    for (size_t i = 0; i < seen->n; i++)
        if (!strncmp(seen->v[i], kv, n + 1))
            return dr_error_set(e, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
                                "%s sets %.*s twice", DRMAA_V_ENV,
                                (int)(n > 100 ? 100 : n), kv);
    return 0;
}

int drmaa_set_vector_attribute(drmaa_job_template_t *jt, const char *name,
                               const char *value[], char *error_diagnosis,
                               size_t error_diag_len)
{
    struct dr_error e = { 0 };
    struct dr_strv v = { 0 };
    int i;

    if (!jt || !name || !value) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_set_vector_attribute needs jt, name and value");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    i = vector_index(name);
    if (i < 0) {
        bad_name(name, 1, &e);
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    for (size_t k = 0; value[k] && e.code == DRMAA_ERRNO_SUCCESS; k++) {
        if (i == DR_V_EMAIL)
            check_none(name, value[k], &e);
        else if (i == DR_V_ENV)
            env_check(value[k], &v, &e);
        if (e.code == DRMAA_ERRNO_SUCCESS && dr_strv_push(&v, value[k]) < 0)
            dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    }
    if (e.code != DRMAA_ERRNO_SUCCESS) {
        dr_strv_fini(&v);
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    dr_strv_fini(&jt->vector[i]);
    jt->vector[i] = v;
    return DRMAA_ERRNO_SUCCESS;
}

/* A new values vector with a copy of v (or NULL when out of memory). */
static drmaa_attr_values_t *values_of(const struct dr_strv *v)
{
    drmaa_attr_values_t *out = dr_values_new();

    for (size_t i = 0; out && i < v->n; i++)
        if (dr_strv_push(dr_values_strv(out), v->v[i]) < 0) {
            drmaa_release_attr_values(out);
            out = NULL;
        }
    return out;
}

int drmaa_get_vector_attribute(drmaa_job_template_t *jt, const char *name,
                               drmaa_attr_values_t **values,
                               char *error_diagnosis, size_t error_diag_len)
{
    struct dr_error e = { 0 };
    int i;

    if (!jt || !name || !values) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_get_vector_attribute needs jt, name and values");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    i = vector_index(name);
    if (i < 0)
        bad_name(name, 1, &e);
    else if (!(*values = values_of(&jt->vector[i])))
        dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

/* The lists of names ------------------------------------------------------- */

static int names(drmaa_attr_names_t **values, const char *const *list,
                 size_t n, struct dr_error *e)
{
    drmaa_attr_names_t *out = dr_names_new();

    *values = NULL;
    for (size_t i = 0; out && i < n; i++)
        if (dr_strv_push(dr_names_strv(out), list[i]) < 0) {
            drmaa_release_attr_names(out);
            out = NULL;
        }
    if (!out)
        return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    *values = out;
    return 0;
}

int drmaa_get_attribute_names(drmaa_attr_names_t **values,
                              char *error_diagnosis, size_t error_diag_len)
{
    struct dr_error e = { 0 };
    const char *list[DR_N_SCALAR];

    for (int i = 0; i < DR_N_SCALAR; i++)
        list[i] = scalars[i].name;
    if (!values)
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_get_attribute_names needs values");
    else
        names(values, list, DR_N_SCALAR, &e);
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

int drmaa_get_vector_attribute_names(drmaa_attr_names_t **values,
                                     char *error_diagnosis,
                                     size_t error_diag_len)
{
    struct dr_error e = { 0 };

    if (!values)
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_get_vector_attribute_names needs values");
    else
        names(values, vectors, DR_N_VECTOR, &e);
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}
