/**
 * Coding 7's gap loop in WebAssembly (wasm/positional.wat), where 64-bit states are native
 * integers: about twice the speed of the JavaScript loop on the benchmark's frames. Used
 * when WebAssembly is available; the JavaScript loop (decoders.ts) is the fallback and the
 * reference, and both give the same positions and the same errors.
 */
import { POSITIONAL_WASM } from "./positional-wasm-bytes.js";

type GapsFn = (words: number, W: number, pos: number, mlo: number, mhi: number, c: number, lanes: number,
  x0lo: number, x0hi: number, x1lo: number, x1hi: number, r: number, RJ: number, K: number, Q: number,
  out: number, mode: number) => number;

interface Kernel {
  memory: WebAssembly.Memory;
  gaps: GapsFn;
}

const LUT = 0, BUCKETS = 4096, F = 65536, CUM = 66560, PAIRS = 67576, STATES = 67584, WORDS = 67600;
const PAGE = 65536;
const SHARED_LIMIT = 16 << 20; // larger calls get an instance of their own, dropped after

let compiled: WebAssembly.Module | null | undefined;
let shared: Kernel | null = null;

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
  return { memory: inst.exports.memory as WebAssembly.Memory, gaps: inst.exports.gaps as GapsFn };
}

/** Whether the WebAssembly loop can run here (set BLOOMWIRE_NO_WASM to compare). */
export function wasmAvailable(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  if (env?.BLOOMWIRE_NO_WASM) return false;
  if (compiled === undefined) shared = instance();
  return !!compiled;
}

/**
 * Runs the gap loop. `payload` holds the words from byte `cl`; the lanes' initial states
 * x0, x1 as their low and high 32 bits in `x` (x0lo, x0hi, x1lo, x1hi), the model as
 * gapFrequencies gives it. Writes the bits into `out` (zero on entry) or the positions into
 * `positions`. Returns the words read (or a negative error code) and leaves the lanes'
 * final states in `x` (as halves, as on entry); null when the kernel cannot run.
 */
export function wasmGaps(
  payload: Uint8Array, cl: number, W: number, m: number, c: number, lanes: number, x: Int32Array,
  r: number, RJ: number, K: number, Q: number, f: Int32Array, cum: Int32Array,
  out: Uint8Array | null, positions: Float64Array | null, sparse = false,
): number | null {
  // sparse: the kernel writes each byte with ones (index and byte, at most c pairs of
  // int32, m <= 2^31) and they are stored into `out` from its memory, rather than the
  // whole array copied out of it (stores alone: no byte of `out`, cold, read first)
  const mode = positions ? 1 : sparse ? 2 : 0;
  const outBytes = mode === 1 || mode === 2 ? 8 * c : out!.length;
  const need = WORDS + 4 * W + 8 + outBytes;
  if (need > 2 ** 31) return null;
  const k = need <= SHARED_LIMIT ? (shared ??= instance()) : instance();
  if (!k) return null;
  const grow = Math.ceil(need / PAGE) - k.memory.buffer.byteLength / PAGE;
  if (grow > 0) {
    try {
      k.memory.grow(grow);
    } catch {
      return null; // no memory for the kernel: the JavaScript loop decodes in place
    }
  }
  const buffer = k.memory.buffer;
  const mem = new Uint8Array(buffer);
  // The frame's model, written where the kernel reads it: f(v), cum(v) then cum(Q + 1) =
  // 65536, and for each 16 slots the symbol of the first (bucket b holds the v with
  // cum(v) <= 16 b < cum(v + 1); the kernel steps on from there). Every bucket is written:
  // cum(0) = 0 and cum(Q + 1) = 65536 = 16 4096.
  new Int32Array(buffer, F, Q + 1).set(f);
  const cumAt = new Int32Array(buffer, CUM, Q + 2);
  cumAt.set(cum);
  cumAt[Q + 1] = 65536;
  // and beside each bucket's symbol its cum(v) | f(v) << 16 (f(v) <= 30720, cum(v) < 65536)
  const ent = new Int32Array(buffer, BUCKETS, 4096);
  for (let v = 0; v <= Q; v++) {
    const from = (cumAt[v] + 15) >>> 4, to = (cumAt[v + 1] + 15) >>> 4;
    mem.fill(v, LUT + from, LUT + to);
    ent.fill(cumAt[v] | (f[v] << 16), from, to);
  }
  mem.set(payload.subarray(cl, cl + 4 * W), WORDS);
  const outAt = (WORDS + 4 * W + 7) & ~7;
  if (mode === 0) mem.fill(0, outAt, outAt + outBytes);
  const mhi = Math.floor(m / 4294967296); // m below 2^53: exact
  const pos = k.gaps(WORDS, W, 2 * lanes, m >>> 0, mhi, c, lanes, x[0], x[1], x[2], x[3], r, RJ, K, Q, outAt, mode);
  if (pos >= 0) {
    x.set(new Int32Array(buffer, STATES, 4));
    if (mode === 1) positions!.set(new Float64Array(buffer, outAt, c));
    else if (mode === 2) {
      const pairs = new Int32Array(buffer, PAIRS, 1)[0]; // at most c
      const at = new Int32Array(buffer, outAt, 2 * pairs), o = out!;
      for (let i = 0; i < 2 * pairs; i += 2) o[at[i]] = at[i + 1]; // each index below m / 8
    } else out!.set(mem.subarray(outAt, outAt + outBytes));
  }
  return pos;
}
