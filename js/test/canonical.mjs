// Shared by the program tests and the benchmark (not a test file: no ".test." in its name).
import * as bw from "../dist/index.js";

/**
 * A program from before format 1.0's rule that q0 is the least of its model (codings 9, 10
 * and 11) writes other q0s of the same model: the package refuses such a frame with
 * InvalidField(q0), and the same frame with the least q0 (the same payload, its checksum
 * recomputed) is the canonical frame, which it decodes. Returns the canonical bytes.
 */
export function canonicalFrame(frame) {
  try {
    bw.parseHeader(frame);
    return frame;
  } catch (e) {
    if (!(e instanceof bw.InvalidField && e.field === "q0" && [9, 10, 11].includes(frame[9]))) return frame;
    const q0 = Number(/q0: (\d+)/.exec(e.message)[1]);
    const least = bw.leastQ0(frame[9], q0);
    for (let i = 11; i + 2 <= frame.length; i++) {
      if ((frame[i] | (frame[i + 1] << 8)) !== q0) continue;
      const copy = frame.slice();
      copy[i] = least & 0xff;
      copy[i + 1] = least >> 8;
      let h;
      try {
        h = bw.parseHeader(copy);
      } catch {
        continue;
      }
      const at = h.headerLength + h.payloadLength;
      new DataView(copy.buffer).setUint32(at, bw.crc32c(copy, 0, at), true);
      return copy;
    }
    return frame;
  }
}

