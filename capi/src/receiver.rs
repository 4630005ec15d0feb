//! `bw_receiver`: applies a sender's frames in order (the library's `Receiver`), every gap,
//! duplicate or mismatch a typed error that leaves its filter unchanged.

use bloomwire::{AnyFilter, BloomFilter, CountingBloomFilter, FrameKey, Limits, Update};

use crate::decode::Checks;
use crate::error::{guard, guard_void, Fail};
use crate::filter::{Filter, KIND_ANY, KIND_BLOOM, KIND_COUNTING};
use crate::limits::Limits as CLimits;
use crate::ptr::{bytes_in, free_handle, handle, handle_mut, Out, OutHandle};
use crate::status::Status;

/// The library's receiver of one kind, or of either.
#[derive(Debug)]
enum Inner {
    Bloom(bloomwire::Receiver<BloomFilter>),
    Counting(bloomwire::Receiver<CountingBloomFilter>),
    Any(bloomwire::Receiver<AnyFilter>),
}

/// A receiver (`bw_receiver`), with what it was made with, for a restart.
#[derive(Debug)]
pub struct Receiver {
    inner: Inner,
    kind: i32,
    limits: Limits,
    key: Option<FrameKey>,
}

/// What a frame did (`bw_update`).
#[repr(C)]
#[derive(Debug)]
pub struct UpdateInfo {
    /// The generation the receiver holds now.
    pub generation: u64,
    /// Whether a full frame replaced the filter (else a delta advanced it).
    pub full: bool,
    /// Generations between the previous one and this one never received (0 for a delta).
    pub skipped: u64,
}

/// A receiver of `kind` with no filter.
fn fresh(kind: i32, limits: Limits, key: Option<&FrameKey>) -> Result<Inner, Fail> {
    fn keyed<F: bloomwire::Filter>(
        r: bloomwire::Receiver<F>,
        key: Option<&FrameKey>,
    ) -> bloomwire::Receiver<F> {
        match key {
            Some(key) => r.with_key(key.clone()),
            None => r,
        }
    }
    Ok(match kind {
        KIND_BLOOM => Inner::Bloom(keyed(bloomwire::Receiver::with_limits(limits), key)),
        KIND_COUNTING => Inner::Counting(keyed(bloomwire::Receiver::with_limits(limits), key)),
        KIND_ANY => Inner::Any(keyed(bloomwire::Receiver::with_limits(limits), key)),
        _ => {
            return Err(Fail::arg(format!(
                "kind {kind}: BW_KIND_BLOOM, BW_KIND_COUNTING or BW_KIND_ANY"
            )))
        }
    })
}

/// `bw_status bw_receiver_new(bw_kind kind, const bw_limits *limits, const uint8_t *key,
/// size_t key_len, bw_receiver **out)`: a receiver of Bloom filters, counting filters or
/// either (`BW_KIND_ANY`), with no filter yet, decoding within `limits` (NULL: the
/// defaults); with a 32-byte key it accepts only frames tagged with it.
///
/// # Safety
///
/// `limits` is NULL or a live `bw_limits`; `key` NULL or `key_len` readable bytes; `out`
/// NULL or a writable `bw_receiver *`.
#[no_mangle]
pub unsafe extern "C" fn bw_receiver_new(
    kind: core::ffi::c_int,
    limits: *const CLimits,
    key: *const u8,
    key_len: usize,
    out: *mut *mut Receiver,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (out, Checks { limits, key }) = unsafe {
            (
                OutHandle::new(out, "out")?,
                Checks::new(limits, key, key_len)?,
            )
        };
        out.put(Receiver {
            inner: fresh(kind, limits, key.as_ref())?,
            kind,
            limits,
            key,
        });
        Ok(())
    })
}

