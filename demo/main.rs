//! The crate's main job, end to end: plan a filter for a byte budget (the optimizer of
//! *Compressed Bloom Filters*), build it from keys, encode it with every coding, decode each
//! frame, compare sizes with raw and with the entropy bound, send the next generation as a
//! delta, and measure the false positive rate against theory.
//!
//! ```text
//! cargo run --release -p bloomwire-demo [-- N BUDGET]   # defaults: 10000 keys, 10000 bytes
//! ```

use std::time::Instant;

use bloomwire::theory::entropy;
use bloomwire::{decode, BitCoding, BloomFilter, Decoded, Encoder, Limits, Optimizer};
use bloomwire::{Receiver, Sender};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let n = args.first().copied().unwrap_or(10_000);
    let budget = args.get(1).copied().unwrap_or(10_000);

    // Plan: the lowest false positive rate whose frame fits the budget (with probability
    // 1 - 1e-6), against the best uncompressed filter of the same budget.
    let plan = Optimizer::new().plan(n, budget)?;
    let (m, k) = (plan.m(), plan.k());
    println!(
        "plan for n = {n} keys in {budget} bytes ({:.1} bits a key):",
        budget as f64 * 8.0 / n as f64
    );
    println!(
        "  compressed:   m = {m} (m/n = {:.1}), k = {k}, false positive rate {:.5}, frame {:.0} bytes expected, {} worst case",
        m as f64 / n as f64,
        plan.false_positive_rate,
        plan.expected_bytes,
        plan.worst_case_bytes,
    );
    if let Some(raw) = &plan.uncompressed {
        println!(
            "  uncompressed: m = {} (m/n = {:.1}), k = {}, false positive rate {:.5}",
            raw.m,
            raw.m as f64 / n as f64,
            raw.k,
            raw.false_positive_rate
        );
    }

    // Build.
    let mut filter = BloomFilter::new(plan.params.clone());
    for i in 0..n {
        filter.insert(format!("https://example.com/object/{i}"));
    }
    let p_hat = filter.fraction_of_zeros();
    let bound = m as f64 * entropy(p_hat) / 8.0;
    println!(
        "\nbuilt: zero fraction {p_hat:.4}; entropy bound m H(p)/8 = {bound:.1} bytes; raw bit array = {} bytes\n",
        m.div_ceil(8)
    );

    // Every coding: encode, decode, compare.
    println!(
        "{:<20} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "coding", "bytes", "vs raw", "vs bound", "enc ms", "dec ms"
    );
    let limits = Limits::new().max_m(m.max(Limits::default().max_m));
    for coding in BitCoding::ALL {
        let t = Instant::now();
        let frame = Encoder::new().encode_with(&filter, coding)?;
        let wire = frame.to_bytes();
        let enc = t.elapsed();
        let t = Instant::now();
        let back = decode::<Decoded>(&wire, &limits)?;
        let dec = t.elapsed();
        assert_eq!(back.filter, filter, "{coding} round trip");
        println!(
            "{:<20} {:>9} {:>9.1}% {:>+9.2}% {:>10.2} {:>10.2}",
            coding.to_string(),
            wire.len(),
            100.0 * wire.len() as f64 / m.div_ceil(8) as f64,
            100.0 * (wire.len() as f64 / bound - 1.0),
            enc.as_secs_f64() * 1e3,
            dec.as_secs_f64() * 1e3,
        );
    }
    let auto = Encoder::new().budget(budget as usize).encode(&filter)?;
    println!(
        "\nthe encoder picks {} ({} bytes, within the budget of {budget})",
        auto.coding(),
        auto.encoded_len()
    );

    // The next generation: 1% of the keys replaced, sent as a delta to a receiver that holds
    // the first one.
    let mut sender = Sender::new(Encoder::new(), 100);
    let mut receiver: Receiver = Receiver::new(limits);
    let first = sender.next_frame(&filter)?.to_bytes();
    receiver.receive(&first)?;
    let mut next = BloomFilter::new(plan.params.clone());
    for i in n / 100..n + n / 100 {
        next.insert(format!("https://example.com/object/{i}"));
    }
    let delta = sender.next_frame(&next)?.to_bytes();
    let update = receiver.receive(&delta)?;
    assert_eq!(receiver.filter(), Some(&next));
    println!(
        "generation 2 (1% of the keys replaced): {} bytes as a {}, against {} for the full frame",
        delta.len(),
        if update.is_full() {
            "full frame"
        } else {
            "delta"
        },
        first.len()
    );

    // False positives of the decoded filter on keys that were never inserted.
    let decoded = decode::<Decoded>(&auto.to_bytes(), &limits)?.filter;
    let queries = 1_000_000;
    let hits = (0..queries)
        .filter(|i| decoded.contains(format!("https://example.org/absent/{i}")))
        .count();
    println!(
        "false positive rate on {queries} absent keys: {:.5} (the plan's {:.5})",
        hits as f64 / queries as f64,
        plan.false_positive_rate
    );
    Ok(())
}
