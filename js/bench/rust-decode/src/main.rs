//! `bloomwire-js-bench-decode BATCHES FRAME...`: for each frame file, the library's
//! `bloomwire::decode` (default limits) timed in this thread's CPU time (the machine is
//! shared: waiting for a core is not counted), in batches of calls that take at least
//! 20 ms each; prints `FRAME<TAB>MS` with the best batch's time per call.
use std::hint::black_box;

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass and reads nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn decode(bytes: &[u8]) {
    let decoded =
        bloomwire::decode::<bloomwire::Decoded>(black_box(bytes), &bloomwire::Limits::default())
            .expect("decode");
    black_box(&decoded);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let batches: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(10);
    for path in args {
        let bytes = std::fs::read(&path).expect("read the frame");
        // calls per batch: enough for 20 ms
        let start = thread_cpu_ns();
        let mut calls = 0u64;
        while thread_cpu_ns() - start < 20_000_000 {
            decode(&bytes);
            calls += 1;
        }
        let mut best = f64::MAX;
        for _ in 0..batches {
            let t = thread_cpu_ns();
            for _ in 0..calls {
                decode(&bytes);
            }
            best = best.min((thread_cpu_ns() - t) as f64 / 1e6 / calls as f64);
        }
        println!("{path}\t{best:.4}");
    }
}
