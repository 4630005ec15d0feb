//! Every call into the bloomwire library, in one place.
//!
//! The rest of the module speaks Python and uses only what this file exports, so a change of
//! the library's paths or signatures is adapted here alone. Nothing here touches Python.

use std::sync::OnceLock;

use bloomwire::format::{chunk_count, MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT};
use bloomwire::{
    BaseHash, BitArray, BitCoding, BloomFilter, ChunkedFrame, Chunking, CounterCoding,
    CountingBloomFilter, Decodable, Encoder, Error, Frame, FrameHeader, FrameKey, FrameKind,
    FrameView, HashCount, HashFamily, IndexScheme, Layout, Limits, Message, Optimizer, Params, Tag,
    Update, Verifier,
};

/// A filter of either kind, borrowed.
pub use bloomwire::filter::any::FilterRef;
/// A filter of either kind, owned.
pub use bloomwire::AnyFilter;

/// A Bloom filter of the library.
pub type Filter = BloomFilter;
/// A counting Bloom filter of the library.
pub type Counting = CountingBloomFilter;
/// What a decoder accepts.
pub type DecodeLimits = Limits;
/// A hash family (base hash, seed or key, index scheme).
pub type Family = HashFamily;
/// The 32-byte secret that tags frames (spec 2.5).
pub type Key = FrameKey;

// ---------------------------------------------------------------------------------------------
// Errors

/// A value attached to an error, for the Python exception's attributes.
#[derive(Debug, Clone)]
pub enum Attr {
    /// An integer.
    Int(u64),
    /// A string.
    Str(String),
    /// Nothing (for example a receiver that holds no generation yet).
    None,
}

/// A library error, as the exception class name, the message and the named fields.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The error variant's name; the Python exception class of the same name.
    pub kind: &'static str,
    /// The library's message.
    pub message: String,
    /// The variant's fields.
    pub attrs: Vec<(&'static str, Attr)>,
}

/// Results of this file.
pub type Res<T> = Result<T, Failure>;

impl Failure {
    /// A failure that is not one of the library's errors (a wrong argument).
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            attrs: Vec::new(),
        }
    }

    /// The same failure with one more string attribute.
    pub fn with_attr(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.attrs.push((name, text(value)));
        self
    }
}

fn int(v: impl TryInto<u64>) -> Attr {
    v.try_into().map_or(Attr::None, Attr::Int)
}

