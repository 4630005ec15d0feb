//! `bw_inspect`: everything a frame says, as the program's `inspect` shows it: the header's
//! fields, the checksum and tag status, how full the decoded filter (or delta) is, and the
//! first check it fails.

use core::ffi::c_char;
use std::ffi::CString;

use bloomwire::{
    BaseHash, Error, FrameHeader, FrameKind, FrameView, Limits, Message, Tag, Verifier,
};

use crate::decode::{on_frame, Checks};
use crate::error::{c_string, guard, guard_void, Fail};
use crate::limits::Limits as CLimits;
use crate::plan::layout_id;
use crate::ptr::{free_handle, handle, Out};
use crate::status::Status;

/// `BW_TAG_ABSENT`: no tag (flags bit 2 clear).
pub const TAG_ABSENT: i32 = 0;
/// `BW_TAG_UNVERIFIED`: a tag, read without a key.
pub const TAG_UNVERIFIED: i32 = 1;
/// `BW_TAG_VERIFIED`: a tag the key verified.
pub const TAG_VERIFIED: i32 = 2;
/// `BW_TAG_BAD`: a tag the key does not give.
pub const TAG_BAD: i32 = 3;
/// `BW_TAG_UNCHECKED`: a tag not checked (an earlier check failed).
pub const TAG_UNCHECKED: i32 = 4;

/// `BW_CHECKSUM_OK`.
pub const CHECKSUM_OK: i32 = 0;
/// `BW_CHECKSUM_MISMATCH`.
pub const CHECKSUM_MISMATCH: i32 = 1;
/// `BW_CHECKSUM_MISSING`: the input ends before the checksum.
pub const CHECKSUM_MISSING: i32 = 2;

/// A frame's description (`bw_frame_info`), which owns the strings and the metadata its
/// `bw_frame_desc` points to.
#[derive(Debug)]
pub struct FrameInfo {
    header: FrameHeader,
    checksum: Option<(u32, u32)>,
    tag: i32,
    ones: Option<u64>,
    problem: Option<Error>,
    coding_name: CString,
    coding_profile: CString,
    coding_status: CString,
    problem_message: Option<CString>,
    problem_field: Option<CString>,
}

/// What a frame says (`bw_frame_desc`); pointers are owned by the `bw_frame_info`.
#[repr(C)]
#[derive(Debug)]
pub struct FrameDesc {
    /// `BW_FRAME_FULL` (0) or `BW_FRAME_DELTA` (1).
    pub kind: u32,
    /// The generation the frame carries (or produces, for a delta).
    pub generation: u64,
    /// Flags bit 1: the sender's numbering starts again here.
    pub restart: bool,
    /// A delta's base generation (0 for a full frame).
    pub base_generation: u64,
    /// A delta's base digest.
    pub base_digest: u32,
    /// A delta's result digest.
    pub result_digest: u32,
    /// The header's filter type: 0 to 2 the layouts, 3 counting.
    pub filter_type: u8,
    /// `bw_layout` (for a counting frame, its counters' layout).
    pub layout: i32,
    /// Bits per counter; 0 for a Bloom filter.
    pub counter_width: u8,
    /// Base hash wire id: 0 opaque, 1 xxHash64, 2 SipHash-2-4.
    pub base_hash: u8,
    /// The xxHash64 seed.
    pub seed: u64,
    /// SipHash's k0.
    pub siphash_k0: u64,
    /// SipHash's k1.
    pub siphash_k1: u64,
    /// Index scheme wire id: 0 double hashing, 1 enhanced.
    pub index_scheme: u8,
    /// Bits, or counters.
    pub m: u64,
    /// Hash functions per key.
    pub k: f64,
    /// `ceil(k)`.
    pub k_ceil: u32,
    /// Keys the sender inserted.
    pub n: u64,
    /// The coding's wire id.
    pub coding: u8,
    /// The coding's name.
    pub coding_name: *const c_char,
    /// The profile that has the coding: `"core"` or `"full"`.
    pub coding_profile: *const c_char,
    /// Whether encoders write it: `"active"` or `"deprecated"` (read, not written).
    pub coding_status: *const c_char,
    /// Whether the header carries q0.
    pub has_q0: bool,
    /// The quantized zero probability, `p0 * 65536`.
    pub q0: u16,
    /// `log2` of the chunk size in bits; 0 when the payload is not chunked.
    pub chunk_shift: u8,
    /// Chunks of the payload (1 when not chunked).
    pub chunk_count: u64,
    /// Header bytes.
    pub header_len: u64,
    /// Payload bytes.
    pub payload_len: u64,
    /// Bytes of the whole frame (header, payload, checksum, tag).
    pub frame_len: u64,
    /// `bw_checksum_status`.
    pub checksum: i32,
    /// The CRC-32C the frame stores (0 when missing).
    pub checksum_stored: u32,
    /// The CRC-32C of its bytes (0 when missing).
    pub checksum_computed: u32,
    /// `bw_tag_status`.
    pub tag: i32,
    /// The application metadata (NULL when absent).
    pub metadata: *const u8,
    /// Its length.
    pub metadata_len: usize,
    /// Whether the payload decoded (then `ones` holds).
    pub decoded: bool,
    /// One bits (a delta: bits that change; counting: non-zero counters).
    pub ones: u64,
    /// The first check the frame fails as a decoder checks it (`BW_OK` when none; a sound
    /// delta is `BW_OK` here, where `bw_decode` says `BW_ERR_UNEXPECTED_DELTA`), or
    /// `BW_ERR_TRAILING_BYTES`.
    pub problem: Status,
    /// The problem's message (NULL when none).
    pub problem_message: *const c_char,
    /// The problem's header field (NULL when none).
    pub problem_field: *const c_char,
}

