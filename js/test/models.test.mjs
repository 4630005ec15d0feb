// Coding 11's tables (spec 4.15 Tables) against the spread as the spec states it: every
// pair (v, i) sorted by (2i + 1) / f(v), ties by v, compared exactly as integers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { escapeFrequencies, escapeModel, ESCAPE_BYTES } from "../dist/models.js";

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
