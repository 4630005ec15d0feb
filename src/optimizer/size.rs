//! The size model: exact frame bytes from the header's parts and a coded payload's length.

use super::LayoutKind;
use crate::error::{invalid, Result};
use crate::filter::hashing::HashFamily;
use crate::filter::rational::HashCount;
use crate::filter::{proportional_block_ks, Params};
use crate::format;
use crate::format::BitCoding;
use crate::wire::varint_len;

/// What is sent: the filter itself, or the XOR of two generations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Sent {
    Filter,
    Delta { changed: f64 },
}

/// Bits lost per coded bit by the range coder at precision 16 (upper bound).
pub(super) const CODER_LOSS_PER_BIT: f64 = 1e-5;

/// Bytes of a bloomwire frame with these parameters and a payload of `payload_bytes`
/// (header, payload and checksum, as [`format::frame_len`] counts them).
pub fn frame_bytes(params: &Params, n: u64, coding: BitCoding, payload_bytes: u64) -> u64 {
    format::frame_len(
        params.family(),
        params.m(),
        format::k_field_len(params.layout()),
        n,
        format::FrameKind::Full.sequence_len(0),
        crate::format::Coding::from(coding).has_q0(),
        payload_bytes,
    )
}

/// The generation number plans assume for their sequencing fields: streams of up to a
/// million generations (3-byte varints) fit the worst case.
pub(super) const PLANNED_GENERATION: u64 = 1 << 20;

pub(super) fn frame_bytes_from(
    family: &HashFamily,
    m: u64,
    k_bytes: u64,
    n: u64,
    sent: Sent,
    coding: BitCoding,
    payload_bytes: u64,
) -> u64 {
    let kind = match sent {
        Sent::Filter => format::FrameKind::Full,
        Sent::Delta { .. } => format::FrameKind::Delta {
            base_generation: PLANNED_GENERATION,
            base_digest: 0,
            result_digest: 0,
        },
    };
    format::frame_len(
        family,
        m,
        k_bytes as usize,
        n,
        kind.sequence_len(PLANNED_GENERATION),
        crate::format::Coding::from(coding).has_q0(),
        payload_bytes,
    )
}

/// Payload bytes of a range-coded payload carrying `bits` bits of information: the coder
/// ends at a byte boundary with at most 4 termination bytes after the last whole word it
/// has emitted (`spec/FORMAT.md` 4.2), so `termination_bytes` is about 2 on average and 5
/// at most (with the byte rounding).
pub(super) fn coded_payload_bytes(bits: f64, termination_bytes: f64) -> f64 {
    (bits / 8.0).ceil() + termination_bytes
}

/// `z` such that a standard normal exceeds it with probability `eps`, `0 < eps <= 1/2`
/// (Acklam's rational approximation, relative error below 1.2e-9).
pub(super) fn normal_upper_quantile(eps: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let lower = if eps < 0.024_25 {
        let q = (-2.0 * eps.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = eps - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    -lower
}

/// Bytes of the k field(s) in the header.
pub(super) fn k_field_bytes(kind: LayoutKind, m: u64, k: HashCount) -> u64 {
    match kind {
        LayoutKind::Standard | LayoutKind::Partitioned => varint_len(u64::from(k.raw())) as u64,
        LayoutKind::Blocks => proportional_block_ks(m, k)
            .map(|(_, raw)| varint_len(u64::from(raw)) as u64)
            .sum(),
    }
}

/// The fraction of keys a delta replaces (`Sent::Delta`), checked: a fraction in (0, 1].
pub(super) fn check_changed(changed: f64) -> Result<()> {
    if !(changed.is_finite() && changed > 0.0 && changed <= 1.0) {
        return Err(invalid(
            "changed",
            format!("{changed} is not a fraction in (0, 1]"),
        ));
    }
    Ok(())
}
