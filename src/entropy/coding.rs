//! The codings of a payload (spec §4) as one table: a coding's wire id is its row, and the
//! row ([`Codec`]) is exported by the folder of this layer that implements the coding. The
//! enums name the codings: [`Coding`] by wire id, [`BitCoding`] and [`CounterCoding`] the
//! ones an encoder of each filter kind takes. Everything else asks the table.

use crate::entropy::codec::{BitCodec, BitDecoder, Codec, Job};
use crate::entropy::counter_table::CounterTable;
use crate::entropy::model::Counts;
use crate::entropy::profile::{by_name, display_by_name, Profile, Status};
use crate::entropy::{
    arithmetic, counters, escape, interleaved, positional, raw, small, symbols, wide, PayloadError,
};
use crate::error::{Error, Result};

/// The table of codings by wire id: row `i` is coding `i`, `None` where an id is withdrawn
/// (8: spec §4.0). The spec's registry lists the same rows.
static CODINGS: [Option<&Codec>; 12] = [
    Some(&raw::CODEC),
    Some(&arithmetic::ADAPTIVE),
    Some(&arithmetic::KNOWN_P),
    Some(&symbols::CODEC),
    Some(&counters::KNOWN),
    Some(&counters::ADAPTIVE),
    Some(&interleaved::CODEC),
    Some(&positional::CODEC),
    None,
    Some(&small::CODEC),
    Some(&wide::CODEC),
    Some(&escape::CODEC),
];

/// How a frame's payload is coded (the header's `coding` field, spec §4). The wire id is the
/// discriminant. Filter types 0 to 2 carry bits ([`BitCoding`]), type 3 counters
/// ([`CounterCoding`]); raw serves both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum Coding {
    /// The packed bit array, `ceil(m / 8)` bytes, or the packed counters.
    Raw = 0,
    /// Range-coded bits with the adaptive counting model (no parameters).
    Adaptive = 1,
    /// Range-coded bits with a known zero probability `q0 / 2^16` sent in the header.
    KnownP = 2,
    /// ANS-coded bytes with the 256-symbol model built from `q0` (faster to decode).
    KnownPSymbols = 3,
    /// Counting filters: range-coded counters with a known frequency table sent in the
    /// header ([`CounterTable`]).
    KnownCounters = 4,
    /// Counting filters: range-coded counters with the adaptive model
    /// (integer counts of the values, updated as they are coded).
    AdaptiveCounters = 5,
    /// The model of [`Coding::KnownPSymbols`] coded by four interleaved rANS states with
    /// table-driven decoding, 32 bytes of final states larger.
    KnownPInterleaved = 6,
    /// The positions of the one bits, as gaps: a rANS-coded quotient and raw remainder bits
    /// with parameters derived from the count of ones (spec 4.11). Decodes in time
    /// proportional to the ones plus writing the array: the coding for sparse filters and
    /// deltas.
    Positional = 7,
    /// The bits as nibbles with a binomial model at precision 12, coded by four interleaved
    /// tANS states over one bit stream (spec 4.13): the fastest coding of small dense
    /// arrays, a few bytes of final states.
    Small = 9,
    /// The bits as nibbles with a binomial model at precision 13 (spec 4.12), coded by 32
    /// interleaved 32-bit rANS lanes over each of the array's two halves, each half with
    /// its own stream of words (one read from the front, one from the back), the states
    /// carrying the last four rounds (spec 4.14): two chains in flight, the fastest coding
    /// of large dense filters, 256 bytes of final states.
    Wide = 10,
    /// The bytes with at most three ones and an escape coded by four interleaved tANS
    /// states, the escaped bytes by a fifth, over one bit stream (spec 4.15): a byte a step,
    /// the fastest coding of small arrays of the paper's densities, a few bytes over coding 9.
    Escape = 11,
}

impl Coding {
    /// Every coding of the registry, in wire id order (id 8 is withdrawn).
    pub const ALL: [Coding; 11] = [
        Coding::Raw,
        Coding::Adaptive,
        Coding::KnownP,
        Coding::KnownPSymbols,
        Coding::KnownCounters,
        Coding::AdaptiveCounters,
        Coding::KnownPInterleaved,
        Coding::Positional,
        Coding::Small,
        Coding::Wide,
        Coding::Escape,
    ];

