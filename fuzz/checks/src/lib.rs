//! What bloomwire's fuzz targets check.
//!
//! Each target in `fuzz/fuzz_targets/` is one call into this crate, so the checks are
//! ordinary code built on the library's public API: `tests/fuzz_corpus.rs` replays the
//! committed corpus through the same functions on stable (the workspace's
//! `cargo test --all-features` runs it), and a new target is a function here plus a
//! one-line file.
//!
//! The targets assert more than "no panic":
//!
//! * every accepted frame is canonical: [`Message::to_frame`] gives back exactly the bytes
//!   that were decoded (spec section 2.3), and the header parser, the prefix decoder, the
//!   whole-frame decoder and the chunked-buffer decoder agree;
//! * a short input is [`Error::Incomplete`] with a `needed` that is a true lower bound: the
//!   input extended by `needed - 1` bytes still needs exactly one more;
//! * filters built from keys decode, under every coding in [`BitCoding::ALL`], to the same
//!   filter with no false negatives;
//! * a delta applies to a base only when the digests say so, and the result is the
//!   sender's filter; a [`Receiver`] fed any stream either advances consistently or keeps
//!   its filter and generation unchanged;
//! * the decoder's peak heap use stays within twice the packed size of the declared m, plus
//!   the payload and a small constant, all of which [`LIMITS`] bound before anything is
//!   allocated; a frame rejected in its header allocates at most a small constant;
//! * decoding time stays linear in the input's bytes plus m/64 ([`frame_work`]): a payload
//!   byte codes at most 2^12 symbols (spec 2.2), and the decoded array is written a word at
//!   a time.
//!
//! Allocation and time are measured by a [`Meter`] the caller supplies: the fuzz crate's
//! counts every allocation with a global allocator; [`NoMeter`] measures nothing.
//!
//! # Adding a target
//!
//! A target is a function `fn NAME(data: &[u8], meter: &dyn Meter)` here. A decoder of
//! another self-delimiting frame gets every generic check from [`check_decoder`]: give it
//! the decode function, the encode function that must give the input back, and a function
//! from an input to its heap and work bounds ([`frame_cost`] is the one for frames). The
//! existing targets are the models: [`decode_frame`] for a decoder, [`decode_counting`]
//! for a decoder with checks of its own on what it decodes, [`round_trip`] for an encoder
//! driven by [`arbitrary`] inputs.
//!
//! Then, for a target `NAME`:
//!
//! 1. its entry in [`TARGETS`] (the corpus replay runs it), and in [`VECTOR_TARGETS`] when
//!    the spec's vectors are inputs for it (they then seed its corpus);
//! 2. a `[[bin]]` in `fuzz/Cargo.toml` and the one-line `fuzz/fuzz_targets/NAME.rs`:
//!    `#![no_main] bloomwire_fuzz::target!(NAME);`;
//! 3. a corpus of at least four inputs in `fuzz/corpus/NAME/` (a short `fuzz/run.sh` run
//!    writes some to `fuzz/work/NAME/`; keep a few that add coverage), seeds from the
//!    vectors written with `BLOOMWIRE_WRITE_SEEDS=1 cargo test -p bloomwire-fuzz-checks
//!    --test fuzz_corpus`, and a `replay_NAME` test in `tests/fuzz_corpus.rs`.

use arbitrary::{Arbitrary, Unstructured};
use bytes::Buf;

use bloomwire::filter::counting::MAX_COUNTER_BITS;
use bloomwire::filter::rational::{K_FRAC_BITS, MAX_K};
use bloomwire::filter::MAX_M;
use bloomwire::format::{FLAG_TAGGED, TAG_LEN};
use bloomwire::optimizer::{LayoutKind, Optimizer, SizeModel, TailBound};
use bloomwire::{
    decode, decode_buf, decode_prefix, BaseHash, BitCoding, BloomFilter, Chunking, Coding,
    CounterCoding, CountingBloomFilter, Decoded, Encoder, FrameHeader, FrameKind, HashCount,
    HashFamily, IndexScheme, Layout, Limits, Message, PSource, Params, Receiver, Sender, Update,
};
use bloomwire::{Error, Result};
use bloomwire::{FrameKey, FrameView, Tag, Verifier};

/// The limits the targets decode with: small enough that a fuzzer runs tens of thousands of
/// inputs a second, large enough for every layout, coding and renormalization path.
pub const LIMITS: Limits = Limits::new()
    .max_m(1 << 14)
    .max_k(64)
    .max_payload(1 << 16)
    .max_metadata(1 << 8)
    // Counting filters of every m a Bloom filter may have (a byte a counter).
    .max_filter_bytes(1 << 14);

/// The largest m of the filters the targets build from keys (they are encoded and decoded
/// several times per input, so they are kept smaller than [`LIMITS`] allows).
pub const BUILT_MAX_M: u64 = 1 << 12;

/// Heap a decoder may use beyond what the header declares: symbol tables, the block
/// geometry, error messages.
pub const ALLOC_SLACK: usize = 1 << 17;

/// Heap a decoder may use for a frame it rejects in its header.
pub const HEADER_ALLOC: usize = 1 << 12;

/// Time a run may take whatever its size, in nanoseconds.
pub const FIXED_NANOS: u64 = 20_000_000;

/// Time a run may take per unit of work ([`frame_work`]: a symbol a payload byte may code,
/// or a word of m), in nanoseconds: about a hundred times what decoding a symbol takes, so
/// that only super-linear behaviour trips it.
pub const NANOS_PER_WORK: u64 = 1_000;

/// What running a closure cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// The most heap bytes in use at once while it ran, above what was in use before.
    pub peak_bytes: usize,
    /// Nanoseconds it took: the fuzz crate reports the thread's CPU time, so that a
    /// process descheduled on a loaded machine does not look like a slow decoder.
    pub nanos: u64,
}

/// Runs a closure and measures its cost.
pub trait Meter {
    /// Run `f` exactly once and report what it cost, or `None` where nothing is measured.
    fn measure(&self, f: &mut dyn FnMut()) -> Option<Measured>;
}

/// A meter that measures nothing (for replaying a corpus without an allocator hook).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMeter;

impl Meter for NoMeter {
    fn measure(&self, f: &mut dyn FnMut()) -> Option<Measured> {
        f();
        None
    }
}

/// The time bound for `work` units.
pub fn time_bound(work: u64) -> u64 {
    FIXED_NANOS.saturating_add(work.saturating_mul(NANOS_PER_WORK))
}

/// Run `f` under the meter and check its cost: at most `max_bytes` of heap at its peak, and
/// time linear in `work`. A run over the time bound is repeated twice and the fastest run
/// counts, so that a descheduled process is not reported as a slow decoder.
pub fn run_metered<T>(
    meter: &dyn Meter,
    what: &str,
    max_bytes: usize,
    work: u64,
    mut f: impl FnMut() -> T,
) -> T {
    let mut out = None;
    let Some(cost) = meter.measure(&mut || out = Some(f())) else {
        return out.expect("the meter runs the closure");
    };
    assert!(
        cost.peak_bytes <= max_bytes,
        "{what}: peak heap {} bytes, bound {max_bytes}",
        cost.peak_bytes
    );
    let bound = time_bound(work);
    if cost.nanos > bound {
        let mut fastest = cost.nanos;
        for _ in 0..2 {
            if let Some(again) = meter.measure(&mut || drop(f())) {
                fastest = fastest.min(again.nanos);
            }
        }
        assert!(
            fastest <= bound,
            "{what}: {fastest} ns for {work} units of work, bound {bound} ns"
        );
    }
    out.expect("the meter runs the closure")
}

/// Bytes of the packed form of m bits, rounded up to whole 64-bit words.
fn packed_bytes(m: u64) -> usize {
    (m.div_ceil(64) * 8) as usize
}

