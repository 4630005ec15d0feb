//! The caller's encoder context: the memory the coders reuse, owned by whoever encodes
//! (zstd's `ZSTD_CCtx`), instead of the thread's pool that the plain entry points use.

use crate::entropy::scratch::{with_pools, Pools, THREAD_BYTES};

use super::frame::Frame;

/// Memory the coders reuse from one encode to the next (the payload, the coders' stacks
/// and lists, the chunks' payloads), owned by the caller: an encoder context, as zstd's
/// `ZSTD_CCtx`.
///
/// Encode through it with the `_in` entry points ([`Encoder::encode_in`],
/// [`Encoder::encode_generation_in`], [`Encoder::encode_delta_in`],
/// [`Sender::next_frame_in`], [`Sender::next_frame_with_flips_in`],
/// [`SummarySender::next_frame_in`], [`ChunkedFrame::encode_chunk_in`],
/// [`ChunkedFrame::assemble_in`]): the coders take their memory from here and give it
/// back here, and the thread's own pool (the default context of the plain entry points,
/// [`thread_scratch_bytes`](crate::thread_scratch_bytes)) is left alone. A frame made
/// through a context gives its payload back when the caller hands it over
/// ([`recycle`](Self::recycle)), for the next encode to code into; dropped instead, its
/// memory is freed, on whatever thread, and goes to no pool.
///
/// A context keeps at most 64 MiB ([`with_limit`](Self::with_limit) for another bound)
/// and at most 64 buffers of each element type; [`release`](Self::release) gives them
/// to the allocator, as dropping the context does. It is `Send`: one context serves one
/// encode at a time, on any thread. Decoders take no memory from a pool, so they have no
/// context. The frames are byte for byte those of the plain entry points.
///
/// ```
/// use bloomwire::{BloomFilter, Encoder, HashFamily, Params, Scratch};
/// let mut f = BloomFilter::new(Params::standard(1 << 20, 3, HashFamily::default()).unwrap());
/// let encoder = Encoder::new();
/// let mut scratch = Scratch::new();
/// for g in 1..=3u64 {
///     f.insert(g.to_le_bytes());
///     let frame = encoder.encode_generation_in(&mut scratch, &f, g).unwrap();
///     assert_eq!(frame, encoder.encode_generation(&f, g).unwrap());
///     let wire = frame.to_bytes(); // or frame.write_to(&mut socket_buffer)
///     # drop(wire);
///     scratch.recycle(frame); // its payload's memory, for the next generation
///     assert!(scratch.bytes() > 0);
/// }
/// let kept = scratch.bytes();
/// assert_eq!(scratch.release(), kept);
/// assert_eq!(scratch.bytes(), 0);
/// ```
///
/// [`Encoder::encode_in`]: crate::Encoder::encode_in
/// [`Encoder::encode_generation_in`]: crate::Encoder::encode_generation_in
/// [`Encoder::encode_delta_in`]: crate::Encoder::encode_delta_in
/// [`Sender::next_frame_in`]: crate::Sender::next_frame_in
/// [`Sender::next_frame_with_flips_in`]: crate::Sender::next_frame_with_flips_in
/// [`SummarySender::next_frame_in`]: crate::SummarySender::next_frame_in
/// [`ChunkedFrame::encode_chunk_in`]: crate::ChunkedFrame::encode_chunk_in
/// [`ChunkedFrame::assemble_in`]: crate::ChunkedFrame::assemble_in
#[derive(Debug)]
pub struct Scratch {
    pools: Pools,
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Scratch {
    /// An empty context that keeps at most 64 MiB.
    pub fn new() -> Self {
        Self::with_limit(THREAD_BYTES)
    }

    /// An empty context that keeps at most `bytes` (a buffer that would take it past
    /// that is freed instead of kept).
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, HashFamily, Params, Scratch};
    /// let f = BloomFilter::new(Params::standard(1 << 20, 3, HashFamily::default()).unwrap());
    /// let mut small = Scratch::with_limit(1000);
    /// let frame = Encoder::new().encode_in(&mut small, &f).unwrap();
    /// small.recycle(frame);
    /// assert!(small.bytes() <= 1000);
    /// ```
    pub fn with_limit(bytes: usize) -> Self {
        Scratch {
            pools: Pools::new(bytes),
        }
    }

    /// Bytes the context keeps for the next encodes.
    pub fn bytes(&self) -> usize {
        self.pools.held()
    }

    /// The most the context keeps, in bytes.
    pub fn limit(&self) -> usize {
        self.pools.limit()
    }

    /// Give `frame`'s payload to this context, for the next encode's payload: the memory
    /// of a frame the caller has written (a frame of any entry point is taken).
    pub fn recycle(&mut self, mut frame: Frame) {
        self.pools.give(frame.take_payload());
    }

    /// Give the memory the context keeps to the allocator; returns how many bytes that
    /// was. The next encode through it takes fresh memory (page faults, as the first did).
    pub fn release(&mut self) -> usize {
        self.pools.release()
    }

    /// `f()` with this context as the calling thread's scratch memory: what the coders
    /// take and give in `f` is this context's. The thread's own pool is back in place when
    /// `f` returns or unwinds.
    pub(crate) fn run<R>(&mut self, f: impl FnOnce() -> R) -> R {
        with_pools(&mut self.pools, f)
    }

    /// The frame `make` makes through this context, which gives its payload back here
    /// (when recycled), not to a thread's pool.
    pub(crate) fn frame(
        &mut self,
        make: impl FnOnce() -> crate::Result<Frame>,
    ) -> crate::Result<Frame> {
        self.run(make).map(Frame::owned_by_caller)
    }
}
