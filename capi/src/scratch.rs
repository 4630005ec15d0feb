//! `bw_scratch`: an encoder context the caller owns (zstd's `ZSTD_CCtx`), the library's
//! `Scratch`: the memory an encode reuses, kept in the handle rather than in the calling
//! thread's pool.

use bloomwire::AnyFilter;

use crate::bytes::Sink;
use crate::encoder::{kind_mismatch, Encoder};
use crate::error::{guard, guard_void};
use crate::filter::Filter;
use crate::ptr::{free_handle, handle, handle_mut, new_handle, Out};
use crate::status::Status;

/// An encoder context (`bw_scratch`): the library's `Scratch`, and the buffer its frames'
/// bytes are written into before they are copied out.
#[derive(Debug, Default)]
pub struct Scratch {
    scratch: bloomwire::Scratch,
    bytes: Vec<u8>,
}

impl Scratch {
    /// Bytes the context keeps.
    fn held(&self) -> usize {
        self.scratch.bytes() + self.bytes.capacity()
    }
}

/// `bw_status bw_scratch_new(bw_scratch **out)`: an empty encoder context, which keeps at
/// most 64 MiB between encodes.
///
/// # Safety
///
/// `out` is NULL or points to a writable `bw_scratch *`.
#[no_mangle]
pub unsafe extern "C" fn bw_scratch_new(out: *mut *mut Scratch) -> Status {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { new_handle(out, || Ok(Scratch::default())) }
}

/// `void bw_scratch_free(bw_scratch *s)`: free the context and the memory it keeps; NULL
/// does nothing.
///
/// # Safety
///
/// `scratch` is NULL or a live `bw_scratch` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_scratch_free(scratch: *mut Scratch) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(scratch) });
}

/// `bw_status bw_scratch_bytes(const bw_scratch *s, size_t *bytes)`: the bytes the context
/// keeps for its next encodes.
///
/// # Safety
///
/// `scratch` is NULL or a live `bw_scratch` no call changes meanwhile; `bytes` NULL or a
/// writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn bw_scratch_bytes(scratch: *const Scratch, bytes: *mut usize) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (out, scratch) = unsafe { (Out::new(bytes, "bytes")?, handle(scratch, "scratch")?) };
        out.put(scratch.held());
        Ok(())
    })
}

/// `bw_status bw_encode_scratch(bw_scratch *s, const bw_encoder *e, const bw_filter
/// *filter, uint64_t generation, uint8_t *buf, size_t cap, size_t *len)`: `bw_encode`
/// (the same bytes, the same errors) with the memory the encode reuses taken from and
/// given back to the context `s`, not the calling thread's.
///
/// # Safety
///
/// `scratch` NULL or a live `bw_scratch` no other call uses; `encoder`, `filter` NULL or
/// live handles no call changes meanwhile; `buf` NULL or `cap` writable bytes; `len` NULL
/// or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn bw_encode_scratch(
    scratch: *mut Scratch,
    encoder: *const Encoder,
    filter: *const Filter,
    generation: u64,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let sink = unsafe { Sink::caller(buf, cap, len) }?;
        // SAFETY: the caller's guarantees, passed on.
        let (scratch, encoder, filter) = unsafe {
            (
                handle_mut(scratch, "scratch")?,
                handle(encoder, "encoder")?,
                handle(filter, "filter")?,
            )
        };
        let s = &mut scratch.scratch;
        let frame = match (&filter.0, encoder.is_counting()) {
            (AnyFilter::Bloom(f), false) => encoder.bloom().encode_generation_in(s, f, generation),
            (AnyFilter::Counting(f), true) => {
                encoder.counting().encode_generation_in(s, f, generation)
            }
            _ => return Err(kind_mismatch(encoder.is_counting())),
        }?;
        scratch.bytes.clear();
        frame.write_to(&mut scratch.bytes);
        scratch.scratch.recycle(frame);
        sink.deliver(&scratch.bytes)
    })
}