/// The work of decoding a frame of `bytes` bytes (payload, or whole input) that declares m
/// symbols: linear in the bytes and in the words of m, `2^12 * bytes + ceil(m / 64)`
/// units. A payload byte may code up to `2^12` symbols (the work bound of spec 2.2,
/// [`bloomwire::Coding::within_work_bound`]), each costing at most a unit; writing the
/// decoded array costs a word at a time (a raw payload, or a known-counters table of one
/// value that fills its counters).
pub fn frame_work(m: u64, bytes: u64) -> u64 {
    bytes
        .saturating_add(bloomwire::format::WORK_SLACK)
        .saturating_mul(1 << bloomwire::format::WORK_SHIFT)
        .saturating_add(m.div_ceil(64))
}

/// The heap bound and the work of decoding `input` as a frame within `limits`: from the
/// header when it parses, else [`HEADER_ALLOC`] and the input's length.
pub fn frame_cost(input: &[u8], limits: &Limits) -> (usize, u64) {
    match FrameHeader::parse(input, limits) {
        Ok(h) => {
            let m = h.params.m();
            // A counting filter keeps a byte per counter (and decodes them into a second
            // vector before moving them in).
            let filter = if h.is_counting() {
                m as usize
            } else {
                packed_bytes(m)
            };
            (
                2 * filter + h.payload_len + ALLOC_SLACK,
                frame_work(m, h.payload_len as u64 + input.len() as u64),
            )
        }
        Err(_) => (HEADER_ALLOC, input.len() as u64),
    }
}

/// The checks every decoder of self-delimiting frames gets, whatever it decodes: cost
/// within the bounds `cost` gives for the input; on success, canonical form (`encode`
/// gives back the input); on [`Error::Incomplete`], a `needed` that is exactly right at
/// the margin. Returns the decoded value.
///
/// A decoder for a new frame type is one call of this with its decode and encode functions.
pub fn check_decoder<T>(
    input: &[u8],
    meter: &dyn Meter,
    cost: impl Fn(&[u8]) -> (usize, u64),
    decode: impl Fn(&[u8]) -> Result<T>,
    encode: impl Fn(&T) -> Vec<u8>,
) -> Result<T> {
    let (max_bytes, work) = cost(input);
    let result = run_metered(meter, "decode", max_bytes, work, || decode(input));
    match &result {
        Ok(value) => {
            let again = encode(value);
            assert!(
                again == input,
                "an accepted frame is not canonical: re-encoded {} bytes differ from the {} decoded",
                again.len(),
                input.len()
            );
        }
        Err(Error::Incomplete { needed }) => {
            assert!(*needed >= 1, "Incomplete with needed = 0");
            // `needed` is a lower bound: with one byte fewer it must still be incomplete,
            // by exactly one byte. (Bounded so that a huge claim does not allocate.)
            // The filler continues the magic where the input stops inside it.
            if *needed <= LIMITS.max_payload as usize + 64 {
                let longer: Vec<u8> = (0..input.len() + needed - 1)
                    .map(|i| match input.get(i) {
                        Some(&b) => b,
                        None => bloomwire::format::MAGIC.get(i).copied().unwrap_or(0xA5),
                    })
                    .collect();
                assert_eq!(
                    decode(&longer).err(),
                    Some(Error::Incomplete { needed: 1 }),
                    "needed = {needed} was not the bytes missing"
                );
            }
        }
        Err(_) => {}
    }
    result
}

/// Decode arbitrary bytes as one frame, and check everything a frame decoder promises.
pub fn decode_frame(data: &[u8], meter: &dyn Meter) {
    let _ = check_frame(data, meter);
}

/// Decode `data` as exactly one frame within [`LIMITS`] with every check of
/// [`decode_frame`]; returns the message.
pub fn check_frame(data: &[u8], meter: &dyn Meter) -> Result<Message> {
    let result = check_decoder(
        data,
        meter,
        |d| frame_cost(d, &LIMITS),
        |d| decode::<Message>(d, &LIMITS),
        |m: &Message| {
            let mut again = m
                .to_frame()
                .expect("a decoded message re-encodes")
                .to_bytes()
                .to_vec();
            // A tagged frame decoded without the key (spec 2.5) re-encodes untagged: the
            // same bytes with the flag, the checksum recomputed, and the input's tag, which
            // only the key could check (forge_tagged does).
            if m.header().tag != Tag::Absent && data.len() >= TAG_LEN {
                again[10] |= FLAG_TAGGED;
                let body = again.len() - 4;
                let crc = crc32c::crc32c(&again[..body]);
                again[body..].copy_from_slice(&crc.to_le_bytes());
                again.extend_from_slice(&data[data.len() - TAG_LEN..]);
            }
            again
        },
    );
    let prefix = decode_prefix::<Message>(data, &LIMITS);
    // The header alone under the format's hard limits, so that headers of any m (up to 48
    // blocks of k) are parsed too: still no allocation beyond a constant, the same header
    // when both parse, and no header the hard limits refuse is accepted by the small ones.
    let limited = FrameHeader::parse(data, &LIMITS);
    let wide = run_metered(meter, "header", HEADER_ALLOC, data.len() as u64, || {
        FrameHeader::parse(data, &Limits::unlimited())
    });
    match (&limited, &wide) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Ok(_), Err(e)) => panic!("the default limits accept a header the hard limits refuse: {e}"),
        (Err(Error::LimitExceeded { .. }), Ok(_)) | (Err(_), Err(_)) => {}
        (Err(e), Ok(_)) => panic!("a header the hard limits accept is refused with {e}"),
    }
    match &result {
        Ok(message) => {
            let header = message.header();
            assert_eq!(header.frame_len(), data.len());
            assert_eq!(FrameHeader::parse(data, &LIMITS).as_ref(), Ok(header));
            assert_eq!(prefix.as_ref(), Ok(&(message.clone(), data.len())));
            // A stream: the frame followed by the start of the next.
            let mut stream = data.to_vec();
            stream.extend_from_slice(&data[..data.len().min(7)]);
            assert_eq!(
                decode_prefix::<Message>(&stream, &LIMITS),
                Ok((message.clone(), data.len()))
            );
            assert_eq!(
                decode::<Message>(&stream, &LIMITS).err(),
                Some(Error::TrailingBytes {
                    count: stream.len() - data.len(),
                    offset: data.len()
                })
            );
            // Cut anywhere: incomplete, never a different frame.
            let cut = usize::from(data[data.len() / 2]) * data.len() / 256;
            assert!(matches!(
                decode::<Message>(&data[..cut], &LIMITS),
                Err(Error::Incomplete { .. })
            ));
            // Split across two chunks of a `Buf`.
            let (a, b) = data.split_at(cut);
            let mut chain = a.chain(b);
            let chunked = decode_buf::<Decoded, _>(&mut chain, &LIMITS);
            match message {
                Message::Full(d) => {
                    assert_eq!(chunked.as_ref(), Ok(d));
                    assert_eq!(chain.remaining(), 0);
                    assert_eq!(d.filter.m(), header.params.m());
                }
                Message::Delta(delta) => {
                    assert_eq!(chunked, Err(Error::UnexpectedDelta));
                    assert_eq!(delta.xor.len(), header.params.m());
                }
                Message::Counting(d) => {
                    assert!(matches!(chunked, Err(Error::UnexpectedFilterType { .. })));
                    assert_eq!(d.filter.counters().len() as u64, header.params.m());
                }
                Message::CountingDelta(delta) => {
                    assert_eq!(chunked, Err(Error::UnexpectedDelta));
                    assert_eq!(delta.xor.len() as u64, header.params.m());
                }
                other => panic!("a message of no known kind: {other:?}"),
            }
            // The checked view decodes the same bits: for a raw frame, the plain copy
            // against the one-shot decoder's copy in the checksum's pass.
            let bits = match message {
                Message::Full(d) => Some(d.filter.bits()),
                Message::Delta(delta) => Some(&delta.xor),
                _ => None,
            };
            if let Some(bits) = bits {
                let view = FrameView::parse(data, &LIMITS).expect("the view of a frame");
                assert_eq!(view.decode().as_ref(), Ok(bits));
            }
        }
        Err(Error::TrailingBytes { offset, .. }) => {
            let (message, len) = prefix.expect("the frame before the trailing bytes decodes");
            assert_eq!(len, *offset);
            assert_eq!(decode::<Message>(&data[..len], &LIMITS), Ok(message));
        }
        Err(e) => {
            assert_eq!(prefix.err().as_ref(), Some(e));
            if let Error::ChecksumMismatch { .. } = e {
                assert_eq!(FrameView::parse(data, &LIMITS).err().as_ref(), Some(e));
            }
        }
    }
    result
}

