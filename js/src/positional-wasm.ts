/**
 * Coding 7's gap loop in WebAssembly (wasm/positional.wat), where 64-bit states are native
 * integers: about twice the speed of the JavaScript loop on the benchmark's frames. Used
 * when WebAssembly is available; the JavaScript loop (decoders.ts) is the fallback and the
 * reference, and both give the same positions and the same errors.
 */
import { POSITIONAL_WASM } from "./positional-wasm-bytes.js";

interface Kernel {
  memory: WebAssembly.Memory;
  gaps: (...args: (number | bigint)[]) => number;
}

const LUT = 0, F = 65536, CUM = 66560, STATES = 67584, WORDS = 67600;
const PAGE = 65536;
const SHARED_LIMIT = 16 << 20; // larger calls get an instance of their own, dropped after

let compiled: WebAssembly.Module | null | undefined;
let shared: Kernel | null = null;
let sharedModel: Int32Array | null = null;

function instance(): Kernel | null {
  if (compiled === undefined) {
    try {
      const bytes = Uint8Array.from(atob(POSITIONAL_WASM), (ch) => ch.charCodeAt(0));
      compiled = typeof WebAssembly === "object" ? new WebAssembly.Module(bytes) : null;
    } catch {
      compiled = null;
    }
  }
  if (!compiled) return null;
  const inst = new WebAssembly.Instance(compiled, {});
  return { memory: inst.exports.memory as WebAssembly.Memory, gaps: inst.exports.gaps as Kernel["gaps"] };
}

/** Whether the WebAssembly loop can run here (set BLOOMWIRE_NO_WASM to compare). */
export function wasmAvailable(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  if (env?.BLOOMWIRE_NO_WASM) return false;
  if (compiled === undefined) shared = instance();
  return !!compiled;
}

/**
 * Runs the gap loop. `payload` holds the words from byte `cl`; states x0, x1 as bigints.
 * Writes the bits into `out` (zero on entry) or the positions into `positions`. Returns
 * the words read (or a negative error code) and the final states in `finalStates`.
 */
export function wasmGaps(
  payload: Uint8Array, cl: number, W: number, m: number, c: number, lanes: number, x0: bigint, x1: bigint,
  r: number, RJ: number, K: number, Q: number, f: Int32Array, cum: Int32Array, lut: Uint8Array,
  out: Uint8Array | null, positions: Float64Array | null, finalStates: BigUint64Array, sparse = false,
): number | null {
  // sparse: the kernel writes the positions (8 bytes a one) and their bits are set in `out`
  // from its memory, rather than the whole array copied out of it
  const asPositions = !!positions || sparse;
  const outBytes = asPositions ? 8 * c : out!.length;
  const need = WORDS + 4 * W + 8 + outBytes;
  if (need > 2 ** 31) return null;
  let k = need <= SHARED_LIMIT ? (shared ??= instance()) : instance();
  if (!k) return null;
  const grow = Math.ceil(need / PAGE) - k.memory.buffer.byteLength / PAGE;
  if (grow > 0) {
    try {
      k.memory.grow(grow);
    } catch {
      return null; // no memory for the kernel: the JavaScript loop decodes in place
    }
  }
  let mem = new Uint8Array(k.memory.buffer);
  // the model (kept while the same model object decodes again: the decoder builds one a
  // frame, so each frame's is copied in)
  if (k !== shared || sharedModel !== f) {
    // the symbol at the first slot of each 16 (the kernel steps on from there), and
    // cum(Q + 1) = 65536 after the cum(v)
    for (let b = 0; b < 4096; b++) mem[LUT + b] = lut[16 * b];
    new Int32Array(k.memory.buffer, CUM + 4 * cum.length, 1)[0] = 65536;
    new Int32Array(k.memory.buffer, F, f.length).set(f);
    new Int32Array(k.memory.buffer, CUM, cum.length).set(cum);
    if (k === shared) sharedModel = f;
  }
  mem.set(payload.subarray(cl, cl + 4 * W), WORDS);
  const outAt = (WORDS + 4 * W + 7) & ~7;
  if (!asPositions) mem.fill(0, outAt, outAt + outBytes);
  const pos = k.gaps(WORDS, W, 2 * lanes, BigInt(m), c, lanes, x0, x1, r, RJ, K, Q, outAt, asPositions ? 1 : 0);
  mem = new Uint8Array(k.memory.buffer);
  if (pos >= 0) {
    const st = new BigUint64Array(k.memory.buffer, STATES, 2);
    finalStates[0] = st[0];
    finalStates[1] = st[1];
    if (positions) positions.set(new Float64Array(k.memory.buffer, outAt, c));
    else if (sparse) {
      const at = new Float64Array(k.memory.buffer, outAt, c), o = out!;
      for (let i = 0; i < c; i++) {
        const b = at[i]; // below m <= 2^31 (the caller's condition for sparse)
        o[b >>> 3] |= 1 << (b & 7);
      }
    } else out!.set(mem.subarray(outAt, outAt + outBytes));
  }
  return pos;
}
