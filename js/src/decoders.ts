/**
 * Payload decoders of spec section 4. Each takes a payload (a view), the number of bits
 * m and writes the packed bits into `out` (ceil(m / 8) bytes, zero on entry). Every
 * fault is CorruptPayload. Hot loops use 32-bit halves and typed arrays, no BigInt.
 */
import { CorruptPayload } from "./errors.js";
import {
  adaptCounts, aliasTable, ansModel, escapeFrequencies, escapeModel, gapFrequencies, gapModel, gapParams, smallTable,
  type SymbolModel,
} from "./models.js";
import { mul32 } from "./u64.js";
import * as r64 from "./u64.js";
import { wideHalf0, wideHalf1 } from "./wide-rounds.js";
import { escapeWasmAvailable, wasmEscape } from "./escape-wasm.js";
import { wasmAvailable, wasmGaps } from "./positional-wasm.js";
import { wasmWide, wideWasmAvailable } from "./wide-wasm.js";

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const TWO32 = 4294967296;
const TWO31 = 2147483648;
const INV65536 = 1 / 65536;

function corrupt(msg: string): never {
  throw new CorruptPayload(msg);
}

/** Bits past m in the last byte must be zero. */
function checkTail(out: Uint8Array, m: number, what: string): void {
  const r = m % 8;
  if (r && out[out.length - 1] >> r) corrupt(`${what}: a bit past m is set`);
}

// ---------------------------------------------------------------------------
// 4.1 raw
export function decodeRaw(p: Uint8Array, m: number, out: Uint8Array): void {
  out.set(p);
  checkTail(out, m, "raw");
}

// ---------------------------------------------------------------------------
// 4.2 range decoder

function beWord(p: Uint8Array, r: number): number {
  const i = 4 * r, L = p.length;
  if (i + 3 < L) return ((p[i] << 24) | (p[i + 1] << 16) | (p[i + 2] << 8) | p[i + 3]) >>> 0;
  let w = 0;
  for (let k = 0; k < 4; k++) w = w * 256 + (i + k < L ? p[i + k] : 0);
  return w;
}

function big(h: number, l: number): bigint {
  return (BigInt(h) << 32n) | BigInt(l);
}

function checkTermination(p: Uint8Array, lower: bigint, range: bigint, point: bigint, reads: number): void {
  const end = lower + range;
  let b = 0, X = 0n;
  for (; b <= 4; b++) {
    const unit = 1n << BigInt(64 - 8 * b);
    X = ((lower + unit - 1n) / unit) * unit;
    if (X < end) break;
  }
  if (point !== (X & 0xffffffffffffffffn)) corrupt("range: the payload does not end with the termination");
  if (p.length > 4 * (reads - 2) + b) corrupt("range: the payload continues past the termination");
  if (p.length > 0 && p[p.length - 1] === 0) corrupt("range: the payload ends with a zero byte");
}

/** Codings 1 (q0 = 0: adaptive) and 2 (known q0). */
export function decodeRangeBits(p: Uint8Array, m: number, q0fixed: number, out: Uint8Array): void {
  let ptH = beWord(p, 0), ptL = beWord(p, 1), reads = 2;
  let lowH = 0, lowL = 0, rngH = 0xffffffff, rngL = 0xffffffff;
  let c0 = 1, c1 = 1;
  const adaptive = q0fixed === 0;
  let acc = 0;
  for (let i = 0; i < m; i++) {
    const q = adaptive ? Math.max(1, Math.floor((c0 * 65536) / (c0 + c1))) : q0fixed;
    const sH = rngH >>> 16;
    const sL = (rngH & 0xffff) * 65536 + (rngL >>> 16);
    let oL = ptL - lowL, oH = ptH - lowH;
    if (oL < 0) {
      oL += TWO32;
      oH -= 1;
    }
    oH = oH >>> 0;
    const capL = (rngL & 0xffff0000) >>> 0;
    if (oH > rngH || (oH === rngH && oL >= capL)) corrupt(`range: point outside the interval at bit ${i}`);
    let t = sL * q;
    const bL = t >>> 0;
    const bH = sH * q + Math.floor(t / TWO32);
    if (oH < bH || (oH === bH && oL < bL)) {
      rngH = bH;
      rngL = bL;
      c0++;
    } else {
      const l = lowL + bL;
      lowL = l >>> 0;
      lowH = (lowH + bH + (l >= TWO32 ? 1 : 0)) >>> 0;
      const q1 = 65536 - q;
      t = sL * q1;
      rngL = t >>> 0;
      rngH = sH * q1 + Math.floor(t / TWO32);
      acc |= 1 << (i & 7);
      c1++;
    }
    if ((i & 7) === 7) {
      out[i >>> 3] = acc;
      acc = 0;
    }
    if (rngH === 0) {
      lowH = lowL;
      lowL = 0;
      rngH = rngL;
      rngL = 0;
      ptH = ptL;
      ptL = beWord(p, reads++);
    }
  }
  if (m & 7) out[out.length - 1] = acc;
  checkTermination(p, big(lowH, lowL), big(rngH, rngL), big(ptH, ptL), reads);
}

// 64-bit helpers for decode_symbol (counters): values as [hi, lo]
function lt(ah: number, al: number, bh: number, bl: number): boolean {
  return ah < bh || (ah === bh && al < bl);
}

