//! The committed corpus of the fuzz target `capi_decode` (`fuzz/corpus/capi_decode`),
//! replayed on stable through the same checks, so that `cargo test` keeps what the fuzzer
//! found.

mod decode_checks;

#[test]
fn replay_capi_decode() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/capi_decode");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| decode_checks::check(&bytes));
        assert!(outcome.is_ok(), "{} fails its checks", path.display());
        count += 1;
    }
    assert!(count >= 4, "{count} inputs");
}