/// An arbitrary filter: parameters within [`LIMITS`] and the keys inserted.
#[derive(Debug, Clone)]
pub struct FilterCase {
    /// The filter's parameters.
    pub params: Params,
    /// The keys inserted.
    pub keys: Vec<Vec<u8>>,
}

impl FilterCase {
    /// The filter with the keys inserted.
    pub fn build(&self) -> BloomFilter {
        let mut f = BloomFilter::new(self.params.clone());
        for k in &self.keys {
            f.insert(k);
        }
        f
    }
}

fn arbitrary_family(u: &mut Unstructured<'_>) -> arbitrary::Result<HashFamily> {
    let base = if u.arbitrary()? {
        BaseHash::Xxh64 {
            seed: u.arbitrary()?,
        }
    } else {
        BaseHash::SipHash24 {
            k0: u.arbitrary()?,
            k1: u.arbitrary()?,
        }
    };
    let scheme = if u.arbitrary()? {
        IndexScheme::DoubleHashing
    } else {
        IndexScheme::EnhancedDoubleHashing
    };
    Ok(HashFamily::new(base, scheme))
}

/// A raw k in `[1, 16]`: integer or on the 1/65536 grid.
fn arbitrary_k(u: &mut Unstructured<'_>) -> arbitrary::Result<HashCount> {
    let raw = if u.arbitrary()? {
        u.int_in_range(1..=16u32)? << K_FRAC_BITS
    } else {
        u.int_in_range(1 << K_FRAC_BITS..=16 << K_FRAC_BITS)?
    };
    Ok(HashCount::from_raw(raw).expect("in range"))
}

/// Parameters of a filter of at most `max_m` bits.
pub fn arbitrary_params(u: &mut Unstructured<'_>, max_m: u64) -> arbitrary::Result<Params> {
    let m = u.int_in_range(1..=max_m)?;
    let family = arbitrary_family(u)?;
    let layout = match u.int_in_range(0..=2u8)? {
        0 => Layout::Standard { k: arbitrary_k(u)? },
        1 => {
            let k = arbitrary_k(u)?;
            if m < u64::from(k.ceil()) {
                Layout::Standard { k }
            } else {
                Layout::Partitioned { k }
            }
        }
        _ => {
            let mut raws = (0..m.count_ones())
                .map(|_| u.int_in_range(0..=4u32 << K_FRAC_BITS))
                .collect::<arbitrary::Result<Vec<_>>>()?;
            let sum: u32 = raws.iter().sum();
            if sum < 1 << K_FRAC_BITS {
                raws[0] += (1 << K_FRAC_BITS) - sum;
            }
            Layout::Blocks {
                ks: raws
                    .into_iter()
                    .map(|r| HashCount::from_raw_allow_zero(r).expect("at most 4"))
                    .collect(),
            }
        }
    };
    Ok(Params::new(m, layout, family).expect("valid by construction"))
}

impl<'a> Arbitrary<'a> for FilterCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let params = arbitrary_params(u, BUILT_MAX_M)?;
        let count = u.int_in_range(0..=200usize)?;
        let mut keys = Vec::with_capacity(count);
        for _ in 0..count {
            if u.is_empty() {
                break;
            }
            keys.push(<Vec<u8>>::arbitrary(u)?);
        }
        Ok(FilterCase { params, keys })
    }
}

fn arbitrary_p_source(u: &mut Unstructured<'_>) -> arbitrary::Result<PSource> {
    Ok(match u.int_in_range(0..=2u8)? {
        0 => PSource::Measured,
        1 => PSource::Theory,
        _ => PSource::Fixed(u.arbitrary()?),
    })
}

/// Build an arbitrary filter, encode it with every coding and with the encoder's own
/// choice, and check each frame: it decodes (with every check of [`decode_frame`]) to the
/// same filter, with no false negatives for its keys.
pub fn round_trip(data: &[u8], meter: &dyn Meter) {
    let mut u = Unstructured::new(data);
    let (Ok(p_source), Ok(generation), Ok(shift), Ok(case)) = (
        arbitrary_p_source(&mut u),
        u.arbitrary::<u64>(),
        u.arbitrary::<u8>(),
        FilterCase::arbitrary(&mut u),
    ) else {
        return;
    };
    let filter = case.build();
    // Application metadata (flags bit 3) on a third of the inputs, from bytes already read.
    let metadata = match generation % 3 {
        0 => generation.to_le_bytes().to_vec(),
        _ => Vec::new(),
    };
    let encoder = Encoder::new().p_source(p_source).metadata(metadata);
    let mut frames: Vec<_> = BitCoding::ALL
        .iter()
        .map(|&c| (Some(c), encoder.encode_with(&filter, c).expect("no budget")))
        .collect();
    // Chunked payloads (spec 4.10) of every coding that may be chunked (all but raw and
    // codings 9 and 11), in chunks of 2^6 to 2^13 bits where the filter has more bits than one
    // chunk.
    let shift = 6 + shift % 8;
    if 1u64 << shift < filter.m() {
        let chunked = encoder.clone().chunking(Chunking::Shift(shift));
        let chunkable = |c: &BitCoding| c != &BitCoding::Raw && Coding::from(*c).is_chunkable();
        for c in BitCoding::ALL.into_iter().filter(chunkable) {
            let frame = chunked.encode_with(&filter, c).expect("no budget");
            assert_eq!(frame.header().chunk_shift, Some(shift));
            frames.push((Some(c), frame));
        }
    }
    frames.push((
        None,
        encoder
            .encode_generation(&filter, generation)
            .expect("no budget"),
    ));
    for (coding, frame) in frames {
        let bytes = frame.to_bytes();
        assert_eq!(bytes.len(), frame.encoded_len());
        if let Some(c) = coding {
            assert_eq!(frame.coding(), Coding::from(c));
            let chosen_q0 = Coding::from(c).has_q0() && !Coding::from(c).q0_is_measured();
            if let (PSource::Fixed(q0), true) = (p_source, chosen_q0) {
                assert_eq!(frame.header().q0, Some(q0.max(1)));
            }
        }
        let Ok(Message::Full(d)) = check_frame(&bytes, meter) else {
            panic!("{:?} frame does not decode", frame.coding());
        };
        assert_eq!(&d.header, frame.header());
        assert_eq!(d.filter, filter);
        for key in &case.keys {
            assert!(d.filter.contains(key), "false negative after {coding:?}");
        }
    }
    // The same bits as another library's (base hash 0): they decode to the same bits, and
    // queries are refused.
    let opaque = Params::new(
        filter.m(),
        Layout::Standard {
            k: filter.params().k(),
        },
        HashFamily::opaque(),
    )
    .expect("a standard layout");
    let opaque = BloomFilter::from_parts(opaque, filter.bits().clone(), filter.n()).expect("m");
    let frame = encoder
        .encode_generation(&opaque, generation)
        .expect("no budget");
    let Ok(Message::Full(d)) = check_frame(&frame.to_bytes(), meter) else {
        panic!("opaque frame does not decode");
    };
    assert_eq!(d.filter, opaque);
    assert_eq!(d.filter.try_contains(b"k"), Err(Error::OpaqueHashFamily));
}

