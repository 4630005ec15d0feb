/*
 * The C library's tests, in C: every function of bloomwire.h, its checks of pointers and
 * lengths, the spec's vectors (accept and reject, read from their manifests) and frames
 * the program made.
 *
 *     test_capi VECTORS_DIR CASES_FILE [OUT_DIR]
 *
 * CASES_FILE is what tests/cases.py makes of the manifests. With OUT_DIR, frames made
 * here are written there for the program to read. Prints one line per failed
 * check and a closing "N passed, N failed"; exits 1 on any failure.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomwire.h"
#include "sha256.h"

static int passed, failed;

#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (cond) {                                                    \
            passed++;                                                  \
        } else {                                                       \
            failed++;                                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                \
            printf(__VA_ARGS__);                                       \
            printf(" [last error: %s]\n", bw_last_error_message());    \
        }                                                              \
    } while (0)

/* A call that must succeed. */
#define OK(call) CHECK((call) == BW_OK, "%s", #call)
/* A call that must fail with status. */
#define FAILS(status, call)                                                          \
    do {                                                                             \
        bw_status got_ = (call);                                                     \
        CHECK(got_ == (status), "%s gave %s, not %s", #call, bw_status_name(got_), \
              bw_status_name(status));                                               \
    } while (0)

/* ---- helpers ----------------------------------------------------------------------- */

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long size;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (uint8_t *)malloc(size > 0 ? (size_t)size : 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)size;
    return buf;
}

static uint8_t *read_vector(const char *dir, const char *sub, const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    return read_file(path, len);
}

/* Hex digits into bytes; returns the count. */
static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
    size_t n = 0;
    if (strcmp(hex, "-") == 0) return 0;
    while (hex[0] && hex[1] && n < cap) {
        unsigned byte;
        sscanf(hex, "%2x", &byte);
        out[n++] = (uint8_t)byte;
        hex += 2;
    }
    return n;
}

/* The SHA-256 of a filter's export, as hex. */
static void filter_sha(const bw_filter *f, char hex[65]) {
    size_t len = 0;
    uint8_t *buf;
    bw_filter_export(f, NULL, 0, &len);
    buf = (uint8_t *)malloc(len ? len : 1);
    if (bw_filter_export(f, buf, len, &len) != BW_OK) len = 0;
    sha256_hex(buf, len, hex);
    free(buf);
}

static uint64_t ones_of(const bw_filter *f) {
    uint64_t ones = UINT64_MAX;
    bw_filter_count_ones(f, &ones);
    return ones;
}

/* Split a line at tabs in place; returns the field count. */
static int split(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    line[strcspn(line, "\r\n")] = 0;
    while (n < max) {
        fields[n++] = p;
        p = strchr(p, '\t');
        if (!p) break;
        *p++ = 0;
    }
    return n;
}

static const uint8_t KEY[BW_KEY_LEN] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
                                        7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};

/* ---- errors and the boundary's checks ------------------------------------------------ */

static void test_errors(void) {
    bw_error e;
    bw_filter *f = (bw_filter *)&e; /* a non-NULL value the out-parameter must overwrite */
    CHECK(strcmp(bw_status_name(BW_ERR_BAD_MAGIC), "BadMagic") == 0, "status name");
    CHECK(strcmp(bw_status_name(BW_ERR_UNSUPPORTED_CODING), "UnsupportedCoding") == 0,
          "status name");
    CHECK(strcmp(bw_status_name(12345), "Unknown") == 0, "unknown status name");
    CHECK(strlen(bw_version()) > 0, "version");

    /* NULL out-parameters, NULL handles, NULL data with a length. */
    FAILS(BW_ERR_NULL_POINTER, bw_filter_new_bloom(1000, 3, 0, NULL));
    bw_last_error(&e);
    CHECK(e.code == BW_ERR_NULL_POINTER && strstr(e.message, "out") != NULL, "%s", e.message);
    bw_last_error(NULL);
    FAILS(BW_ERR_NULL_POINTER, bw_filter_insert(NULL, "k", 1));
    OK(bw_filter_new_bloom(1000, 3, 0, &f));
    FAILS(BW_ERR_NULL_POINTER, bw_filter_insert(f, NULL, 5));
    OK(bw_filter_insert(f, NULL, 0)); /* the empty key */
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_filter_insert(f, "k", (size_t)-1));
    FAILS(BW_ERR_NULL_POINTER, bw_filter_contains(f, "k", 1, NULL));
    FAILS(BW_ERR_NULL_POINTER, bw_filter_count_ones(NULL, NULL));
    /* A failure sets the handle out-parameter to NULL. */
    {
        bw_filter *g = f;
        FAILS(BW_ERR_INVALID_PARAMETER, bw_filter_new_bloom(0, 3, 0, &g));
        CHECK(g == NULL, "out-parameter NULL on failure");
        bw_last_error(&e);
        CHECK(e.field != NULL && strcmp(e.field, "m") == 0, "field %s", e.field ? e.field : "");
    }
    /* The free functions take NULL. */
    bw_filter_free(NULL);
    bw_limits_free(NULL);
    bw_optimizer_free(NULL);
    bw_plan_free(NULL);
    bw_encoder_free(NULL);
    bw_bytes_free(NULL);
    bw_frame_info_free(NULL);
    bw_sender_free(NULL);
    bw_receiver_free(NULL);
    bw_filter_free(f);
}

/* ---- limits and plans ---------------------------------------------------------------- */

