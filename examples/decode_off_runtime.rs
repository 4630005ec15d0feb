//! Decoding large frames off the runtime thread: `FramingCodec` checks each frame (header,
//! limits, checksum) in `poll` and hands it over undecoded, and the payload is decoded on
//! `spawn_blocking`. Beside it, the same frames decoded on the runtime thread, as
//! `FrameCodec` does inside `poll`. A ticker task on the same single-threaded runtime
//! measures how long the runtime thread was kept from running other tasks (its longest gap
//! between ticks).
//!
//! ```text
//! cargo run --release --features tokio --example decode_off_runtime
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bloomwire::{
    BloomFilter, Encoder, FramingCodec, HashFamily, Limits, Message, Params, Receiver, Sender,
};
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::FramedRead;

const KEYS: u64 = 1_000_000;
const M: u64 = 16 * KEYS; // 16 bits a key, k = 3: a dense filter, slow-ish to decode
const UPDATES: u64 = 5; // each replaces 1% of the keys

/// A full frame and `UPDATES` deltas, and the filter the last one leaves.
fn frames() -> (Vec<u8>, BloomFilter) {
    let params = Params::standard(M, 3, HashFamily::default()).expect("valid parameters");
    let mut sender = Sender::new(Encoder::new(), 100);
    let mut filter = BloomFilter::new(params.clone());
    let mut wire = Vec::new();
    for update in 0..=UPDATES {
        filter = BloomFilter::new(params.clone());
        let first = update * KEYS / 100;
        for key in first..first + KEYS {
            filter.insert(key.to_le_bytes());
        }
        let frame = sender.next_frame(&filter).expect("encodes");
        wire.extend_from_slice(&frame.to_bytes());
    }
    (wire, filter)
}

/// Ticks every millisecond and records the longest gap between two ticks, in microseconds;
/// it has ticked once when this returns.
async fn ticker(longest: Arc<AtomicU64>) -> tokio::task::JoinHandle<()> {
    let handle = tokio::spawn(async move {
        let mut last = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let now = Instant::now();
            let gap = now.duration_since(last).as_micros() as u64;
            longest.fetch_max(gap, Ordering::Relaxed);
            last = now;
        }
    });
    tokio::time::sleep(Duration::from_millis(3)).await;
    handle
}

/// Lets the ticker record the gap it is in, then stops it.
async fn stop(ticker: tokio::task::JoinHandle<()>, longest: &AtomicU64) -> Duration {
    tokio::time::sleep(Duration::from_millis(3)).await;
    ticker.abort();
    Duration::from_micros(longest.load(Ordering::Relaxed))
}

/// A loopback connection whose far end writes `wire` and closes.
async fn connection(wire: Arc<Vec<u8>>) -> std::io::Result<TcpStream> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let mut client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    tokio::spawn(async move {
        client.write_all(&wire).await?;
        client.shutdown().await
    });
    Ok(server)
}

struct Run {
    frames: usize,
    decode: Duration,
    stall: Duration,
    receiver: Receiver,
}

/// Read the stream with the framing-only codec and decode each frame on the runtime thread
/// (what `FrameCodec` does inside `poll`) or on the blocking pool.
async fn read(wire: Arc<Vec<u8>>, off_runtime: bool) -> Result<Run, Box<dyn std::error::Error>> {
    let longest = Arc::new(AtomicU64::new(0));
    let tick = ticker(longest.clone()).await;
    let mut frames = FramedRead::new(
        connection(wire).await?,
        FramingCodec::new(Limits::default()),
    );
    let mut receiver = Receiver::new(Limits::default());
    let (mut count, mut decode) = (0, Duration::ZERO);
    while let Some(frame) = frames.next().await {
        let frame = frame?;
        let start = Instant::now();
        let message: Message = if off_runtime {
            tokio::task::spawn_blocking(move || frame.decode()).await??
        } else {
            frame.decode()?
        };
        decode += start.elapsed();
        receiver.apply(message)?;
        count += 1;
    }
    let stall = stop(tick, &longest).await;
    Ok(Run {
        frames: count,
        decode,
        stall,
        receiver,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (wire, last) = frames();
    let wire = Arc::new(wire);
    println!(
        "{KEYS} keys, m = {M} bits, k = 3: a full frame and {UPDATES} deltas, {} bytes in all",
        wire.len()
    );
    println!(
        "\n{:<36} {:>6} {:>12} {:>22}",
        "FramingCodec, then", "frames", "decode ms", "longest stall ms"
    );
    for (name, run) in [
        (
            "decoded on the runtime thread",
            read(wire.clone(), false).await?,
        ),
        ("decoded on spawn_blocking", read(wire.clone(), true).await?),
    ] {
        assert_eq!(run.receiver.filter(), Some(&last));
        println!(
            "{name:<36} {:>6} {:>12.1} {:>22.1}",
            run.frames,
            run.decode.as_secs_f64() * 1e3,
            run.stall.as_secs_f64() * 1e3
        );
    }
    println!("\nThe stall is the longest time the runtime thread could run no other task.");
    Ok(())
}
