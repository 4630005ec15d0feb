//! The checks of the fuzz target `capi_decode` (fuzz/fuzz_targets/capi_decode.rs), shared
//! with the replay of its committed corpus on stable (tests/fuzz_corpus.rs): the C
//! library's decode entry points on arbitrary bytes, called as C calls them, through
//! `extern "C"` functions with raw pointers. No call may panic (a panic caught at the
//! boundary is `BW_ERR_INTERNAL`, a finding), and the entry points agree: a frame
//! `bw_decode` accepts is described by `bw_inspect` without a problem, a full frame
//! `bw_inspect` finds sound decodes, and a receiver given it holds the same filter.

use core::ptr::{null, null_mut};

use bloomwire_capi::*;

/// The key the first input byte may ask for.
const KEY: [u8; 32] = [7; 32];

fn filter_bytes(f: *const Filter) -> Vec<u8> {
    let mut len = 0;
    // SAFETY: `f` is a live filter; a NULL buffer with capacity 0 asks for the length.
    let status = unsafe { bw_filter_export(f, null_mut(), 0, &mut len) };
    assert!(matches!(status, Status::Ok | Status::BufferTooSmall));
    let mut bytes = vec![0u8; len];
    // SAFETY: `bytes` holds `len` writable bytes.
    let status = unsafe { bw_filter_export(f, bytes.as_mut_ptr(), len, &mut len) };
    assert_eq!(status, Status::Ok);
    bytes
}

/// The checks of one input.
pub fn check(data: &[u8]) {
    let Some((&mode, frame)) = data.split_first() else {
        return;
    };
    let (key, key_len) = if mode & 1 == 1 {
        (KEY.as_ptr(), KEY.len())
    } else {
        (null(), 0)
    };
    // SAFETY: every pointer below is a live local, a slice of the input with its length,
    // or a handle these calls returned, freed once.
    unsafe {
        // Small limits, so that an input is decoded in microseconds.
        let mut limits = null_mut();
        assert_eq!(bw_limits_new(&mut limits), Status::Ok);
        assert_eq!(bw_limits_set_max_m(limits, 1 << 16), Status::Ok);
        assert_eq!(bw_limits_set_max_payload(limits, 1 << 16), Status::Ok);
        // Bit 1: a decoder of the Core profile.
        if mode & 2 != 0 {
            assert_eq!(bw_limits_set_profile(limits, c"core".as_ptr()), Status::Ok);
        }

        let mut filter = null_mut();
        let decoded = bw_decode(
            frame.as_ptr(),
            frame.len(),
            limits,
            key,
            key_len,
            &mut filter,
        );
        assert_ne!(decoded, Status::Internal, "{:?}", frame);
        assert_eq!(decoded == Status::Ok, !filter.is_null());

        let mut info = null_mut();
        let inspected = bw_inspect(frame.as_ptr(), frame.len(), limits, key, key_len, &mut info);
        assert_ne!(inspected, Status::Internal);
        if decoded == Status::Ok {
            assert_eq!(inspected, Status::Ok);
        }
        let mut desc: Option<FrameDesc> = None;
        if inspected == Status::Ok {
            let mut d = core::mem::MaybeUninit::<FrameDesc>::uninit();
            assert_eq!(bw_frame_info_get(info, d.as_mut_ptr()), Status::Ok);
            let d = d.assume_init();
            assert_ne!(d.problem, Status::Internal);
            if decoded == Status::Ok {
                assert_eq!(d.problem, Status::Ok);
                assert_eq!(d.frame_len as usize, frame.len());
                let mut ones = 0;
                assert_eq!(bw_filter_count_ones(filter, &mut ones), Status::Ok);
                assert_eq!(d.ones, ones);
            } else if d.problem == Status::Ok && d.kind == 0 {
                panic!("inspect finds a sound full frame that decode refuses: {decoded:?}");
            }
            desc = Some(d);
        }

        // A receiver of either kind takes a full frame to the same filter, and changes
        // nothing when it refuses one.
        let mut receiver = null_mut();
        assert_eq!(
            bw_receiver_new(KIND_ANY, limits, key, key_len, &mut receiver),
            Status::Ok
        );
        let received = bw_receiver_receive(receiver, frame.as_ptr(), frame.len(), null_mut());
        assert_ne!(received, Status::Internal);
        let mut held = null_mut();
        assert_eq!(bw_receiver_filter(receiver, &mut held), Status::Ok);
        assert_eq!(received == Status::Ok, !held.is_null());
        if received == Status::Ok {
            assert_eq!(decoded, Status::Ok);
            assert_eq!(filter_bytes(held), filter_bytes(filter));
        }
        if let (Some(d), Status::Ok) = (desc, decoded) {
            let mut fi = core::mem::MaybeUninit::<FilterInfo>::uninit();
            assert_eq!(bw_filter_get_info(filter, fi.as_mut_ptr()), Status::Ok);
            let fi = fi.assume_init();
            assert_eq!((fi.m, fi.n), (d.m, d.n));
        }

        bw_filter_free(held);
        bw_receiver_free(receiver);
        bw_frame_info_free(info);
        bw_filter_free(filter);
        bw_limits_free(limits);
    }
}