/// A counting filter's frame: arbitrary bytes decoded as one with every check of
/// [`check_decoder`] (`mode` byte even), or a counting filter built from arbitrary keys,
/// some deleted again, encoded with every counter coding and decoded back (odd).
pub fn decode_counting(data: &[u8], meter: &dyn Meter) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let decoded = check_decoder(
            rest,
            meter,
            |d| frame_cost(d, &LIMITS),
            |d| bloomwire::decode::<Decoded<CountingBloomFilter>>(d, &LIMITS),
            |d: &Decoded<CountingBloomFilter>| {
                Message::Counting(d.clone())
                    .to_frame()
                    .expect("a decoded message re-encodes")
                    .to_bytes()
                    .to_vec()
            },
        );
        if let Ok(d) = decoded {
            // The summary has a one bit exactly where a counter is not zero.
            let bits = d.filter.to_bloom_filter();
            for (i, &c) in d.filter.counters().iter().enumerate() {
                assert_eq!(bits.bits().get(i as u64), c != 0, "counter {i}");
            }
        }
        return;
    }
    let mut u = Unstructured::new(rest);
    let (Ok(width), Ok(deleted), Ok(case)) = (
        u.arbitrary::<u8>(),
        u.arbitrary::<u8>(),
        FilterCase::arbitrary(&mut u),
    ) else {
        return;
    };
    let width = 1 + width % MAX_COUNTER_BITS;
    let mut filter = CountingBloomFilter::new(case.params.clone(), width).expect("width 1..=8");
    case.keys.iter().for_each(|k| filter.insert(k));
    // Delete every key whose index has the low bits of `deleted`: those may be absent after.
    let kept: Vec<&Vec<u8>> = case
        .keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            let delete = deleted != 0 && i % usize::from(deleted) == 0;
            (!delete || filter.remove(k).is_err()).then_some(k)
        })
        .collect();
    for coding in CounterCoding::ALL {
        let frame = Encoder::new()
            .encode_with(&filter, coding)
            .expect("a measured table codes its own counters");
        let bytes = frame.to_bytes();
        let Ok(Message::Counting(d)) = check_frame(&bytes, meter) else {
            panic!("{coding} counting frame does not decode");
        };
        assert_eq!(d.filter, filter);
        for key in &kept {
            assert!(d.filter.contains(key), "false negative after {coding}");
        }
    }
}

/// The check of `data` after its first byte (the mode): `bytes` when the mode is even (the
/// rest taken as frames), `built` when it is odd (the rest taken as what to build frames of).
fn by_mode(
    data: &[u8],
    meter: &dyn Meter,
    bytes: fn(&[u8], &dyn Meter),
    built: fn(&[u8], &dyn Meter),
) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        bytes(rest, meter);
    } else {
        built(rest, meter);
    }
}

/// A delta from an arbitrary base to an arbitrary later filter, corrupted or not.
pub fn apply_delta(data: &[u8], meter: &dyn Meter) {
    by_mode(data, meter, apply_delta_bytes, apply_delta_built);
}

/// Two arbitrary frames: the first two bytes say where the base ends.
fn apply_delta_bytes(data: &[u8], meter: &dyn Meter) {
    if data.len() < 2 {
        return;
    }
    let split = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
    let (base, delta_bytes) = data[2..].split_at(split);
    let (Ok(Message::Full(base)), Ok(Message::Delta(delta))) =
        (check_frame(base, meter), check_frame(delta_bytes, meter))
    else {
        return;
    };
    let kept = base.filter.clone();
    // Applying costs what decoding the delta frame may cost: the same heap and time bound.
    let (max_bytes, work) = frame_cost(delta_bytes, &LIMITS);
    let applied = run_metered(meter, "apply", max_bytes, work, || {
        delta.apply(&base.filter, delta.base_generation())
    });
    assert_eq!(base.filter, kept, "apply changed the base");
    let FrameKind::Delta {
        base_digest,
        result_digest,
        ..
    } = delta.header.kind
    else {
        unreachable!("a delta frame")
    };
    match &applied {
        Ok(next) => {
            assert_eq!(base.filter.bits().digest(), base_digest);
            assert_eq!(next.bits().digest(), result_digest);
            assert_eq!(next.params(), &delta.header.params);
            assert_eq!(next.n(), delta.header.n);
            let mut back = next.bits().clone();
            back.xor_with(&delta.xor).expect("same length");
            assert_eq!(&back, base.filter.bits());
        }
        Err(Error::Incompatible(_) | Error::BaseMismatch { .. } | Error::ResultMismatch { .. }) => {
        }
        Err(e) => panic!("unexpected error applying a delta: {e}"),
    }
    // A receiver holding the base at the delta's base generation does the same.
    let mut receiver: Receiver = Receiver::new(LIMITS);
    let mut header = base.header.clone();
    header.generation = delta.base_generation();
    let held = Message::Full(bloomwire::Decoded {
        filter: base.filter.clone(),
        header,
    });
    receiver
        .apply(held)
        .expect("a full frame into an empty receiver");
    let received = receiver.apply(Message::Delta(delta.clone()));
    match (&applied, received) {
        (Ok(next), Ok(Update::Delta { generation })) => {
            assert_eq!(generation, delta.header.generation);
            assert_eq!(receiver.filter(), Some(next));
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, &b);
            assert_eq!(receiver.filter(), Some(&base.filter));
            assert_eq!(receiver.generation(), Some(delta.base_generation()));
        }
        (a, b) => panic!("apply gave {a:?}, the receiver {b:?}"),
    }
}

