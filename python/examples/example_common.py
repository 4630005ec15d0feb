"""What the examples share: their keys "key-0", "key-1", ... made with pyarrow, the ranges
of their partitions, sizes in MB, CPU and wall times, and the semi-joins' command line and
check of the measured false positive rate against the plan's.

Not an example itself: the examples import it from their folder, which is on the path when
they run as scripts (and in the worker processes a Dask LocalCluster starts from them).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def make_keys(lo: int, hi: int) -> Any:
    """The keys "key-{i}" for i in [lo, hi), as an Arrow string array."""
    ids = pc.cast(pa.array(np.arange(lo, hi, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise("key-", ids, "")


def make_partition(bounds: tuple[int, int]) -> Any:
    """A partition of a pandas DataFrame of the keys in [lo, hi): its column "key",
    Arrow-backed (no copy into Python objects)."""
    import pandas as pd

    return pd.DataFrame({"key": make_keys(*bounds).to_pandas(types_mapper=pd.ArrowDtype)})


def ranges(keys: int, partitions: int) -> list[tuple[int, int]]:
    """[lo, hi) of each of `partitions` partitions of `keys` keys, the last one shorter."""
    step = -(-keys // partitions)
    return [(lo, min(lo + step, keys)) for lo in range(0, keys, step)]


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def cpu_seconds() -> float:
    """This process's user and system CPU time."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(what: str, fn: Any, times: dict[str, float]) -> Any:
    """`fn()`, its wall time put in `times[what]`."""
    start = time.perf_counter()
    out = fn()
    times[what] = time.perf_counter() - start
    return out


def chunked_parser(description: str) -> argparse.ArgumentParser:
    """The chunked builds' command line: the keys, the rate, the largest m and the
    partitions (each example adds its own options, then `--coding`)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--keys", type=int, default=40_000_000)
    ap.add_argument("--fpr", type=float, default=0.0047)
    ap.add_argument("--max-m", type=int, default=1 << 33)
    ap.add_argument("--partitions", type=int, default=20)
    return ap


def print_plan(keys: int, partitions: int, plan: Any, raw: int, bit_array: str = "") -> None:
    """The builds' first lines: the keys, the partitions, and the plan: m, the bytes of its
    bit array (`raw`, after `bit_array`), k and the rate."""
    print(f"keys                  {keys:,}")
    print(f"partitions            {partitions}")
    print(f"plan                  m = {plan.m:,} bits ({bit_array}{mb(raw)}), k = {plan.k:g}, "
          f"fpr = {plan.fpr:.4g}")


def print_partial_frames(sizes: list[int], raw: int, seconds: float) -> None:
    """The line of a build's partial frames: their bytes against the bit array's, `raw`."""
    print(f"partial frames        {len(sizes)} frames, {mb(sum(sizes))} "
          f"({sum(sizes) / len(sizes) / raw:.1%} of m/8 each on average); "
          f"{seconds:.2f} s to make them alone (keys, partial filters, frames)")


def print_bit_array(raw: int, moved: str, moved_bytes: int, info: Any) -> None:
    """The line of the chunked builds' bit array (`raw` bytes) and what was `moved`, and the
    payloads of the frame (its `frame_info`), against it."""
    print(f"bit array             {mb(raw)}: {moved} {moved_bytes / raw:.1%} of it, "
          f"payloads {info.payload_len / raw:.1%}")


def finish_build(frame: bytes, raw: int, info: Any, same: bool, what: str,
                 chunks: int | None = None) -> None:
    """The line of the final frame (its bytes against the bit array's, `raw`, its coding
    from `info`, its `frame_info`, and, built by `chunks`, the chunks and n), then an exit
    with an error unless the build and the one process made the `same` `what`."""
    more = "" if chunks is None else \
        f", {chunks} chunks of 2^{info.chunk_shift} bits, n = {info.n:,}"
    print(f"final frame           {len(frame):,} bytes ({len(frame) / raw:.1%} of m/8), "
          f"coding {info.coding}{more}")
    if not same:
        raise SystemExit(f"the {what} differ")


def print_semijoin_head(out: dict[str, Any], keys: str = "", frame: str = "") -> None:
    """The semi-join examples' first lines: the sizes (the `keys`' kind after them), the
    plan and the frame (`frame` said of it), the rows kept and the join's."""
    print(f"{out['engine']}: big side {out['big_rows']:,} rows in {out['partitions']} "
          f"partitions, small side {out['small_keys']:,} keys{keys}")
    print(f"plan: m = {out['plan']['m']:,} bits, k = {out['plan']['k']}, "
          f"rate {out['plan']['fpr']:.5f}; frame {out['frame_bytes']:,} B{frame}, "
          f"built in {out['seconds']['build']:.2f} s")
    print(f"rows kept {out['rows_kept']:,} = exact {out['exact_rows']:,} + false positives "
          f"{out['false_positives']:,}; measured rate {out['measured_fpr']:.5f}")
    if "join_rows" in out:
        print(f"exact join rows {out['join_rows']:,}")


def semijoin_parser(description: str) -> argparse.ArgumentParser:
    """The semi-join examples' command line: the sizes, the partitions and the rate (each
    example adds its own options, then `--json`)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--big", type=int, default=10_000_000, help="rows of the big side")
    parser.add_argument("--small", type=int, default=1_000_000, help="keys of the small side")
    parser.add_argument("--partitions", type=int, default=0,
                        help="partitions of the big side [default: one per 2M rows, 4+]")
    parser.add_argument("--fpr", type=float, default=0.01)
    return parser


def semijoin_partitions(args: argparse.Namespace) -> int:
    """`--partitions`, or one per 2M rows of the big side and at least 4."""
    return int(args.partitions or max(4, -(-args.big // 2_000_000)))


def within_plan(out: dict[str, Any], sigmas: float = 5.0) -> bool:
    """Whether the measured rate is within the plan's, with a binomial margin."""
    p = out["plan"]["fpr"]
    negatives = out["big_rows"] - out["exact_rows"]
    margin = sigmas * math.sqrt(p * (1 - p) / max(negatives, 1)) + 1 / max(negatives, 1)
    return bool(out["measured_fpr"] <= p + margin)


def semijoin_done(out: dict[str, Any], as_json: bool) -> None:
    """The figures as JSON if asked; exit with an error when the rate is above the plan's."""
    if as_json:
        print(json.dumps(out, indent=1))
    if not within_plan(out):
        raise SystemExit(f"measured rate {out['measured_fpr']} above the plan's")
