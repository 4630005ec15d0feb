// Writes wasm/wide.wat: coding 10's coded rounds (spec 4.12 step, 4.14 halves) with
// WebAssembly SIMD, four lanes a vector. Run from js/: node wasm/gen-wide.mjs
// (then node wasm/build.mjs). The text is generated because the 32 lanes of each half
// are unrolled into eight vectors of locals.
import { writeFileSync } from "node:fs";

// memory layout (bytes); the module's memory is the caller's (src/wide-wasm.ts)
const TAB = 0; // 8192 x u32: i | v << 13 | f(v) << 17, indexed by slot
const SHUF0 = 32768; // 16 x 16 bytes: half 0's words (read front to back) into the lanes of a mask
const SHUF1 = 33024; // 16 x 16 bytes: half 1's words (read back to front)
const STATES = 33280; // 64 x u32: x0[0..31], x1[0..31], in and out
const ONES = 33536; // u32 out: the ones of the coded rounds
const SCRATCH = 33600; // 8 x 16 bytes: each vector's slots for its next step
const BUCKETS = 33792; // 16 x 3 x u32, in: the alias buckets' runs, for the table's build
const ADV = 33984; // 16 x 16 bytes: byte 0 of entry b is 2 popcount(b), the bytes of words a mask takes

const L = [];
const emit = (s) => L.push(s);

/** One step of four lanes: vector q of half h (state local $h{h}q{q}). */
function step(h, q) {
  const x = `$h${h}q${q}`;
  const e = `$e${h}`;
  const idx = `$i${h}`;
  emit(`    ;; half ${h}, lanes ${4 * q} .. ${4 * q + 3}`);
  // the four slots' entries, from the slots the step before stored (a store and four loads
  // cost the vector unit less than four lane extractions); each slot is made a byte offset
  // here, in scalar code, rather than by a vector shift: the vector unit is the loop's bound
  const sc = SCRATCH + 16 * q;
  const slot = (k) => `(i32.shl (i32.load offset=${sc + 4 * k} (i32.const 0)) (i32.const 2))`;
  emit(`    (local.set ${e} (v128.load32_zero offset=${TAB} ${slot(0)}))`);
  for (let k = 1; k < 4; k++) {
    emit(`    (local.set ${e} (v128.load32_lane offset=${TAB} ${k} ${slot(k)} (local.get ${e})))`);
  }
  // x = f * (x >> 13) + i
  emit(`    (local.set ${x} (i32x4.add (i32x4.mul (i32x4.shr_u (local.get ${e}) (i32.const 17)) (i32x4.shr_u (local.get ${x}) (i32.const 13)))`);
  emit(`      (v128.and (local.get ${e}) (local.get $m13))))`);
  // lane l's nibble goes to piece l mod 8, nibble floor(l / 8): vector q to pieces
  // 4 (q mod 2) .. + 3 (accumulator $a{h}{q mod 2}), at bit 4 floor(q / 2)
  const acc = `$a${h}${q & 1}`;
  // (the nibble is bits 13 .. 16 of the entry: shifted right into place, then masked)
  const nib = `(v128.and (i32x4.shr_u (local.get ${e}) (i32.const ${13 - 4 * (q >> 1)})) (local.get $m4s${q >> 1}))`;
  if (q < 2) emit(`    (local.set ${acc} ${nib})`);
  else emit(`    (local.set ${acc} (v128.or (local.get ${acc}) ${nib}))`);
  // renormalize: the lanes below 2^15 take the next words, in lane order
  // states stay below 2^31 (checked on entry, kept by the step), so a signed compare does
  emit(`    (local.set $lt (i32x4.lt_s (local.get ${x}) (local.get $low)))`);
  // $b: the mask of those lanes times 16, the offset of its entries in the shuffles and in
  // ADV (the bytes it takes from a table rather than a popcount: $b used once, no copy)
  emit(`    (local.set $b (i32.shl (i32x4.bitmask (local.get $lt)) (i32.const 4)))`);
  if (h === 0) {
    emit(`    (local.set $w (i8x16.swizzle (v128.load64_zero (local.get $p0)) (v128.load offset=${SHUF0} (local.get $b))))`);
    emit(`    (local.set $p0 (i32.add (local.get $p0) (i32.load8_u offset=${ADV} (local.get $b))))`);
  } else {
    // (in half 1, $p1 holds the address of the 8 bytes below its position)
    emit(`    (local.set $w (i8x16.swizzle (v128.load64_zero (local.get $p1)) (v128.load offset=${SHUF1} (local.get $b))))`);
    emit(`    (local.set $p1 (i32.sub (local.get $p1) (i32.load8_u offset=${ADV} (local.get $b))))`);
  }
  // a lane that takes a word (x < 2^15, and x >= 4 after a step) grows to x 2^16 + word;
  // the others get 0 here, so the larger of the two is the new state
  emit(`    (local.set ${x} (i32x4.max_s (local.get ${x}) (v128.or (v128.and (i32x4.shl (local.get ${x}) (i32.const 16)) (local.get $lt)) (local.get $w))))`);
  // the next step's slot offsets, stored now: the store keeps this step's work in its place
  // in the schedule (else the compiler defers it and spills what it needs)
  offsets(q, x);
}