/// A base filter, a later one with more keys (or other parameters), a delta between them
/// in an arbitrary coding, and optional bit flips in the delta frame.
fn apply_delta_built(data: &[u8], meter: &dyn Meter) {
    let mut u = Unstructured::new(data);
    let Ok((base_case, more, other_params, coding, base_generation, step, flips)) = (|| {
        Ok::<_, arbitrary::Error>((
            FilterCase::arbitrary(&mut u)?,
            <Vec<Vec<u8>>>::arbitrary(&mut u)?,
            u.ratio(1u8, 8)?,
            *u.choose(&BitCoding::ALL)?,
            u.int_in_range(0..=u64::MAX - 1)?,
            u.int_in_range(1..=1000u64)?,
            <Vec<u32>>::arbitrary(&mut u)?,
        ))
    })() else {
        return;
    };
    let base = base_case.build();
    let (mut next, mut next_keys) = if other_params {
        let Ok(params) = arbitrary_params(&mut u, BUILT_MAX_M) else {
            return;
        };
        (BloomFilter::new(params), Vec::new())
    } else {
        (base.clone(), base_case.keys.clone())
    };
    for k in &more {
        next.insert(k);
    }
    next_keys.extend(more);
    let generation = base_generation.saturating_add(step);
    let encoder = Encoder::new().coding(coding);
    let frame = match encoder.encode_delta(&base, base_generation, &next, generation) {
        Ok(f) => f,
        Err(Error::Incompatible(_)) => {
            assert_ne!(base.params(), next.params());
            return;
        }
        Err(e) => panic!("encode_delta: {e}"),
    };
    let mut bytes = frame.to_bytes().to_vec();
    for f in &flips {
        let bit = *f as usize % (bytes.len() * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
    }
    let decoded = check_frame(&bytes, meter);
    if bytes != frame.to_bytes() {
        // Corrupted: any error, or a frame whose checks are consistent.
        if let Ok(Message::Delta(d)) = decoded {
            if let Ok(result) = d.apply(&base, d.base_generation()) {
                let FrameKind::Delta { result_digest, .. } = d.header.kind else {
                    unreachable!("a delta frame")
                };
                assert_eq!(result.bits().digest(), result_digest);
            }
        }
        return;
    }
    let Ok(Message::Delta(delta)) = decoded else {
        panic!("a delta frame does not decode: {decoded:?}");
    };
    assert_eq!(delta.base_generation(), base_generation);
    assert_eq!(delta.apply(&base, base_generation), Ok(next.clone()));
    for k in &next_keys {
        assert!(next.contains(k));
    }
    // Against the wrong generation, or a base with other bits: a typed refusal.
    assert!(matches!(
        delta.apply(&base, base_generation.wrapping_add(1)),
        Err(Error::GenerationGap { .. })
    ));
    let mut other = base.clone();
    let extra: Vec<u8> = b"not in the base".to_vec();
    other.insert(&extra);
    if other.bits() != base.bits() {
        assert!(matches!(
            delta.apply(&other, base_generation),
            Err(Error::BaseMismatch { .. })
        ));
    }
}

/// A receiver fed a stream.
pub fn receiver_stream(data: &[u8], meter: &dyn Meter) {
    by_mode(data, meter, receiver_stream_bytes, receiver_stream_built);
}

/// Check one step of a receiver: on success it holds the frame's generation; on failure
/// nothing changed (filter, generation, digest). The frame goes through
/// [`Receiver::receive`] (which applies positional deltas in place, straight from the
/// payload) and, on a twin of the receiver, through [`Receiver::apply`] of the decoded
/// message: both must agree on the result and the state.
fn receive_checked(receiver: &mut Receiver, bytes: &[u8], message: Message) -> Result<Update> {
    let state = |r: &Receiver| (r.filter().cloned(), r.generation(), r.digest());
    let before = state(receiver);
    let generation = message.header().generation;
    let restart = message.header().restart;
    let full = matches!(message, Message::Full(_));
    let mut twin = receiver.clone();
    let twin_result = twin.apply(message);
    let result = receiver.receive(bytes);
    assert_eq!(result, twin_result, "receive and apply disagree");
    assert_eq!(state(receiver), state(&twin));
    match &result {
        Ok(update) => {
            assert_eq!(receiver.generation(), Some(generation));
            assert_eq!(
                receiver.digest(),
                receiver.filter().map(|f| f.bits().digest())
            );
            if let Some(have) = before.1 {
                assert!(generation > have || (full && restart));
            }
            match *update {
                Update::Full {
                    generation: g,
                    skipped,
                } => {
                    assert!(full);
                    assert_eq!(g, generation);
                    let want = before.1.map_or(0, |h| generation.saturating_sub(h + 1));
                    assert_eq!(skipped, want);
                }
                Update::Delta { generation: g } => {
                    assert!(!full);
                    assert_eq!(g, generation);
                }
                other => panic!("an update of no known kind: {other:?}"),
            }
        }
        Err(e) => {
            assert!(
                matches!(
                    e,
                    Error::StaleGeneration { .. }
                        | Error::GenerationGap { .. }
                        | Error::Incompatible(_)
                        | Error::BaseMismatch { .. }
                        | Error::ResultMismatch { .. }
                ),
                "unexpected receiver error {e}"
            );
            assert_eq!(state(receiver), before);
        }
    }
    result
}

/// Arbitrary bytes as a stream of frames: decode frame after frame, skip to the next magic
/// after a bad one.
fn receiver_stream_bytes(data: &[u8], meter: &dyn Meter) {
    let mut receiver: Receiver = Receiver::new(LIMITS);
    let mut rest = data;
    while !rest.is_empty() {
        let (max_bytes, work) = frame_cost(rest, &LIMITS);
        match run_metered(meter, "stream decode", max_bytes, work, || {
            decode_prefix::<Message>(rest, &LIMITS)
        }) {
            Ok((message, len)) => {
                assert_eq!(check_frame(&rest[..len], meter).as_ref(), Ok(&message));
                let _ = receive_checked(&mut receiver, &rest[..len], message);
                rest = &rest[len..];
            }
            Err(Error::Incomplete { .. }) => break,
            Err(_) => {
                let next = rest[1..]
                    .windows(bloomwire::format::MAGIC.len())
                    .position(|w| w == bloomwire::format::MAGIC);
                match next {
                    Some(i) => rest = &rest[1 + i..],
                    None => break,
                }
            }
        }
    }
}

/// A sender's generations delivered with losses, duplicates and reordering; the application
/// asks for a full frame whenever the receiver says it must resynchronize. Whenever the
/// receiver accepts a frame it holds exactly the sender's filter of that generation.
fn receiver_stream_built(data: &[u8], meter: &dyn Meter) {
    let mut u = Unstructured::new(data);
    let Ok((case, full_every, coding)) = (|| {
        Ok::<_, arbitrary::Error>((
            FilterCase::arbitrary(&mut u)?,
            u.int_in_range(0..=8u64)?,
            *u.choose(&BitCoding::ALL)?,
        ))
    })() else {
        return;
    };
    let mut filter = case.build();
    let mut sender = Sender::new(Encoder::new().coding(coding), full_every);
    let mut receiver: Receiver = Receiver::new(LIMITS);
    let mut sent: Vec<(u64, BloomFilter)> = Vec::new();
    let mut held_back: Option<Vec<u8>> = None;
    for _ in 0..u.int_in_range(0..=12u8).unwrap_or(0) {
        let Ok(keys) = <Vec<Vec<u8>>>::arbitrary(&mut u) else {
            break;
        };
        for k in keys.iter().take(64) {
            filter.insert(k);
        }
        let frame = sender.next_frame(&filter).expect("no budget");
        sent.push((sender.generation(), filter.clone()));
        let bytes = frame.to_bytes().to_vec();
        // 0: deliver, 1: lose, 2: deliver twice, 3: hold back until after the next one.
        let fate = u.int_in_range(0..=3u8).unwrap_or(0);
        let mut deliveries = match fate {
            0 => vec![bytes],
            1 => vec![],
            2 => vec![bytes.clone(), bytes],
            _ => {
                let previous = held_back.replace(bytes);
                previous.into_iter().collect()
            }
        };
        if fate != 3 {
            deliveries.extend(held_back.take());
        }
        for bytes in deliveries {
            let Ok(message) = check_frame(&bytes, meter) else {
                panic!("a sender's frame does not decode");
            };
            let generation = message.header().generation;
            match receive_checked(&mut receiver, &bytes, message) {
                Ok(_) => {
                    let (_, want) = sent
                        .iter()
                        .find(|(g, _)| *g == generation)
                        .expect("a sent generation");
                    assert_eq!(receiver.filter(), Some(want));
                }
                Err(Error::StaleGeneration { .. }) => {}
                Err(_) => sender.request_full(),
            }
        }
    }
}

/// Heap the optimizer may use for one plan.
pub const OPTIMIZER_ALLOC: usize = 1 << 24;

/// Work units the optimizer may take per k it searches (with [`NANOS_PER_WORK`], 2 ms per
/// k; a search over m for one k takes well under a millisecond, up to a third with the
/// block layout and rational k).
pub const OPTIMIZER_WORK_PER_K: u64 = 2_000;

/// The optimizer on arbitrary settings: a typed error or a plan that respects them, in
/// memory bounded by a constant and time linear in the number of k it may search.
pub fn optimizer(data: &[u8], meter: &dyn Meter) {
    let mut u = Unstructured::new(data);
    let Ok(case) = OptimizerCase::arbitrary(&mut u) else {
        return;
    };
    let ks = u64::from(case.max_k.ceil().saturating_sub(case.min_k.whole())) + 1;
    run_metered(
        meter,
        "optimizer",
        OPTIMIZER_ALLOC,
        ks * OPTIMIZER_WORK_PER_K,
        || case.check(),
    );
}

/// Which optimizer entry point, with its arguments.
#[derive(Debug, Clone, Copy)]
enum Goal {
    Budget(u64),
    Fpr(f64),
    DeltaBudget(f64, u64),
    DeltaFpr(f64, f64),
}

/// Arbitrary optimizer settings and a question for it.
#[derive(Debug, Clone)]
struct OptimizerCase {
    optimizer: Optimizer,
    max_m: u64,
    step: u64,
    power_of_two: bool,
    min_k: HashCount,
    max_k: HashCount,
    rational: bool,
    layout: LayoutKind,
    family: HashFamily,
    model: SizeModel,
    n: u64,
    goal: Goal,
}

impl<'a> Arbitrary<'a> for OptimizerCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let max_m = match u.int_in_range(0..=2u8)? {
            0 => MAX_M,
            1 => u.int_in_range(1..=1u64 << 24)?,
            _ => u.arbitrary()?,
        };
        let step = match u.int_in_range(0..=2u8)? {
            0 => 1,
            1 => 1u64 << u.int_in_range(0..=16u32)?,
            _ => u.arbitrary()?,
        };
        let raw_k = |u: &mut Unstructured<'_>| -> arbitrary::Result<HashCount> {
            let raw = if u.arbitrary()? {
                u.int_in_range(1..=MAX_K)? << K_FRAC_BITS
            } else {
                u.int_in_range(1 << K_FRAC_BITS..=MAX_K << K_FRAC_BITS)?
            };
            Ok(HashCount::from_raw(raw).expect("in range"))
        };
        let (a, b) = (raw_k(u)?, raw_k(u)?);
        let (min_k, max_k) = if u.arbitrary()? {
            (a.min(b), a.max(b))
        } else {
            (a, b)
        };
        let rational = u.arbitrary()?;
        let layout = *u.choose(&[
            LayoutKind::Standard,
            LayoutKind::Partitioned,
            LayoutKind::Blocks,
        ])?;
        let model = if u.arbitrary()? {
            SizeModel::Frame
        } else {
            SizeModel::Ideal
        };
        let tail = if u.arbitrary()? {
            TailBound::Gaussian
        } else {
            TailBound::Bernstein
        };
        let epsilon = if u.arbitrary()? {
            f64::from(u.int_in_range(1..=1000u32)?) * 1e-9
        } else {
            u.arbitrary()?
        };
        let family = arbitrary_family(u)?;
        let power_of_two = u.arbitrary()?;
        let optimizer = Optimizer::new()
            // The format's limits, so that every m and k of the settings is searched (the
            // receiver's limits only narrow the range; `tests/optimizer.rs` covers them).
            .limits(Limits::unlimited())
            .max_m(max_m)
            .m_multiple_of(step)
            .power_of_two_m(power_of_two)
            .k_range(min_k, max_k)
            .rational_k(rational)
            .layout(layout)
            .family(family)
            .size_model(model)
            .tail_bound(tail)
            .epsilon(epsilon);
        let n = match u.int_in_range(0..=2u8)? {
            0 => u.int_in_range(0..=100_000u64)?,
            1 => u.int_in_range(0..=1u64 << 40)?,
            _ => u.arbitrary()?,
        };
        let real = |u: &mut Unstructured<'_>| -> arbitrary::Result<f64> {
            Ok(if u.arbitrary()? {
                f64::from(u.int_in_range(0..=1_000_000u32)?) / 1e6
            } else {
                u.arbitrary()?
            })
        };
        let budget = match u.int_in_range(0..=1u8)? {
            0 => u.int_in_range(0..=n.saturating_mul(4).max(64))?,
            _ => u.arbitrary()?,
        };
        let goal = match u.int_in_range(0..=3u8)? {
            0 => Goal::Budget(budget),
            1 => Goal::Fpr(real(u)?),
            2 => Goal::DeltaBudget(real(u)?, budget),
            _ => Goal::DeltaFpr(real(u)?, real(u)?),
        };
        Ok(OptimizerCase {
            optimizer,
            max_m,
            step,
            power_of_two,
            min_k,
            max_k,
            rational,
            layout,
            family,
            model,
            n,
            goal,
        })
    }
}