static void test_plans(void) {
    bw_limits *limits = NULL;
    bw_optimizer *o = NULL;
    bw_plan *plan = NULL;
    bw_plan_info info;
    bw_filter *f = NULL;
    bw_error e;
    uint8_t sip[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

    OK(bw_limits_new(&limits));
    OK(bw_limits_set_max_m(limits, 1 << 20));
    OK(bw_limits_set_max_k(limits, 32));
    OK(bw_limits_set_max_payload(limits, 1 << 20));
    OK(bw_limits_set_max_metadata(limits, 64));
    OK(bw_limits_set_max_filter_bytes(limits, 1 << 17));
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_limits_set_max_m(limits, 0));
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_limits_set_max_k(limits, 2000));
    FAILS(BW_ERR_NULL_POINTER, bw_limits_set_max_payload(NULL, 1));

    /* The paper's Table I: 8 bits a key on the wire, 1 000 000 keys. */
    OK(bw_plan_for_budget(NULL, 1000000, 1000000, &plan));
    OK(bw_plan_get(plan, &info));
    CHECK(info.n == 1000000 && info.worst_case_bytes <= 1000000, "budget plan %" PRIu64,
          info.worst_case_bytes);
    CHECK(info.false_positive_rate > 0 && info.false_positive_rate < 0.0216,
          "fpr %g below the uncompressed optimum's", info.false_positive_rate);
    CHECK(info.coding != NULL && strlen(info.coding) > 0, "plan coding");
    OK(bw_filter_new_from_plan(plan, 0, &f));
    {
        bw_filter_info fi;
        OK(bw_filter_get_info(f, &fi));
        CHECK(fi.m == info.m && fi.k_ceil == info.k_ceil && fi.kind == BW_KIND_BLOOM,
              "filter of the plan");
    }
    bw_filter_free(f);
    OK(bw_filter_new_from_plan(plan, 4, &f));
    {
        bw_filter_info fi;
        OK(bw_filter_get_info(f, &fi));
        CHECK(fi.kind == BW_KIND_COUNTING && fi.counter_width == 4, "counting filter of plan");
    }
    bw_filter_free(f);
    bw_plan_free(plan);

    OK(bw_optimizer_new(&o));
    OK(bw_optimizer_set_limits(o, NULL));
    OK(bw_optimizer_set_layout(o, BW_LAYOUT_PARTITIONED));
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_optimizer_set_layout(o, 7));
    OK(bw_optimizer_set_seed(o, 42));
    OK(bw_optimizer_set_siphash_key(o, sip, sizeof sip));
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_optimizer_set_siphash_key(o, sip, 15));
    OK(bw_optimizer_set_k_range(o, 2, 8));
    OK(bw_optimizer_set_max_m(o, 1 << 22));
    OK(bw_optimizer_set_coding(o, "known-p"));
    FAILS(BW_ERR_INVALID_PARAMETER, bw_optimizer_set_coding(o, "no-such-coding"));
    OK(bw_plan_for_rate(o, 10000, 0.01, &plan));
    OK(bw_plan_get(plan, &info));
    CHECK(info.layout == BW_LAYOUT_PARTITIONED && info.false_positive_rate <= 0.01 &&
              info.k >= 2 && info.k <= 8 && info.m <= (1 << 22),
          "rate plan layout %d fpr %g k %g", (int)info.layout, info.false_positive_rate, info.k);
    CHECK(strcmp(info.coding, "known-p") == 0, "coding %s", info.coding);
    bw_plan_free(plan);
    /* A plan over the receiver's limits names the limit. */
    OK(bw_optimizer_set_limits(o, limits));
    plan = (bw_plan *)&e;
    FAILS(BW_ERR_PLAN_EXCEEDS_LIMITS, bw_plan_for_rate(o, 20000000, 1e-9, &plan));
    CHECK(plan == NULL, "no plan");
    bw_last_error(&e);
    CHECK(e.field != NULL && strcmp(e.field, "max_m") == 0 && e.limit == (1 << 20),
          "plan exceeds %s", e.field ? e.field : "(null)");
    bw_optimizer_free(o);
    bw_limits_free(limits);
}

/* ---- filters --------------------------------------------------------------------------- */

static void test_filters(void) {
    bw_filter *a = NULL, *b = NULL, *c = NULL, *copy = NULL;
    bw_filter_info info;
    bool yes = false;
    uint64_t ones = 0;
    size_t len = 0;
    uint8_t small[4];
    char key[32];
    int i, present = 0;

    OK(bw_filter_new_bloom(10000, 3, 1, &a));
    OK(bw_filter_new_bloom(10000, 3, 1, &b));
    for (i = 0; i < 100; i++) {
        int n = snprintf(key, sizeof key, "a-%d", i);
        OK(bw_filter_insert(a, key, (size_t)n));
        n = snprintf(key, sizeof key, "b-%d", i);
        OK(bw_filter_insert(b, key, (size_t)n));
    }
    OK(bw_filter_contains(a, "a-7", 3, &yes));
    CHECK(yes, "inserted key present");
    for (i = 0; i < 100; i++) {
        int n = snprintf(key, sizeof key, "absent-%d", i);
        OK(bw_filter_contains(a, key, (size_t)n, &yes));
        present += yes;
    }
    CHECK(present < 10, "%d of 100 absent keys present", present);
    OK(bw_filter_count_ones(a, &ones));
    CHECK(ones > 250 && ones <= 300, "ones %" PRIu64, ones);
    OK(bw_filter_get_info(a, &info));
    CHECK(info.kind == BW_KIND_BLOOM && info.m == 10000 && info.k == 3.0 && info.k_ceil == 3 &&
              info.layout == BW_LAYOUT_STANDARD && info.counter_width == 0 && info.n == 100,
          "info");
    OK(bw_filter_clone(a, &copy));
    OK(bw_filter_union(a, b));
    OK(bw_filter_contains(a, "b-9", 3, &yes));
    CHECK(yes, "union holds the other's keys");
    OK(bw_filter_union(a, a)); /* the same handle */
    CHECK(ones_of(a) > ones && ones_of(copy) == ones, "union grew, copy did not");
    /* Export: ceil(m / 8) bytes, the length asked for with cap 0. */
    FAILS(BW_ERR_BUFFER_TOO_SMALL, bw_filter_export(a, NULL, 0, &len));
    CHECK(len == 1250, "export length %zu", len);
    FAILS(BW_ERR_BUFFER_TOO_SMALL, bw_filter_export(a, small, sizeof small, &len));
    {
        bw_error e;
        bw_last_error(&e);
        CHECK(e.needed == 1250 && len == 1250, "needed %" PRIu64, e.needed);
    }
    FAILS(BW_ERR_NULL_POINTER, bw_filter_export(a, NULL, 10, &len));
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_filter_remove(a, "a-1", 3));
    /* Another seed: incompatible, and nothing changes. */
    OK(bw_filter_new_bloom(10000, 3, 2, &c));
    FAILS(BW_ERR_INCOMPATIBLE, bw_filter_union(copy, c));
    CHECK(ones_of(copy) == ones, "unchanged after a failed union");
    bw_filter_free(c);

    /* Counting filters. */
    OK(bw_filter_new_counting(5000, 3, 4, 9, &c));
    {
        bw_filter *z = NULL;
        FAILS(BW_ERR_INVALID_PARAMETER, bw_filter_new_counting(5000, 3, 0, 9, &z));
        CHECK(z == NULL, "no filter of width 0");
    }
    OK(bw_filter_insert(c, "x", 1));
    OK(bw_filter_insert(c, "y", 1));
    OK(bw_filter_remove(c, "x", 1));
    OK(bw_filter_contains(c, "x", 1, &yes));
    CHECK(!yes, "removed");
    FAILS(BW_ERR_INVALID_PARAMETER, bw_filter_remove(c, "never", 5));
    OK(bw_filter_get_info(c, &info));
    CHECK(info.kind == BW_KIND_COUNTING && info.counter_width == 4 && info.n == 1, "counting");
    FAILS(BW_ERR_INCOMPATIBLE, bw_filter_union(c, a));
    OK(bw_filter_union(c, c));
    OK(bw_filter_get_info(c, &info));
    CHECK(info.n == 2 && ones_of(c) == 3, "counting union n %" PRIu64, info.n);
    FAILS(BW_ERR_BUFFER_TOO_SMALL, bw_filter_export(c, NULL, 0, &len));
    CHECK(len == 2500, "packed counters %zu", len);
    bw_filter_free(a);
    bw_filter_free(b);
    bw_filter_free(c);
    bw_filter_free(copy);
}