/** Stores the slots of state vector x for its step q. */
function offsets(q, x) {
  emit(`    (v128.store offset=${SCRATCH + 16 * q} (i32.const 0) (v128.and (local.get ${x}) (local.get $m13)))`);
}

/** The round's 16 bytes from the nibble vectors of half h, stored at $o{h}. */
function store(h) {
  emit(`    (local.set $w (i16x8.narrow_i32x4_u (local.get $a${h}0) (local.get $a${h}1)))`);
  emit(`    (v128.store (local.get $o${h}) (local.get $w))`);
  // the ones of the round (for the q0 check): two scalar popcounts of the bytes just
  // stored (the vector popcount costs the vector unit a dozen instructions, and the steps
  // keep it busy)
  emit(`    (local.set $ones (i64.add (local.get $ones) (i64.add (i64.popcnt (i64.load (local.get $o${h}))) (i64.popcnt (i64.load offset=8 (local.get $o${h}))))))`);
  emit(`    (local.set $o${h} (i32.add (local.get $o${h}) (i32.const 16)))`);
}

function round(h) {
  for (let q = 0; q < 8; q++) step(h, q);
  store(h);
}

emit(`;; Generated by wasm/gen-wide.mjs: do not edit. Coding 10's coded rounds (spec 4.12
;; step, 4.14 halves), four lanes a SIMD vector, eight vectors a half. Memory (written by
;; src/wide-wasm.ts): the alias table at ${TAB} (8192 x u32, i | v << 13 | f(v) << 17), the
;; shuffles that give each mask of lanes its words at ${SHUF0} (half 0) and ${SHUF1} (half 1),
;; the 64 states at ${STATES} (in, and out at the end), the count of ones of the coded
;; rounds out at ${ONES}, 128 bytes of scratch at ${SCRATCH}, the alias buckets at ${BUCKETS}
;; (for "table": bucket b's d, own and other at ${BUCKETS} + 12 b), the bytes of words each
;; mask of lanes takes at ${ADV} + 16 mask (2 popcount(mask)), the payload's 16-bit words
;; from $words with 128 bytes of slack before and after, the output from $out (round r's
;; 16 bytes at $out + 16 r).
;; A round of a half reads at most 32 words, so checking after each round that the halves
;; have read at most W words in all keeps every load inside the slack; a payload whose
;; halves want more is rejected (-1), as spec 4.14 says whatever the order of the halves.
;; Returns the words read by both halves, or -1.
(module
  (import "env" "memory" (memory 1))
  ;; table: the alias table at ${TAB} from the 16 buckets at ${BUCKETS}, built for each frame
  ;; here rather than in JavaScript (no conversion, no copy, and no JavaScript loop of 8192
  ;; steps to warm up). Bucket b's slot r (of 512) is own + r when r < d, else other + r:
  ;; own = b << 13 | f(b) << 17 and other = (v << 13 | f(v) << 17) + second - d for its
  ;; alias v (src/wide-wasm.ts). The stores are 8192 whatever the buckets hold.
  (func (export "table")
    (local $b i32) (local $r i32) (local $d i32) (local $own i32) (local $other i32) (local $at i32)
    (loop $bucket
      (local.set $d (i32.load offset=${BUCKETS} (i32.mul (local.get $b) (i32.const 12))))
      (local.set $own (i32.load offset=${BUCKETS + 4} (i32.mul (local.get $b) (i32.const 12))))
      (local.set $other (i32.load offset=${BUCKETS + 8} (i32.mul (local.get $b) (i32.const 12))))
      (local.set $r (i32.const 0))
      (loop $slot
        (i32.store offset=${TAB} (local.get $at)
          (i32.add (select (local.get $own) (local.get $other) (i32.lt_u (local.get $r) (local.get $d))) (local.get $r)))
        (local.set $at (i32.add (local.get $at) (i32.const 4)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br_if $slot (i32.lt_u (local.get $r) (i32.const 512))))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br_if $bucket (i32.lt_u (local.get $b) (i32.const 16)))))
  (func (export "wide")
    (param $words i32) (param $W i32) (param $K0 i32) (param $K1 i32) (param $R0 i32) (param $out i32)
    (result i32)
    (local $p0 i32) (local $p1 i32) (local $o0 i32) (local $o1 i32) (local $r i32) (local $b i32) (local $p0m8 i32)
        (local $m13 v128) (local $m4s0 v128) (local $m4s1 v128) (local $m4s2 v128) (local $m4s3 v128) (local $low v128) (local $lt v128) (local $w v128)
    (local $e0 v128) (local $e1 v128) (local $i0 v128) (local $i1 v128)
    (local $ones i64)`);
