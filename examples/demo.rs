//! The crate's main job, end to end: build a filter from 10 000 keys, encode it with every
//! coding, decode each frame, and compare sizes with raw and with the entropy bound, and
//! the false positive rate with theory.
//!
//! ```text
//! cargo run --release --example demo [-- N M K]      # defaults: the paper's 10000 140000 2
//! ```

use std::time::Instant;

use bloomwire::theory::{entropy, fpr, p_zero};
use bloomwire::{decode, BitCoding, BloomFilter, Decoded, Encoder, HashFamily, Limits, Params};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let n = args.first().copied().unwrap_or(10_000);
    let m = args.get(1).copied().unwrap_or(140_000);
    let k = args.get(2).copied().unwrap_or(2) as u32;

    let mut filter = BloomFilter::new(Params::standard(m, k, HashFamily::default())?);
    for i in 0..n {
        filter.insert(format!("https://example.com/object/{i}"));
    }
    let p_hat = filter.fraction_of_zeros();
    let bound = m as f64 * entropy(p_hat) / 8.0;
    println!(
        "filter: n = {n}, m = {m}, k = {k}; zero fraction {p_hat:.4} (theory {:.4})",
        p_zero(k as f64, n as f64, m as f64)
    );
    println!(
        "entropy bound m H(p)/8 = {bound:.1} bytes; raw bit array = {} bytes\n",
        m.div_ceil(8)
    );
    println!(
        "{:<20} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "coding", "bytes", "vs raw", "vs bound", "enc ms", "dec ms"
    );

    let limits = Limits::new().max_m(m.max(Limits::default().max_m));
    for coding in BitCoding::ALL {
        let t = Instant::now();
        let frame = Encoder::new().encode_with(&filter, coding).unwrap();
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
    let auto = Encoder::new().encode(&filter)?;
    println!(
        "\nthe encoder picks {} ({} bytes)",
        auto.coding(),
        auto.encoded_len()
    );

    // False positives of the decoded filter on keys that were never inserted.
    let decoded = decode::<Decoded>(&auto.to_bytes(), &limits)?.filter;
    let queries = 1_000_000;
    let hits = (0..queries)
        .filter(|i| decoded.contains(format!("https://example.org/absent/{i}")))
        .count();
    println!(
        "false positive rate on {queries} absent keys: {:.5} (theory (1 - e^(-kn/m))^k = {:.5})",
        hits as f64 / queries as f64,
        fpr(k as f64, n as f64, m as f64)
    );
    Ok(())
}