/// `bw_status bw_receiver_receive(bw_receiver *r, const uint8_t *frame, size_t len,
/// bw_update *out)`: decode and apply exactly one frame. `BW_ERR_STALE_GENERATION` (a
/// duplicate or late frame: ignore it), `BW_ERR_GENERATION_GAP`, `BW_ERR_BASE_MISMATCH`
/// and `BW_ERR_RESULT_MISMATCH` (ask the sender for a full frame) leave the receiver as
/// it was, as every other error does. `out` may be NULL.
///
/// # Safety
///
/// `receiver` is NULL or a live `bw_receiver` no other call uses; `frame` NULL or `len`
/// readable bytes; `out` NULL or a writable `bw_update`.
#[no_mangle]
pub unsafe extern "C" fn bw_receiver_receive(
    receiver: *mut Receiver,
    frame: *const u8,
    len: usize,
    out: *mut UpdateInfo,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (receiver, frame) = unsafe {
            (
                handle_mut(receiver, "receiver")?,
                bytes_in(frame, len, "frame")?,
            )
        };
        let out = if out.is_null() {
            None
        } else {
            // SAFETY: the caller's guarantee, passed on.
            Some(unsafe { Out::new(out, "out") }?)
        };
        let update: Update = match &mut receiver.inner {
            Inner::Bloom(r) => r.receive(frame)?,
            Inner::Counting(r) => r.receive(frame)?,
            Inner::Any(r) => r.receive(frame)?,
        };
        if let Some(out) = out {
            out.put(UpdateInfo {
                generation: update.generation(),
                full: update.is_full(),
                skipped: update.skipped(),
            });
        }
        Ok(())
    })
}

/// `bw_status bw_receiver_generation(const bw_receiver *r, bool *has, uint64_t
/// *generation)`: whether the receiver holds a filter, and its generation (0 when not).
///
/// # Safety
///
/// `receiver` is NULL or a live `bw_receiver` no call changes meanwhile; `has` and
/// `generation` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn bw_receiver_generation(
    receiver: *const Receiver,
    has: *mut bool,
    generation: *mut u64,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (receiver, has, generation) = unsafe {
            (
                handle(receiver, "receiver")?,
                Out::new(has, "has")?,
                Out::new(generation, "generation")?,
            )
        };
        let g = match &receiver.inner {
            Inner::Bloom(r) => r.generation(),
            Inner::Counting(r) => r.generation(),
            Inner::Any(r) => r.generation(),
        };
        has.put(g.is_some());
        generation.put(g.unwrap_or(0));
        Ok(())
    })
}

/// `bw_status bw_receiver_filter(const bw_receiver *r, bw_filter **out)`: a copy of the
/// filter the receiver holds (NULL, and `BW_OK`, before a full frame has arrived); the
/// caller frees it.
///
/// # Safety
///
/// `receiver` is NULL or a live `bw_receiver` no call changes meanwhile; `out` NULL or a
/// writable `bw_filter *`.
#[no_mangle]
pub unsafe extern "C" fn bw_receiver_filter(
    receiver: *const Receiver,
    out: *mut *mut Filter,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (receiver, out) =
            unsafe { (handle(receiver, "receiver")?, OutHandle::new(out, "out")?) };
        let filter = match &receiver.inner {
            Inner::Bloom(r) => r.filter().cloned().map(AnyFilter::Bloom),
            Inner::Counting(r) => r.filter().cloned().map(AnyFilter::Counting),
            Inner::Any(r) => r.filter().cloned(),
        };
        if let Some(f) = filter {
            out.put(Filter(f));
        }
        Ok(())
    })
}

/// `bw_status bw_receiver_restart(bw_receiver *r)`: forget the filter and its generation,
/// keeping the kind, limits and key: the next full frame is taken whatever its generation
/// (a receiver that starts over, e.g. after its sender restarted without the restart
/// flag).
///
/// # Safety
///
/// `receiver` is NULL or a live `bw_receiver` no other call uses.
#[no_mangle]
pub unsafe extern "C" fn bw_receiver_restart(receiver: *mut Receiver) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantee, passed on.
        let r = unsafe { handle_mut(receiver, "receiver") }?;
        r.inner = fresh(r.kind, r.limits, r.key.as_ref())?;
        Ok(())
    })
}

/// `void bw_receiver_free(bw_receiver *r)`; NULL does nothing.
///
/// # Safety
///
/// `receiver` is NULL or a live `bw_receiver` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_receiver_free(receiver: *mut Receiver) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(receiver) });
}
