//! Authenticated frames (flags bit 2, spec §2.5): a keyed BLAKE2b tag after the checksum.

use blake2::digest::consts::U16;
use blake2::digest::Mac;
use blake2::Blake2bMac;
use zeroize::Zeroizing;

use crate::error::{Error, Result};

use super::limits::Limits;

/// Header `flags` bit 2: the frame is authenticated: a [`TAG_LEN`]-byte keyed BLAKE2b tag
/// follows the checksum and covers every byte before it (spec §2.5).
pub const FLAG_TAGGED: u8 = 0x04;

/// Bytes of the authentication tag of a tagged frame.
pub const TAG_LEN: usize = 16;

/// Offset of the flags byte, which says whether a frame is tagged.
pub(crate) const FLAGS_OFFSET: usize = 10;

type Blake2bMac128 = Blake2bMac<U16>;

/// A secret key that a sender and its receivers share to authenticate frames: 32 bytes,
/// used as the key of keyed BLAKE2b (RFC 7693) with a 16-byte tag (spec §2.5).
///
/// An [`Encoder`](crate::Encoder) with a key tags its frames
/// ([`Encoder::key`](crate::Encoder::key)); a [`Receiver`](crate::Receiver), a
/// [`Verifier`] or a `FrameCodec` with the key refuses frames without a tag
/// ([`Error::MissingTag`]) and frames whose tag is wrong ([`Error::BadTag`]) before it
/// decodes their payload. The key's bytes are zeroed when it is dropped, and its `Debug`
/// form does not show them. Make the key with a cryptographic random number generator,
/// and change it when a receiver must stop trusting what was sent before (spec §2.5: a
/// tag does not stop replays).
///
/// ```
/// use bloomwire::FrameKey;
/// let key = FrameKey::new([7; 32]);
/// assert_eq!(format!("{key:?}"), "FrameKey(..)");
/// ```
#[derive(Clone)]
pub struct FrameKey(Zeroizing<[u8; 32]>);

impl FrameKey {
    /// The key with these bytes.
    pub fn new(bytes: [u8; 32]) -> Self {
        FrameKey(Zeroizing::new(bytes))
    }

    /// A new random key, from the operating system's cryptographic random number generator;
    /// [`Error::InvalidParameter`] if the system has none to give.
    ///
    /// ```
    /// let a = bloomwire::FrameKey::generate().unwrap();
    /// let b = bloomwire::FrameKey::generate().unwrap();
    /// assert_ne!(a, b);
    /// ```
    pub fn generate() -> Result<Self> {
        let mut bytes = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut bytes[..])
            .map_err(|e| crate::error::invalid("key", format!("no random bytes: {e}")))?;
        Ok(FrameKey(bytes))
    }

    /// The key's 32 bytes, for the caller to store (in a secret store, never in a log).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    fn mac(&self) -> Blake2bMac128 {
        <Blake2bMac128 as blake2::digest::KeyInit>::new_from_slice(&self.0[..])
            .expect("a 32-byte key is within BLAKE2b's 64")
    }

    /// The tag of `bytes` (every byte of a frame before its tag).
    pub(crate) fn tag(&self, bytes: &[&[u8]]) -> [u8; TAG_LEN] {
        let mut mac = self.mac();
        bytes.iter().for_each(|b| mac.update(b));
        mac.finalize().into_bytes().into()
    }

    /// What a header remembers of the key that verified its frame: a keyed hash of a
    /// constant, which tells keys apart without holding one.
    pub(crate) fn id(&self) -> KeyId {
        KeyId(self.tag(&[b"bloomwire: the key that verified this frame"]))
    }

    /// Whether `tag` is the tag of `bytes`, compared in constant time.
    pub(crate) fn verify(&self, bytes: &[u8], tag: &[u8]) -> bool {
        let mut mac = self.mac();
        mac.update(bytes);
        mac.verify_slice(tag).is_ok()
    }
}

/// The [`FrameKey::id`] of the key a frame's tag was verified with.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KeyId([u8; TAG_LEN]);

impl core::fmt::Debug for KeyId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeyId(..)")
    }
}

impl core::fmt::Debug for FrameKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FrameKey(..)")
    }
}

/// A key from a slice of exactly 32 bytes (read from a file or a secret store); another
/// length is [`Error::InvalidParameter`].
///
/// ```
/// use bloomwire::FrameKey;
/// let bytes = vec![7u8; 32];
/// let key = FrameKey::try_from(&bytes[..]).unwrap();
/// assert_eq!(key, FrameKey::new([7; 32]));
/// assert!(FrameKey::try_from(&bytes[..31]).is_err());
/// ```
impl TryFrom<&[u8]> for FrameKey {
    type Error = Error;