for (let h = 0; h < 2; h++) {
  emit(`    ${Array.from({ length: 8 }, (_, q) => `(local $h${h}q${q} v128)`).join(" ")}`);
  emit(`    (local $a${h}0 v128) (local $a${h}1 v128)`);
}
emit(`    (local.set $m13 (i32x4.splat (i32.const 8191)))
    (local.set $m4s0 (i32x4.splat (i32.const 0x000f)))
    (local.set $m4s1 (i32x4.splat (i32.const 0x00f0)))
    (local.set $m4s2 (i32x4.splat (i32.const 0x0f00)))
    (local.set $m4s3 (i32x4.splat (i32.const 0xf000)))
    (local.set $low (i32x4.splat (i32.const 32768)))`);
for (let h = 0; h < 2; h++) {
  for (let q = 0; q < 8; q++) emit(`    (local.set $h${h}q${q} (v128.load offset=${STATES + 128 * h + 16 * q} (i32.const 0)))`);
}
for (let q = 0; q < 8; q++) offsets(q, `$h0q${q}`);
emit(`    ;; byte addresses: half 0 reads at $p0 upward, half 1 below $p1 downward
    (local.set $p0 (local.get $words))
    (local.set $p1 (i32.add (local.get $words) (i32.shl (local.get $W) (i32.const 1))))
    (local.set $o0 (local.get $out))
    (local.set $o1 (i32.add (local.get $out) (i32.shl (local.get $R0) (i32.const 4))))
    ;; half 0, then half 1: one half's eight vectors of lanes are independent chains enough
    ;; to keep the core busy, and fit its registers (both halves at once spill)
    (block $h0_done
      (loop $h0
        (br_if $h0_done (i32.ge_u (local.get $r) (local.get $K0)))`);
round(0);
emit(`        (br_if $h0_done (i32.gt_s (local.get $p0) (local.get $p1)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $h0)))
    (if (i32.gt_s (local.get $p0) (local.get $p1)) (then (return (i32.const -1))))
    (local.set $r (i32.const 0))`);
for (let q = 0; q < 8; q++) offsets(q, `$h1q${q}`);
emit(`    ;; half 1's loads are of the 8 bytes below its position: $p1 holds their address here (the
    ;; position less 8), and the check compares it with $p0 less 8 (the same test: both are
    ;; addresses above the slack, far from 0 and from 2^31)
    (local.set $p1 (i32.sub (local.get $p1) (i32.const 8)))
    (local.set $p0m8 (i32.sub (local.get $p0) (i32.const 8)))
    (block $h1_done
      (loop $h1
        (br_if $h1_done (i32.ge_u (local.get $r) (local.get $K1)))`);
round(1);
emit(`        (br_if $h1_done (i32.gt_s (local.get $p0m8) (local.get $p1)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $h1)))
    (local.set $p1 (i32.add (local.get $p1) (i32.const 8)))
    (if (i32.gt_s (local.get $p0) (local.get $p1)) (then (return (i32.const -1))))`);
for (let h = 0; h < 2; h++) {
  for (let q = 0; q < 8; q++) emit(`    (v128.store offset=${STATES + 128 * h + 16 * q} (i32.const 0) (local.get $h${h}q${q}))`);
}
emit(`    ;; the ones of the coded rounds
    (i32.store offset=${ONES} (i32.const 0) (i32.wrap_i64 (local.get $ones)))
    ;; words read: (p0 - words) / 2 by half 0, (words + 2 W - p1) / 2 by half 1
    (i32.shr_u (i32.sub (i32.add (local.get $W) (local.get $W)) (i32.sub (local.get $p1) (local.get $p0))) (i32.const 1))))`);

writeFileSync(new URL("./wide.wat", import.meta.url), L.join("\n") + "\n");
