// The hashes' published values (spec 2.4, appendices A and B), stream decoding of every
// prefix, mutants (typed errors only), the receiver's atomicity, the sender, and q0's
// measured q0 of codings 9, 10 and 11.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const VECTORS = process.env.BLOOMWIRE_VECTORS ?? join(here, "..", "..", "spec", "vectors");
const enc = new TextEncoder();
const hex64 = (o) => (BigInt(o[0]) << 32n) | BigInt(o[1]);

test("CRC-32C, XXH64 and SipHash-2-4 give the spec's values", () => {
  assert.equal(bw.crc32c(enc.encode("123456789")), 0xe3069283);
  const o = new Uint32Array(2);
  bw.xxh64(new Uint8Array(0), 0, 0, o);
  assert.equal(hex64(o), 0xef46db3751d8e999n);
  bw.xxh64(enc.encode("a"), 0, 0, o);
  assert.equal(hex64(o), 0xd24ec4f1a98c6e5bn);
  bw.siphash24(Uint8Array.from({ length: 15 }, (_, i) => i), 0x07060504, 0x03020100, 0x0f0e0d0c, 0x0b0a0908, o);
  assert.equal(hex64(o), 0xa129ca6149be45e5n);
});

function acceptFrames() {
  const dir = join(VECTORS, "accept");
  return readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => {
    const man = JSON.parse(readFileSync(join(dir, f), "utf8"));
    return { name: f, data: new Uint8Array(readFileSync(join(dir, man.frame))), key: man.key_hex ? Uint8Array.from(Buffer.from(man.key_hex, "hex")) : undefined };
  });
}

test("every prefix of a frame is Incomplete, needing at least 1 and at most the missing bytes", () => {
  for (const { name, data, key } of acceptFrames()) {
    for (let len = 0; len < data.length; len++) {
      try {
        bw.decodeFramePrefix(data.subarray(0, len), { key });
        assert.fail(`${name}: a prefix of ${len} bytes decoded`);
      } catch (e) {
        assert.ok(e instanceof bw.Incomplete, `${name} prefix ${len}: ${e}`);
        assert.ok(e.needed >= 1 && e.needed <= data.length - len, `${name} prefix ${len}: needed ${e.needed}`);
      }
    }
    // followed by more input: a stream decoder stops at the frame; a whole-input decoder refuses
    const longer = new Uint8Array(data.length + 3);
    longer.set(data);
    assert.equal(bw.decodeFramePrefix(longer, { key }).length, data.length);
    assert.throws(() => bw.decodeFrame(longer, { key }), bw.TrailingBytes);
  }
});

test("mutants give typed errors or decode, never anything else", () => {
  let seed = 12345;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8);
  let refused = 0, decoded = 0;
  for (const { data } of acceptFrames()) {
    for (let t = 0; t < 40; t++) {
      const d = data.slice();
      const flips = 1 + (rand() % 3);
      for (let f = 0; f < flips; f++) d[rand() % d.length] ^= 1 << (rand() % 8);
      // recompute the checksum half the time, so that the payload checks are reached
      if (t & 1) {
        try {
          const h = bw.parseHeader(d);
          const end = h.headerLength + h.payloadLength;
          if (end + 4 <= d.length) new DataView(d.buffer).setUint32(end, bw.crc32c(d, 0, end), true);
        } catch {}
      }
      try {
        bw.decodeFramePrefix(d);
        decoded++;
      } catch (e) {
        assert.ok(e instanceof bw.BloomwireError, `${e}`);
        refused++;
      }
    }
  }
  assert.ok(refused > 0);
  void decoded;
});