fn text(s: impl Into<String>) -> Attr {
    Attr::Str(s.into())
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let message = e.to_string();
        let (kind, attrs): (&'static str, Vec<(&'static str, Attr)>) = match e {
            Error::InvalidParameter { name, reason } => (
                "InvalidParameter",
                vec![("name", text(name)), ("reason", text(reason))],
            ),
            Error::Incompatible(reason) => ("Incompatible", vec![("reason", text(reason))]),
            Error::Incomplete { needed } => ("Incomplete", vec![("needed", int(needed))]),
            Error::BadMagic { byte, offset } => (
                "BadMagic",
                vec![
                    ("byte", int(u64::from(byte))),
                    ("offset", int(offset as u64)),
                ],
            ),
            Error::UnsupportedVersion(v) => ("UnsupportedVersion", vec![("version", int(v))]),
            Error::InvalidField {
                field,
                value,
                offset,
            } => (
                "InvalidField",
                vec![
                    ("field", text(field)),
                    ("value", int(value)),
                    ("offset", int(offset)),
                ],
            ),
            Error::UnsupportedCoding { coding, offset } => (
                "UnsupportedCoding",
                vec![("coding", int(coding)), ("offset", int(offset))],
            ),
            Error::BadVarint { field, offset } => (
                "BadVarint",
                vec![("field", text(field)), ("offset", int(offset))],
            ),
            Error::LimitExceeded {
                field,
                value,
                limit,
                offset,
            } => (
                "LimitExceeded",
                vec![
                    ("field", text(field)),
                    ("value", int(value)),
                    ("limit", int(limit)),
                    ("offset", int(offset)),
                ],
            ),
            Error::ChecksumMismatch {
                stored,
                computed,
                offset,
            } => (
                "ChecksumMismatch",
                vec![
                    ("stored", int(stored)),
                    ("computed", int(computed)),
                    ("offset", int(offset)),
                ],
            ),
            Error::MissingTag { offset } => ("MissingTag", vec![("offset", int(offset))]),
            Error::BadTag { offset } => ("BadTag", vec![("offset", int(offset))]),
            Error::TagNotVerified => ("TagNotVerified", vec![]),
            Error::PlanExceedsLimits {
                name,
                needed,
                limit,
            } => (
                "PlanExceedsLimits",
                vec![
                    ("name", text(name)),
                    ("needed", int(needed)),
                    ("limit", int(limit)),
                ],
            ),
            Error::TrailingBytes { count, offset } => (
                "TrailingBytes",
                vec![("count", int(count)), ("offset", int(offset))],
            ),
            Error::CorruptPayload { reason, offset } => (
                "CorruptPayload",
                vec![("reason", text(reason)), ("offset", int(offset))],
            ),
            Error::UnexpectedDelta => ("UnexpectedDelta", vec![]),
            Error::OpaqueHashFamily => ("OpaqueHashFamily", vec![]),
            Error::UnexpectedFilterType { expected, got } => (
                "UnexpectedFilterType",
                vec![("expected", text(expected)), ("got", int(got))],
            ),
            Error::GenerationGap { have, base } => (
                "GenerationGap",
                vec![
                    ("have", have.map_or(Attr::None, Attr::Int)),
                    ("base", int(base)),
                ],
            ),
            Error::StaleGeneration { have, got } => (
                "StaleGeneration",
                vec![("have", int(have)), ("got", int(got))],
            ),
            Error::BaseMismatch {
                generation,
                expected,
                actual,
            } => (
                "BaseMismatch",
                vec![
                    ("generation", int(generation)),
                    ("expected", int(expected)),
                    ("actual", int(actual)),
                ],
            ),
            Error::ResultMismatch {
                generation,
                expected,
                actual,
            } => (
                "ResultMismatch",
                vec![
                    ("generation", int(generation)),
                    ("expected", int(expected)),
                    ("actual", int(actual)),
                ],
            ),
            Error::OverBudget {
                budget,
                compressed,
                raw,
            } => (
                "OverBudget",
                vec![
                    ("budget", int(budget)),
                    ("compressed", int(compressed)),
                    ("raw", int(raw)),
                ],
            ),
            Error::AllocationFailed { bytes } => ("AllocationFailed", vec![("bytes", int(bytes))]),
            // Variants of later library versions: the base class.
            _ => ("BloomwireError", vec![]),
        };
        Failure {
            kind,
            message,
            attrs,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The thread's encoding memory

/// Bytes of memory the calling thread keeps for its next encodes.
pub fn thread_scratch_bytes() -> usize {
    bloomwire::thread_scratch_bytes()
}

/// Give the calling thread's kept encoding memory back: the bytes it was.
pub fn release_thread_scratch() -> usize {
    bloomwire::release_thread_scratch()
}

// Limits and hash families

/// The library's default limits: (max_m, max_k, max_payload, max_metadata).
pub fn default_limits() -> (u64, u32, u64, u64) {
    let l = Limits::default();
    (l.max_m, l.max_k, l.max_payload, l.max_metadata)
}

/// Limits from their values; `max_filter_bytes` None is the library's default,
/// `ceil(max_m / 8)`.
pub fn limits(
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
) -> DecodeLimits {
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

/// `limits` decoding only the codings of the named profile ("core" or "full"; None: full).
pub fn limits_of_profile(limits: DecodeLimits, profile: Option<&str>) -> Res<DecodeLimits> {
    Ok(match profile {
        Some(name) => limits.profile(name.parse()?),
        None => limits,
    })
}

/// The key of these 32 bytes.
pub fn frame_key(bytes: [u8; 32]) -> Key {
    FrameKey::new(bytes)
}

/// What a decoder checks: the limits, and the key frames must be tagged with (if any).
#[derive(Debug, Clone)]
pub struct DecodeChecks {
    limits: Limits,
    verifier: Option<Verifier>,
}

impl DecodeChecks {
    /// Frames within `limits`, tagged with `key` when there is one (a tag is otherwise
    /// skipped, and reported as unverified).
    pub fn new(limits: DecodeLimits, key: Option<Key>) -> Self {
        DecodeChecks {
            limits,
            verifier: key.map(|k| Verifier::new(k, limits)),
        }
    }

    fn decode<T: Decodable>(&self, input: &[u8]) -> Result<T, Error> {
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

/// xxHash64 with a seed, or keyed SipHash-2-4; enhanced double hashing (the crate's
/// default index scheme) either way.
pub fn family(seed: u64, siphash_key: Option<[u8; 16]>) -> Family {
    let base = match siphash_key {
        Some(key) => BaseHash::siphash(key),
        None => BaseHash::Xxh64 { seed },
    };
    HashFamily::new(base, IndexScheme::default())
}

/// A short description of a filter's parameters: layout, m, k and hash family.
pub fn describe(params: &Params) -> String {
    let base = match &params.family().base {
        BaseHash::Xxh64 { seed } => format!("xxh64 seed {seed}"),
        BaseHash::Opaque => "opaque".to_string(),
        _ => "siphash".to_string(),
    };
    format!(
        "m={}, k={}, layout={}, hash={base}",
        params.m(),
        params.k(),
        layout_name(params)
    )
}

fn layout_name(params: &Params) -> &'static str {
    match params.layout().id() {
        0 => "standard",
        1 => "partitioned",
        _ => "blocks",
    }
}

// ---------------------------------------------------------------------------------------------
// Planning

/// A plan's figures, and the parameters to build its filter with.
#[derive(Debug, Clone)]
pub struct PlanInfo {
    /// Keys planned for.
    pub n: u64,
    /// Bits of the filter.
    pub m: u64,
    /// Hash functions per key.
    pub k: f64,
    /// k on the 1/65536 grid.
    pub k_raw: u32,
    /// The layout's name.
    pub layout: &'static str,
    /// The planned coding's name.
    pub coding: String,
    /// Expected false positive rate.
    pub fpr: f64,
    /// Expected frame bytes.
    pub expected_bytes: f64,
    /// Frame bytes exceeded with probability at most `epsilon`.
    pub worst_case_bytes: u64,
    /// That probability.
    pub epsilon: f64,
    /// Expected bits on the wire per key.
    pub bits_per_element: f64,
    /// The receiver's memory for the decoded filter, `ceil(m/8)` bytes.
    pub receiver_bytes: u64,
    /// The library's table of the plan.
    pub table: String,
    /// The filter's parameters.
    pub params: Params,
    /// The library's plan (for a plan restored from its figures, one carrying them).
    plan: bloomwire::Plan,
}

impl PlanInfo {
    /// The chunk shift of a build by chunks on workers of `worker_bytes` bytes each, None
    /// when one worker holds the whole filter and its frame (the library's
    /// `Plan::chunked_build`).
    pub fn chunked_build(&self, worker_bytes: u64) -> Option<u8> {
        self.plan.chunked_build(worker_bytes)
    }

    /// The memory at each side (the library's `Plan::memory`).
    pub fn memory(&self) -> bloomwire::optimizer::Memory {
        self.plan.memory()
    }

    /// The delta frames at the churn asked for (the library's `Plan::delta`).
    pub fn delta(&self) -> Option<bloomwire::optimizer::DeltaCost> {
        self.plan.delta
    }

    /// The limit that bent the plan and the plan without it (the library's `Plan::bent`).
    pub fn bent(&self) -> Option<bloomwire::optimizer::Bent> {
        self.plan.bent
    }
}

/// The optimizer's caps besides `max_m` and `max_filter_bytes`, and the churn to report
/// deltas at (the library's `Optimizer::max_memory`, `max_bits_per_element`, `churn`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Caps {
    /// Largest decoded filter, bytes.
    pub max_memory: Option<u64>,
    /// Largest m/n.
    pub max_bits_per_element: Option<f64>,
    /// Fraction of keys replaced between generations.
    pub churn: Option<f64>,
}

/// The optimizer of a hash family with the largest m to plan for: `max_m` is the receiver's
/// memory for the filter, so above the default limits it raises them (m, and the payload
/// of the raw filter) for the plan; the plan's receivers decode with that `max_m`.
/// `max_filter_bytes` bounds that memory in bytes (`ceil(m / 8)`) as a receiver's limit
/// does; None derives it from m's limit, as the library does.
fn optimizer(
    family: Family,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    caps: Caps,
) -> Optimizer {
    let mut o = Optimizer::new().family(family);
    if let Some(bytes) = caps.max_memory {
        o = o.max_memory(bytes);
    }
    if let Some(r) = caps.max_bits_per_element {
        o = o.max_bits_per_element(r);
    }
    if let Some(c) = caps.churn {
        o = o.churn(c);
    }
    let mut limits = Limits::default();
    if let Some(max_m) = max_m {
        o = o.max_m(max_m);
        limits = limits
            .max_m(max_m.max(limits.max_m))
            .max_payload(max_m.div_ceil(8).max(limits.max_payload));
    }
    if let Some(bytes) = max_filter_bytes {
        limits = limits.max_filter_bytes(bytes);
    }
    o.limits(limits)
}

fn plan_info(plan: bloomwire::Plan) -> PlanInfo {
    let lib = plan.clone();
    PlanInfo {
        n: plan.n,
        m: plan.m(),
        k: plan.k().to_f64(),
        k_raw: plan.k().raw(),
        layout: layout_name(&plan.params),
        coding: plan.coding.to_string(),
        fpr: plan.false_positive_rate,
        expected_bytes: plan.expected_bytes,
        worst_case_bytes: plan.worst_case_bytes,
        epsilon: plan.epsilon,
        bits_per_element: plan.bits_per_element,
        receiver_bytes: plan.receiver_bytes,
        table: plan.to_string(),
        params: plan.params,
        plan: lib,
    }
}

/// A plan's figures apart from its parameters (what a pickled plan carries besides them).
#[derive(Debug, Clone)]
pub struct PlanFigures {
    /// Keys planned for.
    pub n: u64,
    /// The planned coding's name.
    pub coding: String,
    /// Expected false positive rate.
    pub fpr: f64,
    /// Expected frame bytes.
    pub expected_bytes: f64,
    /// Frame bytes exceeded with probability at most `epsilon`.
    pub worst_case_bytes: u64,
    /// That probability.
    pub epsilon: f64,
    /// Expected bits on the wire per key.
    pub bits_per_element: f64,
    /// The library's table of the plan.
    pub table: String,
}

/// A plan of the library, to carry the parameters and figures of a plan restored from a
/// pickle: the library's `Plan` is `non_exhaustive` (it cannot be built from its fields
/// outside the library), so a plan the optimizer made once has its public fields replaced.
fn template_plan() -> bloomwire::Plan {
    static TEMPLATE: OnceLock<bloomwire::Plan> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            Optimizer::new()
                .plan_for_fpr(1000, 0.01)
                .expect("a plan of 1000 keys at 1%")
        })
        .clone()
}

