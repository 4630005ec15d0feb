/**
 * The base hashes of spec 3.1 (XXH64, appendix A; SipHash-2-4, appendix B) and the stream
 * words and reduction of spec 3.2, on 32-bit halves. The 64-bit results are written to
 * `out` as [hi, lo] (no allocation).
 */
import { add64, mul32, mul64, rotl64 } from "./u64.js";
import * as r from "./u64.js";

const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;

let ah = 0, al = 0; // accumulator registers

function u32(b: Uint8Array, p: number): number {
  return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
}

// round(acc, lane) = rotl(acc + lane * P2, 31) * P1, into (r.rh, r.rl)
function round(h: number, l: number, lh: number, ll: number): void {
  mul64(lh, ll, P2H, P2L);
  add64(h, l, r.rh, r.rl);
  rotl64(r.rh, r.rl, 31);
  mul64(r.rh, r.rl, P1H, P1L);
}

function merge(vh: number, vl: number): void {
  round(0, 0, vh, vl);
  const xh = (ah ^ r.rh) >>> 0, xl = (al ^ r.rl) >>> 0;
  mul64(xh, xl, P1H, P1L);
  add64(r.rh, r.rl, P4H, P4L);
  ah = r.rh;
  al = r.rl;
}

/** XXH64 of `input` with the seed (seedHi, seedLo), into out = [hi, lo]. */
export function xxh64(input: Uint8Array, seedHi: number, seedLo: number, out: Uint32Array): void {
  const len = input.length;
  let p = 0;
  if (len >= 32) {
    add64(seedHi, seedLo, P1H, P1L);
    add64(r.rh, r.rl, P2H, P2L);
    let v1h = r.rh, v1l = r.rl;
    add64(seedHi, seedLo, P2H, P2L);
    let v2h = r.rh, v2l = r.rl;
    let v3h = seedHi, v3l = seedLo;
    add64(seedHi, seedLo, ~P1H >>> 0, ~P1L >>> 0); // seed - P1 = seed + ~P1 + 1
    add64(r.rh, r.rl, 0, 1);
    let v4h = r.rh, v4l = r.rl;
    while (p + 32 <= len) {
      round(v1h, v1l, u32(input, p + 4), u32(input, p));
      v1h = r.rh; v1l = r.rl;
      round(v2h, v2l, u32(input, p + 12), u32(input, p + 8));
      v2h = r.rh; v2l = r.rl;
      round(v3h, v3l, u32(input, p + 20), u32(input, p + 16));
      v3h = r.rh; v3l = r.rl;
      round(v4h, v4l, u32(input, p + 28), u32(input, p + 24));
      v4h = r.rh; v4l = r.rl;
      p += 32;
    }
    rotl64(v1h, v1l, 1);
    let sh = r.rh, sl = r.rl;
    rotl64(v2h, v2l, 7);
    add64(sh, sl, r.rh, r.rl);
    sh = r.rh; sl = r.rl;
    rotl64(v3h, v3l, 12);
    add64(sh, sl, r.rh, r.rl);
    sh = r.rh; sl = r.rl;
    rotl64(v4h, v4l, 18);
    add64(sh, sl, r.rh, r.rl);
    ah = r.rh; al = r.rl;
    merge(v1h, v1l);
    merge(v2h, v2l);
    merge(v3h, v3l);
    merge(v4h, v4l);
  } else {
    add64(seedHi, seedLo, P5H, P5L);
    ah = r.rh; al = r.rl;
  }
  add64(ah, al, Math.floor(len / 4294967296), len >>> 0);
  ah = r.rh; al = r.rl;
  while (p + 8 <= len) {
    round(0, 0, u32(input, p + 4), u32(input, p));
    rotl64((ah ^ r.rh) >>> 0, (al ^ r.rl) >>> 0, 27);
    mul64(r.rh, r.rl, P1H, P1L);
    add64(r.rh, r.rl, P4H, P4L);
    ah = r.rh; al = r.rl;
    p += 8;
  }
  if (p + 4 <= len) {
    mul64(0, u32(input, p), P1H, P1L);
    rotl64((ah ^ r.rh) >>> 0, (al ^ r.rl) >>> 0, 23);
    mul64(r.rh, r.rl, P2H, P2L);
    add64(r.rh, r.rl, P3H, P3L);
    ah = r.rh; al = r.rl;
    p += 4;
  }
  while (p < len) {
    mul64(0, input[p], P5H, P5L);
    rotl64((ah ^ r.rh) >>> 0, (al ^ r.rl) >>> 0, 11);
    mul64(r.rh, r.rl, P1H, P1L);
    ah = r.rh; al = r.rl;
    p++;
  }
  // avalanche
  al = (al ^ (ah >>> 1)) >>> 0; // ^= >> 33
  mul64(ah, al, P2H, P2L);
  ah = r.rh; al = r.rl;
  al = (al ^ ((al >>> 29) | (ah << 3))) >>> 0; // ^= >> 29
  ah = (ah ^ (ah >>> 29)) >>> 0;
  mul64(ah, al, P3H, P3L);
  ah = r.rh; al = r.rl;
  out[0] = ah;
  out[1] = (al ^ ah) >>> 0; // ^= >> 32
}

