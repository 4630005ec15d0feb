//! Generations of a filter on the wire: delta frames, and a sender/receiver pair that never
//! drifts silently (Section IV of *Compressed Bloom Filters*).
//!
//! A proxy that broadcasts its cache digest sends, for each new generation, whichever is
//! smaller of a full frame and a delta (the XOR of the two generations' bit arrays, which is
//! sparse when few keys changed), and a full frame every N generations or when a receiver
//! asks. Every frame carries its generation number; a delta also names its base generation
//! and the digests of the base and the result. A [`Receiver`] applies frames in order and
//! turns every gap, duplicate, reordering or mismatch into a typed error with its filter
//! unchanged, so the application knows to ask for a full frame.
//!
//! The work follows the change, not the filter's length m. A [`Sender`] handed the new
//! generation scans the previous and the new generation's words once (changed positions,
//! the new filter's ones and its digest); handed the changed positions
//! ([`Sender::next_frame_with_flips`]) it reads nothing else, bringing the ones and the
//! digest forward by the flips ([`DigestChange`](crate::filter::DigestChange)). Either way
//! it predicts the delta's and the full frame's sizes from those counts, codes one frame,
//! and keeps the previous generation by flipping the changed positions. A
//! [`SummarySender`] (Section V's Summary Cache) owns a counting filter and sends its Bloom
//! filter, the changes being the counters that leave or reach zero. A [`Receiver`] keeps
//! the digest of the filter it holds, so a delta's base check is free, and applies a
//! positional delta in place on the held filter (flip, digest brought forward, undo on a
//! mismatch), with no second array and no pass over the rest. Counting filters keep the
//! decode-then-apply path.
//!
//! A full frame may carry the restart flag (spec §5.2): the sender's numbering starts
//! again there and a receiver applies it whatever generation it holds. Senders set it on
//! their first frame, after [`Sender::request_full`] and on their periodic full frames, so
//! a receiver that accepted a forged or stray generation number (say 2^64 - 1, after which
//! every genuine frame looks stale) recovers.
//!
//! Filters whose sets lose keys as well as gain them are rebuilt from the set, or kept as a
//! counting filter and sent as one: a `Sender<CountingBloomFilter>` and a
//! `Receiver<CountingBloomFilter>` do the same for counting filters, whose deltas carry the
//! counter-wise XOR of two generations (see [`Sender`]).
//!
//! ```
//! use bloomwire::{BloomFilter, Encoder, HashFamily, Limits, Params, Receiver, Sender, Update};
//!
//! let params = Params::standard(320_000, 2, HashFamily::default()).unwrap();
//! let mut sender = Sender::new(Encoder::new(), 100);
//! let mut receiver: Receiver = Receiver::new(Limits::default());
//!
//! let mut filter = BloomFilter::new(params);
//! for i in 0..10_000u32 {
//!     filter.insert(i.to_le_bytes());
//! }
//! let first = sender.next_frame(&filter).unwrap().to_bytes();
//! assert_eq!(receiver.receive(&first).unwrap(), Update::Full { generation: 1, skipped: 0 });
//!
//! for i in 10_000..10_100u32 {
//!     filter.insert(i.to_le_bytes()); // 1% more keys
//! }
//! let second = sender.next_frame(&filter).unwrap().to_bytes();
//! assert!(second.len() < first.len() / 10); // a delta
//! assert_eq!(receiver.receive(&second).unwrap(), Update::Delta { generation: 2 });
//! assert_eq!(receiver.filter().unwrap(), &filter);
//!
//! // The same frame again is detected, and changes nothing.
//! assert!(receiver.receive(&second).is_err());
//! assert_eq!(receiver.generation(), Some(2));
//! ```

pub(crate) mod change;
#[cfg(feature = "tokio")]
pub(crate) mod codec;
pub(crate) mod delta;
mod receiver;
mod sender;
mod summary;

pub use receiver::{Receiver, Update};
pub use sender::Sender;
pub use summary::SummarySender;