/// The parameters of a pickled plan, checked as a decoder checks a frame's: m, k (rounded
/// up) and the filter's memory within `limits`, `LimitExceeded` naming the same fields
/// ("m", "k", "filter bytes"). Nothing is allocated.
pub fn params_within(parts: ParamParts, limits: &DecodeLimits) -> Res<Params> {
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

/// The plan of these parameters and figures.
pub fn restore_plan(params: Params, figures: PlanFigures) -> PlanInfo {
    let mut plan = template_plan();
    plan.n = figures.n;
    plan.params = params.clone();
    if let Ok(coding) = figures.coding.parse::<BitCoding>() {
        plan.coding = coding;
    }
    plan.changed = None;
    plan.expected_bytes = figures.expected_bytes;
    plan.worst_case_bytes = figures.worst_case_bytes;
    plan.epsilon = figures.epsilon;
    plan.false_positive_rate = figures.fpr;
    plan.bits_per_element = figures.bits_per_element;
    plan.receiver_bytes = params.m().div_ceil(8);
    plan.uncompressed = None;
    plan.delta = None;
    plan.bent = None;
    PlanInfo {
        plan,
        n: figures.n,
        m: params.m(),
        k: params.k().to_f64(),
        k_raw: params.k().raw(),
        layout: layout_name(&params),
        coding: figures.coding,
        fpr: figures.fpr,
        expected_bytes: figures.expected_bytes,
        worst_case_bytes: figures.worst_case_bytes,
        epsilon: figures.epsilon,
        bits_per_element: figures.bits_per_element,
        receiver_bytes: params.m().div_ceil(8),
        table: figures.table,
        params,
    }
}

/// Whether two plans have the same parameters and figures.
pub fn same_plan(a: &PlanInfo, b: &PlanInfo) -> bool {
    a.params == b.params
        && (a.n, &a.coding, a.worst_case_bytes, &a.table)
            == (b.n, &b.coding, b.worst_case_bytes, &b.table)
        && [a.fpr, a.expected_bytes, a.epsilon, a.bits_per_element]
            .iter()
            .zip([b.fpr, b.expected_bytes, b.epsilon, b.bits_per_element])
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The lowest false positive rate for n keys in a frame of at most `budget` bytes.
pub fn plan(
    n: u64,
    budget: u64,
    family: Family,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    caps: Caps,
) -> Res<PlanInfo> {
    let o = optimizer(family, max_m, max_filter_bytes, caps);
    Ok(plan_info(o.plan(n, budget)?))
}

/// The fewest bytes for n keys at a false positive rate of at most `fpr`.
pub fn plan_for_fpr(
    n: u64,
    fpr: f64,
    family: Family,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    caps: Caps,
) -> Res<PlanInfo> {
    let o = optimizer(family, max_m, max_filter_bytes, caps);
    Ok(plan_info(o.plan_for_fpr(n, fpr)?))
}

/// The frontier of wire bytes against memory at a rate of at most `fpr`: each plan with its
/// memory cap as a multiple of the memory-optimal m (None: no cap).
pub fn frontier(
    n: u64,
    fpr: f64,
    family: Family,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    caps: Caps,
) -> Res<Vec<(Option<u32>, PlanInfo)>> {
    let o = optimizer(family, max_m, max_filter_bytes, caps);
    Ok(o.frontier(n, fpr)?
        .into_iter()
        .map(|p| (p.memory_factor, plan_info(p.plan)))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Filters

/// Standard-layout parameters with an integer k.
pub fn standard_params(m: u64, k: u32, family: Family) -> Res<Params> {
    Ok(Params::standard(m, k, family)?)
}

/// An empty filter; `AllocationFailed` when its bits cannot be allocated.
pub fn new_filter(params: Params) -> Res<Filter> {
    Ok(BloomFilter::try_new(params)?)
}

/// A filter's parameters.
pub fn filter_params(f: &Filter) -> &Params {
    f.params()
}

/// Insert a key (`OpaqueHashFamily` for another library's bits).
pub fn insert(f: &mut Filter, key: &[u8]) -> Result<(), Failure> {
    Ok(f.try_insert(key)?)
}

/// Whether a key may be in the filter (`OpaqueHashFamily` for another library's bits).
pub fn contains(f: &Filter, key: &[u8]) -> Result<bool, Failure> {
    Ok(f.try_contains(key)?)
}

/// Keys inserted.
pub fn filter_n(f: &Filter) -> u64 {
    f.n()
}

/// The fraction of zero bits.
pub fn fraction_of_zeros(f: &Filter) -> f64 {
    f.fraction_of_zeros()
}

/// Bits set.
pub fn count_ones(f: &Filter) -> u64 {
    f.bits().count_ones()
}

/// The packed bit array: bit i is `bytes[i / 8] >> (i % 8) & 1`.
pub fn packed_bits(f: &Filter) -> Vec<u8> {
    f.bits().to_bytes()
}

/// Set the bits of `other` in `f` (same parameters).
pub fn union_with(f: &mut Filter, other: &Filter) -> Res<()> {
    Ok(f.union_with(other)?)
}

/// m of a filter's parameters.
pub fn params_m(p: &Params) -> u64 {
    p.m()
}

/// k of a filter's parameters, as a number and on the 1/65536 grid.
pub fn params_k(p: &Params) -> (f64, u32) {
    (p.k().to_f64(), p.k().raw())
}

/// An empty counting filter with `width`-bit counters; `AllocationFailed` when its
/// counters cannot be allocated.
pub fn new_counting(params: Params, width: u8) -> Res<Counting> {
    Ok(CountingBloomFilter::new(params, width)?)
}

/// A counting filter's parameters.
pub fn counting_params(f: &Counting) -> &Params {
    f.params()
}

/// Insert a key into a counting filter.
pub fn counting_insert(f: &mut Counting, key: &[u8]) {
    f.insert(key)
}

/// Remove a key from a counting filter; refused when the key is not in it.
pub fn counting_remove(f: &mut Counting, key: &[u8]) -> Res<()> {
    Ok(f.remove(key)?)
}

/// Whether a key may be in a counting filter.
pub fn counting_contains(f: &Counting, key: &[u8]) -> bool {
    f.contains(key)
}

/// Keys in a counting filter (inserted less removed).
pub fn counting_n(f: &Counting) -> u64 {
    f.n()
}

/// Bits per counter.
pub fn counting_width(f: &Counting) -> u8 {
    f.width()
}

/// One byte per counter.
pub fn counters(f: &Counting) -> &[u8] {
    f.counters()
}

/// The counters packed `width` bits each, as in a raw counting frame.
pub fn packed_counters(f: &Counting) -> Vec<u8> {
    f.packed()
}

/// How many counters hold each value.
pub fn histogram(f: &Counting) -> Vec<u64> {
    f.histogram()
}

/// Counters stuck at the largest value.
pub fn saturated(f: &Counting) -> usize {
    f.saturated()
}

/// The Bloom filter a counting filter summarizes.
pub fn to_bloom(f: &Counting) -> Filter {
    f.to_bloom_filter()
}

/// Standard-layout parameters of another library's bits (the opaque hash family, base hash
/// 0): bloomwire carries them and refuses to query them.
pub fn opaque_params(m: u64, k: u32) -> Res<Params> {
    Ok(Params::standard(m, k, HashFamily::opaque())?)
}

/// A filter of these packed bits (`ceil(m / 8)` bytes, bit i at `bytes[i / 8] >> (i % 8)`,
/// the bits past m zero) and `n` keys.
pub fn filter_from_bits(params: Params, bytes: &[u8], n: u64) -> Res<Filter> {
    let bits = BitArray::from_bytes(bytes, params.m())?;
    Ok(BloomFilter::from_parts(params, bits, n)?)
}

/// Whether the filter's bits were placed by another library (opaque hash family).
pub fn is_opaque(f: &Filter) -> bool {
    f.is_opaque()
}

/// The digest of a filter's bits (spec 5.1, CRC-32C of the packed array).
pub fn digest(f: &Filter) -> u32 {
    f.bits().digest()
}

/// The digest of a counting filter (spec 5.1).
pub fn counting_digest(f: &Counting) -> u32 {
    f.digest()
}

/// Add `other`'s counters to `f`'s, each sum saturating at `2^width - 1`; `n` becomes the
/// sum. Both must have the same parameters and counter width (else `Incompatible`).
///
/// The library has no such call yet (see the package's notes to the library); this one is
/// written on its public API: the counters read with `counters()`, the sum rebuilt with
/// `from_counters`, which checks every counter against the width again.
pub fn counting_add(f: &mut Counting, other: &Counting) -> Res<()> {
    if f.params() != other.params() {
        return Err(Failure::new(
            "Incompatible",
            format!(
                "filters are not compatible: {} in this filter and {} in the other",
                describe(f.params()),
                describe(other.params())
            ),
        )
        .with_attr("reason", "parameters differ"));
    }
    if f.width() != other.width() {
        return Err(Failure::new(
            "Incompatible",
            format!(
                "filters are not compatible: counter width is {} in this filter and {} in the other",
                f.width(),
                other.width()
            ),
        )
        .with_attr("reason", "counter width differs"));
    }
    let max = f.max_count();
    let mut sum = Vec::new();
    sum.try_reserve_exact(f.counters().len())
        .map_err(|_| Error::AllocationFailed {
            bytes: f.counters().len() as u64,
        })?;
    sum.extend(
        f.counters()
            .iter()
            .zip(other.counters())
            .map(|(&a, &b)| a.saturating_add(b).min(max)),
    );
    let n = f.n().saturating_add(other.n());
    *f = CountingBloomFilter::from_counters(f.params().clone(), f.width(), sum, n)?;
    Ok(())
}

/// Insert every key of `keys` (an opaque filter refuses before the first).
pub fn insert_keys<'a>(f: &mut Filter, keys: impl Iterator<Item = &'a [u8]>) -> Res<()> {
    if f.is_opaque() {
        return Err(Error::OpaqueHashFamily.into());
    }
    keys.for_each(|key| f.insert(key));
    Ok(())
}

/// Whether each key of `keys` may be in `f`, written through `out` in order (an opaque
/// filter refuses before the first).
pub fn contains_keys<'a>(
    f: &Filter,
    keys: impl Iterator<Item = Option<&'a [u8]>>,
    mut out: impl FnMut(bool),
) -> Res<()> {
    if f.is_opaque() {
        return Err(Error::OpaqueHashFamily.into());
    }
    keys.for_each(|key| out(key.is_some_and(|key| f.contains(key))));
    Ok(())
}

/// Insert every key of `keys` into a counting filter.
pub fn counting_insert_keys<'a>(f: &mut Counting, keys: impl Iterator<Item = &'a [u8]>) {
    keys.for_each(|key| f.insert(key));
}

/// Whether each key of `keys` may be in the counting filter `f`, through `out` in order.
pub fn counting_contains_keys<'a>(
    f: &Counting,
    keys: impl Iterator<Item = Option<&'a [u8]>>,
    mut out: impl FnMut(bool),
) {
    keys.for_each(|key| out(key.is_some_and(|key| f.contains(key))));
}