/* ---- encoding, decoding, describing ----------------------------------------------------- */

static void test_codec(void) {
    bw_filter *f = NULL, *back = NULL, *counting = NULL;
    bw_encoder *e = NULL, *ce = NULL;
    bw_limits *limits = NULL;
    bw_frame_info *info = NULL;
    bw_frame_desc d;
    uint8_t *frame = NULL, buf[64];
    uint8_t *big;
    size_t len = 0, len2 = 0;
    char a[65], b[65];
    int i;
    const char *codings[] = {"raw", "adaptive", "known-p", "known-p-symbols",
                             "known-p-interleaved", "positional", "small", "wide", "escape"};

    OK(bw_filter_new_bloom(100000, 2, 0, &f));
    for (i = 0; i < 5000; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "k%d", i);
        OK(bw_filter_insert(f, key, (size_t)n));
    }
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_encoder_new(5, &e));
    OK(bw_encoder_new(BW_KIND_BLOOM, &e));
    OK(bw_encode_alloc(e, f, 3, &frame, &len));
    CHECK(frame != NULL && len > 100 && len < 12500, "frame %zu bytes", len);
    /* Into the caller's buffer: too small says how much, then it fits. */
    FAILS(BW_ERR_BUFFER_TOO_SMALL, bw_encode(e, f, 3, buf, sizeof buf, &len2));
    CHECK(len2 == len, "needed %zu of %zu", len2, len);
    big = (uint8_t *)malloc(len);
    OK(bw_encode(e, f, 3, big, len, &len2));
    CHECK(len2 == len && memcmp(big, frame, len) == 0, "same frame both ways");
    /* Through an encoder context: the same frame, its memory kept in the context. */
    {
        bw_scratch *s = NULL;
        size_t held = 1, again = 0;
        OK(bw_scratch_new(&s));
        OK(bw_scratch_bytes(s, &held));
        CHECK(held == 0, "a new context keeps %zu bytes", held);
        FAILS(BW_ERR_BUFFER_TOO_SMALL, bw_encode_scratch(s, e, f, 3, buf, sizeof buf, &len2));
        CHECK(len2 == len, "needed %zu of %zu through a context", len2, len);
        memset(big, 0, len);
        OK(bw_encode_scratch(s, e, f, 3, big, len, &len2));
        CHECK(len2 == len && memcmp(big, frame, len) == 0, "same frame through a context");
        OK(bw_scratch_bytes(s, &held));
        CHECK(held >= len, "the context keeps %zu bytes for a %zu-byte frame", held, len);
        OK(bw_encode_scratch(s, e, f, 3, big, len, &len2));
        OK(bw_scratch_bytes(s, &again));
        CHECK(again == held, "the next encode reuses the context's memory (%zu, %zu)", again, held);
        FAILS(BW_ERR_NULL_POINTER, bw_encode_scratch(NULL, e, f, 3, big, len, &len2));
        FAILS(BW_ERR_NULL_POINTER, bw_encode_scratch(s, NULL, f, 3, big, len, &len2));
        FAILS(BW_ERR_NULL_POINTER, bw_scratch_bytes(NULL, &held));
        FAILS(BW_ERR_NULL_POINTER, bw_scratch_bytes(s, NULL));
        FAILS(BW_ERR_NULL_POINTER, bw_scratch_new(NULL));
        bw_scratch_free(s);
        bw_scratch_free(NULL);
    }
    OK(bw_decode(frame, len, NULL, NULL, 0, &back));
    filter_sha(f, a);
    filter_sha(back, b);
    CHECK(strcmp(a, b) == 0, "round trip");
    bw_filter_free(back);
    back = NULL;
    {
        uint8_t *longer = (uint8_t *)malloc(len + 1);
        memcpy(longer, frame, len);
        longer[len] = 0;
        FAILS(BW_ERR_TRAILING_BYTES, bw_decode(longer, len + 1, NULL, NULL, 0, &back));
        free(longer);
    }
    FAILS(BW_ERR_INCOMPLETE, bw_decode(frame, len - 1, NULL, NULL, 0, &back));
    {
        bw_error err;
        bw_last_error(&err);
        CHECK(err.needed >= 1, "incomplete needs %" PRIu64, err.needed);
    }
    /* The frame's length from its header, for a stream reader; a cut header is Incomplete. */
    OK(bw_frame_len(frame, len - 1, NULL, &len2));
    CHECK(len2 == len, "frame length %zu of %zu", len2, len);
    FAILS(BW_ERR_INCOMPLETE, bw_frame_len(frame, 5, NULL, &len2));
    FAILS(BW_ERR_NULL_POINTER, bw_frame_len(frame, len, NULL, NULL));
    FAILS(BW_ERR_INCOMPLETE, bw_decode(NULL, 0, NULL, NULL, 0, &back));
    FAILS(BW_ERR_NULL_POINTER, bw_decode(NULL, 10, NULL, NULL, 0, &back));
    big[0] ^= 0xff;
    FAILS(BW_ERR_BAD_MAGIC, bw_decode(big, len, NULL, NULL, 0, &back));
    big[0] ^= 0xff;
    big[len - 1] ^= 1;
    FAILS(BW_ERR_CHECKSUM_MISMATCH, bw_decode(big, len, NULL, NULL, 0, &back));
    CHECK(back == NULL, "no filter on failure");
    /* The description of a frame whose checksum fails: the header and the problem. */
    OK(bw_inspect(big, len, NULL, NULL, 0, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.checksum == BW_CHECKSUM_MISMATCH && d.problem == BW_ERR_CHECKSUM_MISMATCH &&
              d.problem_message != NULL && !d.decoded && d.generation == 3,
          "inspect of a bad frame");
    bw_frame_info_free(info);
    free(big);
    /* Limits: a decoder that takes at most 2^16 bits. */
    OK(bw_limits_new(&limits));
    OK(bw_limits_set_max_m(limits, 1 << 16));
    FAILS(BW_ERR_LIMIT_EXCEEDED, bw_decode(frame, len, limits, NULL, 0, &back));
    {
        bw_error err;
        bw_last_error(&err);
        CHECK(err.field && strcmp(err.field, "m") == 0 && err.value == 100000 &&
                  err.limit == (1 << 16) && err.has_offset,
              "limit exceeded field %s", err.field ? err.field : "(null)");
    }
    bw_bytes_free(frame);

    /* Every coding of bits by name, each frame decoding to the same filter. */
    for (i = 0; i < (int)(sizeof codings / sizeof *codings); i++) {
        OK(bw_encoder_set_coding(e, codings[i]));
        OK(bw_encode_alloc(e, f, 0, &frame, &len));
        OK(bw_inspect(frame, len, NULL, NULL, 0, &info));
        OK(bw_frame_info_get(info, &d));
        CHECK(strcmp(d.coding_name, codings[i]) == 0 || d.coding == 0, "coding %s gave %s",
              codings[i], d.coding_name);
        CHECK(d.problem == BW_OK && d.decoded && d.ones == ones_of(f), "ones of %s", codings[i]);
        bw_frame_info_free(info);
        OK(bw_decode(frame, len, NULL, NULL, 0, &back));
        filter_sha(back, b);
        CHECK(strcmp(a, b) == 0, "coding %s round trip", codings[i]);
        bw_filter_free(back);
        bw_bytes_free(frame);
    }
    FAILS(BW_ERR_INVALID_PARAMETER, bw_encoder_set_coding(e, "known-counters"));
    /* Coding 8 (dense) is withdrawn: its name is no coding. */
    FAILS(BW_ERR_INVALID_PARAMETER, bw_encoder_set_coding(e, "dense"));
    OK(bw_encoder_set_coding(e, NULL));
    OK(bw_encoder_set_chunking(e, BW_CHUNKING_NEVER));
    OK(bw_encoder_set_chunking(e, 12));
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_encoder_set_chunking(e, 3));
    OK(bw_encoder_set_chunking(e, BW_CHUNKING_AUTO));

    /* Profiles: a Core encoder writes a Core coding, refuses a Full one by name; a Core
     * decoder refuses a Full coding's frame as unsupported, naming the coding. */
    FAILS(BW_ERR_INVALID_PARAMETER, bw_encoder_set_profile(e, "partial"));
    FAILS(BW_ERR_NULL_POINTER, bw_encoder_set_profile(e, NULL));
    OK(bw_encoder_set_profile(e, BW_PROFILE_CORE));
    OK(bw_encode_alloc(e, f, 0, &frame, &len));
    OK(bw_inspect(frame, len, NULL, NULL, 0, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(strcmp(d.coding_profile, "core") == 0 && strcmp(d.coding_status, "active") == 0,
          "core encoder wrote %s (%s, %s)", d.coding_name, d.coding_profile, d.coding_status);
    bw_frame_info_free(info);
    bw_bytes_free(frame);
    OK(bw_encoder_set_coding(e, "escape"));
    FAILS(BW_ERR_INVALID_PARAMETER, bw_encode_alloc(e, f, 0, &frame, &len));
    OK(bw_encoder_set_coding(e, "adaptive"));
    OK(bw_encode_alloc(e, f, 0, &frame, &len));
    OK(bw_inspect(frame, len, NULL, NULL, 0, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.coding == 1 && strcmp(d.coding_status, "deprecated") == 0, "adaptive %s",
          d.coding_status);
    bw_frame_info_free(info);
    bw_bytes_free(frame);
    OK(bw_encoder_set_profile(e, BW_PROFILE_FULL));
    OK(bw_encoder_set_coding(e, "wide"));
    OK(bw_encode_alloc(e, f, 0, &frame, &len));
    {
        bw_limits *core = NULL;
        bw_error err;
        OK(bw_limits_new(&core));
        FAILS(BW_ERR_INVALID_PARAMETER, bw_limits_set_profile(core, "nope"));
        OK(bw_limits_set_profile(core, BW_PROFILE_CORE));
        FAILS(BW_ERR_UNSUPPORTED_CODING, bw_decode(frame, len, core, NULL, 0, &back));
        bw_last_error(&err);
        CHECK(err.field && strcmp(err.field, "coding") == 0 && err.value == 10 && err.has_offset,
              "unsupported coding %" PRIu64, err.value);
        OK(bw_inspect(frame, len, core, NULL, 0, &info));
        OK(bw_frame_info_get(info, &d));
        CHECK(d.problem == BW_ERR_UNSUPPORTED_CODING && strcmp(d.coding_profile, "full") == 0,
              "inspect with a core decoder");
        bw_frame_info_free(info);
        OK(bw_limits_set_profile(core, BW_PROFILE_FULL));
        OK(bw_decode(frame, len, core, NULL, 0, &back));
        bw_filter_free(back);
        back = NULL;
        bw_limits_free(core);
    }
    bw_bytes_free(frame);
    OK(bw_encoder_set_coding(e, NULL));

    /* Metadata and a key: verified with it, unverified without, refused with another. */
    OK(bw_encoder_set_metadata(e, (const uint8_t *)"sender=7", 8));
    OK(bw_encoder_set_key(e, KEY, sizeof KEY));
    FAILS(BW_ERR_INVALID_PARAMETER, bw_encoder_set_key(e, KEY, 31));
    OK(bw_encode_alloc(e, f, 9, &frame, &len));
    OK(bw_inspect(frame, len, NULL, KEY, sizeof KEY, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.tag == BW_TAG_VERIFIED && d.metadata_len == 8 &&
              memcmp(d.metadata, "sender=7", 8) == 0 && d.generation == 9 && d.m == 100000 &&
              d.k == 2.0 && d.n == 5000 && d.base_hash == 1 && d.seed == 0 &&
              d.index_scheme == 1 && d.checksum == BW_CHECKSUM_OK &&
              d.frame_len == len && d.header_len + d.payload_len + 4 + 16 == len,
          "keyed description");
    bw_frame_info_free(info);
    OK(bw_inspect(frame, len, NULL, NULL, 0, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.tag == BW_TAG_UNVERIFIED, "unverified without a key");
    bw_frame_info_free(info);
    {
        uint8_t other[BW_KEY_LEN] = {0};
        OK(bw_inspect(frame, len, NULL, other, sizeof other, &info));
        OK(bw_frame_info_get(info, &d));
        CHECK(d.tag == BW_TAG_BAD && d.problem == BW_ERR_BAD_TAG, "bad tag");
        bw_frame_info_free(info);
        FAILS(BW_ERR_BAD_TAG, bw_decode(frame, len, NULL, other, sizeof other, &back));
    }
    OK(bw_decode(frame, len, NULL, KEY, sizeof KEY, &back));
    bw_filter_free(back);
    OK(bw_limits_set_max_m(limits, 1 << 20));
    OK(bw_limits_set_max_metadata(limits, 4));
    FAILS(BW_ERR_LIMIT_EXCEEDED, bw_decode(frame, len, limits, NULL, 0, &back));
    bw_bytes_free(frame);
    OK(bw_encoder_set_key(e, NULL, 0));
    OK(bw_encode_alloc(e, f, 0, &frame, &len));
    FAILS(BW_ERR_MISSING_TAG, bw_decode(frame, len, NULL, KEY, sizeof KEY, &back));
    bw_bytes_free(frame);
    /* A budget nothing fits in. */
    OK(bw_encoder_set_budget(e, 50));
    FAILS(BW_ERR_OVER_BUDGET, bw_encode_alloc(e, f, 0, &frame, &len));
    CHECK(frame == NULL, "no buffer on failure");
    OK(bw_encoder_set_budget(e, 0));

    /* A counting filter, with its own encoder. */
    OK(bw_filter_new_counting(20000, 3, 4, 5, &counting));
    for (i = 0; i < 1000; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "c%d", i);
        OK(bw_filter_insert(counting, key, (size_t)n));
    }
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_encode_alloc(e, counting, 0, &frame, &len));
    OK(bw_encoder_new(BW_KIND_COUNTING, &ce));
    OK(bw_encoder_set_coding(ce, "known-counters"));
    FAILS(BW_ERR_INVALID_PARAMETER, bw_encoder_set_coding(ce, "positional"));
    OK(bw_encode_alloc(ce, counting, 1, &frame, &len));
    OK(bw_decode(frame, len, NULL, NULL, 0, &back));
    filter_sha(counting, a);
    filter_sha(back, b);
    CHECK(strcmp(a, b) == 0, "counting round trip");
    OK(bw_inspect(frame, len, NULL, NULL, 0, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.filter_type == 3 && d.counter_width == 4 && d.coding == 4 &&
              d.ones == ones_of(counting),
          "counting description");
    bw_frame_info_free(info);
    bw_filter_free(back);
    bw_bytes_free(frame);

    bw_encoder_free(ce);
    bw_encoder_free(e);
    bw_limits_free(limits);
    bw_filter_free(counting);
    bw_filter_free(f);
}

/* ---- deltas ------------------------------------------------------------------------------ */

static void test_deltas(void) {
    bw_filter *f = NULL, *held = NULL;
    bw_encoder *e = NULL;
    bw_sender *s = NULL;
    bw_receiver *r = NULL, *late = NULL, *c_r = NULL;
    const uint8_t *frame = NULL;
    uint8_t *copy, *delta;
    size_t len = 0, first_len, delta_len;
    bw_update u;
    uint64_t g = 0, flips[3] = {5, 500, 70000};
    bool has = false;
    char a[65], b[65];
    int i;

    OK(bw_filter_new_bloom(1 << 17, 2, 0, &f));
    for (i = 0; i < 4000; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "d%d", i);
        OK(bw_filter_insert(f, key, (size_t)n));
    }
    OK(bw_encoder_new(BW_KIND_BLOOM, &e));
    OK(bw_encoder_set_key(e, KEY, sizeof KEY));
    OK(bw_sender_new(e, 100, &s));
    OK(bw_receiver_new(BW_KIND_BLOOM, NULL, KEY, sizeof KEY, &r));
    FAILS(BW_ERR_INVALID_ARGUMENT, bw_receiver_new(9, NULL, NULL, 0, &late));
    OK(bw_receiver_generation(r, &has, &g));
    CHECK(!has && g == 0, "nothing held");
    OK(bw_receiver_filter(r, &held));
    CHECK(held == NULL, "no filter yet");
    FAILS(BW_ERR_INVALID_PARAMETER, bw_sender_next_frame_with_flips(s, flips, 3, 4001, &frame, &len));
    FAILS(BW_ERR_INVALID_PARAMETER, bw_sender_full_frame(s, &frame, &len));

    OK(bw_sender_next_frame(s, f, &frame, &len));
    first_len = len;
    OK(bw_receiver_receive(r, frame, len, &u));
    CHECK(u.full && u.generation == 1 && u.skipped == 0, "first frame full");
    copy = (uint8_t *)malloc(len);
    memcpy(copy, frame, len);
    /* The first frame carries the restart flag: taken again whatever is held. */
    OK(bw_receiver_receive(r, copy, len, &u));
    CHECK(u.full && u.generation == 1, "restart frame taken again");

    /* Generation 2: ten more keys, a delta. */
    for (i = 0; i < 10; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "new%d", i);
        OK(bw_filter_insert(f, key, (size_t)n));
    }
    OK(bw_sender_next_frame(s, f, &frame, &len));
    CHECK(len < first_len / 10, "delta %zu bytes vs %zu", len, first_len);
    delta = (uint8_t *)malloc(len);
    memcpy(delta, frame, len);
    delta_len = len;
    OK(bw_receiver_receive(r, frame, len, &u));
    CHECK(!u.full && u.generation == 2, "delta applied");
    FAILS(BW_ERR_STALE_GENERATION, bw_receiver_receive(r, delta, delta_len, NULL));
    OK(bw_receiver_filter(r, &held));
    filter_sha(f, a);
    filter_sha(held, b);
    CHECK(strcmp(a, b) == 0, "receiver holds the sender's filter");
    bw_filter_free(held);

    /* Generation 3 from flips alone. */
    OK(bw_sender_next_frame_with_flips(s, flips, 3, 4011, &frame, &len));
    OK(bw_receiver_receive(r, frame, len, &u));
    CHECK(u.generation == 3, "flips delta");
    OK(bw_sender_generation(s, &g));
    CHECK(g == 3, "sender generation %" PRIu64, g);
    {
        uint64_t bad[2] = {9, 3};
        FAILS(BW_ERR_INVALID_PARAMETER, bw_sender_next_frame_with_flips(s, bad, 2, 1, &frame, &len));
        FAILS(BW_ERR_NULL_POINTER, bw_sender_next_frame_with_flips(s, NULL, 2, 1, &frame, &len));
    }

    /* A late joiner takes a full frame of generation 3. */
    OK(bw_receiver_new(BW_KIND_ANY, NULL, KEY, sizeof KEY, &late));
    OK(bw_sender_full_frame(s, &frame, &len));
    OK(bw_receiver_receive(late, frame, len, &u));
    CHECK(u.full && u.generation == 3, "late joiner");
    /* The delta to generation 2 is stale for it. */
    FAILS(BW_ERR_STALE_GENERATION, bw_receiver_receive(late, delta, delta_len, NULL));
    /* Without the key's tag: refused. */
    {
        bw_receiver *plain = NULL;
        OK(bw_receiver_new(BW_KIND_BLOOM, NULL, NULL, 0, &plain));
        OK(bw_receiver_receive(plain, copy, first_len, NULL));
        bw_receiver_free(plain);
    }
    /* Restart: the receiver forgets, then takes generation 1 again. */
    OK(bw_receiver_restart(late));
    OK(bw_receiver_generation(late, &has, &g));
    CHECK(!has, "restarted");
    OK(bw_receiver_receive(late, copy, first_len, &u));
    CHECK(u.generation == 1, "generation 1 after restart");
    /* A delta for generation 4 is a gap for it. */
    OK(bw_sender_request_full(s));
    OK(bw_sender_next_frame(s, f, &frame, &len));
    OK(bw_receiver_receive(r, frame, len, &u));
    CHECK(u.full && u.generation == 4, "requested full frame");
    OK(bw_filter_insert(f, "more", 4));
    OK(bw_sender_next_frame(s, f, &frame, &len));
    FAILS(BW_ERR_GENERATION_GAP, bw_receiver_receive(late, frame, len, NULL));
    OK(bw_receiver_receive(r, frame, len, &u));
    CHECK(!u.full && u.generation == 5, "delta 5");
    /* A counting receiver refuses a Bloom frame. */
    OK(bw_receiver_new(BW_KIND_COUNTING, NULL, KEY, sizeof KEY, &c_r));
    FAILS(BW_ERR_UNEXPECTED_FILTER_TYPE, bw_receiver_receive(c_r, copy, first_len, NULL));
    {
        bw_filter *cf = NULL;
        OK(bw_filter_new_counting(1000, 2, 4, 0, &cf));
        FAILS(BW_ERR_INVALID_ARGUMENT, bw_sender_next_frame(s, cf, &frame, &len));
        bw_filter_free(cf);
    }
    /* A counting sender. */
    {
        bw_encoder *ce = NULL;
        bw_sender *cs = NULL;
        bw_filter *cf = NULL;
        OK(bw_encoder_new(BW_KIND_COUNTING, &ce));
        OK(bw_encoder_set_key(ce, KEY, sizeof KEY));
        OK(bw_sender_new(ce, 10, &cs));
        OK(bw_filter_new_counting(20000, 2, 4, 0, &cf));
        for (i = 0; i < 500; i++) {
            char key[16];
            int n = snprintf(key, sizeof key, "c%d", i);
            OK(bw_filter_insert(cf, key, (size_t)n));
        }
        OK(bw_sender_next_frame(cs, cf, &frame, &len));
        OK(bw_receiver_receive(c_r, frame, len, &u));
        OK(bw_filter_remove(cf, "c1", 2));
        OK(bw_sender_next_frame(cs, cf, &frame, &len));
        OK(bw_receiver_receive(c_r, frame, len, &u));
        CHECK(!u.full && u.generation == 2, "counting delta");
        FAILS(BW_ERR_INVALID_ARGUMENT, bw_sender_next_frame_with_flips(cs, flips, 1, 1, &frame, &len));
        OK(bw_receiver_filter(c_r, &held));
        filter_sha(cf, a);
        filter_sha(held, b);
        CHECK(strcmp(a, b) == 0, "counting receiver holds the sender's filter");
        bw_filter_free(held);
        bw_filter_free(cf);
        bw_sender_free(cs);
        bw_encoder_free(ce);
    }
    free(copy);
    free(delta);
    bw_receiver_free(c_r);
    bw_receiver_free(late);
    bw_receiver_free(r);
    bw_sender_free(s);
    bw_encoder_free(e);
    bw_filter_free(f);
}

/* ---- threads: shared const handles, errors per thread ------------------------------------ */

struct shared {
    const bw_filter *filter;
    const bw_encoder *encoder;
    int hits;
    bw_status own_error;
};

static void *reader(void *arg) {
    struct shared *s = (struct shared *)arg;
    int i;
    for (i = 0; i < 2000; i++) {
        char key[16];
        bool yes = false;
        int n = snprintf(key, sizeof key, "t%d", i % 100);
        if (bw_filter_contains(s->filter, key, (size_t)n, &yes) == BW_OK && yes) s->hits++;
    }
    {
        uint8_t *frame = NULL;
        size_t len = 0;
        if (bw_encode_alloc(s->encoder, s->filter, 0, &frame, &len) != BW_OK) s->hits = -1;
        bw_bytes_free(frame);
    }
    /* This thread's failure is this thread's last error. */
    s->own_error = bw_filter_new_bloom(0, 1, 0, NULL);
    {
        bw_error e;
        bw_last_error(&e);
        if (e.code != BW_ERR_NULL_POINTER) s->own_error = BW_ERR_OTHER;
    }
    bw_release_thread_scratch();
    return NULL;
}

static void test_threads(void) {
    bw_filter *f = NULL;
    bw_encoder *e = NULL;
    struct shared s[4];
    pthread_t t[4];
    bw_error before, after;
    int i;
    OK(bw_filter_new_bloom(10000, 3, 0, &f));
    for (i = 0; i < 100; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "t%d", i);
        OK(bw_filter_insert(f, key, (size_t)n));
    }
    OK(bw_encoder_new(BW_KIND_BLOOM, &e));
    {
        bw_encoder *bad = NULL;
        FAILS(BW_ERR_INVALID_ARGUMENT, bw_encoder_new(42, &bad));
    }
    bw_last_error(&before);
    for (i = 0; i < 4; i++) {
        s[i].filter = f, s[i].encoder = e, s[i].hits = 0, s[i].own_error = BW_OK;
        CHECK(pthread_create(&t[i], NULL, reader, &s[i]) == 0, "thread %d", i);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(s[i].hits == 2000 && s[i].own_error == BW_ERR_NULL_POINTER, "thread %d: %d hits",
              i, s[i].hits);
    }
    bw_last_error(&after);
    CHECK(after.code == BW_ERR_INVALID_ARGUMENT && before.code == after.code,
          "the main thread's last error is its own");
    bw_encoder_free(e);
    bw_filter_free(f);
}

