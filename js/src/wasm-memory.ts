/** What the WebAssembly kernels share: their memory's growth, the modules' bytes, switches. */

const PAGE = 65536;

/** A kernel's memory, grown (by at least half its size) when a call needs more. */
export class KernelMemory {
  readonly memory: WebAssembly.Memory;

  constructor(pages: number) {
    this.memory = new WebAssembly.Memory({ initial: pages });
  }

  /** Makes `bytes` bytes addressable; false when they cannot be had (then the caller falls back). */
  reserve(bytes: number): boolean {
    const have = this.memory.buffer.byteLength;
    if (bytes <= have) return true;
    if (bytes > 2 ** 31) return false;
    const want = Math.max(Math.ceil(bytes / PAGE), Math.min(32768, Math.ceil((1.5 * have) / PAGE)));
    try {
      this.memory.grow(want - have / PAGE);
      return true;
    } catch {
      return false;
    }
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.memory.buffer);
  }
}

/** A module's bytes from the base64 text the build writes. */
export function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

/** Whether an environment variable is set (in Node; never in a page). */
export function envFlag(name: string): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return !!env?.[name];
}