/** Codings 4 (table given) and 5 (table null: adaptive), counters of `width` bits into `counters`. */
export function decodeRangeCounters(
  p: Uint8Array, m: number, width: number, table: number[] | null, counters: Uint8Array,
): void {
  let ptH = beWord(p, 0), ptL = beWord(p, 1), reads = 2;
  let lowH = 0, lowL = 0, rngH = 0xffffffff, rngL = 0xffffffff;
  const symbols = 1 << width;
  const freq = new Float64Array(symbols);
  let total: number;
  let lut: Uint8Array | null = null;
  if (table) {
    for (let v = 0; v < table.length; v++) freq[v] = table[v];
    total = 65536;
    lut = new Uint8Array(65536);
    let c = 0;
    for (let v = 0; v < table.length; v++) {
      lut.fill(v, c, c + table[v]);
      c += table[v];
    }
  } else {
    freq.fill(1);
    total = symbols;
  }
  // A table of one value: one counter decoded, the rest are 0 (spec 4.7).
  const count = table && table.length === 1 ? Math.min(m, 1) : m;
  for (let i = 0; i < count; i++) {
    // scale = floor(range / total)
    const qH = Math.floor(rngH / total);
    const r1 = rngH - qH * total;
    const n1 = r1 * 65536 + (rngL >>> 16);
    const q1 = Math.floor(n1 / total);
    const n2 = (n1 - q1 * total) * 65536 + (rngL & 0xffff);
    const q2 = Math.floor(n2 / total);
    const sH = qH, sL = q1 * 65536 + q2;
    let oL = ptL - lowL, oH = ptH - lowH;
    if (oL < 0) {
      oL += TWO32;
      oH -= 1;
    }
    oH = oH >>> 0;
    // quantile = floor(offset / scale), approximated then corrected exactly
    const sD = sH * TWO32 + sL;
    let q = Math.floor((oH * TWO32 + oL) / sD);
    if (q > total) q = total;
    mul32(sL, q);
    let pH = r64.rh + sH * q, pL = r64.rl;
    while (q > 0 && lt(oH, oL, pH, pL)) {
      q--;
      const l = pL - sL;
      pL = l < 0 ? l + TWO32 : l;
      pH = pH - sH - (l < 0 ? 1 : 0);
    }
    for (;;) {
      const l = pL + sL;
      const nL = l >>> 0, nH = pH + sH + (l >= TWO32 ? 1 : 0);
      if (lt(oH, oL, nH, nL)) break;
      q++;
      pL = nL;
      pH = nH;
      if (q > total) break;
    }
    if (q >= total) corrupt(`range: point outside the interval at counter ${i}`);
    let v: number, cum: number;
    if (lut) {
      v = lut[q];
      cum = 0;
      for (let u = 0; u < v; u++) cum += freq[u];
    } else {
      v = 0;
      cum = 0;
      while (q >= cum + freq[v]) cum += freq[v++];
    }
    // lower += scale * cum; range = scale * f(v)
    mul32(sL, cum);
    const addH = r64.rh + sH * cum, addL = r64.rl;
    const l = lowL + addL;
    lowL = l >>> 0;
    lowH = (lowH + addH + (l >= TWO32 ? 1 : 0)) >>> 0;
    const fv = freq[v];
    mul32(sL, fv);
    rngH = r64.rh + sH * fv;
    rngL = r64.rl;
    if (rngH === 0) {
      lowH = lowL;
      lowL = 0;
      rngH = rngL;
      rngL = 0;
      ptH = ptL;
      ptL = beWord(p, reads++);
    }
    counters[i] = v;
    if (!table) total = adaptCounts(freq, v, total);
  }
  checkTermination(p, big(lowH, lowL), big(rngH, rngL), big(ptH, ptL), reads);
}

// ---------------------------------------------------------------------------
// 4.5 / 4.9 precision-24 symbols

function le32(p: Uint8Array, o: number): number {
  return (p[o] | (p[o + 1] << 8) | (p[o + 2] << 16) | (p[o + 3] << 24)) >>> 0;
}

function leWord(p: Uint8Array, i: number): number {
  const o = 4 * i;
  return (p[o] | (p[o + 1] << 8) | (p[o + 2] << 16) | (p[o + 3] << 24)) >>> 0;
}

function findSymbol(model: SymbolModel, slot: number): number {
  let v = model.start[slot >>> 12];
  const cum = model.cum;
  while (cum[v + 1] <= slot) v++;
  return v;
}

/** Coding 3: one ANS state, words popped from the end. */
export function decodeAns(p: Uint8Array, m: number, q0: number, out: Uint8Array): void {
  let W = p.length >>> 2;
  let xH = 0, xL = 0;
  if (W > 0) {
    if (leWord(p, W - 1) === 0) corrupt("ans: the last word is zero");
    xL = leWord(p, --W);
    if (W > 0) {
      xH = xL;
      xL = leWord(p, --W);
    }
  }
  const whole = Math.floor(m / 8), rbits = m % 8;
  const count = whole + (rbits ? 1 : 0);
  const full = ansModel(8, q0), last = rbits ? ansModel(rbits, q0) : full;
  for (let t = 0; t < count; t++) {
    const model = t < whole ? full : last;
    const slot = xL & 0xffffff;
    const v = findSymbol(model, slot);
    const f = model.f[v];
    // x = (x >> 24) * f + (slot - cum)
    const aH = xH >>> 24, aL = ((xH << 8) | (xL >>> 24)) >>> 0;
    mul32(f, aL);
    const l = r64.rl + (slot - model.cum[v]);
    xL = l >>> 0;
    xH = r64.rh + f * aH + (l >= TWO32 ? 1 : 0);
    if (xH === 0 && W > 0) {
      xH = xL;
      xL = leWord(p, --W);
    }
    out[t] = v;
  }
  if (xH !== 0 || xL !== 0 || W !== 0) corrupt("ans: data left after the last symbol");
}

