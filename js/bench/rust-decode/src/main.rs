//! `bloomwire-js-bench-decode FRAME...`: the library's `bloomwire::decode` (default limits)
//! on the given frame files, timed in this thread's CPU time (the machine is shared:
//! waiting for a core is not counted), on request. It reads lines `INDEX CALLS` on stdin
//! and answers each with one line: the CPU milliseconds that CALLS decodes of frame INDEX
//! (0-based, in the order given) took, all together. It ends at the end of its input.
//! `bench/decode.mjs` keeps one running and alternates its batches with the package's.
use std::hint::black_box;
use std::io::{BufRead, Write};

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
    let frames: Vec<Vec<u8>> = std::env::args()
        .skip(1)
        .map(|path| std::fs::read(&path).expect("read the frame"))
        .collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("read a request");
        let mut words = line.split_whitespace();
        let (Some(index), Some(calls)) = (words.next(), words.next()) else {
            continue;
        };
        let frame = &frames[index.parse::<usize>().expect("a frame index")];
        let calls: u64 = calls.parse().expect("a count of calls");
        let start = thread_cpu_ns();
        for _ in 0..calls {
            decode(frame);
        }
        let ms = (thread_cpu_ns() - start) as f64 / 1e6;
        writeln!(out, "{ms:.6}").expect("answer");
        out.flush().expect("answer");
    }
}