impl OptimizerCase {
    fn check(&self) {
        let (o, n) = (&self.optimizer, self.n);
        let (plan, budget) = match self.goal {
            Goal::Budget(b) => (o.plan(n, b), Some(b)),
            Goal::Fpr(f) => (o.plan_for_fpr(n, f), None),
            Goal::DeltaBudget(c, b) => (o.plan_delta(n, c, b), Some(b)),
            Goal::DeltaFpr(c, f) => (o.plan_delta_for_fpr(n, c, f), None),
        };
        let plan = match plan {
            Ok(plan) => plan,
            Err(
                Error::InvalidParameter { .. }
                | Error::OverBudget { .. }
                | Error::Incompatible(_)
                | Error::PlanExceedsLimits { .. },
            ) => return,
            Err(e) => panic!("unexpected optimizer error {e}"),
        };
        let (min_k, max_k) = (self.min_k, self.max_k);
        let m = plan.m();
        assert!((1..=self.max_m.min(MAX_M)).contains(&m), "m = {m}");
        assert_eq!(
            m % self.step,
            0,
            "m = {m} is not a multiple of {}",
            self.step
        );
        assert_eq!(plan.n, n);
        assert_eq!(plan.params.family(), &self.family);
        if self.power_of_two {
            assert!(m.is_power_of_two(), "m = {m} is not a power of two");
        }
        let k = plan.k();
        if self.layout == LayoutKind::Blocks {
            // The block k_j are rounded to the grid one by one: their sum may be off by
            // one grid step per block.
            let slack = m.count_ones();
            assert!(
                k.raw() + slack >= min_k.raw() && k.raw() <= max_k.raw() + slack,
                "k = {k} outside [{min_k}, {max_k}]"
            );
        } else {
            assert!(
                k >= min_k && k <= max_k,
                "k = {k} outside [{min_k}, {max_k}]"
            );
            if !self.rational {
                assert!(k.is_integer(), "k = {k} with integer k asked for");
            }
        }
        let f = plan.false_positive_rate;
        assert!((0.0..=1.0).contains(&f), "false positive rate {f}");
        assert!(plan.expected_bytes.is_finite() && plan.expected_bytes >= 0.0);
        if let (Some(budget), SizeModel::Frame) = (budget, self.model) {
            assert!(
                plan.worst_case_bytes <= budget,
                "worst case {} over the budget {budget}",
                plan.worst_case_bytes
            );
        }
    }
}

/// The key [`forge_tagged`]'s genuine frames are tagged with (the forger does not know it).
fn forge_key() -> FrameKey {
    FrameKey::new(core::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x5C))
}

/// The genuine tagged frames [`forge_tagged`] starts from: a full frame (known-p), a
/// positional delta from it, a chunked full frame, a counting frame and a raw full frame
/// with the restart flag, all tagged with `forge_key`.
pub fn genuine_tagged() -> &'static [Vec<u8>] {
    static FRAMES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    FRAMES.get_or_init(|| {
        let params = Params::standard(3000, 3, HashFamily::default()).expect("valid");
        let filter = |keys: core::ops::Range<u32>| {
            let mut f = BloomFilter::new(params.clone());
            keys.for_each(|i| f.insert(i.to_le_bytes()));
            f
        };
        let (a, b) = (filter(0..200), filter(5..205));
        let tagged = || Encoder::new().key(forge_key());
        let mut counting = CountingBloomFilter::new(params.clone(), 4).expect("valid");
        (0..150u32).for_each(|i| counting.insert(i.to_le_bytes()));
        let restarted = tagged()
            .coding(BitCoding::Raw)
            .encode_generation(&b, 10)
            .expect("no budget")
            .with_restart(true);
        [
            tagged().coding(BitCoding::KnownP).encode_generation(&a, 7),
            tagged()
                .coding(BitCoding::Positional)
                .encode_delta(&a, 7, &b, 8),
            tagged()
                .chunking(Chunking::Shift(10))
                .coding(BitCoding::KnownPInterleaved)
                .encode_generation(&b, 9),
            Encoder::<CountingBloomFilter>::new()
                .key(forge_key())
                .encode_generation(&counting, 3),
            restarted,
        ]
        .map(|frame| frame.expect("a frame").to_bytes().to_vec())
        .to_vec()
    })
}