/** Coding 6: four interleaved rANS states, words front to back. */
export function decodeInterleaved(p: Uint8Array, m: number, q0: number, out: Uint8Array): void {
  const W = p.length >>> 2;
  const xh = new Float64Array(4), xl = new Float64Array(4);
  for (let j = 0; j < 4; j++) {
    xl[j] = leWord(p, 2 * j);
    xh[j] = leWord(p, 2 * j + 1);
    if (xh[j] === 0 && xl[j] < TWO31) corrupt("interleaved: an initial state is below 2^31");
    if (xh[j] >= TWO31) corrupt("interleaved: an initial state is at least 2^63");
  }
  let pos = 8;
  const whole = Math.floor(m / 8), rbits = m % 8;
  const count = whole + (rbits ? 1 : 0);
  const full = ansModel(8, q0), last = rbits ? ansModel(rbits, q0) : full;
  for (let t = 0; t < count; t++) {
    const model = t < whole ? full : last;
    const j = t & 3;
    let hi = xh[j], lo = xl[j];
    const slot = lo & 0xffffff;
    const v = findSymbol(model, slot);
    const f = model.f[v];
    const aH = hi >>> 24, aL = ((hi << 8) | (lo >>> 24)) >>> 0;
    mul32(f, aL);
    const l = r64.rl + (slot - model.cum[v]);
    lo = l >>> 0;
    hi = r64.rh + f * aH + (l >= TWO32 ? 1 : 0);
    if (hi === 0 && lo < TWO31) {
      if (pos === W) corrupt("interleaved: the payload ends before the last symbol");
      hi = lo;
      lo = leWord(p, pos++);
    }
    xh[j] = hi;
    xl[j] = lo;
    out[t] = v;
  }
  for (let j = 0; j < 4; j++) {
    if (xh[j] !== 0 || xl[j] !== TWO31) corrupt("interleaved: a state does not end at 2^31");
  }
  if (pos !== W) corrupt("interleaved: words left");
}

// ---------------------------------------------------------------------------
// 4.11 positional

/** Reads a payload varint as a number (CorruptPayload when malformed); returns [value, bytes]. */
export function payloadVarint(p: Uint8Array, at: number): [number, number] {
  let value = 0, scale = 1;
  for (let i = 0; i < 10; i++) {
    if (at + i >= p.length) corrupt("a varint runs past the payload");
    const b = p[at + i];
    value += (b & 0x7f) * scale;
    scale *= 128;
    if (!(b & 0x80)) {
      if (i > 0 && b === 0) corrupt("a varint is not in shortest form");
      if (i === 9 && b > 1) corrupt("a varint exceeds 2^64 - 1");
      return [value, i + 1];
    }
  }
  corrupt("a varint is longer than 10 bytes");
}

/**
 * Coding 7. With `positions` null the one bits are set in `out`; otherwise their positions
 * are written to `positions` (at least c entries; see positionalCount) and out is untouched.
 * Returns the number of one bits.
 */
