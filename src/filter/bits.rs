//! The bit array of a filter, in the wire bit order.
//!
//! Bit `i` of a filter is `(bytes[i / 8] >> (i % 8)) & 1` in its packed form: least
//! significant bit first within each byte. Bits past `m` in the last byte are zero.

use crate::error::{invalid, Error, Result};

/// A fixed-length array of bits, stored in 64-bit words (little-endian bit order, so the
/// packed byte form is the words' little-endian bytes).
///
/// ```
/// use bloomwire::BitArray;
/// let mut b = BitArray::new(10);
/// b.set(0);
/// b.set(9);
/// assert_eq!(b.to_bytes(), vec![0x01, 0x02]);
/// assert_eq!(BitArray::from_bytes(&[0x01, 0x02], 10).unwrap(), b);
/// assert_eq!(b.count_zeros(), 8);
/// ```
#[derive(PartialEq, Eq, Hash)]
pub struct BitArray {
    words: Vec<u64>,
    len: u64,
}

impl core::fmt::Debug for BitArray {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "BitArray {{ len: {}, ones: {} }}",
            self.len,
            self.count_ones()
        )
    }
}

pub(crate) fn words_for(len: u64) -> usize {
    len.div_ceil(64) as usize
}

impl Clone for BitArray {
    /// A copy, in memory reserved as every array's is (a large one on huge pages where the
    /// system has them).
    fn clone(&self) -> Self {
        let mut words = reserve_words(self.words.len()).expect("memory for the bit array");
        words.extend_from_slice(&self.words);
        BitArray {
            words,
            len: self.len,
        }
    }
}

/// An empty vector with room for `n` words, [`Error::AllocationFailed`] where the machine
/// lacks the memory; a large one asks for huge pages (see [`memory`](super::memory)).
fn reserve_words(n: usize) -> Result<Vec<u64>> {
    let mut words = Vec::new();
    words
        .try_reserve_exact(n)
        .map_err(|_| Error::AllocationFailed {
            bytes: 8 * n as u64,
        })?;
    super::memory::huge_pages(&mut words);
    Ok(words)
}

impl BitArray {
    /// All-zero bits of length `len`.
    ///
    /// # Panics
    ///
    /// Where the machine lacks the memory ([`try_new`](Self::try_new) returns an error).
    pub fn new(len: u64) -> Self {
        BitArray::try_new(len).expect("memory for the bit array")
    }

    /// All-zero bits of length `len`, or [`Error::AllocationFailed`] where the machine
    /// lacks the memory ([`new`](Self::new) panics then).
    pub fn try_new(len: u64) -> Result<Self> {
        let n = words_for(len);
        let mut words = reserve_words(n)?;
        words.resize(n, 0);
        Ok(BitArray { words, len })
    }

    /// The array of `len` bits whose ones are at `ones` (in any order; a position listed
    /// twice is one bit), or [`Error::InvalidParameter`] for a position past the end.
    ///
    /// ```
    /// use bloomwire::BitArray;
    /// let b = BitArray::from_ones(10, [9, 0, 9]).unwrap();
    /// assert_eq!(b.to_bytes(), vec![0x01, 0x02]);
    /// assert!(BitArray::from_ones(10, [10]).is_err());
    /// ```
    pub fn from_ones(len: u64, ones: impl IntoIterator<Item = u64>) -> Result<Self> {
        let mut out = BitArray::try_new(len)?;
        for i in ones {
            if i >= len {
                return Err(invalid("ones", format!("bit {i} of an array of {len}")));
            }
            out.set(i);
        }
        Ok(out)
    }

    /// Number of bits.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the packed form: `ceil(len / 8)`.
    pub fn byte_len(&self) -> usize {
        self.len.div_ceil(8) as usize
    }

