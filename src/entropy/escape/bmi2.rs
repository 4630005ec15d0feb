//! Coding 11's encoder, decoder and table build (spec §4.15) compiled with BMI1 and BMI2:
//! the same safe code as [`encode_portable`], [`decode_portable`] and
//! [`DecModel::portable`], inlined into functions that may use `shrx`, `shlx`, `bzhi` and
//! `lzcnt` (the x86-64 baseline shifts by a register only through `cl`, which costs a
//! decoding step its moves, as in coding 9).
//!
//! The tests compare the two on random and altered payloads; the fuzz target
//! `kernel_twins` does too.

use crate::entropy::escape::{decode_portable, encode_portable, DecModel};
use crate::entropy::PayloadError;

/// Whether this CPU runs the kernels.
fn available() -> bool {
    crate::cpu::features().bmi2
}

/// [`decode_portable`] compiled with BMI2, or `None` (nothing done) without it.
pub(crate) fn decode(
    payload: &[u8],
    m: u64,
    model: &DecModel,
    out: &mut [u64],
) -> Option<Result<(), PayloadError>> {
    // SAFETY: the kernel needs BMI1, BMI2 and LZCNT, which the CPU has (detected first);
    // it is safe code otherwise.
    available().then(|| unsafe { decode_bmi2(payload, m, model, out) })
}

/// [`encode_portable`] compiled with BMI2: whether it ran (false, nothing done, without
/// BMI2).
pub(crate) fn encode(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: as for `decode`.
    unsafe { encode_bmi2(words, m, q0, out) };
    true
}

/// [`DecModel::portable`] compiled with BMI2, or `None` without it.
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