    /// The coding with a wire id.
    ///
    /// ```
    /// use bloomwire::Coding;
    /// assert_eq!(Coding::from_id(7), Some(Coding::Positional));
    /// assert_eq!(Coding::from_id(8), None); // withdrawn before 1.0
    /// assert_eq!(Coding::from_id(10), Some(Coding::Wide));
    /// assert_eq!(Coding::from_id(11), Some(Coding::Escape));
    /// assert_eq!(Coding::from_id(12), None);
    /// ```
    pub fn from_id(id: u8) -> Option<Coding> {
        Coding::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The wire id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// Its name, as the spec, the program and the Python package write it
    /// (`known-p-interleaved`); [`str::parse`] reads it back.
    pub fn name(self) -> &'static str {
        self.codec().name
    }

    /// The smallest profile whose decoders implement it (spec §4.0).
    ///
    /// ```
    /// use bloomwire::{Coding, Profile};
    /// assert_eq!(Coding::Positional.profile(), Profile::Core);
    /// assert_eq!(Coding::Escape.profile(), Profile::Full);
    /// ```
    pub fn profile(self) -> Profile {
        self.codec().profile
    }

    /// Whether encoders write it (spec §4.0): a deprecated coding is read, not written,
    /// unless an encoder is asked for it by name.
    pub fn status(self) -> Status {
        self.codec().status
    }

    /// Whether the header carries a quantized zero probability `q0` for this coding.
    pub fn has_q0(self) -> bool {
        self.codec().has_q0
    }

    /// Whether its q0 must be the array's measured fraction of zeros (spec §4.4: codings 9,
    /// 10 and 11, whose models neighbouring q0 share), which a decoder checks; the other
    /// codings with a q0 take the sender's ([`PSource`](crate::PSource)).
    ///
    /// ```
    /// use bloomwire::Coding;
    /// assert!(Coding::Wide.q0_is_measured());
    /// assert!(!Coding::KnownP.q0_is_measured());
    /// ```
    pub fn q0_is_measured(self) -> bool {
        self.codec().q0_measured
    }

    /// Whether it codes the bit arrays of filter types 0 to 2.
    pub fn codes_bits(self) -> bool {
        self.codec().bits.is_some()
    }

    /// Whether it codes the counters of counting filters (filter type 3).
    pub fn codes_counters(self) -> bool {
        self.codec().counters.is_some()
    }

    /// Whether its payloads may be chunked (flags bit 0, spec §4.10).
    pub fn is_chunkable(self) -> bool {
        self.codec().chunk_bytes.is_some()
    }

    /// The work bound of spec §2.2: whether a payload of `payload_len` bytes in this coding
    /// may code `m` symbols (bits, or counters; `table_len` is the length of a
    /// known-counters table). For every coding that decodes symbol by symbol `m <= 2^12 *
    /// (L + 64)`, so that decoding costs at most a constant per payload byte; raw payloads
    /// have a fixed length, a known-counters table of one value decodes by filling, and the
    /// positional coding carries its own bound (at most 8 one bits per payload byte,
    /// §4.11). A decoder checks it right after the payload length, and an encoder never
    /// writes a frame that breaks it.
    ///
    /// ```
    /// use bloomwire::Coding;
    /// assert!(Coding::Wide.within_work_bound(1 << 20, None, 256));
    /// assert!(!Coding::Wide.within_work_bound(1 << 30, None, 256));
    /// assert!(Coding::Positional.within_work_bound(1 << 30, None, 1));
    /// ```
    pub fn within_work_bound(self, m: u64, table_len: Option<usize>, payload_len: u64) -> bool {
        (self.codec().work_bound)(m, table_len, payload_len)
    }

    /// The coding's row of the table.
    pub(crate) fn codec(self) -> &'static Codec {
        let codec = CODINGS[self as usize].expect("every coding has its row");
        debug_assert_eq!(codec.id, self as u8, "the table is in wire id order");
        codec
    }
}

impl Profile {
    /// Whether a decoder of this profile implements `coding` (spec §4.0).
    pub fn includes(self, coding: Coding) -> bool {
        coding.profile() <= self
    }
}

