//! The bit stream of the tabled ANS codings (9 and 11, spec §4.13 and §4.15): read least
//! significant bit first; the encoder, which visits the symbols last to first, collects its
//! pushes as runs and writes them once, in the reverse order of their pushing.

/// A run of pushes, as the decoder reads them: `bits | count << 56`, the bit read first
/// lowest, `count` at most 48.
#[inline(always)]
pub(crate) fn run(bits: u64, count: u32) -> u64 {
    debug_assert!(count <= 48 && bits >> count == 0);
    bits | u64::from(count) << 56
}

/// Append the stream of `runs` (pushed last run first: the decoder reads the last run
/// first) to `out`, padded with zero bits to its last byte.
pub(crate) fn write_runs(runs: &[u64], out: &mut Vec<u8>) {
    // Each run stores the eight bytes from its first unfinished byte and moves past the
    // bytes it finished (no branch to mispredict).
    let bits: u64 = runs.iter().map(|r| r >> 56).sum();
    let (start, len) = (out.len(), bits.div_ceil(8) as usize);
    out.resize(start + len + 8, 0);
    let buf = &mut out[start..];
    let (mut acc, mut held, mut pos) = (0u64, 0u32, 0usize);
    for r in runs.iter().rev() {
        // held is at most 7 and a run at most 48 bits: k is at most 6.
        acc |= (r & ((1 << 56) - 1)) << held;
        held += (r >> 56) as u32;
        buf[pos..pos + 8].copy_from_slice(&acc.to_le_bytes());
        let k = held / 8;
        pos += k as usize;
        acc >>= 8 * k;
        held %= 8;
    }
    out.truncate(start + len);
}

/// The 64 bits of the stream from bit `at` on, zeros past the payload's end.
#[inline(always)]
pub(crate) fn peek(payload: &[u8], at: u64) -> u64 {
    let byte = (at / 8) as usize;
    let word = match payload.get(byte..byte + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")),
        None => {
            let mut b = [0u8; 8];
            let rest = payload.get(byte..).unwrap_or(&[]);
            b[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(b)
        }
    };
    word >> (at % 8)
}
