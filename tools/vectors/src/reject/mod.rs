//! The reject vectors (`spec/vectors/reject/`): frames a decoder must refuse, each with the
//! error it names, one file per section of the spec they test.

mod chunking;
mod counting;
mod deltas;
mod escape;
mod header;
mod known_p_interleaved;
mod payload;
mod positional;
mod small;
mod states;
mod tagged;
mod wide;

use bloomwire::{BitArray, BitCoding, BloomFilter, Coding, IndexScheme, Params};
use serde_json::{json, Map, Value};

use crate::accept::filter_of;
use crate::raw_frame::{payload_with_q0, varint, RawFrame, Truncated};
use crate::{json_file, xxh, VectorFile};

/// A case: the file's name without `.bin`, the frame (cut where a decoder stops), and the
/// manifest's entry for it.
type Case = (&'static str, Truncated, Value);

/// The frames every section edits: a valid raw frame and a small filter (m = 100, k = 2,
/// ten keys) coded in any coding.
struct Kit {
    base: RawFrame,
    small: BloomFilter,
}

impl Kit {
    fn new() -> Kit {
        Kit {
            base: RawFrame::valid_raw(),
            small: standard(100, 2, 10),
        }
    }

    /// The small filter in `coding`.
    fn coded(&self, coding: Coding) -> RawFrame {
        RawFrame::from_frame(&self.small, coding)
    }

    /// A coded frame with its payload edited, and the payload length to match.
    fn coded_with(&self, coding: Coding, edit: &dyn Fn(&mut RawFrame)) -> Truncated {
        relength(self.coded(coding), edit)
    }

    /// The small filter in `coding` with `bytes` appended to its payload (and the length to
    /// match): data after the coded stream.
    fn appended(&self, coding: Coding, bytes: &[u8]) -> Truncated {
        relength(self.coded(coding), |r| r.payload.extend_from_slice(bytes))
    }

    /// The small filter in `coding`, flagged as chunked: for a coding that never chunks.
    fn flagged_chunked(&self, coding: Coding) -> Truncated {
        let mut r = self.coded(coding);
        r.fixed[10] = 1;
        r.into()
    }

    /// The valid raw frame, edited.
    fn with(&self, edit: &dyn Fn(&mut RawFrame)) -> Truncated {
        let mut r = self.base.clone();
        edit(&mut r);
        r.into()
    }

    /// A filter of 102 bits whose payload, in a nibble coding (9, 10 or 11), codes 104
    /// with bit 103 set: the last nibble's bits past m.
    fn bit_past_m(&self, coding: BitCoding) -> Truncated {
        let f = standard(102, 2, 10);
        let r = RawFrame::from_frame(&f, Coding::from(coding));
        let q0 = u16::from_le_bytes([r.q0[0], r.q0[1]]);
        let mut bits = BitArray::new(104);
        (0..102)
            .filter(|&i| f.bits().get(i))
            .for_each(|i| bits.set(i));
        bits.set(103);
        let params = Params::standard(104, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
        let g = BloomFilter::from_parts(params, bits, 10).expect("valid");
        relength(r, |r| {
            r.payload = payload_with_q0(Coding::from(coding), g.bits(), q0)
        })
    }
}

/// A standard filter (xxh3, double hashing) of `m` bits and `k` hashes holding the keys
/// `0..n`.
fn standard(m: u64, k: u32, n: u64) -> BloomFilter {
    let params = Params::standard(m, k, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    filter_of(&params, 0..n)
}

/// [`standard`]'s filter framed in `coding`.
fn framed(m: u64, k: u32, n: u64, coding: Coding) -> RawFrame {
    RawFrame::from_frame(&standard(m, k, n), coding)
}

/// `r` with its payload edited and the payload length to match.
fn relength(mut r: RawFrame, edit: impl FnOnce(&mut RawFrame)) -> Truncated {
    edit(&mut r);
    r.len = varint(r.payload.len() as u64);
    r.into()
}

/// `r` with the last `bytes` bytes of its payload cut (and the length to match): a coded
/// stream that ends early.
fn ends_early(r: RawFrame, bytes: usize) -> Truncated {
    relength(r, |r| r.payload.truncate(r.payload.len() - bytes))
}

/// `r` with the bits `mask` of its payload's byte `at` flipped: a state out of its range.
fn state_flipped(mut r: RawFrame, at: usize, mask: u8) -> Truncated {
    r.payload[at] ^= mask;
    r.into()
}

/// `r` with `value` written into its payload at `at`: a state out of its range.
fn state_set(mut r: RawFrame, at: usize, value: &[u8]) -> Truncated {
    r.payload[at..at + value.len()].copy_from_slice(value);
    r.into()
}

/// `r`, whose stream ends inside its last byte, with that byte's top bit (padding) set.
fn padding_set(mut r: RawFrame) -> Truncated {
    let last = r.payload.len() - 1;
    assert!(r.payload[last] < 0x80, "padding in the last byte");
    r.payload[last] |= 0x80;
    r.into()
}

/// An `InvalidField` entry naming `name`.
fn field(name: &str) -> Value {
    json!({"error": "InvalidField", "field": name})
}

/// A `LimitExceeded` entry naming `name`.
fn limit(name: &str) -> Value {
    json!({"error": "LimitExceeded", "field": name})
}

/// An entry of an error without a field.
fn plain(name: &str) -> Value {
    json!({"error": name})
}

/// Every reject file and their manifest, in a fixed order.
pub(crate) fn reject_vectors() -> Vec<VectorFile> {
    let kit = Kit::new();
    let mut cases = header::cases(&kit);
    cases.extend(payload::cases(&kit));
    cases.extend(known_p_interleaved::cases(&kit));
    cases.extend(wide::cases(&kit));
    cases.extend(small::cases(&kit));
    cases.extend(escape::cases(&kit));
    cases.extend(positional::cases(&kit));
    cases.extend(chunking::cases(&kit));
    let mut rejects = Rejects::default();
    deltas::reject_vectors(&mut rejects);
    for (name, frame, expect) in cases {
        rejects.push_cut(name, frame, expect);
    }
    for (name, frame, expect) in states::cases(&kit) {
        rejects.push_cut(&name, frame, expect);
    }
    counting::reject_vectors(&mut rejects);
    tagged::reject_vectors(&mut rejects);
    rejects.finish()
}

/// The reject files as they are made, and their manifest.
#[derive(Default)]
struct Rejects {
    manifest: Map<String, Value>,
    out: Vec<VectorFile>,
}

impl Rejects {
    /// Adds `reject/{name}.bin` holding `bytes`, and its manifest entry.
    fn push(&mut self, name: &str, bytes: Vec<u8>, entry: Value) {
        let file = format!("{name}.bin");
        self.out.push(VectorFile {
            path: format!("reject/{file}").into(),
            bytes,
        });
        self.manifest.insert(file, entry);
    }

    /// Adds `reject/{name}.bin` holding `frame` cut where a decoder stops, and its manifest
    /// entry.
    fn push_cut(&mut self, name: &str, Truncated(frame, cut): Truncated, entry: Value) {
        let mut bytes = frame.bytes();
        bytes.truncate(cut);
        self.push(name, bytes, entry);
    }

    /// The files, the manifest last.
    fn finish(mut self) -> Vec<VectorFile> {
        let manifest = Value::Object(self.manifest);
        self.out.push(json_file("reject/manifest.json", &manifest));
        self.out
    }
}

/// `frame` with its checksum (the 4 bytes at `body_end`) made right for the bytes before.
fn checksum_fixed_at(mut frame: Vec<u8>, body_end: usize) -> Vec<u8> {
    let crc = crc32c::crc32c(&frame[..body_end]);
    frame[body_end..body_end + 4].copy_from_slice(&crc.to_le_bytes());
    frame
}

/// An untagged `frame` with its checksum, its last 4 bytes, made right.
fn checksum_fixed(frame: Vec<u8>) -> Vec<u8> {
    let body_end = frame.len() - 4;
    checksum_fixed_at(frame, body_end)
}

/// A delta whose result digest (`digest`, in its header) has one bit flipped, its checksum
/// made right: the frame decodes, and the result it names is not the one it gives.
fn result_forged(mut delta: Vec<u8>, digest: u32) -> Vec<u8> {
    let digest = digest.to_le_bytes();
    let at = delta
        .windows(4)
        .position(|w| w == digest)
        .expect("the result digest is in the header");
    delta[at] ^= 0x01;
    checksum_fixed(delta)
}