/// The one bits (or non-zero counters) of what a message carries.
fn message_ones(message: &Message) -> Option<u64> {
    Some(match message {
        Message::Full(d) => d.filter.bits().count_ones(),
        Message::Delta(d) => d.xor.count_ones(),
        Message::Counting(d) => d.filter.counters().iter().filter(|&&c| c != 0).count() as u64,
        Message::CountingDelta(d) => d.xor.iter().filter(|&&c| c != 0).count() as u64,
        _ => return None,
    })
}

/// The description of `bytes`, or the error that stops its header.
fn describe(bytes: &[u8], checks: &Checks) -> Result<FrameInfo, Fail> {
    // The header alone without limits, so that any frame the format allows is described;
    // a header that does not parse is reported as the decoder reports it.
    let header = match FrameHeader::parse(bytes, &Limits::unlimited()) {
        Ok(header) => header,
        Err(e) => {
            let view = match &checks.key {
                None => FrameView::parse(bytes, &checks.limits).err(),
                Some(key) => {
                    FrameView::parse(bytes, &Verifier::new(key.clone(), checks.limits)).err()
                }
            };
            return Err(view.unwrap_or(e).into());
        }
    };
    let checksum = header.checksums(bytes);
    let mut tag = match header.tag {
        Tag::Absent => TAG_ABSENT,
        _ if checks.key.is_some() => TAG_UNCHECKED,
        _ => TAG_UNVERIFIED,
    };
    let (header, ones, problem) = match checks.decode_prefix::<Message>(bytes) {
        Ok((message, used)) => {
            let header = message.header().clone();
            tag = match header.tag {
                Tag::Verified => TAG_VERIFIED,
                Tag::Unverified => TAG_UNVERIFIED,
                _ => TAG_ABSENT,
            };
            let trailing = (used != bytes.len()).then(|| Error::TrailingBytes {
                count: bytes.len() - used,
                offset: used,
            });
            (header, message_ones(&message), trailing)
        }
        Err(e) => {
            if matches!(e, Error::BadTag { .. }) {
                tag = TAG_BAD;
            }
            (header, None, Some(e))
        }
    };
    let problem_field = match &problem {
        Some(Error::InvalidField { field, .. })
        | Some(Error::BadVarint { field, .. })
        | Some(Error::LimitExceeded { field, .. }) => Some(c_string(field)),
        Some(Error::UnsupportedCoding { .. }) => Some(c_string("coding")),
        _ => None,
    };
    Ok(FrameInfo {
        coding_name: c_string(header.coding.name()),
        coding_profile: c_string(header.coding.profile().name()),
        coding_status: c_string(header.coding.status().name()),
        problem_message: problem.as_ref().map(|e| c_string(&e.to_string())),
        problem_field,
        header,
        checksum,
        tag,
        ones,
        problem,
    })
}