display_by_name!(Coding);

/// The coding of a name ([`Coding::name`]); an unknown name is
/// [`Error::InvalidParameter`] listing the names.
impl core::str::FromStr for Coding {
    type Err = Error;

    fn from_str(s: &str) -> Result<Coding> {
        by_name(s, &Coding::ALL, |c| c.name(), "coding")
    }
}

/// A coding of a Bloom filter's bit array (filter types 0 to 2), for the
/// [`Encoder`](crate::Encoder) of a [`BloomFilter`](crate::BloomFilter). The discriminant is
/// the wire id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum BitCoding {
    /// The packed bit array, `ceil(m / 8)` bytes (coding 0).
    Raw = 0,
    /// Range-coded bits with the adaptive counting model (coding 1).
    Adaptive = 1,
    /// Range-coded bits with a known zero probability sent in the header (coding 2).
    KnownP = 2,
    /// ANS-coded bytes with the 256-symbol model built from the header's q0 (coding 3).
    KnownPSymbols = 3,
    /// The model of coding 3 coded by four interleaved rANS states (coding 6).
    KnownPInterleaved = 6,
    /// The positions of the one bits, as gaps (coding 7): a rANS-coded quotient and
    /// remainder bits, parameters derived from the count of ones. For sparse filters and
    /// deltas, at the cost of their ones.
    Positional = 7,
    /// Nibbles at precision 12 coded by four interleaved tANS states (coding 9): the
    /// fastest to decode for small dense filters, a few bytes over the bound.
    Small = 9,
    /// Nibbles at precision 13 by 32 rANS lanes over each half of the array, two streams
    /// and 64 states (coding 10): the fastest to decode for large dense filters.
    Wide = 10,
    /// Bytes with at most three ones and an escape by four interleaved tANS states, the
    /// escaped bytes by a fifth (coding 11): the fastest to decode for small filters of the
    /// paper's densities, a few bytes over coding 9.
    Escape = 11,
}

impl BitCoding {
    /// Every bit coding, in wire id order.
    pub const ALL: [BitCoding; 9] = [
        BitCoding::Raw,
        BitCoding::Adaptive,
        BitCoding::KnownP,
        BitCoding::KnownPSymbols,
        BitCoding::KnownPInterleaved,
        BitCoding::Positional,
        BitCoding::Small,
        BitCoding::Wide,
        BitCoding::Escape,
    ];
}

/// The conversions and names of a subset of the codings (`$sub`, whose discriminants are
/// wire ids and whose `ALL` lists them), written once for [`BitCoding`] and
/// [`CounterCoding`]: into [`Coding`], back from it (a coding of the other kind is returned
/// as the error), `Display` and `FromStr` by the coding's name (another name is
/// [`Error::InvalidParameter`] listing the names).
macro_rules! codings_of_one_kind {
    ($sub:ident, $what:literal) => {
        impl From<$sub> for Coding {
            fn from(c: $sub) -> Coding {
                Coding::from_id(c as u8).expect("every variant is a coding")
            }
        }

        impl TryFrom<Coding> for $sub {
            type Error = Coding;

            fn try_from(c: Coding) -> core::result::Result<$sub, Coding> {
                $sub::ALL
                    .into_iter()
                    .find(|&b| Coding::from(b) == c)
                    .ok_or(c)
            }
        }

        impl core::fmt::Display for $sub {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                Coding::from(*self).fmt(f)
            }
        }

        impl core::str::FromStr for $sub {
            type Err = Error;

            fn from_str(s: &str) -> Result<$sub> {
                by_name(s, &$sub::ALL, |c| Coding::from(c).name(), $what)
            }
        }
    };
}

codings_of_one_kind!(BitCoding, "bit coding");

/// A coding of a counting filter's counters (filter type 3), for the
/// [`Encoder`](crate::Encoder) of a [`CountingBloomFilter`](crate::CountingBloomFilter). The
/// discriminant is the wire id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum CounterCoding {
    /// The packed counters, `ceil(m * width / 8)` bytes (coding 0).
    Raw = 0,
    /// Range-coded counters with a frequency table sent in the header (coding 4).
    Known = 4,
    /// Range-coded counters with the adaptive model (coding 5).
    Adaptive = 5,
}

