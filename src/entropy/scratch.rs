//! Memory the coders reuse from one encode to the next: the payload, the rANS coders'
//! backwards stacks, the positional coder's lists, the chunks' payloads. An encode that
//! takes fresh memory for them pays the kernel a page fault per 4 KiB (558 a call, a third
//! of the coding's time, for coding 8 at m = 12.4 million bits); taken from a pool, memory
//! that the previous encode used is warm and mapped.
//!
//! A [`Pools`] keeps buffers of each element type (at most [`KEPT`]), at most its
//! limit in bytes in all ([`THREAD_BYTES`], 64 MiB, unless its owner says otherwise), so
//! that an owner that once coded a huge filter does not hold its memory for ever.
//!
//! **Whose pool.** The coders take from and give to *the current pool* of the thread they
//! run on ([`take_bytes`], [`give_bytes`] and their twins). That is the thread's own pool,
//! the default context of the plain entry points ([`Encoder::encode`], [`Sender::next_frame`]),
//! unless a caller's context ([`Scratch`]) is installed for the duration of one call
//! ([`with_pools`]): the `_in` entry points ([`Encoder::encode_in`] and the others) swap the
//! context's pools in, run the encode, and swap the thread's back on return and on unwind.
//! So the kernels keep one signature (no pool argument threaded through a dozen coders and
//! their SIMD twins) while the API says whose memory an encode uses: a scope is as explicit
//! to the caller as an argument, and the swap costs three pointers a pool type.
//!
//! Why the thread's pool stays, as the default context: it makes the plain entry points
//! (and the products built on them: the program, the Python package, the C library's
//! `bw_encode`) as warm as a context, with nothing to carry, and removing it would put
//! every existing caller back on fresh memory. Measured (`cargo bench -p bloomwire-benches
//! --bench scratch`, and `/usr/bin/time -v` on its `scratch_loop` example; the figures in
//! `benches/README.md`): repeated encodes of a 10^8-bit filter through a context and
//! through the default take the same thread CPU time (paired ratio 1.005) and no page
//! fault a call; with no reuse a process takes 5 256 a call (10 ms of system time on a
//! 24 ms encode), unless the allocator happens to keep the freed memory itself. Its cost
//! is the implicit part: a frame of a plain entry point gives its payload to the pool of
//! the thread that drops it, and each thread that encodes keeps up to 64 MiB until
//! [`release_thread_scratch`]. A frame made through a context gives its
//! payload back only to that context, when the caller recycles it
//! ([`Scratch::recycle`]); dropped anywhere else it is freed.
//!
//! [`Encoder::encode`]: crate::Encoder::encode
//! [`Encoder::encode_in`]: crate::Encoder::encode_in
//! [`Sender::next_frame`]: crate::Sender::next_frame
//! [`Scratch`]: crate::Scratch
//! [`Scratch::recycle`]: crate::Scratch::recycle

use std::cell::RefCell;

/// Buffers of one element type a pool keeps: as many as one encode holds at once, so that
/// the next takes them all warm. A chunked encode holds a payload per chunk until it
/// assembles the frame (12 chunks at 10^8 bits, a tenth of them set; with four kept, eight
/// chunks took fresh memory every encode, 1 600 page faults a call). The byte limit bounds
/// what they hold; this bounds only the pool's scans.
const KEPT: usize = 64;

/// The most a pool keeps in all its buffers by default, in bytes: several times what a
/// sender of a 10^8-bit filter needs warm (8.8 MB at a tenth of its bits set: the payload
/// it codes into and the frame's; the test `a_large_encode_stays_warm_within_the_budget`).
pub(crate) const THREAD_BYTES: usize = 64 << 20;

/// Buffers kept for the next encodes, of every element type the coders use, and their
/// bytes: a thread's own, or a caller's context's.
#[derive(Debug)]
pub(crate) struct Pools {
    bytes: Vec<Vec<u8>>,
    words32: Vec<Vec<u32>>,
    words64: Vec<Vec<u64>>,
    /// Bytes the buffers' capacities hold, all element types together.
    held: usize,
    /// The most `held` may reach.
    limit: usize,
}

impl Pools {
    /// Empty pools that keep at most `limit` bytes.
    pub(crate) const fn new(limit: usize) -> Self {
        Pools {
            bytes: Vec::new(),
            words32: Vec::new(),
            words64: Vec::new(),
            held: 0,
            limit,
        }
    }

