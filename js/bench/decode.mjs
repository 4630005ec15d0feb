// Decode speed of the package against the Rust library, on frames the program makes.
//
//   cargo build --release -p bloomwire-cli
//   cargo build --release --manifest-path js/bench/rust-decode/Cargo.toml --target-dir target
//   node js/bench/decode.mjs [--batches N] [--warmup MS]
//
// Frames (built once into bench/frames/ with the program, its default coding):
//   - 8 000 000-bit filters (k = 3) at p0 = 0.9, 0.99 and 0.999,
//   - the paper's filter: m = 140 000, n = 10 000, k = 2,
//   - a receiver's delta: m = 2^27, k = 2, a million keys then 10 000 more (about
//     20 000 flipped bits).
// Both sides are timed in CPU time (the machine is shared: time spent waiting for a core is
// not counted), in batches of calls of at least 20 ms each: the package with
// process.cpuUsage() around decodeFrame in this process, the library with the thread's CPU
// time around bloomwire::decode in bench/rust-decode, a child process that stays up and
// decodes the same files on request. Each side first decodes each frame for WARMUP ms of
// CPU time (default 500: V8 compiles a function's fastest code only after it has run a
// while, and a receiver's stream of frames runs that code). The batches then alternate, a library batch then a package
// batch, N pairs a frame, so that both halves of a pair see the same load; the table gives
// the best batch of each side and, for each pair, the package's speed over the library's:
// their median and range.
import { execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";
import { crc32c } from "../dist/crc32c.js";
import { wasmWide, wideWasmAvailable } from "../dist/wide-wasm.js";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const CLI = opt("--cli", process.env.BLOOMWIRE_CLI ?? resolve(here, "..", "..", "target", "release", "bloomwire"));
const LIB = opt("--lib", resolve(here, "..", "..", "target", "release", "bloomwire-js-bench-decode"));
const BATCHES = Number(opt("--batches", "10"));
const WARMUP = Number(opt("--warmup", "500"));
const dir = join(here, "frames");
mkdirSync(dir, { recursive: true });
const f = (n) => join(dir, n);

function keys(name, from, to) {
  if (existsSync(f(name))) return;
  const lines = [];
  for (let i = from; i < to; i++) lines.push(`key-${i}`);
  writeFileSync(f(name), lines.join("\n") + "\n");
}
function build(name, keysName, args) {
  if (!existsSync(f(name))) execFileSync(CLI, ["-q", "build", "--keys", f(keysName), "-o", f(name), ...args]);
  return new Uint8Array(readFileSync(f(name)));
}

const cases = [];
for (const p0 of [0.9, 0.99, 0.999]) {
  const n = Math.round((-8e6 * Math.log(p0)) / 3);
  keys(`keys-${n}.txt`, 0, n);
  cases.push({ label: `8 Mbit, p0 = ${p0}`, name: `m8M-p${p0}.blwr`, frame: build(`m8M-p${p0}.blwr`, `keys-${n}.txt`, ["--m", "8000000", "--k", "3"]) });
}
keys("keys-10000.txt", 0, 10000);
cases.push({ label: "paper: m = 140 000, n = 10 000, k = 2", name: "paper.blwr", frame: build("paper.blwr", "keys-10000.txt", ["--m", "140000", "--k", "2"]) });

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Calls of `fn` a batch: enough for 20 ms of CPU time (after as much warm-up). */
function callsFor(fn) {
  const start = cpuMs();
  let calls = 0;
  while (cpuMs() - start < 20 || calls < 3) {
    fn();
    calls++;
  }
  return calls;
}

/** CPU ms per call of one batch of `calls` calls. */
function batch(fn, calls) {
  const s = cpuMs();
  for (let i = 0; i < calls; i++) fn();
  return (cpuMs() - s) / calls;
}

/** The library's timer (bench/rust-decode) as a child that answers "INDEX CALLS" with CPU ms. */
function libraryTimer(paths) {
  const child = spawn(LIB, paths, { stdio: ["pipe", "pipe", "inherit"] });
  const waiting = [];
  createInterface({ input: child.stdout }).on("line", (line) => waiting.shift()?.resolve(Number(line)));
  child.on("exit", (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the library's timer ended (${code})`));
  });
  return {
    /** CPU ms of `calls` decodes of frame `index`, all together */
    run(index, calls) {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write(`${index} ${calls}\n`);
      });
    },
    close() {
      child.stdin.end();
    },
  };
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const CODING = ["raw", "adaptive", "known-p", "known-p-symbols", "known-counters", "adaptive-counters", "known-p-interleaved", "positional", "dense", "small", "wide", "escape"];
const lib = existsSync(LIB) ? libraryTimer(cases.map((c) => f(c.name))) : null;
if (!lib) console.log(`(the library's timer is not built at ${LIB}: see the command above)`);
console.log(`node ${process.version}, ${cpus()[0].model} (${cpus().length} cores, shared), load ${loadavg().map((l) => l.toFixed(2)).join(" ")}, CPU time, ${WARMUP} ms of warm-up and ${BATCHES} pairs of batches a frame\n`);
console.log("| frame | coding | frame bytes | package ms (best) | library ms (best) | ratio of the bests | package speed / library's, per pair: median (range) |");
console.log("|---|---|---:|---:|---:|---:|---|");
for (const [i, c] of cases.entries()) {
  const h = bw.decodeFrame(c.frame).header;
  const fn = () => bw.decodeFrame(c.frame);
  // warm-up, then the calls a batch
  for (const s = cpuMs(); cpuMs() - s < WARMUP;) fn();
  const calls = callsFor(fn);
  let libCalls = 0;
  if (lib) {
    // warm-up, then calls a batch: doubled until a batch takes 20 ms
    let spent = 0;
    for (libCalls = 1; spent < WARMUP; libCalls *= 2) spent += await lib.run(i, libCalls);
    for (libCalls = 1; (await lib.run(i, libCalls)) < 20; libCalls *= 2);
  }
  let ours = Infinity, theirs = Infinity;
  const ratios = [];
  for (let b = 0; b < BATCHES; b++) {
    const l = lib ? (await lib.run(i, libCalls)) / libCalls : NaN;
    const o = batch(fn, calls);
    ours = Math.min(ours, o);
    if (lib) {
      theirs = Math.min(theirs, l);
      ratios.push(l / o);
    }
  }
  const coding = `${h.coding} ${CODING[h.coding]}${h.chunkShift !== null ? ` (chunks of 2^${h.chunkShift})` : ""}`;
  const pairs = lib ? `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})` : "";
  console.log(`| ${c.label} | ${coding} | ${c.frame.length} | ${ours.toFixed(3)} | ${lib ? theirs.toFixed(3) : "?"} | ${lib ? `${(theirs / ours).toFixed(2)}x` : ""} | ${pairs} |`);
}
lib?.close();

