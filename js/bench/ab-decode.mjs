// Two builds of the package side by side on one frame: decodeFrame of each, in one process,
// their batches interleaved (the order swapped every pair) so that the machine's load falls
// on both alike. For A/B tests of a change: build the base into a directory of its own,
//
//   git worktree add /tmp/base <rev> && (cd /tmp/base/js && npm ci && npm run build)
//   node js/bench/ab-decode.mjs /tmp/base/js/dist js/dist [--frame m8M-p0.9.blwr] [--pairs N]
//
// Prints whether both give the same bits, each build's best batch (CPU ms a call, batches
// of at least 20 ms) and, per pair, the second build's speed over the first's: median and
// range. The frame is one of bench/frames/ (bench/decode.mjs makes them).
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : def;
};
const frame = new Uint8Array(readFileSync(join(here, "frames", opt("--frame", "m8M-p0.9.blwr"))));
const PAIRS = Number(opt("--pairs", "20"));
if (args.length !== 2) throw new Error("usage: ab-decode.mjs DIST_A DIST_B [--frame NAME] [--pairs N]");
const builds = [];
for (const dist of args) builds.push(await import(pathToFileURL(resolve(dist, "index.js")).href));

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const fns = builds.map((bw) => () => bw.decodeFrame(frame));
const [a, b] = fns.map((fn) => fn().filter.bits);
const same = a.length === b.length && a.every((v, i) => v === b[i]);
const calls = fns.map((fn) => {
  const s = cpuMs();
  let n = 0;
  while (cpuMs() - s < 20 || n < 3) {
    fn();
    n++;
  }
  return n;
});
const batch = (k) => {
  const s = cpuMs();
  for (let i = 0; i < calls[k]; i++) fns[k]();
  return (cpuMs() - s) / calls[k];
};
const bests = [Infinity, Infinity], ratios = [];
for (let p = 0; p < PAIRS; p++) {
  const t = [0, 0];
  for (const k of p % 2 ? [1, 0] : [0, 1]) t[k] = batch(k);
  bests[0] = Math.min(bests[0], t[0]);
  bests[1] = Math.min(bests[1], t[1]);
  ratios.push(t[0] / t[1]);
}
ratios.sort((x, y) => x - y);
const median = PAIRS % 2 ? ratios[(PAIRS - 1) / 2] : (ratios[PAIRS / 2 - 1] + ratios[PAIRS / 2]) / 2;
console.log(`node ${process.version}, load ${loadavg()[0].toFixed(2)}, ${PAIRS} pairs of batches; ${same ? "same bits" : "BITS DIFFER"}`);
console.log(`A ${args[0]}: best ${bests[0].toFixed(3)} ms; B ${args[1]}: best ${bests[1].toFixed(3)} ms`);
console.log(`B's speed / A's, per pair: median ${median.toFixed(3)}x (${ratios[0].toFixed(3)}-${ratios[PAIRS - 1].toFixed(3)})`);
