/**
 * Writing frames (spec 2): the Core profile's codings (0 raw, 1 adaptive, 2 known-p,
 * 7 positional; 0, 4 and 5 for counting filters), chunked as the spec's default says,
 * with keys (tags), metadata, generations and deltas.
 */
import { crc32c } from "./crc32c.js";
import {
  ByteWriter, counterTable, countOnes, encodePositional, encodeRangeBits, encodeRangeCounters, measuredQ0, onePositions,
} from "./encoders.js";
import { BloomFilter, CountingFilter, sameShape } from "./filter.js";
import { frameTag } from "./frame.js";

/** Codings by name (the program's names) or wire id. */
export const CODING_IDS: Record<string, number> = {
  raw: 0, adaptive: 1, "known-p": 2, "known-counters": 4, "adaptive-counters": 5, positional: 7,
};

export interface EncodeOptions {
  /** "auto" (default: the smallest Core coding), a coding's name or its wire id (0, 1, 2, 7; 0, 4, 5 for counters) */
  coding?: string | number;
  /** coding 2: q0 (default: measured from the bits, spec 4.4) */
  q0?: number;
  /** coding 4: the table (default: from the histogram, spec 4.7) */
  counterTable?: number[];
  /** "auto" (default: spec 4.10's rule), "never", or a shift 6 ..= 47 */
  chunkShift?: number | "auto" | "never";
  /** the generation field (default 0: unnumbered) */
  generation?: bigint | number;
  /** set the restart flag (full frames only) */
  restart?: boolean;
  /** the 32-byte key of spec 2.5: the frame gets a tag */
  key?: Uint8Array;
  /** application metadata (spec 2.6), at least 1 byte */
  metadata?: Uint8Array;
}

interface DeltaFields {
  baseGeneration: bigint;
  baseDigest: number;
  resultDigest: number;
}

const CHUNKABLE = new Set([1, 2, 3, 6, 7, 10]);

function entropy(p: number): number {
  if (p <= 0 || p >= 1) return 0;
  return -p * Math.log2(p) - (1 - p) * Math.log2(1 - p);
}

/** Spec 4.10's default chunk shift for m bits with a fraction p0 of zeros, or null (not chunked). */
export function defaultChunkShift(m: number, p0: number): number | null {
  if (m < 2 ** 26) return null;
  const h = entropy(p0);
  for (let s = 20; s <= 47 && 2 ** s < m; s++) {
    if ((2 ** s * h) / 8 >= 131072) return s;
  }
  return null;
}


/** The payload of m bits with a Core coding (and its chunks). */
function bitPayload(bits: Uint8Array, m: number, coding: number, q0: number, shift: number | null): Uint8Array {
  const one = (b: Uint8Array, nbits: number): Uint8Array => {
    switch (coding) {
      case 0: return b;
      case 1: return encodeRangeBits(b, nbits, 0);
      case 2: return encodeRangeBits(b, nbits, q0);
      case 7: return encodePositional(onePositions(b, nbits), nbits);
      default: throw new RangeError(`coding ${coding} is not written by this package (Core: 0, 1, 2, 7)`);
    }
  };
  if (shift === null) return one(bits, m);
  const size = 2 ** shift, K = Math.ceil(m / size);
  const parts: Uint8Array[] = [];
  const w = new ByteWriter();
  for (let i = 0; i < K; i++) {
    const nbits = Math.min(size, m - i * size);
    const p = one(bits.subarray(i * (size / 8), i * (size / 8) + Math.ceil(nbits / 8)), nbits);
    parts.push(p);
    w.varint(p.length);
  }
  for (const p of parts) w.bytes(p);
  return w.result();
}

function workBoundOk(m: number, L: number): boolean {
  return m <= 4096 * (L + 64);
}

function codingId(c: string | number | undefined): number | "auto" {
  if (c === undefined || c === "auto") return "auto";
  if (typeof c === "number") return c;
  const id = CODING_IDS[c];
  if (id === undefined) throw new RangeError(`unknown or unwritable coding ${c}`);
  return id;
}

