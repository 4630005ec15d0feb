#!/usr/bin/env python3
"""The cases of the C tests, read from the vectors' manifests (and the program's frames),
flattened to lines the test program reads without a JSON parser.

    cases.py VECTORS_DIR [PROGRAM_FRAMES.tsv] > cases.txt

Lines (fields separated by tabs, '-' for none):
    A frame kind counting sha ones base_frame result_sha key_hex query_refused
    K expected key_hex          (the keys of the case above: 1 member, 0 not)
    R file error field apply_to key_hex needed
    P frame keys_file m ones coding n counting   (frames the program made)
"""
import glob
import json
import os
import sys


def opt(value):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def main():
    vectors = sys.argv[1]
    out = []
    for path in sorted(glob.glob(os.path.join(vectors, "accept", "*.json"))):
        m = json.load(open(path))
        p = m["params"]
        counting = p.get("filter_type") == "counting"
        sha = m.get("counters_sha256") if counting else m.get("bits_sha256")
        result = m.get("result_counters_sha256") if counting else m.get("result_bits_sha256")
        out.append("\t".join(["A", m["frame"], p["kind"], opt(counting), opt(sha),
                              opt(m.get("ones")), opt(m.get("base_frame")), opt(result),
                              opt(m.get("key_hex")), opt(bool(m.get("query_refused")))]))
        for key in m.get("member_keys", []) + m.get("other_keys", []):
            out.append("\t".join(["K", opt(key["expected"]), key["key_hex"] or "-"]))
    rejects = json.load(open(os.path.join(vectors, "reject", "manifest.json")))
    for name, r in sorted(rejects.items()):
        out.append("\t".join(["R", name, r["error"], opt(r.get("field")), opt(r.get("apply_to")),
                              opt(r.get("key_hex")), opt(r.get("needed"))]))
    if len(sys.argv) > 2:
        # frame, keys file, and the program's `inspect --json` of the frame.
        for line in open(sys.argv[2]):
            frame, keys, inspect = line.rstrip("\n").split("\t")
            i = json.load(open(inspect))
            out.append("\t".join(["P", frame, keys, opt(i["m"]), opt(i["ones"]), i["coding"],
                                  opt(i["n"]), opt(i["filter_type"] == "counting")]))
    print("\n".join(out))


if __name__ == "__main__":
    main()
