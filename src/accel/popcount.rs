//! The count of one bits of a slice of words, with the `popcnt` instruction where the CPU
//! has it (the x86-64 baseline does not, and the portable count is several times slower:
//! the default encoder counts every array it codes).

/// The count of one bits in `words`: the `popcnt` kernel where the CPU has it, else
/// [`count_ones_scalar`].
pub(crate) fn count_ones(words: &[u64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("popcnt") {
            // SAFETY: `count_ones_popcnt` only needs the `popcnt` instruction, which the
            // CPU has (detected just above); it reads `words` through safe code alone.
            return unsafe { count_ones_popcnt(words) };
        }
    }
    count_ones_scalar(words)
}

/// The portable count, the twin the kernel is tested against.
pub(crate) fn count_ones_scalar(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// The same sum compiled with `popcnt` enabled: one instruction per word.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn count_ones_popcnt(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_counts_as_the_scalar_twin() {
        let mut x = 7u64;
        let words: Vec<u64> = (0..1000)
            .map(|i| {
                x = crate::filter::hashing::fmix64(x + i);
                match i % 4 {
                    0 => x,
                    1 => x & (x >> 7),
                    2 => u64::MAX,
                    _ => 0,
                }
            })
            .collect();
        for len in [0, 1, 2, 3, 7, 8, 63, 64, 65, 999, 1000] {
            let w = &words[..len];
            assert_eq!(count_ones(w), count_ones_scalar(w), "{len} words");
        }
        assert_eq!(count_ones(&[u64::MAX; 10]), 640);
    }
}
