//! One sender broadcasting the generations of a filter to several receivers over loopback
//! TCP. Each generation is encoded once (a delta when it is smaller) and the same bytes go
//! to every connected receiver. A receiver that joins late first gets a full frame of the
//! current generation from [`Sender::full_frame`], then the deltas everyone gets.
//!
//! ```text
//! cargo run --release --features tokio --example broadcast
//! ```

use bloomwire::{
    BloomFilter, Encoder, FrameCodec, FrameKind, HashFamily, Limits, Params, Receiver, Sender,
    Update,
};
use bytes::Bytes;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::codec::FramedRead;

const KEYS: u64 = 100_000;
const CHURN: u64 = 1_000; // keys replaced per generation (1%)
const GENERATIONS: u64 = 8;
const EARLY: usize = 3; // receivers connected from the start
const JOIN_AFTER: u64 = 4; // a fourth joins after this generation

type Report = (usize, Vec<(Update, usize)>, Receiver);

/// A receiver: connects, applies every frame, and reports what each frame was.
fn receiver(id: usize, addr: std::net::SocketAddr) -> JoinHandle<Report> {
    tokio::spawn(async move {
        let socket = TcpStream::connect(addr).await.expect("connects");
        // Frames of a filter this size decode in well under a millisecond: decoding in
        // `poll` is fine (see the decode_off_runtime example for large ones).
        let mut frames = FramedRead::new(socket, FrameCodec::new(Limits::default()));
        let mut receiver = Receiver::new(Limits::default());
        let mut updates = Vec::new();
        while let Some(message) = frames.next().await {
            let message = message.expect("a valid frame");
            let len = message.header().frame_len();
            updates.push((receiver.apply(message).expect("applies"), len));
        }
        (id, updates, receiver)
    })
}

fn generation_of(g: u64, params: &Params) -> BloomFilter {
    let mut filter = BloomFilter::new(params.clone());
    for key in g * CHURN..g * CHURN + KEYS {
        filter.insert(key.to_le_bytes());
    }
    filter
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = Params::standard(16 * KEYS, 3, HashFamily::default())?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let mut sender = Sender::new(Encoder::new(), 1_000);
    let mut peers: Vec<TcpStream> = Vec::new();
    let mut handles = Vec::new();
    for id in 0..EARLY {
        handles.push(receiver(id, addr));
        peers.push(listener.accept().await?.0);
    }

    println!(
        "{KEYS} keys, m = {} bits, k = 3; {CHURN} keys replaced a generation",
        params.m()
    );
    println!(
        "\n{:>10} {:>6} {:>9} {:>10}",
        "generation", "kind", "bytes", "receivers"
    );
    let mut filter = generation_of(0, &params);
    for g in 1..=GENERATIONS {
        filter = generation_of(g, &params);
        let frame = sender.next_frame(&filter)?;
        let kind = match frame.header().kind {
            FrameKind::Full => "full",
            FrameKind::Delta { .. } => "delta",
        };
        let bytes: Bytes = frame.to_bytes(); // encoded once, sent to all
        for peer in &mut peers {
            peer.write_all(&bytes).await?;
        }
        println!("{g:>10} {kind:>6} {:>9} {:>10}", bytes.len(), peers.len());
        if g == JOIN_AFTER {
            handles.push(receiver(peers.len(), addr));
            let mut late = listener.accept().await?.0;
            let join = sender.full_frame()?.to_bytes();
            late.write_all(&join).await?;
            println!(
                "{g:>10} {:>6} {:>9} {:>10}   (to the receiver that joined)",
                "full",
                join.len(),
                1
            );
            peers.push(late);
        }
    }
    for peer in &mut peers {
        peer.shutdown().await?;
    }

    println!();
    for handle in handles {
        let (id, updates, receiver) = handle.await?;
        assert_eq!(receiver.filter(), Some(&filter), "receiver {id} is in step");
        let full: usize = updates
            .iter()
            .filter(|(u, _)| matches!(u, Update::Full { .. }))
            .map(|(_, b)| b)
            .sum();
        let deltas: Vec<usize> = updates
            .iter()
            .filter(|(u, _)| matches!(u, Update::Delta { .. }))
            .map(|(_, b)| *b)
            .collect();
        println!(
            "receiver {id}: generation {}, {} bytes of full frames, {} deltas of {} bytes",
            receiver.generation().unwrap_or(0),
            full,
            deltas.len(),
            deltas.iter().sum::<usize>()
        );
    }
    Ok(())
}
