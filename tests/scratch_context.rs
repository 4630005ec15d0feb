//! The caller's encoder context (`Scratch`): the memory of its frames goes back to it and
//! to no thread's pool, its limit holds, and its frames are byte for byte those of the
//! plain entry points.

use bloomwire::{
    BitArray, BitCoding, BloomFilter, Chunking, CountingBloomFilter, Encoder, HashFamily, Params,
    Scratch, Sender, SummarySender,
};
use bloomwire_testkit::splitmix64;

/// A filter of `m` bits with about a fraction `p1` of them set, at random.
fn filter(m: u64, p1: f64, seed: u64) -> BloomFilter {
    let mut state = m ^ seed;
    let limit = (p1 * u64::MAX as f64) as u64;
    let mut words: Vec<u64> = (0..m.div_ceil(64))
        .map(|_| {
            (0..64).fold(0u64, |w, b| {
                w | u64::from(splitmix64(&mut state) < limit) << b
            })
        })
        .collect();
    if !m.is_multiple_of(64) {
        *words.last_mut().unwrap() &= (1 << (m % 64)) - 1;
    }
    let bits = BitArray::from_words(words, m).unwrap();
    let n = (m as f64 * p1 / 3.0) as u64;
    BloomFilter::from_parts(
        Params::standard(m, 3, HashFamily::default()).unwrap(),
        bits,
        n,
    )
    .unwrap()
}

/// Run `f` on a thread of its own, whose pool starts empty.
fn on_fresh_thread(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(f).join().unwrap();
}

#[test]
fn a_recycled_frame_is_the_next_encodes_memory() {
    on_fresh_thread(|| {
        let f = filter(1 << 20, 0.1, 1);
        let encoder = Encoder::new();
        let mut scratch = Scratch::new();
        let frame = encoder.encode_in(&mut scratch, &f).unwrap();
        let kept = scratch.bytes();
        let (at, capacity) = (frame.payload().as_ptr(), frame.payload().len());
        scratch.recycle(frame);
        // The context holds the payload now, at least its length more.
        assert!(scratch.bytes() >= kept + capacity);
        let after_recycle = scratch.bytes();
        // The next encode takes it: the same memory, and the context's count goes down.
        let again = encoder.encode_in(&mut scratch, &f).unwrap();
        assert_eq!(again.payload().as_ptr(), at);
        assert!(scratch.bytes() < after_recycle);
        scratch.recycle(again);
        assert_eq!(scratch.bytes(), after_recycle);
        // The thread's own pool was never touched.
        assert_eq!(bloomwire::thread_scratch_bytes(), 0);
        assert_eq!(scratch.release(), after_recycle);
        assert_eq!(scratch.bytes(), 0);
    });
}

#[test]
fn a_dropped_frame_of_a_context_goes_to_no_pool() {
    let f = filter(1 << 20, 0.1, 2);
    let mut scratch = Scratch::new();
    let frame = Encoder::new().encode_in(&mut scratch, &f).unwrap();
    let plain = Encoder::new().encode(&f).unwrap();
    let held = scratch.bytes();
    on_fresh_thread(move || {
        drop(frame);
        assert_eq!(bloomwire::thread_scratch_bytes(), 0);
        // A frame of the plain entry points, by contrast, goes to the pool of the thread
        // that drops it (the default context, documented).
        drop(plain);
        assert!(bloomwire::thread_scratch_bytes() > 0);
    });
    // Nor did the frame go back to its context: only recycle does that.
    assert_eq!(scratch.bytes(), held);
}

#[test]
fn a_context_keeps_at_most_its_limit() {
    on_fresh_thread(|| {
        // 10^8 bits, a tenth set: a payload of about 5.9 MB a frame.
        let f = filter(100_000_000, 0.1, 3);
        let encoder = Encoder::new();
        let mut scratch = Scratch::new();
        assert_eq!(scratch.limit(), 64 << 20);
        let mut frames = Vec::new();
        for _ in 0..20 {
            frames.push(encoder.encode_in(&mut scratch, &f).unwrap());
        }
        for frame in frames {
            scratch.recycle(frame);
            assert!(scratch.bytes() <= 64 << 20);
        }
        // What twenty frames gave back, kept up to the limit and no further.
        assert!(scratch.bytes() >= 4 * 5_000_000);
        let mut small = Scratch::with_limit(1 << 20);
        let frame = encoder.encode_in(&mut small, &f).unwrap();
        assert!(small.bytes() <= 1 << 20);
        small.recycle(frame);
        assert!(small.bytes() <= 1 << 20);
        assert_eq!(bloomwire::thread_scratch_bytes(), 0);
    });
}

/// Equal frames and equal bytes, or both errors.
fn same(
    with: bloomwire::Result<bloomwire::Frame>,
    without: bloomwire::Result<bloomwire::Frame>,
    scratch: &mut Scratch,
    what: &str,
) {
    match (with, without) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.to_bytes(), b.to_bytes(), "{what}");
            assert_eq!(a, b, "{what}");
            scratch.recycle(a);
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
        (a, b) => panic!(
            "{what}: {:?} against {:?}",
            a.map(|f| f.encoded_len()),
            b.map(|f| f.encoded_len())
        ),
    }
}

