//! `bw_filter`: a Bloom filter or a counting filter (the library's `AnyFilter`).

use bloomwire::{
    AnyFilter, BaseHash, BloomFilter, CountingBloomFilter, Error, HashFamily, IndexScheme, Params,
};

use crate::bytes::Sink;
use crate::error::{guard, guard_void, Fail};
use crate::plan::{layout_id, Plan};
use crate::ptr::{bytes_in, free_handle, handle, handle_mut, new_handle, new_handle_from, Out};
use crate::status::Status;

/// `BW_KIND_BLOOM`: a Bloom filter (filter types 0 to 2).
pub const KIND_BLOOM: i32 = 0;
/// `BW_KIND_COUNTING`: a counting filter (filter type 3).
pub const KIND_COUNTING: i32 = 1;
/// `BW_KIND_ANY`: either (receivers only).
pub const KIND_ANY: i32 = 2;

/// A filter (`bw_filter`).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter(pub(crate) AnyFilter);

/// What a filter is (`bw_filter_info`).
#[repr(C)]
#[derive(Debug)]
pub struct FilterInfo {
    /// `BW_KIND_BLOOM` or `BW_KIND_COUNTING`.
    pub kind: i32,
    /// Bits, or counters.
    pub m: u64,
    /// Hash functions per key.
    pub k: f64,
    /// `ceil(k)`.
    pub k_ceil: u32,
    /// `bw_layout` (for a counting filter, its counters' layout).
    pub layout: i32,
    /// Bits per counter; 0 for a Bloom filter.
    pub counter_width: u8,
    /// Keys inserted (the sender's count, for a decoded filter).
    pub n: u64,
    /// The digest deltas name generations by (spec 5.1).
    pub digest: u32,
}

/// The xxHash64 family with `seed` and the default index scheme.
fn family(seed: u64) -> HashFamily {
    HashFamily::new(BaseHash::Xxh64 { seed }, IndexScheme::default())
}

/// A new filter of m bits or counters, k hash functions in the standard layout and the
/// family of `seed`: a Bloom filter for width 0, else a counting filter.
fn standard(m: u64, k: u32, seed: u64, width: u8) -> Result<Filter, Fail> {
    of_params(Params::standard(m, k, family(seed))?, width)
}

/// A new filter of `params`: a Bloom filter for width 0, else a counting filter.
fn of_params(params: Params, width: u8) -> Result<Filter, Fail> {
    Ok(Filter(if width == 0 {
        AnyFilter::Bloom(BloomFilter::try_new(params)?)
    } else {
        AnyFilter::Counting(CountingBloomFilter::new(params, width)?)
    }))
}

/// `bw_status bw_filter_new_bloom(uint64_t m, uint32_t k, uint64_t seed, bw_filter **out)`:
/// an empty Bloom filter of m bits, k hash functions (standard layout), xxHash64 with
/// `seed` and enhanced double hashing.
///
/// # Safety
///
/// `out` is NULL or points to a writable `bw_filter *`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_new_bloom(
    m: u64,
    k: u32,
    seed: u64,
    out: *mut *mut Filter,
) -> Status {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { new_handle(out, || standard(m, k, seed, 0)) }
}

/// `bw_status bw_filter_new_counting(uint64_t m, uint32_t k, uint8_t width, uint64_t seed,
/// bw_filter **out)`: an empty counting filter of m counters of `width` bits (1 to 8).
///
/// # Safety
///
/// `out` is NULL or points to a writable `bw_filter *`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_new_counting(
    m: u64,
    k: u32,
    width: u8,
    seed: u64,
    out: *mut *mut Filter,
) -> Status {
    // SAFETY: the caller's guarantee, passed on.
    unsafe {
        new_handle(out, || {
            if width == 0 {
                return Err(Error::InvalidParameter {
                    name: "width",
                    reason: "a counter has 1 to 8 bits".into(),
                }
                .into());
            }
            standard(m, k, seed, width)
        })
    }
}

/// `bw_status bw_filter_new_from_plan(const bw_plan *plan, uint8_t counter_width, bw_filter
/// **out)`: an empty filter of the plan's parameters: a Bloom filter for width 0, else a
/// counting filter with counters of that many bits.
///
/// # Safety
///
/// `plan` is NULL or a live `bw_plan`; `out` NULL or a writable `bw_filter *`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_new_from_plan(
    plan: *const Plan,
    counter_width: u8,
    out: *mut *mut Filter,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        new_handle_from(plan, "plan", out, |plan| {
            of_params(plan.plan.params.clone(), counter_width)
        })
    }
}