// Where the dense frame's time goes: the checksum, coding 10's coded rounds alone (the
// kernel, into an array of its own: the table built, the payload copied in and the bits
// out), a fresh output array first touched, and the whole decodeFrame. Their batches are
// interleaved (a batch of each in turn, BATCHES rounds), so each part's share of the
// decode is taken within a round; printed: each part's best batch and its median share,
// and what the parts leave of the decode (median over the rounds).
{
  const c = cases[0];
  const h = bw.decodeFrame(c.frame).header;
  const p = c.frame.subarray(h.headerLength, h.headerLength + h.payloadLength);
  const out = new Uint8Array(Math.ceil(h.m / 8));
  const q0 = h.q0;
  const W = (p.length - 256) >>> 1, n = Math.ceil(h.m / 4), R = Math.ceil(n / 32), R0 = Math.ceil(R / 2);
  const K0 = R0 - Math.min(4, R0), K1 = R - R0 - Math.min(4, R - R0);
  const x = new Int32Array(64);
  const kernel = () => {
    for (let k = 0; k < 64; k++) x[k] = p[4 * k] | (p[4 * k + 1] << 8) | (p[4 * k + 2] << 16) | (p[4 * k + 3] << 24);
    if (!wasmWide(p, W, K0, K1, R0, q0, x, out)) throw new Error("no SIMD kernel here");
  };
  if (h.coding === 10 && wideWasmAvailable()) {
    const parts = [
      ["checksum", () => crc32c(c.frame, 0, c.frame.length - 4)],
      ["coded rounds (SIMD kernel: table, copies in and out)", kernel],
      ["a fresh output array, first touched", () => new Uint8Array(out.length).fill(0)],
      ["decodeFrame", () => bw.decodeFrame(c.frame)],
    ].map(([name, fn]) => ({ name, fn, calls: callsFor(fn), times: [] }));
    for (let b = 0; b < BATCHES; b++) for (const part of parts) part.times.push(batch(part.fn, part.calls));
    const whole = parts[parts.length - 1].times;
    const shares = parts.map((part) => median(part.times.map((t, b) => t / whole[b])));
    const rest = median(whole.map((t, b) => (t - parts.slice(0, -1).reduce((sum, part) => sum + part.times[b], 0)) / t));
    console.log(`\n${c.label}, its parts (best ms, median share of decodeFrame in the same round):`);
    console.log(parts.map((part, i) => `${part.name} ${Math.min(...part.times).toFixed(3)} ms (${(100 * shares[i]).toFixed(0)}%)`).join("; ") + `; the rest ${(100 * rest).toFixed(0)}%`);
  }
}

