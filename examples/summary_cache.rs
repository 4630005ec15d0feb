//! The web-cache-sharing scenario of *Compressed Bloom Filters* (Section IV), over loopback
//! TCP: several proxies, each with a changing set of cached URLs, send their cache digest
//! to the others every round — a delta when it is smaller than the whole filter — and check
//! the peers' digests before forwarding a request. One frame is dropped on purpose; the
//! receiver notices the gap, asks for a resync, and gets a full frame in the next round.
//!
//! ```text
//! cargo run --release --features tokio --example summary_cache
//! ```

use std::collections::HashSet;

use bloomwire::{
    BitCoding, BloomFilter, Encoder, Error, FrameCodec, FrameKind, Limits, Optimizer, Receiver,
    Sender, Update,
};
use bloomwire_testkit::SplitMix64;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{FramedRead, FramedWrite};

const PROXIES: usize = 3;
const CACHED: u64 = 2_000; // URLs per proxy
const UNIVERSE: u64 = 40_000; // distinct URLs requested
const CHURN: u64 = 100; // URLs replaced per proxy per round (5%)
const ROUNDS: u64 = 12;
const REQUESTS: u64 = 4_000; // per proxy per round
const DROPPED: (u64, usize, usize) = (5, 0, 1); // (round, from, to): this frame is lost
const RESYNC: u8 = b'R';

fn url(i: u64) -> String {
    format!("http://www.example.com/page/{i}.html")
}

/// One direction of a peering: the sending proxy's side and the receiving proxy's side of
/// one loopback TCP connection.
struct Link {
    from: usize,
    to: usize,
    sender: Sender,
    frames_out: FramedWrite<OwnedWriteHalf, FrameCodec>,
    resync_in: OwnedReadHalf,
    receiver: Receiver,
    frames_in: FramedRead<OwnedReadHalf, FrameCodec>,
    resync_out: OwnedWriteHalf,
}

async fn connect(from: usize, to: usize) -> std::io::Result<Link> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    let (resync_in, frames_out) = client.into_split();
    let (frames_in, resync_out) = server.into_split();
    Ok(Link {
        from,
        to,
        sender: Sender::new(Encoder::new(), 8),
        frames_out: FramedWrite::new(frames_out, FrameCodec::new(Limits::default())),
        resync_in,
        receiver: Receiver::new(Limits::default()),
        frames_in: FramedRead::new(frames_in, FrameCodec::new(Limits::default())),
        resync_out,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Plan the digest: 2 000 URLs in 2 500 bytes (10 bits a URL on the wire).
    // Receivers keep at most 32 bits a URL in memory (the paper's Section IV setting).
    let plan = Optimizer::new().max_m(32 * CACHED).plan(CACHED, 2_500)?;
    println!("digest plan for {CACHED} URLs in 2500 bytes:\n{plan}\n");

    let mut rng = SplitMix64(2002);
    // Each proxy caches a sliding window of a random permutation of the universe.
    let mut caches: Vec<(u64, HashSet<u64>)> = (0..PROXIES)
        .map(|p| {
            let start = p as u64 * 7_919;
            (
                start,
                (start..start + CACHED).map(|i| i % UNIVERSE).collect(),
            )
        })
        .collect();
    let mut links = Vec::new();
    for from in 0..PROXIES {
        for to in 0..PROXIES {
            if from != to {
                links.push(connect(from, to).await?);
            }
        }
    }

    println!(
        "{:>5} {:>9} {:>11} {:>11} {:>10} {:>9}  events",
        "round", "raw B", "full B", "sent B", "kind", "fp rate"
    );
    for round in 1..=ROUNDS {
        // The caches change: the oldest CHURN URLs leave, CHURN new ones arrive.
        for (start, cache) in caches.iter_mut() {
            for i in *start..*start + CHURN {
                cache.remove(&(i % UNIVERSE));
            }
            for i in *start + CACHED..*start + CACHED + CHURN {
                cache.insert(i % UNIVERSE);
            }
            *start += CHURN;
        }
        let filters: Vec<BloomFilter> = caches
            .iter()
            .map(|(_, cache)| {
                let mut f = BloomFilter::new(plan.params.clone());
                for &i in cache {
                    f.insert(url(i));
                }
                f
            })
            .collect();

        // Every proxy sends its digest to every peer.
        let mut events = Vec::new();
        let (mut raw, mut full, mut sent, mut kinds) = (0, 0, 0, HashSet::new());
        for link in links.iter_mut() {
            let mut byte = [0u8; 1];
            while let Ok(Ok(1)) = tokio::time::timeout(
                std::time::Duration::from_millis(1),
                link.resync_in.read(&mut byte),
            )
            .await
            {
                if byte[0] == RESYNC {
                    link.sender.request_full();
                }
            }
            let filter = &filters[link.from];
            let frame = link.sender.next_frame(filter)?;
            raw += Encoder::new()
                .coding(BitCoding::Raw)
                .encode(filter)?
                .encoded_len();
            full += Encoder::new().encode(filter)?.encoded_len();
            sent += frame.encoded_len();
            kinds.insert(match frame.header().kind {
                FrameKind::Full => "full",
                FrameKind::Delta { .. } => "delta",
            });
            if (round, link.from, link.to) == DROPPED {
                events.push(format!("dropped {}->{}", link.from, link.to));
                continue;
            }
            link.frames_out.send(frame).await?;
        }
        // Every proxy reads its peers' digests.
        for link in links.iter_mut() {
            if (round, link.from, link.to) == DROPPED {
                continue;
            }
            let message = link.frames_in.next().await.ok_or("connection closed")??;
            match link.receiver.apply(message) {
                Ok(Update::Full { skipped, .. }) if skipped > 0 => {
                    events.push(format!("{}->{} resynced", link.from, link.to));
                }
                Ok(_) => {}
                Err(e @ (Error::GenerationGap { .. } | Error::BaseMismatch { .. })) => {
                    events.push(format!("{}->{} gap: {e}", link.from, link.to));
                    link.resync_out.write_all(&[RESYNC]).await?;
                }
                Err(e) => return Err(e.into()),
            }
        }

        // Requests: a proxy that misses forwards to the peers whose digest says "maybe".
        let (mut asked, mut false_hits) = (0u64, 0u64);
        for (p, (_, cache)) in caches.iter().enumerate() {
            for _ in 0..REQUESTS {
                let i = rng.next_u64() % UNIVERSE;
                if cache.contains(&i) {
                    continue;
                }
                for link in links.iter().filter(|l| l.to == p) {
                    let Some(digest) = link.receiver.filter() else {
                        continue;
                    };
                    if !caches[link.from].1.contains(&i) {
                        asked += 1;
                        false_hits += u64::from(digest.contains(url(i)));
                    }
                }
            }
        }
        let per_link = links.len();
        let kind = kinds.into_iter().collect::<Vec<_>>().join("+");
        println!(
            "{round:>5} {:>9} {:>11} {:>11} {:>10} {:>9.4}  {}",
            raw / per_link,
            full / per_link,
            sent / per_link,
            kind,
            false_hits as f64 / asked as f64,
            events.join("; ")
        );
    }
    println!(
        "\nbytes are per update and link (mean over the {} links); fp rate: forwarded requests for URLs the peer does not hold",
        PROXIES * (PROXIES - 1)
    );
    println!(
        "planned false positive rate {:.4}",
        plan.false_positive_rate
    );
    Ok(())
}
