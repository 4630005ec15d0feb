/**
 * Coding 11's loop in WebAssembly (wasm/escape.wat, scalar: no SIMD needed), with a 64-bit
 * bit buffer refilled once a group of four bytes. Used when WebAssembly is available; the
 * JavaScript loop (decoders.ts) is the fallback (BLOOMWIRE_NO_WASM), and both give the
 * same bytes and the same errors.
 */
import { ESCAPE_WASM } from "./escape-wasm-bytes.js";
import type { TansTable } from "./models.js";
import { base64Bytes, envFlag, KernelMemory } from "./wasm-memory.js";

const T1 = 0, T2 = 16384, STATES = 24576, IN = 24640, SLACK = 32;
const SHARED_LIMIT = 16 << 20;

type EscapeFn = (at: number, L: number, T: number, out: number, u0: number, u1: number, u2: number, u3: number, y: number) => number;

interface Kernel {
  mem: KernelMemory;
  escape: EscapeFn;
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
    return { mem, escape: inst.exports.escape as EscapeFn };
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
 * Decodes the T coded bytes of a coding-11 payload `p` (states u0 .. u3 and y read by the
 * caller, in `u`) into out[0 .. T), with the frame's tables, which `tables` writes straight
 * into the kernel's memory (4096 and 2048 entries, every one written: the previous frame's
 * are there). Returns the bits read (at most 8 L, else -1) and the count of ones of
 * out[0 .. counted), leaving the final states in `u`; or null when the kernel cannot run
 * (then `tables` has not been called).
 */
export function wasmEscape(p: Uint8Array, T: number, tables: (t1: TansTable, t2: TansTable) => void, u: Int32Array,
  out: Uint8Array): { read: number; ones: number; counted: number } | null {
  const L = p.length;
  const outAt = (IN + L + SLACK + 7) & ~7;
  const need = outAt + T + 8;
  const k = need <= SHARED_LIMIT ? (shared ??= instantiate()) : instantiate();
  if (!k || !k.mem.reserve(need)) return null;
  const b = k.mem.bytes();
  // The tables are the frame's, built for each frame where the kernel reads them.
  tables(new Int32Array(k.mem.memory.buffer, T1, 4096), new Int32Array(k.mem.memory.buffer, T2, 2048));
  b.set(p, IN);
  b.fill(0, IN + L, IN + L + SLACK);
  const read = k.escape(IN, L, T, outAt, u[0], u[1], u[2], u[3], u[4]);
  if (read < 0) return { read, ones: 0, counted: 0 };
  const st = new Int32Array(k.mem.memory.buffer, STATES, 6);
  u.set(st.subarray(0, 5));
  out.set(b.subarray(outAt, outAt + T));
  return { read, ones: st[5], counted: T & ~3 };
}