    /// Bit `i`. Panics if `i >= len` (an index bug in the caller, never wire data).
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        assert!(i < self.len, "bit index {i} out of range {}", self.len);
        (self.words[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    /// Set bit `i` to one. Panics if `i >= len`.
    #[inline]
    pub fn set(&mut self, i: u64) {
        assert!(i < self.len, "bit index {i} out of range {}", self.len);
        self.words[(i / 64) as usize] |= 1 << (i % 64);
    }

    /// Number of one bits.
    pub fn count_ones(&self) -> u64 {
        crate::filter::popcount::count_ones(&self.words)
    }

    /// Number of zero bits.
    pub fn count_zeros(&self) -> u64 {
        self.len - self.count_ones()
    }

    /// The words, least significant bit first; bits past `len` are zero.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, for decoders that write them in place.
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Make this the array of `len` bits whose packed form is `bytes` (`ceil(len / 8)` of
    /// them, the caller checked, bits past `len` zero), reusing the allocation: one pass
    /// over the bytes, no zero fill first.
    pub(crate) fn assign_packed(&mut self, bytes: &[u8], len: u64) -> Result<()> {
        debug_assert_eq!(bytes.len() as u64, len.div_ceil(8));
        self.words.clear();
        self.len = 0;
        let n = bytes.len().div_ceil(8);
        if self.words.capacity() < n {
            self.words = reserve_words(n)?;
        }
        // Whole words through an exact-size iterator (a plain copy loop), then the tail.
        let whole = bytes.chunks_exact(8);
        let tail = whole.remainder();
        self.words
            .extend(whole.map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))));
        if !tail.is_empty() {
            let mut buf = [0u8; 8];
            buf[..tail.len()].copy_from_slice(tail);
            self.words.push(u64::from_le_bytes(buf));
        }
        self.len = len;
        Ok(())
    }

    /// An array of `len` bits whose ones are at `ones` (for the crate's unit tests).
    #[cfg(test)]
    pub(crate) fn with_ones(len: u64, ones: &[u64]) -> Self {
        let mut b = BitArray::new(len);
        for &i in ones {
            b.set(i);
        }
        b
    }

    /// Make this an all-zero array of `len` bits, reusing the allocation where it suffices.
    pub fn reset(&mut self, len: u64) {
        self.words.clear();
        self.words.resize(words_for(len), 0);
        self.len = len;
    }

    /// [`reset`](Self::reset), or [`Error::AllocationFailed`] where the machine lacks the
    /// memory (the array is then empty).
    pub(crate) fn try_reset(&mut self, len: u64) -> Result<()> {
        self.words.clear();
        self.len = 0;
        let n = words_for(len);
        if self.words.capacity() < n {
            self.words = reserve_words(n)?;
        }
        self.words.resize(n, 0);
        self.len = len;
        Ok(())
    }

    /// The `len` bits from bit `start` on (a copy). Panics if they are not all inside
    /// the array.
    pub fn slice(&self, start: u64, len: u64) -> BitArray {
        assert!(start.checked_add(len).is_some_and(|end| end <= self.len));
        let mut out = BitArray::new(len);
        let (first, shift) = ((start / 64) as usize, start % 64);
        for (i, w) in out.words.iter_mut().enumerate() {
            let lo = self.words[first + i] >> shift;
            let hi = match (shift, self.words.get(first + i + 1)) {
                (0, _) | (_, None) => 0,
                (_, Some(next)) => next << (64 - shift),
            };
            *w = lo | hi;
        }
        if !len.is_multiple_of(64) {
            if let Some(last) = out.words.last_mut() {
                *last &= (1u64 << (len % 64)) - 1;
            }
        }
        out
    }

