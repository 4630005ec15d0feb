//! What encoders and decoders are given, from Python arguments: the encoder settings (a
//! coding or the library's choice, budget, metadata, key, chunk shift, profile), the decode
//! limits and key, and the default limits the signatures show.
//!
//! Values only, no class: the filters, frames and streams above all build these.

use bloomwire::{
    BitCoding, BloomFilter as Bloom, Chunking, Coding, CounterCoding,
    CountingBloomFilter as Counting, Decodable, Encoder, Error, Frame, FrameHeader, FrameKey,
    FrameView, Limits, Profile, Verifier,
};
use pyo3::prelude::*;

use crate::args::{frame_key, metadata_bytes};
use crate::errors::{Attr, Failure, IntoPyResult, Res};

/// The library's default `max_m`, written in the signatures (checked against the library's
/// when the module loads).
pub(crate) const DEFAULT_MAX_M: u64 = 1 << 28;
/// The library's default `max_k`.
pub(crate) const DEFAULT_MAX_K: u32 = 64;
/// The library's default `max_payload`.
pub(crate) const DEFAULT_MAX_PAYLOAD: u64 = 1 << 26;
/// The library's default `max_metadata`.
pub(crate) const DEFAULT_MAX_METADATA: u64 = 1 << 12;

// ---------------------------------------------------------------------------------------------
// Encoder settings