export function decodePositional(p: Uint8Array, m: number, out: Uint8Array | null, positions: Float64Array | null): number {
  const [c, cl] = payloadVarint(p, 0);
  const S = p.length - cl;
  if (c > m) corrupt("positional: more ones than bits");
  if (c === 0) {
    if (S) corrupt("positional: bytes after the count of an empty array");
    return 0;
  }
  const lanes = c >= 16384 ? 2 : 1;
  if (S % 4 || S < 8 * lanes || c > 8 * S) corrupt("positional: bad stream length for the count");
  const W = S >>> 2;
  if (wasmAvailable()) {
    // each lane's initial state as its low and high 32 bits; 2^31 <= x < 2^63: the high
    // half below 2^31, and not zero unless the low half is at least 2^31
    const x = new Int32Array(4);
    for (let j = 0; j < lanes; j++) {
      const lo = le32(p, cl + 8 * j), hi = le32(p, cl + 8 * j + 4);
      if (hi >= 2 ** 31 || (hi === 0 && lo < 2 ** 31)) corrupt("positional: an initial state is out of range");
      x[2 * j] = lo;
      x[2 * j + 1] = hi;
    }
    const { r, a } = gapParams(m, c);
    const { Q, f, cum } = gapFrequencies(a);
    const RJ = Math.min(r, 15);
    // a sparse array: a pair (index, byte) a byte with ones out of the kernel's memory,
    // stored here, rather than the whole array
    const sparse = !positions && 16 * c <= out!.length && m <= TWO31;
    const pos = wasmGaps(p, cl, W, m, c, lanes, x, r, RJ, r - RJ, Q, f, cum, out, positions, sparse);
    if (pos !== null) {
      if (pos === -1) corrupt("positional: a one beyond m");
      if (pos === -2) corrupt("positional: the payload ends before the last gap");
      if (pos === -3) corrupt("positional: a gap past m");
      // each lane ends at x = 2^31: low half 0x80000000 (as an int32), high half 0
      const ended = (j: number) => x[2 * j] === -2147483648 && x[2 * j + 1] === 0;
      if (!ended(0) || (lanes === 2 && !ended(1)) || pos !== W) {
        corrupt("positional: the stream does not end where the last gap does");
      }
      return c;
    }
  }
  // the words, little-endian, from offset cl: a view when aligned, else a copy (as int32)
  let words: Int32Array;
  if (LITTLE_ENDIAN && (p.byteOffset + cl) % 4 === 0) words = new Int32Array(p.buffer, p.byteOffset + cl, W);
  else {
    words = new Int32Array(W);
    for (let i = 0; i < W; i++) {
      const o = cl + 4 * i;
      words[i] = p[o] | (p[o + 1] << 8) | (p[o + 2] << 16) | (p[o + 3] << 24);
    }
  }
  // each lane's state as xh and xl (int32), between its gaps
  const st = new Int32Array(4);
  for (let j = 0; j < lanes; j++) {
    const lo = words[2 * j], hi = words[2 * j + 1];
    if ((hi === 0 && lo >= 0) || hi < 0) corrupt("positional: an initial state is out of range");
    st[2 * j] = hi;
    st[2 * j + 1] = lo;
  }
  let pos = 2 * lanes;
  const { r, a } = gapParams(m, c);
  const { Q, f, cum, lut } = gapModel(a);
  const RJ = Math.min(r, 15), K = r - RJ;
  pos = positionalGaps(words, W, pos, m, c, lanes - 1, st, r, RJ, K, Q, f, cum, lut, out, positions);
  for (let j = 0; j < lanes; j++) {
    if (st[2 * j] !== 0 || st[2 * j + 1] !== -2147483648) corrupt("positional: the stream does not end where the last gap does");
  }
  if (pos !== W) corrupt("positional: the stream does not end where the last gap does");
  return c;
}

/**
 * The loop of coding 7 (spec 4.11 decoder) on its own, so that V8 compiles it without the
 * checks after it (code a hot loop's compilation has never seen running is compiled as a
 * deoptimization, and a function deoptimized there runs its next call in the interpreter).
 *
 * A lane's 64-bit state x (2^31 <= x < 2^63 between gaps) is two int32: xh = x >> 32
 * (below 2^31) and xl, the low 32 bits as a signed int32, so that every step is integer
 * arithmetic: with y = x >> 16 = yh 2^32 + y1 2^16 + y0 (yh = xh >> 16, y1 = xh & 0xFFFF,
 * y0 = xl >>> 16), f(v) y + d = c 2^32 + b 2^16 + a, a = f y0 + d, b = f y1, c = f yh,
 * each below 2^31 because f <= 30720. Lane states in st (xh, xl per lane); returns the
 * words read.
 */
function positionalGaps(
  words: Int32Array, W: number, pos: number, m: number, c: number, laneMask: number, st: Int32Array,
  r: number, RJ: number, K: number, Q: number, f: Int32Array, cum: Int32Array, lut: Uint8Array,
  out: Uint8Array | null, positions: Float64Array | null,
): number {
  const maskJ = (1 << RJ) - 1, maskK = K === 0 ? 0 : K >= 31 ? 0x7fffffff : (1 << K) - 1;
  const pow2r = 2 ** r, pow2RJ = 2 ** RJ;
  let next = 0;
  for (let i = 0; i < c; i++) {
    const j2 = (i & laneMask) << 1;
    let xh = st[j2], xl = st[j2 + 1];
    const avail = m - next;
    if (avail === 0) corrupt("positional: a one beyond m");
    let q = 0;
    let v = 0;
    for (;;) {
      // x = f(v) * (x >> 16) + (slot - cum(v))
      const slot = xl & 0xffff;
      v = lut[slot];
      const fv = f[v];
      const a = Math.imul(fv, xl >>> 16) + (slot - cum[v]);
      const b = Math.imul(fv, xh & 0xffff);
      const lo = (((b & 0xffff) << 16) + a) | 0;
      xh = Math.imul(fv, xh >>> 16) + (b >>> 16) + ((lo >>> 0) < a ? 1 : 0);
      xl = lo;
      if (v !== Q) break;
      if (xh === 0 && xl >= 0) {
        if (pos === W) corrupt("positional: the payload ends before the last gap");
        xh = xl;
        xl = words[pos++];
      }
      q += Q;
      if (q * pow2r >= avail) corrupt("positional: a gap past m");
    }
    let rem = 0;
    if (RJ > 0) {
      rem = xl & maskJ;
      xl = (xl >>> RJ) | (xh << (32 - RJ));
      xh = xh >>> RJ;
    }
    if (xh === 0 && xl >= 0) {
      if (pos === W) corrupt("positional: the payload ends before the last gap");
      xh = xl;
      xl = words[pos++];
    }
    if (K > 0) {
      rem += (xl & maskK) * pow2RJ;
      xl = (xl >>> K) | (xh << (32 - K));
      xh = xh >>> K;
      if (xh === 0 && xl >= 0) {
        if (pos === W) corrupt("positional: the payload ends before the last gap");
        xh = xl;
        xl = words[pos++];
      }
    }
    st[j2] = xh;
    st[j2 + 1] = xl;
    const g = (q + v) * pow2r + rem;
    if (g >= avail) corrupt("positional: a gap past m");
    const at = next + g;
    if (positions) positions[i] = at;
    else if (at < TWO31) out![at >>> 3] |= 1 << (at & 7);
    else out![Math.floor(at / 8)] |= 1 << (at % 8);
    next = at + 1;
  }
  return pos;
}

