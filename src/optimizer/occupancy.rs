//! Occupancy maths: the regions of a layout and the exact mean and variance of their zero bits.

use super::LayoutKind;
use crate::filter::proportional_block_ks;
use crate::filter::rational::{HashCount, K_FRAC_BITS};

/// A set of bits that receive the same kind of balls: `count` regions of `size` bits, each
/// key throwing `w` balls and one more with probability `r` into each region.
#[derive(Debug, Clone, Copy)]
pub(super) struct Region {
    pub(super) size: u64,
    pub(super) count: u64,
    pub(super) w: u32,
    pub(super) r: f64,
}

/// Calls `f` for each region of a filter with m bits and k hash functions in this layout.
pub(super) fn for_each_region(kind: LayoutKind, m: u64, k: HashCount, mut f: impl FnMut(Region)) {
    let w = k.whole();
    let r = f64::from(k.frac()) / f64::from(1u32 << K_FRAC_BITS);
    match kind {
        LayoutKind::Standard => f(Region {
            size: m,
            count: 1,
            w,
            r,
        }),
        LayoutKind::Partitioned => {
            let parts = u64::from(k.ceil());
            let part = m / parts;
            if part == 0 {
                return;
            }
            f(Region {
                size: part,
                count: u64::from(w),
                w: 1,
                r: 0.0,
            });
            if k.frac() != 0 {
                f(Region {
                    size: part,
                    count: 1,
                    w: 0,
                    r,
                });
            }
            if m > parts * part {
                f(Region {
                    size: m - parts * part,
                    count: 1,
                    w: 0,
                    r: 0.0,
                });
            }
        }
        LayoutKind::Blocks => {
            for (size, raw) in proportional_block_ks(m, k) {
                f(Region {
                    size,
                    count: 1,
                    w: raw >> K_FRAC_BITS,
                    r: f64::from(raw & ((1 << K_FRAC_BITS) - 1)) / f64::from(1u32 << K_FRAC_BITS),
                });
            }
        }
    }
}

/// Exact probability that a bit of the region is zero, and the variance of the number of
/// zero bits in one region (Z), for n keys.
///
/// With `E_j = ((1 - j/s)^w (1 - j r/s))^n`, `E[Z] = s E_1` and
/// `Var[Z] = s E_1 + s (s - 1) E_2 - s^2 E_1^2 = s (E_1 - E_2) + s^2 E_1^2 expm1(d)`, where
/// `E_2 / E_1^2 = exp(d)` and `d = n (w ln(1 - 1/(s-1)^2) + ln(1 - r^2/(s-r)^2))`.
pub(super) fn occupancy(reg: Region, n: f64) -> (f64, f64) {
    let s = reg.size as f64;
    let w = f64::from(reg.w);
    let term = |x: f64| if x == 0.0 { 0.0 } else { x.ln_1p() };
    let ln_e = |j: f64| {
        let whole = if reg.w == 0 { 0.0 } else { w * term(-j / s) };
        n * (whole + term(-j * reg.r / s))
    };
    let e1 = ln_e(1.0).exp();
    if reg.size < 2 {
        return (e1, e1 * (1.0 - e1));
    }
    let e2 = ln_e(2.0).exp();
    let whole = if reg.w == 0 {
        0.0
    } else {
        w * term(-1.0 / ((s - 1.0) * (s - 1.0)))
    };
    let d = n * (whole + term(-reg.r * reg.r / ((s - reg.r) * (s - reg.r))));
    let var = s * (e1 - e2) + s * s * e1 * e1 * d.exp_m1();
    (e1, var.max(0.0))
}