/// The names of the codings, Bloom filters' first (raw, which both kinds have, once).
pub(crate) fn coding_names() -> Vec<String> {
    let mut names: Vec<String> = BitCoding::ALL.iter().map(|c| c.to_string()).collect();
    for c in CounterCoding::ALL {
        let name = c.to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn unknown_coding(name: &str, kind: &str, names: Vec<String>) -> Failure {
    let reason = format!(
        "{name:?} is not a coding of {kind}; expected one of {}",
        names.join(", ")
    );
    Failure {
        kind: "InvalidParameter",
        message: format!("invalid parameter coding: {reason}"),
        attrs: vec![
            ("name", Attr::Str("coding".into())),
            ("reason", Attr::Str(reason)),
        ],
    }
}

/// The encoder settings of a frame: a named coding or the library's choice, a budget, the
/// application metadata and the key that tags the frames.
#[derive(Debug, Clone, Default)]
pub(crate) struct EncoderSettings {
    pub(crate) coding: Option<Coding>,
    pub(crate) budget: Option<usize>,
    pub(crate) metadata: Option<Vec<u8>>,
    pub(crate) key: Option<FrameKey>,
    pub(crate) chunk_shift: Option<u8>,
    pub(crate) profile: Option<bloomwire::Profile>,
}

impl EncoderSettings {
    fn apply<F: bloomwire::Filter>(&self, mut e: Encoder<F>) -> Encoder<F> {
        if let Some(b) = self.budget {
            e = e.budget(b);
        }
        if let Some(shift) = self.chunk_shift {
            e = e.chunking(Chunking::Shift(shift));
        }
        if let Some(m) = &self.metadata {
            e = e.metadata(m.clone());
        }
        if let Some(k) = &self.key {
            e = e.key(k.clone());
        }
        if let Some(p) = self.profile {
            e = e.profile(p);
        }
        e
    }

    /// The full frame of a Bloom filter carrying `generation`, with the restart flag if
    /// asked.
    pub(crate) fn encode_bloom(&self, f: &Bloom, generation: u64, restart: bool) -> Res<Frame> {
        let frame = self.bloom()?.encode_generation(f, generation)?;
        Ok(frame.with_restart(restart)?)
    }

    /// The full frame of a counting filter carrying `generation`, with the restart flag if
    /// asked.
    pub(crate) fn encode_counting(
        &self,
        f: &Counting,
        generation: u64,
        restart: bool,
    ) -> Res<Frame> {
        let frame = self.counting()?.encode_generation(f, generation)?;
        Ok(frame.with_restart(restart)?)
    }

    /// The library's encoder of Bloom filters with these settings; a coding of counters is
    /// refused.
    pub(crate) fn bloom(&self) -> Res<Encoder<Bloom>> {
        let mut e = Encoder::new();
        if let Some(coding) = self.coding_of(&BitCoding::ALL, "a Bloom filter")? {
            e = e.coding(coding);
        }
        Ok(self.apply(e))
    }

    /// The library's encoder of counting filters with these settings; a coding of bits is
    /// refused.
    pub(crate) fn counting(&self) -> Res<Encoder<Counting>> {
        let mut e = Encoder::new();
        if let Some(coding) = self.coding_of(&CounterCoding::ALL, "a counting filter")? {
            e = e.coding(coding);
        }
        Ok(self.apply(e))
    }

    /// The coding asked for, if any, as one of `all` (the codings of `kind`); another
    /// is refused with the names of these.
    fn coding_of<C>(&self, all: &[C], kind: &str) -> Res<Option<C>>
    where
        C: TryFrom<Coding, Error = Coding> + std::fmt::Display,
    {
        self.coding
            .map(|coding| {
                C::try_from(coding).map_err(|c| {
                    let names = all.iter().map(|c| c.to_string()).collect();
                    unknown_coding(&c.to_string(), kind, names)
                })
            })
            .transpose()
    }

    /// The same settings with this application metadata on every frame (empty: none).
    pub(crate) fn metadata(mut self, metadata: Option<Vec<u8>>) -> Self {
        self.metadata = metadata.filter(|m| !m.is_empty());
        self
    }

    /// The same settings tagging every frame with `key`.
    pub(crate) fn key(mut self, key: Option<FrameKey>) -> Self {
        self.key = key;
        self
    }

    /// The same settings writing only the codings of the named profile ("core" or "full";
    /// None: the library's default, full).
    pub(crate) fn profile(mut self, profile: Option<&str>) -> Res<Self> {
        self.profile = profile.map(str::parse).transpose()?;
        Ok(self)
    }

    /// The same settings with payloads in chunks of `2^shift` bits (None: the library's
    /// choice).
    pub(crate) fn chunk_shift(mut self, shift: Option<u8>) -> Self {
        self.chunk_shift = shift;
        self
    }
}

/// Encoder settings; a name that is no coding at all is refused here, one of the other filter
/// kind when encoding.
pub(crate) fn encoder(coding: Option<&str>, budget: Option<usize>) -> Res<EncoderSettings> {
    let coding = coding
        .map(|name| {
            name.parse::<Coding>()
                .map_err(|_| unknown_coding(name, "any filter", coding_names()))
        })
        .transpose()?;
    Ok(EncoderSettings {
        coding,
        budget,
        ..EncoderSettings::default()
    })
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// Limits from their values; `max_filter_bytes` None is the library's default,
/// `ceil(max_m / 8)`.
pub(crate) fn limits(
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
) -> Limits {
    let limits = Limits::new()
        .max_m(max_m)
        .max_k(max_k)
        .max_payload(max_payload)
        .max_metadata(max_metadata);
    match max_filter_bytes {
        Some(bytes) => limits.max_filter_bytes(bytes),
        None => limits,
    }
}

/// The limits of a decoder or receiver from its arguments: `limits`, decoding only the
/// codings of the named profile ("core" or "full"; None: full).
pub(crate) fn decode_limits(
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
    profile: Option<&str>,
) -> PyResult<Limits> {
    let limits = limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes);
    Ok(match profile {
        Some(name) => limits.profile(name.parse::<Profile>().into_py()?),
        None => limits,
    })
}

/// What a decoder checks: the limits, and the key frames must be tagged with (if any).
#[derive(Debug, Clone)]
pub(crate) struct DecodeChecks {
    limits: Limits,
    verifier: Option<Verifier>,
}

impl DecodeChecks {
    /// Frames within `limits`, tagged with `key` when there is one (a tag is otherwise
    /// skipped, and reported as unverified).
    pub(crate) fn new(limits: Limits, key: Option<FrameKey>) -> Self {
        DecodeChecks {
            limits,
            verifier: key.map(|k| Verifier::new(k, limits)),
        }
    }

    pub(crate) fn decode<T: Decodable>(&self, input: &[u8]) -> Result<T, Error> {
        match &self.verifier {
            Some(v) => bloomwire::decode(input, v),
            None => bloomwire::decode(input, &self.limits),
        }
    }

    fn view<'a>(&self, input: &'a [u8]) -> Result<FrameView<'a>, Error> {
        match &self.verifier {
            Some(v) => FrameView::parse(input, v),
            None => FrameView::parse(input, &self.limits),
        }
    }
}

/// The header of the frame at the start of `input`. Without a key it is checked against the
/// limits and nothing else (the payload, the checksum and a tag are not read); with one, the
/// whole frame's length, checksum and tag are checked too (not its payload).
pub(crate) fn header_of(input: &[u8], checks: &DecodeChecks) -> Res<FrameHeader> {
    if checks.verifier.is_some() {
        return Ok(checks.view(input)?.header().clone());
    }
    Ok(FrameHeader::parse(input, &checks.limits)?)
}

/// Settings of an encoder from the arguments of `encode` and `Sender`.
pub(crate) fn encoder_settings(
    coding: Option<&str>,
    budget: Option<usize>,
    metadata: Option<&Bound<'_, PyAny>>,
    key: Option<&Bound<'_, PyAny>>,
    profile: Option<&str>,
) -> PyResult<EncoderSettings> {
    Ok(encoder(coding, budget)
        .into_py()?
        .profile(profile)
        .into_py()?
        .metadata(metadata_bytes(metadata)?)
        .key(frame_key(key)?))
}