/** The count c of a positional payload, checked against the payload's bound (for sizing). */
export function positionalCount(p: Uint8Array): number {
  return payloadVarint(p, 0)[0];
}

// ---------------------------------------------------------------------------
// 4.14 wide (4.12's machinery)

/** Coding 10. Returns the count of ones of the array when the kernel counted them, else -1. */
export function decodeWide(p: Uint8Array, m: number, q0: number, out: Uint8Array): number {
  const L = p.length;
  const x = new Int32Array(64);
  for (let k = 0; k < 64; k++) {
    const o = 4 * k;
    const s = (p[o] | (p[o + 1] << 8) | (p[o + 2] << 16) | (p[o + 3] << 24)) >>> 0;
    if (s < 32768 || s >= TWO31) corrupt("wide: an initial state is outside [2^15, 2^31)");
    x[k] = s;
  }
  const W = (L - 256) >>> 1;
  const n = Math.ceil(m / 4);
  const R = Math.ceil(n / 32);
  const R0 = Math.ceil(R / 2);
  let a0 = 0, a1 = 0;
  const K0w = R0 - Math.min(4, R0), K1w = R - R0 - Math.min(4, R - R0);
  // the kernel builds the alias table in its own layout; the loops below, in the package's
  const kernel = wideWasmAvailable() ? wasmWide(p, W, K0w, K1w, R0, q0, x, out) : null;
  const tab = kernel === null ? aliasTable(q0) : null;
  let ones = -1;
  if (tab === null) {
    if (kernel!.read < 0) corrupt("wide: the payload ends before the last nibble");
    a0 = kernel!.read; // a0 + a1: both halves' words
    ones = kernel!.ones;
  } else if (LITTLE_ENDIAN && out.byteOffset % 2 === 0) {
    const out16 = new Uint16Array(out.buffer, out.byteOffset, out.length >>> 1);
    // the words as 16-bit values: a view when aligned, else a copy
    let w: Uint16Array;
    if ((p.byteOffset + 256) % 2 === 0) w = new Uint16Array(p.buffer, p.byteOffset + 256, W);
    else {
      w = new Uint16Array(W);
      for (let i = 0; i < W; i++) w[i] = p[256 + 2 * i] | (p[257 + 2 * i] << 8);
    }
    const K0 = R0 - Math.min(4, R0), R1 = R - R0, K1 = R1 - Math.min(4, R1);
    // half 0 reads from the front; half 1 from the back, down to the words half 0 took
    a0 = K0 > 0 ? wideHalf0(w, 0, W, tab, x, 0, K0, out16) : 0;
    a1 = K1 > 0 ? W - wideHalf1(w, W, a0, tab, x, R0, K1, out16) : 0;
  } else {
    for (let h = 0; h < 2; h++) {
      const F = h === 0 ? 0 : R0;
      const Rh = h === 0 ? R0 : R - R0;
      const Kh = Rh - Math.min(4, Rh);
      const xo = 32 * h;
      for (let r = F; r < F + Kh; r++) {
        const ob = 16 * r;
        // lane l decodes nibble 4 (l mod 8) + floor(l / 8) of the round: lanes l, l + 8, l + 16
        // and l + 24 fill the 16-bit piece l mod 8 (bytes ob + 2 (l mod 8) and the next)
        for (let q = 0; q < 4; q++) {
          const shift = (q & 1) << 2, half = q >>> 1;
          for (let j = 0; j < 8; j++) {
            const l = xo + 8 * q + j;
            let s = x[l];
            const e = tab[s & 8191];
            s = Math.imul(e >>> 17, s >>> 13) + ((e >>> 4) & 8191);
            if (s < 32768) {
              if (a0 + a1 === W) corrupt("wide: the payload ends before the last nibble");
              const o = h === 0 ? 256 + 2 * a0++ : 256 + 2 * (W - ++a1);
              s = (s << 16) | p[o] | (p[o + 1] << 8);
            }
            x[l] = s;
            out[ob + 2 * j + half] |= (e & 15) << shift;
          }
        }
      }
    }
  }
  if (a0 + a1 !== W) corrupt("wide: words left");
  const nbytes = out.length;
  for (let h = 0; h < 2; h++) {
    const F = h === 0 ? 0 : R0;
    const Rh = h === 0 ? R0 : R - R0;
    const c = Math.min(4, Rh);
    for (let l = 0; l < 32; l++) {
      const carried = x[32 * h + l] - 32768;
      if (carried >= 2 ** (4 * c)) corrupt("wide: a state holds more than its carried nibbles");
      for (let i = 0; i < c; i++) {
        const t = 32 * (F + Rh - c + i) + 4 * (l & 7) + (l >>> 3);
        const v = (carried >>> (4 * i)) & 15;
        if (t < n) {
          const b = t >>> 1;
          if (b < nbytes) out[b] |= v << ((t & 1) << 2);
          else if (v) corrupt("wide: a bit past m is set");
          ones += NIBBLE_ONES[v];
        } else if (v) corrupt("wide: a carried nibble past m is set");
      }
    }
  }
  checkTail(out, m, "wide");
  return kernel !== null ? ones : -1;
}

