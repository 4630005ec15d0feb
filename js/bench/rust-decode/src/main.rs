//! `bloomwire-js-bench-decode RUNS FRAME...`: for each frame file, the best of RUNS
//! in-process calls of `bloomwire::decode` (the library's default limits), in ms, one
//! line `FRAME<TAB>MS` each.
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(30);
    for path in args {
        let bytes = std::fs::read(&path).expect("read the frame");
        let mut best = f64::MAX;
        for _ in 0..runs + 3 {
            let start = Instant::now();
            let decoded = bloomwire::decode::<bloomwire::Decoded>(black_box(&bytes), &bloomwire::Limits::default())
                .expect("decode");
            black_box(&decoded);
            best = best.min(start.elapsed().as_secs_f64() * 1e3);
        }
        println!("{path}\t{best:.4}");
    }
}
