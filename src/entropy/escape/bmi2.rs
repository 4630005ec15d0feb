//! Coding 11's encoder, decoder and table build (spec §4.15) compiled with BMI1 and BMI2:
//! the same safe code as `encode_portable`, `decode_portable` and `DecModel::portable`,
//! inlined into functions that may use `shrx`, `shlx`, `bzhi` and `lzcnt` (the x86-64
//! baseline shifts by a register only through `cl`, which costs a decoding step its moves,
//! as in coding 9). The twins are `bmi2_twins!`'s.
//!
//! The tests compare the two on random and altered payloads; the fuzz target
//! `kernel_twins` does too.

crate::entropy::bmi2_twins::bmi2_twins!(crate::entropy::escape);