    /// Bytes the buffers hold.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// The most the buffers may hold.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Give every buffer back to the allocator; returns the bytes that was.
    pub(crate) fn release(&mut self) -> usize {
        let freed = self.held;
        self.bytes = Vec::new();
        self.words32 = Vec::new();
        self.words64 = Vec::new();
        self.held = 0;
        freed
    }

    /// Count `more` bytes more and `less` fewer as held; false (nothing counted) if the
    /// pools would then hold more than their limit.
    fn hold(&mut self, more: usize, less: usize) -> bool {
        let now = self.held.saturating_sub(less) + more;
        (now <= self.limit).then(|| self.held = now).is_some()
    }

    /// Of the buffers of `T`, the one that fits `capacity` best (the smallest with the
    /// room, else the largest), taken out.
    fn pick<T: Element>(&mut self, capacity: usize) -> Option<Vec<T>> {
        let pool = T::pool(self);
        let fits = (0..pool.len())
            .filter(|&i| pool[i].capacity() >= capacity)
            .min_by_key(|&i| pool[i].capacity());
        let largest = (0..pool.len()).max_by_key(|&i| pool[i].capacity());
        let v = pool.swap_remove(fits.or(largest)?);
        self.hold(0, bytes_of(&v));
        Some(v)
    }

    /// Keep `v` for a later take (unless the pool of `T` keeps enough buffers, or the
    /// limit has no room for `v`).
    pub(crate) fn give<T: Element>(&mut self, v: Vec<T>) {
        if v.capacity() == 0 {
            return;
        }
        let pool = T::pool(self);
        if pool.len() < KEPT {
            if self.hold(bytes_of(&v), 0) {
                T::pool(self).push(v);
            }
        } else if let Some(smallest) = (0..pool.len()).min_by_key(|&i| pool[i].capacity()) {
            let (small, small_bytes) = (pool[smallest].capacity(), bytes_of(&pool[smallest]));
            if small < v.capacity() && self.hold(bytes_of(&v), small_bytes) {
                T::pool(self)[smallest] = v;
            }
        }
    }
}

/// An element type the coders keep buffers of.
pub(crate) trait Element: Sized {
    /// The buffers of this type in `pools`.
    fn pool(pools: &mut Pools) -> &mut Vec<Vec<Self>>;
}

impl Element for u8 {
    fn pool(pools: &mut Pools) -> &mut Vec<Vec<u8>> {
        &mut pools.bytes
    }
}

impl Element for u32 {
    fn pool(pools: &mut Pools) -> &mut Vec<Vec<u32>> {
        &mut pools.words32
    }
}

impl Element for u64 {
    fn pool(pools: &mut Pools) -> &mut Vec<Vec<u64>> {
        &mut pools.words64
    }
}

thread_local! {
    /// The thread's current pool: its own, or a context's for the duration of a call
    /// ([`with_pools`]).
    static CURRENT: RefCell<Pools> = const { RefCell::new(Pools::new(THREAD_BYTES)) };
}

/// Bytes of `v`'s capacity.
fn bytes_of<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// `f` on the thread's current pool; `None` while the thread's storage is being torn down.
fn current<R>(f: impl FnOnce(&mut Pools) -> R) -> Option<R> {
    CURRENT
        .try_with(|pools| pools.try_borrow_mut().ok().map(|mut p| f(&mut p)))
        .ok()
        .flatten()
}

/// `f()` with `pools` as the thread's current pool: swapped in before, swapped back
/// (holding what `f` left there) when `f` returns or unwinds. Scopes nest.
pub(crate) fn with_pools<R>(pools: &mut Pools, f: impl FnOnce() -> R) -> R {
    /// Swaps the thread's pool back into place when dropped, on return and on unwind.
    struct Restore<'a>(&'a mut Pools);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let _ = current(|now| std::mem::swap(now, self.0));
        }
    }
    let _ = current(|now| std::mem::swap(now, pools));
    let _restore = Restore(pools);
    f()
}

/// An empty buffer with room for `capacity` elements at least: the current pool's buffer
/// that fits best (the smallest with the room, else the largest, grown), or a new one.
fn take<T: Element>(capacity: usize) -> Vec<T> {
    let mut v = current(|p| p.pick(capacity)).flatten().unwrap_or_default();
    v.clear();
    v.reserve(capacity);
    v
}