/* ---- the spec's vectors and the program's frames ---------------------------------------- */

/* The keys of the case starting at cases[*at], checked against contains. */
static void check_keys(char **lines, int count, int *at, const char *name,
                       const bw_filter *f, bool refused) {
    while (*at + 1 < count && lines[*at + 1][0] == 'K') {
        char line[512], *fields[3];
        uint8_t key[256];
        size_t n;
        bool yes = false;
        bw_status st;
        (*at)++;
        snprintf(line, sizeof line, "%s", lines[*at]);
        split(line, fields, 3);
        n = unhex(fields[2], key, sizeof key);
        st = bw_filter_contains(f, key, n, &yes);
        if (refused) {
            CHECK(st == BW_ERR_OPAQUE_HASH_FAMILY, "%s: query refused", name);
        } else {
            CHECK(st == BW_OK && yes == (fields[1][0] == '1'), "%s: key %s", name, fields[2]);
        }
    }
}

static bw_receiver *receiver_holding(const char *dir, const char *base, const uint8_t *key,
                                     size_t key_len) {
    size_t len = 0;
    uint8_t *frame = read_vector(dir, "accept", base, &len);
    bw_receiver *r = NULL;
    OK(bw_receiver_new(BW_KIND_ANY, NULL, key, key_len, &r));
    CHECK(frame != NULL, "base %s", base);
    if (frame) OK(bw_receiver_receive(r, frame, len, NULL));
    free(frame);
    return r;
}