// SipHash-2-4 state
let v0h = 0, v0l = 0, v1h = 0, v1l = 0, v2h = 0, v2l = 0, v3h = 0, v3l = 0;

function sipround(): void {
  add64(v0h, v0l, v1h, v1l); v0h = r.rh; v0l = r.rl;
  rotl64(v1h, v1l, 13); v1h = (r.rh ^ v0h) >>> 0; v1l = (r.rl ^ v0l) >>> 0;
  const t = v0h; v0h = v0l; v0l = t; // rotl 32
  add64(v2h, v2l, v3h, v3l); v2h = r.rh; v2l = r.rl;
  rotl64(v3h, v3l, 16); v3h = (r.rh ^ v2h) >>> 0; v3l = (r.rl ^ v2l) >>> 0;
  add64(v0h, v0l, v3h, v3l); v0h = r.rh; v0l = r.rl;
  rotl64(v3h, v3l, 21); v3h = (r.rh ^ v0h) >>> 0; v3l = (r.rl ^ v0l) >>> 0;
  add64(v2h, v2l, v1h, v1l); v2h = r.rh; v2l = r.rl;
  rotl64(v1h, v1l, 17); v1h = (r.rh ^ v2h) >>> 0; v1l = (r.rl ^ v2l) >>> 0;
  const u = v2h; v2h = v2l; v2l = u; // rotl 32
}

function sipBlock(mh: number, ml: number): void {
  v3h = (v3h ^ mh) >>> 0; v3l = (v3l ^ ml) >>> 0;
  sipround();
  sipround();
  v0h = (v0h ^ mh) >>> 0; v0l = (v0l ^ ml) >>> 0;
}

/** SipHash-2-4 of `input` with the key (k0, k1), each as hi and lo halves, into out = [hi, lo]. */
export function siphash24(
  input: Uint8Array, k0h: number, k0l: number, k1h: number, k1l: number, out: Uint32Array,
): void {
  v0h = (k0h ^ 0x736f6d65) >>> 0; v0l = (k0l ^ 0x70736575) >>> 0;
  v1h = (k1h ^ 0x646f7261) >>> 0; v1l = (k1l ^ 0x6e646f6d) >>> 0;
  v2h = (k0h ^ 0x6c796765) >>> 0; v2l = (k0l ^ 0x6e657261) >>> 0;
  v3h = (k1h ^ 0x74656462) >>> 0; v3l = (k1l ^ 0x79746573) >>> 0;
  const len = input.length;
  let p = 0;
  for (; p + 8 <= len; p += 8) sipBlock(u32(input, p + 4), u32(input, p));
  let lh = ((len & 0xff) << 24) >>> 0, ll = 0;
  for (let i = 0; p + i < len; i++) {
    if (i < 4) ll |= input[p + i] << (8 * i);
    else lh |= input[p + i] << (8 * (i - 4));
  }
  sipBlock(lh >>> 0, ll >>> 0);
  v2l = (v2l ^ 0xff) >>> 0;
  sipround(); sipround(); sipround(); sipround();
  out[0] = (v0h ^ v1h ^ v2h ^ v3h) >>> 0;
  out[1] = (v0l ^ v1l ^ v2l ^ v3l) >>> 0;
}

/** fmix64(h + s * 0x9E3779B97F4A7C15) of spec 3.2 into out = [hi, lo]. */
export function stream(hh: number, hl: number, s: number, out: Uint32Array): void {
  mul64(0, s, 0x9e3779b9, 0x7f4a7c15);
  add64(hh, hl, r.rh, r.rl);
  let xh = r.rh, xl = r.rl;
  xl = (xl ^ (xh >>> 1)) >>> 0;
  mul64(xh, xl, 0xff51afd7, 0xed558ccd);
  xh = r.rh; xl = r.rl;
  xl = (xl ^ (xh >>> 1)) >>> 0;
  mul64(xh, xl, 0xc4ceb9fe, 0x1a85ec53);
  xh = r.rh; xl = r.rl;
  out[0] = xh;
  out[1] = (xl ^ (xh >>> 1)) >>> 0;
}

/** floor(x * R / 2^64) for x = (xh, xl) and 1 <= R <= 2^48 (spec 3.2). */
export function reduce(xh: number, xl: number, R: number): number {
  if (R <= 0xffffffff) {
    mul32(xh, R);
    const ah = r.rh, al = r.rl;
    mul32(xl, R);
    return ah + Math.floor((al + r.rh) / 4294967296);
  }
  const Rh = Math.floor(R / 4294967296), Rl = R >>> 0;
  mul32(xh, Rl);
  const ah = r.rh, al = r.rl;
  mul32(xl, Rl);
  return xh * Rh + ah + Math.floor((al + xl * Rh + r.rh) / 4294967296);
}
