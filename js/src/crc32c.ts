/**
 * CRC-32C (Castagnoli), spec 2.4: reflected polynomial 0x82F63B78, initial value and final
 * XOR 0xFFFFFFFF. Slicing by 8 tables. Also the algebra a receiver needs to update a
 * digest when a few bits of a large array flip (spec 5.1) without reading the array again.
 */
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

/** Continue a CRC-32C register (without the final XOR) over bytes[start, end). */
export function crc32cUpdate(crc: number, bytes: Uint8Array, start = 0, end = bytes.length): number {
  let c = crc | 0;
  let i = start;
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

// Z^(2^j): the linear map "advance the register over 2^j zero bytes", as four byte tables.
const zeroTables: Int32Array[] = [];

function applyZ(tab: Int32Array, r: number): number {
  return tab[r & 0xff] ^ tab[256 + ((r >>> 8) & 0xff)] ^ tab[512 + ((r >>> 16) & 0xff)] ^ tab[768 + (r >>> 24)];
}

function zeroTable(j: number): Int32Array {
  while (zeroTables.length <= j) {
    const level = zeroTables.length;
    const basis = new Int32Array(32);
    for (let b = 0; b < 32; b++) {
      let r = 1 << b;
      if (level === 0) r = T[r & 0xff] ^ (r >>> 8);
      else {
        const prev = zeroTables[level - 1];
        r = applyZ(prev, applyZ(prev, r));
      }
      basis[b] = r;
    }
    const tab = new Int32Array(1024);
    for (let k = 0; k < 4; k++) {
      for (let v = 1; v < 256; v++) {
        const low = v & -v;
        const bit = 31 - Math.clz32(low);
        tab[k * 256 + v] = tab[k * 256 + (v ^ low)] ^ basis[8 * k + bit];
      }
    }
    zeroTables.push(tab);
  }
  return zeroTables[j];
}

/** Advance a CRC register (no init, no final XOR) over `count` zero bytes. */
export function crc32cZeros(r: number, count: number): number {
  let j = 0;
  while (count > 0 && r !== 0) {
    if (count & 1) r = applyZ(zeroTable(j), r);
    count = Math.floor(count / 2);
    j++;
  }
  return r;
}

/**
 * The change of the CRC-32C of an array of `length` bytes when the bits at `positions`
 * (increasing, distinct, bit i of byte i >> 3) flip: digest(after) = digest(before) ^ result.
 */
export function crc32cFlipDelta(positions: ArrayLike<number>, count: number, length: number): number {
  let r = 0;
  let last = -1; // byte index of the register's last byte
  let i = 0;
  while (i < count) {
    const byte = Math.floor(positions[i] / 8);
    let v = 0;
    while (i < count && Math.floor(positions[i] / 8) === byte) {
      v |= 1 << (positions[i] % 8);
      i++;
    }
    // Advance over the zero bytes between, then take byte v.
    if (last >= 0) r = crc32cZeros(r, byte - last - 1);
    r = T[(r ^ v) & 0xff] ^ (r >>> 8);
    last = byte;
  }
  if (last >= 0) r = crc32cZeros(r, length - last - 1);
  return r >>> 0;
}
