/**
 * Filters that answer as spec 3 says: where a key's bits are for every hash family,
 * layout and rational k; Bloom filters (packed bits) and counting filters (a byte a counter).
 */
import { OpaqueHashFamily, InvalidField } from "./errors.js";
import { reduce, siphash24, stream, xxh64 } from "./hash.js";
import { split64 } from "./u64.js";
import { countOnes } from "./encoders.js";

/** What fixes where a key's bits are (spec 3), and the size of the array. */
export interface Shape {
  /** bits (or counters) */
  m: number;
  /** 0 standard, 1 partitioned, 2 variably-sized blocks */
  layout: number;
  /** k * 65536; for blocks the sum of blockKRaw */
  kRaw: number;
  /** blocks: each block's k * 65536, largest block first */
  blockKRaw: number[] | null;
  /** 0 opaque, 1 xxHash64, 2 SipHash-2-4 */
  baseHash: number;
  /** 0 double hashing, 1 enhanced double hashing */
  indexScheme: number;
  seed: bigint;
  k0: bigint;
  k1: bigint;
}

const encoder = new TextEncoder();

/** A key as bytes: strings are UTF-8. */
export function keyBytes(key: string | Uint8Array): Uint8Array {
  return typeof key === "string" ? encoder.encode(key) : key;
}

const H = new Uint32Array(2);
const A = new Uint32Array(2);
const B = new Uint32Array(2);
const D = new Uint32Array(2);

/** Block sizes and offsets of a blocks filter (powers of two of m's binary digits, largest first). */
function blocksOf(m: number): { size: number[]; offset: number[] } {
  const size: number[] = [];
  for (let b = 48; b >= 0; b--) {
    const p = 2 ** b;
    if (Math.floor(m / p) % 2 === 1) size.push(p);
  }
  const offset: number[] = [];
  let o = 0;
  for (const s of size) {
    offset.push(o);
    o += s;
  }
  return { size, offset };
}

/** Computes the bit indexes of keys for one shape (spec 3.2, 3.3). */
export class Indexer {
  readonly shape: Shape;
  private readonly seedH: number;
  private readonly seedL: number;
  private readonly k0h: number;
  private readonly k0l: number;
  private readonly k1h: number;
  private readonly k1l: number;
  private readonly kFloor: number;
  private readonly kFrac: number;
  private readonly blockSize: number[];
  private readonly blockOffset: number[];
  private readonly partSize: number;
  /** the indexes of the last key (see `indexes`) */
  readonly out: Float64Array;

  constructor(shape: Shape) {
    if (shape.baseHash === 0) throw new OpaqueHashFamily("base hash 0: the bits are another library's (spec 3.1)");
    this.shape = shape;
    [this.seedH, this.seedL] = split64(shape.seed);
    [this.k0h, this.k0l] = split64(shape.k0);
    [this.k1h, this.k1l] = split64(shape.k1);
    this.kFloor = Math.floor(shape.kRaw / 65536);
    this.kFrac = shape.kRaw % 65536;
    const ceil = this.kFloor + (this.kFrac ? 1 : 0);
    this.partSize = shape.layout === 1 ? Math.floor(shape.m / ceil) : 0;
    const bl = shape.layout === 2 ? blocksOf(shape.m) : { size: [], offset: [] };
    if (shape.layout === 2 && (!shape.blockKRaw || shape.blockKRaw.length !== bl.size.length)) {
      throw new InvalidField("k", "one k per block");
    }
    this.blockSize = bl.size;
    this.blockOffset = bl.offset;
    let most = ceil;
    if (shape.layout === 2) most = shape.blockKRaw!.reduce((s, r) => s + Math.ceil(r / 65536), 0);
    this.out = new Float64Array(most);
  }

  private hash(key: Uint8Array): void {
    if (this.shape.baseHash === 1) xxh64(key, this.seedH, this.seedL, H);
    else siphash24(key, this.k0h, this.k0l, this.k1h, this.k1l, H);
  }

