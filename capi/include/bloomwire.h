/*
 * bloomwire.h: compressed Bloom filters on the wire, for C and everything that links C.
 *
 * The C face of the bloomwire crate (C99; compiles as C++ too). Link with
 * libbloomwire_capi.a or libbloomwire_capi.so (pkg-config: bloomwire); see capi/README.md.
 *
 * CONVENTIONS (every function follows them)
 *
 * Status. Every function that can fail returns a bw_status: BW_OK (0) or the error. The
 *   library's errors are mirrored one to one (BW_ERR_BAD_MAGIC is the crate's
 *   Error::BadMagic, ...); BW_ERR_OTHER is an error of a later library release this header
 *   does not name; 100 and above are the C boundary's own (a NULL pointer, an argument it
 *   refuses, a buffer too small, a caught panic).
 *
 * Errors per thread. The details of a failure (message, header field, byte offset, the
 *   bytes needed) are kept for the calling thread only, until its next failing call:
 *   bw_last_error(), bw_last_error_message(). A successful call leaves them alone (as
 *   errno). This is the only state the library keeps between calls outside the caller's
 *   handles, with the coders' per-thread scratch memory (bw_release_thread_scratch).
 *
 * Pointers and lengths. Every pointer is checked for NULL before use; an input of length
 *   0 may be NULL (the empty key, the empty frame); a length whose bytes overflow is
 *   BW_ERR_INVALID_ARGUMENT. Out-parameters are checked before any work, and a handle
 *   out-parameter is set to NULL at once, so that on failure it holds NULL. Enum-valued
 *   arguments are taken as integers and checked. A pointer that is not NULL must be valid:
 *   the library cannot tell a freed or foreign handle from a live one.
 *
 * Ownership. Every handle (bw_filter, bw_encoder, ...) is created by a bw_..._new (or
 *   bw_decode, bw_inspect, bw_filter_clone, bw_receiver_filter, bw_plan_for_...) and freed
 *   exactly once by its bw_..._free, which accepts NULL. Buffers the library allocates
 *   (bw_encode_alloc) are freed by bw_bytes_free, never by free(). Pointers the library
 *   hands out into a handle (a sender's frame, a description's strings and metadata, a
 *   plan's coding name) belong to that handle and stay valid as documented at each
 *   function. The library never keeps a pointer the caller passed in beyond the call.
 *
 * Thread-safety. Handles hold no locks and no thread affinity: any handle may be created
 *   on one thread and used or freed on another. Calls taking a const handle only read it,
 *   so any number of threads may make them at once on the same handle (bw_filter_contains,
 *   bw_encode, bw_plan_get, ...), as long as no thread changes it meanwhile. A call taking
 *   a non-const handle needs it exclusively: the caller serializes such calls. Every
 *   function may be called from any number of threads on distinct handles.
 *
 * Panics. No panic crosses the boundary: a caught panic is BW_ERR_INTERNAL (a bug: please
 *   report it); free the handles the call was given. (Built with panic = "abort", a panic
 *   aborts instead: the crate's profiles unwind.)
 */
#ifndef BLOOMWIRE_H
#define BLOOMWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Status and errors
 * ------------------------------------------------------------------------------------- */