    /// The digest frames use to name a generation's bits: CRC-32C of the packed form.
    ///
    /// A CRC detects every difference of up to 3 bits between two arrays (of up to 2^31
    /// bits) and other differences with probability `1 - 2^-32`; it guards against a
    /// receiver applying a delta to the wrong base, not against a forging peer.
    pub fn digest(&self) -> u32 {
        // The CRC runs at hardware speed only on long inputs (it interleaves three streams),
        // so the words go through a 4 KiB buffer of their packed bytes, not 8 bytes a call.
        const WORDS: usize = 512;
        let mut buf = [0u8; WORDS * 8];
        let mut crc = 0;
        let mut left = self.byte_len();
        for block in self.words.chunks(WORDS) {
            for (bytes, w) in buf.chunks_exact_mut(8).zip(block) {
                bytes.copy_from_slice(&w.to_le_bytes());
            }
            let take = left.min(block.len() * 8);
            crc = crc32c::crc32c_append(crc, &buf[..take]);
            left -= take;
        }
        crc
    }

    /// The packed form in wire bit order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.byte_len());
        self.write_bytes(&mut out);
        out
    }

    /// Append the packed form to `out`.
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        write_packed(&self.words, self.len, out);
    }

    /// Parse a packed bit array of `len` bits. The slice must be exactly `ceil(len / 8)`
    /// bytes, and bits past `len` must be zero, so every bit array has one packed form.
    pub fn from_bytes(bytes: &[u8], len: u64) -> Result<Self> {
        let want = len.div_ceil(8);
        if bytes.len() as u64 != want {
            return Err(invalid(
                "bytes",
                format!("{} bytes for {len} bits, need {want}", bytes.len()),
            ));
        }
        if !len.is_multiple_of(8) && bytes[bytes.len() - 1] >> (len % 8) != 0 {
            return Err(invalid("bytes", "bits past the end are not zero"));
        }
        let mut out = BitArray::new(0);
        out.assign_packed(bytes, len)?;
        Ok(out)
    }

    /// Build from words (least significant bit first); bits past `len` must be zero.
    pub fn from_words(words: Vec<u64>, len: u64) -> Result<Self> {
        if words.len() != words_for(len) {
            return Err(invalid("words", "word count does not match the length"));
        }
        if !len.is_multiple_of(64) && words[words.len() - 1] >> (len % 64) != 0 {
            return Err(invalid("words", "bits past the end are not zero"));
        }
        Ok(BitArray { words, len })
    }

    fn zip_with(&mut self, other: &BitArray, f: impl Fn(u64, u64) -> u64) -> Result<()> {
        if self.len != other.len {
            return Err(Error::Incompatible(format!(
                "bit arrays of {} and {} bits",
                self.len(),
                other.len()
            )));
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a = f(*a, *b);
        }
        Ok(())
    }

    /// Flip bit `p` for every `p` of `positions`, each below the length (a position listed
    /// twice flips back): a delta's change, in O(positions). Returns how many of the
    /// positions held a one before their flip. Panics on a position past the end (the
    /// callers check them first).
    ///
    /// The positions of a sparse change in a large array are cache misses, and TLB misses
    /// past a few megabytes: each position's word is asked for (prefetched) a few dozen
    /// positions ahead of its flip, so that the misses overlap rather than follow one
    /// another.
    pub(crate) fn flip(&mut self, positions: &[u64]) -> u64 {
        const AHEAD: usize = 32;
        let mut were_ones = 0;
        for &p in positions.iter().take(AHEAD) {
            self.prefetch(p);
        }
        for (i, &p) in positions.iter().enumerate() {
            if let Some(&q) = positions.get(i + AHEAD) {
                self.prefetch(q);
            }
            let w = &mut self.words[(p / 64) as usize];
            were_ones += *w >> (p % 64) & 1;
            *w ^= 1u64 << (p % 64);
        }
        were_ones
    }

    /// Ask for the word of bit `p` (below the length) ahead of a [`flip`](Self::flip).
    #[inline]
    pub(crate) fn prefetch(&self, p: u64) {
        super::memory::prefetch(&self.words[(p / 64) as usize]);
    }

    /// `self |= other`.
    pub fn union_with(&mut self, other: &BitArray) -> Result<()> {
        self.zip_with(other, |a, b| a | b)
    }

    /// `self &= other`.
    pub fn intersect_with(&mut self, other: &BitArray) -> Result<()> {
        self.zip_with(other, |a, b| a & b)
    }

    /// `self ^= other`: the delta between two generations of a filter.
    pub fn xor_with(&mut self, other: &BitArray) -> Result<()> {
        self.zip_with(other, |a, b| a ^ b)
    }
}