/// `bw_status bw_filter_insert(bw_filter *filter, const void *key, size_t len)`: insert a
/// key of `len` bytes (NULL with 0 is the empty key). A filter of the opaque hash family
/// (decoded from another library's frame) is `BW_ERR_OPAQUE_HASH_FAMILY`.
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no other call uses; `key` NULL or `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_insert(
    filter: *mut Filter,
    key: *const u8,
    len: usize,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        by_key(filter, key, len, |filter, key| {
            match filter {
                AnyFilter::Bloom(f) => f.try_insert(key)?,
                AnyFilter::Counting(f) => f.insert(key),
            }
            Ok(())
        })
    }
}

/// A call that changes `filter` by the key of `len` bytes at `key` (`bw_filter_insert`,
/// `bw_filter_remove`).
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no other call uses; `key` NULL or `len` readable
/// bytes.
unsafe fn by_key(
    filter: *mut Filter,
    key: *const u8,
    len: usize,
    change: impl FnOnce(&mut AnyFilter, &[u8]) -> Result<(), Fail>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (filter, key) = unsafe { (handle_mut(filter, "filter")?, bytes_in(key, len, "key")?) };
        change(&mut filter.0, key)
    })
}

/// `bw_status bw_filter_contains(const bw_filter *filter, const void *key, size_t len, bool
/// *out)`: whether the key may be in the set (false: certainly not).
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no call changes meanwhile; `key` NULL or `len`
/// readable bytes; `out` NULL or a writable `bool`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_contains(
    filter: *const Filter,
    key: *const u8,
    len: usize,
    out: *mut bool,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (filter, key, out) = unsafe {
            (
                handle(filter, "filter")?,
                bytes_in(key, len, "key")?,
                Out::new(out, "out")?,
            )
        };
        out.put(false);
        out.put(filter.0.try_contains(key)?);
        Ok(())
    })
}

