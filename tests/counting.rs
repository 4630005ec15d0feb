//! Counting filters under random insert/delete sequences: no false negatives, saturation
//! as the literature handles it, and the summary equal to the plain filter of the set.

use std::collections::HashMap;

use bloomwire::{BloomFilter, CountingBloomFilter, HashFamily, Params};
use quickcheck::{quickcheck, TestResult};

/// Apply `ops` (true = insert, false = delete) on keys 0..keys to a counting filter and to
/// a multiset, deleting only keys the multiset holds.
fn run(
    m: u64,
    k: u32,
    width: u8,
    keys: u8,
    ops: &[(bool, u8)],
) -> (CountingBloomFilter, HashMap<u8, u32>) {
    let params = Params::standard(m, k, HashFamily::default()).unwrap();
    let mut f = CountingBloomFilter::new(params, width).unwrap();
    let mut set: HashMap<u8, u32> = HashMap::new();
    for &(insert, key) in ops {
        let key = key % keys.max(1);
        if insert {
            f.insert([key]);
            *set.entry(key).or_default() += 1;
        } else if let Some(c) = set.get_mut(&key) {
            f.remove([key])
                .expect("a present key can always be removed");
            *c -= 1;
            if *c == 0 {
                set.remove(&key);
            }
        }
    }
    (f, set)
}

quickcheck! {
    fn prop_no_false_negatives(m: u16, k: u8, width: u8, keys: u8, ops: Vec<(bool, u8)>) -> TestResult {
        let (m, k, width) = (1 + u64::from(m % 2000), 1 + u32::from(k % 6), 1 + width % 8);
        let (f, set) = run(m, k, width, keys, &ops);
        TestResult::from_bool(set.keys().all(|key| f.contains([*key])))
    }

    fn prop_without_saturation_counts_are_exact(m: u16, k: u8, keys: u8, ops: Vec<(bool, u8)>) -> TestResult {
        // 8-bit counters, and at most 255 increments of any counter: nothing saturates.
        let (m, k) = (1 + u64::from(m % 2000), 1 + u32::from(k % 6));
        if ops.len() * k as usize > 255 {
            return TestResult::discard();
        }
        let (f, set) = run(m, k, 8, keys, &ops);
        let params = f.params().clone();
        let mut plain = BloomFilter::new(params.clone());
        let mut expected = vec![0u8; m as usize];
        for (&key, &count) in &set {
            plain.insert([key]);
            for i in plain.indexes([key]) {
                expected[i as usize] += count as u8;
            }
        }
        TestResult::from_bool(
            f.counters() == &expected[..] && f.to_bloom_filter().bits() == plain.bits(),
        )
    }

    fn prop_saturated_counters_never_drop(m: u8, ops: Vec<(bool, u8)>) -> TestResult {
        // Tiny filters with 2-bit counters saturate quickly; once at 3, a counter stays.
        let m = 1 + u64::from(m % 16);
        let params = Params::standard(m, 2, HashFamily::default()).unwrap();
        let mut f = CountingBloomFilter::new(params, 2).unwrap();
        let mut saturated = vec![false; m as usize];
        let mut present: Vec<u8> = Vec::new();
        for (insert, key) in ops {
            if insert {
                f.insert([key]);
                present.push(key);
            } else if let Some(pos) = present.iter().position(|&k| k == key) {
                f.remove([key]).unwrap();
                present.swap_remove(pos);
            }
            for (i, &c) in f.counters().iter().enumerate() {
                if saturated[i] && c != 3 {
                    return TestResult::failed();
                }
                saturated[i] |= c == 3;
            }
        }
        TestResult::from_bool(present.iter().all(|k| f.contains([*k])))
    }
}
