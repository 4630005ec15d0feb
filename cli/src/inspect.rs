//! `bloomwire inspect`: everything a frame says, and how well its payload is coded.

use std::path::{Path, PathBuf};

use bloomwire::format::{KIND_DELTA, KIND_FULL, VERSION};
use bloomwire::theory::histogram_entropy;
use bloomwire::{
    theory, BaseHash, BitArray, Error, FrameHeader, FrameKind, IndexScheme, Layout, Limits,
    Message, Params, Tag,
};
use serde_json::{json, Value};

use crate::frames::{frame_error, input_name, read_frame, FrameReader};
use crate::options::KeyArg;
use crate::output::write_stdout;
use crate::{to_hex, Result};

/// Print every header field of a frame, the checksum and tag status and, when the frame
/// decodes, how full the filter is and how close the payload comes to the entropy bound.
///
/// The frame is checked as every decoder checks it (spec 2.3: header, length, checksum,
/// tag, payload, then bytes after the frame), and the first failure is reported with the
/// library's error; the header is printed all the same (unless its metadata field is longer
/// than --max-metadata: then only the error), and the exit status is then 1. A
/// tagged frame read without --key-file is shown as "tagged, not verified": nothing says
/// who made it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The frame file; `-` for standard input.
    frame: PathBuf,
    /// Print one JSON object instead of `name: value` lines. Values that may exceed 2^53
    /// (seed, generation, base_generation, n) are decimal strings, which JavaScript and jq
    /// read without rounding; the others are numbers; the metadata is hex.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    key: KeyArg,
}

/// What became of a frame's authentication tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagStatus {
    /// No tag (flags bit 2 clear).
    Absent,
    /// A tag, read without a key.
    Unverified,
    /// A tag the key verified.
    Verified,
    /// A tag the key does not give.
    Bad,
    /// A tag not checked: the frame failed a check that comes first.
    Unchecked,
}

impl TagStatus {
    fn name(self) -> &'static str {
        match self {
            TagStatus::Absent => "absent",
            TagStatus::Unverified => "unverified",
            TagStatus::Verified => "verified",
            TagStatus::Bad => "bad",
            TagStatus::Unchecked => "unchecked",
        }
    }

    fn text(self) -> &'static str {
        match self {
            TagStatus::Absent => "none",
            TagStatus::Unverified => "tagged, not verified (no --key-file given)",
            TagStatus::Verified => "tagged, verified with the key",
            TagStatus::Bad => "tagged, does NOT match the key",
            TagStatus::Unchecked => "tagged, not checked (the frame failed an earlier check)",
        }
    }
}

/// What inspect found out about a frame.
struct Report {
    header: FrameHeader,
    /// Stored and computed CRC-32C; `None` for a truncated frame.
    checksum: Option<(u32, u32)>,
    tag: TagStatus,
    /// Present when the frame decodes.
    fill: Option<Fill>,
    /// Why the frame is not usable, when it is not: the library's error.
    problem: Option<Error>,
}

/// How full a decoded filter is.
struct Fill {
    /// One bits, or non-zero counters of a counting filter.
    ones: u64,
    zero_fraction: f64,
    /// `m H(p_hat) / 8`, or `m H(counter histogram) / 8` for a counting filter.
    entropy_bound_bytes: f64,
    /// How many counters hold each value, for a counting filter (or its delta).
    histogram: Option<Vec<u64>>,
    /// The false positive rate of a filter this full (not for a delta's XOR bits).
    fpr: Option<f64>,
}

