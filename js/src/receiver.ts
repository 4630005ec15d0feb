/**
 * A receiver of generations (spec 5.2): full frames and deltas in order, applied in place,
 * digests checked, the filter and generation unchanged on any error.
 */
import { crc32c, crc32cFlipDelta, crc32cUpdate } from "./crc32c.js";
import { chunkTable, decodePositional, payloadVarint, warmUp } from "./decoders.js";
import { encodePositional } from "./encoders.js";
import {
  BaseMismatch, GenerationGap, Incompatible, ResultMismatch, StaleGeneration, TrailingBytes,
} from "./errors.js";
import { BloomFilter, CountingFilter, packCounters, sameShape } from "./filter.js";
import {
  checkFrame, decodeBloomPayload, decodeCounterPayload, type DecodeOptions, payloadOf, shapeOf,
} from "./frame.js";
import type { Header } from "./header.js";

/** What a receiver did with a frame. */
export interface Received {
  /** "full" (a full frame replaced the filter) or "delta" (a delta was applied) */
  kind: "full" | "delta";
  /** the generation held afterwards */
  generation: bigint;
  /** generations skipped by a full frame (g - G - 1), 0 for deltas and restarts at or below G */
  skipped: bigint;
  /** whether the frame's tag was verified with the receiver's key */
  verified: boolean;
  /** bytes the frame took */
  length: number;
  /** the frame's metadata (spec 2.6), if any */
  metadata: Uint8Array | null;
}

export class Receiver {
  private held: BloomFilter | CountingFilter | null = null;
  private heldHeader: Header | null = null;
  private gen = 0n;
  private digestValue = 0;
  private digestVersion = -1;

  constructor(private readonly options: DecodeOptions = {}) {}

  /** The filter held (null before the first full frame). Changing it is allowed: its digest is recomputed. */
  get filter(): BloomFilter | CountingFilter | null {
    return this.held;
  }

  /** The generation held (meaningful when a filter is held). */
  get generation(): bigint {
    return this.gen;
  }

  /** The header of the last frame applied. */
  get header(): Header | null {
    return this.heldHeader;
  }

  /** The digest (spec 5.1) of the filter held, cached until the filter changes. */
  digest(): number {
    const f = this.held;
    if (!f) return 0;
    if (this.digestVersion !== f.version) {
      this.digestValue = f instanceof BloomFilter ? crc32c(f.bits) : crc32c(f.packed());
      this.digestVersion = f.version;
    }
    return this.digestValue;
  }

  /** Receives one frame that is the whole input (TrailingBytes otherwise). */
  receive(data: Uint8Array): Received {
    const r = this.receivePrefix(data);
    if (r.length !== data.length) throw new TrailingBytes(data.length - r.length);
    return r;
  }