typedef enum bw_status {
    BW_OK = 0,
    /* The library's errors (the crate's bloomwire::Error): 0.1's in its order, then 1.0's. */
    BW_ERR_INVALID_PARAMETER = 1,       /* a parameter outside what the crate supports */
    BW_ERR_INCOMPATIBLE = 2,            /* filters that must agree do not */
    BW_ERR_INCOMPLETE = 3,              /* input ends early: bw_error.needed more bytes */
    BW_ERR_BAD_MAGIC = 4,               /* not a bloomwire frame */
    BW_ERR_UNSUPPORTED_VERSION = 5,     /* a format version this decoder does not know */
    BW_ERR_INVALID_FIELD = 6,           /* a header field's value is reserved (bw_error.field) */
    BW_ERR_BAD_VARINT = 7,              /* a malformed varint */
    BW_ERR_LIMIT_EXCEEDED = 8,          /* a value over the caller's bw_limits */
    BW_ERR_CHECKSUM_MISMATCH = 9,       /* the CRC-32C does not match */
    BW_ERR_MISSING_TAG = 10,            /* a key was given and the frame has no tag */
    BW_ERR_BAD_TAG = 11,                /* the tag does not match the key */
    BW_ERR_TRAILING_BYTES = 12,         /* bytes after the one frame expected */
    BW_ERR_CORRUPT_PAYLOAD = 13,        /* the payload does not decode canonically */
    BW_ERR_UNEXPECTED_DELTA = 14,       /* a delta where a full frame was expected */
    BW_ERR_UNEXPECTED_FILTER_TYPE = 15, /* a frame of the other filter kind */
    BW_ERR_OPAQUE_HASH_FAMILY = 16,     /* another library's bits: no queries here */
    BW_ERR_GENERATION_GAP = 17,         /* a delta for a generation not held: resync */
    BW_ERR_STALE_GENERATION = 18,       /* a duplicate or late frame: ignore it */
    BW_ERR_BASE_MISMATCH = 19,          /* the base differs from the sender's: resync */
    BW_ERR_RESULT_MISMATCH = 20,        /* the delta gave other bits: resync */
    BW_ERR_TAG_NOT_VERIFIED = 21,       /* a keyed receiver given an unverified message */
    BW_ERR_OVER_BUDGET = 22,            /* no encoding fits the encoder's budget */
    BW_ERR_ALLOCATION_FAILED = 23,      /* the machine has not the memory */
    BW_ERR_PLAN_EXCEEDS_LIMITS = 24,    /* a plan above the receiver's limits */
    BW_ERR_UNSUPPORTED_CODING = 25,     /* a registry coding the decoder's profile lacks
                                         * (format 1.0; bw_error.field is "coding") */
    BW_ERR_OTHER = 99,                  /* a later library error: see the message */
    /* The C boundary's. */
    BW_ERR_NULL_POINTER = 100,          /* a pointer the call needs is NULL */
    BW_ERR_INVALID_ARGUMENT = 101,      /* overflowing length, bad enum value, wrong kind... */
    BW_ERR_BUFFER_TOO_SMALL = 102,      /* the caller's buffer is short: see *len */
    BW_ERR_INTERNAL = 103               /* a panic was caught: a bug */
} bw_status;

/* The details of the calling thread's last failure. The strings belong to the thread and
 * stay valid until its next failing call. */
typedef struct bw_error {
    bw_status code;      /* BW_OK when no call on this thread has failed */
    const char *message; /* one line of UTF-8, never NULL */
    const char *field;   /* the header field or parameter, or NULL (e.g. "coding" of
                          * BW_ERR_INVALID_FIELD, "max_m" of BW_ERR_PLAN_EXCEEDS_LIMITS) */
    bool has_offset;     /* whether offset is a byte offset in the frame */
    uint64_t offset;
    uint64_t value;      /* the value found (field value, byte, version, trailing count,
                          * filter type, generation, allocation size, frame size) */
    uint64_t limit;      /* the limit it broke (caller's limit, held generation, budget) */
    uint64_t needed;     /* BW_ERR_INCOMPLETE: more bytes needed at least;
                          * BW_ERR_BUFFER_TOO_SMALL: the length of the output */
} bw_error;

/* The last failure on the calling thread (out may be NULL: ignored). */
void bw_last_error(bw_error *out);
/* Its message ("no error" if none); valid until the thread's next failing call. */
const char *bw_last_error_message(void);
/* The status's name: the library's variant name ("BadMagic"), "Ok", or the boundary's
 * ("NullPointer"); "Unknown" for another value. A static string. */
const char *bw_status_name(int status);
/* The library's version, a static string. */
const char *bw_version(void);
/* Give back the coders' scratch memory kept for the calling thread (up to 64 MiB, kept so
 * that coding takes no fresh memory once warm; bw_encode_scratch keeps it in a bw_scratch
 * the caller owns instead); returns the bytes released. */
size_t bw_release_thread_scratch(void);

/* ---------------------------------------------------------------------------------------
 * Enumerations (passed as integers, checked)
 * ------------------------------------------------------------------------------------- */

