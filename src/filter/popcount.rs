//! The count of one bits of a slice of words, with AVX-512's `vpopcntq` or the `popcnt`
//! instruction where the CPU has them (the x86-64 baseline has neither, and the portable
//! count is several times slower: the default encoder counts every array it codes, which
//! beside a sparse filter's positional encode was a fifth of its time).

/// The count of one bits in `words`: the AVX-512 or `popcnt` kernel where the CPU has it,
/// else [`count_ones_scalar`].
pub(crate) fn count_ones(words: &[u64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let cpu = crate::cpu::features();
        if cpu.avx512_popcnt {
            // SAFETY: `count_ones_avx512` only needs AVX-512 F and VPOPCNTDQ, which the
            // CPU has (detected just above); it reads `words` through safe code alone.
            return unsafe { count_ones_avx512(words) };
        }
        if cpu.popcnt {
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

/// The same sum compiled with AVX-512 VPOPCNTDQ: eight words an instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn count_ones_avx512(words: &[u64]) -> u64 {
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
            let want = count_ones_scalar(w);
            assert_eq!(count_ones(w), want, "{len} words");
            // Each kernel this CPU runs, not only the one chosen.
            #[cfg(target_arch = "x86_64")]
            {
                if crate::cpu::features().popcnt {
                    // SAFETY: the CPU has POPCNT.
                    assert_eq!(unsafe { count_ones_popcnt(w) }, want, "{len} words");
                }
                if crate::cpu::features().avx512_popcnt {
                    // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ.
                    assert_eq!(unsafe { count_ones_avx512(w) }, want, "{len} words");
                }
            }
        }
        assert_eq!(count_ones(&[u64::MAX; 10]), 640);
    }
}