/// `bw_status bw_inspect(const uint8_t *frame, size_t len, const bw_limits *limits, const
/// uint8_t *key, size_t key_len, bw_frame_info **out)`: describe the frame at the start of
/// `frame` (any kind: full, delta, counting). The header is read without limits so that
/// any frame is described; the frame is then checked and decoded as `bw_decode` does
/// (within `limits`, with the key), and the first check it fails is the description's
/// `problem`, not the call's status. The call fails only when the header does not parse
/// (with the error a decoder gives).
///
/// # Safety
///
/// `frame` is NULL or `len` readable bytes; `limits` NULL or a live `bw_limits`; `key` NULL
/// or `key_len` readable bytes; `out` NULL or a writable `bw_frame_info *`.
#[no_mangle]
pub unsafe extern "C" fn bw_inspect(
    frame: *const u8,
    len: usize,
    limits: *const CLimits,
    key: *const u8,
    key_len: usize,
    out: *mut *mut FrameInfo,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { on_frame(frame, len, limits, key, key_len, out, describe) }
}

/// `bw_status bw_frame_info_get(const bw_frame_info *info, bw_frame_desc *out)`: the
/// description; its pointers stay valid until `info` is freed.
///
/// # Safety
///
/// `info` is NULL or a live `bw_frame_info`; `out` NULL or a writable `bw_frame_desc`.
#[no_mangle]
pub unsafe extern "C" fn bw_frame_info_get(info: *const FrameInfo, out: *mut FrameDesc) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (info, out) = unsafe { (handle(info, "info")?, Out::new(out, "out")?) };
        let h = &info.header;
        let p = &h.params;
        let (base_generation, base_digest, result_digest, kind) = match h.kind {
            FrameKind::Full => (0, 0, 0, 0),
            FrameKind::Delta {
                base_generation,
                base_digest,
                result_digest,
            } => (base_generation, base_digest, result_digest, 1),
        };
        let (seed, k0, k1) = match p.family().base {
            BaseHash::Xxh64 { seed } => (seed, 0, 0),
            BaseHash::SipHash24 { k0, k1 } => (0, k0, k1),
            _ => (0, 0, 0),
        };
        let (stored, computed) = info.checksum.unwrap_or((0, 0));
        let problem = info.problem.as_ref();
        out.put(FrameDesc {
            kind,
            generation: h.generation,
            restart: h.restart,
            base_generation,
            base_digest,
            result_digest,
            filter_type: h.filter_type(),
            layout: layout_id(p.layout()),
            counter_width: h.counter_width.unwrap_or(0),
            base_hash: p.family().base.id(),
            seed,
            siphash_k0: k0,
            siphash_k1: k1,
            index_scheme: p.family().scheme.id(),
            m: p.m(),
            k: p.k().to_f64(),
            k_ceil: p.k().ceil(),
            n: h.n,
            coding: h.coding.id(),
            coding_name: info.coding_name.as_ptr(),
            coding_profile: info.coding_profile.as_ptr(),
            coding_status: info.coding_status.as_ptr(),
            has_q0: h.q0.is_some(),
            q0: h.q0.unwrap_or(0),
            chunk_shift: h.chunk_shift.unwrap_or(0),
            chunk_count: h.chunk_count(),
            header_len: h.header_len as u64,
            payload_len: h.payload_len as u64,
            frame_len: h.frame_len() as u64,
            checksum: match info.checksum {
                None => CHECKSUM_MISSING,
                Some((s, c)) if s == c => CHECKSUM_OK,
                Some(_) => CHECKSUM_MISMATCH,
            },
            checksum_stored: stored,
            checksum_computed: computed,
            tag: info.tag,
            metadata: h
                .metadata
                .as_ref()
                .map_or(core::ptr::null(), |m| m.as_ptr()),
            metadata_len: h.metadata.as_ref().map_or(0, Vec::len),
            decoded: info.ones.is_some(),
            ones: info.ones.unwrap_or(0),
            problem: problem.map_or(Status::Ok, Status::of),
            problem_message: info
                .problem_message
                .as_deref()
                .map_or(core::ptr::null(), |m| m.as_ptr()),
            problem_field: info
                .problem_field
                .as_deref()
                .map_or(core::ptr::null(), |f| f.as_ptr()),
        });
        Ok(())
    })
}

/// `void bw_frame_info_free(bw_frame_info *info)`; NULL does nothing.
///
/// # Safety
///
/// `info` is NULL or a live `bw_frame_info` no other call uses; not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_frame_info_free(info: *mut FrameInfo) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(info) });
}
