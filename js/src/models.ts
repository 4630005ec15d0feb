/**
 * The static models of the codings (spec 4.5, 4.11, 4.12, 4.13, 4.15), computed in exact
 * integers (BigInt, once per model, never per symbol) and cached by their parameters.
 */

const cache = new Map<string, unknown>();
function cached<T>(key: string, make: () => T): T {
  let v = cache.get(key) as T | undefined;
  if (v === undefined) {
    if (cache.size > 256) cache.clear();
    v = make();
    cache.set(key, v);
  }
  return v;
}

function popcount(v: number): number {
  let c = 0;
  for (; v; v &= v - 1) c++;
  return c;
}

/** Index of the first largest value. */
function firstMax(f: ArrayLike<number>): number {
  let best = 0;
  for (let v = 1; v < f.length; v++) if (f[v] > f[best]) best = v;
  return best;
}

/** Spec 4.5: the model of symbols of w bits at precision 24: f and cum (257 entries: cum[2^w] = 2^24). */
export interface SymbolModel {
  f: Int32Array;
  cum: Int32Array;
  /** first symbol whose interval holds slot s << 12, for s = 0 .. 4095 */
  start: Uint16Array;
}

export function ansModel(w: number, q0: number): SymbolModel {
  return cached(`ans${w},${q0}`, () => {
    const q0n = BigInt(q0), q1n = BigInt(65536 - q0);
    const size = 1 << w;
    const f = new Int32Array(size);
    let sum = 0;
    for (let v = 0; v < size; v++) {
      const o = popcount(v);
      const weight = q0n ** BigInt(w - o) * q1n ** BigInt(o);
      const fv = Number((weight << 24n) >> BigInt(16 * w));
      f[v] = Math.max(1, fv);
      sum += f[v];
    }
    f[firstMax(f)] += (1 << 24) - sum;
    const cum = new Int32Array(size + 1);
    for (let v = 0; v < size; v++) cum[v + 1] = cum[v] + f[v];
    const start = new Uint16Array(4096);
    let v = 0;
    for (let s = 0; s < 4096; s++) {
      while (cum[v + 1] <= s << 12) v++;
      start[s] = v;
    }
    return { f, cum, start };
  });
}

/** Spec 4.12 / 4.13: the 16 nibble frequencies at `precision` (12 or 13) bits. */
export function nibbleFrequencies(q0: number, precision: number): Int32Array {
  return cached(`nib${precision},${q0}`, () => {
    const q0n = BigInt(q0), q1n = BigInt(65536 - q0);
    const f = new Int32Array(16);
    let sum = 0;
    for (let v = 0; v < 16; v++) {
      const o = popcount(v);
      const weight = q0n ** BigInt(4 - o) * q1n ** BigInt(o);
      f[v] = Math.max(1, Number(weight >> BigInt(64 - precision)));
      sum += f[v];
    }
    f[firstMax(f)] += (1 << precision) - sum;
    return f;
  });
}

/**
 * Spec 4.12's alias table at precision 13 (used by coding 10), as one entry per slot:
 * `v | i << 4 | f(v) << 17`, so that a step is `x = f * (x >> 13) + i`.
 */
export function aliasTable(q0: number): Uint32Array {
  return cached(`alias${q0}`, () => {
    const f = nibbleFrequencies(q0, 13);
    const rem = Array.from(f);
    const div = new Array<number>(16).fill(512);
    const alias = Array.from({ length: 16 }, (_, v) => v);
    const small: number[] = [], large: number[] = [];
    for (let v = 0; v < 16; v++) if (f[v] < 512) small.push(v);
    for (let v = 0; v < 16; v++) if (f[v] > 512) large.push(v);
    while (small.length) {
      const s = small.pop()!;
      const l = large[large.length - 1];
      div[s] = rem[s];
      alias[s] = l;
      rem[l] -= 512 - rem[s];
      if (rem[l] <= 512) {
        large.pop();
        if (rem[l] < 512) small.push(l);
      }
    }
    const next = div.slice();
    const second = new Array<number>(16);
    for (let b = 0; b < 16; b++) {
      second[b] = next[alias[b]];
      next[alias[b]] += 512 - div[b];
    }
    const tab = new Uint32Array(8192);
    for (let slot = 0; slot < 8192; slot++) {
      const b = slot >>> 9, r = slot & 511;
      let v: number, i: number;
      if (r < div[b]) {
        v = b;
        i = r;
      } else {
        v = alias[b];
        i = second[b] + r - div[b];
      }
      tab[slot] = (v | (i << 4) | (f[v] << 17)) >>> 0;
    }
    return tab;
  });
}

