/**
 * The frame header of spec 2, parsed field by field in the order of the table, each
 * field checked as soon as it is complete and then against the receiver's limits
 * (spec 2.3). Nothing here allocates or loops in proportion to m, k, n or L.
 */
import {
  BadMagic, BadVarint, Incomplete, InvalidField, LimitExceeded, UnsupportedCoding, UnsupportedVersion,
} from "./errors.js";

/** A decoder's limits (spec 2.3); every field is optional, the defaults are the spec's. */
export interface Limits {
  /** largest m, in bits or counters (default 2^28) */
  maxM?: number;
  /** largest ceil(k) (default 64) */
  maxK?: number;
  /** largest payload, in bytes (default 2^26) */
  maxPayload?: number;
  /** largest metadata field, in bytes (default 4096) */
  maxMetadata?: number;
  /** largest decoded filter, in bytes (default ceil(maxM / 8)) */
  maxFilterBytes?: number;
  /** "full" (default): every coding of the 1.0 registry; "core": codings 0, 1, 2, 4, 5, 7 */
  profile?: "full" | "core";
}

export const DEFAULT_LIMITS = {
  maxM: 2 ** 28,
  maxK: 64,
  maxPayload: 2 ** 26,
  maxMetadata: 4096,
} as const;

/** Everything the header of a frame says. */
export interface Header {
  /** 0 = full frame, 1 = delta */
  kind: number;
  filterType: number;
  /** 0 = opaque, 1 = xxHash64, 2 = SipHash-2-4 */
  baseHash: number;
  /** 0 = double hashing, 1 = enhanced double hashing */
  indexScheme: number;
  coding: number;
  flags: number;
  chunked: boolean;
  restart: boolean;
  tagged: boolean;
  /** xxHash64 seed (0n otherwise) */
  seed: bigint;
  /** SipHash-2-4 key halves (0n otherwise) */
  k0: bigint;
  k1: bigint;
  m: number;
  /** filter type 3: the counted type (0, 1, 2), else the filter type */
  layout: number;
  /** filter type 3: bits per counter */
  counterWidth: number;
  /** k * 65536 (for blocks, the sum) */
  kRaw: number;
  /** filter type 2 (or counted type 2): each block's k * 65536 */
  blockKRaw: number[] | null;
  n: bigint;
  generation: bigint;
  baseGeneration: bigint;
  baseDigest: number;
  resultDigest: number;
  metadata: Uint8Array | null;
  q0: number | null;
  counterTable: number[] | null;
  chunkShift: number | null;
  payloadLength: number;
  headerLength: number;
}

const BIT_CODINGS = new Set([0, 1, 2, 3, 6, 7, 9, 10, 11]);
const COUNTER_CODINGS = new Set([0, 4, 5]);
const CORE_CODINGS = new Set([0, 1, 2, 4, 5, 7]);
const CHUNKABLE = new Set([1, 2, 3, 6, 7, 10]);
const Q0_CODINGS = new Set([2, 3, 6, 9, 10, 11]);

class Reader {
  pos = 0;
  constructor(readonly data: Uint8Array) {}

  need(n: number): void {
    const end = this.pos + n;
    if (end > this.data.length) throw new Incomplete(end - this.data.length);
  }

  u8(): number {
    this.need(1);
    return this.data[this.pos++];
  }

  u16(): number {
    this.need(2);
    const d = this.data, p = this.pos;
    this.pos += 2;
    return d[p] | (d[p + 1] << 8);
  }

  u32(): number {
    this.need(4);
    const d = this.data, p = this.pos;
    this.pos += 4;
    return (d[p] | (d[p + 1] << 8) | (d[p + 2] << 16) | (d[p + 3] << 24)) >>> 0;
  }

  u64(): bigint {
    this.need(8);
    const lo = BigInt(this.u32()), hi = BigInt(this.u32());
    return (hi << 32n) | lo;
  }

  varint(): bigint {
    let value = 0n;
    for (let i = 0; i < 10; i++) {
      const b = this.u8();
      value |= BigInt(b & 0x7f) << BigInt(7 * i);
      if (!(b & 0x80)) {
        if (i > 0 && b === 0) throw new BadVarint("varint not in shortest form");
        if (i === 9 && b > 1) throw new BadVarint("varint exceeds 2^64 - 1");
        return value;
      }
    }
    throw new BadVarint("varint longer than 10 bytes");
  }

