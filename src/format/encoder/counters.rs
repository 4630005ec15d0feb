//! The encoder's counting-filter pipeline: counters, or their delta, into a frame.

use crate::entropy::coding;
use crate::entropy::counter_table::CounterTable;
use crate::error::{Error, Result};
use crate::filter::counting::CountingBloomFilter;
use crate::format::frame::Frame;
use crate::format::header::FrameHeader;
use crate::format::ids::{Coding, FrameKind, FILTER_TYPE_COUNTING};

use super::settings::{CounterBody, PSource, Settings};

/// The largest frequency of a flattened table: `65536 * 2^-(1/512)` rounded down, so a
/// counter of any value costs at least `2^-9` bits and a payload codes at most `2^12`
/// counters a byte (plus the coder's termination, which the bound's slack covers).
pub(crate) const FLAT_MAX: u32 = 65447;

/// `table` with its largest frequency cut to [`FLAT_MAX`], the excess given to its last
/// entry (non-zero, so the table stays valid and the values it can code the same). A
/// table of one value is returned as it is (it decodes by filling).
pub(crate) fn flatten(table: &CounterTable) -> CounterTable {
    let mut f = table.frequencies().to_vec();
    let t = f.len();
    if t > 1 {
        for i in 0..t {
            if f[i] > FLAT_MAX {
                let excess = f[i] - FLAT_MAX;
                f[i] = FLAT_MAX;
                f[t - 1] += excess;
            }
        }
    }
    // Entries were only moved within a table of at least two values: still a distribution,
    // unless the last entry itself was the large one; then give the excess to the first
    // non-zero entry before it.
    if t > 1 && f[t - 1] > FLAT_MAX {
        let excess = f[t - 1] - FLAT_MAX;
        f[t - 1] = FLAT_MAX;
        let j = f[..t - 1].iter().position(|&x| x != 0).unwrap_or(0);
        f[j] += excess;
    }
    let width = (usize::BITS - (t - 1).leading_zeros()).max(1) as u8;
    CounterTable::new(f, width.max(1)).unwrap_or_else(|_| table.clone())
}

impl Settings {
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
        let mut table = match coding {
            Coding::KnownCounters => Some(self.table(body)?),
            _ => None,
        };
        let mut payload =
            coding::encode_counters(coding, body.counters, body.width, table.as_ref())?;
        let m = body.counters.len() as u64;
        let within = |payload: &[u8], table: &Option<CounterTable>| {
            coding.within_work_bound(
                m,
                table.as_ref().map(|t| t.frequencies().len()),
                payload.len() as u64,
            )
        };
        if !within(&payload, &table) {
            // The work bound (spec §2.2): a known table flattened so that every counter
            // costs at least 2^-9 bits, which meets it; otherwise the packed counters.
            if let Some(flat) = table.as_ref().map(flatten) {
                payload = coding::encode_counters(coding, body.counters, body.width, Some(&flat))?;
                table = Some(flat);
            }
            if !within(&payload, &table) {
                return self.counter_frame(body, Coding::Raw);
            }
        }
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
        header.metadata = self.metadata.clone();
        header.header_len = header.encoded_len();
        Ok(self.sealed(header, payload))
    }

    /// The requested or smallest counter coding, raw when that is not smaller, budget
    /// checked.
    pub(super) fn choose_counters(&self, body: &CounterBody<'_>) -> Result<Frame> {
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
                .is_none_or(|b| f.encoded_len() < b.encoded_len())
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

    pub(super) fn counting_body(filter: &CountingBloomFilter, generation: u64) -> CounterBody<'_> {
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
}