/**
 * Spec 4.12's encoder view of the same model: cum(v) and, for nibble v numbered i, its slot.
 */
export function aliasSlots(q0: number): { f: Int32Array; slotOf: Int32Array[] } {
  return cached(`aslots${q0}`, () => {
    const f = nibbleFrequencies(q0, 13);
    const tab = aliasTable(q0);
    const slotOf = Array.from({ length: 16 }, (_, v) => new Int32Array(f[v]));
    for (let slot = 0; slot < 8192; slot++) {
      const e = tab[slot];
      slotOf[e & 15][(e >>> 4) & 8191] = slot;
    }
    return { f, slotOf };
  });
}

/** A tANS table: one entry per position, `sym | nb << 8 | base << 12`. */
export type TansTable = Int32Array;

function tansEntries(size: number, precision: number, sym: ArrayLike<number>, f: ArrayLike<number>, k: ArrayLike<number>): TansTable {
  const tab = new Int32Array(size);
  for (let u = 0; u < size; u++) {
    const kk = k[u];
    const nb = precision - (31 - Math.clz32(kk));
    const base = kk * (1 << nb) - size;
    tab[u] = sym[u] | (nb << 8) | (base << 12);
  }
  void f;
  return tab;
}

/** Spec 4.13: coding 9's table of 4096 positions. */
export function smallTable(q0: number): TansTable {
  return cached(`small${q0}`, () => {
    const f = nibbleFrequencies(q0, 12);
    const sym = new Int32Array(4096);
    let pos = 0;
    for (let v = 0; v < 16; v++) {
      for (let c = 0; c < f[v]; c++) {
        sym[pos] = v;
        pos = (pos + 2563) & 4095;
      }
    }
    const next = Array.from(f);
    const k = new Int32Array(4096);
    for (let u = 0; u < 4096; u++) k[u] = next[sym[u]]++;
    return tansEntries(4096, 12, sym, f, k);
  });
}

/** Spec 4.15 alphabets: byte values by count of ones, then by value; and each byte's index. */
export const ESCAPE_BYTES: Uint8Array = (() => {
  const all = Array.from({ length: 256 }, (_, v) => v);
  all.sort((a, b) => popcount(a) - popcount(b) || a - b);
  return Uint8Array.from(all);
})();
export const ESCAPE_INDEX: Uint8Array = (() => {
  const idx = new Uint8Array(256);
  ESCAPE_BYTES.forEach((b, i) => (idx[b] = i));
  return idx;
})();

const BINOM8 = [1, 8, 28, 56, 70, 56, 28, 8, 1];

/** Spec 4.15 Model: the primary (94) and secondary (163) frequencies. */
export function escapeFrequencies(q0: number): [Int32Array, Int32Array] {
  return cached(`escf${q0}`, () => {
    const q0n = BigInt(q0), q1n = BigInt(65536 - q0);
    const W: bigint[] = [];
    for (let o = 0; o <= 8; o++) W.push(q0n ** BigInt(8 - o) * q1n ** BigInt(o));
    let E = 0n;
    for (let o = 4; o <= 8; o++) E += BigInt(BINOM8[o]) * W[o];
    const f1 = new Int32Array(94);
    for (let v = 0; v < 93; v++) f1[v] = 1 + Number((W[popcount(ESCAPE_BYTES[v])] * 4002n) >> 128n);
    f1[93] = 1 + Number((E * 4002n) >> 128n);
    const V: bigint[] = [];
    let Z = 0n;
    for (let o = 0; o <= 8; o++) V.push(o >= 4 ? q0n ** BigInt(8 - o) * q1n ** BigInt(o - 4) : 0n);
    for (let o = 4; o <= 8; o++) Z += BigInt(BINOM8[o]) * V[o];
    const f2 = new Int32Array(163);
    for (let v = 0; v < 163; v++) f2[v] = 1 + Number((V[popcount(ESCAPE_BYTES[93 + v])] * 1885n) / Z);
    let s1 = 0, s2 = 0;
    for (const x of f1) s1 += x;
    for (const x of f2) s2 += x;
    f1[firstMax(f1)] += 4096 - s1;
    f2[firstMax(f2)] += 2048 - s2;
    return [f1, f2];
  });
}

