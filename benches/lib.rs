//! The package of bloomwire's benchmarks (`cargo bench -p bloomwire-benches --bench NAME`),
//! kept apart from the library so that its tests and demo compile none of the comparison
//! crates. The benchmarks are the files beside this one; `README.md` says what each measures
//! and holds the figures of the last runs.
