"""Frames made by the Rust program (`bloomwire build`) decode in Python, and frames made in
Python decode in the Rust program: the same bits, the same answers, the same bytes."""

import json
import os
import subprocess
import sys

import pytest

import bloomwire
import helpers

N = 20_000


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("keys") / "keys.txt"
    # Byte keys, a CRLF line and an empty line (the empty key) as the program reads them.
    lines = [f"key-{i}".encode() for i in range(N - 2)] + [b"crlf\r", b""]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def keys():
    return [f"key-{i}".encode() for i in range(N - 2)] + [b"crlf", b""]


def build(cli, keys_file, out, *args):
    subprocess.run([cli, "build", "--keys", str(keys_file), "-o", str(out), *args],
                   check=True, capture_output=True)
    return out.read_bytes()


@pytest.mark.parametrize("coding", [None, "raw", "adaptive", "known-p", "known-p-symbols",
                                    "known-p-interleaved"])
def test_rust_frame_decodes_in_python(rust_cli, keys_file, tmp_path, coding):
    args = ["--fpr", "0.01"] + (["--coding", coding] if coding else [])
    frame = build(rust_cli, keys_file, tmp_path / "f.blwr", *args)
    f = bloomwire.decode(frame)
    assert len(f) == N
    assert all(f.contains_many(keys()))
    if coding:
        assert bloomwire.frame_info(frame).coding == coding
    # The same plan and keys in Python give the same frame, byte for byte (the program
    # plans an uncompressed filter for the raw coding: its m and k).
    if coding == "raw":
        info = bloomwire.frame_info(frame)
        mine = bloomwire.BloomFilter(info.m, round(info.k))
    else:
        mine = bloomwire.plan_for_fpr(N, 0.01, max_m=1 << 32).new_filter()
    mine.insert_many(keys())
    assert mine == f
    assert mine.encode(coding) == frame
    # The program's packed bits are Python's.
    subprocess.run([rust_cli, "decode", str(tmp_path / "f.blwr"), "-o", str(tmp_path / "bits")],
                   check=True)
    assert (tmp_path / "bits").read_bytes() == f.bits()


def test_budget_and_hash_families(rust_cli, keys_file, tmp_path):
    frame = build(rust_cli, keys_file, tmp_path / "b.blwr", "--budget-bytes", "25000")
    assert len(frame) <= 25_000
    mine = bloomwire.plan(N, 25_000, max_m=1 << 32).new_filter()
    mine.insert_many(keys())
    assert mine.encode(budget=25_000) == frame

    frame = build(rust_cli, keys_file, tmp_path / "s.blwr", "--seed", "99")
    mine = bloomwire.plan_for_fpr(N, 0.01, seed=99, max_m=1 << 32).new_filter()
    mine.insert_many(keys())
    assert bloomwire.decode(frame) == mine

    key = bytes(range(16))
    frame = build(rust_cli, keys_file, tmp_path / "k.blwr", "--siphash-key", key.hex())
    mine = bloomwire.plan_for_fpr(N, 0.01, siphash_key=key, max_m=1 << 32).new_filter()
    mine.insert_many(keys())
    assert bloomwire.decode(frame) == mine
    assert mine.encode() == frame


def test_python_frame_decodes_in_rust(rust_cli, tmp_path):
    f = bloomwire.plan_for_fpr(5_000, 0.001).new_filter()
    f.insert_many(f"py-{i}" for i in range(5_000))
    path = tmp_path / "py.blwr"
    path.write_bytes(f.encode())
    probe = [f"py-{i}" for i in range(0, 5_000, 500)] + [f"absent-{i}" for i in range(20)]
    # Exit status as grep's: 1 because some key is certainly absent.
    run = subprocess.run([rust_cli, "query", str(path), *probe], capture_output=True,
                         text=True)
    assert run.returncode == 1, run.stderr
    answers = dict(line.split("\t") for line in run.stdout.splitlines())
    assert answers == {k: "maybe" if k in f else "no" for k in probe}
    assert list(answers.values())[:10] == ["maybe"] * 10
    subprocess.run([rust_cli, "decode", str(path), "-o", str(tmp_path / "bits")], check=True)
    assert (tmp_path / "bits").read_bytes() == f.bits()

    c = bloomwire.CountingFilter(10_000, 3, width=4)
    c.insert_many(f"c-{i}" for i in range(500))
    path.write_bytes(c.encode())
    subprocess.run([rust_cli, "decode", str(path), "-o", str(tmp_path / "counters")],
                   check=True)
    assert (tmp_path / "counters").read_bytes() == c.packed()


KEY = bytes(range(100, 132))
OTHER_KEY = bytes(32)


