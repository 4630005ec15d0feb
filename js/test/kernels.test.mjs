// The decoding loops of codings 7, 10 and 11 and the CRC-32C of large frames run in
// WebAssembly (10 with SIMD) or in JavaScript (BLOOMWIRE_NO_WASM; BLOOMWIRE_NO_SIMD for
// coding 10's SIMD loop alone). Each
// test here forces every path in turn on the same payloads, valid and mutated, and asserts
// the same bits, the same count of ones, or the same error class from each.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";
import { decodeBits, decodeChunked } from "../dist/decoders.js";
import { encodePositional } from "../dist/encoders.js";
import { wideWasmAvailable } from "../dist/wide-wasm.js";
import { escapeWasmAvailable } from "../dist/escape-wasm.js";
import { wasmAvailable } from "../dist/positional-wasm.js";

const here = dirname(fileURLToPath(import.meta.url));
const VECTORS = process.env.BLOOMWIRE_VECTORS ?? join(here, "..", "..", "spec", "vectors");
const CLI = process.env.BLOOMWIRE_CLI ?? resolve(here, "..", "..", "target", "debug", "bloomwire");
const have = existsSync(CLI);
const skip = have ? false : `the program is not at ${CLI} (set BLOOMWIRE_CLI)`;

const PATHS = {
  simd: {},
  "wasm, no SIMD": { BLOOMWIRE_NO_SIMD: "1" },
  javascript: { BLOOMWIRE_NO_WASM: "1" },
};

/** Runs fn with the environment of one path (the switches are read at each call). */
function onPath(name, fn) {
  const saved = { BLOOMWIRE_NO_WASM: process.env.BLOOMWIRE_NO_WASM, BLOOMWIRE_NO_SIMD: process.env.BLOOMWIRE_NO_SIMD };
  delete process.env.BLOOMWIRE_NO_WASM;
  delete process.env.BLOOMWIRE_NO_SIMD;
  Object.assign(process.env, PATHS[name]);
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** The outcome of decoding a payload: its bits and count of ones, or the error's class. */
function outcome(h, payload) {
  const out = new Uint8Array(Math.ceil(h.m / 8));
  try {
    const ones = h.chunkShift !== null
      ? decodeChunked(h.coding, payload, h.m, h.q0 ?? 0, h.chunkShift, out)
      : decodeBits(h.coding, payload, h.m, h.q0 ?? 0, out);
    return { bits: Buffer.from(out).toString("base64"), ones };
  } catch (e) {
    if (!(e instanceof bw.BloomwireError)) throw e; // a trap or a bug, never a typed error
    return { error: e.constructor.name };
  }
}

function popcount(bytes) {
  let c = 0;
  for (const b of bytes) for (let v = b; v; v &= v - 1) c++;
  return c;
}

/** Every path gives the same outcome; a known count of ones is the bits' count. */
function samePaths(label, h, payload) {
  const results = Object.keys(PATHS).map((p) => [p, onPath(p, () => outcome(h, payload))]);
  const [, first] = results[0];
  for (const [p, r] of results) {
    assert.equal(r.error, first.error, `${label}: ${p} vs simd`);
    assert.equal(r.bits, first.bits, `${label}: ${p} bits differ`);
    if (r.bits !== undefined && r.ones >= 0) {
      assert.equal(r.ones, popcount(Buffer.from(r.bits, "base64")), `${label}: ${p} count of ones`);
    }
  }
  return first;
}

/** Mutants of a payload: flipped bytes, truncations, an extra word. */
function* mutants(payload, count, seed) {
  let s = seed >>> 0;
  const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296);
  for (let i = 0; i < count; i++) {
    const p = payload.slice();
    const flips = 1 + Math.floor(rand() * 3);
    for (let f = 0; f < flips; f++) p[Math.floor(rand() * p.length)] ^= 1 + Math.floor(rand() * 255);
    yield p;
  }
  for (const cut of [1, 2, 3, 4, 8, 64]) if (payload.length > cut) yield payload.subarray(0, payload.length - cut);
  yield Uint8Array.from([...payload, 0, 0]);
  yield Uint8Array.from([...payload, 0x5a, 0xa5]);
}

function checkFrame(label, frame, mutantCount) {
  const { header: h } = bw.decodeFrame(frame);
  const payload = frame.subarray(h.headerLength, h.headerLength + h.payloadLength);
  const first = samePaths(label, h, payload);
  assert.equal(first.error, undefined, `${label}: the valid payload is accepted`);
  let rejected = 0;
  let i = 0;
  for (const p of mutants(payload, mutantCount, frame.length)) {
    if (samePaths(`${label} mutant ${i++}`, h, p).error) rejected++;
  }
  return rejected;
}

test("the WebAssembly loops are the ones that run here (Node has SIMD)", () => {
  onPath("simd", () => {
    assert.equal(wideWasmAvailable(), true);
    assert.equal(escapeWasmAvailable(), true);
    assert.equal(wasmAvailable(), true);
  });
  onPath("wasm, no SIMD", () => {
    assert.equal(wideWasmAvailable(), false);
    assert.equal(escapeWasmAvailable(), true);
  });
  onPath("javascript", () => {
    assert.equal(wideWasmAvailable(), false);
    assert.equal(escapeWasmAvailable(), false);
    assert.equal(wasmAvailable(), false);
  });
});

