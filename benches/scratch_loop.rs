//! Repeated encodes of one 10^8-bit filter (k = 3, 10^7 keys), for a process-wide count
//! of page faults with `/usr/bin/time -v`, in one of four ways: through a caller's
//! context (`context`: `Encoder::encode_in`, then `Scratch::recycle`), through the thread's
//! pool (`default`: `Encoder::encode`), with no reuse (`none`: a new context for each
//! encode, dropped with its frame), or `Encoder::encode_into` a buffer kept across calls
//! (`into`). Building the filter is the same in all four; the difference of the faults
//! of two runs with different numbers of calls is the encodes'.
//!
//! ```text
//! cargo build --release -p bloomwire-benches --example scratch_loop
//! /usr/bin/time -v target/release/examples/scratch_loop context 20
//! ```

use bloomwire::{BloomFilter, Encoder, HashFamily, Params, Scratch};

fn main() {
    let mut args = std::env::args().skip(1);
    let way = args.next().unwrap_or_else(|| "default".into());
    let calls: u32 = args
        .next()
        .map_or(20, |c| c.parse().expect("a number of calls"));
    let params = Params::standard(100_000_000, 3, HashFamily::default()).expect("params");
    let mut f = BloomFilter::new(params);
    for i in 0..10_000_000u64 {
        f.insert(i.to_le_bytes());
    }
    let encoder = Encoder::new().threads(1);
    let mut scratch = Scratch::new();
    let mut out = Vec::new();
    let mut total = 0;
    for _ in 0..calls {
        let frame = match way.as_str() {
            "context" => encoder.encode_in(&mut scratch, &f),
            "none" => encoder.encode_in(&mut Scratch::new(), &f),
            "default" => encoder.encode(&f),
            "into" => {
                encoder.encode_into(&f, 0, &mut out).expect("frame");
                total += out.len();
                continue;
            }
            _ => panic!("context, default, none or into, not {way}"),
        }
        .expect("frame");
        out.clear();
        frame.write_to(&mut out);
        total += out.len();
        match way.as_str() {
            "context" => scratch.recycle(frame),
            _ => drop(frame),
        }
    }
    println!("{way}: {calls} frames, {total} bytes");
}
