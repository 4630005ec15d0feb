//! Coding 3, *known-p symbols*: the packed bytes of a bit array ANS-coded with the multi-bit
//! known-p model ([`SymbolTable`]).
//!
//! The ANS coder is a stack: the encoder codes symbols last to first, the decoder pops words
//! from the end; words little-endian. Encoding and decoding use
//! `constriction::stream::stack::DefaultAnsCoder` at precision 24, whose decoding step needs
//! no division; a decoded payload must leave the coder exactly empty (state 0, no words
//! left).

use constriction::stream::stack::DefaultAnsCoder;
use constriction::stream::{Decode, Encode};

use crate::entropy::model::{symbol_tables, SymbolTable};
use crate::entropy::PayloadError;
use crate::filter::bits::BitArray;

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(words.len() * 4);
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

fn bytes_to_words(bytes: &[u8]) -> Result<Vec<u32>, PayloadError> {
    if bytes.len() % 4 != 0 {
        return Err("payload length is not a multiple of 4");
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

/// ANS-code the packed bytes of `bits` with the multi-bit known-p model.
pub(crate) fn encode_symbols(bits: &BitArray, q0: u16) -> Vec<u8> {
    let bytes = bits.to_bytes();
    let (full, tail) = symbol_tables(q0, bits.len());
    let mut ans = DefaultAnsCoder::new();
    let whole = (bits.len() / 8) as usize;
    if let Some(t) = &tail {
        ans.encode_symbol(usize::from(bytes[whole]), t)
            .expect("every symbol has a frequency");
    }
    for &b in bytes[..whole].iter().rev() {
        ans.encode_symbol(usize::from(b), &full)
            .expect("every symbol has a frequency");
    }
    words_to_bytes(&ans.into_compressed().expect("Vec backend cannot fail"))
}

/// Decode `m` bits coded with the multi-bit known-p model.
#[cfg(test)]
pub(crate) fn decode_symbols(payload: &[u8], m: u64, q0: u16) -> Result<BitArray, PayloadError> {
    let (full, tail) = symbol_tables(q0, m);
    let mut words = vec![0u64; crate::filter::bits::words_for(m)];
    decode_symbols_into(payload, m, &full, tail.as_ref(), &mut words)?;
    Ok(BitArray::from_words(words, m).expect("symbols hold only m bits"))
}

/// Decode `m` bits coded with the multi-bit known-p model, with the tables of
/// [`symbol_tables`] for `m` built by the caller, into `out` (`ceil(m / 64)` words, all
/// overwritten): each symbol lands in its byte of the words, with no buffer of bytes
/// between.
pub(crate) fn decode_symbols_into(
    payload: &[u8],
    m: u64,
    full: &SymbolTable,
    tail: Option<&SymbolTable>,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    let words = bytes_to_words(payload)?;
    let mut ans =
        DefaultAnsCoder::from_compressed(words).map_err(|_| "ANS payload ends with a zero word")?;
    out.fill(0);
    let mut put = |t: u64, symbol: usize| out[(t / 8) as usize] |= (symbol as u64) << (8 * (t % 8));
    for t in 0..m / 8 {
        put(t, ans.decode_symbol(full).unwrap_or_else(|e| match e {}));
    }
    if let Some(table) = tail {
        // The last symbol has `m mod 8` bits: nothing lands past m.
        put(
            m / 8,
            ans.decode_symbol(table).unwrap_or_else(|e| match e {}),
        );
    }
    if !ans.is_empty() {
        return Err("ANS payload has data left after the last symbol");
    }
    Ok(())
}
