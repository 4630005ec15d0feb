//! Memory the coders reuse from one encode to the next on a thread: the payload, the rANS
//! coders' backwards stacks, the positional coder's lists, the chunks' payloads. An encode
//! that takes fresh memory for them pays the kernel a page fault per 4 KiB (558 a call, a
//! third of the coding's time, for coding 8 at m = 12.4 million bits); taken from here,
//! memory that the thread used for the previous encode is warm and mapped.
//!
//! Each thread keeps a few buffers of each element type (at most [`KEPT`]), at most
//! [`THREAD_BYTES`] in all, so that a thread that once coded a huge filter does not hold
//! its memory for ever, and a program with many threads holds at most that much on each.
//! [`Frame`](crate::format::Frame)s give their payload back when dropped, and
//! [`Encoder::encode_into`](crate::format::Encoder::encode_into) lends the caller's buffer
//! for the next payload. [`release_thread_scratch`] gives a thread's buffers back to the
//! allocator.

use std::cell::{Cell, RefCell};

/// Buffers of one element type a thread keeps.
const KEPT: usize = 4;

/// The most a thread keeps in all its buffers, in bytes: several times what a sender of a
/// 10^8-bit filter needs warm (8.8 MB at a tenth of its bits set: the payload it codes
/// into and the frame's; the test `a_large_encode_stays_warm_within_the_budget`).
const THREAD_BYTES: usize = 64 << 20;