def key_files(tmp_path):
    """The key as the program reads it: 32 raw bytes, and 64 hex digits with a newline."""
    raw, hexed = tmp_path / "key.bin", tmp_path / "key.hex"
    raw.write_bytes(KEY)
    hexed.write_text(KEY.hex() + "\n")
    other = tmp_path / "other.bin"
    other.write_bytes(OTHER_KEY)
    return raw, hexed, other


def test_keyed_rust_frames_decode_in_python(rust_cli, keys_file, tmp_path):
    raw, hexed, _ = key_files(tmp_path)
    mine = bloomwire.plan_for_fpr(N, 0.01, max_m=1 << 32).new_filter()
    mine.insert_many(keys())
    for i, key_file in enumerate((raw, hexed)):
        frame = build(rust_cli, keys_file, tmp_path / f"keyed{i}.blwr", "--key-file",
                      str(key_file), "--metadata-hex", "6e6f64653d31")
        # The same frame as Python's with the key, byte for byte.
        assert frame == mine.encode(key=KEY, metadata=b"node=1")
        # With the right key: verified.
        f = bloomwire.decode(frame, key=KEY)
        assert f == mine and f.header.tag == "verified" and f.header.metadata == b"node=1"
        assert bloomwire.frame_info(frame, key=KEY).tag == "verified"
        receiver = bloomwire.Receiver(key=KEY)
        assert receiver.receive(frame).header.tag == "verified" and receiver.filter == mine
        # Without a key: read, the tag skipped and said to be.
        f = bloomwire.decode(frame)
        assert f == mine and f.header.tag == "unverified"
        assert bloomwire.frame_info(frame).tag == "unverified"
        with pytest.raises(bloomwire.TagNotVerified):
            bloomwire.Receiver(key=KEY).apply(bloomwire.decode_message(frame))
        # With another key: BadTag, at the tag's offset, before the payload is read.
        for decode in (lambda b: bloomwire.decode(b, key=OTHER_KEY),
                       lambda b: bloomwire.decode_message(b, key=OTHER_KEY),
                       lambda b: bloomwire.frame_info(b, key=OTHER_KEY),
                       bloomwire.Receiver(key=OTHER_KEY).receive):
            with pytest.raises(bloomwire.BadTag) as caught:
                decode(frame)
            assert caught.value.offset == len(frame) - 16


def inspect(cli, path, *args):
    run = subprocess.run([cli, "inspect", "--json", str(path), *args], capture_output=True,
                         text=True)
    return run.returncode, json.loads(run.stdout), run.stderr


def test_keyed_python_frames_read_by_the_program(rust_cli, tmp_path):
    raw, hexed, other = key_files(tmp_path)
    f = bloomwire.plan_for_fpr(2_000, 0.01).new_filter()
    f.insert_many(f"py-{i}" for i in range(2_000))
    path = tmp_path / "keyed.blwr"
    path.write_bytes(f.encode(key=KEY, metadata=b"from python", generation=7))
    for key_file in (raw, hexed):
        code, info, _ = inspect(rust_cli, path, "--key-file", str(key_file))
        assert code == 0 and info["tag"] == "verified"
        assert (info["generation"], info["metadata_hex"]) == ("7", b"from python".hex())
        assert info["m"] == f.m and info["n"] == str(f.n)
        run = subprocess.run([rust_cli, "query", "--key-file", str(key_file), str(path),
                              "py-0", "py-1999", "absent"], capture_output=True, text=True)
        answers = dict(line.split("\t") for line in run.stdout.splitlines())
        assert answers == {"py-0": "maybe", "py-1999": "maybe",
                           "absent": "maybe" if "absent" in f else "no"}
        assert run.returncode == (0 if "absent" in f else 1), run.stderr
    # Without a key the program reads it and says the tag was not checked.
    code, info, _ = inspect(rust_cli, path)
    assert code == 0 and info["tag"] == "unverified"
    # With another key it refuses it, naming the bad tag.
    code, info, err = inspect(rust_cli, path, "--key-file", str(other))
    assert code == 1 and info["tag"] == "bad"
    assert "authentication tag" in info["problem"]
    run = subprocess.run([rust_cli, "query", "--key-file", str(other), str(path), "py-0"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == "" and "authentication tag" in run.stderr
    # An untagged frame, to a program given a key: refused for the missing tag.
    path.write_bytes(f.encode())
    code, info, _ = inspect(rust_cli, path, "--key-file", str(raw))
    assert code == 1 and info["tag"] == "absent" and info["problem"]


def test_the_tour_script(rust_cli, tmp_path):
    # The bar: one script plans, builds, encodes, decodes a frame made by the Rust
    # program, and follows a sender's deltas.
    script = os.path.join(os.path.dirname(helpers.HERE), "examples", "tour.py")
    run = subprocess.run([sys.executable, script, "--cli", rust_cli, "--dir", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "all checks passed" in run.stdout