typedef enum bw_kind {
    BW_KIND_BLOOM = 0,    /* a Bloom filter (filter types 0 to 2) */
    BW_KIND_COUNTING = 1, /* a counting filter (filter type 3) */
    BW_KIND_ANY = 2       /* either: receivers only */
} bw_kind;

typedef enum bw_layout {
    BW_LAYOUT_STANDARD = 0,    /* one array of m bits */
    BW_LAYOUT_PARTITIONED = 1, /* ceil(k) disjoint sub-arrays */
    BW_LAYOUT_BLOCKS = 2       /* power-of-two blocks from the binary digits of m */
} bw_layout;

/* Profiles (format 1.0, spec 4.0), by name: Core, codings 0, 1, 2, 4, 5, 7 and chunked
 * payloads, which every conforming decoder implements; Full, every coding. */
#define BW_PROFILE_CORE "core"
#define BW_PROFILE_FULL "full"

#define BW_KEY_LEN 32         /* bytes of a frame key (authentication, spec 2.5) */
#define BW_CHUNKING_AUTO (-1) /* bw_encoder_set_chunking: chunk large Bloom filters */
#define BW_CHUNKING_NEVER 0   /* one payload for the whole filter */

/* ---------------------------------------------------------------------------------------
 * Limits: what a decoder accepts. Wherever a const bw_limits * is taken, NULL means the
 * library's defaults: m up to 2^28, k up to 64, payloads up to 2^26 bytes, metadata up to
 * 4096 bytes, decoded filters up to ceil(max_m / 8) bytes (32 MiB).
 * Ownership: bw_limits_new, bw_limits_free. Thread-safety: see CONVENTIONS.
 * ------------------------------------------------------------------------------------- */

typedef struct bw_limits bw_limits;

bw_status bw_limits_new(bw_limits **out);
bw_status bw_limits_set_max_m(bw_limits *limits, uint64_t max_m); /* 1 .. 2^48 */
bw_status bw_limits_set_max_k(bw_limits *limits, uint32_t max_k); /* 1 .. 1024 */
bw_status bw_limits_set_max_payload(bw_limits *limits, uint64_t bytes);
bw_status bw_limits_set_max_metadata(bw_limits *limits, uint64_t bytes);
bw_status bw_limits_set_max_filter_bytes(bw_limits *limits, uint64_t bytes);
/* Decode only the codings of a profile (BW_PROFILE_CORE or BW_PROFILE_FULL, the default;
 * the name as the library parses it): a frame of another registry coding is
 * BW_ERR_UNSUPPORTED_CODING. */
bw_status bw_limits_set_profile(bw_limits *limits, const char *profile);
void bw_limits_free(bw_limits *limits);

/* ---------------------------------------------------------------------------------------
 * Planning m and k: for a byte budget on the wire or a false positive target (the paper's
 * optimizer). A NULL optimizer means the defaults (standard layout, xxHash64 seed 0,
 * integer k up to 16, the default limits).
 * Ownership: bw_optimizer_new/free; a bw_plan from bw_plan_for_* is freed by bw_plan_free.
 * ------------------------------------------------------------------------------------- */

typedef struct bw_optimizer bw_optimizer;
typedef struct bw_plan bw_plan;

typedef struct bw_plan_info {
    uint64_t n;                 /* keys planned for */
    uint64_t m;                 /* bits */
    double k;                   /* hash functions per key */
    uint32_t k_ceil;
    bw_layout layout;
    const char *coding;         /* the coding the plan sized; owned by the plan */
    double false_positive_rate; /* expected */
    double expected_bytes;      /* frame bytes expected */
    uint64_t worst_case_bytes;  /* exceeded with probability at most 1e-6 */
    double bits_per_element;    /* on the wire */
    uint64_t receiver_bytes;    /* memory of the decoded filter */
} bw_plan_info;

bw_status bw_optimizer_new(bw_optimizer **out);
bw_status bw_optimizer_set_limits(bw_optimizer *o, const bw_limits *limits);
bw_status bw_optimizer_set_layout(bw_optimizer *o, int layout); /* a bw_layout */
bw_status bw_optimizer_set_seed(bw_optimizer *o, uint64_t seed);
bw_status bw_optimizer_set_siphash_key(bw_optimizer *o, const uint8_t *key, size_t len); /* 16 */
bw_status bw_optimizer_set_k_range(bw_optimizer *o, uint32_t min_k, uint32_t max_k);
bw_status bw_optimizer_set_max_m(bw_optimizer *o, uint64_t max_m);
bw_status bw_optimizer_set_coding(bw_optimizer *o, const char *name); /* "raw", "known-p"... */
void bw_optimizer_free(bw_optimizer *o);

