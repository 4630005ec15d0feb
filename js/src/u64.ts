/**
 * 64-bit arithmetic on pairs of unsigned 32-bit halves (hi, lo), without BigInt, for the
 * hashes of spec 3 and the 64-bit coder states. Results of the two-word operations are
 * left in the module's registers `rh` and `rl` (no allocation per call).
 */

/** High half of the last result. */
export let rh = 0;
/** Low half of the last result. */
export let rl = 0;

/** Full 64-bit product of two unsigned 32-bit values into (rh, rl). */
export function mul32(a: number, b: number): void {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const mid1 = a1 * b0, mid2 = a0 * b1;
  const t = a0 * b0 + ((mid1 & 0xffff) + (mid2 & 0xffff)) * 65536;
  rl = t >>> 0;
  rh = (a1 * b1 + (mid1 >>> 16) + (mid2 >>> 16) + Math.floor(t / 4294967296)) >>> 0;
}

/** (ah, al) * (bh, bl) mod 2^64 into (rh, rl). */
export function mul64(ah: number, al: number, bh: number, bl: number): void {
  mul32(al, bl);
  rh = (rh + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** (ah, al) + (bh, bl) mod 2^64 into (rh, rl). */
export function add64(ah: number, al: number, bh: number, bl: number): void {
  const l = al + bl;
  rl = l >>> 0;
  rh = (ah + bh + (l > 0xffffffff ? 1 : 0)) >>> 0;
}

/** Rotate left by r (0 < r < 64) into (rh, rl). */
export function rotl64(h: number, l: number, r: number): void {
  if (r === 32) {
    rh = l;
    rl = h;
    return;
  }
  if (r > 32) {
    const t = h;
    h = l;
    l = t;
    r -= 32;
  }
  rh = ((h << r) | (l >>> (32 - r))) >>> 0;
  rl = ((l << r) | (h >>> (32 - r))) >>> 0;
}

/** A bigint below 2^64 as [hi, lo]. */
export function split64(x: bigint): [number, number] {
  return [Number((x >> 32n) & 0xffffffffn), Number(x & 0xffffffffn)];
}

/** [hi, lo] as a bigint. */
export function join64(h: number, l: number): bigint {
  return (BigInt(h >>> 0) << 32n) | BigInt(l >>> 0);
}
