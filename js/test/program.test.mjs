// Interoperability with the bloomwire program: frames it makes (every coding, layouts,
// hash families, counting, chunks, keys, metadata, deltas) are read by the package and
// answer as the program does; frames the package writes are byte for byte the program's
// for the same filter and coding, and the program reads them back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const CLI = process.env.BLOOMWIRE_CLI ?? resolve(here, "..", "..", "target", "debug", "bloomwire");
const have = existsSync(CLI);
const skip = have ? false : `the program is not at ${CLI} (set BLOOMWIRE_CLI)`;
const dir = mkdtempSync(join(tmpdir(), "bloomwire-js-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const run = (...args) => execFileSync(CLI, ["-q", ...args], { encoding: "buffer", maxBuffer: 1 << 28 });
const file = (name) => join(dir, name);
const bytes = (name) => new Uint8Array(readFileSync(file(name)));
const KEY = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);

function keys(name, from, to) {
  const lines = [];
  for (let i = from; i < to; i++) lines.push(`key-${i}`);
  writeFileSync(file(name), lines.join("\n") + "\n");
  return lines;
}
let members, others;
if (have) {
  members = keys("keys.txt", 0, 3000);
  keys("more.txt", 0, 3100);
  others = keys("others.txt", 100000, 100400);
  writeFileSync(file("key.bin"), KEY);
}

/** The program's answers for keys (true = maybe). */
function programAnswers(frame, keysFile, extra = []) {
  let out;
  try {
    out = run("query", ...extra, file(frame), "--keys", file(keysFile)).toString();
  } catch (e) {
    if (e.status !== 1) throw e; // 1: some key is certainly absent (grep's convention)
    out = e.stdout.toString();
  }
  return out.trim().split("\n").map((l) => l.endsWith("maybe"));
}

function build(name, args) {
  run("build", "--keys", file("keys.txt"), "-o", file(name), "-f", ...args);
  return bytes(name);
}

function decodeProgramFrame(frame, opts) {
  return bw.decodeFrame(frame, opts);
}

/** Decode with the package and the program; same bits (or counters) and the same answers. */
function crossCheck(name, frame, opts = {}, extra = []) {
  const f = decodeProgramFrame(frame, opts);
  run("decode", ...extra, file(name), "-o", file(name + ".bits"), "-f");
  const theirs = bytes(name + ".bits");
  const ours = f.filter instanceof bw.CountingFilter ? f.filter.packed() : f.filter.bits;
  assert.deepEqual(ours, theirs, `${name}: bits differ`);
  const answers = programAnswers(name, "others.txt", extra);
  assert.deepEqual(others.map((k) => f.filter.contains(k)), answers, `${name}: answers differ`);
  for (const k of members.slice(0, 200)) assert.ok(f.filter.contains(k));
  return f;
}

/** The package writes the same bytes for the decoded filter and the frame's header fields. */
function reencodes(frame, f, opts = {}) {
  const h = f.header;
  const again = bw.encodeFrame(f.filter, {
    coding: h.coding, q0: h.q0 ?? undefined, counterTable: h.counterTable ?? undefined,
    chunkShift: h.chunkShift ?? "never", generation: h.generation, restart: h.restart,
    metadata: h.metadata ?? undefined, key: opts.key,
  });
  assert.deepEqual(again, frame, "the package's frame differs from the program's");
}

const BIT_CODINGS = ["raw", "adaptive", "known-p", "known-p-symbols", "known-p-interleaved", "positional", "small", "wide", "escape", "auto"];

for (const coding of BIT_CODINGS) {
  test(`program frame: coding ${coding}`, { skip }, () => {
    const name = `c-${coding}.blwr`;
    const frame = build(name, ["--coding", coding, "--m", "40000", "--k", "3", "--chunk-shift", "never"]);
    const f = crossCheck(name, frame);
    if ([0, 1, 2, 7].includes(f.header.coding)) reencodes(frame, f);
  });
}

for (const coding of ["adaptive", "known-p", "known-p-symbols", "known-p-interleaved", "positional", "wide"]) {
  test(`program frame: chunked ${coding}`, { skip }, () => {
    const name = `ch-${coding}.blwr`;
    const frame = build(name, ["--coding", coding, "--m", "300000", "--k", "2", "--chunk-shift", "16"]);
    const f = crossCheck(name, frame);
    assert.equal(f.header.chunkShift, 16);
    if ([1, 2, 7].includes(f.header.coding)) reencodes(frame, f);
  });
}

const SHAPES = [
  ["partitioned, rational k", ["--layout", "partitioned", "--m", "50001", "--k", "2.5"]],
  ["blocks, rational k", ["--layout", "blocks", "--m", "50001", "--k", "3.25"]],
  ["siphash", ["--siphash-key", "000102030405060708090a0b0c0d0e0f", "--m", "30000", "--k", "4"]],
  ["seed", ["--seed", "18446744073709551615", "--m", "30000", "--k", "4"]],
  ["planned", ["--fpr", "0.001"]],
];
for (const [label, args] of SHAPES) {
  test(`program frame: ${label}`, { skip }, () => {
    const name = `s-${label.replace(/\W+/g, "_")}.blwr`;
    for (const coding of ["known-p", "positional"]) {
      const frame = build(name, [...args, "--coding", coding]);
      reencodes(frame, crossCheck(name, frame));
    }
  });
}

for (const width of [1, 4, 8]) {
  test(`program frame: counting, ${width}-bit counters`, { skip }, () => {
    for (const coding of ["auto", "raw"]) {
      const name = `cnt-${width}-${coding}.blwr`;
      const frame = build(name, ["--counting", String(width), "--m", "20000", "--k", "3", "--coding", coding]);
      const f = crossCheck(name, frame);
      assert.ok(f.filter instanceof bw.CountingFilter);
      reencodes(frame, f);
    }
  });
}

test("program frame: the default chunking of a filter of 2^26 bits or more (spec 4.10)", { skip }, () => {
  keys("big.txt", 0, 400000);
  run("build", "--keys", file("big.txt"), "-o", file("big.blwr"), "-f", "--m", "67108865", "--k", "1", "--coding", "positional");
  const frame = bytes("big.blwr");
  const f = bw.decodeFrame(frame);
  assert.notEqual(f.header.chunkShift, null);
  assert.deepEqual(bw.encodeFrame(f.filter, { coding: "positional" }), frame);
});

test("program frame: keyed, metadata, restart, generation", { skip }, () => {
  const name = "keyed.blwr";
  const frame = build(name, ["--m", "30000", "--k", "3", "--coding", "known-p", "--key-file", file("key.bin"),
    "--metadata-hex", "00ff10", "--restart", "--generation", "42"]);
  const f = crossCheck(name, frame, { key: KEY }, ["--key-file", file("key.bin")]);
  assert.equal(f.verified, true);
  assert.equal(f.header.generation, 42n);
  assert.deepEqual(f.header.metadata, Uint8Array.of(0, 0xff, 0x10));
  reencodes(frame, f, { key: KEY });
  assert.equal(bw.decodeFrame(frame).verified, false);
  assert.throws(() => bw.decodeFrame(frame, { key: new Uint8Array(32) }), bw.BadTag);
});

test("program deltas: the receiver applies them; the package's deltas equal the program's", { skip }, () => {
  for (const coding of ["positional", "known-p", "auto"]) {
    build("old.blwr", ["--m", "100000", "--k", "3", "--coding", "known-p"]);
    run("build", "--keys", file("more.txt"), "-o", file("new.blwr"), "-f", "--m", "100000", "--k", "3", "--coding", "known-p");
    run("diff", file("old.blwr"), file("new.blwr"), "-o", file("delta.blwr"), "-f", "--coding", coding);
    const rx = new bw.Receiver();
    rx.receive(bytes("old.blwr"));
    const r = rx.receive(bytes("delta.blwr"));
    assert.equal(r.kind, "delta");
    assert.equal(r.generation, 1n);
    const target = bw.decodeFrame(bytes("new.blwr")).filter;
    assert.deepEqual(rx.filter.bits, target.bits);
    assert.equal(rx.filter.n, target.n);
    // the same delta from the package
    const old = bw.decodeFrame(bytes("old.blwr")).filter;
    const program = decodeProgramFrame(bytes("delta.blwr"));
    const core = [0, 1, 2, 7].includes(program.header.coding);
    const ours = bw.encodeDelta(old, target, 0n, core ? {
      generation: 1n, coding: program.header.coding, q0: program.header.q0 ?? undefined,
      chunkShift: program.header.chunkShift ?? "never",
    } : { generation: 1n });
    if ([0, 1, 2, 7].includes(program.header.coding)) assert.deepEqual(ours, bytes("delta.blwr"), coding);
    // and the program applies the package's delta
    writeFileSync(file("ours.blwr"), ours);
    run("apply", file("old.blwr"), file("ours.blwr"), "-o", file("applied.blwr"), "-f");
    assert.deepEqual(decodeProgramFrame(bytes("applied.blwr")).filter.bits, target.bits);
  }
});

test("package frames: the same filter as the program's, the same bytes, read back by the program", { skip }, () => {
  const cases = [
    [{ m: 40000, k: 3, seed: 7n }, ["--m", "40000", "--k", "3", "--seed", "7"]],
    [{ m: 50001, k: 2.5, layout: "partitioned" }, ["--m", "50001", "--k", "2.5", "--layout", "partitioned"]],
    [{ m: 50001, k: 3.25, layout: "blocks" }, ["--m", "50001", "--k", "3.25", "--layout", "blocks"]],
    [{ m: 30000, k: 4, sipKey: Uint8Array.from({ length: 16 }, (_, i) => i) }, ["--m", "30000", "--k", "4", "--siphash-key", "000102030405060708090a0b0c0d0e0f"]],
  ];
  for (const [opts, args] of cases) {
    const filter = new bw.BloomFilter(opts);
    for (const k of members) filter.insert(k);
    for (const coding of ["raw", "adaptive", "known-p", "positional"]) {
      const theirs = build("p.blwr", [...args, "--coding", coding, "--chunk-shift", "never"]);
      const h = bw.decodeFrame(theirs).header;
      const ours = bw.encodeFrame(filter, { coding: h.coding, q0: h.q0 ?? undefined, chunkShift: "never" });
      assert.deepEqual(ours, theirs, `${JSON.stringify(args)} ${coding}`);
      writeFileSync(file("ours.blwr"), ours);
      assert.deepEqual(programAnswers("ours.blwr", "others.txt"), others.map((k) => filter.contains(k)));
    }
    // the smallest Core coding, keyed, with metadata
    const auto = bw.encodeFrame(filter, { key: KEY, metadata: Uint8Array.of(1, 2, 3), generation: 5n });
    writeFileSync(file("auto.blwr"), auto);
    run("decode", "--key-file", file("key.bin"), file("auto.blwr"), "-o", file("auto.bits"), "-f");
    assert.deepEqual(bytes("auto.bits"), filter.bits);
  }
});

test("package counting frames are read by the program", { skip }, () => {
  const f = new bw.CountingFilter({ m: 20000, k: 3 }, 4);
  for (const k of members) f.insert(k);
  const theirs = build("cnt.blwr", ["--counting", "4", "--m", "20000", "--k", "3", "--coding", "auto"]);
  assert.deepEqual(bw.decodeFrame(theirs).filter.counters, f.counters);
  for (const coding of ["raw", "known-counters", "adaptive-counters"]) {
    writeFileSync(file("ours.blwr"), bw.encodeFrame(f, { coding }));
    run("decode", file("ours.blwr"), "-o", file("ours.bits"), "-f");
    assert.deepEqual(bytes("ours.bits"), f.packed(), coding);
  }
});
