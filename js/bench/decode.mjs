// Decode speed of the package against the program, on frames the program makes.
//
//   node bench/decode.mjs [--cli PATH] [--runs N]
//
// Frames (built once into bench/frames/ with the program, auto coding):
//   - 8 000 000-bit filters (k = 3) at p0 = 0.9, 0.99 and 0.999,
//   - the paper's filter: m = 140 000, n = 10 000, k = 2,
//   - a receiver's delta: m = 2^27, k = 2, a million keys then 10 000 more (about
//     20 000 flipped bits).
// The package: the best of N runs of decodeFrame (or Receiver.receive for the delta) in
// this process, after warm-up. The program: the best of N runs of a whole
// `bloomwire decode FRAME -o /dev/null` process, minus the best of N runs of the same
// command on a frame of 8 bits (its start-up, reading and writing): an estimate of the
// library's decode alone, printed with both figures.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";
import { canonicalFrame } from "../test/canonical.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const CLI = opt("--cli", process.env.BLOOMWIRE_CLI ?? resolve(here, "..", "..", "target", "release", "bloomwire"));
const RUNS = Number(opt("--runs", "30"));
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
  if (!existsSync(f(name))) {
    execFileSync(CLI, ["-q", "build", "--keys", f(keysName), "-o", f(name), ...args]);
    // a program from before format 1.0 may write a q0 that is not its model's least
    writeFileSync(f(name), canonicalFrame(new Uint8Array(readFileSync(f(name)))));
  }
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
keys("keys-tiny.txt", 0, 1);
build("tiny.blwr", "keys-tiny.txt", ["--m", "8", "--k", "1"]);

function best(fn) {
  for (let i = 0; i < 3; i++) fn();
  let t = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const s = process.hrtime.bigint();
    fn();
    t = Math.min(t, Number(process.hrtime.bigint() - s) / 1e6);
  }
  return t;
}
function programMs(name) {
  let t = Infinity;
  for (let i = 0; i < Math.max(5, Math.floor(RUNS / 2)); i++) {
    const s = process.hrtime.bigint();
    const r = spawnSync(CLI, ["-q", "decode", f(name), "-o", "/dev/null", "-f"]);
    const e = Number(process.hrtime.bigint() - s) / 1e6;
    if (r.status !== 0) throw new Error(`${CLI} decode ${name}: ${r.stderr}`);
    t = Math.min(t, e);
  }
  return t;
}

const CODING = ["raw", "adaptive", "known-p", "known-p-symbols", "known-counters", "adaptive-counters", "known-p-interleaved", "positional", "dense", "small", "wide", "escape"];
console.log(`node ${process.version}, ${cpus()[0].model}, best of ${RUNS} runs`);
const base = programMs("tiny.blwr");
console.log(`program start-up (decode of an 8-bit frame): ${base.toFixed(2)} ms\n`);
console.log("| frame | coding | bytes | package ms | program ms (whole process) | program ms less start-up | package speed / program's |");
console.log("|---|---|---:|---:|---:|---:|---:|");
for (const c of cases) {
  const h = bw.decodeFrame(c.frame).header;
  const ours = best(() => bw.decodeFrame(c.frame));
  const theirs = programMs(c.name);
  const lib = Math.max(theirs - base, 0.001);
  console.log(`| ${c.label} | ${h.coding} ${CODING[h.coding]}${h.chunkShift !== null ? ` (chunks of 2^${h.chunkShift})` : ""} | ${c.frame.length} | ${ours.toFixed(3)} | ${theirs.toFixed(2)} | ${lib.toFixed(3)} | ${(lib / ours).toFixed(2)}x |`);
}

// The receiver: a 20 000-flip delta on a 2^27-bit filter.
keys("keys-1M.txt", 0, 1000000);
keys("keys-1M+10k.txt", 0, 1010000);
const old = build("r-old.blwr", "keys-1M.txt", ["--m", String(2 ** 27), "--k", "2", "--generation", "1", "--restart"]);
build("r-new.blwr", "keys-1M+10k.txt", ["--m", String(2 ** 27), "--k", "2", "--generation", "2"]);
if (!existsSync(f("r-delta.blwr"))) {
  execFileSync(CLI, ["-q", "diff", f("r-old.blwr"), f("r-new.blwr"), "-o", f("r-delta.blwr")]);
  writeFileSync(f("r-delta.blwr"), canonicalFrame(new Uint8Array(readFileSync(f("r-delta.blwr")))));
}
const delta = new Uint8Array(readFileSync(f("r-delta.blwr")));
const dh = bw.decodeFrame(delta).header;
const flips = bw.decodeFrame(delta).filter.countOnes();
const rx = new bw.Receiver();
let fullMs = Infinity, deltaMs = Infinity;
for (let i = 0; i < Math.max(5, Math.floor(RUNS / 3)); i++) {
  let s = process.hrtime.bigint();
  rx.receive(old);
  fullMs = Math.min(fullMs, Number(process.hrtime.bigint() - s) / 1e6);
  s = process.hrtime.bigint();
  rx.receive(delta);
  deltaMs = Math.min(deltaMs, Number(process.hrtime.bigint() - s) / 1e6);
}
console.log(`\nreceiver, m = 2^27, k = 2: full frame of ${old.length} bytes (coding ${bw.decodeFrame(old).header.coding}) received in ${fullMs.toFixed(2)} ms (decode and digest);`);
console.log(`delta of ${delta.length} bytes (coding ${dh.coding} ${CODING[dh.coding]}, ${flips} flipped bits) applied in place in ${deltaMs.toFixed(3)} ms`);
