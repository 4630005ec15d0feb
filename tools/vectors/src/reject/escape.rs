//! Reject vectors of coding 11, escape (spec section 4.15).

use bloomwire::{BitCoding, BloomFilter, Coding, IndexScheme, Params};

use super::{field, plain, Case, Kit};
use crate::raw_frame::{varint, RawFrame};
use crate::{key, xxh};

/// Each check of coding 11's decoder.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let escaped = || {
        let mut f = BloomFilter::new(
            Params::standard(1000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
        );
        (0..100).for_each(|i| f.insert(key(i)));
        RawFrame::from_frame(&f, Coding::Escape)
    };
    // m = 13: two bytes, carried by states 0 and 1; states 2 and 3 and the secondary
    // state must be zero. The payload is the five states alone.
    let states_alone = || {
        let mut f = BloomFilter::new(
            Params::standard(13, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
        );
        (0..3).for_each(|i| f.insert(key(i)));
        let r = RawFrame::from_frame(&f, Coding::Escape);
        assert_eq!(r.payload.len(), 8, "the states alone");
        r
    };
    vec![
        (
            "escape_shorter_than_states",
            kit.coded_with(Coding::Escape, &|r| {
                r.payload.truncate(7);
            }),
            field("payload length"),
        ),
        (
            "escape_state_holds_more",
            {
                // State 0's bit 8, above its carried byte.
                let mut r = states_alone();
                r.payload[1] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_idle_state_not_zero",
            {
                // State 2 carries no byte (n = 2): u[2], bits 24 .. 35, must be 0.
                let mut r = states_alone();
                r.payload[3] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_secondary_state_off",
            {
                // The secondary state is bits 48 .. 58.
                let mut r = states_alone();
                r.payload[6] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_byte_left",
            kit.coded_with(Coding::Escape, &|r| {
                r.payload.push(0);
            }),
            plain("CorruptPayload"),
        ),
        (
            "escape_ends_early",
            {
                let mut r = escaped();
                r.payload.truncate(r.payload.len() - 1);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_padding_set",
            {
                let mut r = escaped();
                // The stream ends inside its last byte; the byte's top bit is padding.
                let last = r.payload.len() - 1;
                assert!(r.payload[last] < 0x80, "padding in the last byte");
                r.payload[last] |= 0x80;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_bit_past_m",
            kit.bit_past_m(BitCoding::Escape),
            plain("CorruptPayload"),
        ),
        (
            "chunked_escape",
            {
                let mut r = kit.coded(Coding::Escape);
                r.fixed[10] = 1;
                r.into()
            },
            field("flags"),
        ),
    ]
}