// The receiver: a 20 000-flip delta on a 2^27-bit filter.
keys("keys-1M.txt", 0, 1000000);
keys("keys-1M+10k.txt", 0, 1010000);
const old = build("r-old.blwr", "keys-1M.txt", ["--m", String(2 ** 27), "--k", "2", "--generation", "1", "--restart"]);
build("r-new.blwr", "keys-1M+10k.txt", ["--m", String(2 ** 27), "--k", "2", "--generation", "2"]);
if (!existsSync(f("r-delta.blwr"))) execFileSync(CLI, ["-q", "diff", f("r-old.blwr"), f("r-new.blwr"), "-o", f("r-delta.blwr")]);
const delta = new Uint8Array(readFileSync(f("r-delta.blwr")));
const dh = bw.decodeFrame(delta).header;
const flips = bw.decodeFrame(delta).filter.countOnes();
const rx = new bw.Receiver();
let fullMs = Infinity, deltaMs = Infinity, deltaWall = Infinity;
for (let i = 0; i < BATCHES; i++) {
  let s = cpuMs();
  rx.receive(old);
  fullMs = Math.min(fullMs, cpuMs() - s);
  s = cpuMs();
  const w = process.hrtime.bigint();
  rx.receive(delta);
  deltaWall = Math.min(deltaWall, Number(process.hrtime.bigint() - w) / 1e6);
  deltaMs = Math.min(deltaMs, cpuMs() - s);
}
// A receiver in its steady state: the same flips back and forth, as deltas of the same
// 19 713 positions (the package writes the program's bytes for them), numbered on.
const a = bw.decodeFrame(old).filter, b = rx.filter.clone();
let g = rx.generation, steadyMs = Infinity, steadyWall = Infinity;
const steady = [];
for (let i = 0; i < 4 * BATCHES; i++) {
  const frame = bw.encodeDelta(i % 2 ? a : b, i % 2 ? b : a, g, { generation: g + 1n, coding: "positional" });
  const s = cpuMs(), w = process.hrtime.bigint();
  rx.receive(frame);
  steadyWall = Math.min(steadyWall, Number(process.hrtime.bigint() - w) / 1e6);
  steadyMs = Math.min(steadyMs, cpuMs() - s);
  g++;
}
console.log(`\nreceiver, m = 2^27, k = 2: a full frame of ${old.length} bytes (coding ${bw.decodeFrame(old).header.coding}, chunked) received in ${fullMs.toFixed(1)} ms CPU (decode and digest);`);
console.log(`the program's delta of ${delta.length} bytes (coding ${dh.coding} ${CODING[dh.coding]}, ${flips} flipped bits) applied in place right after it in ${deltaMs.toFixed(3)} ms CPU (${deltaWall.toFixed(3)} ms wall), best of ${BATCHES};`);
console.log(`the same flips as a steady stream of deltas: ${steadyMs.toFixed(3)} ms CPU (${steadyWall.toFixed(3)} ms wall) a delta, best of ${4 * BATCHES}`);