/* The least false positive rate for n keys in frames of at most budget_bytes. */
bw_status bw_plan_for_budget(const bw_optimizer *o, uint64_t n, uint64_t budget_bytes,
                             bw_plan **out);
/* The smallest frames for n keys at a false positive rate of at most target_fpr. */
bw_status bw_plan_for_rate(const bw_optimizer *o, uint64_t n, double target_fpr, bw_plan **out);
bw_status bw_plan_get(const bw_plan *plan, bw_plan_info *out);
void bw_plan_free(bw_plan *plan);

/* ---------------------------------------------------------------------------------------
 * Filters: a Bloom filter or a counting filter.
 * Ownership: made by bw_filter_new_*, bw_filter_clone, bw_decode, bw_receiver_filter;
 * freed by bw_filter_free. Keys are any bytes (NULL with length 0 is the empty key).
 * ------------------------------------------------------------------------------------- */

typedef struct bw_filter bw_filter;

typedef struct bw_filter_info {
    bw_kind kind;          /* BW_KIND_BLOOM or BW_KIND_COUNTING */
    uint64_t m;            /* bits, or counters */
    double k;
    uint32_t k_ceil;
    bw_layout layout;      /* of the bits, or of the counters */
    uint8_t counter_width; /* bits per counter; 0 for a Bloom filter */
    uint64_t n;            /* keys inserted (the sender's count, when decoded) */
    uint32_t digest;       /* the digest deltas name generations by (spec 5.1) */
} bw_filter_info;

/* m bits, k hash functions, standard layout, xxHash64 with seed, enhanced double hashing. */
bw_status bw_filter_new_bloom(uint64_t m, uint32_t k, uint64_t seed, bw_filter **out);
/* m counters of width bits (1 to 8), otherwise as bw_filter_new_bloom. */
bw_status bw_filter_new_counting(uint64_t m, uint32_t k, uint8_t width, uint64_t seed,
                                 bw_filter **out);
/* The plan's parameters: a Bloom filter for counter_width 0, else a counting filter. */
bw_status bw_filter_new_from_plan(const bw_plan *plan, uint8_t counter_width, bw_filter **out);
bw_status bw_filter_insert(bw_filter *filter, const void *key, size_t len);
/* *out: whether the key may be in the set (false: certainly not). */
bw_status bw_filter_contains(const bw_filter *filter, const void *key, size_t len, bool *out);
/* Counting filters only; a key not in the filter is BW_ERR_INVALID_PARAMETER. */
bw_status bw_filter_remove(bw_filter *filter, const void *key, size_t len);
/* into |= other: bits OR-ed, or counters added (saturating). Same parameters and kind, else
 * BW_ERR_INCOMPATIBLE and nothing changes. into and other may be the same handle. */
bw_status bw_filter_union(bw_filter *into, const bw_filter *other);
/* One bits (Bloom) or non-zero counters (counting). */
bw_status bw_filter_count_ones(const bw_filter *filter, uint64_t *out);
bw_status bw_filter_get_info(const bw_filter *filter, bw_filter_info *out);
/* The contents as a raw payload has them: ceil(m/8) bytes of bits (bit i in byte i/8 at bit
 * i%8), or the counters packed width bits each. Into buf of cap bytes; *len gets the length,
 * and BW_ERR_BUFFER_TOO_SMALL says the buffer is short (cap 0 asks for the length). */
bw_status bw_filter_export(const bw_filter *filter, uint8_t *buf, size_t cap, size_t *len);
bw_status bw_filter_clone(const bw_filter *filter, bw_filter **out);
void bw_filter_free(bw_filter *filter);

/* ---------------------------------------------------------------------------------------
 * Encoding: a filter into a frame.
 * Ownership: bw_encoder_new/free; the encoder copies what the setters are given.
 * ------------------------------------------------------------------------------------- */