/** popcount of a nibble */
const NIBBLE_ONES = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4];

// ---------------------------------------------------------------------------
// 4.13 small and 4.15 escape: tANS over one LSB-first bit stream

/** Checks that the bits read fill the payload and the padding after them is zero. */
function checkEnd(p: Uint8Array, j: number, what: string): void {
  if (Math.ceil(j / 8) !== p.length) corrupt(`${what}: bytes left`);
  if (j & 7 && p[j >>> 3] >> (j & 7)) corrupt(`${what}: padding bits are set`);
}

/*
 * Both tANS codings read one LSB-first bit stream. The reader keeps up to 32 bits in `bb`
 * (`bc` of them valid) and refills a byte at a time from a copy of the payload padded
 * with zeros; a read past the payload's end is caught at most one group of steps later
 * (bits read > 8 L), before any result is used, and rejects the payload as the spec says.
 */
const PAD = 32;

function paddedCopy(p: Uint8Array): Uint8Array {
  const b = new Uint8Array(p.length + PAD);
  b.set(p);
  return b;
}

export function decodeSmall(p: Uint8Array, m: number, q0: number, out: Uint8Array): void {
  const buf = paddedCopy(p);
  const total = 8 * p.length;
  const tab = smallTable(q0);
  let bb = 0, bc = 0, bp = 0;
  // the four 12-bit states (48 bits, L >= 6)
  bb = buf[0] | (buf[1] << 8) | (buf[2] << 16);
  let u0 = bb & 4095, u1 = (bb >>> 12) & 4095;
  bb = buf[3] | (buf[4] << 8) | (buf[5] << 16);
  let u2 = bb & 4095, u3 = (bb >>> 12) & 4095;
  bb = 0;
  bp = 6;
  const n = Math.ceil(m / 4);
  const T = Math.max(0, n - 12);
  const T8 = T & ~7;
  let e = 0, nb = 0;
  // eight nibbles (four bytes of out, two steps of each state) a turn
  for (let t = 0; t < T8; t += 8) {
    while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
    e = tab[u0]; nb = (e >>> 8) & 15; u0 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    let b0 = e & 15;
    e = tab[u1]; nb = (e >>> 8) & 15; u1 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    b0 |= (e & 15) << 4;
    while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
    e = tab[u2]; nb = (e >>> 8) & 15; u2 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    let b1 = e & 15;
    e = tab[u3]; nb = (e >>> 8) & 15; u3 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    b1 |= (e & 15) << 4;
    while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
    e = tab[u0]; nb = (e >>> 8) & 15; u0 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    let b2 = e & 15;
    e = tab[u1]; nb = (e >>> 8) & 15; u1 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    b2 |= (e & 15) << 4;
    while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
    e = tab[u2]; nb = (e >>> 8) & 15; u2 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    let b3 = e & 15;
    e = tab[u3]; nb = (e >>> 8) & 15; u3 = (e >>> 12) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    b3 |= (e & 15) << 4;
    const o = t >>> 1;
    out[o] = b0;
    out[o + 1] = b1;
    out[o + 2] = b2;
    out[o + 3] = b3;
    if (8 * bp - bc > total) corrupt("small: a read past the end of the payload");
  }
  const u = [u0, u1, u2, u3];
  for (let t = T8; t < T; t++) {
    while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
    const s = t & 3;
    e = tab[u[s]];
    nb = (e >>> 8) & 15;
    u[s] = (e >>> 12) + (bb & ((1 << nb) - 1));
    bb = (bb >>> nb) | 0;
    bc -= nb;
    out[t >>> 1] |= (e & 15) << ((t & 1) << 2);
  }
  const j = 8 * bp - bc;
  if (j > total) corrupt("small: a read past the end of the payload");
  const carried = [0, 0, 0, 0];
  for (let t = T; t < n; t++) {
    const s = t & 3;
    const v = (u[s] >>> (4 * ((t - T) >>> 2))) & 15;
    carried[s]++;
    out[t >>> 1] |= v << ((t & 1) << 2);
  }
  for (let s = 0; s < 4; s++) {
    if (u[s] >= 16 ** carried[s]) corrupt("small: a state holds more than its carried nibbles");
  }
  checkEnd(p, j, "small");
  checkTail(out, m, "small");
}

/** Coding 11's tables for the JavaScript loop, rebuilt for each frame into the same buffers. */
const ESCAPE_TABLES = { t1: new Int32Array(4096), t2: new Int32Array(2048) };

