//! `bw_encoder`: what frames are made with (the library's `Encoder`, for one filter kind),
//! and encoding a filter into the caller's buffer or one the library allocates.

use core::ffi::c_char;

use bloomwire::{
    AnyFilter, BitCoding, BloomFilter, Chunking, CounterCoding, CountingBloomFilter, FrameKey,
    Profile,
};

use crate::bytes::Sink;
use crate::error::{guard, guard_void, Fail};
use crate::filter::{Filter, KIND_BLOOM, KIND_COUNTING};
use crate::ptr::{bytes_in, free_handle, handle, key_in, str_in, OutHandle};
use crate::setter::setters;
use crate::status::Status;

/// `BW_CHUNKING_AUTO`: chunk large Bloom filters (the default).
pub const CHUNKING_AUTO: i32 = -1;
/// `BW_CHUNKING_NEVER`: one payload for the whole filter.
pub const CHUNKING_NEVER: i32 = 0;

/// The coding asked for, of the encoder's kind.
#[derive(Debug, Clone, Copy)]
enum Coding {
    /// The library's choice.
    Default,
    Bits(BitCoding),
    Counters(CounterCoding),
}

/// An encoder's settings (`bw_encoder`); the library's `Encoder` is built from them for
/// each call.
#[derive(Debug, Clone)]
pub struct Encoder {
    counting: bool,
    coding: Coding,
    chunking: Chunking,
    metadata: Vec<u8>,
    key: Option<FrameKey>,
    budget: Option<usize>,
    profile: Profile,
}

impl Encoder {
    /// The library's encoder of a settings' common part.
    fn common<F: bloomwire::Filter>(&self, mut e: bloomwire::Encoder<F>) -> bloomwire::Encoder<F> {
        e = e
            .chunking(self.chunking)
            .metadata(self.metadata.clone())
            .profile(self.profile);
        if let Some(key) = &self.key {
            e = e.key(key.clone());
        }
        if let Some(budget) = self.budget {
            e = e.budget(budget);
        }
        e
    }

    /// The library's encoder of Bloom filters.
    pub(crate) fn bloom(&self) -> bloomwire::Encoder<BloomFilter> {
        let mut e = bloomwire::Encoder::new();
        if let Coding::Bits(c) = self.coding {
            e = e.coding(c);
        }
        self.common(e)
    }

    /// The library's encoder of counting filters.
    pub(crate) fn counting(&self) -> bloomwire::Encoder<CountingBloomFilter> {
        let mut e = bloomwire::Encoder::new();
        if let Coding::Counters(c) = self.coding {
            e = e.coding(c);
        }
        self.common(e)
    }

    /// Whether it encodes counting filters.
    pub(crate) fn is_counting(&self) -> bool {
        self.counting
    }

    /// A full frame of `filter` carrying `generation`, into `out`.
    fn encode(&self, filter: &AnyFilter, generation: u64, out: &mut Vec<u8>) -> Result<(), Fail> {
        match (filter, self.counting) {
            (AnyFilter::Bloom(f), false) => self.bloom().encode_into(f, generation, out)?,
            (AnyFilter::Counting(f), true) => self.counting().encode_into(f, generation, out)?,
            _ => return Err(kind_mismatch(self.counting)),
        };
        Ok(())
    }
}

/// The error for a filter of the other kind than an encoder's or a sender's.
pub(crate) fn kind_mismatch(counting: bool) -> Fail {
    Fail::arg(if counting {
        "a Bloom filter given to an encoder of counting filters"
    } else {
        "a counting filter given to an encoder of Bloom filters"
    })
}

/// `bw_status bw_encoder_new(bw_kind kind, bw_encoder **out)`: an encoder of Bloom filters
/// (`BW_KIND_BLOOM`) or of counting filters (`BW_KIND_COUNTING`), with the library's
/// defaults: the coding it predicts smallest and fastest, automatic chunking, no metadata,
/// no key, no budget, the full profile.
///
/// # Safety
///
/// `out` is NULL or points to a writable `bw_encoder *`.
#[no_mangle]
pub unsafe extern "C" fn bw_encoder_new(kind: core::ffi::c_int, out: *mut *mut Encoder) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantee, passed on.
        let out = unsafe { OutHandle::new(out, "out") }?;
        let counting = match kind {
            KIND_BLOOM => false,
            KIND_COUNTING => true,
            _ => {
                return Err(Fail::arg(format!(
                    "kind {kind}: BW_KIND_BLOOM or BW_KIND_COUNTING"
                )))
            }
        };
        out.put(Encoder {
            counting,
            coding: Coding::Default,
            chunking: Chunking::Auto,
            metadata: Vec::new(),
            key: None,
            budget: None,
            profile: Profile::default(),
        });
        Ok(())
    })
}

