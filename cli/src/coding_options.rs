//! How a command writes a frame: `--coding`, `--profile` and `--chunk-shift`, checked
//! against the filter, and the notes when the frame came out otherwise.

use bloomwire::{BitCoding, Chunking, Coding, CounterCoding, Frame, Profile, Status};

use crate::output::note;
use crate::{Failure, Result};

/// The `--coding` option of the commands that write frames.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct CodingOption {
    #[arg(
        long,
        value_name = "CODING",
        value_parser = parse_coding,
        default_value = "auto",
        help = "How to code the frame: auto, or a coding's name (--help lists them)",
        long_help = coding_help()
    )]
    pub coding: CodingArg,
    #[arg(
        long,
        value_name = "PROFILE",
        value_parser = parse_profile,
        default_value = "full",
        help = "Write only the codings of this profile: core or full",
        long_help = profile_help()
    )]
    pub profile: Profile,
}

/// The help of `--profile`, naming the library's profiles and the codings of each.
fn profile_help() -> String {
    let core = Coding::ALL
        .into_iter()
        .filter(|&c| Profile::Core.includes(c))
        .map(|c| c.to_string())
        .collect::<Vec<_>>();
    format!(
        "Write only the codings of this profile (spec 4.0): core, the codings every decoder \
         implements ({}, and chunks), or full, every coding. A sender that does not know \
         what its receivers implement writes core; auto coding then picks among core's \
         codings, and --coding outside the profile is a usage error",
        core.join(", ")
    )
}

/// A profile by the library's name for it.
fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse::<Profile>().map_err(|_| {
        let names: Vec<&str> = Profile::ALL.map(Profile::name).to_vec();
        format!("expected {}", names.join(" or "))
    })
}

/// The help of `--coding`, naming the library's codings.
fn coding_help() -> String {
    format!(
        "How to code the frame: auto, or a coding's name. A Bloom filter takes {}; a counting \
         filter {}. auto picks the fastest coding within 0.08% + 6 bytes of the smallest, \
         predicted from counts (for a counting filter the smaller of known and adaptive \
         counters). A coding asked for is not always what the frame gets: any coding comes \
         out as raw (0) when compression is not smaller, and every coding but raw and \
         positional comes out as positional (7) for a filter so sparse that its payload would \
         break the format's work bound (spec 2.2: at most 4096 bits per payload byte); a note \
         on stderr says so. A deprecated coding is read by every decoder and written when \
         asked for by name, never picked by auto. `build --coding raw` plans an uncompressed \
         filter",
        names(BitCoding::ALL.map(Coding::from)),
        names(CounterCoding::ALL.map(Coding::from)),
    )
}

/// `name (id)` of each coding, comma-separated, `name (id, deprecated)` for a coding that
/// auto coding no longer picks.
fn names(codings: impl IntoIterator<Item = Coding>) -> String {
    let names: Vec<String> = codings
        .into_iter()
        .map(|c| match c.status() {
            Status::Deprecated => format!("{c} ({}, {})", c.id(), c.status()),
            _ => format!("{c} ({})", c.id()),
        })
        .collect();
    names.join(", ")
}

/// A `--coding` value: `auto`, or a coding by the library's name for it.
fn parse_coding(s: &str) -> Result<CodingArg, String> {
    if s == "auto" {
        return Ok(CodingArg::Auto);
    }
    if let Ok(coding) = s.parse::<BitCoding>() {
        return Ok(CodingArg::Bits(coding));
    }
    if let Ok(coding) = s.parse::<CounterCoding>() {
        return Ok(CodingArg::Counters(coding));
    }
    Err(format!(
        "expected auto, a coding of bits ({}) or of counters ({})",
        BitCoding::ALL.map(|c| c.to_string()).join(", "),
        CounterCoding::ALL.map(|c| c.to_string()).join(", ")
    ))
}

/// The `--chunk-shift` option of the commands that write frames.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ChunkArg {
    #[arg(
        long,
        value_name = "S",
        value_parser = parse_chunking,
        default_value = "auto",
        help = "Code the bits in chunks of 2^S bits (6..=47), auto or never",
        long_help = chunk_help()
    )]
    chunk_shift: Chunking,
}

impl ChunkArg {
    /// The encoder's chunking.
    pub fn chunking(self) -> Chunking {
        self.chunk_shift
    }
}

/// The help of `--chunk-shift`, naming the library's codings that are never chunked.
fn chunk_help() -> String {
    let never: Vec<String> = BitCoding::ALL
        .map(Coding::from)
        .into_iter()
        .filter(|c| !c.is_chunkable())
        .map(|c| c.to_string())
        .collect();
    format!(
        "Code the bits in independently decodable chunks of 2^S bits (S in 6..=47), so that \
         `query` decodes only the chunks its keys need, or `never`. By default filters of 2^26 \
         bits or more are chunked, in chunks of at least 2^20 bits whose coded size is about \
         128 KiB; smaller ones are not. Counting frames and the codings that are never \
         chunked ({}) are not: asking for chunks of one of them is an error, and a note says \
         so when auto coding picks one",
        never.join(", ")
    )
}

