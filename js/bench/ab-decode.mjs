// Whole-frame decode of two or more builds of the package side by side in one process,
// frame by frame, their batches interleaved (so that the machine's load falls on each
// alike), and the Rust library's time for the same files when its timer is built.
//
//   mkdir -p /tmp/before && git archive <rev> js | tar -x -C /tmp/before
//   (cd /tmp/before/js && npm ci && npm run build)
//   node js/bench/ab-decode.mjs /tmp/before/js/dist js/dist [--reps N]
//     [--frames paper,p0.999] [--lib]
//
// Each argument is a package's `dist` directory (built with `npm run build`). The frames
// are bench/decode.mjs's (run it once to make them): `paper` (coding 11), `p0.9` (10),
// `p0.99` and `p0.999` (7). For each frame: whether each build's bits and header are the
// first build's, then for each build the best and the median CPU time of a call over the
// batches (each batch at least 10 ms of calls, the builds' order alternating from one
// batch to the next), and with --lib the library's best time (bench/rust-decode, built as
// bench/decode.mjs says) and each build's speed over it.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  if (i < 0) return def;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const flag = (name) => {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const REPS = Number(opt("--reps", "20"));
const FRAMES = opt("--frames", "paper,p0.999").split(",");
const WITH_LIB = flag("--lib");
const LIB = resolve(here, "..", "..", "target", "release", "bloomwire-js-bench-decode");
const FILES = { paper: "paper.blwr", "p0.9": "m8M-p0.9.blwr", "p0.99": "m8M-p0.99.blwr", "p0.999": "m8M-p0.999.blwr" };
if (args.length < 1) throw new Error("usage: ab-decode.mjs DIST [DIST ...] [--reps N] [--frames a,b] [--lib]");

const builds = [];
for (const dist of args) {
  const mod = await import(pathToFileURL(join(resolve(dist), "index.js")).href);
  builds.push({ dist, decode: mod.decodeFrame });
}
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const equal = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const load = existsSync("/proc/loadavg") ? `, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}` : "";
console.log(`node ${process.version}, ${cpus()[0].model} (${cpus().length} cores)${load}`);
console.log(`CPU time a call, ${REPS} batches of at least 10 ms each build, interleaved\n`);
for (const name of FRAMES) {
  const path = join(here, "frames", FILES[name]);
  if (!existsSync(path)) throw new Error(`${path} is missing: run bench/decode.mjs once`);
  const frame = new Uint8Array(readFileSync(path));
  const ref = builds[0].decode(frame);
  for (const b of builds) {
    const got = b.decode(frame);
    b.same = equal(got.filter.bits, ref.filter.bits) && got.header.q0 === ref.header.q0 && got.header.m === ref.header.m;
    b.times = [];
    // calls for 10 ms, after as much again of warm-up
    const start = cpuMs();
    let calls = 0;
    while (cpuMs() - start < 10 || calls < 3) {
      b.decode(frame);
      calls++;
    }
    b.calls = calls;
  }
  for (let rep = 0; rep < REPS; rep++) {
    const order = rep % 2 ? [...builds].reverse() : builds;
    for (const b of order) {
      const s = cpuMs();
      for (let i = 0; i < b.calls; i++) b.decode(frame);
      b.times.push((cpuMs() - s) / b.calls);
    }
  }
  let lib = null;
  if (WITH_LIB && existsSync(LIB)) {
    lib = Number(execFileSync(LIB, ["8", path]).toString().trim().split("\t")[1]);
  }
  console.log(`${name} (coding ${ref.header.coding}, ${frame.length} bytes)${lib !== null ? `: the library ${lib.toFixed(4)} ms` : ""}`);
  for (const b of builds) {
    const best = Math.min(...b.times), med = median(b.times);
    const vs = lib !== null ? `, ${(lib / best).toFixed(2)}x the library (best), ${(lib / med).toFixed(2)}x (median)` : "";
    console.log(`  ${b.dist}: ${b.same ? "same bits" : "BITS DIFFER"}, best ${best.toFixed(4)} ms, median ${med.toFixed(4)} ms${vs}`);
  }
}