typedef struct bw_encoder bw_encoder;

/* An encoder of BW_KIND_BLOOM or BW_KIND_COUNTING filters, with the library's defaults:
 * the coding predicted smallest (then fastest), automatic chunking, no metadata, no key,
 * no budget. */
bw_status bw_encoder_new(int kind, bw_encoder **out);
/* Code with the coding of this name, as the library parses it ("raw", "adaptive",
 * "known-p", "known-p-symbols", "known-p-interleaved", "positional", "small", "wide",
 * "escape"; counting: "raw", "known-counters", "adaptive-counters"), or raw when that is
 * not smaller ("adaptive" is deprecated: read by every decoder, never chosen by default). An unknown name is BW_ERR_INVALID_PARAMETER with the list in the message.
 * NULL: the library's choice again. */
bw_status bw_encoder_set_coding(bw_encoder *e, const char *name);
/* BW_CHUNKING_AUTO, BW_CHUNKING_NEVER, or chunks of 2^chunking bits (6 to 47). */
bw_status bw_encoder_set_chunking(bw_encoder *e, int32_t chunking);
/* Application metadata for every frame (flags bit 3); length 0: none. */
bw_status bw_encoder_set_metadata(bw_encoder *e, const uint8_t *metadata, size_t len);
/* Tag every frame with this BW_KEY_LEN-byte key (flags bit 2); NULL with 0: no tag. */
bw_status bw_encoder_set_key(bw_encoder *e, const uint8_t *key, size_t len);
/* Write only the codings of a profile: BW_PROFILE_CORE (what every decoder reads, for a
 * sender that does not know its receivers) or BW_PROFILE_FULL (the default). A coding set
 * by name outside the profile makes encoding fail with BW_ERR_INVALID_PARAMETER. */
bw_status bw_encoder_set_profile(bw_encoder *e, const char *profile);
/* Fail with BW_ERR_OVER_BUDGET unless the frame fits in bytes; 0: no budget. */
bw_status bw_encoder_set_budget(bw_encoder *e, size_t bytes);
void bw_encoder_free(bw_encoder *e);

/* A full frame of the filter carrying generation (0 when unnumbered), into buf of cap
 * bytes: *len gets its length; BW_ERR_BUFFER_TOO_SMALL when it is longer than cap (the next
 * call encodes again). */
bw_status bw_encode(const bw_encoder *e, const bw_filter *filter, uint64_t generation,
                    uint8_t *buf, size_t cap, size_t *len);
/* The same into a buffer the library allocates: *out (NULL on failure), *len; free it with
 * bw_bytes_free. */
bw_status bw_encode_alloc(const bw_encoder *e, const bw_filter *filter, uint64_t generation,
                          uint8_t **out, size_t *len);
/* Free a buffer of the library's; NULL does nothing. */
void bw_bytes_free(uint8_t *bytes);

/* ---------------------------------------------------------------------------------------
 * Encoder contexts (zstd's ZSTD_CCtx): the memory an encode reuses from one call to the
 * next (the payload, the coders' stacks, the frame's bytes), kept in a handle the caller
 * owns instead of the calling thread's pool (bw_release_thread_scratch). A repeated encode
 * through one context takes no fresh memory once warm; the frames are byte for byte those
 * of bw_encode. A context keeps at most 64 MiB (and its frame's bytes).
 * Ownership: bw_scratch_new/free. Thread-safety: a context serves one call at a time
 * (it is changed by each encode), on any thread.
 * ------------------------------------------------------------------------------------- */

typedef struct bw_scratch bw_scratch;

bw_status bw_scratch_new(bw_scratch **out);
/* Free the context and the memory it keeps; NULL does nothing. */
void bw_scratch_free(bw_scratch *s);
/* The bytes the context keeps for its next encodes. */
bw_status bw_scratch_bytes(const bw_scratch *s, size_t *bytes);
/* bw_encode through the context s: the same frame, the same errors (BW_ERR_BUFFER_TOO_SMALL
 * with *len the length needed), the memory taken from and given back to s. */
bw_status bw_encode_scratch(bw_scratch *s, const bw_encoder *e, const bw_filter *filter,
                            uint64_t generation, uint8_t *buf, size_t cap, size_t *len);