  /** Writes the key's bit indexes to `out` and returns how many there are. */
  indexes(key: string | Uint8Array): number {
    this.hash(keyBytes(key));
    const hh = H[0], hl = H[1], out = this.out, scheme = this.shape.indexScheme;
    if (this.shape.layout !== 2) {
      let c = this.kFloor;
      if (this.kFrac) {
        stream(hh, hl, 2, D);
        if (D[0] >>> 16 < this.kFrac) c++;
      }
      const R = this.shape.layout === 0 ? this.shape.m : this.partSize;
      stream(hh, hl, 0, A);
      stream(hh, hl, 1, B);
      let x = reduce(A[0], A[1], R), y = reduce(B[0], B[1], R);
      const part = this.shape.layout === 1;
      for (let i = 0; i < c; i++) {
        if (i > 0) {
          x += y;
          if (x >= R) x -= R;
          if (scheme === 1) {
            y += i;
            if (y >= R) y %= R;
          }
        }
        out[i] = part ? i * R + x : x;
      }
      return c;
    }
    let total = 0;
    const raws = this.shape.blockKRaw!;
    for (let j = 0; j < raws.length; j++) {
      const kf = Math.floor(raws[j] / 65536), fr = raws[j] % 65536;
      let c = kf;
      if (fr) {
        stream(hh, hl, 3 * j + 2, D);
        if (D[0] >>> 16 < fr) c++;
      }
      if (c === 0) continue;
      const R = this.blockSize[j], off = this.blockOffset[j];
      stream(hh, hl, 3 * j, A);
      stream(hh, hl, 3 * j + 1, B);
      let x = reduce(A[0], A[1], R), y = reduce(B[0], B[1], R);
      for (let i = 0; i < c; i++) {
        if (i > 0) {
          x += y;
          if (x >= R) x -= R;
          if (scheme === 1) {
            y += i;
            if (y >= R) y %= R;
          }
        }
        out[total++] = off + x;
      }
    }
    return total;
  }
}


function sameShape(a: Shape, b: Shape): boolean {
  return (
    a.m === b.m && a.layout === b.layout && a.kRaw === b.kRaw && a.baseHash === b.baseHash &&
    a.indexScheme === b.indexScheme && a.seed === b.seed && a.k0 === b.k0 && a.k1 === b.k1 &&
    String(a.blockKRaw) === String(b.blockKRaw)
  );
}

/** True when two shapes put every key's bits in the same places (spec 5.2 step 3). */
export { sameShape };

/** Options of a new filter. */
export interface FilterOptions {
  /** bits */
  m: number;
  /** hash functions, a multiple of 1/65536 (2.5 is allowed); for blocks, split by block size */
  k: number;
  layout?: "standard" | "partitioned" | "blocks";
  /** xxHash64 seed (default 0) */
  seed?: bigint;
  /** SipHash-2-4 key (16 bytes): uses SipHash-2-4 instead of xxHash64 */
  sipKey?: Uint8Array;
  /** enhanced double hashing (default true) */
  enhanced?: boolean;
}

function shapeFromOptions(o: FilterOptions): Shape {
  const layout = o.layout === "partitioned" ? 1 : o.layout === "blocks" ? 2 : 0;
  const kRaw = Math.round(o.k * 65536);
  if (!(o.m >= 1 && o.m <= 2 ** 48 && Number.isInteger(o.m))) throw new RangeError("m must be 1 ..= 2^48");
  if (!(kRaw >= 65536 && kRaw <= 1024 * 65536)) throw new RangeError("k must be 1 ..= 1024");
  let blockKRaw: number[] | null = null;
  if (layout === 2) {
    // k_j = k m_j / m rounded to 1/65536, the rounding's remainder on the first block
    const sizes = blocksOf(o.m).size;
    blockKRaw = sizes.map((s) => Math.round((kRaw * s) / o.m));
    const sum = blockKRaw.reduce((a, b) => a + b, 0);
    blockKRaw[0] += kRaw - sum;
  }
  let k0 = 0n, k1 = 0n;
  if (o.sipKey) {
    if (o.sipKey.length !== 16) throw new RangeError("a SipHash key has 16 bytes");
    const dv = new DataView(o.sipKey.buffer, o.sipKey.byteOffset, 16);
    k0 = dv.getBigUint64(0, true);
    k1 = dv.getBigUint64(8, true);
  }
  return {
    m: o.m, layout, kRaw: layout === 2 ? blockKRaw!.reduce((a, b) => a + b, 0) : kRaw, blockKRaw,
    baseHash: o.sipKey ? 2 : 1, indexScheme: o.enhanced === false ? 0 : 1,
    seed: o.seed ?? 0n, k0, k1,
  };
}