/// Append the packed form of the first `len` bits of `words` (bits past `len` zero),
/// `ceil(len / 8)` bytes, to `out`.
pub(crate) fn write_packed(words: &[u64], len: u64, out: &mut Vec<u8>) {
    let n = len.div_ceil(8) as usize;
    let start = out.len();
    let words = &words[..words_for(len)];
    // Sized once, then filled word by word (a plain copy loop on little-endian machines).
    out.resize(start + 8 * words.len(), 0);
    for (b, w) in out[start..].chunks_exact_mut(8).zip(words) {
        b.copy_from_slice(&w.to_le_bytes());
    }
    out.truncate(start + n);
}

/// The words of a packed form, least significant byte first: whole 8-byte chunks (a plain
/// copy once compiled), then the last bytes, if any, zero-padded into one more word.
pub(crate) fn packed_words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let whole = bytes.chunks_exact(8);
    let tail = whole.remainder();
    let last = (!tail.is_empty()).then(|| {
        let mut buf = [0u8; 8];
        buf[..tail.len()].copy_from_slice(tail);
        u64::from_le_bytes(buf)
    });
    whole
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .chain(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_order_is_lsb_first() {
        let mut b = BitArray::new(70);
        for i in [0, 3, 8, 63, 64, 69] {
            b.set(i);
        }
        let bytes = b.to_bytes();
        assert_eq!(bytes.len(), 9);
        for i in 0..70 {
            assert_eq!(
                (bytes[i / 8] >> (i % 8)) & 1 == 1,
                b.get(i as u64),
                "bit {i}"
            );
        }
        assert_eq!(BitArray::from_bytes(&bytes, 70).unwrap(), b);
    }

    #[test]
    fn digest_is_the_crc_of_the_packed_form() {
        let mut b = BitArray::new(77);
        b.set(3);
        b.set(76);
        assert_eq!(b.digest(), crc32c::crc32c(&b.to_bytes()));
        assert_eq!(BitArray::new(0).digest(), 0);
        // Several 4 KiB blocks and a last byte of 3 bits.
        let mut b = BitArray::new(3 * 32_768 + 1_000 + 3);
        for i in (0..b.len()).step_by(97) {
            b.set(i);
        }
        b.set(b.len() - 1);
        assert_eq!(b.digest(), crc32c::crc32c(&b.to_bytes()));
    }

    #[test]
    fn non_canonical_packings_are_rejected() {
        assert!(BitArray::from_bytes(&[0x00, 0x04], 10).is_err());
        assert!(BitArray::from_bytes(&[0x00], 10).is_err());
        assert!(BitArray::from_bytes(&[0x00, 0x00, 0x00], 10).is_err());
        assert!(BitArray::from_words(vec![1 << 20], 20).is_err());
    }

    #[test]
    fn set_operations() {
        let mut a = BitArray::from_bytes(&[0b1100], 4).unwrap();
        let b = BitArray::from_bytes(&[0b1010], 4).unwrap();
        let mut x = a.clone();
        x.xor_with(&b).unwrap();
        assert_eq!(x.to_bytes(), vec![0b0110]);
        let mut i = a.clone();
        i.intersect_with(&b).unwrap();
        assert_eq!(i.to_bytes(), vec![0b1000]);
        a.union_with(&b).unwrap();
        assert_eq!(a.to_bytes(), vec![0b1110]);
        assert!(a.union_with(&BitArray::new(5)).is_err());
    }
}
