// Whole-frame decodes of two or more builds of the package side by side in one process,
// frame by frame, their batches interleaved (the order reversed every round, so that the
// machine's load falls on each alike). For A/B tests of a change: build the base into a
// directory of its own,
//
//   git worktree add /tmp/base <rev> && (cd /tmp/base/js && npm ci && npm run build)
//   node js/bench/ab-decode.mjs /tmp/base/js/dist js/dist [--frames p0.9,paper]
//     [--pairs N] [--warmup MS] [--lib]
//
// Each argument is a package's `dist` directory (built with `npm run build`). The frames
// are bench/decode.mjs's (run it once to make them): `p0.9` (coding 10, the default),
// `p0.99` and `p0.999` (7), `paper` (11). For each frame: whether each build's bits and
// header are the first build's (after MS, default 500, of CPU time of warm-up calls each,
// as bench/decode.mjs does), each build's best and median CPU time a call over its
// batches (of at least 20 ms of calls each), and each later build's speed over the first's
// per round of batches (median and range). With --lib, the library's best batch too
// (bench/rust-decode, built as bench/decode.mjs says; timed after the builds, not paired:
// bench/decode.mjs pairs the package with the library) and each build's speed over it.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : def;
};
const flag = (name) => {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const PAIRS = Number(opt("--pairs", "20"));
const FRAMES = opt("--frames", "p0.9").split(",");
const WARMUP = Number(opt("--warmup", "500"));
const WITH_LIB = flag("--lib");
const LIB = resolve(here, "..", "..", "target", "release", "bloomwire-js-bench-decode");
const FILES = { "p0.9": "m8M-p0.9.blwr", "p0.99": "m8M-p0.99.blwr", "p0.999": "m8M-p0.999.blwr", paper: "paper.blwr" };
if (args.length < 2) throw new Error("usage: ab-decode.mjs DIST_A DIST_B [DIST ...] [--frames a,b] [--pairs N] [--warmup MS] [--lib]");

const builds = [];
for (const dist of args) builds.push({ dist, decode: (await import(pathToFileURL(resolve(dist, "index.js")).href)).decodeFrame });

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const equal = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

console.log(`node ${process.version}, ${cpus()[0].model} (${cpus().length} cores), load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`CPU time a call, ${PAIRS} rounds of one batch of at least 20 ms a build, interleaved\n`);
for (const name of FRAMES) {
  const path = join(here, "frames", FILES[name] ?? name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run bench/decode.mjs once`);
  const frame = new Uint8Array(readFileSync(path));
  const ref = builds[0].decode(frame);
  for (const b of builds) {
    const got = b.decode(frame);
    b.same = equal(got.filter.bits, ref.filter.bits) && got.header.q0 === ref.header.q0 && got.header.m === ref.header.m;
    b.times = [];
    // warm-up first: V8 compiles a function's fastest code only after it has run a while
    for (const s = cpuMs(); cpuMs() - s < WARMUP; ) b.decode(frame);
    const start = cpuMs();
    b.calls = 0;
    while (cpuMs() - start < 20 || b.calls < 3) {
      b.decode(frame);
      b.calls++;
    }
  }
  for (let round = 0; round < PAIRS; round++) {
    for (const b of round % 2 ? [...builds].reverse() : builds) {
      const s = cpuMs();
      for (let i = 0; i < b.calls; i++) b.decode(frame);
      b.times.push((cpuMs() - s) / b.calls);
    }
  }
  let lib = null;
  if (WITH_LIB && existsSync(LIB)) {
    // The timer answers each "INDEX CALLS" line with the CPU ms of CALLS decodes.
    const calls = 200;
    const out = execFileSync(LIB, [path], { input: `0 ${calls}\n`.repeat(PAIRS) }).toString();
    lib = Math.min(...out.trim().split("\n").map((l) => Number(l) / calls));
  }
  console.log(`${name} (coding ${ref.header.coding}, ${frame.length} bytes)${lib !== null ? `: the library ${lib.toFixed(4)} ms` : ""}`);
  for (const [k, b] of builds.entries()) {
    const best = Math.min(...b.times);
    const vsLib = lib !== null ? `, ${(lib / best).toFixed(2)}x the library (best), ${(lib / median(b.times)).toFixed(2)}x (median)` : "";
    const ratios = b.times.map((t, i) => builds[0].times[i] / t).sort((x, y) => x - y);
    const vsFirst = k ? `; speed / the first's per round ${median(ratios).toFixed(3)}x (${ratios[0].toFixed(3)}-${ratios[ratios.length - 1].toFixed(3)})` : "";
    console.log(`  ${b.dist}: ${b.same ? "same bits" : "BITS DIFFER"}, best ${best.toFixed(4)} ms, median ${median(b.times).toFixed(4)} ms${vsLib}${vsFirst}`);
  }
}
