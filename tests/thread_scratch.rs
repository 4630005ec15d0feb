//! The memory a thread keeps between encodes: warm for a sender of a large filter, within
//! its budget, and given back on request.

use bloomwire::{BitArray, BloomFilter, Encoder, HashFamily, Params};
use bloomwire_testkit::splitmix64;

/// A filter of `m` bits with about a fraction `p1` of them set, at random.
fn filter(m: u64, p1: f64) -> BloomFilter {
    let mut state = m;
    let limit = (p1 * u64::MAX as f64) as u64;
    let words = (0..m.div_ceil(64))
        .map(|_| {
            (0..64).fold(0u64, |w, b| {
                w | u64::from(splitmix64(&mut state) < limit) << b
            })
        })
        .collect();
    let bits = BitArray::from_words(words, m).unwrap();
    BloomFilter::from_parts(
        Params::standard(m, 3, HashFamily::default()).unwrap(),
        bits,
        0,
    )
    .unwrap()
}

#[test]
fn a_large_encode_stays_warm_within_the_budget() {
    std::thread::spawn(|| {
        let f = filter(100_000_000, 0.1);
        let encoder = Encoder::new();
        let mut buf = Vec::new();
        encoder.encode_into(&f, 1, &mut buf).unwrap();
        let first = buf.clone();
        // The second encode codes into what the first left on the thread: the same frame,
        // and the thread keeps the memory for a third (the payload it coded into).
        encoder.encode_into(&f, 1, &mut buf).unwrap();
        assert_eq!(buf, first);
        let kept = bloomwire::thread_scratch_bytes();
        assert!(
            kept >= buf.len() / 2,
            "{kept} bytes kept for a {}-byte frame",
            buf.len()
        );
        assert!(kept <= 64 << 20);
        // Dropped frames give their payloads back, within the budget.
        for _ in 0..20 {
            drop(encoder.encode(&f).unwrap());
            assert!(bloomwire::thread_scratch_bytes() <= 64 << 20);
        }
        assert!(bloomwire::release_thread_scratch() >= kept);
        assert_eq!(bloomwire::thread_scratch_bytes(), 0);
    })
    .join()
    .unwrap();
}
