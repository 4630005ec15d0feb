// Coding 10's SIMD kernel alone, two or more builds of it side by side in one process
// (their batches interleaved, so that the machine's load falls on each alike).
//
//   git show <rev>:js/src/wide-wasm-bytes.ts > /tmp/wide-before.ts
//   node js/bench/wide-kernel.mjs /tmp/wide-before.ts js/src/wide-wasm-bytes.ts [--reps N]
//
// Each file is a build of wasm/wide.wat as src/wide-wasm-bytes.ts writes it (the module in
// base64); the kernels must share this package's memory layout (src/wide-wasm.ts) and
// entry layout. The frame is the bench's 8 Mbit p0 = 0.9 frame (bench/decode.mjs makes
// it). For each build: whether its bits are the package's, then the best CPU time of a
// call over the batches (10 calls a batch), payload already in the kernel's memory.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";
import { aliasTable } from "../dist/models.js";
import { LAYOUT, writeShuffles } from "../dist/wide-wasm.js";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf("--reps");
const REPS = at >= 0 ? Number(args.splice(at, 2)[1]) : 20;
const framePath = join(here, "frames", "m8M-p0.9.blwr");
if (!existsSync(framePath)) throw new Error(`${framePath} is missing: run bench/decode.mjs once`);
const frame = new Uint8Array(readFileSync(framePath));
const decoded = bw.decodeFrame(frame);
const h = decoded.header;
const ref = decoded.filter.bits;
const p = frame.subarray(h.headerLength, h.headerLength + h.payloadLength);

// src/wide-wasm.ts's layout and fixed tables
const { TAB, STATES, WORDS, SLACK } = LAYOUT;
const tab = aliasTable(h.q0);
const W = (p.length - 256) >>> 1, n = Math.ceil(h.m / 4), R = Math.ceil(n / 32), R0 = Math.ceil(R / 2);
const K0 = R0 - Math.min(4, R0), K1 = R - R0 - Math.min(4, R - R0);
const states = new Int32Array(64);
for (let k = 0; k < 64; k++) states[k] = p[4 * k] | (p[4 * k + 1] << 8) | (p[4 * k + 2] << 16) | (p[4 * k + 3] << 24);

function setup(file) {
  const base64 = readFileSync(file, "utf8").match(/"([A-Za-z0-9+/=]+)"/)[1];
  const memory = new WebAssembly.Memory({ initial: 64 });
  const inst = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(base64, "base64")), { env: { memory } });
  const b = new Uint8Array(memory.buffer);
  writeShuffles(b);
  const t = new Uint32Array(memory.buffer, TAB, 8192);
  for (let s = 0; s < 8192; s++) {
    const e = tab[s];
    t[s] = ((e >>> 4) & 8191) | ((e & 15) << 13) | (e & ~0x1ffff);
  }
  const words = WORDS + SLACK, outAt = (words + 2 * W + SLACK + 15) & ~15;
  b.set(p.subarray(256, 256 + 2 * W), words);
  const run = () => {
    new Int32Array(memory.buffer, STATES, 64).set(states);
    return inst.exports.wide(words, W, K0, K1, R0, outAt);
  };
  const read = run();
  // the coded rounds of both halves against the package's bits
  const same = (from, count) => b.subarray(outAt + 16 * from, outAt + 16 * (from + count)).every((v, i) => v === ref[16 * from + i]);
  return { file, run, ok: read > 0 && same(0, K0) && same(R0, K1), best: Infinity };
}

const builds = args.map(setup);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (let rep = 0; rep < REPS; rep++) {
  for (const k of builds) {
    const s = cpuMs();
    for (let i = 0; i < 10; i++) k.run();
    k.best = Math.min(k.best, (cpuMs() - s) / 10);
  }
}
console.log(`node ${process.version}, coding 10's kernel on ${2 * (K0 + K1) * 16} coded nibbles, CPU time, best of ${REPS} batches of 10 calls`);
for (const k of builds) console.log(`${k.file}: ${k.ok ? "same bits" : "BITS DIFFER"}, ${k.best.toFixed(3)} ms`);
