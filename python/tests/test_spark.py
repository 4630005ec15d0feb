"""bloomwire.spark: one filter from a PySpark DataFrame column in local[2], equal to one
process's filter. Spark needs Java: without it these tests skip, saying so."""

import os
import shutil
import sys

import pytest

import bloomwire
import helpers

pytest.importorskip("pyspark", reason="pyspark is not installed (the 'spark' extra)")
pa = pytest.importorskip("pyarrow")

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java: no `java` on PATH and no JAVA_HOME; install a JDK "
                "(17 or later) to run the Spark tests", allow_module_level=True)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import bloomwire.spark  # noqa: E402

N = 30_000


@pytest.fixture(scope="module")
def spark():
    # The Python workers run this interpreter (the test venv's), not PATH's python3:
    # PySpark reads PYSPARK_PYTHON when the context starts.
    previous = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("bloomwire-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    if previous is None:
        del os.environ["PYSPARK_PYTHON"]
    else:
        os.environ["PYSPARK_PYTHON"] = previous


@pytest.fixture(scope="module")
def keys_df(spark):
    return (spark.range(0, N, numPartitions=6)
            .select(F.concat(F.lit("key-"), F.col("id").cast("string")).alias("key"),
                    F.col("id")))


def expected_keys():
    return pa.array([f"key-{i}" for i in range(N)])


def test_string_column_equals_one_process(keys_df):
    plan = bloomwire.plan_for_fpr(N, 0.01)
    f = bloomwire.spark.build_filter(keys_df, "key", plan)
    one = plan.new_filter()
    one.insert_array(expected_keys())
    assert isinstance(f, bloomwire.BloomFilter) and f == one and f.n == N


def test_integer_column_with_n_counted_and_frame_result(keys_df):
    frame = bloomwire.spark.build_filter(keys_df, "id", n="count", fpr=0.001, result="frame",
                                         depth=3)
    plan = bloomwire.plan_for_fpr(N, 0.001)
    one = plan.new_filter()
    one.insert_many(i.to_bytes(8, "little", signed=True) for i in range(N))
    assert bloomwire.decode(frame) == one
    assert frame == one.encode()  # byte for byte the frame one process sends


def test_nulls_are_skipped(spark):
    df = spark.createDataFrame([("a",), (None,), ("b",)], "k string").repartition(2)
    f = bloomwire.spark.build_filter(df, "k", bloomwire.plan_for_fpr(10, 0.01))
    assert f.n == 2 and "a" in f and "b" in f


def test_counting_filters(keys_df):
    plan = bloomwire.plan_for_fpr(N, 0.01)
    c = bloomwire.spark.build_filter(keys_df.union(keys_df), "key", plan, counting_width=4)
    one = plan.new_counting_filter(4)
    one.insert_array(expected_keys())
    one.insert_array(expected_keys())
    assert isinstance(c, bloomwire.CountingFilter) and c == one


def test_partial_frames_are_small(keys_df):
    plan = bloomwire.plan_for_fpr(N, 0.01)
    spec = bloomwire._partials.FilterSpec.of(plan)
    frames = [bytes(r.frame) for r in bloomwire.spark.partial_frames(keys_df, "key", spec)
              .collect()]
    assert len(frames) == 6 and sum(map(len, frames)) < plan.m / 8


KEY = bytes(range(32))


@pytest.mark.parametrize("coding", ["auto", "positional"])
def test_by_chunk_is_the_frame_one_process_encodes(keys_df, coding):
    plan = bloomwire.plan_for_fpr(N, 0.01)  # 3 million bits (k = 1): 12 chunks of 2^18
    frame = bloomwire.spark.build_chunked(keys_df, "key", plan, chunk_shift=18, coding=coding,
                                          metadata=b"spark", key=KEY, generation=2)
    one = plan.new_filter()
    one.insert_array(expected_keys())
    info = bloomwire.frame_info(frame, key=KEY)
    assert (info.chunk_shift, info.n) == (18, N)
    assert coding == "auto" or info.coding == coding
    # "auto": the library's choice, the coding one process chooses in the same chunks.
    assert frame == one.encode(None if coding == "auto" else coding, chunk_shift=18,
                               metadata=b"spark", key=KEY, generation=2)


def test_by_chunk_of_integers_dense_and_automatically(keys_df):
    # m held to 400 000 bits: a dense filter, coded dense with q0 in a second job.
    plan = bloomwire.plan_for_fpr(N, 0.01, max_m=400_000)
    frame = bloomwire.spark.build_chunked(keys_df, "id", plan, chunk_shift=16,
                                          coding="known-p-interleaved")
    one = plan.new_filter()
    one.insert_many(i.to_bytes(8, "little", signed=True) for i in range(N))
    assert frame == one.encode("known-p-interleaved", chunk_shift=16)
    # Python workers of 256 KiB cannot hold 3 million bits: build_filter goes by chunk.
    plan = bloomwire.plan_for_fpr(N, 0.01)
    shift = plan.chunked_build(1 << 18)
    assert shift == 20
    f = bloomwire.spark.build_filter(keys_df, "key", plan, worker_memory=1 << 18)
    one = plan.new_filter()
    one.insert_array(expected_keys())
    assert f == one
    with pytest.raises(ValueError):
        bloomwire.spark.build_chunked(keys_df, "key", plan)  # no worker memory known
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.spark.build_chunked(keys_df, "key", plan, chunk_shift=18, coding="small")


def test_python_worker_memory_is_read_from_the_session(spark, keys_df):
    assert bloomwire.spark.python_worker_memory(keys_df) is None  # not set here

    class Conf:
        def __init__(self, value):
            self.value = value

        def get(self, name):
            assert name == "spark.executor.pyspark.memory"
            return self.value

    def df_with(value):
        class DF:
            class sparkSession:
                class sparkContext:
                    @staticmethod
                    def getConf():
                        return Conf(value)
        return DF()

    for value, expected in [("512m", 512 << 20), ("2g", 2 << 30), ("1.5g", 3 << 29),
                            ("300", 300 << 20), ("64k", 64 << 10), ("1gb", 1 << 30)]:
        assert bloomwire.spark.python_worker_memory(df_with(value)) == expected, value


# Membership and semi-joins: the frame broadcast once, decoded once per Python worker.

def _small_filter(plan, counting=False):
    f = plan.new_counting_filter(4) if counting else plan.new_filter()
    f.insert_array(pa.array([f"key-{i}" for i in range(0, N, 2)]))  # the even keys
    return f


def _expected_ids(f):
    found = f.contains_array(expected_keys()).to_numpy(zero_copy_only=False)
    return {i for i in range(N) if found[i]}


def _ids(df):
    return {row[0] for row in df.select("id").collect()}


@pytest.mark.parametrize("form", ["auto", "pandas"])
def test_contains_is_the_bulk_query(keys_df, form):
    plan = bloomwire.plan_for_fpr(N // 2, 0.01)
    f = _small_filter(plan)
    col = bloomwire.spark.contains("key", f, form=form)
    rows = keys_df.select("id", col.alias("hit")).collect()
    assert {r[0] for r in rows if r[1]} == _expected_ids(f)
    assert len(rows) == N


def test_contains_of_integers_and_nulls(spark):
    plan = bloomwire.plan_for_fpr(1000, 0.01)
    f = plan.new_filter()
    f.insert_array(pa.array(range(1000), pa.int64()))
    df = spark.createDataFrame([(i,) for i in range(0, 2000, 7)] + [(None,)], "v bigint")
    hits = df.select("v", bloomwire.spark.contains(F.col("v"), f).alias("hit")).collect()
    assert all(r[1] for r in hits if r[0] is not None and r[0] < 1000)
    assert [r[1] for r in hits if r[0] is None] == [False]
    assert sum(1 for r in hits if r[1] and r[0] is not None and r[0] >= 1000) < 10
    # A pandas UDF would see these keys as float64 (nulls): refused, never rounded.
    with pytest.raises(Exception, match="float64"):
        df.select(bloomwire.spark.contains("v", f, form="pandas")).collect()


def test_semi_join_from_a_small_dataframe(spark, keys_df):
    small = (spark.range(0, N, 2, numPartitions=3)
             .select(F.concat(F.lit("key-"), F.col("id").cast("string")).alias("name")))
    plan = bloomwire.plan_for_fpr(N // 2, 0.01)
    kept = bloomwire.spark.semi_join(keys_df, small, "key", small_on="name", plan=plan)
    assert _ids(kept) == _expected_ids(_small_filter(plan))
    assert len(_ids(kept)) - N // 2 < 0.03 * N
    assert kept.join(small, kept["key"] == small["name"]).count() == N // 2


def test_counting_chunked_and_tagged_frames(spark, keys_df):
    plan = bloomwire.plan_for_fpr(N // 2, 0.01)
    want = _expected_ids(_small_filter(plan))
    counting = _small_filter(plan, counting=True)
    assert _ids(bloomwire.spark.semi_join(keys_df, counting, "key")) == want
    assert _ids(bloomwire.spark.semi_join(keys_df, counting.encode(), "key")) == want
    small = (spark.range(0, N, 2, numPartitions=3)
             .select(F.concat(F.lit("key-"), F.col("id").cast("string")).alias("key")))
    chunked = bloomwire.spark.build_chunked(small, "key", plan, chunk_shift=16)
    assert bloomwire.frame_info(chunked).chunk_shift == 16 and plan.m > 2 << 16
    assert _ids(bloomwire.spark.semi_join(keys_df, chunked, "key")) == want
    key = bytes(range(32))
    tagged = _small_filter(plan).encode(key=key)
    with pytest.raises(ValueError, match="tagged"):
        bloomwire.spark.semi_join(keys_df, tagged, "key")
    assert _ids(bloomwire.spark.semi_join(keys_df, tagged, "key", key=key)) == want


def test_the_semijoin_example_at_a_small_size(spark):
    module = helpers.example("spark_semijoin")
    out = module.run(200_000, 20_000, partitions=4, spark=spark, probes=2000, quiet=True)
    assert out["rows_kept"] == out["exact_rows"] + out["false_positives"]
    assert out["false_positives"] >= 0
    assert out["join_rows"] == out["exact_rows"]
    assert helpers.example("example_common").within_plan(out)
    b = out["spark_bloom_filter"]
    assert b["serialized_bytes"] > 0 and 0 <= b["measured_fpr"] <= 1
