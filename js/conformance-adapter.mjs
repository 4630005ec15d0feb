#!/usr/bin/env node
// The conformance kit's adapter (spec/conformance/README.md) for this package: JSON lines
// on stdin and stdout; hello, decode, encode, open and receive. Full profile by default,
// `--profile core` for a decoder restricted to the Core profile.
import { createInterface } from "node:readline";
import * as bw from "./dist/index.js";

const args = process.argv.slice(2);
const profile = args.includes("--profile") ? args[args.indexOf("--profile") + 1] : "full";
const NAMES = ["raw", "adaptive", "known-p", "known-p-symbols", "known-counters", "adaptive-counters",
  "known-p-interleaved", "positional", "dense", "small", "wide", "escape"];
const WRITES = ["raw", "adaptive", "known-p", "positional", "known-counters", "adaptive-counters"];

const fromHex = (s) => Uint8Array.from(Buffer.from(s, "hex"));
const toHex = (b) => Buffer.from(b).toString("hex");
const crcHex = (x) => (x >>> 0).toString(16).padStart(8, "0");

function limitsOf(l) {
  const o = { profile };
  if (l) {
    o.maxM = l.max_m;
    o.maxK = l.max_k;
    o.maxPayload = l.max_payload;
    o.maxMetadata = l.max_metadata;
    if (l.max_filter_bytes !== null && l.max_filter_bytes !== undefined) o.maxFilterBytes = l.max_filter_bytes;
  }
  return o;
}

function failure(e) {
  if (e instanceof bw.BloomwireError) {
    const a = { ok: false, error: e.constructor.name, detail: e.message };
    if ("field" in e) a.field = e.field;
    if ("needed" in e) a.needed = e.needed;
    return a;
  }
  return { ok: false, error: "InternalError", detail: String(e && e.stack ? e.stack : e) };
}

function headerJson(h, verified) {
  return {
    kind: h.kind, filter_type: h.filterType, base_hash: h.baseHash, index_scheme: h.indexScheme,
    coding: h.coding, flags: h.flags,
    seed: h.baseHash === 1 ? String(h.seed) : null,
    k0: h.baseHash === 2 ? String(h.k0) : null,
    k1: h.baseHash === 2 ? String(h.k1) : null,
    m: h.m,
    counted_type: h.filterType === 3 ? h.layout : null,
    counter_width: h.filterType === 3 ? h.counterWidth : null,
    k_raw: h.blockKRaw ? h.blockKRaw.slice() : [h.kRaw],
    n: String(h.n), generation: String(h.generation),
    base_generation: h.kind === 1 ? String(h.baseGeneration) : null,
    base_digest: h.kind === 1 ? crcHex(h.baseDigest) : null,
    result_digest: h.kind === 1 ? crcHex(h.resultDigest) : null,
    metadata: h.metadata ? toHex(h.metadata) : null,
    q0: h.q0, counter_table: h.counterTable, chunk_shift: h.chunkShift,
    header_len: h.headerLength, payload_len: h.payloadLength,
    tag: !h.tagged ? "absent" : verified ? "verified" : "unverified",
  };
}

function digestOf(filter) {
  return crcHex(filter instanceof bw.CountingFilter ? bw.crc32c(filter.packed()) : bw.crc32c(filter.bits));
}

function filterOf(spec, bits, counters) {
  const layout = spec.filter_type === 3 ? spec.counted_type : spec.filter_type;
  const shape = {
    m: spec.m, layout,
    kRaw: spec.k_raw.reduce((a, b) => a + b, 0),
    blockKRaw: layout === 2 ? spec.k_raw.slice() : null,
    baseHash: spec.base_hash, indexScheme: spec.index_scheme,
    seed: BigInt(spec.seed ?? 0), k0: BigInt(spec.k0 ?? 0), k1: BigInt(spec.k1 ?? 0),
  };
  const n = BigInt(spec.n);
  if (spec.filter_type === 3) return new bw.CountingFilter(shape, spec.counter_width, fromHex(counters), n);
  return new bw.BloomFilter(shape, fromHex(bits), n);
}

const sessions = new Map();

function held(rx) {
  return rx.filter ? { generation: String(rx.generation), digest: crcHex(rx.digest()) } : null;
}

function answer(req) {
  switch (req.op) {
    case "hello":
      return { ok: true, name: "bloomwire (npm) 0.1.0", profile, ops: ["decode", "receive", "encode"], codings: WRITES };
    case "decode": {
      try {
        const f = bw.decodeFrame(fromHex(req.frame), { ...limitsOf(req.limits), key: req.key ? fromHex(req.key) : undefined });
        return { ok: true, header: headerJson(f.header, f.verified), digest: digestOf(f.filter) };
      } catch (e) {
        return failure(e);
      }
    }
    case "encode": {
      if (req.coding !== null && req.coding !== undefined && !WRITES.includes(req.coding)) {
        return { ok: false, error: NAMES.includes(req.coding) ? "UnsupportedCoding" : "BadRequest", detail: `coding ${req.coding}` };
      }
      try {
        const filter = filterOf(req.filter, req.bits, req.counters);
        const opts = {
          coding: req.coding ?? "auto",
          q0: req.q0 ?? undefined,
          counterTable: req.counter_table ?? undefined,
          chunkShift: req.chunk_shift === null || req.chunk_shift === undefined ? "never" : req.chunk_shift,
          generation: BigInt(req.generation ?? "0"),
          restart: !!req.restart,
          metadata: req.metadata ? fromHex(req.metadata) : undefined,
          key: req.key ? fromHex(req.key) : undefined,
        };
        let frame;
        if (req.base) {
          const base = filterOf({ ...req.filter, n: "0" }, req.base.bits, req.base.counters);
          frame = bw.encodeDelta(base, filter, BigInt(req.base.generation), opts);
        } else frame = bw.encodeFrame(filter, opts);
        return { ok: true, frame: toHex(frame) };
      } catch (e) {
        if (e instanceof RangeError) return { ok: false, error: "EncoderDeclined", detail: e.message };
        return failure(e);
      }
    }
    case "open":
      sessions.set(req.session, new bw.Receiver({ ...limitsOf(req.limits), key: req.key ? fromHex(req.key) : undefined }));
      return { ok: true };
    case "receive": {
      const rx = sessions.get(req.session);
      if (!rx) return { ok: false, error: "BadRequest", detail: "no such session" };
      try {
        const r = rx.receive(fromHex(req.frame));
        return { ok: true, update: r.kind, held: held(rx) };
      } catch (e) {
        return { ...failure(e), held: held(rx) };
      }
    }
    default:
      return { ok: false, error: "UnsupportedOp" };
  }
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let out;
  try {
    out = answer(JSON.parse(line));
  } catch (e) {
    out = { ok: false, error: "BadRequest", detail: String(e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
