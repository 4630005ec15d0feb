//! Memory the coders reuse from one encode to the next on a thread: the payload, the rANS
//! coders' backwards stacks, the positional coder's lists, the chunks' payloads. An encode
//! that takes fresh memory for them pays the kernel a page fault per 4 KiB (558 a call, a
//! third of the coding's time, for coding 8 at m = 12.4 million bits); taken from here,
//! memory that the thread used for the previous encode is warm and mapped.
//!
//! Each thread keeps a few buffers of each element type (at most [`KEPT`], of at most
//! [`KEEP_BYTES`] each, so a thread that once coded a huge filter does not hold its memory
//! for ever). [`Frame`](crate::format::Frame)s give their payload back when dropped, and
//! [`Encoder::encode_into`](crate::format::Encoder::encode_into) lends the caller's buffer
//! for the next payload.

use std::cell::RefCell;

/// Buffers of one element type a thread keeps.
const KEPT: usize = 4;

/// The largest buffer kept, in bytes.
const KEEP_BYTES: usize = 64 << 20;

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

        /// Keep `v` for a later [`$take`] on this thread (unless the thread keeps enough, or
        /// `v` is too large to keep).
        pub(crate) fn $give(v: Vec<$t>) {
            if v.capacity() == 0 || v.capacity() * std::mem::size_of::<$t>() > KEEP_BYTES {
                return;
            }
            let _ = $pool.try_with(|pool| {
                let mut pool = pool.borrow_mut();
                if pool.len() < KEPT {
                    pool.push(v);
                } else if let Some(smallest) = (0..pool.len()).min_by_key(|&i| pool[i].capacity()) {
                    if pool[smallest].capacity() < v.capacity() {
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
    fits.or(largest).map(|i| pool.swap_remove(i))
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
            give_u32(Vec::with_capacity(KEEP_BYTES / 4 + 1));
            let kept: Vec<usize> = (0..KEPT).map(|_| take_u32(0).capacity()).collect();
            assert_eq!(kept.iter().filter(|&&c| c >= 30).count(), KEPT);
            assert_eq!(take_u32(0).capacity(), 0);
        })
        .join()
        .unwrap();
    }
}
