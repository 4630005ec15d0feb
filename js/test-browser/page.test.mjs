// One test in a real browser: headless Chromium from the system's packages, driven by
// playwright-core. A page served on 127.0.0.1 fetches a frame, decodes it with the built
// ES module and answers queries; the test checks the answers. It also decodes frames of
// codings 7, 10 and 11 with the WebAssembly loops (10 with SIMD) and checks their bits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { join, dirname, normalize, extname } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");  // js/
const CHROMIUM = process.env.CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const skip = CHROMIUM ? false : "no chromium binary (apt-get install -y chromium)";

const PAGE = `<!doctype html>
<meta charset="utf-8">
<script type="importmap">{"imports": {"@noble/hashes/": "/node_modules/@noble/hashes/"}}</script>
<script type="module">
  import { decodeFrame } from "/dist/index.js";
  const params = new URLSearchParams(location.search);
  try {
    const frame = new Uint8Array(await (await fetch("/frame.blwr")).arrayBuffer());
    const key = Uint8Array.from(params.get("key").match(/../g), (h) => parseInt(h, 16));
    const f = decodeFrame(frame, { key });
    const keys = JSON.parse(params.get("keys"));
    const sparse = decodeFrame(new Uint8Array(await (await fetch("/sparse.blwr")).arrayBuffer()));
    window.result = {
      verified: f.verified, m: f.header.m, ones: f.filter.countOnes(), answers: keys.map((k) => f.filter.contains(k)),
      sparseCoding: sparse.header.coding, sparseOnes: sparse.filter.countOnes(),
      sparseAnswers: keys.map((k) => sparse.filter.contains(k)),
      wasm: (await import("/dist/positional-wasm.js")).wasmAvailable(),
      // codings 10 (SIMD) and 11 from the spec's vectors, decoded by their WebAssembly loops
      simd: (await import("/dist/wide-wasm.js")).wideWasmAvailable(),
      escapeWasm: (await import("/dist/escape-wasm.js")).escapeWasmAvailable(),
      dense: await Promise.all(["wide", "escape"].map(async (name) => {
        const d = decodeFrame(new Uint8Array(await (await fetch("/" + name + ".blwr")).arrayBuffer()));
        return { coding: d.header.coding, bits: Array.from(d.filter.bits) };
      })),
    };
  } catch (e) {
    window.result = { error: String(e) };
  }
</script>`;

const TYPES = { ".js": "text/javascript", ".html": "text/html" };

test("a page decodes a frame with the ES module and answers queries", { skip }, async () => {
  const { chromium } = await import("playwright-core");
  const key = Uint8Array.from({ length: 32 }, (_, i) => i * 3);
  const filter = new bw.BloomFilter({ m: 100000, k: 5, seed: 3n });
  const members = Array.from({ length: 5000 }, (_, i) => `word-${i}-ü`);
  for (const k of members) filter.insert(k);
  const frame = bw.encodeFrame(filter, { key, metadata: new TextEncoder().encode("page test") });
  // a sparse filter in positional frames (coding 7, decoded by the WebAssembly loop)
  const sparse = new bw.BloomFilter({ m: 4_000_000, k: 3, seed: 9n });
  for (const k of members) sparse.insert(k);
  const sparseFrame = bw.encodeFrame(sparse, { coding: "positional" });
  // a frame of coding 10 and one of coding 11 from the spec's vectors
  const dense = {
    wide: readFileSync(join(root, "..", "spec", "vectors", "accept", "std_wide_half.bin")),
    escape: readFileSync(join(root, "..", "spec", "vectors", "accept", "std_escape_paper.bin")),
  };
  const asked = [...members.slice(0, 50), ...Array.from({ length: 200 }, (_, i) => `absent-${i}`)];

  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/" || path === "/index.html") {
      res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    } else if (path === "/sparse.blwr") {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(sparseFrame);
    } else if (path === "/wide.blwr" || path === "/escape.blwr") {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(dense[path.slice(1, -5)]);
    } else if (path === "/frame.blwr") {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(frame);
    } else if (path.startsWith("/dist/") || path.startsWith("/node_modules/@noble/hashes/")) {
      const file = normalize(join(root, path));
      if (!file.startsWith(root) || !existsSync(file)) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
    } else res.writeHead(404).end();
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const port = server.address().port;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--headless", "--disable-background-networking", "--disable-component-update",
      "--disable-default-apps", "--disable-sync", "--no-first-run", "--metrics-recording-only"],
  });
  try {
    const page = await browser.newPage();
    const hexKey = Buffer.from(key).toString("hex");
    await page.goto(`http://127.0.0.1:${port}/?key=${hexKey}&keys=${encodeURIComponent(JSON.stringify(asked))}`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30000 });
    const result = await page.evaluate(() => window.result);
    assert.equal(result.error, undefined, result.error);
    assert.equal(result.verified, true);
    assert.equal(result.m, 100000);
    assert.equal(result.ones, filter.countOnes());
    assert.deepEqual(result.answers, asked.map((k) => filter.contains(k)));
    assert.ok(result.answers.slice(0, 50).every(Boolean));
    assert.equal(result.sparseCoding, 7);
    assert.equal(result.wasm, true, "the WebAssembly loop runs in the page");
    assert.equal(result.sparseOnes, sparse.countOnes());
    assert.equal(result.simd, true, "coding 10's SIMD loop runs in the page");
    assert.equal(result.escapeWasm, true, "coding 11's WebAssembly loop runs in the page");
    assert.deepEqual(result.dense.map((d) => d.coding), [10, 11]);
    assert.deepEqual(result.dense[0].bits, Array.from(bw.decodeFrame(new Uint8Array(dense.wide)).filter.bits));
    assert.deepEqual(result.dense[1].bits, Array.from(bw.decodeFrame(new Uint8Array(dense.escape)).filter.bits));
    assert.deepEqual(result.sparseAnswers, asked.map((k) => sparse.contains(k)));
  } finally {
    await browser.close();
    server.close();
  }
});
