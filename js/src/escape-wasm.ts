/**
 * Coding 11's loop in WebAssembly (wasm/escape.wat, scalar: no SIMD needed), with a 64-bit
 * bit buffer refilled once a group of four bytes. Used when WebAssembly is available; the
 * JavaScript loop (decoders.ts) is the fallback (BLOOMWIRE_NO_WASM), and both give the
 * same bytes and the same errors.
 */
import { ESCAPE_WASM } from "./escape-wasm-bytes.js";
import { escapeRuns, PRIMARY_BYTES, SECONDARY_BYTES, type TansTable } from "./models.js";
import { base64Bytes, envFlag, KernelMemory } from "./wasm-memory.js";

const T1 = 0, T2 = 16384, STATES = 24576, RUNS = 24640, BYTES1 = 24896, BYTES2 = 25272, MASKS = 25928, IN = 26048, SLACK = 32;
const SHARED_LIMIT = 16 << 20;

type EscapeFn = (at: number, L: number, T: number, out: number, u0: number, u1: number, u2: number, u3: number, y: number) => number;
type SpreadFn = (tab: number, precision: number, bytes: number, runs: number, R: number) => void;

interface Kernel {
  mem: KernelMemory;
  escape: EscapeFn;
  spread: SpreadFn;
}

let compiled: WebAssembly.Module | null | undefined;
let shared: Kernel | null = null;

function instantiate(): Kernel | null {
  if (compiled === undefined) {
    try {
      compiled = typeof WebAssembly === "object" ? new WebAssembly.Module(base64Bytes(ESCAPE_WASM)) : null;
    } catch {
      compiled = null;
    }
  }
  if (!compiled) return null;
  try {
    const mem = new KernelMemory(1);
    const inst = new WebAssembly.Instance(compiled, { env: { memory: mem.memory } });
    // the alphabets' bytes, for the tables' build, and the masks of the steps' reads
    // (constants: written once an instance)
    new Int32Array(mem.memory.buffer, BYTES1, 94).set(PRIMARY_BYTES);
    new Int32Array(mem.memory.buffer, BYTES2, 163).set(SECONDARY_BYTES);
    new Int32Array(mem.memory.buffer, MASKS, 16).set(Int32Array.from({ length: 16 }, (_, n) => (1 << n) - 1));
    return { mem, escape: inst.exports.escape as EscapeFn, spread: inst.exports.spread as SpreadFn };
  } catch {
    return null;
  }
}

/** Whether the WebAssembly loop can run here. */
export function escapeWasmAvailable(): boolean {
  if (envFlag("BLOOMWIRE_NO_WASM")) return false;
  shared ??= instantiate();
  return shared !== null;
}

/**
 * Builds the two tables of coding 11 of frequencies f1 (94, summing to 4096) and f2 (163,
 * summing to 2048), as models.ts's escapeModel does, in the kernel's memory where its loop
 * reads them (the runs of equal frequency found here, the merge walk in the kernel).
 */
function buildTables(k: Kernel, f1: Int32Array, f2: Int32Array): void {
  const runs = new Int32Array(k.mem.memory.buffer, RUNS, 64);
  k.spread(T1, 12, BYTES1, RUNS, escapeRuns(f1, runs));
  k.spread(T2, 11, BYTES2, RUNS, escapeRuns(f2, runs));
}

/** The kernel's tables for frequencies f1 and f2, copied out (for tests); null without the kernel. */
export function wasmEscapeTables(f1: Int32Array, f2: Int32Array): { t1: TansTable; t2: TansTable } | null {
  if (!escapeWasmAvailable() || !shared) return null;
  buildTables(shared, f1, f2);
  return { t1: new Int32Array(shared.mem.memory.buffer, T1, 4096).slice(), t2: new Int32Array(shared.mem.memory.buffer, T2, 2048).slice() };
}

/**
 * Decodes the T coded bytes of a coding-11 payload `p` (states u0 .. u3 and y read by the
 * caller, in `u`) into out[0 .. T), with the tables of frequencies f1 and f2 (the frame's
 * q0's, escapeFrequencies), built for this frame in the kernel's memory. Returns the bits
 * read (at most 8 L, else -1) and the count of ones of out[0 .. counted), leaving the
 * final states in `u`; or null when the kernel cannot run.
 */
export function wasmEscape(p: Uint8Array, T: number, f1: Int32Array, f2: Int32Array, u: Int32Array,
  out: Uint8Array): { read: number; ones: number; counted: number } | null {
  const L = p.length;
  const outAt = (IN + L + SLACK + 7) & ~7;
  const need = outAt + T + 8;
  const k = need <= SHARED_LIMIT ? (shared ??= instantiate()) : instantiate();
  if (!k || !k.mem.reserve(need)) return null;
  buildTables(k, f1, f2);
  const b = k.mem.bytes();
  b.set(p, IN);
  b.fill(0, IN + L, IN + L + SLACK);
  const read = k.escape(IN, L, T, outAt, u[0], u[1], u[2], u[3], u[4]);
  if (read < 0) return { read, ones: 0, counted: 0 };
  const st = new Int32Array(k.mem.memory.buffer, STATES, 6);
  u.set(st.subarray(0, 5));
  out.set(b.subarray(outAt, outAt + T));
  return { read, ones: st[5], counted: T & ~7 };
}