// ---------------------------------------------------------------------------------------------
// Encoding

/// An encoded frame, written into a buffer of the caller's.
#[derive(Debug, Clone)]
pub struct Encoded(Frame);

impl Encoded {
    /// Bytes of the whole frame.
    pub fn len(&self) -> usize {
        self.0.encoded_len()
    }

    /// Write the frame into `out`, which is exactly [`Encoded::len`] bytes long.
    pub fn write_into(&self, mut out: &mut [u8]) {
        self.0.write_to(&mut out)
    }
}

/// The names of the codings, Bloom filters' first (raw, which both kinds have, once).
pub fn coding_names() -> Vec<String> {
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
        attrs: vec![("name", text("coding")), ("reason", Attr::Str(reason))],
    }
}

fn bit_coding(name: &str) -> Res<BitCoding> {
    BitCoding::ALL
        .into_iter()
        .find(|c| c.to_string() == name)
        .ok_or_else(|| {
            let names = BitCoding::ALL.iter().map(|c| c.to_string()).collect();
            unknown_coding(name, "a Bloom filter", names)
        })
}

fn counter_coding(name: &str) -> Res<CounterCoding> {
    CounterCoding::ALL
        .into_iter()
        .find(|c| c.to_string() == name)
        .ok_or_else(|| {
            let names = CounterCoding::ALL.iter().map(|c| c.to_string()).collect();
            unknown_coding(name, "a counting filter", names)
        })
}

/// The encoder settings of a frame: a named coding or the library's choice, a budget, the
/// application metadata and the key that tags the frames.
#[derive(Debug, Clone, Default)]
pub struct EncoderSettings {
    coding: Option<String>,
    budget: Option<usize>,
    metadata: Option<Vec<u8>>,
    key: Option<Key>,
    chunk_shift: Option<u8>,
    profile: Option<bloomwire::Profile>,
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

    fn bloom(&self) -> Res<Encoder<BloomFilter>> {
        let mut e = Encoder::new();
        if let Some(name) = &self.coding {
            e = e.coding(bit_coding(name)?);
        }
        Ok(self.apply(e))
    }

    fn counting(&self) -> Res<Encoder<CountingBloomFilter>> {
        let mut e = Encoder::new();
        if let Some(name) = &self.coding {
            e = e.coding(counter_coding(name)?);
        }
        Ok(self.apply(e))
    }

    /// The same settings with this application metadata on every frame (empty: none).
    pub fn metadata(mut self, metadata: Option<Vec<u8>>) -> Self {
        self.metadata = metadata.filter(|m| !m.is_empty());
        self
    }

    /// The same settings tagging every frame with `key`.
    pub fn key(mut self, key: Option<Key>) -> Self {
        self.key = key;
        self
    }

    /// The same settings writing only the codings of the named profile ("core" or "full";
    /// None: the library's default, full).
    pub fn profile(mut self, profile: Option<&str>) -> Res<Self> {
        self.profile = profile.map(str::parse).transpose()?;
        Ok(self)
    }

    /// The same settings with payloads in chunks of `2^shift` bits (None: the library's
    /// choice).
    pub fn chunk_shift(mut self, shift: Option<u8>) -> Self {
        self.chunk_shift = shift;
        self
    }

    /// The named coding, if any.
    pub fn coding_name(&self) -> Option<&str> {
        self.coding.as_deref()
    }

    /// The byte budget, if any.
    pub fn budget_bytes(&self) -> Option<usize> {
        self.budget
    }

    /// The application metadata, if any.
    pub fn metadata_bytes(&self) -> Option<&[u8]> {
        self.metadata.as_deref()
    }

    /// The key's 32 bytes, if any.
    pub fn key_bytes(&self) -> Option<[u8; 32]> {
        self.key.as_ref().map(|k| *k.as_bytes())
    }
}

/// Encoder settings; a name that is no coding at all is refused here, one of the other filter
/// kind when encoding.
pub fn encoder(coding: Option<&str>, budget: Option<usize>) -> Res<EncoderSettings> {
    if let Some(name) = coding {
        if !coding_names().iter().any(|c| c == name) {
            return Err(unknown_coding(name, "any filter", coding_names()));
        }
    }
    Ok(EncoderSettings {
        coding: coding.map(str::to_string),
        budget,
        ..EncoderSettings::default()
    })
}

/// The full frame of a filter carrying `generation`, with the restart flag if asked.
pub fn encode(e: &EncoderSettings, f: &Filter, generation: u64, restart: bool) -> Res<Encoded> {
    let frame = e.bloom()?.encode_generation(f, generation)?;
    Ok(Encoded(frame.with_restart(restart)?))
}