function writeFrame(
  filter: BloomFilter | CountingFilter, o: EncodeOptions, delta: DeltaFields | null,
  coding: number, q0: number | null, table: number[] | null, shift: number | null, payload: Uint8Array,
): Uint8Array {
  const s = filter.shape;
  const counting = filter instanceof CountingFilter;
  const w = new ByteWriter();
  w.bytes(Uint8Array.of(0x42, 0x4c, 0x57, 0x52, 1, delta ? 1 : 0, counting ? 3 : s.layout, s.baseHash, s.indexScheme, coding));
  if (o.restart && delta) throw new RangeError("the restart flag is for full frames");
  if (o.metadata && o.metadata.length === 0) throw new RangeError("metadata has at least 1 byte");
  const flags = (shift !== null ? 1 : 0) | (o.restart ? 2 : 0) | (o.key ? 4 : 0) | (o.metadata ? 8 : 0);
  w.u8(flags);
  if (s.baseHash === 1) w.varint(s.seed);
  else if (s.baseHash === 2) {
    w.u64(s.k0);
    w.u64(s.k1);
  }
  w.varint(s.m);
  if (counting) {
    w.u8(s.layout);
    w.u8((filter as CountingFilter).width);
  }
  if (s.layout === 2) for (const r of s.blockKRaw!) w.varint(r);
  else w.varint(s.kRaw);
  w.varint(filter.n);
  const generation = BigInt(o.generation ?? 0);
  w.varint(generation);
  if (delta) {
    if (delta.baseGeneration >= generation) throw new RangeError("a delta's base generation is below its generation");
    w.varint(delta.baseGeneration);
    w.u32(delta.baseDigest);
    w.u32(delta.resultDigest);
  }
  if (o.metadata) {
    w.varint(o.metadata.length);
    w.bytes(o.metadata);
  }
  if (q0 !== null) w.u16(q0);
  if (table) {
    w.varint(table.length);
    for (const f of table) w.varint(f);
  }
  if (shift !== null) w.u8(shift);
  w.varint(payload.length);
  w.bytes(payload);
  w.u32(crc32c(w.buf, 0, w.len));
  if (o.key) w.bytes(frameTag(o.key, w.buf.subarray(0, w.len)));
  return w.result();
}

/** Encodes the bits (or counters) of `filter` as a frame (a delta when `delta` is given). */
function encode(filter: BloomFilter | CountingFilter, o: EncodeOptions, delta: DeltaFields | null, content: Uint8Array): Uint8Array {
  const m = filter.shape.m;
  const want = codingId(o.coding);
  if (filter instanceof CountingFilter) {
    const width = filter.width;
    const candidates = want === "auto" ? [4, 5, 0] : [want];
    let best: Uint8Array | null = null;
    for (const c of candidates) {
      let payload: Uint8Array, table: number[] | null = null;
      if (c === 0) payload = (() => { const f = new CountingFilter(filter.shape, width, content); return f.packed(); })();
      else if (c === 4) {
        table = o.counterTable ?? counterTable(content);
        if (table.length > 2 ** width) throw new RangeError("counter table longer than 2^width");
        payload = encodeRangeCounters(content, width, table);
      } else if (c === 5) payload = encodeRangeCounters(content, width, null);
      else throw new RangeError(`coding ${c} is not a counter coding`);
      if (c !== 0 && !(c === 4 && table!.length === 1) && !workBoundOk(m, payload.length)) {
        if (want !== "auto") throw new RangeError(`coding ${c} breaks the work bound for this filter`);
        continue;
      }
      const frame = writeFrame(filter, o, delta, c, null, table, null, payload);
      if (!best || frame.length < best.length) best = frame;
    }
    return best!;
  }
  const ones = countOnes(content);
  const zeros = m - ones;
  const candidates = want === "auto" ? [7, 2, 0] : [want];
  let best: Uint8Array | null = null;
  for (const c of candidates) {
    if (![0, 1, 2, 7].includes(c)) throw new RangeError(`coding ${c} is not written by this package (Core: 0, 1, 2, 7)`);
    let shift: number | null = null;
    if (CHUNKABLE.has(c) && o.chunkShift !== "never") {
      if (typeof o.chunkShift === "number") {
        if (!(o.chunkShift >= 6 && o.chunkShift <= 47 && 2 ** o.chunkShift < m)) throw new RangeError("chunk shift 6 ..= 47 and 2^s < m");
        shift = o.chunkShift;
      } else shift = defaultChunkShift(m, zeros / m);
    }
    const q0 = c === 2 ? o.q0 ?? measuredQ0(zeros, m) : null;
    const payload = bitPayload(content, m, c, q0 ?? 0, shift);
    if ((c === 1 || c === 2) && !workBoundOk(m, payload.length)) {
      if (want !== "auto") throw new RangeError(`coding ${c} breaks the work bound (spec 2.2) for this filter: use positional`);
      continue;
    }
    const frame = writeFrame(filter, o, delta, c, q0, null, shift, payload);
    if (!best || frame.length < best.length) best = frame;
  }
  return best!;
}