/* A decoder of the Core profile. */
static bw_limits *core_limits;

static void accept_case(const char *dir, char **lines, int count, int *at) {
    char line[1024], *x[10];
    const char *name, *kind, *sha, *ones, *base, *result, *keyhex;
    bool counting, refused;
    uint8_t key[BW_KEY_LEN], *frame;
    size_t key_len, len = 0;
    bw_filter *f = NULL;
    bw_frame_info *info = NULL;
    bw_frame_desc d;
    char hex[65];

    snprintf(line, sizeof line, "%s", lines[*at]);
    if (split(line, x, 10) != 10) {
        CHECK(0, "malformed case %s", lines[*at]);
        return;
    }
    name = x[1], kind = x[2], counting = x[3][0] == '1', sha = x[4], ones = x[5];
    base = x[6], result = x[7], keyhex = x[8], refused = x[9][0] == '1';
    key_len = unhex(keyhex, key, sizeof key);
    frame = read_vector(dir, "accept", name, &len);
    CHECK(frame != NULL, "%s: read", name);
    if (!frame) return;
    /* The description: no problem, the tag as the key says. */
    OK(bw_inspect(frame, len, NULL, key_len ? key : NULL, key_len, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.problem == BW_OK && d.decoded, "%s: %s", name,
          d.problem_message ? d.problem_message : "");
    CHECK(d.kind == (strcmp(kind, "delta") == 0 ? BW_FRAME_DELTA : BW_FRAME_FULL), "%s kind", name);
    CHECK((d.filter_type == 3) == counting, "%s: counting", name);
    if (strcmp(ones, "-") != 0)
        CHECK(d.ones == strtoull(ones, NULL, 10), "%s: ones %" PRIu64 " vs %s", name, d.ones, ones);
    if (key_len) {
        CHECK(d.tag == BW_TAG_VERIFIED, "%s: verified", name);
        bw_frame_info_free(info);
        OK(bw_inspect(frame, len, NULL, NULL, 0, &info));
        OK(bw_frame_info_get(info, &d));
        CHECK(d.tag == BW_TAG_UNVERIFIED && d.problem == BW_OK, "%s: unverified", name);
    }
    bw_frame_info_free(info);
    /* A Core decoder reads the Core codings and refuses the others as unsupported. */
    OK(bw_inspect(frame, len, core_limits, key_len ? key : NULL, key_len, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.problem == (strcmp(d.coding_profile, "core") == 0 ? BW_OK : BW_ERR_UNSUPPORTED_CODING),
          "%s: %s coding %s with a core decoder: %s", name, d.coding_profile, d.coding_name,
          bw_status_name(d.problem));
    bw_frame_info_free(info);

    if (strcmp(base, "-") == 0) {
        /* A full frame: the filter the manifest's digest names. */
        OK(bw_decode(frame, len, NULL, key_len ? key : NULL, key_len, &f));
        if (f) {
            filter_sha(f, hex);
            CHECK(strcmp(hex, sha) == 0, "%s: digest %s vs %s", name, hex, sha);
            check_keys(lines, count, at, name, f, refused);
        }
    } else {
        /* A delta, or a restart frame, applied by a receiver holding base_frame. */
        bw_receiver *r = receiver_holding(dir, base, key_len ? key : NULL, key_len);
        bw_update u;
        OK(bw_receiver_receive(r, frame, len, &u));
        OK(bw_receiver_filter(r, &f));
        if (f) {
            filter_sha(f, hex);
            CHECK(strcmp(hex, result) == 0, "%s: result digest %s vs %s", name, hex, result);
            check_keys(lines, count, at, name, f, refused);
        }
        bw_receiver_free(r);
    }
    bw_filter_free(f);
    free(frame);
}

static void reject_case(const char *dir, char *case_line) {
    char line[1024], *x[7];
    const char *name, *error, *field, *apply_to, *keyhex, *needed;
    uint8_t key[BW_KEY_LEN], *frame;
    size_t key_len, len = 0;
    bw_status st;
    bw_error e;
    bw_filter *f = NULL;

    snprintf(line, sizeof line, "%s", case_line);
    if (split(line, x, 7) != 7) {
        CHECK(0, "malformed case %s", case_line);
        return;
    }
    name = x[1], error = x[2], field = x[3], apply_to = x[4], keyhex = x[5], needed = x[6];
    key_len = unhex(keyhex, key, sizeof key);
    frame = read_vector(dir, "reject", name, &len);
    CHECK(frame != NULL, "%s: read", name);
    if (!frame) return;
    if (strcmp(apply_to, "-") != 0) {
        /* A delta that decodes, refused by a receiver holding apply_to; it stays as it was. */
        size_t base_len = 0;
        uint8_t *base = read_vector(dir, ".", apply_to, &base_len);
        bw_receiver *r = NULL;
        bw_frame_info *info = NULL;
        bw_frame_desc d;
        bool has = false;
        uint64_t before = 0, after = 0;
        int kind = BW_KIND_BLOOM;
        OK(bw_inspect(base, base_len, NULL, NULL, 0, &info));
        if (info && bw_frame_info_get(info, &d) == BW_OK && d.filter_type == 3)
            kind = BW_KIND_COUNTING;
        bw_frame_info_free(info);
        OK(bw_receiver_new(kind, NULL, NULL, 0, &r));
        OK(bw_receiver_receive(r, base, base_len, NULL));
        bw_receiver_generation(r, &has, &before);
        st = bw_receiver_receive(r, frame, len, NULL);
        bw_last_error(&e);
        bw_receiver_generation(r, &has, &after);
        CHECK(has && before == after, "%s: receiver unchanged", name);
        bw_receiver_free(r);
        free(base);
    } else {
        st = bw_decode(frame, len, NULL, key_len ? key : NULL, key_len, &f);
        bw_last_error(&e);
        CHECK(f == NULL, "%s: no filter", name);
        bw_filter_free(f);
    }
    CHECK(strcmp(bw_status_name(st), error) == 0, "%s: %s (%s), expected %s", name,
          bw_status_name(st), st == BW_OK ? "" : e.message, error);
    if (strcmp(field, "-") != 0)
        CHECK(e.field != NULL && strcmp(e.field, field) == 0, "%s: field %s, expected %s", name,
              e.field ? e.field : "(none)", field);
    if (strcmp(needed, "-") != 0)
        CHECK(e.needed == strtoull(needed, NULL, 10), "%s: needed %" PRIu64, name, e.needed);
    free(frame);
}

/* A frame the program made from a keys file: the same header figures as its inspect, and
 * every key present. */
static void program_case(char *case_line) {
    char line[4096], *x[8];
    uint8_t *frame, *keys;
    size_t len = 0, keys_len = 0, start = 0, i, count = 0;
    bw_frame_info *info = NULL;
    bw_frame_desc d;
    bw_filter *f = NULL;
    int missing = 0;

    snprintf(line, sizeof line, "%s", case_line);
    if (split(line, x, 8) != 8) {
        CHECK(0, "malformed case %s", case_line);
        return;
    }
    frame = read_file(x[1], &len);
    keys = read_file(x[2], &keys_len);
    CHECK(frame && keys, "%s: read", x[1]);
    if (!frame || !keys) return;
    OK(bw_inspect(frame, len, NULL, NULL, 0, &info));
    OK(bw_frame_info_get(info, &d));
    CHECK(d.problem == BW_OK && d.m == strtoull(x[3], NULL, 10) &&
              d.ones == strtoull(x[4], NULL, 10) && strcmp(d.coding_name, x[5]) == 0 &&
              d.n == strtoull(x[6], NULL, 10) && (d.filter_type == 3) == (x[7][0] == '1'),
          "%s: as the program's inspect says (m %s ones %s coding %s)", x[1], x[3], x[4], x[5]);
    bw_frame_info_free(info);
    OK(bw_decode(frame, len, NULL, NULL, 0, &f));
    for (i = 0; f && i <= keys_len; i++) {
        if (i == keys_len || keys[i] == '\n') {
            bool yes = false;
            if (i == keys_len && start == keys_len) break; /* no key after the last newline */
            if (bw_filter_contains(f, keys + start, i - start, &yes) != BW_OK || !yes) missing++;
            count++;
            start = i + 1;
        }
    }
    CHECK(missing == 0 && count > 0, "%s: %d of %zu keys missing", x[1], missing, count);
    bw_filter_free(f);
    free(frame);
    free(keys);
}

static void test_cases(const char *dir, const char *cases_path) {
    size_t len = 0;
    char *text = (char *)read_file(cases_path, &len), **lines;
    int count = 0, i, accepts = 0, rejects = 0, programs = 0;
    CHECK(text != NULL, "cases file %s", cases_path);
    if (!text) return;
    OK(bw_limits_new(&core_limits));
    OK(bw_limits_set_profile(core_limits, BW_PROFILE_CORE));
    text = (char *)realloc(text, len + 1);
    text[len] = 0;
    lines = (char **)malloc(sizeof(char *) * (len / 2 + 2));
    for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) lines[count++] = p;
    for (i = 0; i < count; i++) {
        switch (lines[i][0]) {
        case 'A': accept_case(dir, lines, count, &i); accepts++; break;
        case 'R': reject_case(dir, lines[i]); rejects++; break;
        case 'P': program_case(lines[i]); programs++; break;
        default: break;
        }
    }
    printf("vectors: %d accept, %d reject; %d frames of the program\n", accepts, rejects,
           programs);
    CHECK(accepts >= 20 && rejects >= 30, "the manifests list the vectors");
    free(lines);
    free(text);
    bw_limits_free(core_limits);
}

/* Frames made here, for the program to read (capi/ci.sh runs its inspect and query on
 * them): OUT/c_*.blwr, the keys they hold in OUT/c_keys.txt, the key in OUT/c_key.bin. */
static void write_file(const char *dir, const char *name, const uint8_t *bytes, size_t len) {
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(bytes, 1, len, f) == len, "write %s", path);
    if (f) fclose(f);
}

