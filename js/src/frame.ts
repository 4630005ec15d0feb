/**
 * Decoding frames (spec 2.3): header, whole-frame length, checksum, tag, then the payload.
 */
import { blake2b } from "@noble/hashes/blake2.js";
import { crc32c } from "./crc32c.js";
import { decodeBits, decodeChunked, decodeRangeCounters, warmUp } from "./decoders.js";
import { countOnes, encodePositional, measuredQ0 } from "./encoders.js";
import {
  BadTag, ChecksumMismatch, CorruptPayload, Incomplete, LimitExceeded, MissingTag, TrailingBytes,
} from "./errors.js";
import { BloomFilter, CountingFilter, type Shape, unpackCounters } from "./filter.js";
import { type Header, type Limits, parseHeader } from "./header.js";

/** Options of a decoder: its limits and, for authenticated frames, the 32-byte key. */
export interface DecodeOptions extends Limits {
  /** the shared secret of spec 2.5: frames must carry a tag made with it */
  key?: Uint8Array;
}

/** A decoded frame. For a delta, `filter` holds the difference (the XOR of two generations). */
export interface Frame {
  header: Header;
  /** true when a key was given and the tag verified; false for every frame decoded without a key */
  verified: boolean;
  /** bytes of the frame (header, payload, checksum, tag) */
  length: number;
  filter: BloomFilter | CountingFilter;
}

/** The shape of a header (what fixes where keys' bits are). */
export function shapeOf(h: Header): Shape {
  return {
    m: h.m, layout: h.layout, kRaw: h.kRaw, blockKRaw: h.blockKRaw, baseHash: h.baseHash,
    indexScheme: h.indexScheme, seed: h.seed, k0: h.k0, k1: h.k1,
  };
}

/** keyed BLAKE2b-128 of spec 2.5 */
export function frameTag(key: Uint8Array, data: Uint8Array): Uint8Array {
  if (key.length !== 32) throw new RangeError("an authentication key has 32 bytes");
  return blake2b(data, { key, dkLen: 16 });
}

function equalConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  let d = a.length ^ b.length;
  for (let i = 0; i < a.length && i < b.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

/**
 * Checks a frame at the start of `data` up to its payload: header, length, checksum and tag.
 * Returns the header, the frame's length and whether its tag was verified.
 */
export function checkFrame(data: Uint8Array, options: DecodeOptions = {}): { header: Header; length: number; verified: boolean } {
  const header = parseHeader(data, options);
  const tagLen = header.tagged ? 16 : 0;
  const total = header.headerLength + header.payloadLength + 4 + tagLen;
  if (data.length < total) throw new Incomplete(total - data.length);
  const end = total - tagLen;
  const stored = (data[end - 4] | (data[end - 3] << 8) | (data[end - 2] << 16) | (data[end - 1] << 24)) >>> 0;
  const computed = crc32c(data, 0, end - 4);
  if (stored !== computed) {
    throw new ChecksumMismatch(`stored 0x${stored.toString(16)}, computed 0x${computed.toString(16)}`);
  }
  let verified = false;
  if (options.key) {
    if (!header.tagged) throw new MissingTag("no authentication tag (flags bit 2), and a key was given");
    if (!equalConstantTime(frameTag(options.key, data.subarray(0, end)), data.subarray(end, total))) {
      throw new BadTag("the tag is not the one the key gives");
    }
    verified = true;
  }
  return { header, length: total, verified };
}

/** The payload of a checked frame. */
export function payloadOf(data: Uint8Array, header: Header): Uint8Array {
  return data.subarray(header.headerLength, header.headerLength + header.payloadLength);
}

/** Decodes the payload of a Bloom frame (filter types 0 to 2) into packed bits. */
/** A zeroed array of n bytes; a filter larger than this machine can hold is LimitExceeded, not a crash. */
export function allocate(n: number): Uint8Array {
  try {
    return new Uint8Array(n);
  } catch (e) {
    if (e instanceof RangeError) throw new LimitExceeded("filter bytes", n, n - 1);
    throw e;
  }
}

export function decodeBloomPayload(header: Header, payload: Uint8Array): Uint8Array {
  if (header.payloadLength > 4096) warmUp(header.coding, header.q0 ?? 1, encodePositional);
  const out = allocate(Math.ceil(header.m / 8));
  const ones = header.chunkShift !== null
    ? decodeChunked(header.coding, payload, header.m, header.q0 ?? 0, header.chunkShift, out)
    : decodeBits(header.coding, payload, header.m, header.q0 ?? 0, out);
  // codings 9, 10 and 11 carry the measured q0 of the whole array (spec 4.4)
  if (header.coding >= 9) {
    const zeros = header.m - (ones >= 0 ? ones : countOnes(out));
    if (measuredQ0(zeros, header.m) !== header.q0) {
      throw new CorruptPayload(`q0 ${header.q0} is not the array's measured fraction of zeros (${measuredQ0(zeros, header.m)})`);
    }
  }
  return out;
}

/** Decodes the payload of a counting frame into a byte a counter. */
export function decodeCounterPayload(header: Header, payload: Uint8Array): Uint8Array {
  const counters = allocate(header.m);
  if (header.coding === 0) {
    if (!unpackCounters(payload, header.m, header.counterWidth, counters)) {
      throw new CorruptPayload("packed counters: a bit past m * b is set");
    }
  } else {
    decodeRangeCounters(payload, header.m, header.counterWidth, header.coding === 4 ? header.counterTable : null, counters);
  }
  return counters;
}

/** Decodes the frame at the start of `data` (stream decoding): input after it is left alone. */
export function decodeFramePrefix(data: Uint8Array, options: DecodeOptions = {}): Frame {
  const { header, length, verified } = checkFrame(data, options);
  const payload = payloadOf(data, header);
  const shape = shapeOf(header);
  const filter =
    header.filterType === 3
      ? new CountingFilter(shape, header.counterWidth, decodeCounterPayload(header, payload), header.n)
      : new BloomFilter(shape, decodeBloomPayload(header, payload), header.n);
  return { header, verified, length, filter };
}

/** Decodes input that holds exactly one frame (else TrailingBytes, after the frame decoded). */
export function decodeFrame(data: Uint8Array, options: DecodeOptions = {}): Frame {
  const frame = decodeFramePrefix(data, options);
  if (frame.length !== data.length) throw new TrailingBytes(data.length - frame.length);
  return frame;
}
