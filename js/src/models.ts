/**
 * The static models of the codings (spec 4.5, 4.11, 4.12, 4.13, 4.15), computed in exact
 * integers and built on every call, as the library builds them on every frame (a receiver
 * sees a new q0, and a new count, with each generation: a cache by parameters would only
 * flatter a benchmark that decodes one frame again and again). BigInt only once per count
 * of ones (at most nine values per model) in the ANS and nibble models, and in coding 7's
 * parameters, never per entry; coding 11's frequencies in 32-bit limbs, no BigInt; the
 * tables themselves are built with 32-bit integers in typed arrays (coding 11's, for its
 * WebAssembly loop, by that module: src/escape-wasm.ts).
 */

function popcount(v: number): number {
  let c = 0;
  for (; v; v &= v - 1) c++;
  return c;
}

/**
 * `value(q0^(w - o) (65536 - q0)^o)` for each count of ones o = 0 .. w: the models' weights
 * depend on a symbol's count of ones alone, so the exact products (BigInt) are taken once
 * per count, and each entry reads its count's value.
 */
function byOnes(w: number, q0: number, value: (weight: bigint) => number): Int32Array {
  const q0n = BigInt(q0), q1n = BigInt(65536 - q0);
  const out = new Int32Array(w + 1);
  for (let o = 0; o <= w; o++) out[o] = value(q0n ** BigInt(w - o) * q1n ** BigInt(o));
  return out;
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
  const shift = BigInt(16 * w);
  const byO = byOnes(w, q0, (weight) => Math.max(1, Number((weight << 24n) >> shift)));
  const size = 1 << w;
  const f = new Int32Array(size);
  let sum = 0;
  for (let v = 0; v < size; v++) {
    f[v] = byO[popcount(v)];
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
}

/** Spec 4.12 / 4.13: the 16 nibble frequencies at `precision` (12 or 13) bits. */
export function nibbleFrequencies(q0: number, precision: number): Int32Array {
  const shift = BigInt(64 - precision);
  const byO = byOnes(4, q0, (weight) => Math.max(1, Number(weight >> shift)));
  const f = new Int32Array(16);
  let sum = 0;
  for (let v = 0; v < 16; v++) {
    f[v] = byO[popcount(v)];
    sum += f[v];
  }
  f[firstMax(f)] += (1 << precision) - sum;
  return f;
}

/**
 * Spec 4.12's alias buckets at precision 13 (coding 10): the 16 frequencies `f`, and for
 * bucket b (slots 512 b .. 512 b + 511) its own symbol's share `div[b]`, its alias
 * `alias[b]` and the number `second[b]` of the alias's first slot in it: slot 512 b + r
 * is nibble b numbered r when r < div[b], else nibble alias[b] numbered second[b] +
 * r - div[b].
 */
export function aliasBuckets(q0: number): { f: Int32Array; div: Int32Array; alias: Int32Array; second: Int32Array } {
  const f = nibbleFrequencies(q0, 13);
  const rem = Int32Array.from(f);
  const div = new Int32Array(16).fill(512);
  const alias = Int32Array.from({ length: 16 }, (_, v) => v);
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
  const second = new Int32Array(16);
  for (let b = 0; b < 16; b++) {
    second[b] = next[alias[b]];
    next[alias[b]] += 512 - div[b];
  }
  return { f, div, alias, second };
}

/**
 * Spec 4.12's alias table at precision 13 (used by coding 10's JavaScript loop and its
 * encoder), as one entry per slot: `v | i << 4 | f(v) << 17`, so that a step is
 * `x = f * (x >> 13) + i`. (The WebAssembly kernel builds its own layout from the buckets.)
 */
export function aliasTable(q0: number): Uint32Array {
  const { f, div, alias, second } = aliasBuckets(q0);
  // Bucket b's slots: its own symbol's first div[b], then its alias's, in two runs.
  const tab = new Uint32Array(8192);
  for (let b = 0; b < 16; b++) {
    const at = b << 9, d = div[b];
    const own = b | (f[b] << 17);
    for (let r = 0; r < d; r++) tab[at + r] = (own | (r << 4)) >>> 0;
    const v = alias[b];
    const other = (v | (f[v] << 17)) + ((second[b] - d) << 4);
    for (let r = d; r < 512; r++) tab[at + r] = (other + (r << 4)) >>> 0;
  }
  return tab;
}

/**
 * Spec 4.12's encoder view of the same model: cum(v) and, for nibble v numbered i, its slot.
 */
export function aliasSlots(q0: number): { f: Int32Array; slotOf: Int32Array[] } {
  const f = nibbleFrequencies(q0, 13);
  const tab = aliasTable(q0);
  const slotOf = Array.from({ length: 16 }, (_, v) => new Int32Array(f[v]));
  for (let slot = 0; slot < 8192; slot++) {
    const e = tab[slot];
    slotOf[e & 15][(e >>> 4) & 8191] = slot;
  }
  return { f, slotOf };
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

/*
 * Coding 11's weights are products of eight 16-bit factors (up to 2^128), taken exactly in
 * 32-bit limbs (little-endian) held in Numbers: every limb operation below stays an integer
 * under 2^53 (its bound is written where it is done), so each is exact, and such an
 * integer times 2^-32 (a power of two: exact), floored, is its exact quotient by 2^32. No
 * BigInt, no inexact float.
 */
const LIMB = 4294967296;
const PER_LIMB = 1 / LIMB; // 2^-32, exact

/** x = x f (the `len` limbs of x from `at`, f below 2^16, the product fitting in them). */
function limbsTimes(x: Float64Array, at: number, len: number, f: number): void {
  let carry = 0;
  for (let i = at; i < at + len; i++) {
    const t = x[i] * f + carry; // below 2^32 2^16 + 2^16
    carry = Math.floor(t * PER_LIMB);
    x[i] = t - carry * LIMB;
  }
}

/** floor(x r / 2^(32 len)) for x's `len` limbs from `at` and r below 2^16. */
function limbsShare(x: Float64Array, at: number, len: number, r: number): number {
  let carry = 0;
  for (let i = at; i < at + len; i++) carry = Math.floor((x[i] * r + carry) * PER_LIMB); // below 2^48 + 2^16
  return carry;
}

/** x's `len` limbs with their carries moved up (limbs below 2^42 in). */
function limbsNormalize(x: Float64Array, len: number): void {
  let carry = 0;
  for (let i = 0; i < len; i++) {
    const t = x[i] + carry; // below 2^42 + 2^10
    carry = Math.floor(t * PER_LIMB);
    x[i] = t - carry * LIMB;
  }
}

/** Whether q z <= n, z and n of three limbs (q below 2^11). */
function limbsAtMost(q: number, z: Float64Array, n: Float64Array): boolean {
  const t0 = z[0] * q; // below 2^43
  const c0 = Math.floor(t0 * PER_LIMB);
  const t1 = z[1] * q + c0; // below 2^43 + 2^11
  const c1 = Math.floor(t1 * PER_LIMB);
  const t2 = z[2] * q + c1;
  if (t2 !== n[2]) return t2 < n[2];
  const l1 = t1 - c1 * LIMB;
  if (l1 !== n[1]) return l1 < n[1];
  return t0 - c0 * LIMB <= n[0];
}

/** Per primary or secondary symbol, its byte's count of ones (the alphabets are by count). */
const PRIMARY_ONES = Uint8Array.from({ length: 93 }, (_, v) => popcount(ESCAPE_BYTES[v]));
const SECONDARY_ONES = Uint8Array.from({ length: 163 }, (_, v) => popcount(ESCAPE_BYTES[93 + v]));
const W_LIMBS = new Float64Array(9 * 4);
const E_LIMBS = new Float64Array(4);
const V_LIMBS = new Float64Array(9 * 3);
const Z_LIMBS = new Float64Array(3);
const N_LIMBS = new Float64Array(3);

/** Spec 4.15 Model: the primary (94) and secondary (163) frequencies. */
export function escapeFrequencies(q0: number): [Int32Array, Int32Array] {
  const q1 = 65536 - q0;
  // W(o) = q0^(8 - o) q1^o for o ones, below 2^128: four limbs each.
  const W = W_LIMBS.fill(0);
  for (let o = 0; o <= 8; o++) {
    W[4 * o] = 1;
    for (let e = 0; e < 8; e++) limbsTimes(W, 4 * o, 1 + (e >>> 1), e < 8 - o ? q0 : q1);
  }
  // E, the escape's weight: the sum of C(8, o) W(o) for o >= 4, below (q0 + q1)^8 = 2^128;
  // its limbs summed first, each below 5 70 2^32 < 2^42.
  const E = E_LIMBS.fill(0);
  for (let o = 4; o <= 8; o++) for (let i = 0; i < 4; i++) E[i] += BINOM8[o] * W[4 * o + i];
  limbsNormalize(E, 4);
  // a primary share is 1 + floor(W(o) 4002 / 2^128)
  const g1 = new Int32Array(9);
  for (let o = 0; o <= 8; o++) g1[o] = 1 + limbsShare(W, 4 * o, 4, 4002);
  const f1 = new Int32Array(94);
  let s1 = 0;
  for (let v = 0; v < 93; v++) s1 += f1[v] = g1[PRIMARY_ONES[v]];
  s1 += f1[93] = 1 + limbsShare(E, 0, 4, 4002);
  // V(o) = q0^(8 - o) q1^(o - 4) for o >= 4, below 2^64 (two limbs, a third for the sums
  // and products), Z their sum weighted by C(8, o), below 163 2^64 < 2^72, and a secondary
  // share 1 + floor(V(o) 1885 / Z): the quotient q is at most 1885 (V(o) <= Z), found bit
  // by bit from 2^10 down as the largest q with q Z <= V(o) 1885 (below 2^75).
  const V = V_LIMBS.fill(0), Z = Z_LIMBS.fill(0), N = N_LIMBS;
  for (let o = 4; o <= 8; o++) {
    V[3 * o] = 1;
    for (let e = 0; e < 4; e++) limbsTimes(V, 3 * o, 1 + (e >>> 1), e < 8 - o ? q0 : q1);
    for (let i = 0; i < 3; i++) Z[i] += BINOM8[o] * V[3 * o + i];
  }
  limbsNormalize(Z, 3);
  const g2 = new Int32Array(9);
  for (let o = 4; o <= 8; o++) {
    for (let i = 0; i < 3; i++) N[i] = V[3 * o + i];
    limbsTimes(N, 0, 3, 1885);
    let q = 0;
    for (let bit = 1024; bit >= 1; bit >>= 1) if (limbsAtMost(q + bit, Z, N)) q += bit;
    g2[o] = 1 + q;
  }
  const f2 = new Int32Array(163);
  let s2 = 0;
  for (let v = 0; v < 163; v++) s2 += f2[v] = g2[SECONDARY_ONES[v]];
  f1[firstMax(f1)] += 4096 - s1;
  f2[firstMax(f2)] += 2048 - s2;
  return [f1, f2];
}

/**
 * Spec 4.15 Tables: coding 11's decoding table of frequencies `f` (summing to 2^precision,
 * precision at most 12), symbol v decoding to `bytes[v]` (256: the primary's escape). An
 * entry is `byte | nb << 9 | base << 13`: the byte a position decodes to, not its symbol.
 *
 * The spread lists the pairs (v, i), i = 0 .. f(v) - 1, by (2i + 1) / f(v), ties by v, and
 * gives the t-th pair position t, whose state is k = f(v) + i. Built as the library builds
 * it, with no sort and no division: the symbols of equal frequency come in runs (the bytes
 * of equal count of ones; six runs at most for every q0), whose pairs of equal i share a
 * key and so take neighbouring positions, a group. The run of the largest frequency (the
 * filler) fills the gaps between the other runs' groups, which are merged in key order:
 * keys compared exactly as integers, (2i + 1) f(w) against (2j + 1) f(v), both below 2^26,
 * ties to the run of smaller symbols. At the paper's density a few hundred merge steps place
 * the 4096 primary positions.
 */
function escapeTable(f: Int32Array, precision: number, bytes: Int32Array, tab: TansTable): TansTable {
  const size = 1 << precision;
  const runs = escapeRuns(f, RUNS);
  const first = RUNS.subarray(0, 16), count = RUNS.subarray(16, 32), freq = RUNS.subarray(32, 48), next = RUNS.subarray(48, 64);
  let filler = 0;
  for (let r = 1; r < runs; r++) if (freq[r] > freq[filler]) filler = r;
  const F = freq[filler], fFirst = first[filler], fCount = count[filler];
  // next[r]: the run's next group i (the filler's own is `filled`).
  next.fill(0, 0, runs);
  next[filler] = F;
  let t = 0, filled = 0;
  for (;;) {
    // The smallest key among the other runs: (2i + 1) / g below (2j + 1) / h exactly when
    // (2i + 1) h < (2j + 1) g; strict, so that a tie goes to the earlier run.
    let best = -1, bi = 0, bg = 1;
    for (let r = 0; r < runs; r++) {
      const i = next[r], g = freq[r];
      if (i < g && (best < 0 || (2 * i + 1) * bg < (2 * bi + 1) * g)) {
        best = r;
        bi = i;
        bg = g;
      }
    }
    if (best < 0) break;
    // The filler's groups j before it: (2j + 1) bg < (2 bi + 1) F, or equal with the
    // filler the earlier run.
    const d = (2 * bi + 1) * F + (filler < best ? 1 : 0);
    let to = filled;
    while (to < F && (2 * to + 1) * bg < d) to++;
    if (to > filled) t = fillGroups(tab, t, filled, to, F, precision, bytes, fFirst, fCount);
    filled = to;
    const k = bg + bi;
    const nb = precision - (31 - Math.clz32(k));
    const hi = (nb << 9) | (((k << nb) - size) << 13);
    const at = first[best], n = count[best];
    for (let c = 0; c < n; c++) tab[t + c] = bytes[at + c] | hi;
    t += n;
    next[best] = bi + 1;
  }
  fillGroups(tab, t, filled, F, F, precision, bytes, fFirst, fCount);
  return tab;
}

const RUNS = new Int32Array(64);

/**
 * Coding 11's runs of symbols of equal frequency in `f` (the bytes of one count of ones;
 * the first largest frequency's symbol split off: at most seven runs for every q0, and
 * never more than 16), into `runs`: run r's first symbol at r, its count at 16 + r, its
 * frequency at 32 + r (and 48 .. 63 left for the merge's next groups). Returns the runs.
 */
export function escapeRuns(f: Int32Array, runs: Int32Array): number {
  let n = 0;
  for (let v = 0; v < f.length; n++) {
    let end = v + 1;
    const fv = f[v];
    while (end < f.length && f[end] === fv) end++;
    if (n === 16) throw new Error("coding 11: more than 16 runs of equal frequency");
    runs[n] = v;
    runs[16 + n] = end - v;
    runs[32 + n] = fv;
    v = end;
  }
  return n;
}


/**
 * The filler's groups `from .. to - 1` (symbols `first .. first + n - 1` of frequency F),
 * from position t on; returns the position after them.
 */
function fillGroups(tab: Int32Array, t: number, from: number, to: number, F: number, precision: number, bytes: Int32Array, first: number, n: number): number {
  const size = 1 << precision;
  if (n === 1) {
    // k = F + j reads the same nb up to the next power of two, and base grows by 2^nb.
    const byte = bytes[first];
    for (let j = from; j < to; ) {
      const k = F + j;
      const nb = precision - (31 - Math.clz32(k));
      const end = Math.min(to, (2 << (31 - Math.clz32(k))) - F);
      let e = byte | (nb << 9) | (((k << nb) - size) << 13);
      const step = 1 << (nb + 13);
      for (; j < end; j++) {
        tab[t++] = e;
        e += step;
      }
    }
    return t;
  }
  for (let j = from; j < to; j++) {
    const k = F + j;
    const nb = precision - (31 - Math.clz32(k));
    const hi = (nb << 9) | (((k << nb) - size) << 13);
    for (let c = 0; c < n; c++) tab[t++] = bytes[first + c] | hi;
  }
  return t;
}

/** Spec 4.15: the byte of each primary symbol (256 for the escape, symbol 93). */
export const PRIMARY_BYTES: Int32Array = Int32Array.from({ length: 94 }, (_, v) => (v === 93 ? 256 : ESCAPE_BYTES[v]));
/** Spec 4.15: the byte of each secondary symbol. */
export const SECONDARY_BYTES: Int32Array = Int32Array.from({ length: 163 }, (_, v) => ESCAPE_BYTES[93 + v]);

export interface EscapeModel {
  f1: Int32Array;
  f2: Int32Array;
  /** primary: byte (256: escape) | nb << 9 | base << 13 */
  t1: TansTable;
  /** secondary: byte | nb << 9 | base << 13 */
  t2: TansTable;
}

/**
 * Coding 11's model of `q0`, its tables written into `into`'s if given (a decoder's buffers,
 * rewritten for each frame: fresh ones cost more to write than the tables' building), else
 * into new ones.
 */
export function escapeModel(q0: number, into?: { t1: TansTable; t2: TansTable }): EscapeModel {
  const [f1, f2] = escapeFrequencies(q0);
  const t1 = escapeTable(f1, 12, PRIMARY_BYTES, into?.t1 ?? new Int32Array(4096));
  const t2 = escapeTable(f2, 11, SECONDARY_BYTES, into?.t2 ?? new Int32Array(2048));
  return { f1, f2, t1, t2 };
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

/** Spec 4.11 Model from a without its slot table: Q, f and cum (what the kernel reads). */
export function gapFrequencies(a: number): { Q: number; f: Int32Array; cum: Int32Array } {
  // s stays at most 2^32 and a below 2^16: s a is an integer below 2^48, exact as a
  // number, and its divisions by powers of two are exact too, so floor gives the shift.
  const tails = GAP_TAILS;
  tails[0] = 65536;
  let s = 2 ** 32, Q = 0;
  for (;;) {
    s = Math.floor((s * a) / 65536);
    tails[++Q] = Math.floor((s + 32768) / 65536);
    if (s < 2 ** 25) break;
  }
  const f = new Int32Array(Q + 1), cum = new Int32Array(Q + 1);
  for (let v = 0; v < Q; v++) f[v] = tails[v] - tails[v + 1];
  f[Q] = tails[Q];
  for (let v = 0; v <= Q; v++) cum[v] = 65536 - tails[v];
  return { Q, f, cum };
}

/** The tails of gapFrequencies: a is at most 63 488, so s falls below 2^25 within 154 steps. */
const GAP_TAILS = new Float64Array(160);

export function gapModel(a: number): GapModel {
  const { Q, f, cum } = gapFrequencies(a);
  const lut = new Uint8Array(65536);
  for (let v = 0; v <= Q; v++) lut.fill(v, cum[v], cum[v] + f[v]);
  return { Q, f, cum, lut };
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
