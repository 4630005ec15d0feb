//! `bw_sender`: a filter's generations as deltas or full frames, whichever is smaller (the
//! library's `Sender`), each frame in the sender's own buffer.

use bloomwire::{AnyFilter, BloomFilter, CountingBloomFilter};

use crate::encoder::{kind_mismatch, Encoder};
use crate::error::{guard, guard_void, Fail};
use crate::filter::Filter;
use crate::ptr::{free_handle, handle, handle_mut, new_handle_from, slice_in, Out};
use crate::status::Status;

/// The library's sender of either kind.
#[derive(Debug)]
enum Inner {
    Bloom(bloomwire::Sender<BloomFilter>),
    Counting(bloomwire::Sender<CountingBloomFilter>),
}

/// A sender (`bw_sender`) and the buffer its last frame is in.
#[derive(Debug)]
pub struct Sender {
    inner: Inner,
    frame: Vec<u8>,
}

/// `bw_status bw_sender_new(const bw_encoder *e, uint64_t full_every, bw_sender **out)`: a
/// sender of the encoder's filter kind, its frames made with the encoder's settings (taken
/// now), a full frame at least every `full_every` generations (0 is read as 1).
///
/// # Safety
///
/// `encoder` is NULL or a live `bw_encoder`; `out` NULL or a writable `bw_sender *`.
#[no_mangle]
pub unsafe extern "C" fn bw_sender_new(
    encoder: *const Encoder,
    full_every: u64,
    out: *mut *mut Sender,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        new_handle_from(encoder, "encoder", out, |encoder| {
            let inner = if encoder.is_counting() {
                Inner::Counting(bloomwire::Sender::new(encoder.counting(), full_every))
            } else {
                Inner::Bloom(bloomwire::Sender::new(encoder.bloom(), full_every))
            };
            Ok(Sender {
                inner,
                frame: Vec::new(),
            })
        })
    }
}

/// Run `step` on the sender at `sender`, and hand its frame to `*frame`, `*len`.
///
/// # Safety
///
/// `sender` is NULL or a live `bw_sender` no other call uses; `frame`, `len` NULL or
/// writable.
unsafe fn step(
    sender: *mut Sender,
    frame: *mut *const u8,
    len: *mut usize,
    step: impl FnOnce(&mut Inner, &mut Vec<u8>) -> Result<(), Fail>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (sender, frame, len) = unsafe {
            (
                handle_mut(sender, "sender")?,
                Out::new(frame, "frame")?,
                Out::new(len, "len")?,
            )
        };
        frame.put(core::ptr::null());
        len.put(0);
        step(&mut sender.inner, &mut sender.frame)?;
        frame.put(sender.frame.as_ptr());
        len.put(sender.frame.len());
        Ok(())
    })
}

/// `bw_status bw_sender_next_frame(bw_sender *s, const bw_filter *filter, const uint8_t
/// **frame, size_t *len)`: the frame of the filter's next generation (a delta against the
/// generation sent last when one is allowed and smaller, else a full frame). `*frame`
/// points into the sender and stays valid until its next call or its free. On failure
/// the sender's state is as it was.
///
/// # Safety
///
/// `sender` is NULL or a live `bw_sender` no other call uses; `filter` NULL or a live
/// `bw_filter` no call changes meanwhile; `frame`, `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn bw_sender_next_frame(
    sender: *mut Sender,
    filter: *const Filter,
    frame: *mut *const u8,
    len: *mut usize,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        step(sender, frame, len, |s, buf| {
            let filter = handle(filter, "filter")?;
            match (s, &filter.0) {
                (Inner::Bloom(s), AnyFilter::Bloom(f)) => s.next_frame_into(f, buf)?,
                (Inner::Counting(s), AnyFilter::Counting(f)) => s.next_frame_into(f, buf)?,
                (s, _) => return Err(kind_mismatch(matches!(s, Inner::Counting(_)))),
            };
            Ok(())
        })
    }
}

/// `bw_status bw_sender_next_frame_with_flips(bw_sender *s, const uint64_t *positions,
/// size_t count, uint64_t n, const uint8_t **frame, size_t *len)`: the next generation's
/// frame, given as the positions of the bits that flipped since the generation sent last
/// (increasing, each once, below m) and the new count of keys `n`; the frame is the one
/// `bw_sender_next_frame` makes for the filter with those bits flipped, at the cost of
/// what changed. Bloom filters only, after a first frame.
///
/// # Safety
///
/// `sender` is NULL or a live `bw_sender` no other call uses; `positions` NULL or `count`
/// readable `uint64_t`; `frame`, `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn bw_sender_next_frame_with_flips(
    sender: *mut Sender,
    positions: *const u64,
    count: usize,
    n: u64,
    frame: *mut *const u8,
    len: *mut usize,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        step(sender, frame, len, |s, buf| {
            let flips = slice_in(positions, count, "positions")?;
            let Inner::Bloom(s) = s else {
                return Err(Fail::arg("a sender of counting filters has no flips"));
            };
            buf.clear();
            s.next_frame_with_flips(flips, n)?.write_to(buf);
            Ok(())
        })
    }
}

/// `bw_status bw_sender_full_frame(bw_sender *s, const uint8_t **frame, size_t *len)`: a
/// full frame of the generation sent last, with the restart flag, for one receiver that
/// joins late; the sender's state does not change (`BW_ERR_INVALID_PARAMETER` before the
/// first frame). `*frame` as in `bw_sender_next_frame`.
///
/// # Safety
///
/// `sender` is NULL or a live `bw_sender` no other call uses; `frame`, `len` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn bw_sender_full_frame(
    sender: *mut Sender,
    frame: *mut *const u8,
    len: *mut usize,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        step(sender, frame, len, |s, buf| {
            let full = match s {
                Inner::Bloom(s) => s.full_frame()?,
                Inner::Counting(s) => s.full_frame()?,
            };
            buf.clear();
            full.write_to(buf);
            Ok(())
        })
    }
}

/// `bw_status bw_sender_request_full(bw_sender *s)`: make the next frame a full one (a
/// receiver asked to resynchronize); it carries the restart flag.
///
/// # Safety
///
/// `sender` is NULL or a live `bw_sender` no other call uses.
#[no_mangle]
pub unsafe extern "C" fn bw_sender_request_full(sender: *mut Sender) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantee, passed on.
        match &mut unsafe { handle_mut(sender, "sender") }?.inner {
            Inner::Bloom(s) => s.request_full(),
            Inner::Counting(s) => s.request_full(),
        }
        Ok(())
    })
}

/// `bw_status bw_sender_generation(const bw_sender *s, uint64_t *out)`: the generation of
/// the last frame made (0 before the first).
///
/// # Safety
///
/// `sender` is NULL or a live `bw_sender` no call changes meanwhile; `out` NULL or a
/// writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn bw_sender_generation(sender: *const Sender, out: *mut u64) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (sender, out) = unsafe { (handle(sender, "sender")?, Out::new(out, "out")?) };
        out.put(match &sender.inner {
            Inner::Bloom(s) => s.generation(),
            Inner::Counting(s) => s.generation(),
        });
        Ok(())
    })
}

/// `void bw_sender_free(bw_sender *s)`; NULL does nothing.
///
/// # Safety
///
/// `sender` is NULL or a live `bw_sender` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_sender_free(sender: *mut Sender) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(sender) });
}
