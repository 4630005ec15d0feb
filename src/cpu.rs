//! What this machine offers the kernels, probed once per process, in one place (as zstd's
//! `common/cpu.h`): the instruction set extensions the SIMD kernels of the codings and of
//! the bit array use, and the number of cores the chunked coders spread over. No kernel
//! runs `is_x86_feature_detected!` itself.

use std::sync::OnceLock;

/// The instruction set extensions the crate's kernels use, as this CPU has them (all
/// `false` off x86-64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Features {
    /// `popcnt`: the bit array's count of ones.
    pub(crate) popcnt: bool,
    /// AVX-512 F and VPOPCNTDQ: the count of ones, eight words an instruction.
    pub(crate) avx512_popcnt: bool,
    /// SSE 4.2's `crc32`: a raw payload's checksum and copy in one pass.
    pub(crate) sse42: bool,
    /// PCLMULQDQ and SSE 4.2: a digest brought forward by flips, a carry-less multiplication
    /// and a `crc32` a product.
    pub(crate) clmul: bool,
    /// AVX-512 F, VPCLMULQDQ, PCLMULQDQ and SSE 4.2: a raw payload's checksum folded 256
    /// bytes an iteration while it is copied.
    pub(crate) vpclmul: bool,
    /// BMI1, BMI2 and LZCNT: coding 9's build.
    pub(crate) bmi2: bool,
    /// AVX-512 F, BW, CD and VPOPCNTDQ: coding 9's decoding table, sixteen positions an
    /// iteration (CD for `vpconflictd` and `vplzcntd`).
    pub(crate) avx512_table: bool,
    /// AVX2 and POPCNT: coding 8's 256-bit kernels.
    pub(crate) avx2: bool,
    /// AVX-512 F, VL, BW and VBMI2, and POPCNT: coding 8's 512-bit kernels (F for the
    /// 512-bit operations, VL and BW for the 256-bit ones and 16-bit elements, VBMI2 for
    /// `vpexpandw`, POPCNT for the word counts).
    pub(crate) avx512: bool,
}

/// This CPU's features, detected on the first call.
pub(crate) fn features() -> Features {
    static FEATURES: OnceLock<Features> = OnceLock::new();
    *FEATURES.get_or_init(probe)
}

#[cfg(target_arch = "x86_64")]
fn probe() -> Features {
    use std::is_x86_feature_detected as has;
    let popcnt = has!("popcnt");
    Features {
        popcnt,
        avx512_popcnt: has!("avx512f") && has!("avx512vpopcntdq"),
        sse42: has!("sse4.2"),
        clmul: has!("pclmulqdq") && has!("sse4.2"),
        vpclmul: has!("avx512f") && has!("vpclmulqdq") && has!("pclmulqdq") && has!("sse4.2"),
        bmi2: has!("bmi1") && has!("bmi2") && has!("lzcnt"),
        avx512_table: has!("avx512f")
            && has!("avx512bw")
            && has!("avx512cd")
            && has!("avx512vpopcntdq"),
        avx2: has!("avx2") && popcnt,
        avx512: has!("avx512f")
            && has!("avx512vl")
            && has!("avx512bw")
            && has!("avx512vbmi2")
            && popcnt,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn probe() -> Features {
    Features::default()
}

/// The number of threads "all cores" means. Asked once per process:
/// `available_parallelism` reads the cgroup files on Linux, about 40 µs a call, which is
/// more than decoding a sparse frame of 10^6 bytes takes.
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