/** A Bloom filter: m bits in packed form (spec 1), with its hash family and layout. */
export class BloomFilter {
  /** packed bits, ceil(m / 8) bytes; bit i is (bits[i >> 3] >> (i & 7)) & 1 */
  readonly bits: Uint8Array;
  readonly shape: Shape;
  /** number of keys inserted (informational, carried in frames) */
  n: bigint;
  /** increases at every change of the bits */
  version = 0;
  private indexer: Indexer | null = null;

  constructor(shape: Shape | FilterOptions, bits?: Uint8Array, n: bigint = 0n) {
    this.shape = "layout" in shape && typeof shape.layout === "number" ? (shape as Shape) : shapeFromOptions(shape as FilterOptions);
    const bytes = Math.ceil(this.shape.m / 8);
    if (bits && bits.length !== bytes) throw new RangeError(`expected ${bytes} bytes of bits`);
    this.bits = bits ?? new Uint8Array(bytes);
    this.n = n;
  }

  get m(): number {
    return this.shape.m;
  }

  /** False when the hash family is opaque (base hash 0): such a filter refuses queries. */
  get queryable(): boolean {
    return this.shape.baseHash !== 0;
  }

  private idx(): Indexer {
    return (this.indexer ??= new Indexer(this.shape));
  }

  /** The bit indexes of a key (spec 3.3), in the order they are computed. */
  indexesOf(key: string | Uint8Array): number[] {
    const ix = this.idx();
    return Array.from(ix.out.subarray(0, ix.indexes(key)));
  }

  /** Bit i. */
  get(i: number): boolean {
    return ((this.bits[Math.floor(i / 8)] >> (i % 8)) & 1) === 1;
  }

  /** True when all the key's bits are 1 (possibly falsely). Strings are hashed as UTF-8. */
  contains(key: string | Uint8Array): boolean {
    const ix = this.idx();
    const c = ix.indexes(key), out = ix.out, bits = this.bits;
    for (let i = 0; i < c; i++) {
      const p = out[i];
      if (p < 2147483648) {
        if (!((bits[p >>> 3] >> (p & 7)) & 1)) return false;
      } else if (!((bits[Math.floor(p / 8)] >> (p % 8)) & 1)) return false;
    }
    return true;
  }

  /** Sets the key's bits; n counts the insertion. */
  insert(key: string | Uint8Array): void {
    const ix = this.idx();
    const c = ix.indexes(key), out = ix.out, bits = this.bits;
    for (let i = 0; i < c; i++) {
      const p = out[i];
      bits[Math.floor(p / 8)] |= 1 << (p % 8);
    }
    this.n++;
    this.version++;
  }

  /** ORs another filter of the same shape into this one (n adds up). */
  union(other: BloomFilter): void {
    if (!sameShape(this.shape, other.shape)) throw new RangeError("union of filters of different shapes");
    const a = this.bits, b = other.bits;
    for (let i = 0; i < a.length; i++) a[i] |= b[i];
    this.n += other.n;
    this.version++;
  }

  /** Number of one bits. */
  countOnes(): number {
    return countOnes(this.bits);
  }

  /** A copy (bits not shared). */
  clone(): BloomFilter {
    return new BloomFilter(this.shape, this.bits.slice(), this.n);
  }
}