setters! {
    /// `bw_status bw_encoder_set_coding(bw_encoder *e, const char *name)`: code with the
    /// coding of this name (as the library's parser reads it: `"known-p"`, `"positional"`,
    /// `"known-counters"`, ...; a coding of the other filter kind is
    /// `BW_ERR_INVALID_PARAMETER`), or raw when it is not smaller. NULL: the library's choice
    /// again.
    ///
    /// # Safety
    ///
    /// `encoder` is NULL or a live `bw_encoder` no other call uses; `name` NULL or a
    /// NUL-terminated string.
    fn bw_encoder_set_coding(encoder: *mut Encoder, name: *const c_char) |e| {
        e.coding = if name.is_null() {
            Coding::Default
        } else {
            // SAFETY: the caller's guarantee, passed on.
            let name = unsafe { str_in(name, "name") }?;
            if e.counting {
                Coding::Counters(name.parse()?)
            } else {
                Coding::Bits(name.parse()?)
            }
        };
    }

    /// `bw_status bw_encoder_set_chunking(bw_encoder *e, int32_t chunking)`:
    /// `BW_CHUNKING_AUTO`, `BW_CHUNKING_NEVER`, or chunks of `2^chunking` bits (6 to 47).
    ///
    /// # Safety
    ///
    /// `encoder` is NULL or a live `bw_encoder` no other call uses.
    fn bw_encoder_set_chunking(encoder: *mut Encoder, chunking: i32) |e| {
        e.chunking = match chunking {
            CHUNKING_AUTO => Chunking::Auto,
            CHUNKING_NEVER => Chunking::Never,
            6..=47 => Chunking::Shift(chunking as u8),
            _ => return Err(Fail::arg(format!("chunking {chunking}: -1, 0 or 6 to 47"))),
        };
    }

    /// `bw_status bw_encoder_set_metadata(bw_encoder *e, const uint8_t *metadata, size_t
    /// len)`: attach these bytes to every frame (flags bit 3); none for length 0.
    ///
    /// # Safety
    ///
    /// `encoder` is NULL or a live `bw_encoder` no other call uses; `metadata` NULL or `len`
    /// readable bytes.
    fn bw_encoder_set_metadata(encoder: *mut Encoder, metadata: *const u8, len: usize) |e| {
        // SAFETY: the caller's guarantee, passed on.
        e.metadata = unsafe { bytes_in(metadata, len, "metadata") }?.to_vec();
    }

    /// `bw_status bw_encoder_set_key(bw_encoder *e, const uint8_t *key, size_t len)`: tag
    /// every frame with this 32-byte key (flags bit 2); NULL with 0: no tag.
    ///
    /// # Safety
    ///
    /// `encoder` is NULL or a live `bw_encoder` no other call uses; `key` NULL or `len`
    /// readable bytes.
    fn bw_encoder_set_key(encoder: *mut Encoder, key: *const u8, len: usize) |e| {
        // SAFETY: the caller's guarantee, passed on.
        e.key = unsafe { key_in(key, len) }?;
    }

    /// `bw_status bw_encoder_set_budget(bw_encoder *e, size_t bytes)`: fail with
    /// `BW_ERR_OVER_BUDGET` unless the frame fits in `bytes`; 0: no budget.
    ///
    /// # Safety
    ///
    /// `encoder` is NULL or a live `bw_encoder` no other call uses.
    fn bw_encoder_set_budget(encoder: *mut Encoder, bytes: usize) |e| {
        e.budget = (bytes != 0).then_some(bytes);
    }

    /// `bw_status bw_encoder_set_profile(bw_encoder *e, const char *profile)`: write only the
    /// codings of this profile (`"core"`, which every conforming decoder reads, or `"full"`,
    /// the default), as the library parses its name. A coding named with
    /// `bw_encoder_set_coding` outside the profile makes encoding fail with
    /// `BW_ERR_INVALID_PARAMETER`.
    ///
    /// # Safety
    ///
    /// `encoder` is NULL or a live `bw_encoder` no other call uses; `profile` NULL or a
    /// NUL-terminated string.
    fn bw_encoder_set_profile(encoder: *mut Encoder, profile: *const c_char) |e| {
        // SAFETY: the caller's guarantee, passed on.
        e.profile = unsafe { str_in(profile, "profile") }?.parse()?;
    }
}

/// `void bw_encoder_free(bw_encoder *e)`; NULL does nothing.
///
/// # Safety
///
/// `encoder` is NULL or a live `bw_encoder` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_encoder_free(encoder: *mut Encoder) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(encoder) });
}

/// Encode with the handles `encoder` and `filter` into `sink`.
///
/// # Safety
///
/// `encoder` and `filter` are NULL or live handles no call changes meanwhile.
unsafe fn encode_to(
    encoder: *const Encoder,
    filter: *const Filter,
    generation: u64,
    sink: impl FnOnce() -> Result<Sink, Fail>,
) -> Status {
    guard(|| {
        let sink = sink()?;
        // SAFETY: the caller's guarantees, passed on.
        let (encoder, filter) = unsafe { (handle(encoder, "encoder")?, handle(filter, "filter")?) };
        let mut frame = Vec::new();
        encoder.encode(&filter.0, generation, &mut frame)?;
        sink.deliver(&frame)
    })
}

/// `bw_status bw_encode(const bw_encoder *e, const bw_filter *filter, uint64_t generation,
/// uint8_t *buf, size_t cap, size_t *len)`: a full frame of the filter carrying
/// `generation` (0 when the sender does not number its filters), into the caller's
/// buffer. The frame's length goes to `*len`; `BW_ERR_BUFFER_TOO_SMALL` when it is over
/// `cap` (`*len` then says how much is needed; the encoding is done again by the next
/// call).
///
/// # Safety
///
/// `encoder`, `filter` NULL or live handles no call changes meanwhile; `buf` NULL or `cap`
/// writable bytes; `len` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn bw_encode(
    encoder: *const Encoder,
    filter: *const Filter,
    generation: u64,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { encode_to(encoder, filter, generation, || Sink::caller(buf, cap, len)) }
}

/// `bw_status bw_encode_alloc(const bw_encoder *e, const bw_filter *filter, uint64_t
/// generation, uint8_t **out, size_t *len)`: as `bw_encode`, into a buffer the library
/// allocates: `*out` (NULL on failure), freed with `bw_bytes_free`.
///
/// # Safety
///
/// `encoder`, `filter` NULL or live handles no call changes meanwhile; `out` and `len`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn bw_encode_alloc(
    encoder: *const Encoder,
    filter: *const Filter,
    generation: u64,
    out: *mut *mut u8,
    len: *mut usize,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { encode_to(encoder, filter, generation, || Sink::library(out, len)) }
}