impl CounterCoding {
    /// Every counter coding, in wire id order.
    pub const ALL: [CounterCoding; 3] = [
        CounterCoding::Raw,
        CounterCoding::Known,
        CounterCoding::Adaptive,
    ];
}

codings_of_one_kind!(CounterCoding, "counter coding");

/// The coder of bits of `coding`; raw for a coding of counters (which the frame layer never
/// asks of a bit array: the header and the encoder refuse them first).
fn bit_codec(coding: Coding) -> &'static BitCodec {
    let raw = raw::CODEC.bits.as_ref().expect("raw codes bits");
    coding.codec().bits.as_ref().unwrap_or(raw)
}

/// Whether `payload_len` bytes can be an unchunked payload of `m` bits (or `m` counters of
/// `counter_width` bits) in `coding`.
pub(crate) fn well_formed_len(
    coding: Coding,
    m: u64,
    counter_width: Option<u8>,
    payload_len: u64,
) -> bool {
    (coding.codec().well_formed)(m, counter_width, payload_len)
}

/// Check a raw payload of `m` bits (spec §4.1): its length and no bit set past m. The frame
/// layer's one-pass raw decoder copies the words itself and asks this of the bytes.
pub(crate) fn check_raw(payload: &[u8], m: u64) -> core::result::Result<(), PayloadError> {
    raw::check(payload, m)
}

/// Call `f` with each one bit of a positional payload (coding 7) of `m` bits, increasing,
/// as it is decoded (a receiver applies a positional delta this way, without building the
/// XOR array); returns the count of ones.
pub(crate) fn for_each_position(
    payload: &[u8],
    m: u64,
    f: impl FnMut(u64),
) -> core::result::Result<u64, PayloadError> {
    positional::for_each_one(payload, m, f)
}

/// Append the positional payload (coding 7) of an array of `m` bits whose one bits are at
/// `positions` (increasing, each once) to `out`: a sender that knows its flips codes them
/// without building the array.
pub(crate) fn encode_positions(positions: &[u64], m: u64, out: &mut Vec<u8>) {
    let params = positional::GapParams::of(m, positions.len() as u64);
    positional::encode_positions(positions, params, out)
}

/// The positional payload's length for `ones` one bits in `m`, estimated (a sender's
/// choice between a delta and a full frame).
pub(crate) fn estimate_positions_len(m: u64, ones: u64) -> u64 {
    positional::estimate_len(m, ones)
}

/// The place of `coding` in the order of decoding speed for an array of `counts` (lower
/// decodes faster; the row's [`Codec::speed_rank`]).
pub(crate) fn speed_rank(coding: Coding, counts: &Counts) -> u8 {
    (coding.codec().speed_rank)(counts)
}

/// Predicted payload bytes of `len` bits holding `ones` one bits, unchunked, in `coding`
/// (with `q0` for the codings that send one): see [`BitCodec::predict`].
pub(crate) fn predicted_len(coding: Coding, q0: Option<u16>, len: u64, ones: u64) -> u64 {
    predicted_len_of(coding, &Counts::new(len, ones, q0.unwrap_or(1)))
}

/// [`predicted_len`] of `counts` (whose `q0` the codings without one ignore): predictions
/// of several codings from one `Counts` share its figures.
pub(crate) fn predicted_len_of(coding: Coding, counts: &Counts) -> u64 {
    (bit_codec(coding).predict)(counts)
}

/// Code the first `len` bits of `words` (bits past `len` zero) with `coding` (and `q0`, for
/// the codings that have one), appending the payload to `out`.
pub(crate) fn encode_bits(
    coding: Coding,
    q0: Option<u16>,
    words: &[u64],
    len: u64,
    out: &mut Vec<u8>,
) {
    (bit_codec(coding).encode)(words, len, q0.unwrap_or(1), out)
}

/// The coder of counters of `coding`; raw (the packed counters) for a coding of bits.
fn counter_codec(coding: Coding) -> &'static crate::entropy::codec::CounterCodec {
    let raw = raw::CODEC.counters.as_ref().expect("raw codes counters");
    coding.codec().counters.as_ref().unwrap_or(raw)
}