/** Coding 11. Returns the count of ones of the array when the kernel counted them, else -1. */
export function decodeEscape(p: Uint8Array, m: number, q0: number, out: Uint8Array): number {
  const total = 8 * p.length;
  // 4 x 12 + 11 bits of states (L >= 8)
  let bb = p[0] | (p[1] << 8) | (p[2] << 16);
  let u0 = bb & 4095, u1 = (bb >>> 12) & 4095;
  bb = p[3] | (p[4] << 8) | (p[5] << 16);
  let u2 = bb & 4095, u3 = (bb >>> 12) & 4095;
  let y = (p[6] | (p[7] << 8)) & 2047;
  bb = p[7] >>> 3;
  let bc = 5, bp = 8;
  const n = Math.ceil(m / 8);
  const T = Math.max(0, n - 4);
  if (escapeWasmAvailable()) {
    const st = Int32Array.of(u0, u1, u2, u3, y);
    const [f1, f2] = escapeFrequencies(q0);
    const r = wasmEscape(p, T, f1, f2, st, out);
    if (r !== null) {
      if (r.read < 0) corrupt("escape: a read past the end of the payload");
      escapeEnd(p, m, out, T, n, st, r.read);
      let ones = r.ones;
      for (let t = r.counted; t < n; t++) ones += BYTE_ONES[out[t]];
      return ones;
    }
  }
  const { t1, t2 } = escapeModel(q0, ESCAPE_TABLES);
  const buf = paddedCopy(p);
  const T4 = T & ~3;
  let e = 0, nb = 0;
  for (let t = 0; t < T4; t += 4) {
    while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
    e = t1[u0]; nb = (e >>> 9) & 15; u0 = (e >>> 13) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    const v0 = e & 511;
    e = t1[u1]; nb = (e >>> 9) & 15; u1 = (e >>> 13) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    const v1 = e & 511;
    while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
    e = t1[u2]; nb = (e >>> 9) & 15; u2 = (e >>> 13) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    const v2 = e & 511;
    e = t1[u3]; nb = (e >>> 9) & 15; u3 = (e >>> 13) + (bb & ((1 << nb) - 1)); bb = (bb >>> nb) | 0; bc -= nb;
    const v3 = e & 511;
    if ((v0 | v1 | v2 | v3) & 256) {
      // the escaped bytes of the group, in order, from the secondary state
      const vs = [v0, v1, v2, v3];
      for (let k = 0; k < 4; k++) {
        if (vs[k] === 256) {
          while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
          e = t2[y];
          out[t + k] = e & 255;
          nb = (e >>> 9) & 15;
          y = (e >>> 13) + (bb & ((1 << nb) - 1));
          bb = (bb >>> nb) | 0;
          bc -= nb;
        } else out[t + k] = vs[k];
      }
    } else {
      out[t] = v0;
      out[t + 1] = v1;
      out[t + 2] = v2;
      out[t + 3] = v3;
    }
    if (8 * bp - bc > total) corrupt("escape: a read past the end of the payload");
  }
  const u = [u0, u1, u2, u3];
  if (T4 < T) {
    const vs = [0, 0, 0, 0];
    for (let t = T4; t < T; t++) {
      while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
      const s = t & 3;
      e = t1[u[s]];
      nb = (e >>> 9) & 15;
      u[s] = (e >>> 13) + (bb & ((1 << nb) - 1));
      bb = (bb >>> nb) | 0;
      bc -= nb;
      vs[s] = e & 511;
    }
    for (let t = T4; t < T; t++) {
      const s = t & 3;
      if (vs[s] === 256) {
        while (bc <= 24) { bb |= buf[bp++] << bc; bc += 8; }
        e = t2[y];
        out[t] = e & 255;
        nb = (e >>> 9) & 15;
        y = (e >>> 13) + (bb & ((1 << nb) - 1));
        bb = (bb >>> nb) | 0;
        bc -= nb;
      } else out[t] = vs[s];
    }
  }
  const j = 8 * bp - bc;
  if (j > total) corrupt("escape: a read past the end of the payload");
  escapeEnd(p, m, out, T, n, [u[0], u[1], u[2], u[3], y], j);
  return -1;
}

/** popcount of a byte */
const BYTE_ONES = Uint8Array.from({ length: 256 }, (_, b) => NIBBLE_ONES[b & 15] + NIBBLE_ONES[b >>> 4]);

/** Coding 11 after its loop: the carried bytes from the states, and the final checks. */
function escapeEnd(p: Uint8Array, m: number, out: Uint8Array, T: number, n: number, st: ArrayLike<number>, j: number): void {
  const carried = [0, 0, 0, 0];
  for (let t = T; t < n; t++) {
    out[t] = st[t & 3] & 255;
    carried[t & 3]++;
  }
  for (let s = 0; s < 4; s++) {
    if (st[s] >= 256 ** carried[s]) corrupt("escape: a state holds more than its carried byte");
  }
  if (st[4] !== 0) corrupt("escape: the secondary state does not end at 0");
  checkEnd(p, j, "escape");
  checkTail(out, m, "escape");
}


// ---------------------------------------------------------------------------
// 2.2 length rules per (chunk) payload, and dispatch

export function payloadLengthOk(coding: number, length: number): boolean {
  switch (coding) {
    case 3: return length % 4 === 0;
    case 6: return length % 4 === 0 && length >= 32;
    case 7: return length >= 1;
    case 9: return length >= 6;
    case 10: return length % 2 === 0 && length >= 256;
    case 11: return length >= 8;
    default: return true;
  }
}

