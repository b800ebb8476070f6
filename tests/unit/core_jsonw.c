/* core_jsonw.c - the streaming JSON writer: nesting, commas, escapes,
 * bytes that are not UTF-8, and text kept in an allocation of its size. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "tests/lib/tap.h"

static char *one_string(const char *s)
{
    struct jw w;

    jw_init(&w);
    jw_str(&w, s);
    return jw_finish(&w);
}

static void t_nesting(void)
{
    struct jw w;
    char *text;

    jw_init(&w);
    jw_open(&w, '{');
    jw_key(&w, "a");
    jw_int(&w, -3);
    jw_key(&w, "list");
    jw_open(&w, '[');
    jw_str(&w, "x");
    jw_null(&w);
    jw_open(&w, '{');
    jw_close(&w, '}');
    jw_bool(&w, 1);
    jw_close(&w, ']');
    jw_key(&w, "empty");
    jw_open(&w, '[');
    jw_close(&w, ']');
    jw_key(&w, "s");
    jw_str(&w, NULL);
    jw_close(&w, '}');
    text = jw_finish(&w);
    is_str(text, "{\"a\":-3,\"list\":[\"x\",null,{},true],\"empty\":[],"
           "\"s\":null}", "objects and arrays nest with commas between");
    free(text);
}

static void t_escapes(void)
{
    char *text = one_string("q\"b\\n\nt\tc\x01 end");

    is_str(text, "\"q\\\"b\\\\n\\nt\\tc\\u0001 end\"",
           "quotes, backslashes and control characters are escaped");
    free(text);
    text = one_string("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    is_str(text, "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
           "valid UTF-8 passes through");
    free(text);
    text = one_string("a\xff" "b\xc3" "c\xed\xa0\x80" "d");
    is_str(text, "\"a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd"
           "\xef\xbf\xbd" "d\"", "bytes that are not UTF-8 become U+FFFD");
    json_t *o = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    ok(o != NULL, "and the output is valid JSON");
    json_decref(o);
    free(text);
}

static void t_large(void)
{
    struct jw w;
    char *text;
    json_t *o;

    jw_init(&w);
    jw_open(&w, '[');
    for (int i = 0; i < 10000; i++)
        jw_int(&w, i);
    jw_close(&w, ']');
    text = jw_finish(&w);
    o = text ? json_loads(text, 0, NULL) : NULL;
    is_int(o ? (long long)json_array_size(o) : -1, 10000,
           "a long document grows its buffer and stays whole");
    json_decref(o);
    free(text);
}

/* 120 x "12345," in an array: 720 bytes, past the first 512 of the
 * buffer. */
static void write_720(struct jw *w)
{
    jw_init(w);
    jw_open(w, '[');
    for (int i = 0; i < 120; i++)
        jw_int(w, 12345);
    jw_close(w, ']');
}

/* A text kept long (a job's view) takes the room of its length, not of
 * the buffer that doubled to hold it. */
static void t_fit(void)
{
    struct jw w;
    char *text, *fit;

    write_720(&w);
    text = jw_finish(&w);
    write_720(&w);
    fit = jw_finish_fit(&w);
    is_str(fit, text, "jw_finish_fit: the same text as jw_finish");
    ok(malloc_usable_size(text) >= 1024,
       "jw_finish: the buffer doubled past 720 bytes (%zu)",
       malloc_usable_size(text));
    ok(malloc_usable_size(fit) < 800,
       "jw_finish_fit: the text takes about its length (%zu for %zu bytes)",
       malloc_usable_size(fit), strlen(fit) + 1);
    free(text);
    free(fit);
}

/* Bytes as a job writes them: NUL, a cut character, a stray byte. */
static void t_bytes(void)
{
    static const char e_acute[] = "a\xc3\xa9";    /* a, then é whole */
    static const char cut2[] = "ab\xc3";           /* é cut after 1 of 2 */
    static const char cut3[] = "a\xe2\x82";       /* € cut after 2 of 3 */
    static const char bad[] = "a\xff";             /* never UTF-8 */
    static const char cont[] = "a\x80";            /* a stray continuation */
    struct jw w;
    char *text;

    jw_init(&w);
    jw_strn(&w, "a\0b\xff" "c\xc3\xa9", 7);
    text = jw_finish(&w);
    is_str(text, "\"a\\u0000b\xef\xbf\xbd" "c\xc3\xa9\"",
           "jw_strn: NUL as \\u0000, a stray byte as U+FFFD, UTF-8 as it is");
    free(text);
    jw_init(&w);
    jw_strn(&w, cut2, 3);
    text = jw_finish(&w);
    is_str(text, "\"ab\xef\xbf\xbd\"", "jw_strn: a character cut at the end is "
           "U+FFFD");
    free(text);
    is_int(jw_utf8_whole(e_acute, 3), 3, "utf8_whole: a whole text stays");
    is_int(jw_utf8_whole(cut2, 3), 2, "utf8_whole: a 2-byte character cut "
           "after its first byte is left out");
    is_int(jw_utf8_whole(cut3, 3), 1, "utf8_whole: a 3-byte one cut after two");
    is_int(jw_utf8_whole(bad, 2), 2, "utf8_whole: a byte that cannot begin "
           "a character is not held back");
    is_int(jw_utf8_whole(cont, 2), 2, "utf8_whole: nor a stray continuation");
    is_int(jw_utf8_whole("", 0), 0, "utf8_whole: nothing");
}

int main(void)
{
    t_nesting();
    t_escapes();
    t_large();
    t_fit();
    t_bytes();
    return done_testing();
}
