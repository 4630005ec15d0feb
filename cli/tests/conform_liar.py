"""An adapter that lies: it passes the requests to the adapter given as its arguments and
changes some answers, so that a test can check that the conformance kit notices."""

import json
import subprocess
import sys

inner = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for line in sys.stdin:
    inner.stdin.write(line)
    inner.stdin.flush()
    answer = json.loads(inner.stdout.readline())
    request = json.loads(line)
    if answer.get("header", {}).get("coding") == 9:           # coding 9 decodes otherwise
        answer["digest"] = "00000000"
    if answer.get("field") == "chunk shift":                  # another field named
        answer["field"] = "flags"
    if answer.get("error") == "BaseMismatch":                 # another class
        answer["error"] = "ResultMismatch"
    if request.get("op") == "encode" and request.get("coding") == "escape" and answer["ok"]:
        answer["frame"] = answer["frame"][:-2] + "00"          # another frame written
    print(json.dumps(answer), flush=True)