/**
 * Decodes an unchunked payload of a Bloom frame (coding 0 length checked by the header).
 * Returns the count of ones of `out` when the decoder knows it (coding 7; codings 10 and 11
 * in WebAssembly), else -1.
 */
export function decodeBits(coding: number, p: Uint8Array, m: number, q0: number, out: Uint8Array): number {
  if (!payloadLengthOk(coding, p.length)) corrupt(`coding ${coding}: bad payload length ${p.length}`);
  switch (coding) {
    case 0: decodeRaw(p, m, out); return -1;
    case 1: decodeRangeBits(p, m, 0, out); return -1;
    case 2: decodeRangeBits(p, m, q0, out); return -1;
    case 3: decodeAns(p, m, q0, out); return -1;
    case 6: decodeInterleaved(p, m, q0, out); return -1;
    case 7: return decodePositional(p, m, out, null);
    case 9: decodeSmall(p, m, q0, out); return -1;
    case 10: return decodeWide(p, m, q0, out);
    case 11: return decodeEscape(p, m, q0, out);
    default: corrupt(`coding ${coding}`);
  }
}

/** The chunk table of spec 4.10: the payload offset of each chunk and its length. */
export function chunkTable(p: Uint8Array, m: number, shift: number): { start: number; lengths: Float64Array } {
  const K = Math.ceil(m / 2 ** shift);
  const lengths = new Float64Array(K);
  let at = 0, sum = 0;
  for (let i = 0; i < K; i++) {
    const [len, used] = payloadVarint(p, at);
    at += used;
    lengths[i] = len;
    sum += len;
    if (sum > p.length) corrupt("chunk lengths run past the payload");
  }
  if (at + sum !== p.length) corrupt("chunk lengths do not add up to the payload");
  return { start: at, lengths };
}

/** Decodes a chunked payload (4.10). Returns the count of ones when every chunk's decoder knew it, else -1. */
export function decodeChunked(coding: number, p: Uint8Array, m: number, q0: number, shift: number, out: Uint8Array): number {
  const { start, lengths } = chunkTable(p, m, shift);
  const size = 2 ** shift;
  let at = start;
  let ones = 0;
  for (let i = 0; i < lengths.length; i++) {
    const nbits = Math.min(size, m - i * size);
    const ob = (i * size) / 8;
    const c = decodeBits(coding, p.subarray(at, at + lengths[i]), nbits, q0, out.subarray(ob, ob + Math.ceil(nbits / 8)));
    ones = ones < 0 || c < 0 ? -1 : ones + c;
    at += lengths[i];
  }
  return ones;
}

// ---------------------------------------------------------------------------
// Warm-up. V8 compiles a hot loop with the type feedback it has seen; a branch that never
// ran (an escape, the end checks after the loop) becomes a deoptimization, and a decoder
// deoptimized at the end of one chunk runs the next in the interpreter until it is
// compiled again (measured: a 2^27-bit positional frame of 8 chunks took 5 to 10 times
// longer). So the first frame of a coding first decodes small payloads that take every
// branch of its loop, once.

const warmed = new Set<number>();

/**
 * Runs a coding's decoder over small payloads that take every branch of its loop and the
 * code after it: for coding 7 payloads of the encoder (with and without escapes, one and
 * two lanes, remainders of more than 15 bits), for the others pseudo-random payloads (which
 * end in CorruptPayload, after the loop has run).
 */
export function warmUp(coding: number, q0: number, encodePositions: (positions: ArrayLike<number>, m: number) => Uint8Array): void {
  if (warmed.has(coding)) return;
  warmed.add(coding);
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  if (coding === 7) {
    if (wasmAvailable()) return; // the WebAssembly loop decodes, not the JavaScript one
    const cases: [number, number][] = [[4096, 40], [1 << 16, 20000], [2 ** 33, 30], [200000, 500]];
    for (let rep = 0; rep < 3; rep++) {
      for (const [m, c] of cases) {
        const set = new Set<number>();
        while (set.size < c) set.add(Math.floor(rand() * m));
        const positions = Float64Array.from([...set].sort((a, b) => a - b));
        const p = encodePositions(positions, m);
        decodePositional(p, m, null, new Float64Array(c));
        if (m <= 1 << 20) decodePositional(p, m, new Uint8Array(Math.ceil(m / 8)), null);
      }
    }
    return;
  }
  if (![9, 10, 11].includes(coding)) return;
  // the WebAssembly loops decode, not the JavaScript ones (WebAssembly has no
  // deoptimization to avoid); a frame too large for the kernel's memory falls back to the
  // JavaScript loop, which then runs its first frame without this warm-up
  if ((coding === 10 && wideWasmAvailable()) || (coding === 11 && escapeWasmAvailable())) return;
  const m = coding === 10 ? 32 * 4 * 40 : 20000;
  for (let rep = 0; rep < 6; rep++) {
    const p = Uint8Array.from({ length: coding === 10 ? 256 + 2 * 4000 : 4000 }, () => Math.floor(rand() * 256));
    // valid initial states for coding 10 (each in [2^15, 2^31))
    if (coding === 10) for (let k = 0; k < 64; k++) p[4 * k + 3] = 0x01;
    try {
      decodeBits(coding, p, m, q0, new Uint8Array(Math.ceil(m / 8)));
    } catch (e) {
      if (!(e instanceof CorruptPayload)) throw e;
    }
  }
}