pub fn run(args: &Args) -> Result<()> {
    let path = &args.frame;
    let reader = FrameReader::new(args.key.load()?);
    let bytes = read_frame(path)?;
    // The header alone, without the limits a decoder would apply, so that any frame the
    // format allows can be looked at, but for its metadata: a field longer than
    // --max-metadata is neither copied nor printed (it could be as long as the input). A
    // header that does not parse is reported as a decoder with the program's limits reports
    // it (they may stop it at an earlier field).
    let header_limits = Limits::unlimited().max_metadata(crate::limits().max_metadata);
    let header = match FrameHeader::parse(&bytes, &header_limits) {
        Ok(header) => header,
        Err(e) => return Err(frame_error(path, reader.view(&bytes).err().unwrap_or(e))),
    };
    let checksum = header.checksums(&bytes);
    let mut report = Report {
        tag: match header.tag {
            Tag::Absent => TagStatus::Absent,
            _ if reader.has_key() => TagStatus::Unchecked,
            _ => TagStatus::Unverified,
        },
        header,
        checksum,
        fill: None,
        problem: None,
    };
    // The checks in the spec's order, and the payload decoded, as by the library's decode.
    match reader.decode_prefix(&bytes) {
        Ok((message, len)) => {
            report.header = message.header().clone();
            report.tag = match report.header.tag {
                Tag::Verified => TagStatus::Verified,
                Tag::Unverified => TagStatus::Unverified,
                _ => TagStatus::Absent,
            };
            report.fill = Fill::of_message(&message);
            if len != bytes.len() {
                report.problem = Some(Error::TrailingBytes {
                    count: bytes.len() - len,
                    offset: len,
                });
            }
        }
        Err(e) => {
            if matches!(e, Error::BadTag { .. }) {
                report.tag = TagStatus::Bad;
            }
            report.problem = Some(e);
        }
    }
    print(args, path, &report)?;
    match report.problem {
        Some(problem) => Err(frame_error(path, problem)),
        None => Ok(()),
    }
}

fn print(args: &Args, path: &Path, report: &Report) -> Result<()> {
    let text = if args.json {
        let mut json = report.json(path).to_string();
        json.push('\n');
        json
    } else {
        report.text(path)
    };
    write_stdout(text.as_bytes())
}

impl Fill {
    /// How full the filter (or the delta's XOR) a frame carries is.
    fn of_message(message: &Message) -> Option<Fill> {
        Some(match message {
            Message::Full(decoded) => {
                let bits = decoded.filter.bits();
                Fill {
                    fpr: Some(fill_fpr(decoded.filter.params(), |start, len| {
                        len - count_ones(bits, start, start + len)
                    })),
                    ..Fill::of_bits(bits)
                }
            }
            // The XOR of two generations: how many bits changed, and what it costs.
            Message::Delta(delta) => Fill::of_bits(&delta.xor),
            Message::Counting(decoded) => {
                let f = &decoded.filter;
                let counters = f.counters();
                Fill {
                    fpr: Some(fill_fpr(f.params(), |start, len| {
                        let range = start as usize..(start + len) as usize;
                        counters[range].iter().filter(|&&c| c == 0).count() as u64
                    })),
                    ..Fill::of_counters(counters, f.width())
                }
            }
            // The counter-wise XOR of two generations: how many counters changed.
            Message::CountingDelta(delta) => {
                let width = delta.header.counter_width.expect("a counting frame");
                Fill::of_counters(&delta.xor, width)
            }
            _ => return None,
        })
    }

    /// Bits (no false positive rate).
    fn of_bits(bits: &BitArray) -> Fill {
        let m = bits.len();
        let ones = bits.count_ones();
        let zero_fraction = (m - ones) as f64 / m as f64;
        Fill {
            ones,
            zero_fraction,
            entropy_bound_bytes: m as f64 * theory::entropy(zero_fraction) / 8.0,
            histogram: None,
            fpr: None,
        }
    }

    /// Counters of `width` bits (no false positive rate).
    fn of_counters(counters: &[u8], width: u8) -> Fill {
        let mut histogram = vec![0u64; 1 << width];
        for &c in counters {
            histogram[usize::from(c)] += 1;
        }
        let m = counters.len() as u64;
        Fill {
            ones: m - histogram[0],
            zero_fraction: histogram[0] as f64 / m as f64,
            entropy_bound_bytes: m as f64 * histogram_entropy(&histogram) / 8.0,
            histogram: Some(histogram),
            fpr: None,
        }
    }
}