/// The full frame of a counting filter carrying `generation`, with the restart flag if asked.
pub fn encode_counting(
    e: &EncoderSettings,
    f: &Counting,
    generation: u64,
    restart: bool,
) -> Res<Encoded> {
    let frame = e.counting()?.encode_generation(f, generation)?;
    Ok(Encoded(frame.with_restart(restart)?))
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// Decode the one full Bloom filter frame `input` holds; the filter and its frame's header.
pub fn decode(input: &[u8], checks: &DecodeChecks) -> Res<(Filter, FrameInfo)> {
    let d = checks.decode::<bloomwire::Decoded<BloomFilter>>(input)?;
    Ok((d.filter, FrameInfo(d.header)))
}

/// Decode the one full counting filter frame `input` holds; the filter and its header.
pub fn decode_counting(input: &[u8], checks: &DecodeChecks) -> Res<(Counting, FrameInfo)> {
    let d = checks.decode::<bloomwire::Decoded<CountingBloomFilter>>(input)?;
    Ok((d.filter, FrameInfo(d.header)))
}

/// A decoded delta frame, of either filter kind.
#[derive(Debug, Clone)]
pub enum Delta {
    /// The XOR of two generations' bits.
    Bits(bloomwire::Delta),
    /// The counter-wise XOR of two generations' counters.
    Counters(bloomwire::Delta<Vec<u8>>),
}

impl Delta {
    fn header(&self) -> &FrameHeader {
        match self {
            Delta::Bits(d) => &d.header,
            Delta::Counters(d) => &d.header,
        }
    }

    /// The generation the delta produces.
    pub fn generation(&self) -> u64 {
        self.header().generation
    }

    /// The generation it applies to.
    pub fn base_generation(&self) -> u64 {
        match self {
            Delta::Bits(d) => d.base_generation(),
            Delta::Counters(d) => d.base_generation(),
        }
    }

    /// Bits (or counters) of the filter it applies to.
    pub fn m(&self) -> u64 {
        self.header().params.m()
    }

    /// Whether it is a counting filter's delta.
    pub fn is_counting(&self) -> bool {
        matches!(self, Delta::Counters(_))
    }

    /// The frame's header.
    pub fn info(&self) -> FrameInfo {
        FrameInfo(self.header().clone())
    }

    /// The XOR, packed like the filter's bits or counters.
    pub fn packed_xor(&self) -> Vec<u8> {
        match self {
            Delta::Bits(d) => d.xor.to_bytes(),
            Delta::Counters(d) => bloomwire::filter::counting::pack_counters(
                &d.xor,
                d.header.counter_width.unwrap_or(8),
            ),
        }
    }

    /// Apply the delta to a filter held as `base_generation`.
    pub fn apply(&self, base: FilterRef<'_>, base_generation: u64) -> Res<AnyFilter> {
        match (self, base) {
            (Delta::Bits(d), FilterRef::Bloom(f)) => {
                Ok(AnyFilter::Bloom(d.apply(f, base_generation)?))
            }
            (Delta::Counters(d), FilterRef::Counting(f)) => {
                Ok(AnyFilter::Counting(d.apply(f, base_generation)?))
            }
            (Delta::Bits(_), FilterRef::Counting(_)) => Err(Failure::new(
                "UnexpectedFilterType",
                "a Bloom filter's delta applies to a BloomFilter, not a CountingFilter",
            )),
            (Delta::Counters(_), FilterRef::Bloom(_)) => Err(Failure::new(
                "UnexpectedFilterType",
                "a counting filter's delta applies to a CountingFilter, not a BloomFilter",
            )),
        }
    }
}

/// Any decoded frame.
#[derive(Debug, Clone)]
pub enum Decoded {
    /// A full frame of either filter kind, and its header.
    Full(AnyFilter, FrameInfo),
    /// A delta of either filter kind.
    Delta(Delta),
}

/// Decode the one frame `input` holds, whatever it carries.
pub fn decode_any(input: &[u8], checks: &DecodeChecks) -> Res<Decoded> {
    Ok(match checks.decode::<Message>(input)? {
        Message::Full(d) => Decoded::Full(AnyFilter::Bloom(d.filter), FrameInfo(d.header)),
        Message::Counting(d) => Decoded::Full(AnyFilter::Counting(d.filter), FrameInfo(d.header)),
        Message::Delta(d) => Decoded::Delta(Delta::Bits(d)),
        Message::CountingDelta(d) => Decoded::Delta(Delta::Counters(d)),
        other => {
            return Err(Failure::new(
                "InvalidParameter",
                format!("a frame of no kind this package knows: {other:?}"),
            ))
        }
    })
}

/// A frame's header, as the library parsed it (and, with a key, verified its tag).
#[derive(Debug, Clone)]
pub struct FrameInfo(FrameHeader);

impl FrameInfo {
    /// Whether it is a delta.
    pub fn delta(&self) -> bool {
        matches!(self.0.kind, FrameKind::Delta { .. })
    }

    /// Whether it carries a counting filter.
    pub fn counting(&self) -> bool {
        self.0.is_counting()
    }

    /// The generation it carries (or produces).
    pub fn generation(&self) -> u64 {
        self.0.generation
    }

    /// A delta's base generation.
    pub fn base_generation(&self) -> Option<u64> {
        match self.0.kind {
            FrameKind::Delta {
                base_generation, ..
            } => Some(base_generation),
            FrameKind::Full => None,
        }
    }

    /// Keys the sender inserted.
    pub fn n(&self) -> u64 {
        self.0.n
    }

    /// Bits (or counters) of the filter.
    pub fn m(&self) -> u64 {
        self.0.params.m()
    }

    /// Hash functions per key.
    pub fn k(&self) -> f64 {
        self.0.params.k().to_f64()
    }

    /// The layout's name.
    pub fn layout(&self) -> &'static str {
        layout_name(&self.0.params)
    }

    /// The coding's name.
    pub fn coding(&self) -> String {
        self.0.coding.to_string()
    }

    /// A counting filter's counter width.
    pub fn counter_width(&self) -> Option<u8> {
        self.0.counter_width
    }

    /// The chunk shift of a chunked payload.
    pub fn chunk_shift(&self) -> Option<u8> {
        self.0.chunk_shift
    }

    /// Header bytes.
    pub fn header_len(&self) -> usize {
        self.0.header_len
    }

    /// Payload bytes.
    pub fn payload_len(&self) -> usize {
        self.0.payload_len
    }

    /// Bytes of the whole frame.
    pub fn frame_len(&self) -> usize {
        self.0.frame_len()
    }

    /// The base hash: "xxh64", "siphash24" or "opaque" (another library's bits).
    pub fn hash(&self) -> &'static str {
        match self.0.params.family().base {
            BaseHash::Xxh64 { .. } => "xxh64",
            BaseHash::Opaque => "opaque",
            _ => "siphash24",
        }
    }

    /// The application metadata, if the frame carries any.
    pub fn metadata(&self) -> Option<&[u8]> {
        self.0.metadata.as_deref()
    }

    /// "absent", "unverified" (a tag not checked: no key was given) or "verified".
    pub fn tag(&self) -> &'static str {
        match self.0.tag {
            Tag::Absent => "absent",
            Tag::Unverified => "unverified",
            Tag::Verified => "verified",
        }
    }

    /// The restart flag: the sender's numbering starts again with this full frame.
    pub fn restart(&self) -> bool {
        self.0.restart
    }
}

/// The header of the frame at the start of `input`. Without a key it is checked against the
/// limits and nothing else (the payload, the checksum and a tag are not read); with one, the
/// whole frame's length, checksum and tag are checked too (not its payload).
pub fn frame_info(input: &[u8], checks: &DecodeChecks) -> Res<FrameInfo> {
    if checks.verifier.is_some() {
        return Ok(FrameInfo(checks.view(input)?.header().clone()));
    }
    Ok(FrameInfo(FrameHeader::parse(input, &checks.limits)?))
}

// ---------------------------------------------------------------------------------------------
// Generations

/// What a receiver did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateInfo {
    /// A full frame (else a delta).
    pub full: bool,
    /// The new generation.
    pub generation: u64,
    /// Generations a full frame skipped.
    pub skipped: u64,
}

fn update_info(u: Update) -> UpdateInfo {
    UpdateInfo {
        full: u.is_full(),
        generation: u.generation(),
        skipped: u.skipped(),
    }
}

/// A sender of one kind. Not the library's `Sender<AnyFilter>`: its `next_frame` takes an
/// `&AnyFilter`, and the Python objects hold a `BloomFilter` or a `CountingBloomFilter`, so
/// every generation would copy the whole filter into one (m/8 bytes, or m) where these
/// borrow it.
#[derive(Debug, Clone)]
enum SenderKind {
    Bloom(bloomwire::Sender<BloomFilter>),
    Counting(bloomwire::Sender<CountingBloomFilter>),
}