/** A full frame of `filter` (its bits and its n). */
export function encodeFrame(filter: BloomFilter | CountingFilter, options: EncodeOptions = {}): Uint8Array {
  const content = filter instanceof BloomFilter ? filter.bits : filter.counters;
  return encode(filter, options, null, content);
}

/**
 * A delta frame that turns `base` (held as `baseGeneration`) into `next` (of the same
 * shape; n is next's), numbered `options.generation`.
 */
export function encodeDelta(
  base: BloomFilter | CountingFilter, next: BloomFilter | CountingFilter, baseGeneration: bigint | number,
  options: EncodeOptions = {},
): Uint8Array {
  if (!sameShape(base.shape, next.shape) || base.constructor !== next.constructor) throw new RangeError("a delta joins filters of one shape");
  if (options.restart) throw new RangeError("the restart flag is for full frames");
  let diff: Uint8Array, baseDigest: number, resultDigest: number;
  if (base instanceof BloomFilter) {
    const a = base.bits, b = (next as BloomFilter).bits;
    diff = new Uint8Array(a.length);
    for (let i = 0; i < a.length; i++) diff[i] = a[i] ^ b[i];
    baseDigest = crc32c(a);
    resultDigest = crc32c(b);
  } else {
    const nb = next as CountingFilter;
    if (nb.width !== base.width) throw new RangeError("a delta joins filters of one counter width");
    diff = new Uint8Array(base.counters.length);
    for (let i = 0; i < diff.length; i++) diff[i] = base.counters[i] ^ nb.counters[i];
    baseDigest = crc32c(base.packed());
    resultDigest = crc32c(nb.packed());
  }
  const carrier = base instanceof BloomFilter ? new BloomFilter(base.shape, undefined, next.n) : new CountingFilter(base.shape, (base as CountingFilter).width, undefined, next.n);
  return encode(carrier, options, { baseGeneration: BigInt(baseGeneration), baseDigest, resultDigest }, diff);
}

/**
 * A sender of generations: numbers its filters 1, 2, ... and writes a delta against the
 * last filter it sent when the delta is smaller than the full frame (spec 5.2's advice),
 * with the restart flag on its first and periodic full frames.
 */
export class Sender {
  private last: BloomFilter | CountingFilter | null = null;
  private gen = 0n;

  constructor(private readonly options: Omit<EncodeOptions, "generation" | "restart"> & { fullEvery?: number } = {}) {}

  get generation(): bigint {
    return this.gen;
  }

  /** The frame for the filter's current state (a copy of it is kept as the next delta's base). */
  send(filter: BloomFilter | CountingFilter, opts: { full?: boolean } = {}): Uint8Array {
    const g = this.gen + 1n;
    const { fullEvery, ...enc } = this.options;
    const periodic = fullEvery !== undefined && g % BigInt(fullEvery) === 0n;
    const full = encodeFrame(filter, { ...enc, generation: g, restart: this.last === null || periodic || opts.full });
    let frame = full;
    if (this.last && !periodic && !opts.full && sameShape(this.last.shape, filter.shape)) {
      const d = encodeDelta(this.last, filter, this.gen, { ...enc, generation: g });
      if (d.length < full.length) frame = d;
    }
    this.last = filter.clone();
    this.gen = g;
    return frame;
  }
}
