// Coding 10's alias table as the SIMD kernel builds it in its memory, against spec 4.12's
// alias structure read slot by slot, and against the package's table (the JavaScript loop's).
import { test } from "node:test";
import assert from "node:assert/strict";
import { aliasBuckets, aliasTable, nibbleFrequencies } from "../dist/models.js";
import { wideKernelTable } from "../dist/wide-wasm.js";

const q0s = [1, 2, 3, 4096, 32768, 58982, 65533, 65534, 65535];
for (let q0 = 5; q0 < 65535; q0 += 251) q0s.push(q0);

test("coding 10: the kernel's alias table is spec 4.12's, slot by slot, for 270 q0", (t) => {
  if (wideKernelTable(1) === null) return t.skip("no WebAssembly SIMD here (or switched off)");
  for (const q0 of q0s) {
    const f = nibbleFrequencies(q0, 13);
    const { div, alias, second } = aliasBuckets(q0);
    const kernel = wideKernelTable(q0);
    const js = aliasTable(q0);
    const seen = Array.from(f, (n) => new Uint8Array(n));
    for (let s = 0; s < 8192; s++) {
      const b = s >>> 9, r = s & 511;
      const [v, i] = r < div[b] ? [b, r] : [alias[b], second[b] + r - div[b]];
      assert.ok(i < f[v] && !seen[v][i], `q0 ${q0} slot ${s}: nibble ${v} numbered ${i} once, below f`);
      seen[v][i] = 1;
      const e = kernel[s];
      assert.equal(e, (i | (v << 13) | (f[v] << 17)) >>> 0, `q0 ${q0} slot ${s}: the kernel's entry`);
      assert.equal(js[s], (v | (i << 4) | (f[v] << 17)) >>> 0, `q0 ${q0} slot ${s}: the package's entry`);
    }
  }
});