/// Sends the generations of one filter of either kind; the kind is that of the first filter.
#[derive(Debug, Clone)]
pub struct Sender {
    encoder: EncoderSettings,
    full_every: u64,
    full_requested: bool,
    inner: Option<SenderKind>,
}

impl Sender {
    /// A sender with a full frame at least every `full_every` generations.
    pub fn new(settings: EncoderSettings, full_every: u64) -> Self {
        Sender {
            encoder: settings,
            full_every,
            full_requested: false,
            inner: None,
        }
    }

    /// The generation of the last frame sent (0 before the first).
    pub fn generation(&self) -> u64 {
        match &self.inner {
            None => 0,
            Some(SenderKind::Bloom(s)) => s.generation(),
            Some(SenderKind::Counting(s)) => s.generation(),
        }
    }

    /// Make the next frame a full one.
    pub fn request_full(&mut self) {
        match &mut self.inner {
            None => self.full_requested = true,
            Some(SenderKind::Bloom(s)) => s.request_full(),
            Some(SenderKind::Counting(s)) => s.request_full(),
        }
    }

    /// A full frame of the generation sent last, with the restart flag, for one receiver
    /// that joins late; None before the first frame. The sender does not change.
    pub fn full_frame(&self) -> Option<Res<Encoded>> {
        let frame = match self.inner.as_ref()? {
            SenderKind::Bloom(s) => s.full_frame(),
            SenderKind::Counting(s) => s.full_frame(),
        };
        Some(frame.map(Encoded).map_err(Failure::from))
    }

    /// The frame of the next generation of the filter.
    pub fn next_frame(&mut self, filter: FilterRef<'_>) -> Res<Encoded> {
        let every = self.full_every;
        let inner = match &mut self.inner {
            Some(inner) => inner,
            None => self.inner.insert(match filter {
                FilterRef::Bloom(_) => {
                    SenderKind::Bloom(bloomwire::Sender::new(self.encoder.bloom()?, every))
                }
                FilterRef::Counting(_) => {
                    SenderKind::Counting(bloomwire::Sender::new(self.encoder.counting()?, every))
                }
            }),
        };
        if std::mem::take(&mut self.full_requested) {
            match inner {
                SenderKind::Bloom(s) => s.request_full(),
                SenderKind::Counting(s) => s.request_full(),
            }
        }
        let frame = match (inner, filter) {
            (SenderKind::Bloom(s), FilterRef::Bloom(f)) => s.next_frame(f)?,
            (SenderKind::Counting(s), FilterRef::Counting(f)) => s.next_frame(f)?,
            (SenderKind::Bloom(_), FilterRef::Counting(_)) => {
                return Err(Failure::new(
                    "UnexpectedFilterType",
                    "this sender sends a BloomFilter's generations, not a CountingFilter's",
                ))
            }
            (SenderKind::Counting(_), FilterRef::Bloom(_)) => {
                return Err(Failure::new(
                    "UnexpectedFilterType",
                    "this sender sends a CountingFilter's generations, not a BloomFilter's",
                ))
            }
        };
        Ok(Encoded(frame))
    }
}

impl Sender {
    /// The frame of the next generation of a Bloom filter given as the positions of the
    /// bits that flipped since the generation sent last (increasing, each once, below m)
    /// and its count of keys: the frame `next_frame` makes for the filter with those bits
    /// flipped, in time proportional to the flips (the library's
    /// `Sender::next_frame_with_flips`). Refused before the first frame and by a sender of
    /// counting filters.
    pub fn next_frame_with_flips(&mut self, flips: &[u64], n: u64) -> Res<Encoded> {
        match &mut self.inner {
            None => Err(Error::InvalidParameter {
                name: "generation",
                reason: "nothing has been sent yet: send the first generation whole with \
                         next_frame"
                    .into(),
            }
            .into()),
            Some(SenderKind::Bloom(s)) => {
                if std::mem::take(&mut self.full_requested) {
                    s.request_full();
                }
                Ok(Encoded(s.next_frame_with_flips(flips, n)?))
            }
            Some(SenderKind::Counting(_)) => Err(Failure::new(
                "UnexpectedFilterType",
                "flips are a Bloom filter's bits: this sender sends a CountingFilter's generations",
            )),
        }
    }

    /// The generation sent last (the next delta's base), None before the first frame.
    pub fn last_sent(&self) -> Option<FilterRef<'_>> {
        match self.inner.as_ref()? {
            SenderKind::Bloom(s) => s.last_sent().map(FilterRef::Bloom),
            SenderKind::Counting(s) => s.last_sent().map(FilterRef::Counting),
        }
    }
}

/// Sends the Bloom filter of a counting filter it owns (Summary Cache, the library's
/// `SummarySender`): each frame made from the counters that left or reached zero.
#[derive(Debug, Clone)]
pub struct SummarySender {
    inner: bloomwire::SummarySender,
}

impl SummarySender {
    /// A sender of `counting`'s Bloom filter, its frames built with `settings` (a Bloom
    /// filter's coding, if named), a full frame at least every `full_every` generations.
    pub fn new(counting: Counting, settings: &EncoderSettings, full_every: u64) -> Res<Self> {
        Ok(SummarySender {
            inner: bloomwire::SummarySender::new(counting, settings.bloom()?, full_every),
        })
    }

    /// Insert every key.
    pub fn insert<'a>(&mut self, keys: impl Iterator<Item = &'a [u8]>) {
        keys.for_each(|key| self.inner.insert(key));
    }

    /// Remove a key (refused, nothing changed, when it is not in the filter).
    pub fn remove(&mut self, key: &[u8]) -> Res<()> {
        Ok(self.inner.remove(key)?)
    }

    /// Whether a key may be in the set.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.inner.contains(key)
    }

    /// The frame of the next generation of the counting filter's Bloom filter.
    pub fn next_frame(&mut self) -> Res<Encoded> {
        Ok(Encoded(self.inner.next_frame()?))
    }

    /// A full frame of the generation sent last, with the restart flag; None before the
    /// first frame.
    pub fn full_frame(&self) -> Option<Res<Encoded>> {
        (self.inner.generation() > 0)
            .then(|| self.inner.full_frame().map(Encoded).map_err(Failure::from))
    }

    /// Make the next frame a full one.
    pub fn request_full(&mut self) {
        self.inner.request_full()
    }

    /// The generation of the last frame returned (0 before the first).
    pub fn generation(&self) -> u64 {
        self.inner.generation()
    }

    /// The counting filter.
    pub fn filter(&self) -> &Counting {
        self.inner.filter()
    }
}

/// Applies a sender's frames in order: the library's receiver of either kind of filter, held
/// to the kind of the first frame it accepts.
#[derive(Debug, Clone)]
pub struct Receiver {
    inner: bloomwire::Receiver<AnyFilter>,
    key: Option<Key>,
}

/// A frame, or a message decoded elsewhere, for a receiver.
enum Input<'a> {
    Frame(&'a [u8]),
    Message(Box<Message>),
}

impl Receiver {
    /// A receiver with no filter yet, decoding within `limits` and, with a key, accepting
    /// only frames tagged with it.
    pub fn new(limits: DecodeLimits, key: Option<Key>) -> Self {
        let inner = bloomwire::Receiver::<AnyFilter>::with_limits(limits);
        let inner = match &key {
            Some(key) => inner.with_key(key.clone()),
            None => inner,
        };
        Receiver { inner, key }
    }

    /// Whether a frame of this kind (counting or not) is refused: the receiver holds a
    /// filter of the other kind.
    fn other_kind(&self, counting: bool) -> bool {
        self.inner
            .filter()
            .is_some_and(|f| f.is_counting() != counting)
    }

