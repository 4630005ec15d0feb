//! Reject vectors of coding 9, small (spec section 4.13).

use bloomwire::{BitCoding, BloomFilter, Coding, IndexScheme, Params};

use super::{field, plain, Case, Kit};
use crate::raw_frame::{varint, RawFrame};
use crate::{key, xxh};

/// Each check of coding 9's decoder.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let longer = || {
        let mut f = BloomFilter::new(
            Params::standard(1000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
        );
        (0..100).for_each(|i| f.insert(key(i)));
        RawFrame::from_frame(&f, Coding::Small)
    };
    vec![
        (
            "small_shorter_than_states",
            kit.coded_with(Coding::Small, &|r| {
                r.payload.truncate(5);
            }),
            field("payload length"),
        ),
        (
            "small_state_off",
            {
                // m = 13: four nibbles, one in each state, whose bits 4 .. 11 must be zero;
                // state 0's bit 4 set.
                let mut f = BloomFilter::new(
                    Params::standard(13, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
                );
                (0..3).for_each(|i| f.insert(key(i)));
                let mut r = RawFrame::from_frame(&f, Coding::Small);
                assert_eq!(r.payload.len(), 6, "the states alone");
                r.payload[0] ^= 1 << 4;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "small_byte_left",
            kit.coded_with(Coding::Small, &|r| {
                r.payload.push(0);
            }),
            plain("CorruptPayload"),
        ),
        (
            "small_ends_early",
            {
                let mut r = longer();
                r.payload.truncate(r.payload.len() - 1);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "small_padding_set",
            {
                // The stream ends inside its last byte; the byte's top bit is padding.
                let mut r = longer();
                let last = r.payload.len() - 1;
                assert!(r.payload[last] < 0x80, "padding in the last byte");
                r.payload[last] |= 0x80;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "small_bit_past_m",
            kit.bit_past_m(BitCoding::Small),
            plain("CorruptPayload"),
        ),
        (
            "chunked_small",
            {
                let mut r = kit.coded(Coding::Small);
                r.fixed[10] = 1;
                r.into()
            },
            field("flags"),
        ),
    ]
}
