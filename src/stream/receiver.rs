//! The receiving side: frames applied in order, every gap, duplicate or mismatch a typed
//! error that leaves the filter unchanged.

use crate::error::{Error, Result};
use crate::filter::any::{AnyFilter, FilterMut};
use crate::filter::BloomFilter;
use crate::format::{
    finish_view, whole, Checked, Filter, FrameHeader, FrameKey, FrameKind, FrameView, Limits,
    Message, Tag,
};

use super::delta::{apply_in_place, check_header, Positions};

/// A frame of generation `got` is stale unless it is newer than `have`.
fn check_fresh(have: Option<u64>, got: u64) -> Result<()> {
    match have {
        Some(have) if got <= have => Err(Error::StaleGeneration { have, got }),
        _ => Ok(()),
    }
}

/// What a [`Receiver`] did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Update {
    /// A full frame replaced the filter; `skipped` generations were never seen.
    Full {
        /// The new generation.
        generation: u64,
        /// Generations between the previous one and this one that were not received.
        skipped: u64,
    },
    /// A delta advanced the filter by one step.
    Delta {
        /// The new generation.
        generation: u64,
    },
}

impl Update {
    /// The generation the receiver holds after the frame.
    pub fn generation(&self) -> u64 {
        match *self {
            Update::Full { generation, .. } | Update::Delta { generation } => generation,
        }
    }

    /// Whether a full frame replaced the filter (else a delta advanced it).
    pub fn is_full(&self) -> bool {
        matches!(self, Update::Full { .. })
    }

    /// Generations between the previous one and this one that were never received (0 for
    /// a delta).
    pub fn skipped(&self) -> u64 {
        match *self {
            Update::Full { skipped, .. } => skipped,
            Update::Delta { .. } => 0,
        }
    }
}

/// Applies a [`Sender`](super::Sender)'s frames in order, for either kind of filter `F`
/// (a [`BloomFilter`] by default). On any error its filter, generation and digest stay as
/// they were; [`Error::GenerationGap`], [`Error::BaseMismatch`] and
/// [`Error::ResultMismatch`] mean it needs a full frame, [`Error::StaleGeneration`] that the
/// frame was a duplicate or arrived late, and a frame of the other filter kind is
/// [`Error::UnexpectedFilterType`].
///
/// It keeps the digest of the filter it holds (computed once when it accepts a full frame,
/// then the verified result digest of each delta), so a delta's base check costs nothing.
/// A Bloom filter's delta is applied in place on the held filter: a positional delta's
/// changed positions are decoded from the payload and flipped, the held digest brought
/// forward by each flip ([`DigestChange`](crate::filter::DigestChange)), so that a
/// positional delta costs what changed whatever the filter's size; other codings' XOR is
/// decoded, XOR-ed in and the result's digest computed in one pass. The result digest is
/// compared with the frame's, and on a mismatch the change is undone. Counting filters' deltas are decoded and applied to
/// a copy. A full frame with the restart flag (spec §5.2) is applied whatever generation
/// the receiver holds: the sender's numbering starts again there.
///
/// A receiver made [`with_key`](Receiver::with_key) accepts only frames authenticated with
/// that key (spec §2.5): an untagged frame is [`Error::MissingTag`], a forged or altered one
/// [`Error::BadTag`], both found before the payload is read and before any generation rule,
/// so a forger can neither change the filter nor wedge the receiver with a generation
/// number.
#[derive(Debug, Clone)]
pub struct Receiver<F: Filter = BloomFilter> {
    limits: Limits,
    key: Option<FrameKey>,
    current: Option<Held<F>>,
}

/// The filter a [`Receiver`] holds, its generation and its digest.
#[derive(Debug, Clone)]
struct Held<F> {
    filter: F,
    generation: u64,
    digest: u32,
}

/// Generations skipped between `have` and a full frame of generation `got` (0 for a
/// restart at or below `have`).
fn skipped(have: Option<u64>, got: u64) -> u64 {
    have.map_or(0, |h| got.saturating_sub(h).saturating_sub(1))
}