    /// What a receiver of the kind held says to an input of the other kind: the errors of
    /// its checks of the frame (checksum, tag: what the library checks before the kind), and
    /// then `UnexpectedFilterType`. It changes nothing.
    fn refuse(&self, input: Input<'_>) -> Failure {
        fn refused<F: bloomwire::Filter>(r: &Receiver, input: Input<'_>) -> Option<Error> {
            let typed = bloomwire::Receiver::<F>::with_limits(*r.inner.limits());
            let mut typed = match &r.key {
                Some(key) => typed.with_key(key.clone()),
                None => typed,
            };
            match input {
                Input::Frame(bytes) => typed.receive(bytes).err(),
                Input::Message(message) => typed.apply(*message).err(),
            }
        }
        let error = match self.inner.filter() {
            Some(AnyFilter::Counting(_)) => refused::<CountingBloomFilter>(self, input),
            _ => refused::<BloomFilter>(self, input),
        };
        error.map_or_else(
            || Failure::new("UnexpectedFilterType", "a frame of the other filter kind"),
            Failure::from,
        )
    }

    /// Decode and apply one frame; on any error nothing changes. Returns what was done and
    /// the frame's header.
    pub fn receive(&mut self, input: &[u8]) -> Res<(UpdateInfo, FrameInfo)> {
        // The header, parsed as the receiver parses it first: the kind, and the Update's.
        let mut header = FrameHeader::parse(input, self.inner.limits())?;
        if self.other_kind(header.is_counting()) {
            return Err(self.refuse(Input::Frame(input)));
        }
        let update = self.inner.receive(input)?;
        // The frame was accepted: with a key its tag was verified.
        if self.key.is_some() {
            header.tag = Tag::Verified;
        }
        Ok((update_info(update), FrameInfo(header)))
    }

    /// Apply a full frame's filter decoded elsewhere, with that frame's header, as
    /// [`Receiver::receive`] applies the frame; the filter is cloned. With a key only a
    /// message that key verified: an untagged frame's is `MissingTag`, one decoded without
    /// the key or with another `TagNotVerified`.
    pub fn apply_filter(
        &mut self,
        filter: FilterRef<'_>,
        header: &FrameInfo,
    ) -> Res<(UpdateInfo, FrameInfo)> {
        let header = header.0.clone();
        self.apply(match filter {
            FilterRef::Bloom(f) => Message::Full(bloomwire::Decoded {
                filter: f.clone(),
                header,
            }),
            FilterRef::Counting(f) => Message::Counting(bloomwire::Decoded {
                filter: f.clone(),
                header,
            }),
        })
    }

    /// Apply a delta decoded elsewhere, as [`Receiver::apply_filter`].
    pub fn apply_delta(&mut self, delta: &Delta) -> Res<(UpdateInfo, FrameInfo)> {
        self.apply(match delta {
            Delta::Bits(d) => Message::Delta(d.clone()),
            Delta::Counters(d) => Message::CountingDelta(d.clone()),
        })
    }

    fn apply(&mut self, message: Message) -> Res<(UpdateInfo, FrameInfo)> {
        let header = message.header().clone();
        if self.other_kind(header.is_counting()) {
            return Err(self.refuse(Input::Message(Box::new(message))));
        }
        let update = self.inner.apply(message)?;
        Ok((update_info(update), FrameInfo(header)))
    }

    /// The current generation.
    pub fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }

    /// The current filter.
    pub fn filter(&self) -> Option<&AnyFilter> {
        self.inner.filter()
    }
}

// ---------------------------------------------------------------------------------------------
// Building by chunk (spec 4.10): positions, chunks, chunked frames

/// A filter's parameters as plain values, as a pickle carries them: m, the layout's id, its
/// k on the 1/65536 grid (the blocks' k_j for the block layout), the base hash's id, its
/// seed (xxHash64) or SipHash key halves k0 and k1, and the index scheme's id.
pub type ParamParts = (u64, u8, Vec<u32>, u8, u64, u64, u8);

/// The plain values of a filter's parameters.
pub fn params_parts(p: &Params) -> ParamParts {
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
pub fn params_from_parts(parts: ParamParts) -> Res<Params> {
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

/// The bit positions of keys under one filter's parameters, without its bits (the
/// library's `Indexer`).
#[derive(Debug, Clone)]
pub struct Indexer {
    inner: bloomwire::filter::Indexer,
    params: Params,
}

impl Indexer {
    /// The indexer of filters of `params`; `OpaqueHashFamily` for another library's
    /// parameters, whose positions only that library knows.
    pub fn new(params: Params) -> Res<Self> {
        if params.family().base.is_opaque() {
            return Err(Error::OpaqueHashFamily.into());
        }
        Ok(Indexer {
            inner: bloomwire::filter::Indexer::new(&params),
            params,
        })
    }

    /// Its parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Append every bit position of every key to `out`, key after key, each key's in the
    /// order its hash functions give them (the bits an insert of the key sets); returns the
    /// number of keys.
    pub fn positions<'a>(&self, keys: impl Iterator<Item = &'a [u8]>, out: &mut Vec<u64>) -> u64 {
        let mut count = 0;
        for key in keys {
            self.inner.for_each(key, |p| out.push(p));
            count += 1;
        }
        count
    }
}

/// Check a chunk shift for a filter of m bits: 6 to 47, and `2^shift < m` (spec 4.10).
pub fn check_chunk_shift(m: u64, shift: u8) -> Res<()> {
    if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift) || 1u64 << shift >= m {
        return Err(Error::InvalidParameter {
            name: "shift",
            reason: format!(
                "{shift}: chunks of 2^{MIN_CHUNK_SHIFT} to 2^{MAX_CHUNK_SHIFT} bits, fewer than m = {m}"
            ),
        }
        .into());
    }
    Ok(())
}

/// The number of chunks of `2^shift` bits of a filter of m bits (the shift checked).
pub fn chunks_of(m: u64, shift: u8) -> Res<u64> {
    check_chunk_shift(m, shift)?;
    Ok(chunk_count(m, shift))
}

/// The bits chunk `i` holds, checked to be a chunk of the filter.
pub fn chunk_range(m: u64, shift: u8, i: u64) -> Res<std::ops::Range<u64>> {
    let count = chunks_of(m, shift)?;
    if i >= count {
        return Err(Error::InvalidParameter {
            name: "chunk",
            reason: format!(
                "chunk {i} of a filter of {count} chunks (0 to {})",
                count - 1
            ),
        }
        .into());
    }
    Ok(i << shift..((i + 1) << shift).min(m))
}

/// The chunk that holds bit `position` of a filter of m bits (below m).
pub fn chunk_of(m: u64, shift: u8, position: u64) -> Res<u64> {
    check_chunk_shift(m, shift)?;
    if position >= m {
        return Err(Error::InvalidParameter {
            name: "position",
            reason: format!("bit {position} of a filter of {m} bits"),
        }
        .into());
    }
    Ok(position >> shift)
}

/// Positions grouped by chunk: the chunks that have any, each chunk's run of positions
/// (`offsets[j]..offsets[j + 1]`), the positions relative to their chunk's first bit.
#[derive(Debug, Default)]
pub struct ByChunk {
    /// The chunks that hold positions, increasing.
    pub chunks: Vec<u64>,
    /// `chunks.len() + 1` offsets into the positions.
    pub offsets: Vec<u64>,
    /// The positions relative to their chunk (below `2^shift`), chunk after chunk, each
    /// chunk's in the order they were given.
    pub relative: Vec<u64>,
}