/** Spec 4.15 Tables: the precise spread of frequencies f summing to 2^precision. */
function escapeSpread(f: Int32Array, precision: number): { sym: Int32Array; k: Int32Array } {
  // Pairs (v, i) ordered by (2i + 1) / f(v), then v. The quotients are compared as doubles:
  // two equal fractions give the same double, and two different ones (denominators at most
  // 2^12, values below 2^13) differ by at least 2^-24, far above a double's rounding, so
  // the order is the spec's exact one.
  const size = 1 << precision;
  const key = new Float64Array(size), pv = new Int32Array(size), pi = new Int32Array(size);
  let n = 0;
  for (let v = 0; v < f.length; v++) {
    for (let i = 0; i < f[v]; i++) {
      key[n] = (2 * i + 1) / f[v];
      pv[n] = v;
      pi[n] = i;
      n++;
    }
  }
  const order = Array.from({ length: size }, (_, x) => x);
  order.sort((a, b) => key[a] - key[b] || pv[a] - pv[b]);
  const sym = new Int32Array(size), k = new Int32Array(size);
  for (let u = 0; u < size; u++) {
    const x = order[u];
    sym[u] = pv[x];
    k[u] = f[pv[x]] + pi[x];
  }
  return { sym, k };
}

/**
 * Coding 11's tables name the byte a position decodes to, not its symbol: an entry is
 * `byte | nb << 9 | base << 13`, byte 256 standing for the primary alphabet's escape.
 */
function byteEntries(size: number, precision: number, sym: ArrayLike<number>, k: ArrayLike<number>, byteOf: (v: number) => number): TansTable {
  const tab = new Int32Array(size);
  for (let u = 0; u < size; u++) {
    const nb = precision - (31 - Math.clz32(k[u]));
    tab[u] = byteOf(sym[u]) | (nb << 9) | ((k[u] * (1 << nb) - size) << 13);
  }
  return tab;
}

export interface EscapeModel {
  f1: Int32Array;
  f2: Int32Array;
  /** primary: byte (256: escape) | nb << 9 | base << 13 */
  t1: TansTable;
  /** secondary: byte | nb << 9 | base << 13 */
  t2: TansTable;
}

export function escapeModel(q0: number): EscapeModel {
  return cached(`esc${q0}`, () => {
    const [f1, f2] = escapeFrequencies(q0);
    const s1 = escapeSpread(f1, 12), s2 = escapeSpread(f2, 11);
    return {
      f1, f2,
      t1: byteEntries(4096, 12, s1.sym, s1.k, (v) => (v === 93 ? 256 : ESCAPE_BYTES[v])),
      t2: byteEntries(2048, 11, s2.sym, s2.k, (v) => ESCAPE_BYTES[93 + v]),
    };
  });
}

/** Spec 4.11 parameters (r, a) from m and c (c >= 1). */
export function gapParams(m: number, c: number): { r: number; a: number } {
  let r = 0;
  while (r < 46 && c * 2 ** (r + 4) <= m) r++;
  let t = ((BigInt(m - c)) << 64n) / BigInt(m);
  for (let i = 0; i < r; i++) t = (t * t + (1n << 63n)) >> 64n;
  let a = Number((t + (1n << 47n)) >> 48n);
  a = Math.min(Math.max(a, 34816), 63488);
  return { r, a };
}

/** Spec 4.11 Model from a: f and cum of quotients 0 .. Q-1 and the escape Q, and a slot table. */
export interface GapModel {
  Q: number;
  f: Int32Array;
  cum: Int32Array;
  /** symbol of each 16-bit slot */
  lut: Uint8Array;
}

export function gapModel(a: number): GapModel {
  return cached(`gap${a}`, () => {
    const tails = [65536];
    let s = 1n << 32n;
    const an = BigInt(a);
    for (;;) {
      s = (s * an) >> 16n;
      tails.push(Number((s + (1n << 15n)) >> 16n));
      if (s < 1n << 25n) break;
    }
    const Q = tails.length - 1;
    const f = new Int32Array(Q + 1), cum = new Int32Array(Q + 1);
    for (let v = 0; v < Q; v++) f[v] = tails[v] - tails[v + 1];
    f[Q] = tails[Q];
    for (let v = 0; v <= Q; v++) cum[v] = 65536 - tails[v];
    const lut = new Uint8Array(65536);
    for (let v = 0; v <= Q; v++) lut.fill(v, cum[v], cum[v] + f[v]);
    return { Q, f, cum, lut };
  });
}

/**
 * Coding 5's model after coding the counter value `v` (spec 4.8): its count grows by 32,
 * and when the total passes 2^22 every count is halved, rounding up. Returns the new total.
 */
export function adaptCounts(freq: Float64Array, v: number, total: number): number {
  freq[v] += 32;
  total += 32;
  if (total > 1 << 22) {
    total = 0;
    for (let u = 0; u < freq.length; u++) {
      freq[u] = Math.floor((freq[u] + 1) / 2);
      total += freq[u];
    }
  }
  return total;
}