/* ---------------------------------------------------------------------------------------
 * Decoding. Keys: NULL with 0 for none, else BW_KEY_LEN bytes; with a key only frames
 * tagged with it decode (BW_ERR_MISSING_TAG, BW_ERR_BAD_TAG, checked before the payload is
 * read); without one a tag is skipped (BW_TAG_UNVERIFIED).
 * ------------------------------------------------------------------------------------- */

/* The one full frame frame[0..len) holds, as a new filter (*out; NULL on failure). A delta
 * is BW_ERR_UNEXPECTED_DELTA: give deltas to a bw_receiver. */
bw_status bw_decode(const uint8_t *frame, size_t len, const bw_limits *limits,
                    const uint8_t *key, size_t key_len, bw_filter **out);

/* The length of the whole frame that starts input[0..len), from its header alone (checked
 * within limits): how many bytes a stream reader waits for before bw_decode or
 * bw_receiver_receive. BW_ERR_INCOMPLETE while the header itself is cut (bw_error.needed:
 * more bytes at least). Nothing past the header is checked. */
bw_status bw_frame_len(const uint8_t *input, size_t len, const bw_limits *limits, size_t *out);

typedef struct bw_frame_info bw_frame_info;

typedef enum bw_tag_status {
    BW_TAG_ABSENT = 0,     /* no tag */
    BW_TAG_UNVERIFIED = 1, /* a tag, read without a key: nothing says who made it */
    BW_TAG_VERIFIED = 2,   /* a tag the key verified */
    BW_TAG_BAD = 3,        /* a tag the key does not give */
    BW_TAG_UNCHECKED = 4   /* a tag not checked: an earlier check failed */
} bw_tag_status;

typedef enum bw_checksum_status {
    BW_CHECKSUM_OK = 0,
    BW_CHECKSUM_MISMATCH = 1,
    BW_CHECKSUM_MISSING = 2 /* the input ends before it */
} bw_checksum_status;

#define BW_FRAME_FULL 0
#define BW_FRAME_DELTA 1

/* What a frame says, as the program's `bloomwire inspect` prints it. Pointers are owned by
 * the bw_frame_info and valid until it is freed. */
typedef struct bw_frame_desc {
    uint32_t kind;             /* BW_FRAME_FULL or BW_FRAME_DELTA */
    uint64_t generation;
    bool restart;              /* flags bit 1 */
    uint64_t base_generation;  /* a delta's; 0 for a full frame */
    uint32_t base_digest;
    uint32_t result_digest;
    uint8_t filter_type;       /* 0..2 the layouts, 3 counting */
    bw_layout layout;          /* of the bits, or of the counters */
    uint8_t counter_width;     /* 0 for a Bloom filter */
    uint8_t base_hash;         /* 0 opaque, 1 xxHash64, 2 SipHash-2-4 */
    uint64_t seed;             /* xxHash64's */
    uint64_t siphash_k0;
    uint64_t siphash_k1;
    uint8_t index_scheme;      /* 0 double hashing, 1 enhanced */
    uint64_t m;
    double k;
    uint32_t k_ceil;
    uint64_t n;                /* keys the sender inserted */
    uint8_t coding;            /* wire id */
    const char *coding_name;
    const char *coding_profile; /* "core" or "full": the profile that has the coding */
    const char *coding_status;  /* "active" or "deprecated" (read, not written) */
    bool has_q0;
    uint16_t q0;               /* p0 * 65536 */
    uint8_t chunk_shift;       /* 0 when not chunked */
    uint64_t chunk_count;
    uint64_t header_len;
    uint64_t payload_len;
    uint64_t frame_len;        /* header, payload, checksum and tag */
    bw_checksum_status checksum;
    uint32_t checksum_stored;
    uint32_t checksum_computed;
    bw_tag_status tag;
    const uint8_t *metadata;   /* NULL when absent */
    size_t metadata_len;
    bool decoded;              /* the payload decoded: ones holds */
    uint64_t ones;             /* one bits (a delta's changed bits; non-zero counters) */
    bw_status problem;         /* the first check the frame fails as a decoder checks it
                                * (BW_OK: none; a sound delta is BW_OK here, where bw_decode
                                * says BW_ERR_UNEXPECTED_DELTA), or BW_ERR_TRAILING_BYTES */
    const char *problem_message; /* NULL when none */
    const char *problem_field;   /* NULL when none */
} bw_frame_desc;

