// Every vector of spec/vectors: accept (bits, counters, params, keys, deltas), reject
// (the error class and field the manifest names), hash indexes. Manifests are read at
// test time: no vector name or digest is written here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import * as bw from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const VECTORS = process.env.BLOOMWIRE_VECTORS ?? join(here, "..", "..", "spec", "vectors");
const hex = (s) => Uint8Array.from(Buffer.from(s, "hex"));
const sha = (b) => createHash("sha256").update(b).digest("hex");
const read = (p) => new Uint8Array(readFileSync(p));

const FILTER_TYPES = ["standard", "partitioned", "blocks", "counting"];
const CODINGS = ["raw", "adaptive", "known-p", "known-p-symbols", "known-counters", "adaptive-counters",
  "known-p-interleaved", "positional", "dense", "small", "wide", "escape"];

function popcount(bytes) {
  let c = 0;
  for (const b of bytes) for (let v = b; v; v &= v - 1) c++;
  return c;
}

function checkParams(h, params) {
  const bad = [];
  const eq = (name, got, want) => { if (got !== want) bad.push(`${name}: ${got} vs ${want}`); };
  for (const [key, want] of Object.entries(params)) {
    switch (key) {
      case "m": eq(key, h.m, want); break;
      case "n": eq(key, h.n, BigInt(want)); break;
      case "generation": eq(key, h.generation, BigInt(want)); break;
      case "base_generation": eq(key, h.baseGeneration, BigInt(want)); break;
      case "seed": eq(key, h.seed, BigInt(want)); break;
      case "k0": eq(key, h.k0, BigInt(want)); break;
      case "k1": eq(key, h.k1, BigInt(want)); break;
      case "q0": eq(key, h.q0, want); break;
      case "payload_len": eq(key, h.payloadLength, want); break;
      case "header_len": eq(key, h.headerLength, want); break;
      case "chunk_shift": eq(key, h.chunkShift, want); break;
      case "filter_type": eq(key, FILTER_TYPES[h.filterType], want); break;
      case "counted_type": eq(key, FILTER_TYPES[h.layout], want); break;
      case "counter_width": eq(key, h.counterWidth, want); break;
      case "coding": eq(key, CODINGS[h.coding], want); break;
      case "kind": eq(key, h.kind === 0 ? "full" : "delta", want); break;
      case "index_scheme": eq(key, h.indexScheme === 0 ? "double" : "enhanced", want); break;
      case "base_hash": eq(key, ["opaque", "xxh64", "siphash24"][h.baseHash], want); break;
      case "k_raw": if (h.layout !== 2) eq(key, h.kRaw, want); break;
      case "block_k_raw": eq(key, String(h.blockKRaw), String(want)); break;
      case "base_digest": eq(key, h.baseDigest, want); break;
      case "result_digest": eq(key, h.resultDigest, want); break;
      case "restart": eq(key, h.restart, want); break;
      case "tagged": eq(key, h.tagged, want); break;
      case "metadata_hex": eq(key, Buffer.from(h.metadata ?? []).toString("hex"), want); break;
      case "counter_table": eq(key, String(h.counterTable), String(want ?? null)); break;
      default: bad.push(`unknown param ${key}`);
    }
  }
  return bad;
}

const acceptDir = join(VECTORS, "accept");
const acceptNames = readdirSync(acceptDir).filter((f) => f.endsWith(".json")).sort();

test("the vectors are there", () => {
  assert.ok(acceptNames.length > 0);
});

