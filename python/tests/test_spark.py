"""bloomwire.spark: one filter from a PySpark DataFrame column in local[2], equal to one
process's filter. Spark needs Java: without it these tests skip, saying so."""

import os
import shutil
import sys

import pytest

import bloomwire

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