/// Code `m` counters of `width` bits with a counter coding (`table` for
/// [`Coding::KnownCounters`]).
pub(crate) fn encode_counters(
    coding: Coding,
    values: &[u8],
    width: u8,
    table: Option<&CounterTable>,
) -> Result<Vec<u8>> {
    (counter_codec(coding).encode)(values, width, table)
}

/// Decode the counters of `width` bits of a payload in `coding` into `out`, one per
/// counter (`table` from the header for [`Coding::KnownCounters`]).
pub(crate) fn decode_counters(
    coding: Coding,
    payload: &[u8],
    out: &mut [u8],
    width: u8,
    table: Option<&CounterTable>,
) -> core::result::Result<(), PayloadError> {
    (counter_codec(coding).decode)(payload, out, width, table)
}

/// Decoders for the chunks of a frame, their tables built once and shared by all chunks
/// (and threads): chunks differ at most in their last one's `len mod 8`. A peer's frame of
/// many small chunks therefore costs no more table building than one chunk.
pub(crate) struct Models {
    /// `(len mod 8, decoder)`, at most two entries.
    by_tail: Vec<(u64, Box<dyn BitDecoder>)>,
}

impl Models {
    /// The decoders of bits in `coding` for chunks of the lengths `lens` (any number, few
    /// distinct `len mod 8`); `None` for a coding of counters.
    pub(crate) fn new(coding: Coding, q0: Option<u16>, lens: &[u64]) -> Option<Self> {
        let codec = coding.codec().bits.as_ref()?;
        let q0 = q0.unwrap_or(1);
        let mut by_tail: Vec<(u64, Box<dyn BitDecoder>)> = Vec::new();
        for &len in lens {
            if by_tail.iter().all(|(r, _)| *r != len % 8) {
                by_tail.push((len % 8, (codec.decoder)(q0, len)));
            }
        }
        Some(Models { by_tail })
    }

    fn get(&self, len: u64) -> &dyn BitDecoder {
        &*self
            .by_tail
            .iter()
            .find(|(r, _)| *r == len % 8)
            .expect("models built for every chunk length")
            .1
    }
}

/// Decode a payload of `len` bits into `out` (`ceil(len / 64)` words, all overwritten),
/// with the frame's models (built for a chunk of this `len mod 8`).
pub(crate) fn decode_bits(
    models: &Models,
    payload: &[u8],
    len: u64,
    out: &mut [u64],
) -> core::result::Result<(), PayloadError> {
    models.get(len).decode(Job {
        payload,
        len,
        out,
        zeroed: false,
    })
}

