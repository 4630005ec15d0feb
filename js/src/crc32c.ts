/**
 * CRC-32C (Castagnoli), spec 2.4: reflected polynomial 0x82F63B78, initial value and final
 * XOR 0xFFFFFFFF. Slicing by 8 tables. Also the algebra a receiver needs to update a
 * digest when a few bits of a large array flip (spec 5.1) without reading the array again.
 */
import { CRC_WASM } from "./crc-wasm-bytes.js";
import { base64Bytes, envFlag, KernelMemory } from "./wasm-memory.js";

const T = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = T[n];
  for (let s = 1; s < 8; s++) {
    c = T[c & 0xff] ^ (c >>> 8);
    T[s * 256 + n] = c;
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Large inputs go through the same slicing in WebAssembly (wasm/crc.wat), about twice
// as fast as this loop; BLOOMWIRE_NO_WASM keeps them here.
const WASM_FROM = 16384, RESULTS = 8192, DATA = 8208, PIECE = 12 << 16;
type CrcFn = (c: number, at: number, len: number) => number;
let kernel: { mem: KernelMemory; crc: CrcFn; crc3: CrcFn } | null | undefined;

function crcKernel(): typeof kernel {
  if (kernel !== undefined) return kernel;
  kernel = null;
  try {
    if (typeof WebAssembly !== "object") return null;
    const mem = new KernelMemory(1);
    const inst = new WebAssembly.Instance(new WebAssembly.Module(base64Bytes(CRC_WASM)), { env: { memory: mem.memory } });
    if (!mem.reserve(DATA + PIECE)) return null;
    new Int32Array(mem.memory.buffer, 0, 2048).set(T);
    kernel = { mem, crc: inst.exports.crc as CrcFn, crc3: inst.exports.crc3 as CrcFn };
  } catch {
    kernel = null;
  }
  return kernel;
}

// Z^d, the register advanced over d zero bytes, as the images of its 32 bits: Z (one zero
// byte) squared log2(d) times; for the thirds of the three-stream blocks, 64 KiB and 4 KiB.
const THIRD = 65536, SMALL_THIRD = 4096;
const advanceMaps = new Map<number, Int32Array>();

function applyBits(map: Int32Array, r: number): number {
  let out = 0;
  for (let b = 0; r !== 0; b++, r >>>= 1) if (r & 1) out ^= map[b];
  return out;
}

/** Z^d(r) for d a power of two. */
function advance(d: number, r: number): number {
  let map = advanceMaps.get(d);
  if (!map) {
    let m = Int32Array.from({ length: 32 }, (_, b) => T[(1 << b) & 0xff] ^ ((1 << b) >>> 8));
    for (let k = 1; k < d; k *= 2) m = m.map((v) => applyBits(m, v));
    advanceMaps.set(d, (map = m));
  }
  return applyBits(map, r);
}

/** Continue a CRC-32C register (without the final XOR) over bytes[start, end). */
export function crc32cUpdate(crc: number, bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = crc | 0;
  let i = start;
  if (end - i >= WASM_FROM && !envFlag("BLOOMWIRE_NO_WASM")) {
    const k = crcKernel();
    if (k) {
      const mem = k.mem.bytes();
      const results = new Int32Array(k.mem.memory.buffer, RESULTS, 2);
      for (; i < end; i += PIECE) {
        const len = Math.min(PIECE, end - i);
        mem.set(bytes.subarray(i, i + len), DATA);
        // blocks of three thirds of 64 KiB at once, joined by advancing over the bytes
        // after each (the CRC without its initial value is linear), then blocks of thirds
        // of 4 KiB (one stream alone is a third as fast, and what follows the last 192 KiB
        // block can be most of a frame), then the rest
        let done = 0;
        for (let third = THIRD; third >= SMALL_THIRD; third = third === THIRD ? SMALL_THIRD : 0) {
          for (; done + 3 * third <= len; done += 3 * third) {
            c = k.crc3(c, DATA + done, third);
            c = advance(third, c) ^ results[0];
            c = advance(third, c) ^ results[1];
          }
        }
        c = k.crc(c, DATA + done, len - done);
      }
      return c;
    }
  }
  // bytes up to a 4-byte boundary of the buffer, then 8 bytes a step from 32-bit words
  while (i < end && (bytes.byteOffset + i) & 3) c = T[(c ^ bytes[i++]) & 0xff] ^ (c >>> 8);
  const steps = (end - i) >>> 3;
  if (LITTLE_ENDIAN && steps > 0) {
    const w = new Int32Array(bytes.buffer, bytes.byteOffset + i, 2 * steps);
    for (let k = 0; k < w.length; k += 2) {
      const a = c ^ w[k];
      const b = w[k + 1];
      c =
        T[1792 + (a & 0xff)] ^
        T[1536 + ((a >>> 8) & 0xff)] ^
        T[1280 + ((a >>> 16) & 0xff)] ^
        T[1024 + (a >>> 24)] ^
        T[768 + (b & 0xff)] ^
        T[512 + ((b >>> 8) & 0xff)] ^
        T[256 + ((b >>> 16) & 0xff)] ^
        T[b >>> 24];
    }
    i += 8 * steps;
  }
  for (; i < end; i++) c = T[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return c;
}

/** CRC-32C of bytes[start, end), as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return (crc32cUpdate(-1, bytes, start, end) ^ -1) >>> 0;
}

// The linear map Z^d, "advance the register over d zero bytes", for d = e * 16^j (e = 1
// .. 15, j = 0 .. 7), each as four byte tables (1 KiB of int32), built on first use: a
// count below 2^32 is then at most eight table steps, one per hexadecimal digit.
let zeroMaps: Int32Array | null = null; // (8 * 15) maps of 1024 entries

function applyMap(maps: Int32Array, at: number, r: number): number {
  return maps[at + (r & 0xff)] ^ maps[at + 256 + ((r >>> 8) & 0xff)] ^ maps[at + 512 + ((r >>> 16) & 0xff)] ^ maps[at + 768 + (r >>> 24)];
}

function buildZeroMaps(): Int32Array {
  const maps = new Int32Array(8 * 15 * 1024);
  const basis = new Int32Array(32);
  const fill = (at: number) => {
    for (let k = 0; k < 4; k++) {
      for (let v = 1; v < 256; v++) {
        const low = v & -v;
        const bit = 31 - Math.clz32(low);
        maps[at + k * 256 + v] = maps[at + k * 256 + (v ^ low)] ^ basis[8 * k + bit];
      }
    }
  };
  for (let j = 0; j < 8; j++) {
    for (let e = 1; e <= 15; e++) {
      const at = (j * 15 + e - 1) * 1024;
      for (let b = 0; b < 32; b++) {
        let r = 1 << b;
        if (j === 0 && e === 1) r = T[r & 0xff] ^ (r >>> 8);
        else if (e === 1) {
          // Z^(16^j) = Z^(15 * 16^(j-1)) after Z^(16^(j-1))
          const prev = (j - 1) * 15 * 1024;
          r = applyMap(maps, prev + 14 * 1024, applyMap(maps, prev, r));
        } else {
          // Z^(e * 16^j) = Z^(16^j) after Z^((e - 1) * 16^j)
          r = applyMap(maps, (j * 15) * 1024, applyMap(maps, at - 1024, r));
        }
        basis[b] = r;
      }
      fill(at);
    }
  }
  return maps;
}

/** Advance a CRC register (no init, no final XOR) over `count` zero bytes (count < 2^32). */
export function crc32cZeros(r: number, count: number): number {
  const maps = (zeroMaps ??= buildZeroMaps());
  for (let j = 0; count !== 0; j++) {
    const e = count & 15;
    if (e !== 0) r = applyMap(maps, (j * 15 + e - 1) * 1024, r);
    count >>>= 4;
  }
  return r;
}

// C[8 o + j]: the register (from 0) after a block of BLOCK bytes whose only one bit is bit j
// of byte o, that is Z^(BLOCK - 1 - o) of the register after that byte alone.
const BLOCK = 1024;
let blockBits: Int32Array | null = null;

function buildBlockBits(): Int32Array {
  const c = new Int32Array(8 * BLOCK);
  for (let j = 0; j < 8; j++) {
    let r = T[1 << j];
    for (let o = BLOCK - 1; o >= 0; o--) {
      c[8 * o + j] = r;
      r = T[r & 0xff] ^ (r >>> 8);
    }
  }
  return c;
}

/**
 * The change of the CRC-32C of an array of `length` bytes when the bits at `positions`
 * (increasing, distinct, bit i of byte i >> 3) flip: digest(after) = digest(before) ^ result.
 *
 * CRC-32C without its initial value and final XOR is linear, and zero bytes in front of a
 * message do not change it: the array is read as blocks of 1 KiB aligned on its end (the
 * first one padded in front), a flip adds one table entry to its block's register, and
 * the registers of the blocks that hold flips are joined by advancing over the blocks in
 * between (a table step or two, crc32cZeros).
 */
export function crc32cFlipDelta(positions: ArrayLike<number>, count: number, length: number): number {
  const bb = (blockBits ??= buildBlockBits());
  const pad = (BLOCK - (length % BLOCK)) % BLOCK;
  const blocks = (length + pad) / BLOCK;
  let r = 0, last = -1, cur = -1, acc = 0;
  if (8 * (length + pad) <= 2 ** 31) {
    // the same with int32 arithmetic
    for (let i = 0; i < count; i++) {
      const p = positions[i] | 0;
      const byte = (p >>> 3) + pad;
      const blk = byte >>> 10;
      if (blk !== cur) {
        if (cur >= 0) {
          r = crc32cZeros(r, BLOCK * (cur - last)) ^ acc;
          last = cur;
        }
        cur = blk;
        acc = 0;
      }
      acc ^= bb[((byte & (BLOCK - 1)) << 3) | (p & 7)];
    }
    count = 0;
  }
  for (let i = 0; i < count; i++) {
    const p = positions[i];
    const byte = Math.floor(p / 8) + pad;
    const blk = Math.floor(byte / BLOCK);
    if (blk !== cur) {
      if (cur >= 0) {
        r = crc32cZeros(r, BLOCK * (cur - last)) ^ acc;
        last = cur;
      }
      cur = blk;
      acc = 0;
    }
    acc ^= bb[8 * (byte - blk * BLOCK) + (p % 8)];
  }
  if (cur >= 0) {
    r = crc32cZeros(r, BLOCK * (cur - last)) ^ acc;
    last = cur;
  }
  return crc32cZeros(r, BLOCK * (blocks - 1 - last)) >>> 0;
}