    fn try_from(bytes: &[u8]) -> Result<Self> {
        let mut key = Zeroizing::new([0u8; 32]);
        if bytes.len() != key.len() {
            return Err(crate::error::invalid(
                "key",
                format!("{} bytes, where a key is 32", bytes.len()),
            ));
        }
        key.copy_from_slice(bytes);
        Ok(FrameKey(key))
    }
}

impl PartialEq for FrameKey {
    /// Compared in constant time.
    fn eq(&self, other: &Self) -> bool {
        use subtle::ConstantTimeEq;
        self.0.ct_eq(&*other.0).into()
    }
}

impl Eq for FrameKey {}

/// Whether a frame was authenticated (spec §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tag {
    /// The frame carries no tag (flags bit 2 clear).
    #[default]
    Absent,
    /// The frame carries a tag that was skipped, not checked: it was decoded without a
    /// key. Nothing says who made it.
    Unverified,
    /// The frame's tag was checked with the decoder's key: the frame was made by a holder
    /// of the key (not necessarily just now: a tag does not stop replays).
    Verified,
}

/// A decoder's [`Limits`] and the key frames must be tagged with: pass one where a
/// decoding function takes its checks ([`decode`](crate::decode),
/// [`decode_prefix`](crate::decode_prefix), [`decode_buf`](crate::decode_buf),
/// [`FrameView::parse`](crate::FrameView::parse)) to accept only frames tagged with the key.
///
/// The tag is checked after the header (against the limits), the frame's length and its
/// checksum, and before anything of the payload is read: an untagged frame is
/// [`Error::MissingTag`], a wrong tag [`Error::BadTag`].
///
/// ```
/// use bloomwire::{decode, BloomFilter, Decoded, Encoder, Error, FrameKey, HashFamily};
/// use bloomwire::{Limits, Params, Tag, Verifier};
/// let mut f = BloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap());
/// f.insert(b"key");
/// let key = FrameKey::new([42; 32]);
/// let wire = Encoder::new().key(key.clone()).encode(&f).unwrap().to_bytes();
/// let verifier = Verifier::new(key, Limits::default());
/// let back: Decoded = decode(&wire, &verifier).unwrap();
/// assert_eq!(back.header.tag, Tag::Verified);
/// // Without a key the tag is skipped, and the header says so.
/// let unchecked: Decoded = decode(&wire, &Limits::default()).unwrap();
/// assert_eq!(unchecked.header.tag, Tag::Unverified);
/// // Another key, or no tag at all, is refused.
/// let other = Verifier::new(FrameKey::new([1; 32]), Limits::default());
/// assert!(matches!(decode::<Decoded>(&wire, &other), Err(Error::BadTag { .. })));
/// let untagged = Encoder::new().encode(&f).unwrap().to_bytes();
/// assert!(matches!(decode::<Decoded>(&untagged, &verifier), Err(Error::MissingTag { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verifier {
    key: FrameKey,
    limits: Limits,
}

impl Verifier {
    /// Accept frames tagged with `key`, within `limits`.
    pub fn new(key: FrameKey, limits: Limits) -> Self {
        Verifier { key, limits }
    }
}

/// What a decoder checks a frame against: [`Limits`] alone (a tag is skipped), or a
/// [`Verifier`] (limits and a key). Sealed.
pub trait Checks: sealed::Sealed {
    /// The limits.
    fn limits(&self) -> &Limits;
    /// The key, if frames must be tagged with it.
    fn key(&self) -> Option<&FrameKey>;
}

impl Checks for Limits {
    fn limits(&self) -> &Limits {
        self
    }
    fn key(&self) -> Option<&FrameKey> {
        None
    }
}

impl Checks for Verifier {
    fn limits(&self) -> &Limits {
        &self.limits
    }
    fn key(&self) -> Option<&FrameKey> {
        Some(&self.key)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Limits {}
    impl Sealed for super::Verifier {}
}

/// The tag check of spec §2.5 on a whole frame of `len` bytes in `input` (its header,
/// length and checksum checked): with a key the frame must be tagged, with this key.
/// Returns what the header's [`Tag`] becomes.
pub(crate) fn check_tag(
    input: &[u8],
    len: usize,
    tagged: bool,
    key: Option<&FrameKey>,
) -> Result<Tag> {
    match (key, tagged) {
        (None, false) => Ok(Tag::Absent),
        (None, true) => Ok(Tag::Unverified),
        (Some(_), false) => Err(Error::MissingTag {
            offset: FLAGS_OFFSET,
        }),
        (Some(key), true) => {
            let at = len - TAG_LEN;
            if key.verify(&input[..at], &input[at..len]) {
                Ok(Tag::Verified)
            } else {
                Err(Error::BadTag { offset: at })
            }
        }
    }
}
