//! Another library's filter on the wire: a `fastbloom` filter shipped in opaque frames
//! (base hash 0, spec section 3.1) with its own parameters in the application metadata
//! (flags bit 3, section 2.5), then a delta after more inserts. The receiver rebuilds a
//! `fastbloom` filter from the bits and queries it with fastbloom; bloomwire itself refuses
//! to query bits it did not place.
//!
//! ```text
//! cargo run --release -p bloomwire-benches --example fastbloom
//! ```
//!
//! A filter sized for memory (about half its bits set) is already close to incompressible:
//! its full frame is the raw bits plus a header, and zstd does no better. Its deltas are
//! sparse, and there the codings pay.

use bloomwire::{
    BitArray, BloomFilter, Encoder, Error, FrameView, HashFamily, Limits, Params, Receiver, Sender,
    Update,
};

const KEYS: u64 = 100_000;
const FP: f64 = 0.01;
const SEED: u128 = 0x5eed_0ffa_57b1;

fn key(i: u64) -> String {
    format!("user:{i}")
}

/// The fastbloom filter's bits as a bloomwire filter of the opaque family, with the hash
/// count fastbloom uses as the header's (informational) k.
fn opaque_of(f: &fastbloom::BloomFilter, n: u64) -> BloomFilter {
    let m = f.num_bits() as u64;
    let bits = BitArray::from_words(f.as_slice().to_vec(), m).expect("whole words");
    let params = Params::standard(m, f.num_hashes(), HashFamily::opaque()).expect("valid m, k");
    BloomFilter::from_parts(params, bits, n).expect("m bits")
}

/// The application's metadata: what a fastbloom receiver needs to query the bits.
fn metadata(f: &fastbloom::BloomFilter) -> Vec<u8> {
    format!("fastbloom/0.17 hashes={} seed={SEED:#x}", f.num_hashes()).into_bytes()
}

/// The receiver's side: a fastbloom filter from the bits and the metadata.
fn rebuild(bits: &BitArray, metadata: &[u8]) -> fastbloom::BloomFilter {
    let text = std::str::from_utf8(metadata).expect("text metadata");
    let field = |name: &str| {
        text.split(' ')
            .find_map(|kv| kv.strip_prefix(name))
            .expect("field present")
    };
    let hashes: u32 = field("hashes=").parse().expect("a count");
    let seed = u128::from_str_radix(field("seed=0x"), 16).expect("hex seed");
    fastbloom::BloomFilter::from_vec(bits.words().to_vec())
        .seed(&seed)
        .hashes(hashes)
}

fn zstd3(bytes: &[u8]) -> usize {
    zstd::bulk::compress(bytes, 3).expect("zstd").len()
}

fn main() {
    // The sender's filter, sized for memory: fastbloom's own choice of m and k for 1%.
    let mut f = fastbloom::BloomFilter::with_false_pos(FP)
        .seed(&SEED)
        .expected_items(KEYS as usize);
    for i in 0..KEYS {
        f.insert(&key(i));
    }
    let meta = metadata(&f);
    let mut sender: Sender = Sender::new(Encoder::new().metadata(meta.clone()), 100);
    let mut receiver: Receiver = Receiver::new(Limits::default());

    let first = opaque_of(&f, KEYS);
    let m = first.m();
    let full = sender.next_frame(&first).expect("a frame").to_bytes();
    let raw = first.bits().to_bytes();
    println!(
        "fastbloom: m = {m} bits, k = {}, {KEYS} keys, {:.1}% of the bits set",
        f.num_hashes(),
        100.0 * first.bits().count_ones() as f64 / m as f64
    );
    println!(
        "full frame: {} bytes ({}); raw bits {} bytes; zstd -3 of the bits {} bytes",
        full.len(),
        FrameView::parse(&full, &Limits::default())
            .expect("a frame")
            .header()
            .coding,
        raw.len(),
        zstd3(&raw)
    );
    assert!(matches!(
        receiver.receive(&full),
        Ok(Update::Full { generation: 1, .. })
    ));

    // 1% more keys: the delta is sparse.
    for i in KEYS..KEYS + KEYS / 100 {
        f.insert(&key(i));
    }
    let second = opaque_of(&f, KEYS + KEYS / 100);
    let delta = sender.next_frame(&second).expect("a frame").to_bytes();
    let xor = second.xor(&first).expect("same shape");
    println!(
        "delta after {} more keys: {} bytes; {} bits changed; the XOR raw {} bytes, \
         zstd -3 of it {} bytes; zstd -3 of the new bits {} bytes",
        KEYS / 100,
        delta.len(),
        xor.count_ones(),
        xor.byte_len(),
        zstd3(&xor.to_bytes()),
        zstd3(&second.bits().to_bytes())
    );
    assert_eq!(
        receiver.receive(&delta),
        Ok(Update::Delta { generation: 2 })
    );
    assert!(delta.len() * 5 < full.len());

    // The receiver: bloomwire carries the bits, refuses to query them, and fastbloom does.
    let held = receiver.filter().expect("a filter");
    assert_eq!(held.bits(), second.bits());
    assert_eq!(held.try_contains(key(0)), Err(Error::OpaqueHashFamily));
    let header = FrameView::parse(&delta, &Limits::default())
        .expect("a frame")
        .header()
        .clone();
    let g = rebuild(held.bits(), header.metadata.as_deref().expect("metadata"));
    let total = KEYS + KEYS / 100;
    assert!(
        (0..total).all(|i| g.contains(&key(i))),
        "no false negatives"
    );
    let false_positives = (total..total + 100_000)
        .filter(|&i| g.contains(&key(i)))
        .count();
    println!(
        "receiver: all {total} keys found by the rebuilt fastbloom filter; \
         {false_positives} false positives in 100000 other keys; \
         bloomwire's own query: {:?}",
        held.try_contains(key(0))
    );
}
