/**
 * Payload encoders of the Core profile: raw (4.1), the range coder of codings 2 and 1
 * (4.2 to 4.4), the counter codings 4 (4.7), and positional (4.11). Each is the exact
 * inverse of its decoder, so each writes the one canonical payload.
 */
import { adaptCounts, gapModel, gapParams } from "./models.js";

const TWO32 = 4294967296;

/** A growable byte buffer. */
export class ByteWriter {
  buf = new Uint8Array(256);
  len = 0;

  private grow(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + extra) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }

  u8(v: number): void {
    this.grow(1);
    this.buf[this.len++] = v;
  }

  bytes(b: Uint8Array): void {
    this.grow(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  u16(v: number): void {
    this.u8(v & 0xff);
    this.u8(v >>> 8);
  }

  u32(v: number): void {
    this.grow(4);
    const b = this.buf, p = this.len;
    b[p] = v & 0xff;
    b[p + 1] = (v >>> 8) & 0xff;
    b[p + 2] = (v >>> 16) & 0xff;
    b[p + 3] = v >>> 24;
    this.len += 4;
  }

  u64(v: bigint): void {
    this.u32(Number(v & 0xffffffffn));
    this.u32(Number(v >> 32n));
  }

  varint(v: number | bigint): void {
    let x = BigInt(v);
    if (x < 0n || x >= 1n << 64n) throw new RangeError("varint out of range");
    while (x >= 0x80n) {
      this.u8(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.u8(Number(x));
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

export function varintLength(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Spec 4.4: q0 from the measured fraction of zeros, rounded, ties up, clamped to 1..=65535. */
export function measuredQ0(zeros: number, m: number): number {
  const q =
    zeros * 65536 + m < 2 ** 53
      ? Math.floor((zeros * 65536 + Math.floor(m / 2)) / m)
      : Number((BigInt(zeros) * 65536n + BigInt(Math.floor(m / 2))) / BigInt(m));
  return Math.min(65535, Math.max(1, q));
}

/** The one bits of a packed array (32 bits a step where the array is aligned). */
export function countOnes(bits: Uint8Array): number {
  let c = 0, i = 0;
  const n = bits.length;
  while (i < n && (bits.byteOffset + i) & 3) {
    for (let b = bits[i++]; b; b &= b - 1) c++;
  }
  const words = (n - i) >>> 2;
  if (words > 0) {
    const w = new Int32Array(bits.buffer, bits.byteOffset + i, words);
    for (let k = 0; k < words; k++) {
      let v = w[k];
      v = v - ((v >>> 1) & 0x55555555);
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      c += Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    i += 4 * words;
  }
  while (i < n) for (let b = bits[i++]; b; b &= b - 1) c++;
  return c;
}

/** Spec 4.2's encoder: words of `lower` emitted at renormalizations, a carry propagated into them. */
class RangeEncoder {
  words: number[] = [];
  lowH = 0;
  lowL = 0;
  rngH = 0xffffffff;
  rngL = 0xffffffff;

  private carry(): void {
    let i = this.words.length - 1;
    while (this.words[i] === 0xffffffff) this.words[i--] = 0;
    this.words[i]++;
  }

  /** lower += (h, l); range = (rh, rl); renormalize */
  step(addH: number, addL: number, rh: number, rl: number): void {
    if (addH || addL) {
      const l = this.lowL + addL;
      this.lowL = l >>> 0;
      const h = this.lowH + addH + (l >= TWO32 ? 1 : 0);
      this.lowH = h >>> 0;
      if (h >= TWO32) this.carry();
    }
    this.rngH = rh;
    this.rngL = rl;
    if (rh === 0) {
      this.words.push(this.lowH);
      this.lowH = this.lowL;
      this.lowL = 0;
      this.rngH = this.rngL;
      this.rngL = 0;
    }
  }

  bit(bit: number, q: number): void {
    const sH = this.rngH >>> 16;
    const sL = (this.rngH & 0xffff) * 65536 + (this.rngL >>> 16);
    if (!bit) {
      const t = sL * q;
      this.step(0, 0, sH * q + Math.floor(t / TWO32), t >>> 0);
    } else {
      const t = sL * q;
      const bH = sH * q + Math.floor(t / TWO32), bL = t >>> 0;
      const q1 = 65536 - q;
      const u = sL * q1;
      this.step(bH, bL, sH * q1 + Math.floor(u / TWO32), u >>> 0);
    }
  }

  /** decode_symbol's mirror: lower += scale * cum, range = scale * f, scale = floor(range / T). */
  symbol(cum: number, f: number, T: number): void {
    const range = (BigInt(this.rngH) << 32n) | BigInt(this.rngL);
    const scale = range / BigInt(T);
    const add = scale * BigInt(cum), rng = scale * BigInt(f);
    this.step(Number(add >> 32n), Number(add & 0xffffffffn), Number(rng >> 32n), Number(rng & 0xffffffffn));
  }

  finish(): Uint8Array {
    const lower = (BigInt(this.lowH) << 32n) | BigInt(this.lowL);
    const end = lower + ((BigInt(this.rngH) << 32n) | BigInt(this.rngL));
    let b = 0, X = 0n;
    for (; b <= 4; b++) {
      const unit = 1n << BigInt(64 - 8 * b);
      X = ((lower + unit - 1n) / unit) * unit;
      if (X < end) break;
    }
    if (X >= 1n << 64n) {
      this.carry();
      X -= 1n << 64n;
    }
    const out = new Uint8Array(4 * this.words.length + b);
    let o = 0;
    for (const w of this.words) {
      out[o++] = w >>> 24;
      out[o++] = (w >>> 16) & 0xff;
      out[o++] = (w >>> 8) & 0xff;
      out[o++] = w & 0xff;
    }
    for (let i = 0; i < b; i++) out[o++] = Number((X >> BigInt(56 - 8 * i)) & 0xffn);
    let L = out.length;
    while (L > 0 && out[L - 1] === 0) L--;
    return out.subarray(0, L);
  }
}

/** Codings 2 (q0 given) and 1 (q0 = 0: adaptive) of the m bits of `bits`. */
export function encodeRangeBits(bits: Uint8Array, m: number, q0: number): Uint8Array {
  const enc = new RangeEncoder();
  let c0 = 1, c1 = 1;
  for (let i = 0; i < m; i++) {
    const bit = (bits[i >>> 3] >> (i & 7)) & 1;
    const q = q0 || Math.max(1, Math.floor((c0 * 65536) / (c0 + c1)));
    enc.bit(bit, q);
    if (bit) c1++;
    else c0++;
  }
  return enc.finish();
}

/** Spec 4.7's table from the histogram of the counters. */
export function counterTable(counters: Uint8Array): number[] {
  const hist = new Float64Array(256);
  let top = 0;
  for (let i = 0; i < counters.length; i++) {
    hist[counters[i]]++;
    if (counters[i] > top) top = counters[i];
  }
  const m = counters.length;
  const t = top + 1;
  const f: number[] = [];
  let S = 0;
  for (let v = 0; v < t; v++) {
    const fv = hist[v] === 0 ? 0 : Math.max(1, Number((BigInt(hist[v]) * 65536n) / BigInt(m)));
    f.push(fv);
    S += fv;
  }
  let j = 0;
  for (let v = 1; v < t; v++) if (f[v] > f[j]) j = v;
  f[j] += 65536 - S;
  return f;
}

/** Codings 4 (table) and 5 (table null: adaptive) of counters of `width` bits. */
export function encodeRangeCounters(counters: Uint8Array, width: number, table: number[] | null): Uint8Array {
  const enc = new RangeEncoder();
  const symbols = 1 << width;
  const freq = new Float64Array(symbols);
  let total: number;
  if (table) {
    table.forEach((f, v) => (freq[v] = f));
    total = 65536;
  } else {
    freq.fill(1);
    total = symbols;
  }
  const count = table && table.length === 1 ? Math.min(1, counters.length) : counters.length;
  for (let i = 0; i < count; i++) {
    const v = counters[i];
    let cum = 0;
    for (let u = 0; u < v; u++) cum += freq[u];
    if (freq[v] === 0) throw new RangeError(`counter value ${v} has frequency 0 in the table`);
    enc.symbol(cum, freq[v], total);
    if (!table) total = adaptCounts(freq, v, total);
  }
  return enc.finish();
}

/** The positions of the one bits of bits[0 .. m). */
export function onePositions(bits: Uint8Array, m: number): Float64Array {
  let c = 0;
  for (let i = 0; i < bits.length; i++) for (let b = bits[i]; b; b &= b - 1) c++;
  const out = new Float64Array(c);
  let k = 0;
  for (let i = 0; i < bits.length; i++) {
    for (let b = bits[i]; b; b &= b - 1) out[k++] = 8 * i + (31 - Math.clz32(b & -b));
  }
  void m;
  return out;
}

/** Coding 7 of the one bits at `positions` (increasing) in an array of m bits. */
export function encodePositional(positions: ArrayLike<number>, m: number): Uint8Array {
  const c = positions.length;
  const w = new ByteWriter();
  w.varint(c);
  if (c === 0) return w.result();
  const lanes = c >= 16384 ? 2 : 1;
  const { r, a } = gapParams(m, c);
  const { Q, f, cum } = gapModel(a);
  const RJ = Math.min(r, 15), K = r - RJ;
  const x = [1n << 31n, 1n << 31n];
  const pushes: number[] = [];
  const M32 = 0xffffffffn;
  const fQ = BigInt(f[Q]), cQ = BigInt(cum[Q]);
  for (let i = c - 1; i >= 0; i--) {
    const j = i % lanes;
    const prev = i === 0 ? -1 : positions[i - 1];
    const g = positions[i] - prev - 1;
    const q = Math.floor(g / 2 ** r);
    const e = Math.floor(q / Q), v = q % Q;
    const rem = g - q * 2 ** r;
    let s = x[j];
    if (K > 0) {
      if (s >= 1n << BigInt(63 - K)) {
        pushes.push(Number(s & M32));
        s >>= 32n;
      }
      s = (s << BigInt(K)) | BigInt(Math.floor(rem / 2 ** RJ));
    }
    const fv = BigInt(f[v]);
    if (s >= fv << BigInt(47 - RJ)) {
      pushes.push(Number(s & M32));
      s >>= 32n;
    }
    const y = (s << BigInt(RJ)) | BigInt(rem % 2 ** RJ);
    s = (y / fv) * 65536n + (y % fv) + BigInt(cum[v]);
    for (let k = 0; k < e; k++) {
      if (s >= fQ << 47n) {
        pushes.push(Number(s & M32));
        s >>= 32n;
      }
      s = (s / fQ) * 65536n + (s % fQ) + cQ;
    }
    x[j] = s;
  }
  for (let j = lanes - 1; j >= 0; j--) {
    pushes.push(Number(x[j] >> 32n));
    pushes.push(Number(x[j] & M32));
  }
  for (let i = pushes.length - 1; i >= 0; i--) w.u32(pushes[i]);
  return w.result();
}