for (const name of acceptNames) {
  test(`accept/${name}`, () => {
    const man = JSON.parse(readFileSync(join(acceptDir, name), "utf8"));
    const data = read(join(acceptDir, man.frame));
    const key = man.key_hex ? hex(man.key_hex) : undefined;
    const frame = bw.decodeFrame(data, { key });
    assert.equal(frame.verified, key !== undefined);
    if (key) {
      const plain = bw.decodeFrame(data);
      assert.equal(plain.verified, false);
      assert.deepEqual(plain.filter.bits ?? plain.filter.counters, frame.filter.bits ?? frame.filter.counters);
    }
    assert.deepEqual(checkParams(frame.header, man.params ?? {}), []);
    const f = frame.filter;
    if (f instanceof bw.CountingFilter) {
      assert.equal(sha(f.packed()), man.counters_sha256);
      const hist = new Array(1 << f.width).fill(0);
      for (const c of f.counters) hist[c]++;
      assert.deepEqual(hist, man.counter_histogram);
    } else {
      assert.equal(sha(f.bits), man.bits_sha256);
      if ("ones" in man) assert.equal(f.countOnes(), man.ones);
    }
    let held = f;
    if (man.base_frame) {
      const rx = new bw.Receiver({ key });
      rx.receive(read(join(acceptDir, man.base_frame)));
      const r = rx.receive(data);
      held = rx.filter;
      assert.equal(r.generation, frame.header.generation);
      if (held instanceof bw.CountingFilter) assert.equal(sha(held.packed()), man.result_counters_sha256 ?? man.counters_sha256);
      else assert.equal(sha(held.bits), man.result_bits_sha256 ?? man.bits_sha256);
    }
    if (man.query_refused) assert.throws(() => held.contains(new Uint8Array([1])), bw.OpaqueHashFamily);
    for (const group of ["member_keys", "other_keys"]) {
      for (const e of man[group] ?? []) {
        assert.equal(held.contains(hex(e.key_hex)), e.expected, `${group} ${e.key_hex}`);
      }
    }
  });
}

const rejectDir = join(VECTORS, "reject");
const rejectManifest = JSON.parse(readFileSync(join(rejectDir, "manifest.json"), "utf8"));

test("every reject file has a manifest entry and back", () => {
  const files = readdirSync(rejectDir).filter((f) => f.endsWith(".bin")).sort();
  assert.deepEqual(files, Object.keys(rejectManifest).sort());
});

for (const [name, want] of Object.entries(rejectManifest)) {
  test(`reject/${name}`, () => {
    const data = read(join(rejectDir, name));
    const key = want.key_hex ? hex(want.key_hex) : undefined;
    let err = null;
    try {
      if (want.apply_to) {
        const rx = new bw.Receiver({ key });
        rx.receive(read(join(VECTORS, want.apply_to)));
        const before = rx.filter.bits ? rx.filter.bits.slice() : rx.filter.counters.slice();
        const g = rx.generation;
        try {
          rx.receive(data);
        } finally {
          // the receiver's filter and generation are unchanged on error
          assert.deepEqual(rx.filter.bits ?? rx.filter.counters, before);
          assert.equal(rx.generation, g);
        }
      } else {
        bw.decodeFrame(data, { key });
      }
    } catch (e) {
      err = e;
    }
    assert.ok(err, "accepted");

    assert.ok(err instanceof bw.BloomwireError, `not a BloomwireError: ${err}`);
    assert.equal(err.constructor.name, want.error, `${err.constructor.name}: ${err.message}`);
    assert.ok(err instanceof bw[want.error]);
    if ("field" in want) assert.equal(err.field, want.field, err.message);
    if ("needed" in want) assert.equal(err.needed, want.needed);
  });
}

test("hash indexes", () => {
  const doc = JSON.parse(readFileSync(join(VECTORS, "hash_indexes.json"), "utf8"));
  assert.ok(doc.cases.length > 0);
  for (const c of doc.cases) {
    const key = hex(c.key_hex);
    const out = new Uint32Array(2);
    const shape = {
      m: Number(c.m), layout: 0, kRaw: c.k * 65536, blockKRaw: null,
      baseHash: c.base_hash === "xxh64" ? 1 : 2, indexScheme: c.index_scheme === "double" ? 0 : 1,
      seed: BigInt(c.seed ?? 0), k0: BigInt(c.k0 ?? 0), k1: BigInt(c.k1 ?? 0),
    };
    const [sh, sl] = [Number(shape.seed >> 32n), Number(shape.seed & 0xffffffffn)];
    if (shape.baseHash === 1) bw.xxh64(key, sh, sl, out);
    else {
      const s = (x) => [Number(x >> 32n), Number(x & 0xffffffffn)];
      bw.siphash24(key, ...s(shape.k0), ...s(shape.k1), out);
    }
    assert.equal((BigInt(out[0]) << 32n) | BigInt(out[1]), BigInt(c.hash), `hash of ${c.key_hex}`);
    const ix = new bw.Indexer(shape);
    const count = ix.indexes(key);
    assert.deepEqual(Array.from(ix.out.subarray(0, count)), c.indexes.map(Number), `indexes of ${c.key_hex} m=${c.m}`);
  }
});