/// [`decode_bits`] into an `out` the caller has just zeroed: the positional coding then
/// writes only its one bits (the frame decoder's fresh array is not zeroed twice).
pub(crate) fn decode_bits_zeroed(
    models: &Models,
    payload: &[u8],
    len: u64,
    out: &mut [u64],
) -> core::result::Result<(), PayloadError> {
    models.get(len).decode(Job {
        payload,
        len,
        out,
        zeroed: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_its_coding() {
        for (i, codec) in CODINGS.iter().enumerate() {
            let Some(codec) = codec else {
                assert_eq!(Coding::from_id(i as u8), None);
                continue;
            };
            assert_eq!(usize::from(codec.id), i, "{}", codec.name);
            let coding = Coding::from_id(codec.id).unwrap();
            assert_eq!(coding.id(), codec.id);
            assert_eq!(coding.name().parse::<Coding>().unwrap(), coding);
            assert!(codec.bits.is_some() || codec.counters.is_some(), "{coding}");
        }
        for c in BitCoding::ALL {
            assert!(Coding::from(c).codes_bits(), "{c}");
            assert_eq!(c.to_string().parse::<BitCoding>().unwrap(), c);
        }
        for c in CounterCoding::ALL {
            assert!(Coding::from(c).codes_counters(), "{c}");
            assert_eq!(c.to_string().parse::<CounterCoding>().unwrap(), c);
        }
        assert!("wide".parse::<CounterCoding>().is_err());
        assert!("dense".parse::<Coding>().is_err(), "coding 8 is withdrawn");
        assert!("none".parse::<Coding>().is_err());
    }

    #[test]
    fn wide_fixed_cost_is_measured() {
        // Print with `cargo test --lib dense_fixed_cost -- --nocapture`.
        for (m, p1) in [
            (8_000_000u64, 0.5),
            (8_000_000, 0.3),
            (1_000_003, 0.3),
            (8_000_000, 0.1),
            (999_999, 0.1),
            (4_000_000, 0.05),
        ] {
            let mut bits = crate::filter::bits::BitArray::new(m);
            let mut s = 1u64;
            for i in 0..m {
                s = crate::filter::hashing::fmix64(s + i);
                if (s >> 11) as f64 / (1u64 << 53) as f64 <= p1 {
                    bits.set(i);
                }
            }
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let c = Coding::Wide;
            let mut payload = Vec::new();
            encode_bits(c, Some(q0), bits.words(), m, &mut payload);
            let predicted = predicted_len(c, Some(q0), m, bits.count_ones());
            let d = payload.len() as i64 - predicted as i64;
            println!(
                "{c} m {m} p1 {p1}: {} B, predicted {predicted} B",
                payload.len()
            );
            assert!(
                d.abs() < 40 + (m / 40_000) as i64,
                "{c} m {m} p1 {p1}: off by {d}"
            );
        }
    }

    #[test]
    fn fixed_costs_are_measured() {
        // The size model of every coding that has a fixed cost, against its payloads, at
        // densities over the whole range (skewed ones where coding 9's table loses most).
        // Print with `cargo test --lib fixed_costs_are_measured -- --nocapture`.
        let codings = [
            Coding::Adaptive,
            Coding::KnownP,
            Coding::KnownPSymbols,
            Coding::KnownPInterleaved,
            Coding::Small,
            Coding::Escape,
        ];
        for (m, seeds) in [
            (1_510u64, 16u32),
            (26_415, 16),
            (140_000, 16),
            (1_000_000, 4),
        ] {
            for ones in [14u64, 47, 124, 307, 600, 800, 950, 1010] {
                let mut line = format!("m {m} ones {ones}/1024, actual - predicted:");
                for c in codings {
                    let (mut sum, mut worst) = (0i64, 0i64);
                    for seed in 0..seeds {
                        let bits =
                            crate::entropy::testing::pseudo_random_bits(m, ones, u64::from(seed));
                        let q0 = c.has_q0().then(|| {
                            crate::entropy::model::KnownP::measured(bits.count_zeros(), m)
                        });
                        let mut payload = Vec::new();
                        encode_bits(c, q0, bits.words(), m, &mut payload);
                        let predicted = predicted_len(c, q0, m, bits.count_ones());
                        let d = payload.len() as i64 - predicted as i64;
                        sum += d;
                        worst = if d.abs() > worst.abs() { d } else { worst };
                    }
                    let mean = sum as f64 / f64::from(seeds);
                    line += &format!(" {c} {mean:.1} (worst {worst})");
                    // Errors of a few bytes either way, and coding 9's allowance for its
                    // table's loss on the safe side: the encoder's margin (4 bytes + 0.08%)
                    // and the property test's (8 bytes + 0.1%) rely on it.
                    let allowance = match c {
                        Coding::Small => m as f64 / 32.0 * small::SPREAD_BITS,
                        // Coding 11's model errs by more where a byte in four escapes or
                        // more, far from the densities it is chosen at: mostly over (up to
                        // 0.0015 bits a bit at p0 = 0.01, safe: it is then chosen less), but
                        // either way.
                        Coding::Escape if ones > 300 => 4.0 + m as f64 / 5_000.0,
                        Coding::Escape => 2.0 + m as f64 / 40_000.0,
                        _ => 0.0,
                    };
                    let over = if c == Coding::Escape && ones > 300 {
                        allowance
                    } else {
                        0.0
                    };
                    assert!(
                        (-2.0 - allowance..=2.0 + over).contains(&mean),
                        "m {m} ones {ones}: {c} off by {mean} on average"
                    );
                    assert!(
                        (worst.unsigned_abs() as f64) <= 6.0 + m as f64 / 1e5 + allowance,
                        "m {m} ones {ones}: {c} off by {worst}"
                    );
                }
                println!("{line}");
            }
        }
    }
}