/// The false positive rate of a filter of `params` whose bits `start .. start + len` hold
/// `zeros(start, len)` zeros (zero counters of a counting filter): the probability that
/// the bits an absent key would test are all ones, each region of the layout at its
/// measured fill.
fn fill_fpr(params: &Params, zeros: impl Fn(u64, u64) -> u64) -> f64 {
    let p = |start: u64, len: u64| zeros(start, len) as f64 / len as f64;
    match params.layout() {
        Layout::Standard { k } => theory::fpr_given_p(k.to_f64(), p(0, params.m())),
        Layout::Partitioned { k } => {
            let part = params.m() / u64::from(k.ceil());
            let r = k.to_f64() - f64::from(k.whole());
            let whole: f64 = (0..u64::from(k.whole()))
                .map(|i| 1.0 - p(i * part, part))
                .product();
            if r > 0.0 {
                whole * (1.0 - r * p(u64::from(k.whole()) * part, part))
            } else {
                whole
            }
        }
        Layout::Blocks { ks } => {
            let mut start = 0;
            bloomwire::filter::block_sizes(params.m())
                .zip(ks)
                .map(|(size, k)| {
                    let f = theory::fpr_given_p(k.to_f64(), p(start, size));
                    start += size;
                    f
                })
                .product()
        }
    }
}

/// One bits in `start..end`.
fn count_ones(bits: &BitArray, start: u64, end: u64) -> u64 {
    let words = bits.words();
    let mut ones = 0;
    let mut i = start;
    while i < end {
        let (word, offset) = ((i / 64) as usize, i % 64);
        let take = (64 - offset).min(end - i);
        let mask = if take == 64 {
            u64::MAX
        } else {
            ((1 << take) - 1) << offset
        };
        ones += u64::from((words[word] & mask).count_ones());
        i += take;
    }
    ones
}

pub fn layout_name(layout: &Layout) -> &'static str {
    match layout {
        Layout::Standard { .. } => "standard",
        Layout::Partitioned { .. } => "partitioned",
        Layout::Blocks { .. } => "blocks",
    }
}

fn scheme_name(scheme: IndexScheme) -> &'static str {
    match scheme {
        IndexScheme::DoubleHashing => "double-hashing",
        IndexScheme::EnhancedDoubleHashing => "enhanced-double-hashing",
    }
}

fn siphash_key(k0: u64, k1: u64) -> String {
    let mut key = k0.to_le_bytes().to_vec();
    key.extend_from_slice(&k1.to_le_bytes());
    to_hex(&key)
}

/// `(block bits, k_j)` of a block layout.
fn blocks(header: &FrameHeader) -> Option<Vec<(u64, f64)>> {
    match header.params.layout() {
        Layout::Blocks { ks } => Some(
            bloomwire::filter::block_sizes(header.params.m())
                .zip(ks)
                .map(|(size, k)| (size, k.to_f64()))
                .collect(),
        ),
        _ => None,
    }
}

impl Report {
    /// The payload's overhead over the entropy bound, as a fraction.
    fn overhead(&self) -> Option<f64> {
        let bound = self.fill.as_ref()?.entropy_bound_bytes;
        (bound > 0.0).then(|| self.header.payload_len as f64 / bound - 1.0)
    }

