//! A filter's parameters as plain values (what pickles carry), checked on the way back,
//! and the bit positions they give keys.

use bloomwire::{BaseHash, Error, HashCount, HashFamily, IndexScheme, Layout, Limits, Params};

use crate::errors::{Failure, Res};

/// A filter's parameters as plain values, as a pickle carries them: m, the layout's id, its
/// k on the 1/65536 grid (the blocks' k_j for the block layout), the base hash's id, its
/// seed (xxHash64) or SipHash key halves k0 and k1, and the index scheme's id.
pub(crate) type ParamParts = (u64, u8, Vec<u32>, u8, u64, u64, u8);

/// The plain values of a filter's parameters.
pub(crate) fn params_parts(p: &Params) -> ParamParts {
    let (layout, ks) = match p.layout() {
        Layout::Standard { k } => (Layout::STANDARD_ID, vec![k.raw()]),
        Layout::Partitioned { k } => (Layout::PARTITIONED_ID, vec![k.raw()]),
        Layout::Blocks { ks } => (Layout::BLOCKS_ID, ks.iter().map(|k| k.raw()).collect()),
    };
    let (base, a, b) = match p.family().base {
        BaseHash::Opaque => (0, 0, 0),
        BaseHash::Xxh64 { seed } => (BaseHash::XXH64_ID, seed, 0),
        BaseHash::SipHash24 { k0, k1 } => (BaseHash::SIPHASH24_ID, k0, k1),
    };
    (p.m(), layout, ks, base, a, b, p.family().scheme.id())
}

/// The parameters of these plain values, checked as the library checks any parameters.
pub(crate) fn params_from_parts(parts: ParamParts) -> Res<Params> {
    let (m, layout, ks, base, a, b, scheme) = parts;
    let bad = |name: &'static str, reason: String| -> Failure {
        Error::InvalidParameter { name, reason }.into()
    };
    let one_k = || -> Res<HashCount> {
        match ks[..] {
            [k] => Ok(HashCount::from_raw(k)?),
            _ => Err(bad("k", format!("{} values of k for one layout", ks.len()))),
        }
    };
    let layout = match layout {
        Layout::STANDARD_ID => Layout::Standard { k: one_k()? },
        Layout::PARTITIONED_ID => Layout::Partitioned { k: one_k()? },
        Layout::BLOCKS_ID => Layout::Blocks {
            ks: ks
                .iter()
                .map(|&k| HashCount::from_raw_allow_zero(k))
                .collect::<Result<_, _>>()?,
        },
        other => return Err(bad("layout", format!("no layout has id {other}"))),
    };
    let base = match base {
        0 => BaseHash::Opaque,
        BaseHash::XXH64_ID => BaseHash::Xxh64 { seed: a },
        BaseHash::SIPHASH24_ID => BaseHash::SipHash24 { k0: a, k1: b },
        other => return Err(bad("base hash", format!("no base hash has id {other}"))),
    };
    let scheme = IndexScheme::from_id(scheme)
        .ok_or_else(|| bad("index scheme", format!("no index scheme has id {scheme}")))?;
    Ok(Params::new(m, layout, HashFamily::new(base, scheme))?)
}

/// The parameters of a pickled plan, checked as a decoder checks a frame's: m, k (rounded
/// up) and the filter's memory within `limits`, `LimitExceeded` naming the same fields
/// ("m", "k", "filter bytes"). Nothing is allocated.
pub(crate) fn params_within(parts: ParamParts, limits: &Limits) -> Res<Params> {
    let params = params_from_parts(parts)?;
    for (field, value, limit) in [
        ("m", params.m(), limits.max_m),
        ("k", params.k().ceil().into(), limits.max_k.into()),
        (
            "filter bytes",
            params.m().div_ceil(8),
            limits.filter_bytes(),
        ),
    ] {
        if value > limit {
            // (Offset 0: a pickle is not a frame.)
            return Err(Error::LimitExceeded {
                field,
                value,
                limit,
                offset: 0,
            }
            .into());
        }
    }
    Ok(params)
}

/// The bit positions of keys under one filter's parameters, without its bits (the
/// library's `Indexer`).
#[derive(Debug, Clone)]
pub(crate) struct Positions {
    inner: bloomwire::filter::Indexer,
    pub(crate) params: Params,
}

impl Positions {
    /// The indexer of filters of `params`; `OpaqueHashFamily` for another library's
    /// parameters, whose positions only that library knows.
    pub(crate) fn new(params: Params) -> Res<Self> {
        if params.family().base.is_opaque() {
            return Err(Error::OpaqueHashFamily.into());
        }
        Ok(Positions {
            inner: bloomwire::filter::Indexer::new(&params),
            params,
        })
    }

    /// Append every bit position of every key to `out`, key after key, each key's in the
    /// order its hash functions give them (the bits an insert of the key sets); returns the
    /// number of keys.
    pub(crate) fn positions<'a>(
        &self,
        keys: impl Iterator<Item = &'a [u8]>,
        out: &mut Vec<u64>,
    ) -> u64 {
        let mut count = 0;
        for key in keys {
            self.inner.for_each(key, |p| out.push(p));
            count += 1;
        }
        count
    }
}