test("vectors of codings 7, 10 and 11: the same bits and the same errors on every path", () => {
  let frames = 0;
  for (const kind of ["accept", "reject"]) {
    const dir = join(VECTORS, kind);
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".bin"))) {
      const frame = new Uint8Array(readFileSync(join(dir, name)));
      let h;
      try {
        h = bw.decodeFrame(frame).header;
      } catch {
        continue; // rejected before or by its payload: the vectors' own test checks the class
      }
      if (![7, 10, 11].includes(h.coding) || h.filterType === 3 || h.kind !== 0) continue;
      checkFrame(`${kind}/${name}`, frame, 40);
      frames++;
    }
  }
  assert.ok(frames >= 8, `${frames} frames of codings 7, 10, 11`);
});

test("the program's frames of codings 10 and 11, sizes that take every branch, and mutants", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "bloomwire-kernels-"));
  try {
    const lines = [];
    for (let i = 0; i < 40000; i++) lines.push(`key-${i}`);
    writeFileSync(join(dir, "keys.txt"), lines.join("\n") + "\n");
    let rejected = 0, made = 0;
    // coding 10: halves with no coded round, with unequal counts, a last nibble cut by m,
    // chunks; coding 11: T mod 4 = 0 .. 3 (the last group short), a dense filter with escapes
    const cases = [
      ["wide", 4096, 2], ["wide", 33 * 128 + 4, 3], ["wide", 300000 + 2, 2], ["wide", 1 << 20, 1],
      ["escape", 1000, 2], ["escape", 8 * 1001 + 3, 2], ["escape", 8 * 1002, 3], ["escape", 8 * 1003 + 7, 4],
      ["escape", 140000, 2], ["escape", 60000, 6],
    ];
    for (const [coding, m, k] of cases) {
      const out = join(dir, `${coding}-${m}.blwr`);
      execFileSync(CLI, ["-q", "build", "--keys", join(dir, "keys.txt"), "-o", out, "-f", "--m", String(m), "--k", String(k), "--coding", coding]);
      const frame = new Uint8Array(readFileSync(out));
      const h = bw.decodeFrame(frame).header;
      if (h.coding !== (coding === "wide" ? 10 : 11)) continue; // the program chose raw or positional
      rejected += checkFrame(`${coding} m = ${m}`, frame, 25);
      made++;
    }
    const chunked = join(dir, "wide-chunked.blwr");
    execFileSync(CLI, ["-q", "build", "--keys", join(dir, "keys.txt"), "-o", chunked, "-f", "--m", String(1 << 18), "--k", "2", "--coding", "wide", "--chunk-shift", "16"]);
    rejected += checkFrame("wide, chunks of 2^16", new Uint8Array(readFileSync(chunked)), 25);
    assert.ok(made >= 8, `${made} frames of codings 10 and 11`);
    assert.ok(rejected > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("coding 7's sparse arrays (the kernel's pairs of byte and bits): ones alone and ones sharing a byte", () => {
  // sparse: 16 c <= m / 8, so the kernel hands out a pair (index, byte) a byte with ones
  const m = 1 << 20;
  let s = 12345;
  const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296);
  const sets = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, m - 1],
    [7, 8, 15, 16, 17, 1000, 1001, 1007, m - 8, m - 2, m - 1],
    Array.from({ length: 4000 }, (_, i) => 256 * i + (i % 3 === 0 ? 1 : 0)).flatMap((b, i) => (i % 5 ? [b] : [b, b + 3])),
    Array.from({ length: 4000 }, () => Math.floor(rand() * m)),
    // one gap of almost m among small ones: hundreds of escapes (quotients of Q) in a row
    [...Array.from({ length: 3000 }, (_, i) => 10 * i), m - 1],
  ];
  for (const [n, set] of sets.entries()) {
    const positions = [...new Set(set)].sort((a, b) => a - b);
    const payload = encodePositional(positions, m);
    const h = { m, coding: 7, q0: null, chunkShift: null };
    const first = samePaths(`set ${n}`, h, payload);
    const expect = new Uint8Array(m / 8);
    for (const b of positions) expect[b >>> 3] |= 1 << (b & 7);
    assert.equal(first.bits, Buffer.from(expect).toString("base64"), `set ${n}: the positions' bits`);
    let i = 0;
    for (const p of mutants(payload, 40, n + 1)) samePaths(`set ${n} mutant ${i++}`, h, p);
  }
});

test("CRC-32C of large inputs: the same on the WebAssembly and JavaScript paths", async () => {
  const { crc32c } = await import("../dist/crc32c.js");
  const b = new Uint8Array(3 * 786432 + 1000);
  let s = 1;
  for (let i = 0; i < b.length; i++) b[i] = (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24;
  const cases = [[0, b.length], [5, 100000], [3, 16384 + 7], [1, 3 * 65536 + 17], [0, 3 * 65536], [7, 786432 + 3 * 65536 + 9], [2, 2 * 786432 + 5]];
  for (const [start, end] of cases) {
    const ours = onPath("simd", () => crc32c(b, start, end));
    assert.equal(ours, onPath("javascript", () => crc32c(b, start, end)), `bytes ${start} .. ${end}`);
  }
  // the check value of CRC-32C ("123456789")
  assert.equal(crc32c(Uint8Array.from("123456789", (ch) => ch.charCodeAt(0))), 0xe3069283);
});