  /** Receives the frame at the start of `data`; input after it is left alone. */
  receivePrefix(data: Uint8Array): Received {
    const { header: h, length, verified } = checkFrame(data, this.options);
    const payload = payloadOf(data, h);
    const held = this.held;
    const base = { length, verified, metadata: h.metadata };
    if (h.kind === 0) {
      if (held && h.generation <= this.gen && !h.restart) {
        throw new StaleGeneration(`generation ${h.generation}, held ${this.gen}`);
      }
      const shape = shapeOf(h);
      const filter =
        h.filterType === 3
          ? new CountingFilter(shape, h.counterWidth, decodeCounterPayload(h, payload), h.n)
          : new BloomFilter(shape, decodeBloomPayload(h, payload), h.n);
      const skipped = held && h.generation > this.gen ? h.generation - this.gen - 1n : 0n;
      this.held = filter;
      this.heldHeader = h;
      this.gen = h.generation;
      this.digestVersion = -1;
      this.digest(); // paid with the full frame, so that a delta costs its own size
      return { kind: "full", generation: h.generation, skipped, ...base };
    }
    if (!held) throw new GenerationGap(`delta for generation ${h.baseGeneration}, nothing held`);
    if (h.generation <= this.gen) throw new StaleGeneration(`generation ${h.generation}, held ${this.gen}`);
    if (h.baseGeneration !== this.gen) throw new GenerationGap(`delta for generation ${h.baseGeneration}, held ${this.gen}`);
    const hh = this.heldHeader!;
    if (
      h.filterType !== hh.filterType || !sameShape(shapeOf(h), held.shape) ||
      (h.filterType === 3 && h.counterWidth !== (held as CountingFilter).width)
    ) {
      throw new Incompatible("the delta and the filter held differ in shape or hash family");
    }
    const before = this.digest();
    if (before !== h.baseDigest) throw new BaseMismatch(`digest 0x${before.toString(16)}, the delta names 0x${h.baseDigest.toString(16)}`);
    if (held instanceof CountingFilter) {
      const d = decodeCounterPayload(h, payload);
      const next = new Uint8Array(held.counters.length);
      for (let i = 0; i < next.length; i++) next[i] = held.counters[i] ^ d[i];
      const after = crc32c(packCounters(next, held.width));
      if (after !== h.resultDigest) throw new ResultMismatch(`result digest 0x${after.toString(16)}`);
      held.counters.set(next);
      this.finish(held, h, after);
    } else if (h.coding === 7) {
      this.applyPositional(held, h, payload);
    } else {
      const d = decodeBloomPayload(h, payload);
      const bits = held.bits;
      // digest of bits ^ d without a second array, then apply
      const tmp = new Uint8Array(65536);
      let crc = -1;
      for (let at = 0; at < bits.length; at += tmp.length) {
        const end = Math.min(bits.length, at + tmp.length);
        for (let i = at; i < end; i++) tmp[i - at] = bits[i] ^ d[i];
        crc = crc32cUpdate(crc, tmp, 0, end - at);
      }
      const after = (crc ^ -1) >>> 0;
      if (after !== h.resultDigest) throw new ResultMismatch(`result digest 0x${after.toString(16)}`);
      for (let i = 0; i < bits.length; i++) bits[i] ^= d[i];
      this.finish(held, h, after);
    }
    return { kind: "delta", generation: h.generation, skipped: 0n, ...base };
  }

  /** A positional delta: positions collected (memory bounded by the payload), checked, then flipped. */
  private applyPositional(held: BloomFilter, h: Header, payload: Uint8Array): void {
    if (payload.length > 4096) warmUp(7, 1, encodePositional);
    let positions: Float64Array;
    let count = 0;
    if (h.chunkShift === null) {
      const c = Math.min(payloadVarint(payload, 0)[0], 8 * payload.length);
      positions = new Float64Array(c);
      count = decodePositional(payload, h.m, null, positions);
    } else {
      const { start, lengths } = chunkTable(payload, h.m, h.chunkShift);
      const size = 2 ** h.chunkShift;
      let total = 0, at = start;
      for (let i = 0; i < lengths.length; i++) {
        const p = payload.subarray(at, at + lengths[i]);
        if (p.length) total += Math.min(payloadVarint(p, 0)[0], 8 * p.length);
        at += lengths[i];
      }
      positions = new Float64Array(total);
      at = start;
      for (let i = 0; i < lengths.length; i++) {
        const nbits = Math.min(size, h.m - i * size);
        const p = payload.subarray(at, at + lengths[i]);
        if (p.length < 1) decodePositional(p, nbits, null, null); // reports the fault
        const sub = positions.subarray(count);
        const c = decodePositional(p, nbits, null, sub);
        for (let j = 0; j < c; j++) sub[j] += i * size;
        count += c;
        at += lengths[i];
      }
    }
    const after = (this.digest() ^ crc32cFlipDelta(positions, count, held.bits.length)) >>> 0;
    if (after !== h.resultDigest) throw new ResultMismatch(`result digest 0x${after.toString(16)}`);
    const bits = held.bits;
    if (h.m <= 2 ** 31) {
      for (let i = 0; i < count; i++) {
        const p = positions[i];
        bits[p >>> 3] ^= 1 << (p & 7);
      }
    } else {
      for (let i = 0; i < count; i++) {
        const p = positions[i];
        bits[Math.floor(p / 8)] ^= 1 << (p % 8);
      }
    }
    this.finish(held, h, after);
  }

  private finish(held: BloomFilter | CountingFilter, h: Header, digest: number): void {
    held.n = h.n;
    held.version++;
    this.digestValue = digest;
    this.digestVersion = held.version;
    this.gen = h.generation;
    this.heldHeader = h;
  }
}
