//! What a plan costs beside its frame: the memory each side holds, and the deltas at a churn.

/// The memory a plan's filter takes at each side, in bytes (a function of m alone).
///
/// A Bloom filter of m bits holds `ceil(m/8)` bytes (in 64-bit words: at most 7 bytes more).
/// A counting filter holds one byte a counter whatever its width (1 to 8 bits): packed
/// counters are a wire form, not a memory form.
///
/// ```
/// use bloomwire::Optimizer;
///
/// // 1M keys at 1%: the default plan is sparse, about 10 times a standard filter's memory.
/// let plan = Optimizer::new().plan_for_fpr(1_000_000, 0.01).unwrap();
/// let memory = plan.memory();
/// assert_eq!(memory.receiver, plan.m().div_ceil(8));
/// assert_eq!(memory.delta_sender, 2 * memory.sender);
/// assert_eq!(memory.counting_sender, plan.m() + plan.m().div_ceil(8));
/// let standard = plan.uncompressed.unwrap().m.div_ceil(8);
/// assert!(memory.receiver > 8 * standard);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Memory {
    /// The receiver's decoded filter (a [`Receiver`](crate::Receiver) of full frames or
    /// deltas, or one decode): `ceil(m/8)` bytes, what [`Limits::max_filter_bytes`]
    /// bounds.
    ///
    /// [`Limits::max_filter_bytes`]: crate::Limits::max_filter_bytes
    pub receiver: u64,
    /// A sender that builds the filter and encodes full frames: its bits, `ceil(m/8)`.
    pub sender: u64,
    /// A [`Sender`](crate::Sender) of generations by deltas: the filter's bits and the copy
    /// of the generation it sent last (the next delta's base), `2 ceil(m/8)`.
    pub delta_sender: u64,
    /// A [`SummarySender`](crate::SummarySender): m counters of a byte each (its
    /// [`CountingBloomFilter`](crate::CountingBloomFilter)) and the Bloom filter it sent last,
    /// `m + ceil(m/8)`; between frames it also lists the positions whose counters left or
    /// reached zero, 8 bytes each.
    pub counting_sender: u64,
}

impl Memory {
    /// The memory of a filter of m bits (or counters) at each side.
    ///
    /// ```
    /// let memory = bloomwire::optimizer::Memory::of_m(80);
    /// assert_eq!((memory.receiver, memory.delta_sender, memory.counting_sender), (10, 20, 90));
    /// ```
    pub const fn of_m(m: u64) -> Self {
        let bits = m.div_ceil(8);
        Memory {
            receiver: bits,
            sender: bits,
            delta_sender: bits.saturating_mul(2),
            counting_sender: m.saturating_add(bits),
        }
    }
}

/// A plan's delta frames when a fraction of the keys changes between generations (the
/// paper's Section IV: the XOR of two generations has ones with probability
/// `q = 2p(1 - p^c)`), as [`Optimizer::churn`](crate::Optimizer::churn) asks.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct DeltaCost {
    /// The fraction c of the keys replaced between generations.
    pub changed: f64,
    /// Expected bytes of a delta frame (the smallest coding of the XOR, raw included).
    pub expected_bytes: f64,
    /// Delta frame bytes exceeded with probability at most the plan's epsilon.
    pub worst_case_bytes: u64,
}