    fn checksum_status(&self) -> &'static str {
        match self.checksum {
            None => "missing",
            Some((stored, computed)) if stored == computed => "ok",
            Some(_) => "mismatch",
        }
    }

    /// `name: value` lines with the values aligned.
    fn text(&self, path: &Path) -> String {
        let h = &self.header;
        let p = &h.params;
        let mut lines: Vec<(&str, String)> = vec![
            ("file", input_name(path)),
            ("version", VERSION.to_string()),
            ("kind", kind_text(h.kind)),
            ("generation", h.generation.to_string()),
            (
                "restart",
                if h.restart {
                    "yes (a receiver applies it whatever generation it holds)".into()
                } else {
                    "no".into()
                },
            ),
            (
                "filter type",
                match h.counter_width {
                    Some(_) => format!(
                        "{} (counting, counters of a {} filter)",
                        h.filter_type(),
                        layout_name(p.layout())
                    ),
                    None => format!("{} ({})", p.layout().id(), layout_name(p.layout())),
                },
            ),
        ];
        lines.push(match p.family().base {
            BaseHash::Xxh64 { seed } => ("hash", format!("xxh64, seed {seed}")),
            BaseHash::SipHash24 { k0, k1 } => {
                ("hash", format!("siphash-2-4, key {}", siphash_key(k0, k1)))
            }
            BaseHash::Opaque => ("hash", "opaque (another library's bits)".into()),
        });
        lines.push(("index scheme", scheme_name(p.family().scheme).into()));
        match h.counter_width {
            Some(width) => {
                lines.push(("m", format!("{} counters", p.m())));
                lines.push(("counter width", format!("{width} bits")));
            }
            None => lines.push(("m", format!("{} bits", p.m()))),
        }
        lines.push(("k", p.k().to_string()));
        if let Some(blocks) = blocks(h) {
            let list: Vec<String> = blocks
                .iter()
                .map(|(size, k)| format!("{size}:{k}"))
                .collect();
            lines.push(("block bits:k_j", list.join(" ")));
        }
        lines.push(("n", format!("{} keys", h.n)));
        lines.push(("metadata", metadata_text(h.metadata.as_deref())));
        lines.push(("coding", format!("{} ({})", h.coding.id(), h.coding)));
        if let Some(q0) = h.q0 {
            lines.push(("q0", format!("{q0} (p = {:.6})", f64::from(q0) / 65536.0)));
        }
        if let Some(table) = &h.counter_table {
            let f: Vec<String> = table.frequencies().iter().map(u32::to_string).collect();
            lines.push(("counter table", format!("{} / 65536", f.join(" "))));
        }
        if let Some(shift) = h.chunk_shift {
            lines.push(("chunks", format!("{} of 2^{shift} bits", h.chunk_count())));
        }
        lines.push(("header length", format!("{} bytes", h.header_len)));
        lines.push(("payload length", format!("{} bytes", h.payload_len)));
        lines.push(("frame length", format!("{} bytes", h.frame_len())));
        lines.push((
            "checksum",
            match self.checksum {
                None => "missing (truncated frame)".into(),
                Some((stored, computed)) if stored == computed => {
                    format!("ok (crc32c {stored:#010x})")
                }
                Some((stored, computed)) => {
                    format!("MISMATCH (stored {stored:#010x}, computed {computed:#010x})")
                }
            },
        ));
        lines.push(("tag", self.tag.text().into()));
        if let Some(fill) = &self.fill {
            match &fill.histogram {
                Some(histogram) => {
                    lines.push(("non-zero counters", fill.ones.to_string()));
                    let counts: Vec<String> = histogram.iter().map(u64::to_string).collect();
                    lines.push(("counter histogram", counts.join(" ")));
                    lines.push(("zero fraction", format!("{:.6}", fill.zero_fraction)));
                    lines.push((
                        "entropy bound",
                        format!("{:.1} bytes (m H(counters)/8)", fill.entropy_bound_bytes),
                    ));
                }
                None => {
                    lines.push(("one bits", fill.ones.to_string()));
                    lines.push(("zero fraction", format!("{:.6}", fill.zero_fraction)));
                    lines.push((
                        "entropy bound",
                        format!("{:.1} bytes (m H(p)/8)", fill.entropy_bound_bytes),
                    ));
                }
            }
            if let Some(overhead) = self.overhead() {
                lines.push((
                    "payload overhead",
                    format!(
                        "{:+.2}% ({:+.1} bytes)",
                        100.0 * overhead,
                        h.payload_len as f64 - fill.entropy_bound_bytes
                    ),
                ));
            }
            if let Some(fpr) = fill.fpr {
                lines.push(("false positive rate", format!("{fpr:.6} (at this fill)")));
            }
        }
        if let Some(problem) = &self.problem {
            lines.push(("problem", problem.to_string()));
        }
        let width = lines.iter().map(|(name, _)| name.len()).max().unwrap_or(0) + 1;
        lines
            .iter()
            .map(|(name, value)| format!("{:<width$} {value}\n", format!("{name}:")))
            .collect()
    }

    /// The same content as one JSON object with stable keys; fields that do not apply are
    /// `null`.
    fn json(&self, path: &Path) -> Value {
        let h = &self.header;
        let p = &h.params;
        let (seed, key) = match p.family().base {
            BaseHash::Xxh64 { seed } => (Some(seed.to_string()), None),
            BaseHash::SipHash24 { k0, k1 } => (None, Some(siphash_key(k0, k1))),
            BaseHash::Opaque => (None, None),
        };
        let fill = self.fill.as_ref();
        json!({
            "file": input_name(path),
            "version": VERSION,
            "kind": match h.kind {
                FrameKind::Full => "full",
                FrameKind::Delta { .. } => "delta",
            },
            "generation": h.generation.to_string(),
            "restart": h.restart,
            "base_generation": match h.kind {
                FrameKind::Delta { base_generation, .. } => Some(base_generation.to_string()),
                FrameKind::Full => None,
            },
            "filter_type": if h.is_counting() { "counting" } else { layout_name(p.layout()) },
            "counted_type": h.counter_width.map(|_| layout_name(p.layout())),
            "counter_width": h.counter_width,
            "counter_table": h.counter_table.as_ref().map(|t| t.frequencies().to_vec()),
            "counter_histogram": fill.and_then(|f| f.histogram.clone()),
            "base_hash": match p.family().base {
                BaseHash::Xxh64 { .. } => "xxh64",
                BaseHash::SipHash24 { .. } => "siphash-2-4",
                BaseHash::Opaque => "opaque",
            },
            "seed": seed,
            "siphash_key": key,
            "index_scheme": scheme_name(p.family().scheme),
            "m": p.m(),
            "k": p.k().to_f64(),
            "blocks": blocks(h).map(|b| b.iter().map(|(bits, k)| json!({"bits": bits, "k": k})).collect::<Vec<_>>()),
            "n": h.n.to_string(),
            "metadata_hex": h.metadata.as_deref().map(to_hex),
            "metadata_bytes": h.metadata.as_ref().map(Vec::len),
            "coding": h.coding.to_string(),
            "q0": h.q0,
            "q0_probability": h.q0.map(|q0| f64::from(q0) / 65536.0),
            "chunk_shift": h.chunk_shift,
            "header_bytes": h.header_len,
            "payload_bytes": h.payload_len,
            "frame_bytes": h.frame_len(),
            "checksum": self.checksum_status(),
            "checksum_stored": self.checksum.map(|(stored, _)| format!("{stored:#010x}")),
            "checksum_computed": self.checksum.map(|(_, computed)| format!("{computed:#010x}")),
            "tag": self.tag.name(),
            "ones": fill.map(|f| f.ones),
            "zero_fraction": fill.map(|f| f.zero_fraction),
            "entropy_bound_bytes": fill.map(|f| f.entropy_bound_bytes),
            "overhead": self.overhead(),
            "false_positive_rate": fill.and_then(|f| f.fpr),
            "problem": self.problem.as_ref().map(Error::to_string),
        })
    }
}

/// The metadata field: its length, its bytes in hex and, when they are printable text,
/// the text.
fn metadata_text(metadata: Option<&[u8]>) -> String {
    let Some(bytes) = metadata else {
        return "none".into();
    };
    let text = std::str::from_utf8(bytes)
        .ok()
        .filter(|t| !t.chars().any(char::is_control));
    match text {
        Some(text) => format!("{} bytes: {} (text {text:?})", bytes.len(), to_hex(bytes)),
        None => format!("{} bytes: {}", bytes.len(), to_hex(bytes)),
    }
}

fn kind_text(kind: FrameKind) -> String {
    match kind {
        FrameKind::Full => format!("{KIND_FULL} (full filter)"),
        FrameKind::Delta {
            base_generation,
            base_digest,
            result_digest,
        } => format!(
            "{KIND_DELTA} (delta from generation {base_generation}: base digest {base_digest:#010x}, result digest {result_digest:#010x})"
        ),
    }
}
