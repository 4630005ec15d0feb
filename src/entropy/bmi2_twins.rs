//! The BMI2 twins of a tANS coding's portable functions, written once (zstd's `HUF_DGEN`
//! makes its default, BMI2 and dispatch functions from one body the same way). A coding
//! whose encoder, decoder and table build are safe portable code that shifts by variable
//! amounts invokes [`bmi2_twins!`] in its `bmi2.rs` kernel file: the same functions compiled
//! with `shrx`, `shlx`, `bzhi` and `lzcnt` allowed, behind runtime detection. Codings 9 and
//! 11 use it.

/// Define `decode`, `encode` and `model`, the BMI2 twins of the coding module `$coding`'s
/// `decode_portable`, `encode_portable` and `DecModel::portable`, each `None` or `false`
/// (nothing done) on a CPU without BMI1, BMI2 and LZCNT.
macro_rules! bmi2_twins {
    ($coding:path) => {
        use $coding::{decode_portable, encode_portable, DecModel};
        use $crate::entropy::PayloadError;

        /// Whether this CPU runs the kernels.
        fn available() -> bool {
            $crate::cpu::features().bmi2
        }

        /// `decode_portable` compiled with BMI2, or `None` (nothing done) without it.
        pub(crate) fn decode(
            payload: &[u8],
            m: u64,
            model: &DecModel,
            out: &mut [u64],
        ) -> Option<Result<(), PayloadError>> {
            // SAFETY: the kernel needs BMI1, BMI2 and LZCNT, which the CPU has (detected
            // first); it is safe code otherwise.
            available().then(|| unsafe { decode_bmi2(payload, m, model, out) })
        }

        /// `encode_portable` compiled with BMI2: whether it ran (false, nothing done,
        /// without BMI2).
        pub(crate) fn encode(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) -> bool {
            if !available() {
                return false;
            }
            // SAFETY: as for `decode`.
            unsafe { encode_bmi2(words, m, q0, out) };
            true
        }

        /// `DecModel::portable` compiled with BMI2, or `None` without it.
        pub(crate) fn model(q0: u16) -> Option<DecModel> {
            // SAFETY: as for `decode`.
            available().then(|| unsafe { model_bmi2(q0) })
        }

        #[target_feature(enable = "bmi1,bmi2,lzcnt")]
        fn decode_bmi2(
            payload: &[u8],
            m: u64,
            model: &DecModel,
            out: &mut [u64],
        ) -> Result<(), PayloadError> {
            decode_portable(payload, m, model, out)
        }

        #[target_feature(enable = "bmi1,bmi2,lzcnt")]
        fn model_bmi2(q0: u16) -> DecModel {
            DecModel::portable(q0)
        }

        #[target_feature(enable = "bmi1,bmi2,lzcnt")]
        fn encode_bmi2(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
            encode_portable(words, m, q0, out)
        }
    };
}

pub(crate) use bmi2_twins;