/// `bw_status bw_filter_remove(bw_filter *filter, const void *key, size_t len)`: remove a
/// key from a counting filter (a key not in it is `BW_ERR_INVALID_PARAMETER` and changes
/// nothing; a Bloom filter is `BW_ERR_INVALID_ARGUMENT`).
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no other call uses; `key` NULL or `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_remove(
    filter: *mut Filter,
    key: *const u8,
    len: usize,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        by_key(filter, key, len, |filter, key| match filter {
            AnyFilter::Counting(f) => Ok(f.remove(key)?),
            AnyFilter::Bloom(_) => Err(Fail::arg("a Bloom filter cannot remove keys")),
        })
    }
}

/// The union of two counting filters of the same parameters and width: counters added,
/// saturating at the largest count (as inserting every key of both would leave them,
/// saturated counters aside).
fn counting_union(
    a: &CountingBloomFilter,
    b: &CountingBloomFilter,
) -> Result<CountingBloomFilter, Fail> {
    if a.params() != b.params() || a.width() != b.width() {
        return Err(Error::Incompatible(
            "counting filters of other parameters or counter widths".into(),
        )
        .into());
    }
    let max = a.max_count();
    let counters = a
        .counters()
        .iter()
        .zip(b.counters())
        .map(|(&x, &y)| x.saturating_add(y).min(max))
        .collect();
    Ok(CountingBloomFilter::from_counters(
        a.params().clone(),
        a.width(),
        counters,
        a.n().saturating_add(b.n()),
    )?)
}

/// `bw_status bw_filter_union(bw_filter *into, const bw_filter *other)`: `into` becomes the
/// union of both (Bloom filters: their bits OR-ed; counting filters: their counters
/// added, saturating). Filters of other parameters, or of two kinds, are
/// `BW_ERR_INCOMPATIBLE` and change nothing. `into` and `other` may be the same handle.
///
/// # Safety
///
/// `into` is NULL or a live `bw_filter` no other call uses; `other` NULL or a live
/// `bw_filter` no other call changes.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_union(into: *mut Filter, other: *const Filter) -> Status {
    guard(|| {
        if core::ptr::eq(into, other) {
            // The same handle: a copy, so that one reference is not both shared and
            // exclusive.
            // SAFETY: the caller's guarantee, passed on.
            let copy = unsafe { handle(other, "other") }?.clone();
            // SAFETY: the caller's guarantee, passed on; `copy` is ours.
            return union(unsafe { handle_mut(into, "into") }?, &copy);
        }
        // SAFETY: the caller's guarantees, passed on: two distinct handles.
        let (into, other) = unsafe { (handle_mut(into, "into")?, handle(other, "other")?) };
        union(into, other)
    })
}

/// `into` becomes the union of both.
fn union(into: &mut Filter, other: &Filter) -> Result<(), Fail> {
    match (&mut into.0, &other.0) {
        (AnyFilter::Bloom(a), AnyFilter::Bloom(b)) => Ok(a.union_with(b)?),
        (AnyFilter::Counting(a), AnyFilter::Counting(b)) => {
            *a = counting_union(a, b)?;
            Ok(())
        }
        _ => Err(Error::Incompatible("a Bloom filter and a counting filter".into()).into()),
    }
}

/// The one bits of a filter, or its non-zero counters.
pub(crate) fn ones(filter: &AnyFilter) -> u64 {
    match filter {
        AnyFilter::Bloom(f) => f.bits().count_ones(),
        AnyFilter::Counting(f) => f.counters().iter().filter(|&&c| c != 0).count() as u64,
    }
}

/// `bw_status bw_filter_count_ones(const bw_filter *filter, uint64_t *out)`: the one bits
/// of a Bloom filter, the non-zero counters of a counting filter.
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no call changes meanwhile; `out` NULL or a
/// writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_count_ones(filter: *const Filter, out: *mut u64) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (filter, out) = unsafe { (handle(filter, "filter")?, Out::new(out, "out")?) };
        out.put(ones(&filter.0));
        Ok(())
    })
}

/// `bw_status bw_filter_get_info(const bw_filter *filter, bw_filter_info *out)`.
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no call changes meanwhile; `out` NULL or a
/// writable `bw_filter_info`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_get_info(filter: *const Filter, out: *mut FilterInfo) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (filter, out) = unsafe { (handle(filter, "filter")?, Out::new(out, "out")?) };
        let f = &filter.0;
        let p = f.params();
        out.put(FilterInfo {
            kind: if f.is_counting() {
                KIND_COUNTING
            } else {
                KIND_BLOOM
            },
            m: p.m(),
            k: p.k().to_f64(),
            k_ceil: p.k().ceil(),
            layout: layout_id(p.layout()),
            counter_width: match f {
                AnyFilter::Counting(c) => c.width(),
                AnyFilter::Bloom(_) => 0,
            },
            n: f.n(),
            digest: f.digest(),
        });
        Ok(())
    })
}

/// `bw_status bw_filter_export(const bw_filter *filter, uint8_t *buf, size_t cap, size_t
/// *len)`: the filter's contents as a raw payload carries them (spec 4.1): a Bloom
/// filter's bits, `ceil(m / 8)` bytes, bit i in byte i / 8 at bit i % 8; a counting
/// filter's counters packed `width` bits each. `BW_ERR_BUFFER_TOO_SMALL` reports the
/// length needed in `*len` (a call with `cap` 0 asks for it).
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no call changes meanwhile; `buf` NULL or `cap`
/// writable bytes; `len` NULL or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_export(
    filter: *const Filter,
    buf: *mut u8,
    cap: usize,
    len: *mut usize,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (filter, sink) = unsafe { (handle(filter, "filter")?, Sink::caller(buf, cap, len)?) };
        let bytes = match &filter.0 {
            AnyFilter::Bloom(f) => f.bits().to_bytes(),
            AnyFilter::Counting(f) => f.packed(),
        };
        sink.deliver(&bytes)
    })
}

/// `bw_status bw_filter_clone(const bw_filter *filter, bw_filter **out)`: a copy.
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no call changes meanwhile; `out` NULL or a
/// writable `bw_filter *`.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_clone(filter: *const Filter, out: *mut *mut Filter) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { new_handle_from(filter, "filter", out, |filter| Ok(filter.clone())) }
}

/// `void bw_filter_free(bw_filter *filter)`; NULL does nothing.
///
/// # Safety
///
/// `filter` is NULL or a live `bw_filter` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_filter_free(filter: *mut Filter) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(filter) });
}
