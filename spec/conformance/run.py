#!/usr/bin/env python3
"""The bloomwire conformance kit's runner (Python 3, standard library only).

Drives an implementation's adapter (spec/conformance/README.md) over the committed test
vectors, a fresh seeded corpus of frames the library writes, and mutants of those frames,
and judges every answer against the library's own adapter (the oracle, `bloomwire
conform`) and the vectors' manifests.

    python3 spec/conformance/run.py --adapter "CMD ..." [--oracle "CMD"] [--seed N]
                                    [--frames N] [--mutants N] [--max-m M]

Exit status: 0 when every check passed, 1 when one failed, 2 for a usage error or when
the oracle itself cannot be started.
"""

import argparse
import collections
import json
import os
import queue
import random
import struct
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

CORE_CODINGS = {0, 1, 2, 4, 5, 7}
COUNTER_CODING_NAMES = {"raw", "known-counters", "adaptive-counters"}
CODING_IDS = {"raw": 0, "adaptive": 1, "known-p": 2, "known-p-symbols": 3,
              "known-counters": 4, "adaptive-counters": 5, "known-p-interleaved": 6,
              "positional": 7, "small": 9, "wide": 10, "escape": 11}
HEADER_MEMBERS = ("kind", "filter_type", "base_hash", "index_scheme", "coding", "flags",
                  "seed", "k0", "k1", "m", "counted_type", "counter_width", "k_raw", "n",
                  "generation", "base_generation", "base_digest", "result_digest",
                  "metadata", "q0", "counter_table", "chunk_shift", "header_len",
                  "payload_len", "tag")
FIELD_CLASSES = ("InvalidField", "LimitExceeded")
# Errors reported before (or at) the coding byte: a Core decoder reports them as a Full one
PRE_CODING_FIELDS = ("frame kind", "filter type", "base hash", "index scheme", "coding")


# The CRC-32C of spec 2.4 and varints (2.1): the reference decoder's.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
from bloomwire_ref import crc32c, pack_counters, varint  # noqa: E402


# ---------------------------------------------------------------------------
# An adapter process
# ---------------------------------------------------------------------------

