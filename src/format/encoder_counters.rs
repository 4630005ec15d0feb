//! The encoder's counting-filter pipeline: counters, or their delta, into a frame.

use crate::entropy::counters::CounterTable;
use crate::entropy::payload;
use crate::error::{Error, Result};
use crate::filter::counting::CountingBloomFilter;

use super::decoded::check_after;
use super::encoder::{CounterBody, Encoder, Frame, PSource};
use super::header::FrameHeader;
use super::ids::{Coding, FrameKind, FILTER_TYPE_COUNTING};

impl Encoder {
    fn table(&self, body: &CounterBody<'_>) -> Result<CounterTable> {
        let width = body.width;
        if let Some(t) = &self.counter_table {
            // Rebuilt for this width, so a table longer than 2^width entries is refused.
            return CounterTable::new(t.frequencies().to_vec(), width);
        }
        let mut histogram = vec![0u64; 1 << width];
        for &c in body.counters {
            histogram[usize::from(c)] += 1;
        }
        match (self.p_source, body.theory_mean) {
            (PSource::Theory, Some(mean)) => {
                // The Poisson law in integers (2^40 per unit, at least 1), cut after the
                // largest value a counter holds.
                let t = histogram.iter().rposition(|&h| h != 0).map_or(1, |i| i + 1);
                let weights: Vec<u64> = crate::theory::counter_distribution(mean, width)[..t]
                    .iter()
                    .map(|&p| ((p * (1u64 << 40) as f64).round() as u64).max(1))
                    .collect();
                CounterTable::from_weights(&weights, width)
            }
            _ => CounterTable::from_histogram(&histogram, width),
        }
    }

    pub(super) fn counter_frame(&self, body: &CounterBody<'_>, coding: Coding) -> Result<Frame> {
        if !coding.valid_for(FILTER_TYPE_COUNTING) {
            return Err(crate::error::invalid(
                "coding",
                format!("{coding} codes bits, not the counters of counting filters"),
            ));
        }
        let table = match coding {
            Coding::KnownCounters => Some(self.table(body)?),
            _ => None,
        };
        let payload = payload::encode_counters(coding, body.counters, body.width, table.as_ref())?;
        let mut header = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (coding, None, None),
            payload.len(),
        );
        header.counter_width = Some(body.width);
        header.counter_table = table;
        header.header_len = header.encoded_len();
        Ok(Frame { header, payload })
    }

    /// The requested or smallest counter coding, raw when that is not smaller, budget
    /// checked.
    fn choose_counters(&self, body: &CounterBody<'_>) -> Result<Frame> {
        let raw = self.counter_frame(body, Coding::Raw)?;
        let candidates = match self.coding {
            Some(Coding::Raw) => vec![],
            Some(c) => vec![c],
            None => vec![Coding::KnownCounters, Coding::AdaptiveCounters],
        };
        let mut best: Option<Frame> = None;
        for c in candidates {
            let f = self.counter_frame(body, c)?;
            if best
                .as_ref()
                .map_or(true, |b| f.encoded_len() < b.encoded_len())
            {
                best = Some(f);
            }
        }
        let compressed_len = best.as_ref().map(Frame::encoded_len);
        let frame = match best {
            Some(f) if f.encoded_len() < raw.encoded_len() => f,
            _ => raw.clone(),
        };
        if let Some(budget) = self.budget {
            if frame.encoded_len() > budget {
                return Err(Error::OverBudget {
                    budget,
                    compressed: compressed_len.unwrap_or(raw.encoded_len()),
                    raw: raw.encoded_len(),
                });
            }
        }
        Ok(frame)
    }

    fn counting_body(filter: &CountingBloomFilter, generation: u64) -> CounterBody<'_> {
        CounterBody {
            kind: FrameKind::Full,
            params: filter.params(),
            width: filter.width(),
            n: filter.n(),
            generation,
            counters: filter.counters(),
            theory_mean: Some(crate::theory::counter_mean(
                filter.params(),
                filter.n() as f64,
            )),
        }
    }

    /// The full frame (generation 0) of a counting filter: filter type 3, the requested or
    /// smallest of [`Coding::COUNTERS`], the packed counters when coding is not smaller, and
    /// the budget checked.
    ///
    /// ```
    /// use bloomwire::counting::CountingBloomFilter;
    /// use bloomwire::frame::{self, Encoder, Limits};
    /// use bloomwire::{HashFamily, Params};
    ///
    /// let params = Params::standard(160_000, 2, HashFamily::default()).unwrap();
    /// let mut f = CountingBloomFilter::new(params, 4).unwrap();
    /// for i in 0..10_000u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// let wire = Encoder::new().encode_counting(&f).unwrap().to_bytes();
    /// assert!(wire.len() < 13_000); // 80 000 bytes packed, m H / 8 = 12 840
    /// let back = frame::decode_counting(&wire, &Limits::default()).unwrap();
    /// assert_eq!(back.filter, f);
    /// ```
    pub fn encode_counting(&self, filter: &CountingBloomFilter) -> Result<Frame> {
        self.encode_counting_generation(filter, 0)
    }

    /// Encode a counting filter's full frame that carries generation number `generation`.
    pub fn encode_counting_generation(
        &self,
        filter: &CountingBloomFilter,
        generation: u64,
    ) -> Result<Frame> {
        self.choose_counters(&Self::counting_body(filter, generation))
    }

    /// The full frame of a counting filter with one coding (of [`Coding::COUNTERS`]), no
    /// fallback, no budget, generation 0.
    pub fn encode_counting_with(
        &self,
        filter: &CountingBloomFilter,
        coding: Coding,
    ) -> Result<Frame> {
        self.counter_frame(&Self::counting_body(filter, 0), coding)
    }

    /// Encode the delta that turns generation `base_generation` (`base`) of a counting
    /// filter into generation `generation` (`filter`): the counter-wise XOR of their
    /// counters ([`CountingBloomFilter::xor`]), coded like counters, with the digests of
    /// both.
    ///
    /// Errors: the filters differ in m, layout, k, hash family or counter width
    /// ([`Error::Incompatible`]); `generation <= base_generation`
    /// ([`Error::InvalidParameter`]); or the budget.
    pub fn encode_counting_delta(
        &self,
        base: &CountingBloomFilter,
        base_generation: u64,
        filter: &CountingBloomFilter,
        generation: u64,
    ) -> Result<Frame> {
        check_after(base_generation, generation)?;
        let xor = filter.xor(base)?;
        self.choose_counters(&CounterBody {
            kind: FrameKind::Delta {
                base_generation,
                base_digest: base.digest(),
                result_digest: filter.digest(),
            },
            params: filter.params(),
            width: filter.width(),
            n: filter.n(),
            generation,
            counters: &xor,
            theory_mean: None,
        })
    }
}