#[test]
fn a_context_changes_not_one_byte() {
    // One context for every encode, recycling every frame: each payload is coded into
    // memory an earlier, different one left.
    let mut scratch = Scratch::new();
    let filters: Vec<BloomFilter> = [0.0005, 0.02, 0.1, 0.3, 0.5, 0.7]
        .iter()
        .enumerate()
        .map(|(i, &p1)| filter(200_077, p1, i as u64))
        .collect();
    for (i, f) in filters.iter().enumerate() {
        let encoders = [
            ("default", Encoder::new()),
            ("smallest", Encoder::new().smallest()),
            (
                "chunked",
                Encoder::new().chunking(Chunking::Shift(14)).threads(2),
            ),
            ("budget", Encoder::new().budget(1000)),
        ];
        for (name, e) in encoders.iter().chain(
            BitCoding::ALL
                .iter()
                .map(|&c| ("coding", Encoder::new().coding(c)))
                .collect::<Vec<_>>()
                .iter(),
        ) {
            let what = format!("filter {i}, {name} {:?}", e);
            same(
                e.encode_generation_in(&mut scratch, f, 7),
                e.encode_generation(f, 7),
                &mut scratch,
                &what,
            );
            let base = &filters[(i + 1) % filters.len()];
            let base = if base.params().m() == f.params().m() {
                base
            } else {
                f
            };
            same(
                e.encode_delta_in(&mut scratch, base, 3, f, 4),
                e.encode_delta(base, 3, f, 4),
                &mut scratch,
                &what,
            );
        }
    }
    // Deltas between generations of one filter.
    let a = filter(300_000, 0.2, 9);
    let mut b = a.clone();
    (0..500u32).for_each(|i| b.insert(i.to_le_bytes()));
    let e = Encoder::new();
    same(
        e.encode_delta_in(&mut scratch, &a, 1, &b, 2),
        e.encode_delta(&a, 1, &b, 2),
        &mut scratch,
        "delta",
    );
    // A sender's generations, the plain one's and the context's side by side.
    let (mut plain, mut ctx) = (
        Sender::new(Encoder::new(), 4),
        Sender::new(Encoder::new(), 4),
    );
    let mut g = a.clone();
    for step in 0..9u32 {
        (0..200 * step).for_each(|i| g.insert((step * 7919 + i).to_le_bytes()));
        same(
            ctx.next_frame_in(&mut scratch, &g),
            plain.next_frame(&g),
            &mut scratch,
            "sender",
        );
    }
    // Generations given as flipped positions, and a Summary Cache's sender.
    let (mut plain, mut ctx) = (
        Sender::new(Encoder::new(), 5),
        Sender::new(Encoder::new(), 5),
    );
    same(
        ctx.next_frame_in(&mut scratch, &a),
        plain.next_frame(&a),
        &mut scratch,
        "first",
    );
    for step in 1..8u64 {
        let flips: Vec<u64> = (0..50 * step).map(|i| i * 997 + step).collect();
        same(
            ctx.next_frame_with_flips_in(&mut scratch, &flips, 1000 + step),
            plain.next_frame_with_flips(&flips, 1000 + step),
            &mut scratch,
            "flips",
        );
    }
    let counting = CountingBloomFilter::new(
        Params::standard(50_000, 3, HashFamily::default()).unwrap(),
        4,
    )
    .unwrap();
    let mut plain = SummarySender::new(counting.clone(), Encoder::new(), 3);
    let mut ctx = SummarySender::new(counting, Encoder::new(), 3);
    for step in 0..6u32 {
        for i in 0..100 * step {
            plain.insert((step * 7919 + i).to_le_bytes());
            ctx.insert((step * 7919 + i).to_le_bytes());
        }
        same(
            ctx.next_frame_in(&mut scratch),
            plain.next_frame(),
            &mut scratch,
            "summary",
        );
    }
    // Counting filters.
    let params = Params::standard(100_000, 3, HashFamily::default()).unwrap();
    let mut c = CountingBloomFilter::new(params, 4).unwrap();
    (0..8_000u32).for_each(|i| c.insert(i.to_le_bytes()));
    let mut d = c.clone();
    (8_000..8_100u32).for_each(|i| d.insert(i.to_le_bytes()));
    let ce: Encoder<CountingBloomFilter> = Encoder::new();
    same(
        ce.encode_in(&mut scratch, &c),
        ce.encode(&c),
        &mut scratch,
        "counting",
    );
    same(
        ce.encode_delta_in(&mut scratch, &c, 1, &d, 2),
        ce.encode_delta(&c, 1, &d, 2),
        &mut scratch,
        "counting delta",
    );
    let (mut plain, mut ctx) = (Sender::new(ce.clone(), 4), Sender::new(ce, 4));
    for f in [&c, &d, &c] {
        same(
            ctx.next_frame_in(&mut scratch, f),
            plain.next_frame(f),
            &mut scratch,
            "counting sender",
        );
    }
    // A chunked frame coded a chunk at a time.
    let f = &filters[2];
    let ones = f.params().m() - f.bits().count_zeros();
    let plan = Encoder::new()
        .chunked_frame(f.params().clone(), f.n(), ones, 14)
        .unwrap();
    let coded: Vec<Vec<u8>> = (0..plan.chunk_count())
        .map(|i| {
            let r = plan.chunk_bits(i);
            let chunk = f.bits().slice(r.start, r.end - r.start);
            let with = plan.encode_chunk_in(&mut scratch, i, &chunk).unwrap();
            assert_eq!(with, plan.encode_chunk(i, &chunk).unwrap());
            with
        })
        .collect();
    same(
        plan.assemble_in(&mut scratch, &coded),
        plan.assemble(&coded),
        &mut scratch,
        "chunked frame",
    );
    assert!(scratch.bytes() > 0 && scratch.bytes() <= 64 << 20);
}