thread_local! {
    /// Bytes the thread's pools hold, all element types together.
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// Bytes of `v`'s capacity.
fn bytes_of<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// Count `more` bytes more and `less` fewer as held; false (nothing counted) if the thread
/// would then hold more than [`THREAD_BYTES`].
fn hold(more: usize, less: usize) -> bool {
    HELD.try_with(|held| {
        let now = held.get().saturating_sub(less) + more;
        (now <= THREAD_BYTES).then(|| held.set(now)).is_some()
    })
    .unwrap_or(false)
}

macro_rules! pool {
    ($pool:ident, $take:ident, $give:ident, $t:ty) => {
        thread_local! {
            static $pool: RefCell<Vec<Vec<$t>>> = const { RefCell::new(Vec::new()) };
        }

        /// An empty buffer with room for `capacity` elements at least: the kept one that
        /// fits best (the smallest with the room, else the largest, grown), or a new one.
        pub(crate) fn $take(capacity: usize) -> Vec<$t> {
            let mut v = $pool
                .try_with(|pool| pick(&mut pool.borrow_mut(), capacity))
                .ok()
                .flatten()
                .unwrap_or_default();
            v.clear();
            v.reserve(capacity);
            v
        }

        /// Keep `v` for a later `take` on this thread (unless the thread keeps enough
        /// of them, or its budget has no room for `v`).
        pub(crate) fn $give(v: Vec<$t>) {
            if v.capacity() == 0 {
                return;
            }
            let _ = $pool.try_with(|pool| {
                let mut pool = pool.borrow_mut();
                if pool.len() < KEPT {
                    if hold(bytes_of(&v), 0) {
                        pool.push(v);
                    }
                } else if let Some(smallest) = (0..pool.len()).min_by_key(|&i| pool[i].capacity()) {
                    if pool[smallest].capacity() < v.capacity()
                        && hold(bytes_of(&v), bytes_of(&pool[smallest]))
                    {
                        pool[smallest] = v;
                    }
                }
            });
        }
    };
}

/// Of `pool`, the buffer that fits `capacity` best (the smallest with the room, else the
/// largest), taken out.
fn pick<T>(pool: &mut Vec<Vec<T>>, capacity: usize) -> Option<Vec<T>> {
    let fits = (0..pool.len())
        .filter(|&i| pool[i].capacity() >= capacity)
        .min_by_key(|&i| pool[i].capacity());
    let largest = (0..pool.len()).max_by_key(|&i| pool[i].capacity());
    let v = pool.swap_remove(fits.or(largest)?);
    hold(0, bytes_of(&v));
    Some(v)
}

pool!(BYTES, take_bytes, give_bytes, u8);

/// A buffer of `len` bytes at least, holding whatever its last use left there, for a coder
/// that writes every byte before it reads it: only memory never used before is zeroed (a
/// fresh zeroed buffer costs a tenth of a coding-8 encode in page faults, zeroing a warm
/// one a twentieth).
pub(crate) fn take_bytes_unzeroed(len: usize) -> Vec<u8> {
    let mut v = BYTES
        .try_with(|pool| pick(&mut pool.borrow_mut(), len))
        .ok()
        .flatten()
        .unwrap_or_default();
    if v.len() < len {
        v.resize(len, 0);
    }
    v
}

pool!(WORDS32, take_u32, give_u32, u32);
pool!(WORDS64, take_u64, give_u64, u64);

/// Bytes of memory the calling thread keeps for its next encodes: payloads of dropped
/// [`Frame`](crate::Frame)s and the coders' scratch, at most 64 MiB a thread.
///
/// ```
/// use bloomwire::{BloomFilter, Encoder, HashFamily, Params};
/// let f = BloomFilter::new(Params::standard(1 << 20, 3, HashFamily::default()).unwrap());
/// drop(Encoder::new().encode(&f).unwrap());
/// assert!(bloomwire::thread_scratch_bytes() > 0);
/// ```
pub fn thread_scratch_bytes() -> usize {
    HELD.try_with(Cell::get).unwrap_or(0)
}

/// Give the memory the calling thread keeps for its next encodes
/// ([`thread_scratch_bytes`]) back to the allocator, and return how many bytes that was:
/// for a thread that will encode no more for a while. The next encode on the thread takes
/// fresh memory (page faults, as the first encode did).
///
/// ```
/// use bloomwire::{BloomFilter, Encoder, HashFamily, Params};
/// let f = BloomFilter::new(Params::standard(1 << 20, 3, HashFamily::default()).unwrap());
/// drop(Encoder::new().encode(&f).unwrap());
/// let kept = bloomwire::thread_scratch_bytes();
/// assert_eq!(bloomwire::release_thread_scratch(), kept);
/// assert_eq!(bloomwire::thread_scratch_bytes(), 0);
/// ```
pub fn release_thread_scratch() -> usize {
    let freed = thread_scratch_bytes();
    let _ = BYTES.try_with(|pool| pool.borrow_mut().clear());
    let _ = WORDS32.try_with(|pool| pool.borrow_mut().clear());
    let _ = WORDS64.try_with(|pool| pool.borrow_mut().clear());
    let _ = HELD.try_with(|held| held.set(0));
    freed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_taken_again_warm() {
        let mut v = take_bytes(1 << 20);
        assert!(v.capacity() >= 1 << 20);
        v.extend_from_slice(&[1, 2, 3]);
        let at = v.as_ptr();
        give_bytes(v);
        let again = take_bytes(10);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), at);
        // The best fit: a small request takes the small buffer, a large one the large.
        give_bytes(again);
        give_bytes(Vec::with_capacity(100));
        assert_eq!(take_bytes(50).capacity(), 100);
        let large = take_bytes(1000);
        assert_eq!(large.as_ptr(), at);
    }

    #[test]
    fn a_thread_keeps_few_and_small_buffers() {
        std::thread::spawn(|| {
            for size in [10, 20, 30, 40, 50, 60] {
                give_u32(Vec::with_capacity(size));
            }
            give_u32(Vec::with_capacity(THREAD_BYTES / 4 + 1));
            let kept: Vec<usize> = (0..KEPT).map(|_| take_u32(0).capacity()).collect();
            assert_eq!(kept.iter().filter(|&&c| c >= 30).count(), KEPT);
            assert_eq!(take_u32(0).capacity(), 0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_keeps_at_most_its_budget_in_all_pools() {
        std::thread::spawn(|| {
            // A third of the budget and a little more, in whole u64s.
            let third = (THREAD_BYTES / 24 + 1) * 8;
            give_bytes(Vec::with_capacity(third));
            give_u32(Vec::with_capacity(third / 4));
            assert_eq!(thread_scratch_bytes(), 2 * third);
            // A third buffer would pass the budget: not kept.
            give_u64(Vec::with_capacity(third / 8));
            assert_eq!(thread_scratch_bytes(), 2 * third);
            assert_eq!(take_u64(0).capacity(), 0);
            // Taking gives room back.
            let v = take_u32(1);
            assert_eq!(thread_scratch_bytes(), third);
            give_u64(Vec::with_capacity(third / 8));
            assert_eq!(thread_scratch_bytes(), 2 * third);
            drop(v);
            assert_eq!(release_thread_scratch(), 2 * third);
            assert_eq!(thread_scratch_bytes(), 0);
            assert_eq!(take_bytes(0).capacity(), 0);
        })
        .join()
        .unwrap();
    }
}