/// Keep `v` in the current pool for a later take on this thread (unless it keeps enough
/// buffers, or its limit has no room for `v`).
fn give<T: Element>(v: Vec<T>) {
    if v.capacity() > 0 {
        let _ = current(|p| p.give(v));
    }
}

/// An empty byte buffer with room for `capacity` bytes, from the current pool.
pub(crate) fn take_bytes(capacity: usize) -> Vec<u8> {
    take(capacity)
}

/// Keep a byte buffer in the current pool.
pub(crate) fn give_bytes(v: Vec<u8>) {
    give(v)
}

/// An empty buffer of `u32`s with room for `capacity`, from the current pool.
pub(crate) fn take_u32(capacity: usize) -> Vec<u32> {
    take(capacity)
}

/// Keep a buffer of `u32`s in the current pool.
pub(crate) fn give_u32(v: Vec<u32>) {
    give(v)
}

/// An empty buffer of `u64`s with room for `capacity`, from the current pool.
pub(crate) fn take_u64(capacity: usize) -> Vec<u64> {
    take(capacity)
}

/// Keep a buffer of `u64`s in the current pool.
pub(crate) fn give_u64(v: Vec<u64>) {
    give(v)
}

/// A buffer of `len` bytes at least, holding whatever its last use left there, for a coder
/// that writes every byte before it reads it: only memory never used before is zeroed (a
/// fresh zeroed buffer costs a tenth of a coding-8 encode in page faults, zeroing a warm
/// one a twentieth).
pub(crate) fn take_bytes_unzeroed(len: usize) -> Vec<u8> {
    let mut v: Vec<u8> = current(|p| p.pick(len)).flatten().unwrap_or_default();
    if v.len() < len {
        v.resize(len, 0);
    }
    v
}

/// Bytes of memory the calling thread keeps for its next encodes through the plain entry
/// points (the default context): payloads of dropped [`Frame`](crate::Frame)s and the
/// coders' scratch, at most 64 MiB a thread. A caller's [`Scratch`](crate::Scratch) counts
/// its own ([`Scratch::bytes`](crate::Scratch::bytes)); encodes through it leave this
/// alone.
///
/// ```
/// use bloomwire::{BloomFilter, Encoder, HashFamily, Params};
/// let f = BloomFilter::new(Params::standard(1 << 20, 3, HashFamily::default()).unwrap());
/// drop(Encoder::new().encode(&f).unwrap());
/// assert!(bloomwire::thread_scratch_bytes() > 0);
/// ```
pub fn thread_scratch_bytes() -> usize {
    current(|p| p.held()).unwrap_or(0)
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
    current(Pools::release).unwrap_or(0)
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
            for size in 1..=KEPT + 2 {
                give_u32(Vec::with_capacity(10 * size));
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

    #[test]
    fn a_scope_swaps_the_pool_in_and_back_on_return_and_unwind() {
        std::thread::spawn(|| {
            give_bytes(Vec::with_capacity(100));
            let mut context = Pools::new(THREAD_BYTES);
            let taken = with_pools(&mut context, || {
                // The context is the current pool: the thread's buffer is not seen.
                assert_eq!(thread_scratch_bytes(), 0);
                give_bytes(Vec::with_capacity(1000));
                take_bytes(0).capacity()
            });
            assert_eq!(taken, 1000);
            assert_eq!((context.held(), thread_scratch_bytes()), (0, 100));
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                with_pools(&mut context, || {
                    give_u64(Vec::with_capacity(10));
                    panic!("a coder failed");
                })
            }));
            assert!(unwound.is_err());
            // Back in place after the unwind, each pool holding its own.
            assert_eq!((context.held(), thread_scratch_bytes()), (80, 100));
            // Scopes nest.
            let mut inner = Pools::new(THREAD_BYTES);
            with_pools(&mut context, || {
                with_pools(&mut inner, || give_u32(Vec::with_capacity(1)));
                assert_eq!(thread_scratch_bytes(), 80);
            });
            assert_eq!((inner.held(), context.held()), (4, 80));
            assert_eq!(release_thread_scratch(), 100);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_context_keeps_at_most_its_limit() {
        let mut small = Pools::new(1000);
        small.give(vec![0u8; 600]);
        small.give(vec![0u8; 600]);
        assert_eq!(small.held(), 600);
        assert_eq!(small.release(), 600);
        assert_eq!(small.held(), 0);
    }
}