impl Receiver {
    /// A receiver of a Bloom filter's frames, with no filter yet, decoding within
    /// `limits`; [`with_limits`](Receiver::with_limits) makes one of another kind.
    ///
    /// ```
    /// use bloomwire::{FrameKey, Limits, Receiver};
    /// let key = FrameKey::try_from(&[9u8; 32][..]).unwrap();
    /// let receiver = Receiver::new(Limits::default()).with_key(key);
    /// assert_eq!(receiver.generation(), None);
    /// ```
    pub fn new(limits: Limits) -> Self {
        Receiver::with_limits(limits)
    }
}

impl<F: Filter> Receiver<F> {
    /// A receiver of frames of the kind `F`, with no filter yet, decoding within `limits`:
    /// `Receiver::<CountingBloomFilter>::with_limits(limits)`, or
    /// `Receiver::<AnyFilter>::with_limits(limits)` to follow a sender of either kind.
    pub fn with_limits(limits: Limits) -> Self {
        Receiver {
            limits,
            key: None,
            current: None,
        }
    }

    /// The same receiver, accepting only frames tagged with `key` (spec §2.5); messages
    /// given to [`Receiver::apply`] must have been decoded with a
    /// [`Verifier`](crate::Verifier) ([`Tag::Verified`]).
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, Error, FrameKey, HashFamily, Limits, Params, Receiver};
    /// let f = BloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap());
    /// let key = FrameKey::new([5; 32]);
    /// let mut receiver: Receiver = Receiver::new(Limits::default()).with_key(key.clone());
    /// let plain = Encoder::new().encode_generation(&f, 1).unwrap().to_bytes();
    /// assert!(matches!(receiver.receive(&plain), Err(Error::MissingTag { .. })));
    /// let tagged = Encoder::new().key(key).encode_generation(&f, 1).unwrap().to_bytes();
    /// assert!(receiver.receive(&tagged).is_ok());
    /// ```
    pub fn with_key(mut self, key: FrameKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The limits frames are decoded within.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The current filter, once a full frame has arrived.
    pub fn filter(&self) -> Option<&F> {
        self.current.as_ref().map(|h| &h.filter)
    }

    /// The current generation.
    pub fn generation(&self) -> Option<u64> {
        self.current.as_ref().map(|h| h.generation)
    }

    /// The digest of the current filter (spec §5.1), kept rather than recomputed.
    pub fn digest(&self) -> Option<u32> {
        self.current.as_ref().map(|h| h.digest)
    }

    /// Decode and apply one frame (exactly one, no trailing bytes).
    ///
    /// The frame is checked as a decoder checks it (header within the limits, checksum,
    /// and with a key its tag), then against what the receiver holds (its kind, its
    /// generation, and for a delta its base generation, shape and base digest, spec 5.2),
    /// all before its payload is read: a delta that does not apply costs neither memory
    /// nor work beyond its header and checksum. A positional delta of a Bloom filter is
    /// then decoded straight into the held filter, each changed position flipped as it is
    /// read (no list of positions, no second array, no pass over the rest of the filter),
    /// its result digest checked and the flips undone on any error; other frames are
    /// decoded, then applied as by [`Receiver::apply`].
    pub fn receive(&mut self, frame: &[u8]) -> Result<Update> {
        let checked = Checked::new(frame, &self.limits, self.key.as_ref())?;
        let len = checked.bytes.len();
        let header = &checked.header;
        if !F::admits(header) {
            return Err(unexpected::<F>(header));
        }
        if !header.restart {
            check_fresh(self.generation(), header.generation)?;
        }
        if matches!(header.kind, FrameKind::Delta { .. }) {
            self.check_delta_header(header)?;
        }
        let view = FrameView::of_checked(checked)?;
        if view.is_positional_delta() {
            let header = view.header();
            let held = self.held(header)?;
            let (digest, generation) = (held.digest, held.generation);
            let FilterMut::Bloom(filter) = held.filter.as_any_mut() else {
                return Err(unexpected::<F>(header));
            };
            held.digest = apply_in_place(
                header,
                filter,
                || digest,
                generation,
                &Positions(&view),
                || whole(frame, len),
            )?;
            held.generation = header.generation;
            return Ok(Update::Delta {
                generation: header.generation,
            });
        }
        let message = finish_view(view)?;
        whole(frame, len)?;
        self.apply_checked(message)
    }

    /// The checks of a delta's header against what is held (spec 5.2: the base generation,
    /// the shape, the base digest), before its payload is decoded.
    fn check_delta_header(&mut self, header: &FrameHeader) -> Result<()> {
        let held = self.held(header)?;
        check_header(header, held.filter.as_any(), held.digest, held.generation).map(|_| ())
    }

    /// What is held, for a delta; [`Error::GenerationGap`] when nothing is.
    fn held(&mut self, header: &FrameHeader) -> Result<&mut Held<F>> {
        let FrameKind::Delta {
            base_generation, ..
        } = header.kind
        else {
            return Err(Error::UnexpectedDelta);
        };
        self.current.as_mut().ok_or(Error::GenerationGap {
            have: None,
            base: base_generation,
        })
    }

    /// Apply a frame decoded elsewhere. A receiver with a key applies only messages whose
    /// tag was verified with that same key (decoded with a [`Verifier`](crate::Verifier)
    /// holding it, or a [`CheckedFrame`](crate::CheckedFrame) checked with one): a message
    /// without a tag is [`Error::MissingTag`], one whose tag was not checked with this key
    /// [`Error::TagNotVerified`].
    pub fn apply(&mut self, message: Message) -> Result<Update> {
        if let Some(key) = &self.key {
            let header = message.header();
            if header.tag == Tag::Absent {
                return Err(Error::MissingTag {
                    offset: crate::format::FLAGS_OFFSET,
                });
            }
            if !header.verified_with(key) {
                return Err(Error::TagNotVerified);
            }
        }
        self.apply_checked(message)
    }

    /// Apply a decoded frame whose tag, if the receiver has a key, has been checked.
    fn apply_checked(&mut self, message: Message) -> Result<Update> {
        let header = message.header();
        if !F::admits(header) {
            return Err(unexpected::<F>(header));
        }
        let generation = header.generation;
        let have = self.generation();
        if !header.restart {
            check_fresh(have, generation)?;
        }
        let full = match message {
            Message::Full(d) => AnyFilter::Bloom(d.filter),
            Message::Counting(d) => AnyFilter::Counting(d.filter),
            Message::Delta(delta) => {
                let held = self.held(&delta.header)?;
                let (digest, base) = (held.digest, held.generation);
                let FilterMut::Bloom(filter) = held.filter.as_any_mut() else {
                    return Err(unexpected::<F>(&delta.header));
                };
                held.digest = apply_in_place(
                    &delta.header,
                    filter,
                    || digest,
                    base,
                    &delta.xor,
                    || Ok(()),
                )?;
                held.generation = generation;
                return Ok(Update::Delta { generation });
            }
            Message::CountingDelta(delta) => {
                let held = self.held(&delta.header)?;
                let FilterMut::Counting(filter) = held.filter.as_any_mut() else {
                    return Err(unexpected::<F>(&delta.header));
                };
                let next = delta.apply(filter, held.generation)?;
                held.digest = next.digest();
                *filter = next;
                held.generation = generation;
                return Ok(Update::Delta { generation });
            }
        };
        let digest = full.digest();
        let got = full.params().layout().id();
        let filter = F::from_any(full).ok_or(Error::UnexpectedFilterType {
            expected: F::KIND,
            got,
        })?;
        self.current = Some(Held {
            filter,
            generation,
            digest,
        });
        Ok(Update::Full {
            generation,
            skipped: skipped(have, generation),
        })
    }
}

/// [`Error::UnexpectedFilterType`] for a frame of another kind than a receiver's.
fn unexpected<F: Filter>(header: &FrameHeader) -> Error {
    Error::UnexpectedFilterType {
        expected: F::KIND,
        got: header.filter_type(),
    }
}
