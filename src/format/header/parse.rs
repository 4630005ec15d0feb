//! Parsing a frame header, field by field in the spec's order, each section of the spec a
//! step: every value is checked against the spec and the receiver's [`Limits`] as soon as it
//! is read, before anything that depends on it is allocated or looped over (§2.3).

use crate::entropy::chunks::{chunk_count, MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT};
use crate::entropy::coding::well_formed_len;
use crate::entropy::counter_table::{CounterTable, TABLE_TOTAL};
use crate::error::{Error, Result};
use crate::filter::counting::MAX_COUNTER_BITS;
use crate::filter::hashing::{BaseHash, HashFamily, IndexScheme};
use crate::filter::rational::{HashCount, K_FRAC_BITS, MAX_K};
use crate::filter::{Layout, Params, MAX_M};
use crate::wire::Reader;

use super::super::auth::{Tag, FLAG_TAGGED};
use super::super::ids::{
    Coding, FrameKind, FILTER_TYPE_COUNTING, FLAG_CHUNKED, FLAG_METADATA, FLAG_RESTART, KIND_DELTA,
    KIND_FULL, MAGIC, VERSION,
};
use super::super::limits::Limits;
use super::FrameHeader;

impl FrameHeader {
    /// Parse the header at the start of `input`, checking every field against the spec and
    /// `limits`. Needs only the header bytes: a short input gives [`Error::Incomplete`].
    pub fn parse(input: &[u8], limits: &Limits) -> Result<FrameHeader> {
        let mut p = Parser {
            r: Reader::new(input),
            limits,
        };
        let fixed = p.fixed(input)?;
        let base = p.base_hash(fixed.hash_id)?;
        let (m, layout_id, counter_width) = p.size(fixed.type_id)?;
        let params = p.k_field(m, layout_id, HashFamily::new(base, fixed.scheme))?;
        let (n, generation, kind) = p.sequence(fixed.kind)?;
        let metadata = p.metadata(fixed.flags & FLAG_METADATA != 0)?;
        let q0 = p.q0(fixed.coding)?;
        let counter_table = p.counter_table(fixed.coding, counter_width)?;
        let chunk_shift = p.chunk_shift(fixed.flags & FLAG_CHUNKED != 0, m)?;
        let payload_len = p.payload_len(
            fixed.coding,
            m,
            counter_width,
            chunk_shift,
            counter_table.as_ref(),
        )?;
        Ok(FrameHeader {
            kind,
            params,
            n,
            generation,
            coding: fixed.coding,
            q0,
            counter_width,
            counter_table,
            chunk_shift,
            restart: fixed.flags & FLAG_RESTART != 0,
            metadata,
            tag: if fixed.flags & FLAG_TAGGED != 0 {
                Tag::Unverified
            } else {
                Tag::Absent
            },
            payload_len,
            verified_by: None,
            header_len: p.r.offset(),
        })
    }
}

/// The fixed fields of §2: the ids that say how the rest of the header reads.
struct Fixed {
    kind: u8,
    type_id: u8,
    hash_id: u8,
    scheme: IndexScheme,
    coding: Coding,
    flags: u8,
}

/// A header being read: the input and the receiver's limits.
struct Parser<'a, 'l> {
    r: Reader<'a>,
    limits: &'l Limits,
}

/// [`Error::InvalidField`]: a value the spec does not allow.
fn invalid(field: &'static str, value: u64, offset: usize) -> Error {
    Error::InvalidField {
        field,
        value,
        offset,
    }
}

/// [`Error::LimitExceeded`] when a field's value is above the receiver's limit on it.
fn within_limit(field: &'static str, value: u64, limit: u64, offset: usize) -> Result<()> {
    if value > limit {
        return Err(Error::LimitExceeded {
            field,
            value,
            limit,
            offset,
        });
    }
    Ok(())
}