/** A counting filter (filter type 3): m counters of `width` bits, a byte each. */
export class CountingFilter {
  readonly counters: Uint8Array;
  readonly shape: Shape;
  readonly width: number;
  n: bigint;
  version = 0;
  private indexer: Indexer | null = null;

  constructor(shape: Shape | FilterOptions, width: number, counters?: Uint8Array, n: bigint = 0n) {
    this.shape = "layout" in shape && typeof shape.layout === "number" ? (shape as Shape) : shapeFromOptions(shape as FilterOptions);
    if (!(width >= 1 && width <= 8)) throw new RangeError("counter width 1 ..= 8");
    this.width = width;
    this.counters = counters ?? new Uint8Array(this.shape.m);
    this.n = n;
  }

  get m(): number {
    return this.shape.m;
  }

  private idx(): Indexer {
    return (this.indexer ??= new Indexer(this.shape));
  }

  /** True when all the key's counters are non-zero. */
  contains(key: string | Uint8Array): boolean {
    const ix = this.idx();
    const c = ix.indexes(key);
    for (let i = 0; i < c; i++) if (this.counters[ix.out[i]] === 0) return false;
    return true;
  }

  /** Increments the key's counters (saturating at 2^width - 1). */
  insert(key: string | Uint8Array): void {
    const ix = this.idx();
    const c = ix.indexes(key), top = (1 << this.width) - 1;
    for (let i = 0; i < c; i++) {
      const p = ix.out[i];
      if (this.counters[p] < top) this.counters[p]++;
    }
    this.n++;
    this.version++;
  }

  /** Decrements the key's counters (saturated counters stay). */
  remove(key: string | Uint8Array): void {
    const ix = this.idx();
    const c = ix.indexes(key), top = (1 << this.width) - 1;
    for (let i = 0; i < c; i++) {
      const p = ix.out[i];
      if (this.counters[p] > 0 && this.counters[p] < top) this.counters[p]--;
    }
    if (this.n > 0n) this.n--;
    this.version++;
  }

  /** The packed form of the counters (spec 3.4). */
  packed(): Uint8Array {
    return packCounters(this.counters, this.width);
  }

  /** The Bloom filter whose bit i is 1 where counter i is non-zero. */
  toBloom(): BloomFilter {
    const f = new BloomFilter(this.shape, undefined, this.n);
    for (let i = 0; i < this.counters.length; i++) if (this.counters[i]) f.bits[i >>> 3] |= 1 << (i & 7);
    return f;
  }

  /** Number of non-zero counters. */
  countOnes(): number {
    let c = 0;
    for (let i = 0; i < this.counters.length; i++) if (this.counters[i]) c++;
    return c;
  }

  clone(): CountingFilter {
    return new CountingFilter(this.shape, this.width, this.counters.slice(), this.n);
  }
}

export function packCounters(counters: Uint8Array, width: number): Uint8Array {
  const out = new Uint8Array(Math.ceil((counters.length * width) / 8));
  if (width === 8) {
    out.set(counters);
    return out;
  }
  let acc = 0, fill = 0, o = 0;
  for (let i = 0; i < counters.length; i++) {
    acc |= counters[i] << fill;
    fill += width;
    while (fill >= 8) {
      out[o++] = acc & 0xff;
      acc >>>= 8;
      fill -= 8;
    }
  }
  if (fill) out[o] = acc;
  return out;
}

/** Unpacks counters; false if a bit past m * width is set. */
export function unpackCounters(p: Uint8Array, m: number, width: number, out: Uint8Array): boolean {
  let acc = 0, fill = 0, at = 0;
  const mask = (1 << width) - 1;
  for (let i = 0; i < m; i++) {
    while (fill < width) {
      acc |= p[at++] << fill;
      fill += 8;
    }
    out[i] = acc & mask;
    acc >>>= width;
    fill -= width;
  }
  return acc === 0 && at === p.length;
}
