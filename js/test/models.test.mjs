// Coding 11's model: its tables (spec 4.15 Tables) against the spread as the spec states
// it, every pair (v, i) sorted by (2i + 1) / f(v), ties by v, compared exactly as integers;
// its frequencies (computed in 32-bit limbs) against the spec's products in BigInt for
// every q0; the tables the WebAssembly kernel builds against the JavaScript build's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { escapeFrequencies, escapeModel, escapeRuns, ESCAPE_BYTES } from "../dist/models.js";
import { escapeWasmAvailable, wasmEscapeTables } from "../dist/escape-wasm.js";

function specTable(f, precision, byteOf) {
  const pairs = [];
  for (let v = 0; v < f.length; v++) for (let i = 0; i < f[v]; i++) pairs.push([v, i]);
  pairs.sort(([v, i], [w, j]) => (2 * i + 1) * f[w] - (2 * j + 1) * f[v] || v - w);
  const size = 1 << precision;
  assert.equal(pairs.length, size);
  return Int32Array.from(pairs, ([v, i]) => {
    const k = f[v] + i;
    const nb = precision - (31 - Math.clz32(k));
    const base = k * 2 ** nb - size;
    assert.ok(base + 2 ** nb <= size, "a step keeps a state a position");
    return byteOf(v) | (nb << 9) | (base << 13);
  });
}

test("coding 11's tables are the spec's sorted spread", () => {
  const q0s = [1, 2, 56735, 65534, 65535];
  for (let q0 = 3; q0 < 65535; q0 += 509) q0s.push(q0);
  for (const q of q0s) {
    const [f1, f2] = escapeFrequencies(q);
    const { t1, t2 } = escapeModel(q);
    assert.deepEqual(t1, specTable(f1, 12, (v) => (v === 93 ? 256 : ESCAPE_BYTES[v])), `q0 ${q} primary`);
    assert.deepEqual(t2, specTable(f2, 11, (v) => ESCAPE_BYTES[93 + v]), `q0 ${q} secondary`);
  }
});

test("coding 11's frequencies are the exact BigInt products' for every q0", () => {
  // spec 4.15 Model in BigInt, as the spec writes it
  const BINOM8 = [1n, 8n, 28n, 56n, 70n, 56n, 28n, 8n, 1n];
  const ones = (b) => { let c = 0; for (; b; b &= b - 1) c++; return c; };
  const firstMax = (f) => f.reduce((best, v, i) => (v > f[best] ? i : best), 0);
  for (let q = 1; q <= 65535; q++) {
    const q0 = BigInt(q), q1 = 65536n - q0;
    const W = BINOM8.map((_, o) => q0 ** BigInt(8 - o) * q1 ** BigInt(o));
    const E = [4, 5, 6, 7, 8].reduce((s, o) => s + BINOM8[o] * W[o], 0n);
    const f1 = Array.from({ length: 94 }, (_, v) => 1 + Number(((v === 93 ? E : W[ones(ESCAPE_BYTES[v])]) * 4002n) >> 128n));
    const V = BINOM8.map((_, o) => (o >= 4 ? q0 ** BigInt(8 - o) * q1 ** BigInt(o - 4) : 0n));
    const Z = [4, 5, 6, 7, 8].reduce((s, o) => s + BINOM8[o] * V[o], 0n);
    const f2 = Array.from({ length: 163 }, (_, v) => 1 + Number((V[ones(ESCAPE_BYTES[93 + v])] * 1885n) / Z));
    f1[firstMax(f1)] += 4096 - f1.reduce((a, b) => a + b);
    f2[firstMax(f2)] += 2048 - f2.reduce((a, b) => a + b);
    const [g1, g2] = escapeFrequencies(q);
    if (!f1.every((v, i) => v === g1[i]) || !f2.every((v, i) => v === g2[i])) assert.fail(`q0 ${q}: frequencies differ`);
    // and their runs of equal frequency fit the tables' build (at most 16)
    escapeRuns(g1, new Int32Array(64));
    escapeRuns(g2, new Int32Array(64));
  }
});

test("the kernel's coding 11 tables are the JavaScript build's", { skip: escapeWasmAvailable() ? false : "no WebAssembly here" }, () => {
  for (let q = 1; q <= 65535; q += q < 64 || q > 65472 ? 1 : 37) {
    const [f1, f2] = escapeFrequencies(q);
    const w = wasmEscapeTables(f1, f2);
    const j = escapeModel(q);
    if (!w.t1.every((v, i) => v === j.t1[i]) || !w.t2.every((v, i) => v === j.t2[i])) assert.fail(`q0 ${q}: tables differ`);
  }
});