  /** A varint known to be small enough for a number (at most 2^53) or reported by the caller. */
  small(): number {
    const v = this.varint();
    return v > 2n ** 53n ? Infinity : Number(v);
  }
}

function ceilK(raw: number): number {
  return Math.floor(raw / 65536) + (raw % 65536 ? 1 : 0);
}

function popcount48(m: number): number {
  let c = 0;
  for (let v = m; v > 0; v = Math.floor(v / 2)) c += v % 2;
  return c;
}

/** Parses and checks a header at the start of `data` (spec 2, 2.3). */
export function parseHeader(data: Uint8Array, limits: Limits = {}): Header {
  const maxM = limits.maxM ?? DEFAULT_LIMITS.maxM;
  const maxK = limits.maxK ?? DEFAULT_LIMITS.maxK;
  const maxPayload = limits.maxPayload ?? DEFAULT_LIMITS.maxPayload;
  const maxMetadata = limits.maxMetadata ?? DEFAULT_LIMITS.maxMetadata;
  const maxFilterBytes = limits.maxFilterBytes ?? Math.ceil(maxM / 8);
  const core = limits.profile === "core";
  const r = new Reader(data);
  const magic = [0x42, 0x4c, 0x57, 0x52];
  for (let i = 0; i < 4; i++) {
    // a wrong byte is BadMagic as soon as it is present (spec 2.3)
    if (i < data.length && data[i] !== magic[i]) throw new BadMagic("magic is not 'BLWR'");
  }
  r.need(4);
  r.pos = 4;
  const version = r.u8();
  if (version !== 1) throw new UnsupportedVersion(version);
  const kind = r.u8();
  if (kind > 1) throw new InvalidField("frame kind", String(kind));
  const filterType = r.u8();
  if (filterType > 3) throw new InvalidField("filter type", String(filterType));
  const baseHash = r.u8();
  const opaque = baseHash === 0;
  if (baseHash > 2 || (opaque && filterType !== 0)) throw new InvalidField("base hash", String(baseHash));
  const indexScheme = r.u8();
  if (indexScheme > 1 || (opaque && indexScheme !== 0)) throw new InvalidField("index scheme", String(indexScheme));
  const coding = r.u8();
  const counting = filterType === 3;
  if (!(counting ? COUNTER_CODINGS : BIT_CODINGS).has(coding)) {
    throw new InvalidField("coding", `${coding} with filter type ${filterType}`);
  }
  if (core && !CORE_CODINGS.has(coding)) throw new UnsupportedCoding(coding);
  const flags = r.u8();
  if (flags & 0xf0 || (flags & 1 && !CHUNKABLE.has(coding)) || (flags & 2 && kind !== 0)) {
    throw new InvalidField("flags", `0x${flags.toString(16)}`);
  }
  let seed = 0n, k0 = 0n, k1 = 0n;
  if (baseHash === 1) seed = r.varint();
  else if (baseHash === 2) {
    k0 = r.u64();
    k1 = r.u64();
  }
  const mBig = r.varint();
  if (mBig < 1n || mBig > 2n ** 48n) throw new InvalidField("m", String(mBig));
  const m = Number(mBig);
  if (m > maxM) throw new LimitExceeded("m", m, maxM);
  if (!counting && Math.ceil(m / 8) > maxFilterBytes) {
    throw new LimitExceeded("filter bytes", Math.ceil(m / 8), maxFilterBytes);
  }
  let layout = filterType, counterWidth = 0;
  if (counting) {
    layout = r.u8();
    if (layout > 2) throw new InvalidField("counted type", String(layout));
    counterWidth = r.u8();
    if (counterWidth < 1 || counterWidth > 8) throw new InvalidField("counter width", String(counterWidth));
    if (m > maxFilterBytes) throw new LimitExceeded("filter bytes", m, maxFilterBytes);
  }
  const HARD_K = 1024 * 65536;
  let kRaw: number, blockKRaw: number[] | null = null;
  if (layout !== 2) {
    const raw = r.small();
    if (raw < 65536 || raw > HARD_K) throw new InvalidField("k", `raw ${raw}`);
    if (layout === 1 && m < ceilK(raw)) throw new InvalidField("k", "partitioned filter needs m >= ceil(k)");
    kRaw = raw;
  } else {
    blockKRaw = [];
    let total = 0;
    for (let j = popcount48(m); j > 0; j--) {
      const raw = r.small();
      if (raw > HARD_K) throw new InvalidField("k", `block raw ${raw}`);
      blockKRaw.push(raw);
      total += raw;
    }
    if (total < 65536 || total > HARD_K) throw new InvalidField("k", `sum of block k ${total}`);
    kRaw = total;
  }
  if (ceilK(kRaw) > maxK) throw new LimitExceeded("k", ceilK(kRaw), maxK);
  const n = r.varint();
  const generation = r.varint();
  let baseGeneration = 0n, baseDigest = 0, resultDigest = 0;
  if (kind === 1) {
    baseGeneration = r.varint();
    if (baseGeneration >= generation) throw new InvalidField("base generation", String(baseGeneration));
    baseDigest = r.u32();
    resultDigest = r.u32();
  }
  let metadata: Uint8Array | null = null;
  if (flags & 8) {
    const len = r.varint();
    if (len === 0n) throw new InvalidField("metadata length", "0");
    if (len > BigInt(maxMetadata)) throw new LimitExceeded("metadata length", len, maxMetadata);
    const l = Number(len);
    r.need(l);
    metadata = data.slice(r.pos, r.pos + l);
    r.pos += l;
  }
  let q0: number | null = null;
  if (Q0_CODINGS.has(coding)) {
    q0 = r.u16();
    if (q0 === 0) throw new InvalidField("q0", "0");
  }
  let counterTable: number[] | null = null;
  if (coding === 4) {
    const t = r.small();
    if (t < 1 || t > 2 ** counterWidth) throw new InvalidField("table length", String(t));
    counterTable = [];
    let sum = 0;
    for (let i = 0; i < t; i++) {
      const f = r.small();
      if (f > 65536) throw new InvalidField("frequency", String(f));
      counterTable.push(f);
      sum += f;
    }
    if (sum !== 65536 || counterTable[t - 1] === 0) throw new InvalidField("frequencies", `sum ${sum}`);
  }
  let chunkShift: number | null = null;
  if (flags & 1) {
    const s = r.u8();
    if (s < 6 || s > 47 || 2 ** s >= m) throw new InvalidField("chunk shift", String(s));
    chunkShift = s;
  }
  const Lbig = r.varint();
  if (Lbig > BigInt(maxPayload)) throw new LimitExceeded("payload length", Lbig, maxPayload);
  const L = Number(Lbig);
  if (chunkShift !== null) {
    if (L < Math.ceil(m / 2 ** chunkShift)) throw new InvalidField("payload length", "fewer bytes than chunks");
  } else {
    let ok = true;
    if (coding === 0) ok = L === Math.ceil((counting ? m * counterWidth : m) / 8);
    else if (coding === 3) ok = L % 4 === 0;
    else if (coding === 6) ok = L % 4 === 0 && L >= 32;
    else if (coding === 9) ok = L >= 6;
    else if (coding === 10) ok = L % 2 === 0 && L >= 256;
    else if (coding === 11) ok = L >= 8;
    else if (coding === 7) ok = L >= 1;
    if (!ok) throw new InvalidField("payload length", `${L} for coding ${coding}`);
  }
  const exempt = coding === 0 || coding === 7 || (coding === 4 && counterTable!.length === 1);
  if (!exempt && m > 4096 * (L + 64)) throw new InvalidField("payload length", "the work bound m <= 2^12 (L + 64)");
  return {
    kind, filterType, baseHash, indexScheme, coding, flags,
    chunked: (flags & 1) !== 0, restart: (flags & 2) !== 0, tagged: (flags & 4) !== 0,
    seed, k0, k1, m, layout, counterWidth, kRaw, blockKRaw, n, generation, baseGeneration,
    baseDigest, resultDigest, metadata, q0, counterTable, chunkShift,
    payloadLength: L, headerLength: r.pos,
  };
}
