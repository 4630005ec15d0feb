/**
 * Errors of the bloomwire format (spec sections 2, 4 and 5.2). Every error a decoder,
 * a filter or a receiver reports is a subclass of {@link BloomwireError}; its class name
 * is the spec's name of the error, and `field` (where the spec names one) is the field
 * name exactly as in the first column of the spec's table.
 */
export class BloomwireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The first four bytes are not "BLWR". */
export class BadMagic extends BloomwireError {}

/** The version byte is not 1. */
export class UnsupportedVersion extends BloomwireError {
  constructor(readonly version: number) {
    super(`unsupported version ${version}`);
  }
}

/** A header field outside its valid values. */
export class InvalidField extends BloomwireError {
  constructor(readonly field: string, detail = "") {
    super(`invalid ${field}${detail ? `: ${detail}` : ""}`);
  }
}

/** A malformed varint in the header (spec 1). */
export class BadVarint extends BloomwireError {}

/** A header field above a receiver's limit. */
export class LimitExceeded extends BloomwireError {
  constructor(readonly field: string, readonly value: number | bigint, readonly limit: number) {
    super(`${field} ${value} above the limit ${limit}`);
  }
}

/** The input ends before the frame does; `needed` more bytes (at least) are missing. */
export class Incomplete extends BloomwireError {
  constructor(readonly needed: number) {
    super(`incomplete frame: ${needed} more byte(s) needed`);
  }
}

/** The CRC-32C of the frame is not its checksum field. */
export class ChecksumMismatch extends BloomwireError {}

/** A key was given, and the frame carries no tag (flags bit 2). */
export class MissingTag extends BloomwireError {}

/** A key was given, and the frame's tag is not the one the key gives. */
export class BadTag extends BloomwireError {}

/** The payload fails a check of its coding (spec 4). */
export class CorruptPayload extends BloomwireError {}

/** Bytes follow a frame that was meant to be the whole input. */
export class TrailingBytes extends BloomwireError {
  constructor(readonly count: number) {
    super(`${count} byte(s) after the frame`);
  }
}

/** A coding the registry defines that this decoder was told not to accept (a Core-only decoder). */
export class UnsupportedCoding extends BloomwireError {
  constructor(readonly coding: number) {
    super(`coding ${coding} is not in the decoder's profile`);
  }
}

/** A query on an opaque filter (base hash 0, spec 3.1): its bits are another library's. */
export class OpaqueHashFamily extends BloomwireError {}

/** Spec 5.2 step 1: a frame not newer than the generation held. */
export class StaleGeneration extends BloomwireError {}

/** Spec 5.2 step 3: a delta whose base is not the generation held (or nothing is held). */
export class GenerationGap extends BloomwireError {}

/** Spec 5.2 step 3: a delta of another shape or hash family than the filter held. */
export class Incompatible extends BloomwireError {}

/** Spec 5.2 step 3: the digest of the filter held is not the delta's base digest. */
export class BaseMismatch extends BloomwireError {}

/** Spec 5.2 step 3: the digest after applying the delta is not its result digest. */
export class ResultMismatch extends BloomwireError {}