/// A forger's attempt on an authenticated frame (spec 2.5): the first byte picks one of
/// the [`genuine_tagged`] frames, the rest are edits of four bytes each (an operation, a
/// 16-bit position, a value: XOR a byte, insert one, delete one, or cut the frame there).
/// The checksum of the result is then made right again where its header (if it parses)
/// says the checksum is, so the forgery gets past everything but the tag. A decoder with
/// the key accepts exactly the genuine bytes and refuses everything else with an error
/// that is not about the payload (the tag comes first); a keyed receiver that holds the
/// genuine base refuses the forgery and is unchanged; a decoder without the key must not
/// panic, and says `Tag::Unverified` of whatever tagged frame it accepts.
pub fn forge_tagged(data: &[u8], meter: &dyn Meter) {
    let Some((&pick, edits)) = data.split_first() else {
        return;
    };
    let frames = genuine_tagged();
    let genuine = &frames[usize::from(pick) % frames.len()];
    let mut forged = genuine.clone();
    for e in edits.chunks_exact(4).take(64) {
        let pos = usize::from(u16::from_le_bytes([e[1], e[2]]));
        match e[0] % 4 {
            0 if !forged.is_empty() => {
                let i = pos % forged.len();
                forged[i] ^= e[3];
            }
            1 => forged.insert(pos % (forged.len() + 1), e[3]),
            2 if !forged.is_empty() => {
                forged.remove(pos % forged.len());
            }
            3 => forged.truncate(pos % (forged.len() + 1)),
            _ => {}
        }
    }
    if let Ok(h) = FrameHeader::parse(&forged, &LIMITS) {
        let at = h.header_len + h.payload_len;
        if at + 4 <= forged.len() {
            let crc = crc32c::crc32c(&forged[..at]);
            forged[at..at + 4].copy_from_slice(&crc.to_le_bytes());
        }
    }
    let verifier = Verifier::new(forge_key(), LIMITS);
    let (max_bytes, work) = frame_cost(&forged, &LIMITS);
    let keyed = run_metered(meter, "keyed decode", max_bytes, work, || {
        decode::<Message>(&forged, &verifier)
    });
    match keyed {
        Ok(message) => {
            assert!(
                &forged == genuine,
                "a forged frame of {} bytes passed the tag check",
                forged.len()
            );
            assert_eq!(message.header().tag, Tag::Verified);
        }
        Err(e) => {
            assert!(&forged != genuine, "the genuine frame was refused: {e}");
            assert!(
                !matches!(e, Error::CorruptPayload { .. }),
                "a forgery's payload was read before its tag was checked: {e}"
            );
        }
    }
    // The keyed stream decoder agrees, and a keyed receiver holding the genuine full frame
    // (the delta's base) is unchanged by a refused forgery.
    let prefixed = decode_prefix::<Message>(&forged, &verifier);
    if let Ok((_, used)) = prefixed {
        assert_eq!(
            &forged[..used],
            &genuine[..],
            "a forged prefix passed the tag check"
        );
    }
    let mut receiver: Receiver = Receiver::new(LIMITS).with_key(forge_key());
    receiver.receive(&frames[0]).expect("the genuine base");
    let before = (receiver.generation(), receiver.digest());
    if receiver.receive(&forged).is_err() {
        assert_eq!((receiver.generation(), receiver.digest()), before);
    } else {
        assert!(&forged == genuine, "a keyed receiver applied a forgery");
    }
    // Without the key the tag is skipped, never trusted.
    if let Ok(m) = decode::<Message>(&forged, &LIMITS) {
        assert_ne!(m.header().tag, Tag::Verified);
    }
}

/// The targets that decode frames and get every spec vector as a seed.
pub const VECTOR_TARGETS: [&str; 1] = ["decode_frame"];

/// The seed inputs each target's corpus starts from, built from the spec's test vectors
/// (`spec/vectors`, passed as `vectors`): `(target, file name, bytes)`.
///
/// The [`VECTOR_TARGETS`] get every accept and reject vector; `apply_delta` every delta with its
/// base; `receiver_stream` the generations in order, out of order and with the rejected
/// deltas; `decode_counting` every counting vector; `round_trip` and `optimizer` a few byte
/// strings of increasing length (and the targets with a built mode, those strings in it).
pub fn seeds(vectors: &std::path::Path) -> std::io::Result<Vec<(&'static str, String, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    for sub in ["accept", "reject"] {
        let mut names: Vec<_> = std::fs::read_dir(vectors.join(sub))?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()?;
        names.sort();
        for name in names.into_iter().filter(|n| n.ends_with(".bin")) {
            let bytes = std::fs::read(vectors.join(sub).join(&name))?;
            files.push((sub, name, bytes));
        }
    }
    for target in VECTOR_TARGETS {
        for (sub, name, bytes) in &files {
            out.push((
                target,
                format!("{sub}-{}", name.trim_end_matches(".bin")),
                bytes.clone(),
            ));
        }
    }
    for (sub, name, bytes) in files.iter().filter(|(_, n, _)| n.starts_with("counting")) {
        out.push((
            "decode_counting",
            format!("{sub}-{}", name.trim_end_matches(".bin")),
            [&[0u8][..], bytes].concat(),
        ));
    }
    let accept = |prefix: &str| -> Vec<&(&str, String, Vec<u8>)> {
        files
            .iter()
            .filter(|(sub, name, _)| *sub == "accept" && name.starts_with(prefix))
            .collect()
    };
    let bases = accept("gen7_");
    let deltas: Vec<_> = files
        .iter()
        .filter(|(_, name, _)| name.starts_with("delta_"))
        .collect();
    for (_, dname, delta) in &deltas {
        for (_, bname, base) in &bases {
            let mut input = vec![0u8];
            input.extend_from_slice(&(base.len() as u16).to_le_bytes());
            input.extend_from_slice(base);
            input.extend_from_slice(delta);
            out.push((
                "apply_delta",
                format!(
                    "{}-on-{}",
                    dname.trim_end_matches(".bin"),
                    bname.trim_end_matches(".bin")
                ),
                input,
            ));
        }
    }
    let mut stream = vec![0u8];
    for (_, _, b) in bases
        .iter()
        .chain(&accept("delta_"))
        .chain(&accept("gen8_"))
    {
        stream.extend_from_slice(b);
    }
    out.push(("receiver_stream", "generations".into(), stream.clone()));
    let mut with_rejects = vec![0u8];
    for (_, _, b) in bases.iter().chain(&deltas) {
        with_rejects.extend_from_slice(b);
    }
    out.push(("receiver_stream", "with-rejected".into(), with_rejects));
    let mut reversed = vec![0u8];
    for (_, _, b) in accept("gen8_")
        .iter()
        .chain(&bases)
        .chain(&accept("delta_"))
    {
        reversed.extend_from_slice(b);
    }
    out.push(("receiver_stream", "reordered".into(), reversed));
    // Each genuine frame unchanged, and each with one byte changed.
    for pick in 0..genuine_tagged().len() as u8 {
        out.push(("forge_tagged", format!("genuine-{pick}"), vec![pick]));
        out.push((
            "forge_tagged",
            format!("flip-{pick}"),
            vec![pick, 0, 12 + pick, 0, 0x10],
        ));
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for len in [16usize, 64, 256, 1024] {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x = bloomwire::filter::hashing::fmix64(x.wrapping_add(0x9E37_79B9_7F4A_7C15));
                x as u8
            })
            .collect();
        for target in ["round_trip", "optimizer"] {
            out.push((target, format!("bytes-{len}"), bytes.clone()));
        }
        let mut built = bytes.clone();
        built[0] |= 1;
        for target in ["apply_delta", "receiver_stream", "decode_counting"] {
            out.push((target, format!("built-{len}"), built.clone()));
        }
    }
    Ok(out)
}