static void write_frames(const char *dir) {
    bw_filter *bloom = NULL, *counting = NULL;
    bw_encoder *e = NULL, *ce = NULL;
    uint8_t *frame = NULL;
    size_t len = 0, keys_len = 0;
    char keys[16384];
    int i;
    OK(bw_filter_new_bloom(50000, 3, 11, &bloom));
    OK(bw_filter_new_counting(50000, 3, 4, 11, &counting));
    for (i = 0; i < 1000; i++) {
        int n = snprintf(keys + keys_len, sizeof keys - keys_len, "c-%d\n", i);
        OK(bw_filter_insert(bloom, keys + keys_len, (size_t)n - 1));
        OK(bw_filter_insert(counting, keys + keys_len, (size_t)n - 1));
        keys_len += (size_t)n;
    }
    write_file(dir, "c_keys.txt", (const uint8_t *)keys, keys_len);
    write_file(dir, "c_key.bin", KEY, sizeof KEY);
    OK(bw_encoder_new(BW_KIND_BLOOM, &e));
    OK(bw_encode_alloc(e, bloom, 0, &frame, &len));
    write_file(dir, "c_default.blwr", frame, len);
    bw_bytes_free(frame);
    OK(bw_encoder_set_coding(e, "positional"));
    OK(bw_encode_alloc(e, bloom, 5, &frame, &len));
    write_file(dir, "c_positional.blwr", frame, len);
    bw_bytes_free(frame);
    OK(bw_encoder_set_coding(e, NULL));
    OK(bw_encoder_set_key(e, KEY, sizeof KEY));
    OK(bw_encoder_set_metadata(e, (const uint8_t *)"from C", 6));
    OK(bw_encode_alloc(e, bloom, 1, &frame, &len));
    write_file(dir, "c_keyed.blwr", frame, len);
    bw_bytes_free(frame);
    OK(bw_encoder_new(BW_KIND_COUNTING, &ce));
    OK(bw_encode_alloc(ce, counting, 0, &frame, &len));
    write_file(dir, "c_counting.blwr", frame, len);
    bw_bytes_free(frame);
    bw_encoder_free(ce);
    bw_encoder_free(e);
    bw_filter_free(counting);
    bw_filter_free(bloom);
}

int main(int argc, char **argv) {
    test_errors();
    test_plans();
    test_filters();
    test_codec();
    test_deltas();
    test_threads();
    if (argc >= 3) test_cases(argv[1], argv[2]);
    else CHECK(0, "usage: test_capi VECTORS_DIR CASES_FILE [OUT_DIR]");
    if (argc >= 4) write_frames(argv[3]);
    bw_release_thread_scratch();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
