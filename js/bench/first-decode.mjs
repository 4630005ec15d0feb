// The first decodes of a process: the CPU time of the first decodeFrame of a frame (the
// modules compiled, the code not yet optimized), the mean of the next nine and of the fifty
// after, in this fresh process. Run it a few times, and for a base build as well:
//
//   node js/bench/first-decode.mjs js/dist [--frame m8M-p0.9.blwr]
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const at = args.indexOf("--frame");
const name = at >= 0 ? args.splice(at, 2)[1] : "m8M-p0.9.blwr";
const frame = new Uint8Array(readFileSync(join(here, "frames", name)));
const bw = await import(pathToFileURL(resolve(args[0] ?? join(here, "..", "dist"), "index.js")).href);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const t = [];
for (let i = 0; i < 60; i++) {
  const s = cpuMs();
  bw.decodeFrame(frame);
  t.push(cpuMs() - s);
}
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
console.log(`${name}: first ${t[0].toFixed(1)} ms, next nine ${mean(t.slice(1, 10)).toFixed(2)} ms a call, the fifty after ${mean(t.slice(10)).toFixed(2)} ms`);