impl Parser<'_, '_> {
    /// §2: magic, version, frame kind, filter type, base hash, index scheme, coding and
    /// flags, each checked against the others where the spec ties them.
    fn fixed(&mut self, input: &[u8]) -> Result<Fixed> {
        let r = &mut self.r;
        let have = input.len().min(MAGIC.len());
        if let Some(offset) = (0..have).find(|&i| input[i] != MAGIC[i]) {
            return Err(Error::BadMagic {
                byte: input[offset],
                offset,
            });
        }
        r.take(MAGIC.len())?;
        let version = r.u8()?;
        if version != VERSION {
            return Err(Error::UnsupportedVersion(version));
        }
        let off = r.offset();
        let kind = r.u8()?;
        if kind != KIND_FULL && kind != KIND_DELTA {
            return Err(invalid("frame kind", kind.into(), off));
        }
        let off = r.offset();
        let type_id = r.u8()?;
        if type_id > FILTER_TYPE_COUNTING {
            return Err(invalid("filter type", type_id.into(), off));
        }
        let off = r.offset();
        let hash_id = r.u8()?;
        let opaque = hash_id == BaseHash::OPAQUE_ID;
        // The opaque family (3.1) carries another library's bits: a standard array only.
        if hash_id > BaseHash::SIPHASH24_ID || (opaque && type_id != Layout::STANDARD_ID) {
            return Err(invalid("base hash", hash_id.into(), off));
        }
        let off = r.offset();
        let scheme_id = r.u8()?;
        let scheme = IndexScheme::from_id(scheme_id)
            .filter(|s| !opaque || *s == IndexScheme::DoubleHashing)
            .ok_or(invalid("index scheme", scheme_id.into(), off))?;
        let off = r.offset();
        let coding_id = r.u8()?;
        let coding = Coding::from_id(coding_id)
            .filter(|c| c.valid_for(type_id))
            .ok_or(invalid("coding", coding_id.into(), off))?;
        if !self.limits.profile.includes(coding) {
            return Err(Error::UnsupportedCoding {
                coding: coding_id,
                offset: off,
            });
        }
        let off = r.offset();
        let flags = r.u8()?;
        let known = FLAG_CHUNKED | FLAG_RESTART | FLAG_TAGGED | FLAG_METADATA;
        if flags & !known != 0
            || (flags & FLAG_CHUNKED != 0 && !coding.is_chunkable())
            || (flags & FLAG_RESTART != 0 && kind != KIND_FULL)
        {
            return Err(invalid("flags", flags.into(), off));
        }
        Ok(Fixed {
            kind,
            type_id,
            hash_id,
            scheme,
            coding,
            flags,
        })
    }

    /// §3.1: the base hash's seed (a varint) or key (two 64-bit words); none for opaque.
    fn base_hash(&mut self, hash_id: u8) -> Result<BaseHash> {
        let r = &mut self.r;
        Ok(match hash_id {
            BaseHash::OPAQUE_ID => BaseHash::Opaque,
            BaseHash::XXH64_ID => BaseHash::Xxh64 {
                seed: r.varint("seed")?,
            },
            _ => BaseHash::SipHash24 {
                k0: r.u64_le()?,
                k1: r.u64_le()?,
            },
        })
    }

    /// §2 and §3.4: m (in `1..=2^48` and the limit), and for a counting frame its counted
    /// type and counter width; then the decoded filter's memory against its limit (§2.3).
    /// Returns m, the layout's id and the width.
    fn size(&mut self, type_id: u8) -> Result<(u64, u8, Option<u8>)> {
        let r = &mut self.r;
        let m_off = r.offset();
        let m = r.varint("m")?;
        if m == 0 || m > MAX_M {
            return Err(invalid("m", m, m_off));
        }
        within_limit("m", m, self.limits.max_m, m_off)?;
        let memory = |bytes| within_limit("filter bytes", bytes, self.limits.filter_bytes(), m_off);
        if type_id != FILTER_TYPE_COUNTING {
            memory(m.div_ceil(8))?;
            return Ok((m, type_id, None));
        }
        let off = r.offset();
        let counted = r.u8()?;
        if counted > Layout::BLOCKS_ID {
            return Err(invalid("counted type", counted.into(), off));
        }
        let off = r.offset();
        let width = r.u8()?;
        if !(1..=MAX_COUNTER_BITS).contains(&width) {
            return Err(invalid("counter width", width.into(), off));
        }
        // A byte a counter, whatever its width.
        memory(m)?;
        Ok((m, counted, Some(width)))
    }