/// Group absolute positions (below m) by chunk of `2^shift` bits (the shift checked), a
/// counting sort when the chunks are few against the positions, else a sort by chunk.
pub fn group_by_chunk(positions: &[u64], m: u64, shift: u8) -> Res<ByChunk> {
    let count = chunks_of(m, shift)?;
    let mask = (1u64 << shift) - 1;
    if let Some(&p) = positions.iter().find(|&&p| p >= m) {
        return Err(Error::InvalidParameter {
            name: "positions",
            reason: format!("position {p} of a filter of {m} bits"),
        }
        .into());
    }
    let mut out = ByChunk::default();
    if count <= (positions.len() as u64).max(1 << 16) {
        let mut counts = vec![0u64; count as usize + 1];
        for &p in positions {
            counts[(p >> shift) as usize + 1] += 1;
        }
        for c in 0..count as usize {
            if counts[c + 1] > 0 {
                out.chunks.push(c as u64);
            }
            counts[c + 1] += counts[c];
        }
        out.offsets.push(0);
        out.offsets
            .extend(out.chunks.iter().map(|&c| counts[c as usize + 1]));
        let mut next = counts;
        out.relative = vec![0; positions.len()];
        for &p in positions {
            let c = (p >> shift) as usize;
            out.relative[next[c] as usize] = p & mask;
            next[c] += 1;
        }
    } else {
        let mut sorted = positions.to_vec();
        sorted.sort_by_key(|&p| p >> shift);
        out.offsets.push(0);
        for (i, &p) in sorted.iter().enumerate() {
            if out.chunks.last() != Some(&(p >> shift)) {
                if i > 0 {
                    out.offsets.push(i as u64);
                }
                out.chunks.push(p >> shift);
            }
        }
        if !sorted.is_empty() {
            out.offsets.push(sorted.len() as u64);
        }
        out.relative = sorted.into_iter().map(|p| p & mask).collect();
    }
    Ok(out)
}

/// log2 of the bits of a region a chunk's positions are set by (2^23 bits, 1 MiB: a few
/// hundred pages, within the caches and the TLB).
const REGION_SHIFT: u32 = 23;

/// One chunk of a filter built by chunks: its bits, set from the positions of its keys'
/// bits where the chunk is built.
#[derive(Debug, Clone)]
pub struct Chunk {
    m: u64,
    shift: u8,
    index: u64,
    start: u64,
    bits: BitArray,
}

impl Chunk {
    /// Chunk `index` of a filter of m bits in chunks of `2^shift` bits, all zero;
    /// `AllocationFailed` when its bits cannot be allocated.
    pub fn new(m: u64, shift: u8, index: u64) -> Res<Self> {
        let range = chunk_range(m, shift, index)?;
        Ok(Chunk {
            m,
            shift,
            index,
            start: range.start,
            bits: BitArray::try_new(range.end - range.start)?,
        })
    }

    /// The chunk holding these packed bits (`ceil(len / 8)` bytes).
    pub fn from_packed(m: u64, shift: u8, index: u64, packed: &[u8]) -> Res<Self> {
        let range = chunk_range(m, shift, index)?;
        Ok(Chunk {
            m,
            shift,
            index,
            start: range.start,
            bits: BitArray::from_bytes(packed, range.end - range.start)?,
        })
    }

    /// m, the shift and the chunk's index.
    pub fn shape(&self) -> (u64, u8, u64) {
        (self.m, self.shift, self.index)
    }

    /// The chunk's bits within the filter.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.start..self.start + self.bits.len()
    }

    /// Set the bit of every position; `relative` positions count from the chunk's first
    /// bit, the others from the filter's. Every position is checked to be in the chunk
    /// before any bit is set: on an error the chunk is unchanged.
    pub fn set<I>(&mut self, positions: I, relative: bool) -> Res<()>
    where
        I: Iterator<Item = u64> + Clone,
    {
        let (start, len) = (self.start, self.bits.len());
        let offset = if relative { 0 } else { start };
        if let Some(p) = positions.clone().find(|&p| p.wrapping_sub(offset) >= len) {
            let within = if relative {
                format!("0..{len}, relative to the chunk")
            } else {
                format!("{start}..{}", start + len)
            };
            return Err(Error::InvalidParameter {
                name: "positions",
                reason: format!(
                    "position {p} is not in chunk {}'s bits {within}",
                    self.index
                ),
            }
            .into());
        }
        let relative = positions.map(|p| p - offset);
        if len < 1 << (REGION_SHIFT + 2) {
            relative.for_each(|p| self.bits.set(p));
            return Ok(());
        }
        // Bits set in random order across a large chunk miss the cache and the TLB at every
        // position (measured here: 170 ns a position in 2^30 bits, against 17 ns in order):
        // the positions are set region by region (2^23 bits, 1 MiB), after a counting sort
        // by region.
        let unsorted: Vec<u64> = relative.collect();
        let regions = (len >> REGION_SHIFT) as usize + 1;
        if unsorted.len() < 4096 || regions > unsorted.len() {
            unsorted.iter().for_each(|&p| self.bits.set(p));
            return Ok(());
        }
        let mut next = vec![0usize; regions + 1];
        for &p in &unsorted {
            next[(p >> REGION_SHIFT) as usize + 1] += 1;
        }
        for r in 0..regions {
            next[r + 1] += next[r];
        }
        let mut by_region = vec![0u64; unsorted.len()];
        for &p in &unsorted {
            let r = (p >> REGION_SHIFT) as usize;
            by_region[next[r]] = p;
            next[r] += 1;
        }
        drop(unsorted);
        by_region.into_iter().for_each(|p| self.bits.set(p));
        Ok(())
    }

    /// The chunk's one bits.
    pub fn ones(&self) -> u64 {
        self.bits.count_ones()
    }

    /// The packed bits.
    pub fn packed(&self) -> Vec<u8> {
        self.bits.to_bytes()
    }

    /// The chunk's payload in `frame` (a frame of the same m and shift).
    pub fn encode(&self, frame: &ChunkPlan) -> Res<Vec<u8>> {
        if (frame.params.m(), frame.shift) != (self.m, self.shift) {
            return Err(Error::InvalidParameter {
                name: "chunk",
                reason: format!(
                    "a chunk of a filter of {} bits in chunks of 2^{} for a frame of {} bits in chunks of 2^{}",
                    self.m,
                    self.shift,
                    frame.params.m(),
                    frame.shift
                ),
            }
            .into());
        }
        Ok(frame.inner.encode_chunk(self.index, &self.bits)?)
    }
}

/// The frame-wide choices of a chunked frame whose chunks are coded apart (the library's
/// `ChunkedFrame`), with what made it, for pickles.
#[derive(Debug, Clone)]
pub struct ChunkPlan {
    inner: ChunkedFrame,
    settings: EncoderSettings,
    params: Params,
    n: u64,
    ones: u64,
    shift: u8,
    generation: u64,
}

/// The chunked frame of a filter of `params` holding `n` keys and `ones` one bits, in
/// chunks of `2^shift` bits, as the encoder of `settings` writes it (its coding named and
/// chunkable), carrying `generation`.
pub fn chunked_frame(
    settings: EncoderSettings,
    params: Params,
    n: u64,
    ones: u64,
    shift: u8,
    generation: u64,
) -> Res<ChunkPlan> {
    let inner = settings
        .bloom()?
        .chunked_frame(params.clone(), n, ones, shift)?
        .with_generation(generation);
    Ok(ChunkPlan {
        inner,
        settings,
        params,
        n,
        ones,
        shift,
        generation,
    })
}

impl ChunkPlan {
    /// The encoder settings it was made with.
    pub fn settings(&self) -> &EncoderSettings {
        &self.settings
    }

    /// The filter's parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// n, ones, the shift and the generation it was made with.
    pub fn figures(&self) -> (u64, u64, u8, u64) {
        (self.n, self.ones, self.shift, self.generation)
    }

    /// The number of chunks.
    pub fn chunk_count(&self) -> u64 {
        self.inner.chunk_count()
    }

    /// The coding's name.
    pub fn coding(&self) -> String {
        self.inner.coding().to_string()
    }

    /// The frame's q0, for the codings that carry one.
    pub fn q0(&self) -> Option<u16> {
        self.inner.q0()
    }

    /// The frame, from every chunk's payload in chunk order.
    pub fn assemble(&self, payloads: &[&[u8]]) -> Res<Encoded> {
        Ok(Encoded(self.inner.assemble(payloads)?))
    }
}