/// Each kernel against its portable twin on the same input: coding 10's scalar, AVX2 and
/// AVX-512 encoders and decoders (spec 4.14), coding 9's portable and BMI2 ones (spec
/// 4.13) and coding 11's (spec 4.15), those this CPU runs: equal payloads, and equal words or equal errors. The input
/// is q0 (2 bytes), m (3 bytes, at most 2^21 bits) and a mode byte, then either a payload
/// (mode even) or bits that are coded (each coding's encoders must agree) and then have
/// one byte of their payload changed (mode odd); the payload goes to both codings'
/// decoders. In mode odd, too, the digest brought forward by flips (PCLMULQDQ where the CPU
/// has it) against the CRC of the flipped bits.
pub fn kernel_twins(data: &[u8], meter: &dyn Meter) {
    use bloomwire::internals::{escape, small, wide};
    let [q0a, q0b, m0, m1, m2, mode, rest @ ..] = data else {
        return;
    };
    let q0 = u16::from_le_bytes([*q0a, *q0b]).max(1);
    let m = 1 + (u64::from(*m0) | u64::from(*m1) << 8 | u64::from(*m2 & 0x1F) << 16);
    // Each coding's encoders and decoders, and the payload its decoders get.
    let codings: [(&str, Encoders, Decoders); 3] = [
        ("9", small::encode_kernels, small::decode_kernels),
        ("10", wide::encode_kernels, wide::decode_kernels),
        ("11", escape::encode_kernels, escape::decode_kernels),
    ];
    let mut payloads = [(); 3].map(|()| rest.to_vec());
    if mode % 2 == 1 {
        let mut words = vec![0u64; m.div_ceil(64) as usize];
        for (i, b) in rest.iter().enumerate().take(m.div_ceil(8) as usize) {
            words[i / 8] |= u64::from(*b) << (8 * (i % 8));
        }
        if m % 64 != 0 {
            let last = words.len() - 1;
            words[last] &= (1u64 << (m % 64)) - 1;
        }
        digest_of_flips(&words, m, rest);
        for ((coding, encoders, decoders), payload) in codings.iter().zip(&mut payloads) {
            let coded = encoders(&words, m, q0);
            for (kernel, p) in &coded {
                assert_eq!(
                    p, &coded[0].1,
                    "coding {coding}: the {kernel} encoder disagrees"
                );
            }
            for (kernel, r) in decoders(&coded[0].1, m, q0) {
                assert_eq!(
                    r.as_deref(),
                    Ok(&words[..]),
                    "coding {coding}, the {kernel} decoder"
                );
            }
            *payload = coded[0].1.clone();
            let at = usize::from(*mode >> 1) * 7 % payload.len();
            payload[at] ^= m2 >> 5 | 1;
        }
    }
    for ((coding, _, decoders), payload) in codings.iter().zip(&payloads) {
        let mut results = None;
        meter.measure(&mut || results = Some(decoders(payload, m, q0)));
        let all = results.unwrap_or_else(|| decoders(payload, m, q0));
        for (kernel, r) in &all {
            assert_eq!(
                r, &all[0].1,
                "coding {coding}: the {kernel} decoder disagrees with the portable one"
            );
        }
    }
}

/// `DigestChange` over flips taken from `data` (3 bytes a position below m, repeats
/// allowed), one at a time and all at once, against the digest of the flipped array.
fn digest_of_flips(words: &[u64], m: u64, data: &[u8]) {
    use bloomwire::{filter::DigestChange, BitArray};
    let bits = BitArray::from_words(words.to_vec(), m).expect("bits past m are clear");
    let flips: Vec<u64> = data
        .chunks_exact(3)
        .map(|c| (u64::from(c[0]) | u64::from(c[1]) << 8 | u64::from(c[2]) << 16) % m)
        .collect();
    let mut flipped = bits.to_bytes();
    for &p in &flips {
        flipped[(p / 8) as usize] ^= 1 << (p % 8);
    }
    let want = BitArray::from_bytes(&flipped, m)
        .expect("bits past m are clear")
        .digest();
    let (mut one, mut all) = (DigestChange::new(m), DigestChange::new(m));
    flips.iter().for_each(|&p| one.flip(p));
    all.flip_all(&flips);
    assert_eq!(
        one.apply(bits.digest()),
        want,
        "digest of flips, one at a time"
    );
    assert_eq!(
        all.apply(bits.digest()),
        want,
        "digest of flips, all at once"
    );
}

/// A coding's encoders of one bit array (`words, m, q0`), each kernel's payload.
type Encoders = fn(&[u64], u64, u16) -> bloomwire::internals::ByKernel<Vec<u8>>;

/// A coding's decoders of one payload (`payload, m, q0`), each kernel's result.
type Decoders =
    fn(&[u8], u64, u16) -> bloomwire::internals::ByKernel<bloomwire::internals::Decoded>;

/// A fuzz target: an input and the meter to check its cost with.
pub type Target = fn(&[u8], &dyn Meter);

/// Every target's name and function, for replaying corpora. (The fuzz crate has one
/// binary for each, named alike.)
pub const TARGETS: [(&str, Target); 8] = [
    ("decode_frame", decode_frame),
    ("forge_tagged", forge_tagged),
    ("decode_counting", decode_counting),
    ("round_trip", round_trip),
    ("apply_delta", apply_delta),
    ("receiver_stream", receiver_stream),
    ("optimizer", optimizer),
    ("kernel_twins", kernel_twins),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_passes_every_check_and_a_flip_is_refused() {
        let mut f = BloomFilter::new(Params::standard(3000, 3, HashFamily::default()).unwrap());
        for i in 0..200u32 {
            f.insert(i.to_le_bytes());
        }
        for c in BitCoding::ALL {
            let bytes = Encoder::new().encode_with(&f, c).unwrap().to_bytes();
            let Ok(Message::Full(d)) = check_frame(&bytes, &NoMeter) else {
                panic!("{c}");
            };
            assert_eq!(d.filter, f);
            let mut bad = bytes.to_vec();
            bad[bytes.len() / 2] ^= 4;
            assert!(check_frame(&bad, &NoMeter).is_err());
        }
    }

    #[test]
    fn a_non_canonical_decoder_is_caught() {
        // A "decoder" that ignores a trailing byte: the re-encoding differs.
        let outcome = std::panic::catch_unwind(|| {
            let _ = check_decoder(
                &[1, 2, 3],
                &NoMeter,
                |_| (0, 0),
                |d: &[u8]| Ok(d[..2].to_vec()),
                |v: &Vec<u8>| v.clone(),
            );
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn a_meter_over_the_bounds_is_caught() {
        struct Greedy;
        impl Meter for Greedy {
            fn measure(&self, f: &mut dyn FnMut()) -> Option<Measured> {
                f();
                Some(Measured {
                    peak_bytes: 1 << 20,
                    nanos: 0,
                })
            }
        }
        let outcome = std::panic::catch_unwind(|| run_metered(&Greedy, "x", 1 << 10, 0, || ()));
        assert!(outcome.is_err());
        run_metered(&Greedy, "x", 1 << 20, 0, || ());
    }

    #[test]
    fn built_inputs_check_out() {
        let mut x = 1u64;
        for len in [0usize, 1, 7, 40, 300, 2000] {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x = bloomwire::filter::hashing::fmix64(x.wrapping_add(0x9E37_79B9_7F4A_7C15));
                    x as u8
                })
                .collect();
            for (_, target) in TARGETS {
                target(&data, &NoMeter);
            }
            let mut odd = data.clone();
            if let Some(b) = odd.first_mut() {
                *b |= 1;
            }
            apply_delta(&odd, &NoMeter);
            receiver_stream(&odd, &NoMeter);
        }
    }
}