test("a receiver's filter is unchanged by a delta that fails, and applies a good one in place", () => {
  const a = new bw.BloomFilter({ m: 1 << 16, k: 3 });
  for (let i = 0; i < 3000; i++) a.insert(`k${i}`);
  const b = a.clone();
  for (let i = 3000; i < 3100; i++) b.insert(`k${i}`);
  const rx = new bw.Receiver();
  rx.receive(bw.encodeFrame(a, { generation: 1n, restart: true }));
  const held = rx.filter;
  for (const coding of ["positional", "known-p", "raw"]) {
    const delta = bw.encodeDelta(a, b, 1n, { generation: 2n, coding });
    // the result digest forged (checksum recomputed): ResultMismatch, nothing changed
    const h = bw.parseHeader(delta);
    const bad = delta.slice();
    const dv = new DataView(bad.buffer);
    // result digest sits 4 bytes before the end of the delta fields: find it by value
    for (let i = 0; i + 4 <= h.headerLength; i++) {
      if (dv.getUint32(i, true) === h.resultDigest) {
        dv.setUint32(i, h.resultDigest ^ 1, true);
        break;
      }
    }
    const end = h.headerLength + h.payloadLength;
    dv.setUint32(end, bw.crc32c(bad, 0, end), true);
    assert.throws(() => rx.receive(bad), bw.ResultMismatch);
    assert.deepEqual(rx.filter.bits, a.bits);
    assert.equal(rx.generation, 1n);
  }
  rx.receive(bw.encodeDelta(a, b, 1n, { generation: 2n, coding: "positional" }));
  assert.equal(rx.filter, held, "applied in place");
  assert.deepEqual(rx.filter.bits, b.bits);
  assert.equal(rx.digest(), bw.crc32c(b.bits));
  assert.throws(() => rx.receive(bw.encodeDelta(a, b, 1n, { generation: 2n })), bw.StaleGeneration);
  assert.throws(() => rx.receive(bw.encodeFrame(a, { generation: 2n })), bw.StaleGeneration);
  rx.receive(bw.encodeFrame(a, { generation: 1n, restart: true }));
  assert.deepEqual(rx.filter.bits, a.bits);
  assert.equal(rx.generation, 1n);
});

test("a sender's frames keep a receiver in step, keyed", () => {
  const key = new Uint8Array(32).fill(7);
  const tx = new bw.Sender({ key, fullEvery: 4 });
  const rx = new bw.Receiver({ key });
  const f = new bw.BloomFilter({ m: 200000, k: 4, seed: 99n });
  const kinds = [];
  for (let g = 0; g < 6; g++) {
    for (let i = 0; i < 200; i++) f.insert(`g${g}-${i}`);
    const r = rx.receive(tx.send(f));
    kinds.push(r.kind);
    assert.equal(r.verified, true);
    assert.deepEqual(rx.filter.bits, f.bits);
    assert.equal(rx.generation, BigInt(g + 1));
  }
  assert.deepEqual(kinds, ["full", "delta", "delta", "full", "delta", "delta"]);
  assert.throws(() => new bw.Receiver({ key: new Uint8Array(32) }).receive(tx.send(f)), bw.BadTag);
});

test("codings 9, 10 and 11 carry the measured q0", () => {
  assert.equal(bw.measuredQ0(0, 10), 1);
  assert.equal(bw.measuredQ0(10, 10), 65535);
  assert.equal(bw.measuredQ0(1, 2), 32768);
  assert.equal(bw.measuredQ0(1, 3), 21845); // 65536 / 3 = 21845.33
  assert.equal(bw.measuredQ0(2 ** 40, 2 ** 41), 32768);
  assert.equal(bw.measuredQ0(2 ** 40 - 1, 2 ** 41), 32768); // just below a half rounds up
});

test("strings are keys as UTF-8", () => {
  const f = new bw.BloomFilter({ m: 1000, k: 3 });
  f.insert("grüße");
  assert.ok(f.contains(enc.encode("grüße")));
  assert.ok(f.contains("grüße"));
  assert.equal(f.countOnes() <= 3, true);
  const g = new bw.BloomFilter({ m: 1000, k: 3 });
  g.insert("other");
  g.union(f);
  assert.ok(g.contains("grüße") && g.contains("other"));
  assert.equal(g.n, 2n);
});

test("a core-only decoder answers UnsupportedCoding for Full codings", () => {
  for (const { data } of acceptFrames()) {
    const coding = data[9], counting = data[6] === 3;
    if (counting || ![3, 6, 9, 10, 11].includes(coding)) continue;
    assert.throws(() => bw.decodeFrame(data, { profile: "core" }), (e) => e instanceof bw.UnsupportedCoding && e.coding === coding);
  }
});

test("the digest of an array after flips, from the flipped positions alone", async () => {
  const { crc32cFlipDelta } = await import("../dist/crc32c.js");
  let seed = 99;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  for (const size of [1, 7, 100, 4096, 300001]) {
    const a = Uint8Array.from({ length: size }, () => Math.floor(rand() * 256));
    const before = bw.crc32c(a);
    const set = new Set();
    const want = Math.min(8 * size, 1 + Math.floor(rand() * 500));
    while (set.size < want) set.add(Math.floor(rand() * 8 * size));
    const positions = Float64Array.from([...set].sort((x, y) => x - y));
    for (const p of positions) a[p >> 3] ^= 1 << (p & 7);
    assert.equal((before ^ crc32cFlipDelta(positions, positions.length, size)) >>> 0, bw.crc32c(a), `size ${size}`);
  }
});