/// The note for a frame that is not chunked although `--chunk-shift S` asked for chunks
/// (auto coding chose a coding that is never chunked, or raw was smaller), as the library
/// ignores the chunking of such codings.
fn chunk_change(chunks: ChunkArg, frame: &Frame) -> Option<String> {
    let Chunking::Shift(shift) = chunks.chunk_shift else {
        return None;
    };
    let coding = frame.coding();
    (frame.header().chunk_shift.is_none() && !coding.is_chunkable()).then(|| {
        format!("--chunk-shift {shift}: the frame is not chunked: coding {coding} never is")
    })
}

fn parse_chunking(s: &str) -> Result<Chunking, String> {
    match s {
        "auto" => Ok(Chunking::Auto),
        "never" => Ok(Chunking::Never),
        _ => match s.parse::<u8>() {
            Ok(shift) if (6..=47).contains(&shift) => Ok(Chunking::Shift(shift)),
            _ => Err("expected auto, never or a shift from 6 to 47".into()),
        },
    }
}

/// A `--coding` value: auto, or one of the library's codings (named as its `FromStr` reads
/// them: `Coding::name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodingArg {
    /// The encoder's choice.
    Auto,
    /// A coding of bits (raw is one, which a counting filter takes too).
    Bits(BitCoding),
    /// A coding of counters.
    Counters(CounterCoding),
}

/// Notes on standard error where `frame`'s coding or chunks are not those asked for.
pub fn note_changes(coding: CodingArg, chunks: ChunkArg, frame: &Frame) {
    if let Some(change) = coding_change(coding, frame) {
        note(format!("bloomwire: note: {change}"));
    }
    if let Some(change) = chunk_change(chunks, frame) {
        note(format!("bloomwire: note: {change}"));
    }
}

/// What to tell the user when the frame's coding is not the one asked for.
fn coding_change(asked: CodingArg, frame: &Frame) -> Option<String> {
    let asked = asked.asked()?;
    let got = frame.coding();
    if got == asked || frame.header().is_counting() {
        return None;
    }
    let why = match got {
        Coding::Raw => "compression is not smaller than the packed bits",
        Coding::Positional => {
            "the filter is so sparse that a per-bit payload would break the work bound \
             (spec 2.2)"
        }
        _ => "the encoder found it smaller",
    };
    Some(format!(
        "--coding {asked} came out as {got} (coding {}): {why}",
        got.id()
    ))
}

impl CodingArg {
    /// The coding of bits, `None` for auto (or a coding of counters, which
    /// [`CodingOption::for_filter`] refuses for a Bloom filter).
    pub fn coding(self) -> Option<BitCoding> {
        match self {
            CodingArg::Bits(coding) => Some(coding),
            _ => None,
        }
    }

    /// The coding of counters, `None` for auto (or a coding of bits other than raw).
    pub fn counter_coding(self) -> Option<CounterCoding> {
        match self {
            CodingArg::Bits(coding) => CounterCoding::try_from(Coding::from(coding)).ok(),
            CodingArg::Counters(coding) => Some(coding),
            CodingArg::Auto => None,
        }
    }

    /// The coding asked for, `None` for auto.
    pub fn asked(self) -> Option<Coding> {
        match self {
            CodingArg::Auto => None,
            CodingArg::Bits(coding) => Some(coding.into()),
            CodingArg::Counters(coding) => Some(coding.into()),
        }
    }
}

impl CodingOption {
    /// The usage error for an explicit coding outside `--profile`, and for one that is never
    /// chunked with `--chunk-shift S`, which the library would ignore.
    pub fn check_args(&self, chunks: ChunkArg) {
        if let Some(coding) = self.coding.asked() {
            if !self.profile.includes(coding) {
                crate::usage_error(format!(
                    "--coding {coding}: not a coding of --profile {} (--help lists its \
                     codings)",
                    self.profile
                ));
            }
        }
        if let (Chunking::Shift(shift), Some(coding)) = (chunks.chunk_shift, self.coding.asked()) {
            if !coding.is_chunkable() {
                crate::usage_error(format!(
                    "--chunk-shift {shift}: --coding {coding} is never chunked (spec 4.10); \
                     leave out --chunk-shift or pick another coding"
                ));
            }
        }
    }

    /// The coding for a counting filter (`counting`) or a Bloom filter, or the one-line
    /// error for a coding or a chunking it cannot take: a counting filter is coded auto or
    /// by a coding of counters, and never chunked; a Bloom filter by a coding of bits.
    pub fn for_filter(&self, chunks: ChunkArg, counting: bool) -> Result<CodingArg> {
        let coding = self.coding;
        if counting {
            if coding != CodingArg::Auto && coding.counter_coding().is_none() {
                return Err(Failure(format!(
                    "--coding {}: a counting filter is coded auto or by {}",
                    coding.asked().expect("not auto"),
                    CounterCoding::ALL.map(|c| c.to_string()).join(", ")
                )));
            }
            if let Chunking::Shift(shift) = chunks.chunk_shift {
                return Err(Failure(format!(
                    "--chunk-shift {shift}: counting frames are never chunked"
                )));
            }
        } else if let CodingArg::Counters(c) = coding {
            return Err(Failure(format!(
                "--coding {c}: a coding of counters; a Bloom filter is coded auto or by {}",
                BitCoding::ALL.map(|c| c.to_string()).join(", ")
            )));
        }
        Ok(coding)
    }
}