    /// §2.1: the k field (one k, or one per block of a type-2 layout), at most 1024 each
    /// and, with the layout, valid; then k against the limit.
    fn k_field(&mut self, m: u64, layout_id: u8, family: HashFamily) -> Result<Params> {
        let r = &mut self.r;
        let k_off = r.offset();
        let max_raw = u64::from(MAX_K) << K_FRAC_BITS;
        let read_k = |r: &mut Reader<'_>| -> Result<HashCount> {
            let off = r.offset();
            let raw = r.varint("k")?;
            if raw > max_raw {
                return Err(invalid("k", raw, off));
            }
            Ok(HashCount::from_raw_allow_zero(raw as u32).expect("checked"))
        };
        let layout = match layout_id {
            Layout::STANDARD_ID => Layout::Standard { k: read_k(r)? },
            Layout::PARTITIONED_ID => Layout::Partitioned { k: read_k(r)? },
            _ => Layout::Blocks {
                ks: (0..m.count_ones())
                    .map(|_| read_k(r))
                    .collect::<Result<_>>()?,
            },
        };
        // The rejected value is the k field: its raw value, or for type 2 the sum of the
        // blocks' raw values (2.1).
        let k_raw: u64 = match &layout {
            Layout::Standard { k } | Layout::Partitioned { k } => k.raw().into(),
            Layout::Blocks { ks } => ks.iter().map(|k| u64::from(k.raw())).sum(),
        };
        let params = Params::new(m, layout, family).map_err(|_| invalid("k", k_raw, k_off))?;
        within_limit(
            "k",
            params.k().ceil().into(),
            self.limits.max_k.into(),
            k_off,
        )?;
        Ok(params)
    }

    /// §5: n, the generation and, for a delta, its base generation (before the generation)
    /// and the two digests.
    fn sequence(&mut self, kind: u8) -> Result<(u64, u64, FrameKind)> {
        let r = &mut self.r;
        let n = r.varint("n")?;
        let generation = r.varint("generation")?;
        if kind != KIND_DELTA {
            return Ok((n, generation, FrameKind::Full));
        }
        let off = r.offset();
        let base_generation = r.varint("base generation")?;
        if base_generation >= generation {
            return Err(invalid("base generation", base_generation, off));
        }
        let kind = FrameKind::Delta {
            base_generation,
            base_digest: r.u32_le()?,
            result_digest: r.u32_le()?,
        };
        Ok((n, generation, kind))
    }

    /// §2.6: the application metadata field (flags bit 3): its length, not zero and within
    /// the limit before anything is read or copied, then its bytes.
    fn metadata(&mut self, present: bool) -> Result<Option<Vec<u8>>> {
        if !present {
            return Ok(None);
        }
        let r = &mut self.r;
        let off = r.offset();
        let len = r.varint("metadata length")?;
        if len == 0 {
            return Err(invalid("metadata length", 0, off));
        }
        within_limit("metadata length", len, self.limits.max_metadata, off)?;
        // Bytes the input does not hold yet are `Incomplete`.
        Ok(Some(
            r.take(usize::try_from(len).unwrap_or(usize::MAX))?.to_vec(),
        ))
    }

    /// §4.4: q0 for the codings that send it, in `1..=65535`.
    fn q0(&mut self, coding: Coding) -> Result<Option<u16>> {
        if !coding.has_q0() {
            return Ok(None);
        }
        let off = self.r.offset();
        let q0 = self.r.u16_le()?;
        if q0 == 0 {
            return Err(invalid("q0", 0, off));
        }
        Ok(Some(q0))
    }

    /// §4.7: a known-counters table: its length (at most `2^width`), then its frequencies,
    /// each at most `2^16`, summing to `2^16`, the last not zero.
    fn counter_table(
        &mut self,
        coding: Coding,
        counter_width: Option<u8>,
    ) -> Result<Option<CounterTable>> {
        let (Coding::KnownCounters, Some(width)) = (coding, counter_width) else {
            return Ok(None);
        };
        let r = &mut self.r;
        let off = r.offset();
        let t = r.varint("table length")?;
        if t == 0 || t > 1 << width {
            return Err(invalid("table length", t, off));
        }
        let mut freq = Vec::with_capacity(t as usize);
        let mut sum = 0u64;
        for _ in 0..t {
            let f_off = r.offset();
            let f = r.varint("frequency")?;
            if f > u64::from(TABLE_TOTAL) {
                return Err(invalid("frequency", f, f_off));
            }
            sum += f;
            freq.push(f as u32);
        }
        let table = CounterTable::new(freq, width).map_err(|_| invalid("frequencies", sum, off))?;
        Ok(Some(table))
    }

    /// §4.10: a chunked payload's chunk shift (flags bit 0), in `6..=47` and below m.
    fn chunk_shift(&mut self, chunked: bool, m: u64) -> Result<Option<u8>> {
        if !chunked {
            return Ok(None);
        }
        let off = self.r.offset();
        let shift = self.r.u8()?;
        if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift) || 1u64 << shift >= m {
            return Err(invalid("chunk shift", shift.into(), off));
        }
        Ok(Some(shift))
    }

    /// §2.2: the payload length, within the limit, of a length the coding can write
    /// (chunked: at least a byte per chunk, each chunk checked when decoded) and within the
    /// work bound.
    fn payload_len(
        &mut self,
        coding: Coding,
        m: u64,
        counter_width: Option<u8>,
        chunk_shift: Option<u8>,
        table: Option<&CounterTable>,
    ) -> Result<usize> {
        let off = self.r.offset();
        let len = self.r.varint("payload length")?;
        within_limit("payload length", len, self.limits.max_payload, off)?;
        let well_formed = match chunk_shift {
            Some(shift) => len >= chunk_count(m, shift),
            None => well_formed_len(coding, m, counter_width, len),
        };
        let table_len = table.map(|t| t.frequencies().len());
        if !well_formed
            || len > usize::MAX as u64 / 2
            || !coding.within_work_bound(m, table_len, len)
        {
            return Err(invalid("payload length", len, off));
        }
        Ok(len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The reject vectors and the error their manifests name (`error`, and `field` for the
    /// field errors).
    fn reject_vectors() -> Vec<(String, Vec<u8>, String, Option<String>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors/reject");
        let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut out = Vec::new();
        for (name, entry) in manifest.as_object().unwrap() {
            let error = entry["error"].as_str().unwrap().to_string();
            let field = entry
                .get("field")
                .and_then(|f| f.as_str())
                .map(String::from);
            let bytes = std::fs::read(dir.join(name)).unwrap();
            out.push((name.clone(), bytes, error, field));
        }
        assert!(out.len() > 100, "{} reject vectors", out.len());
        out
    }

    /// The name of an error's variant and its field, as the manifests write them.
    fn named(e: &Error) -> (String, Option<String>) {
        let variant = e.name().to_string();
        let field = match e {
            Error::InvalidField { field, .. }
            | Error::LimitExceeded { field, .. }
            | Error::BadVarint { field, .. } => Some(field.to_string()),
            _ => None,
        };
        (variant, field)
    }

    #[test]
    fn every_header_reject_vector_fails_in_its_section_and_no_other_does() {
        // A vector the manifest rejects for a header field (or a bad magic or version)
        // fails to parse with that error; every other one has a header that parses, and
        // is rejected by a later stage (checksum, tag, payload, trailing bytes).
        let header_errors = [
            "BadMagic",
            "UnsupportedVersion",
            "InvalidField",
            "BadVarint",
            "LimitExceeded",
        ];
        let mut failed_here = 0;
        for (name, bytes, error, field) in reject_vectors() {
            let parsed = FrameHeader::parse(&bytes, &Limits::default());
            if header_errors.contains(&error.as_str()) {
                let e = parsed.expect_err(&name);
                let (variant, got_field) = named(&e);
                assert_eq!(variant, error, "{name}: {e}");
                if field.is_some() {
                    assert_eq!(got_field, field, "{name}: {e}");
                }
                failed_here += 1;
            } else if error == "Incomplete" {
                // Short in the header, or after it (the payload, the tag).
                assert!(
                    matches!(parsed, Ok(_) | Err(Error::Incomplete { .. })),
                    "{name}: {parsed:?}"
                );
            } else {
                assert!(parsed.is_ok(), "{name}: {parsed:?}, manifest says {error}");
            }
        }
        assert!(failed_here > 50, "{failed_here} header rejects");
    }

    #[test]
    fn each_section_rejects_its_own_field() {
        // One frame, changed in one field of each section: the error names that field.
        let wire = crate::format::Encoder::new()
            .encode(&crate::BloomFilter::new(
                Params::standard(1000, 3, HashFamily::default()).unwrap(),
            ))
            .unwrap()
            .to_bytes()
            .to_vec();
        assert!(FrameHeader::parse(&wire, &Limits::default()).is_ok());
        let field_at = |i: usize, v: u8| {
            let mut w = wire.clone();
            w[i] = v;
            named(&FrameHeader::parse(&w, &Limits::default()).unwrap_err())
        };
        let f = |s: &str| ("InvalidField".to_string(), Some(s.to_string()));
        assert_eq!(field_at(5, 2), f("frame kind"));
        assert_eq!(field_at(6, 4), f("filter type"));
        assert_eq!(field_at(7, 3), f("base hash"));
        assert_eq!(field_at(8, 9), f("index scheme"));
        assert_eq!(field_at(9, 77), f("coding"));
        assert_eq!(field_at(10, 0x80), f("flags"));
        // The limits, after the values they bound.
        let tight = Limits::new().max_m(999);
        let e = FrameHeader::parse(&wire, &tight).unwrap_err();
        assert_eq!(named(&e), ("LimitExceeded".into(), Some("m".into())));
        let tight = Limits::new().max_k(2);
        let e = FrameHeader::parse(&wire, &tight).unwrap_err();
        assert_eq!(named(&e), ("LimitExceeded".into(), Some("k".into())));
        // Every prefix of the header is incomplete, never another error.
        let header_len = FrameHeader::parse(&wire, &Limits::default())
            .unwrap()
            .header_len;
        for cut in 0..header_len {
            assert!(
                matches!(
                    FrameHeader::parse(&wire[..cut], &Limits::default()),
                    Err(Error::Incomplete { .. })
                ),
                "cut at {cut}"
            );
        }
    }
}