class Adapter:
    """One adapter command, started once and restarted after it dies."""

    def __init__(self, command, label, timeout):
        self.command = command
        self.label = label
        self.timeout = timeout
        self.proc = None
        self.lines = None
        self.stderr_tail = collections.deque(maxlen=20)
        self.requests = 0

    def _start(self):
        self.proc = subprocess.Popen(self.command, shell=True, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=REPO)
        self.lines = queue.Queue()
        proc, lines, tail = self.proc, self.lines, self.stderr_tail

        def pump_out():
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        def pump_err():
            for line in proc.stderr:
                tail.append(line.decode("utf-8", "replace").rstrip())

        threading.Thread(target=pump_out, daemon=True).start()
        threading.Thread(target=pump_err, daemon=True).start()

    def request(self, obj):
        """The adapter's answer to `obj`, or an AdapterFailure answer."""
        self.requests += 1
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
            self.proc.stdin.flush()
            line = self.lines.get(timeout=self.timeout)
        except (BrokenPipeError, OSError) as e:
            return self._failed(f"cannot write to the adapter: {e}")
        except queue.Empty:
            return self._failed(f"no answer within {self.timeout} s")
        if line is None:
            return self._failed("the adapter exited")
        try:
            answer = json.loads(line)
        except ValueError:
            return self._failed(f"not JSON: {line[:200]!r}")
        if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
            return self._failed(f"not an answer object: {line[:200]!r}")
        return answer

    def _failed(self, why):
        self.close()
        tail = " | ".join(list(self.stderr_tail)[-3:])
        return {"ok": False, "error": "AdapterFailure",
                "detail": why + (f" (stderr: {tail})" if tail else "")}

    def close(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


# ---------------------------------------------------------------------------
# Comparing answers (README section 3)
# ---------------------------------------------------------------------------

def _lower(v):
    return v.lower() if isinstance(v, str) else v


def error_of(answer):
    """(class, field) of a refusal; field only for the classes that name one."""
    error = answer.get("error")
    return error, (answer.get("field") if error in FIELD_CLASSES else None)


def differ_decode(want, got):
    """None when `got` answers a decode as `want` does, else what differs."""
    if want["ok"] != got["ok"]:
        return "accepted" if got["ok"] else "refused"
    if not want["ok"]:
        if error_of(want) != error_of(got):
            return "another error"
        return None
    header = got.get("header")
    if not isinstance(header, dict):
        return "no header"
    bad = [m for m in HEADER_MEMBERS
           if m not in header or _lower(header[m]) != _lower(want["header"][m])]
    if bad:
        return "header members differ: " + ", ".join(bad)
    if _lower(got.get("digest")) != _lower(want.get("digest")):
        return "digest differs"
    return None


def differ_receive(want, got):
    if want["ok"] != got["ok"]:
        return "accepted" if got["ok"] else "refused"
    if want["ok"] and want.get("update") != got.get("update"):
        return "another update"
    if not want["ok"] and error_of(want) != error_of(got):
        return "another error"
    held_w, held_g = want.get("held"), got.get("held")
    if (held_w is None) != (held_g is None) or (
            held_w is not None and (not isinstance(held_g, dict) or
                                    str(held_g.get("generation")) != held_w["generation"] or
                                    _lower(held_g.get("digest")) != _lower(held_w["digest"]))):
        return "holds something else afterwards"
    return None


def brief(answer):
    """An answer in a line: the error, or the header's main members and the digest."""
    if not answer.get("ok"):
        text = answer.get("error", "?")
        if answer.get("field") is not None:
            text += f"({answer['field']})"
        if "held" in answer:
            text += f" held={answer['held']}"
        if answer.get("detail"):
            text += f" [{str(answer['detail'])[:160]}]"
        return text
    if "header" in answer:
        h = answer["header"]
        return (f"ok coding={h.get('coding')} m={h.get('m')} q0={h.get('q0')} "
                f"chunk_shift={h.get('chunk_shift')} gen={h.get('generation')} "
                f"tag={h.get('tag')} digest={answer.get('digest')}")
    if "frame" in answer:
        return f"ok frame of {len(answer['frame']) // 2} bytes"
    return "ok" + (f" {answer.get('update')} held={answer.get('held')}"
                   if "held" in answer else "")


def shown_request(request):
    out = {}
    for k, v in request.items():
        if isinstance(v, str) and len(v) > 96:
            v = v[:96] + f"...({len(v) // 2} bytes)"
        out[k] = v
    return json.dumps(out)


class Results:
    """Passed, failed and skipped checks by category, and the first failures of each."""

    def __init__(self, show, failures_path):
        self.counts = collections.OrderedDict()
        self.failures = collections.defaultdict(list)
        self.show = show
        self.failures_file = open(failures_path, "w") if failures_path else None

    def _cat(self, category):
        return self.counts.setdefault(category, {"passed": 0, "failed": 0, "skipped": 0})

    def check(self, category, why_not, what, request=None, want=None, got=None):
        """Count a check: `why_not` None is a pass."""
        cat = self._cat(category)
        if why_not is None:
            cat["passed"] += 1
            return True
        cat["failed"] += 1
        record = {"category": category, "what": what, "why": why_not, "request": request,
                  "expected": want, "got": got}
        if len(self.failures[category]) < self.show:
            self.failures[category].append(record)
        if self.failures_file:
            self.failures_file.write(json.dumps(record) + "\n")
        return False

    def skip(self, category):
        self._cat(category)["skipped"] += 1

    def report(self, out):
        passed = sum(c["passed"] for c in self.counts.values())
        failed = sum(c["failed"] for c in self.counts.values())
        for name, c in self.counts.items():
            skipped = f", {c['skipped']} skipped" if c["skipped"] else ""
            print(f"  {name:24} {c['passed']:6} passed, {c['failed']:4} failed{skipped}",
                  file=out)
        for name, records in self.failures.items():
            for r in records:
                print(f"FAIL [{name}] {r['what']}: {r['why']}", file=out)
                if r["request"] is not None:
                    print(f"    request:  {shown_request(r['request'])}", file=out)
                if r["expected"] is not None:
                    print(f"    expected: {brief(r['expected'])}", file=out)
                if r["got"] is not None:
                    print(f"    got:      {brief(r['got'])}", file=out)
        if self.failures_file:
            self.failures_file.close()
        return passed, failed


# ---------------------------------------------------------------------------
# The judge: the implementation and the oracle side by side
# ---------------------------------------------------------------------------

class Judge:
    def __init__(self, impl, oracle, results):
        self.impl = impl
        self.oracle = oracle
        self.results = results
        self.sessions = 0

    def decode(self, category, frame, key=None, limits=None, what=""):
        """Decode `frame` on both sides; returns the oracle's answer."""
        request = {"op": "decode", "frame": frame.hex(), "key": key, "limits": limits}
        return self._both(category, request, differ_decode, what)

    def open(self, key=None):
        self.sessions += 1
        name = f"s{self.sessions}"
        request = {"op": "open", "session": name, "key": key, "limits": None}
        for side in (self.oracle, self.impl):
            answer = side.request(request)
            if not answer.get("ok"):
                self.results.check("oracle" if side is self.oracle else "sessions",
                                   "open refused", "open", request, None, answer)
        return name

    def receive(self, category, session, frame, what=""):
        request = {"op": "receive", "session": session, "frame": frame.hex()}
        return self._both(category, request, differ_receive, what)

    def _both(self, category, request, differ, what):
        """Sends `request` to the oracle and the implementation and checks the answers with
        `differ`; returns the oracle's answer."""
        want = self.oracle.request(request)
        got = self.impl.request(request)
        if want.get("error") == "AdapterFailure":
            self.results.check("oracle", want["detail"], what, request)
            return want
        self.results.check(category, differ(want, got), what, request, want, got)
        return want


def core_expectation(answer, frame):
    """What a Core decoder answers where a Full one answered `answer` (README section 5):
    UnsupportedCoding for a frame of a non-Core coding unless a field before it failed."""
    if len(frame) < 10 or frame[9] in CORE_CODINGS:
        return answer
    error, field = error_of(answer)
    if error in ("BadMagic", "UnsupportedVersion", "Incomplete") or (
            error == "InvalidField" and field in PRE_CODING_FIELDS):
        return answer
    return {"ok": False, "error": "UnsupportedCoding"}


# ---------------------------------------------------------------------------
# (a) The committed vectors
# ---------------------------------------------------------------------------

def vector_profile(frame):
    return "core" if len(frame) >= 10 and frame[9] in CORE_CODINGS else "full"


def manifest_header_problems(header, params):
    """Members of the decoded header that differ from an accept manifest's params."""
    bad = []
    checks = {"m": "m", "n": "n", "generation": "generation", "q0": "q0",
              "payload_len": "payload_len", "header_len": "header_len",
              "chunk_shift": "chunk_shift", "counter_width": "counter_width",
              "counter_table": "counter_table", "metadata_hex": "metadata"}
    for param, member in checks.items():
        if param in params:
            want, got = params[param], header.get(member)
            if member in ("n", "generation"):
                want, got = str(want), str(got)
            if _lower(want) != _lower(got):
                bad.append(f"{member} {got!r} (manifest {want!r})")
    if "coding" in params and CODING_IDS.get(params["coding"]) != header.get("coding"):
        bad.append(f"coding {header.get('coding')!r} (manifest {params['coding']!r})")
    if "block_k_raw" in params and params["block_k_raw"] != header.get("k_raw"):
        bad.append("k_raw")
    elif "k_raw" in params and "block_k_raw" not in params and \
            header.get("k_raw") != [params["k_raw"]]:
        bad.append("k_raw")
    return bad


def run_vectors(judge, vectors_dir, profile, results):
    accept = os.path.join(vectors_dir, "accept")
    reject = os.path.join(vectors_dir, "reject")
    frames = {}

    def frame_of(path):
        if path not in frames:
            with open(path, "rb") as fh:
                frames[path] = fh.read()
        return frames[path]

    tally = collections.Counter()
    for name in sorted(os.listdir(accept)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(accept, name)) as fh:
            man = json.load(fh)
        frame = frame_of(os.path.join(accept, man["frame"]))
        tag = vector_profile(frame)
        tally[tag] += 1
        key = man.get("key_hex")
        what = f"accept/{man['frame']} ({tag} vector)"
        want = judge.decode(f"vectors ({tag})", frame, key, what=what)
        # the oracle against the manifest
        if profile == "full" or tag == "core":
            why = None if want.get("ok") else "the oracle refuses an accept vector"
            if why is None:
                problems = manifest_header_problems(want["header"], man.get("params", {}))
                why = "; ".join(problems) if problems else None
            results.check("oracle", why, what, None, None, want)
        else:
            results.check("oracle", None if want.get("error") == "UnsupportedCoding"
                          else "a Core oracle does not answer UnsupportedCoding", what,
                          None, None, want)
        if key is not None:
            judge.decode(f"vectors ({tag})", frame, None, what=what + " without its key")
        if "base_frame" in man:                    # a delta, or a restart after a forged frame
            session = judge.open(key)
            base = frame_of(os.path.join(accept, man["base_frame"]))
            judge.receive(f"vectors ({tag})", session, base, what + ": its base")
            judge.receive(f"vectors ({tag})", session, frame, what + ": applied to its base")

    with open(os.path.join(reject, "manifest.json")) as fh:
        manifest = json.load(fh)
    for name in sorted(manifest):
        want_m = manifest[name]
        frame = frame_of(os.path.join(reject, name))
        tag = vector_profile(frame)
        tally[tag] += 1
        key = want_m.get("key_hex")
        what = f"reject/{name} ({tag} vector)"
        category = f"vectors ({tag})"
        expected = {"ok": False, "error": want_m["error"], "field": want_m.get("field")}
        if "apply_to" in want_m:
            session = judge.open(key)
            base = frame_of(os.path.join(vectors_dir, want_m["apply_to"]))
            judge.receive(category, session, base, what + ": the frame it applies to")
            want = judge.receive(category, session, frame, what)
            if profile == "core" and vector_profile(frame) == "full":
                expected = core_expectation(expected, frame)
            elif profile == "core" and vector_profile(base) == "full":
                # the receiver refused its base and holds nothing
                expected = ({"ok": False, "error": "GenerationGap"} if frame[5] == 1
                            else {"ok": True})
        else:
            request = {"op": "decode", "frame": frame.hex(), "key": key, "limits": None}
            want = judge.decode(category, frame, key, what=what)
            if profile == "core":
                expected = core_expectation(expected, frame)
            if "needed" in want_m and expected.get("error") == "Incomplete":
                got = judge.impl.request(request)
                results.check(category, None if got.get("needed") == want_m["needed"]
                              else f"needed {got.get('needed')}, the manifest says "
                                   f"{want_m['needed']}", what, request, None, got)
        results.check("oracle", None if error_of(want) == error_of(expected) else
                      "the oracle's answer is not the manifest's", what, None, expected, want)
    return tally


# ---------------------------------------------------------------------------
# (b) A fresh corpus the oracle writes
# ---------------------------------------------------------------------------

DENSITIES = (0.0, 0.0005, 0.004, 0.02, 0.06, 0.15, 0.3, 0.45, 0.5, 0.7, 0.95, 1.0)


def random_bits(rng, m, density):
    bits = bytearray((m + 7) // 8)
    if density >= 0.5:
        bits = bytearray(b"\xff" * len(bits))
        if m % 8:
            bits[-1] = (1 << (m % 8)) - 1
        flip = 1.0 - density
    else:
        flip = density
    count = min(m, int(round(flip * m)))
    for i in rng.sample(range(m), count) if count < m else range(m):
        bits[i >> 3] ^= 1 << (i & 7)
    return bytes(bits)


def flip_some(rng, bits, m, count):
    """`bits` with `count` distinct bits flipped (at least one: the result differs)."""
    out = bytearray(bits)
    for i in rng.sample(range(m), max(1, min(m, count))):
        out[i >> 3] ^= 1 << (i & 7)
    return bytes(out)


def random_counters(rng, m, width):
    top = (1 << width) - 1
    mean = rng.choice((0.0, 0.05, 0.3, 1.0, 3.0))
    out = bytearray(m)
    for i in range(m):
        c = 0
        while rng.random() < mean / (1 + mean) and c < top:
            c += 1
        out[i] = c
    return bytes(out)


def random_filter(rng, max_m, counting, min_m=1):
    """A FILTER of the protocol: shape, hash family, k and n."""
    min_m = min(min_m, max_m)
    m = int(round(2 ** rng.uniform(min_m.bit_length() - 1, max_m.bit_length())))
    m = min(max(m, min_m), max_m)
    layout = rng.choice((0, 0, 1, 2))
    base_hash = rng.choice((1, 1, 2) if counting or layout else (0, 1, 1, 2))
    f = {"filter_type": 3 if counting else layout, "m": m, "n": str(rng.choice(
        (0, rng.randrange(1, 10000), 2 ** 64 - 1, rng.getrandbits(64)))),
        "base_hash": base_hash, "seed": None, "k0": None, "k1": None,
        "index_scheme": 0 if base_hash == 0 else rng.choice((0, 1)),
        "counted_type": layout if counting else None,
        "counter_width": rng.randint(1, 8) if counting else None}
    if base_hash == 1:
        f["seed"] = str(rng.choice((0, rng.getrandbits(64))))
    elif base_hash == 2:
        f["k0"], f["k1"] = str(rng.getrandbits(64)), str(rng.getrandbits(64))
    k = rng.randint(1, 8)
    raw = k << 16 | (rng.choice((0, rng.randrange(1, 65536))) if k < 8 else 0)
    if layout == 1 and m < -(-raw // 65536):
        raw = max(65536, (m << 16))
    if layout == 2:
        raws = [rng.randrange(0, 3 << 16) for _ in range(bin(m).count("1"))]
        if sum(raws) < 65536:
            raws[0] += 65536
        f["k_raw"] = raws
    else:
        f["k_raw"] = [raw]
    return f


class Corpus:
    """Frames the oracle wrote, with the key they need and what they carry."""

    def __init__(self, oracle, results, rng):
        self.oracle = oracle
        self.results = results
        self.rng = rng
        self.frames = []             # (frame bytes, key hex or None, oracle's decode answer)
        self.coverage = collections.Counter()
        self.forged = collections.Counter()    # the oracle's answers to forged deltas

    def write(self, request, digest_of):
        """Ask the oracle for a frame; fall back to its own choice of coding and chunks
        when it declines. Checks the oracle's frame: it decodes to what it was given."""
        answer = self.oracle.request(request)
        if not answer.get("ok") and answer.get("error") in ("EncoderDeclined",
                                                            "UnsupportedCoding"):
            request = dict(request, coding=None, q0=None, chunk_shift=None,
                           counter_table=None)
            answer = self.oracle.request(request)
        if not answer.get("ok"):
            self.results.check("oracle", "the oracle writes no frame", "encode", request,
                               None, answer)
            return None, request
        frame = bytes.fromhex(answer["frame"])
        decoded = self.oracle.request({"op": "decode", "frame": answer["frame"],
                                       "key": request.get("key"), "limits": None})
        why = None
        if not decoded.get("ok"):
            why = "the oracle refuses its own frame"
        else:
            h = decoded["header"]
            if decoded["digest"] != f"{digest_of:08x}":
                why = "the oracle's frame decodes to other bits"
            elif (h["m"], h["n"], h["generation"], h["metadata"]) != (
                    request["filter"]["m"], request["filter"]["n"], request["generation"],
                    request.get("metadata")):
                why = "the oracle's frame carries other header fields"
            elif request.get("coding") and h["coding"] != CODING_IDS.get(request["coding"]):
                why = "the oracle's frame has another coding than asked"
        self.results.check("oracle", why, "encode", request, None, decoded)
        if why is not None:
            return None, request
        self.coverage[decoded["header"]["coding"]] += 1
        self.frames.append((frame, request.get("key"), decoded))
        return (frame, decoded), request


def encode_request(filt, contents, coding, generation, rng, keyed, base=None, restart=False):
    counting = filt["filter_type"] == 3
    request = {"op": "encode", "filter": filt,
               "bits": None if counting else contents.hex(),
               "counters": contents.hex() if counting else None,
               "coding": coding, "q0": None, "counter_table": None,
               "chunk_shift": None, "generation": str(generation), "restart": restart,
               "metadata": None, "key": keyed, "base": None}
    m = filt["m"]
    if not counting and m > 64 and rng.random() < 0.4:
        request["chunk_shift"] = rng.randint(6, min(12, (m - 1).bit_length() - 1))
    if rng.random() < 0.25:
        request["metadata"] = bytes(rng.getrandbits(8) for _ in range(
            rng.choice((1, 5, 40)))).hex()
    if base is not None:
        base_contents, base_generation = base
        request["base"] = {"bits": None if counting else base_contents.hex(),
                           "counters": base_contents.hex() if counting else None,
                           "generation": str(base_generation)}
    return request


def digest_of(filt, contents):
    if filt["filter_type"] == 3:
        return crc32c(pack_counters(contents, filt["counter_width"]))
    return crc32c(contents)


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def run_corpus(judge, corpus, impl_hello, oracle_codings, args, rng, results, profile):
    """Full frames of every coding the oracle writes, then chains of deltas through
    receiver sessions."""
    impl_encodes = "encode" in impl_hello.get("ops", ())
    impl_codings = set(impl_hello.get("codings", ()))
    bit_codings = [c for c in oracle_codings if c not in COUNTER_CODING_NAMES or c == "raw"]
    counter_codings = [c for c in oracle_codings if c in COUNTER_CODING_NAMES]
    codings = [None] + bit_codings + counter_codings

    def check_frame(written, request, what):
        frame, decoded = written
        key = request.get("key")
        judge.decode("corpus", frame, key, what=what)
        if key is not None:
            judge.decode("corpus", frame, None, what=what + " without its key")
        if rng.random() < 0.3:                     # a limit the frame just breaks
            h = decoded["header"]
            limits = {"max_m": 1 << 28, "max_k": 64, "max_payload": 1 << 26,
                      "max_metadata": 4096, "max_filter_bytes": None}
            name = rng.choice(("max_m", "max_k", "max_payload", "max_filter_bytes")
                              + (("max_metadata",) if h["metadata"] else ()))
            value = {"max_m": h["m"] - 1, "max_k": max(0, -(-sum(h["k_raw"]) // 65536) - 1),
                     "max_payload": h["payload_len"] - 1,
                     "max_metadata": len(h["metadata"] or "") // 2 - 1,
                     "max_filter_bytes": (h["m"] if h["filter_type"] == 3
                                          else -(-h["m"] // 8)) - 1}[name]
            limits[name] = max(0, value)
            judge.decode("limits", frame, key, limits, what=f"{what}, {name} {limits[name]}")
        if impl_encodes:
            h = decoded["header"]
            name = next((n for n, i in CODING_IDS.items() if i == h["coding"]), None)
            if name not in impl_codings:
                results.skip("encode")
                return
            ask = dict(request, coding=name, q0=h["q0"], chunk_shift=h["chunk_shift"],
                       counter_table=h["counter_table"])
            got = judge.impl.request(ask)
            if not got.get("ok") and got.get("error") in ("EncoderDeclined",
                                                          "UnsupportedCoding",
                                                          "UnsupportedOp"):
                results.skip("encode")
                return
            why = None
            if not got.get("ok"):
                why = "no frame"
            elif got["frame"].lower() != frame.hex():
                why = "another frame than the oracle's"
            results.check("encode", why, what, ask, {"ok": True, "frame": frame.hex()}, got)

    frames = args.frames
    chains = max(1, frames // 6)
    for i in range(frames - chains):
        coding = codings[i % len(codings)]
        counting = coding in ("known-counters", "adaptive-counters") or (
            coding in (None, "raw") and rng.random() < 0.3)
        if not counting_allowed(oracle_codings) and counting:
            counting = False
        # shapes and densities the coding is written for, so that the oracle writes it
        # rather than fall back to raw; a few tries, then the oracle's own choice
        if coding == "positional":
            densities = DENSITIES[1:4]
        elif coding in (None, "raw") or counting:
            densities = DENSITIES
        else:
            densities = (0.02, 0.06, 0.15, 0.3, 0.7, 0.85, 0.94)
        min_m = 6000 if coding in ("dense", "wide") else 64 if densities != DENSITIES else 1
        for attempt in range(3):
            filt = random_filter(rng, args.max_m if not counting else min(args.max_m, 4000),
                                 counting, min_m)
            if counting:
                contents = random_counters(rng, filt["m"], filt["counter_width"])
            else:
                contents = random_bits(rng, filt["m"], rng.choice(densities))
            keyed = random_key(rng) if rng.random() < 0.2 else None
            generation = rng.choice((0, rng.randrange(1, 1000), 2 ** 64 - 1))
            request = encode_request(filt, contents, coding, generation, rng, keyed,
                                     restart=rng.random() < 0.2)
            if attempt < 2 and coding is not None:
                answer = corpus.oracle.request(request)
                if not answer.get("ok"):
                    continue                       # declined: try another filter
            break
        written, request = corpus.write(request, digest_of(filt, contents))
        if written:
            check_frame(written, request, f"corpus frame {i} ({coding or 'default'})")

    for c in range(chains):
        counting = counting_allowed(oracle_codings) and rng.random() < 0.3
        filt = random_filter(rng, args.max_m if not counting else min(args.max_m, 4000),
                             counting)
        m = filt["m"]
        keyed = random_key(rng) if rng.random() < 0.3 else None
        session = judge.open(keyed)
        if counting:
            gens = [random_counters(rng, m, filt["counter_width"])]
        else:
            gens = [random_bits(rng, m, rng.choice(DENSITIES[1:-1]))]
        for _ in range(4):
            prev = gens[-1]
            if counting:
                top = (1 << filt["counter_width"]) - 1
                nxt = bytearray(prev)
                for _ in range(rng.randint(1, 5)):       # each a counter changed
                    i = rng.randrange(m)
                    nxt[i] = rng.choice([v for v in range(top + 1) if v != nxt[i]])
                if nxt == prev:                           # the changes undid each other
                    nxt[0] = top - nxt[0] if top != 2 * nxt[0] else 0
                gens.append(bytes(nxt))
            else:
                gens.append(flip_some(rng, prev, m, rng.randint(1, 8)))
        g0 = rng.randrange(1, 1000)
        what = f"chain {c}"
        choices = [None] + (counter_codings if counting else bit_codings)

        def expect(want, outcome, label):
            """The oracle's session follows spec 5.2 (checked when it decodes all)."""
            if outcome is None or profile != "full":
                return
            got = want.get("update") if want.get("ok") else want.get("error")
            results.check("oracle", None if got == outcome else f"{got}, not {outcome}",
                          f"{what} {label}", None, {"ok": False, "error": outcome}, want)

        def send(contents, generation, base=None, restart=False, label="", outcome=None):
            coding = rng.choice(choices)
            request = encode_request(filt, contents, coding, generation, rng, keyed,
                                     base=base, restart=restart)
            written, request = corpus.write(request, digest_of(
                filt, xor(contents, base[0]) if base else contents))
            if written:
                check_frame(written, request, f"{what} {label}")
                want = judge.receive("sessions", session, written[0], f"{what} {label}")
                expect(want, outcome, label)
            return written

        f0 = send(gens[0], g0, restart=True, label=f"full g{g0}", outcome="full")
        d1 = send(gens[1], g0 + 1, base=(gens[0], g0), label=f"delta g{g0}->{g0 + 1}",
                  outcome="delta")
        send(gens[2], g0 + 2, base=(gens[1], g0 + 1), label=f"delta g{g0 + 1}->{g0 + 2}",
             outcome="delta")
        if d1:                                     # a duplicate
            label = f"delta g{g0 + 1} again"
            want = judge.receive("sessions", session, d1[0], f"{what} {label}")
            expect(want, "StaleGeneration", label)
        send(gens[4], g0 + 4, base=(gens[3], g0 + 3), label="delta after a lost one",
             outcome="GenerationGap")
        send(gens[0], g0 + 4, base=(gens[3], g0 + 2), label="delta from another base",
             outcome=("BaseMismatch" if digest_of(filt, gens[3]) != digest_of(filt, gens[2])
                      else None))
        send(gens[3], g0 + 3, base=(gens[2], g0 + 2), label=f"delta g{g0 + 2}->{g0 + 3}",
             outcome="delta")
        send(gens[4], g0 + 5, label=f"full g{g0 + 5}", outcome="full")
        send(gens[1], 1, label="full g1, stale", outcome="StaleGeneration")
        send(gens[1], 1, restart=True, label="restart g1", outcome="full")
        # forged deltas: the first delta with a header bit flipped and the checksum
        # recomputed (a keyless peer can do this; 5.2 and 2.5), given to a receiver that
        # holds its base, when the frame still decodes
        for t in range(3 if f0 and d1 else 0):
            tagged = d1[1]["header"]["tag"] != "absent"
            mutant, how = mutate(rng, d1[0], d1[1], tagged, kinds=("flip header",))
            decoded = corpus.oracle.request({"op": "decode", "frame": mutant.hex(),
                                             "key": keyed, "limits": None})
            if not decoded.get("ok"):
                results.skip("forged deltas")
                continue
            forged = judge.open(keyed)
            judge.receive("forged deltas", forged, f0[0], f"{what} forged {t}: its base")
            want = judge.receive("forged deltas", forged, mutant, f"{what} forged {t}: {how}")
            corpus.forged["applied" if want.get("ok") else want.get("error", "?")] += 1


def random_key(rng):
    return bytes(rng.getrandbits(8) for _ in range(32)).hex()


def counting_allowed(oracle_codings):
    return any(c in COUNTER_CODING_NAMES - {"raw"} for c in oracle_codings)


# ---------------------------------------------------------------------------
# (c) Mutants
# ---------------------------------------------------------------------------

MUTATIONS = ("flip header", "flip header", "flip payload", "flip payload", "set byte",
             "delete", "insert", "payload length fixed", "truncate", "append")


def mutate(rng, frame, decoded, tagged, kinds=MUTATIONS):
    """A changed frame with its checksum recomputed (the tag, if any, left stale), or a
    frame cut short or with bytes after it; returns (bytes, what was done)."""
    tag_len = 16 if tagged else 0
    body = bytearray(frame[:len(frame) - 4 - tag_len])
    tag = frame[len(frame) - tag_len:] if tag_len else b""
    h = decoded["header"]
    header_len, payload_len = h["header_len"], h["payload_len"]
    kind = rng.choice(kinds)
    if kind == "truncate":
        cut = rng.randrange(0, len(frame))
        return frame[:cut], f"cut to {cut} bytes"
    if kind == "append":
        return frame + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 3))), kind
    if kind == "flip header" or (kind == "flip payload" and payload_len == 0):
        i = rng.randrange(header_len)
        body[i] ^= 1 << rng.randrange(8)
        what = f"bit flipped in header byte {i}"
    elif kind == "flip payload":
        i = header_len + rng.randrange(payload_len)
        body[i] ^= 1 << rng.randrange(8)
        what = f"bit flipped in payload byte {i - header_len}"
    elif kind == "set byte":
        i = rng.randrange(len(body))
        body[i] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.getrandbits(8)))
        what = f"byte {i} set to {body[i]}"
    elif kind == "delete":
        i = rng.randrange(len(body))
        n = rng.randint(1, 3)
        del body[i:i + n]
        what = f"{n} byte(s) deleted at {i}"
    elif kind == "insert":
        i = rng.randrange(len(body) + 1)
        n = rng.randint(1, 3)
        body[i:i] = bytes(rng.getrandbits(8) for _ in range(n))
        what = f"{n} byte(s) inserted at {i}"
    else:                                          # the payload changes length, L follows
        payload = bytearray(body[header_len:])
        if payload and rng.random() < 0.5:
            i = rng.randrange(len(payload))
            n = rng.randint(1, min(4, len(payload)))
            del payload[i:i + n]
            what = f"{n} payload byte(s) deleted at {i}, the length field fixed"
        else:
            i = rng.randrange(len(payload) + 1)
            n = rng.randint(1, 4)
            payload[i:i] = bytes(rng.getrandbits(8) for _ in range(n))
            what = f"{n} payload byte(s) inserted at {i}, the length field fixed"
        length_field = varint(payload_len)
        head = body[:header_len - len(length_field)]
        body = bytearray(head + varint(len(payload)) + payload)
    return bytes(body) + struct.pack("<I", crc32c(body)) + tag, what


def run_mutants(judge, corpus, count, rng):
    if not corpus.frames:
        return collections.Counter()
    outcomes = collections.Counter()
    for i in range(count):
        frame, key, decoded = rng.choice(corpus.frames)
        tagged = decoded["header"]["tag"] != "absent"
        mutant, what = mutate(rng, frame, decoded, tagged)
        use_key = key if (key is not None and rng.random() < 0.5) else None
        want = judge.decode("mutants", mutant, use_key, what=f"mutant {i}: {what}")
        outcomes["accepted" if want.get("ok") else want.get("error", "?")] += 1
    return outcomes


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def default_oracle():
    cli = os.environ.get("BLOOMWIRE_CLI") or os.path.join(REPO, "target", "debug", "bloomwire")
    return f"{cli} conform"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--adapter", required=True, help="the command of the adapter under test")
    ap.add_argument("--oracle", default=None,
                    help="the library's adapter (default: $BLOOMWIRE_CLI or "
                         "target/debug/bloomwire, with `conform`); started with "
                         "`--profile core|full` appended")
    ap.add_argument("--vectors", default=os.path.join(REPO, "spec", "vectors"))
    ap.add_argument("--seed", type=int, default=1, help="seed of the corpus and mutants")
    ap.add_argument("--frames", type=int, default=200, help="corpus frames to write")
    ap.add_argument("--mutants", type=int, default=3000, help="mutants to judge")
    ap.add_argument("--max-m", type=int, default=40000, help="largest m of the corpus")
    ap.add_argument("--skip", default="", help="categories to skip: vectors,corpus,mutants")
    ap.add_argument("--show", type=int, default=5, help="failures shown per category")
    ap.add_argument("--failures", default=None,
                    help="write every failure, with its whole request, to this file")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))

    impl = Adapter(args.adapter, "adapter", args.timeout)
    hello = impl.request({"op": "hello"})
    if not hello.get("ok") or hello.get("profile") not in ("core", "full"):
        print(f"the adapter does not answer hello: {brief(hello)}")
        print("0 passed, 1 failed")
        return 1
    profile = hello["profile"]
    oracle_cmd = args.oracle or default_oracle()
    oracle = Adapter(f"{oracle_cmd} --profile {profile}", "oracle", args.timeout)
    oracle_hello = oracle.request({"op": "hello"})
    if not oracle_hello.get("ok") or oracle_hello.get("profile") != profile:
        print(f"the oracle `{oracle.command}` does not answer hello in profile {profile}: "
              f"{brief(oracle_hello)}", file=sys.stderr)
        return 2
    writer = oracle
    if profile != "full":
        writer = Adapter(f"{oracle_cmd} --profile full", "oracle (full)", args.timeout)
        writer_hello = writer.request({"op": "hello"})
        if not writer_hello.get("ok"):
            print(f"the oracle `{writer.command}` does not answer hello: "
                  f"{brief(writer_hello)}", file=sys.stderr)
            return 2
        oracle_codings = writer_hello.get("codings", [])
    else:
        oracle_codings = oracle_hello.get("codings", [])

    results = Results(args.show, args.failures)
    judge = Judge(impl, oracle, results)
    rng = random.Random(args.seed)
    print(f"adapter: {hello.get('name')} (`{args.adapter}`), profile {profile}, "
          f"ops {', '.join(hello.get('ops', []))}")
    print(f"oracle:  {oracle_hello.get('name')} (`{oracle.command}`)")

    notes = []
    if "vectors" not in skip:
        tally = run_vectors(judge, args.vectors, profile, results)
        notes.append(f"vectors: {tally['core']} of Core codings, {tally['full']} of "
                     f"Full-only codings")
    corpus = Corpus(writer, results, rng)
    if "corpus" not in skip:
        if not oracle_codings or "encode" not in (writer_hello if profile != "full"
                                                  else oracle_hello).get("ops", []):
            results.check("oracle", "the oracle does not encode", "hello")
        else:
            run_corpus(judge, corpus, hello, oracle_codings, args, rng, results, profile)
            names = {i: n for n, i in CODING_IDS.items()}
            notes.append("corpus codings: " + ", ".join(
                f"{names.get(c, c)} {n}" for c, n in sorted(corpus.coverage.items())))
            missing = [c for c in oracle_codings if CODING_IDS.get(c) not in corpus.coverage]
            if missing:
                notes.append("codings the oracle lists and the corpus lacks (raise --frames): "
                             + ", ".join(missing))
            notes.append("forged deltas (the oracle's answers): " + ", ".join(
                f"{k} {v}" for k, v in corpus.forged.most_common()))
            if "encode" not in hello.get("ops", []):
                notes.append("encode: the adapter does not encode; its checks are skipped")
    if "mutants" not in skip:
        outcomes = run_mutants(judge, corpus, args.mutants, rng)
        notes.append("mutants (the oracle's answers): " + ", ".join(
            f"{k} {v}" for k, v in outcomes.most_common()))
    for side in (impl, oracle, writer):
        side.close()

    print(f"results, profile {profile}:")
    passed, failed = results.report(sys.stdout)
    for note in notes:
        print(f"  {note}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