/* Describe the frame at the start of frame[0..len): any kind (full, delta, counting). The
 * header is read without limits, then the frame checked and decoded within limits and
 * with the key; the first check it fails is desc.problem, not the call's status, which
 * fails only when the header does not parse. *out is freed with bw_frame_info_free. */
bw_status bw_inspect(const uint8_t *frame, size_t len, const bw_limits *limits,
                     const uint8_t *key, size_t key_len, bw_frame_info **out);
bw_status bw_frame_info_get(const bw_frame_info *info, bw_frame_desc *out);
void bw_frame_info_free(bw_frame_info *info);

/* ---------------------------------------------------------------------------------------
 * Deltas between generations: a sender and a receiver.
 * Ownership: bw_sender_new/free, bw_receiver_new/free. A sender's frame (*frame) points
 * into the sender: valid until the sender's next call or its free; copy it to keep it.
 * ------------------------------------------------------------------------------------- */

typedef struct bw_sender bw_sender;
typedef struct bw_receiver bw_receiver;

typedef struct bw_update {
    uint64_t generation; /* held now */
    bool full;           /* a full frame replaced the filter (else a delta advanced it) */
    uint64_t skipped;    /* generations never received (0 for a delta) */
} bw_update;

/* A sender of the encoder's kind and settings (copied now), a full frame at least every
 * full_every generations (0 is read as 1). */
bw_status bw_sender_new(const bw_encoder *e, uint64_t full_every, bw_sender **out);
/* The frame of the filter's next generation: a delta against the generation sent last
 * when allowed and smaller, else a full frame (the first one carries the restart flag).
 * On failure the sender is as it was. */
bw_status bw_sender_next_frame(bw_sender *s, const bw_filter *filter, const uint8_t **frame,
                               size_t *len);
/* The same, given what changed since the generation sent last: the positions of the bits
 * that flipped (increasing, each once, below m) and the new count of keys n; it costs what
 * changed. Bloom filters only, after a first frame. */
bw_status bw_sender_next_frame_with_flips(bw_sender *s, const uint64_t *positions,
                                          size_t count, uint64_t n, const uint8_t **frame,
                                          size_t *len);
/* A full frame of the generation sent last, with the restart flag, for one late joiner;
 * the sender's state does not change. */
bw_status bw_sender_full_frame(bw_sender *s, const uint8_t **frame, size_t *len);
/* Make the next frame full (a receiver asked to resynchronize). */
bw_status bw_sender_request_full(bw_sender *s);
/* The generation of the last frame made (0 before the first). */
bw_status bw_sender_generation(const bw_sender *s, uint64_t *out);
void bw_sender_free(bw_sender *s);

/* A receiver of kind (BW_KIND_BLOOM, BW_KIND_COUNTING, BW_KIND_ANY) with no filter yet. */
bw_status bw_receiver_new(int kind, const bw_limits *limits, const uint8_t *key,
                          size_t key_len, bw_receiver **out);
/* Decode and apply exactly one frame; out may be NULL. Every error leaves the receiver as
 * it was: BW_ERR_STALE_GENERATION (ignore the frame), BW_ERR_GENERATION_GAP,
 * BW_ERR_BASE_MISMATCH, BW_ERR_RESULT_MISMATCH (ask for a full frame), the decoder's. */
bw_status bw_receiver_receive(bw_receiver *r, const uint8_t *frame, size_t len,
                              bw_update *out);
/* Whether a filter is held, and its generation (0 when none). */
bw_status bw_receiver_generation(const bw_receiver *r, bool *has, uint64_t *generation);
/* A copy of the filter held (*out NULL, and BW_OK, before a full frame); caller frees it. */
bw_status bw_receiver_filter(const bw_receiver *r, bw_filter **out);
/* Forget the filter and generation (kind, limits and key kept): the next full frame is
 * taken whatever its generation. */
bw_status bw_receiver_restart(bw_receiver *r);
void bw_receiver_free(bw_receiver *r);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BLOOMWIRE_H */
