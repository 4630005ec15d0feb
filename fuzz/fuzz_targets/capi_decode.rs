//! The C library's decode entry points on arbitrary bytes: the checks of
//! `capi/tests/decode_checks`, which `capi/tests/fuzz_corpus.rs` replays on the committed
//! corpus on stable.
#![no_main]

#[path = "../../capi/tests/decode_checks/mod.rs"]
mod decode_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| decode_checks::check(data));
