"""Bulk insert and query from Arrow and NumPy columns: every value hashes the bytes a scalar
insert of it hashes, for every supported type, with nulls, chunks and offsets."""

import subprocess
import sys
import textwrap

import pytest

import bloomwire
import helpers

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

INT_TYPES = [
    (pa.int8(), 1, True), (pa.uint8(), 1, False), (pa.int16(), 2, True),
    (pa.uint16(), 2, False), (pa.int32(), 4, True), (pa.uint32(), 4, False),
    (pa.int64(), 8, True), (pa.uint64(), 8, False),
]


def int_values(width, signed):
    lo, hi = (-(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1) if signed \
        else (0, (1 << (8 * width)) - 1)
    return sorted({lo, hi, 0, 1, 2, 100 % (hi + 1), lo // 3, hi // 7, *range(0, 50)})


def scalar_key(value, width=None, signed=None):
    """The key of a value inserted alone, as the README documents it."""
    if width is not None:
        return value.to_bytes(width, "little", signed=signed)
    return value


def filters(counting):
    if counting:
        return bloomwire.CountingFilter(1 << 16, 3), bloomwire.CountingFilter(1 << 16, 3)
    return bloomwire.BloomFilter(1 << 16, 3), bloomwire.BloomFilter(1 << 16, 3)


def check(array, keys, counting=False):
    """Insert the column into one filter and the scalar keys (None: null, skipped) into
    another; they must be equal, and the column's queries the scalar queries."""
    bulk, scalar = filters(counting)
    bulk.insert_array(array)
    for k in keys:
        if k is not None:
            scalar.insert(k)
    assert bulk == scalar and bulk.n == sum(k is not None for k in keys)
    probe = scalar.copy()
    hits = bulk.contains_array(array)
    expected = [k is not None and scalar.contains(k) for k in keys]
    assert list(hits.to_pylist() if hasattr(hits, "to_pylist") else hits.tolist()) == expected
    assert all(expected[i] for i, k in enumerate(keys) if k is not None)
    assert probe == scalar


@pytest.mark.parametrize("counting", [False, True])
@pytest.mark.parametrize("ty,width,signed", INT_TYPES, ids=lambda t: str(t))
def test_arrow_integers(ty, width, signed, counting):
    values = int_values(width, signed)
    check(pa.array(values, ty), [scalar_key(v, width, signed) for v in values], counting)


@pytest.mark.parametrize("ty", [pa.string(), pa.large_string()], ids=str)
def test_arrow_strings(ty):
    values = ["", "a", "é", "日本", "key-42", "x" * 1000]
    check(pa.array(values, ty), [v.encode() for v in values])
    # A str key inserted alone is its UTF-8 bytes too.
    f = bloomwire.BloomFilter(1 << 12, 2)
    f.insert_array(pa.array(values, ty))
    assert all(v in f for v in values)


@pytest.mark.parametrize("ty", [pa.binary(), pa.large_binary(), pa.binary(3)], ids=str)
def test_arrow_binary(ty):
    values = [b"abc", b"\x00\x01\x02", b"zz\x00", b"\xff\xfe\xfd"]
    if ty == pa.binary() or ty == pa.large_binary():
        values += [b"", b"longer value"]
    # Fixed-size binary keeps every byte, trailing NULs too (as pyarrow's values do).
    check(pa.array(values, ty), values)


@pytest.mark.parametrize("ty", ["string_view", "binary_view"])
def test_arrow_views(ty):
    if not hasattr(pa, ty):
        pytest.skip(f"pyarrow {pa.__version__} has no {ty}")
    # Short values live in their views, longer ones in the data buffers.
    values = ["", "short", "exactly12byt", "thirteen byte", "é" * 20, None, "x" * 1000]
    if ty == "binary_view":
        values = [None if v is None else v.encode() for v in values]
    array = pa.array(values, getattr(pa, ty)())
    keys = [None if v is None else (v.encode() if isinstance(v, str) else v) for v in values]
    check(array, keys)
    check(array.slice(2, 4), keys[2:6])
    check(pa.chunked_array([array, array.slice(3)]), keys + keys[3:])


def test_arrow_nulls_are_skipped():
    values = ["a", None, "b", None, None, "c"]
    check(pa.array(values, pa.string()), [None if v is None else v.encode() for v in values])
    ints = [1, None, -5]
    check(pa.array(ints, pa.int32()), [None if v is None else scalar_key(v, 4, True)
                                       for v in ints])
    f = bloomwire.BloomFilter(1 << 10, 2)
    f.insert("")  # a null is not the empty key
    assert f.contains_array(pa.array([None, ""], pa.string())).to_pylist() == [False, True]


def test_arrow_sliced_arrays_with_offsets():
    values = [f"v{i}" if i % 7 else None for i in range(200)]
    array = pa.array(values, pa.large_string())
    for start, length in [(0, 200), (3, 50), (63, 70), (199, 1), (10, 0)]:
        part = array.slice(start, length)
        check(part, [None if v is None else v.encode() for v in values[start:start + length]])
    ints = pa.array(list(range(-100, 100)), pa.int16()).slice(17, 33)
    check(ints, [scalar_key(v, 2, True) for v in range(-83, -50)])
    fixed = pa.array([bytes([i, i, i]) for i in range(50)], pa.binary(3)).slice(5, 9)
    check(fixed, [bytes([i, i, i]) for i in range(5, 14)])


def test_arrow_chunked_arrays():
    chunks = [["a", "b"], [], ["c", None, "d"], ["e"]]
    chunked = pa.chunked_array(chunks, pa.string())
    flat = [v for c in chunks for v in c]
    check(chunked, [None if v is None else v.encode() for v in flat])
    result = bloomwire.BloomFilter(1 << 10, 2).contains_array(chunked)
    assert isinstance(result, pa.BooleanArray) and len(result) == len(flat)
    sliced = chunked.slice(1, 4)  # b, c, None, d
    check(sliced, [b"b", b"c", None, b"d"])
    ints = pa.chunked_array([[1, 2], [3]], pa.uint64())
    check(ints, [scalar_key(v, 8, False) for v in (1, 2, 3)])


def test_arrow_record_batch_column_and_table_column():
    table = pa.table({"k": ["x", "y"], "v": [1, 2]})
    check(table.column("k"), [b"x", b"y"])
    check(table.to_batches()[0].column(1), [scalar_key(v, 8, True) for v in (1, 2)])


def test_unsupported_arrow_types_are_type_errors():
    f = bloomwire.BloomFilter(1 << 10, 2)
    for array in (pa.array([1.5]), pa.array([True]), pa.array(["a"]).dictionary_encode(),
                  pa.array([[1]])):
        with pytest.raises(TypeError):
            f.insert_array(array)
    with pytest.raises(TypeError):
        f.insert_array(["a", "b"])  # a list: insert_many is for iterables
    assert f.n == 0


@pytest.mark.parametrize("counting", [False, True])
@pytest.mark.parametrize("dtype", ["i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8"])
def test_numpy_integers(dtype, counting):
    dt = np.dtype(dtype)
    values = int_values(dt.itemsize, dt.kind == "i")
    array = np.array(values, dtype=dt)
    keys = [scalar_key(v, dt.itemsize, dt.kind == "i") for v in values]
    check(array, keys, counting)
    # The same values from Arrow give the same filter.
    a, b = filters(counting)
    a.insert_array(array)
    b.insert_array(pa.array(array))
    assert a == b
    hits = a.contains_array(array)
    assert isinstance(hits, np.ndarray) and hits.dtype == np.bool_ and hits.all()


def test_numpy_bytes_values_are_as_numpy_returns_them():
    array = np.array([b"abc", b"a", b"", b"a\x00b"], dtype="S4")
    # a[i] drops the NUL padding (and NUL bytes at the end of a value): so does the key.
    assert [bytes(v) for v in array] == [b"abc", b"a", b"", b"a\x00b"]
    check(array, [bytes(v) for v in array])


def test_numpy_strided_and_sliced_views():
    base = np.arange(100, dtype="<i8")
    check(base[::3], [scalar_key(int(v), 8, True) for v in base[::3]])
    check(base[10:20], [scalar_key(int(v), 8, True) for v in base[10:20]])
    two_d = np.arange(12, dtype="<i4").reshape(3, 4)
    check(two_d[:, 1], [scalar_key(int(v), 4, True) for v in two_d[:, 1]])
    with pytest.raises(ValueError):
        bloomwire.BloomFilter(64, 1).insert_array(two_d)
    with pytest.raises(ValueError):
        bloomwire.BloomFilter(64, 1).insert_array(base[::-1])


def test_numpy_unsupported_dtypes_are_type_errors():
    f = bloomwire.BloomFilter(1 << 10, 2)
    for array in (np.array([1.5]), np.array(["text"]), np.array([True]),
                  np.array([b"x"], dtype=object), np.array([1], dtype=">i4"),
                  np.ma.masked_array([1, 2], mask=[0, 1])):
        with pytest.raises(TypeError):
            f.insert_array(array)
    assert f.n == 0


def test_opaque_filters_refuse_columns():
    f = bloomwire.BloomFilter.from_bits(bytes(8), 64, 1, opaque=True)
    with pytest.raises(bloomwire.OpaqueHashFamily):
        f.insert_array(pa.array(["a"]))
    with pytest.raises(bloomwire.OpaqueHashFamily):
        f.contains_array(np.array([1], dtype="<i8"))


def test_large_column_hashes_with_the_gil_released():
    # A column of 2M keys hashes while another thread keeps running (helpers.ticks_while).
    keys = pa.array(np.arange(2_000_000, dtype="<i8"))
    f = bloomwire.BloomFilter(1 << 24, 3)

    def insert_and_query():
        f.insert_array(keys)
        assert f.contains_array(keys).to_numpy(zero_copy_only=False).all()

    during = helpers.ticks_while(insert_and_query)
    assert f.n == 2_000_000 and during >= 5, during


def test_core_package_imports_without_arrow_or_numpy():
    # A child process in which importing pyarrow, numpy, pandas, dask or pyspark fails.
    code = textwrap.dedent("""
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {"pyarrow", "numpy", "pandas", "dask", "pyspark"}:
                    raise ImportError(f"blocked: {name}")

        sys.meta_path.insert(0, Block())
        import pickle
        import bloomwire
        f = bloomwire.plan_for_fpr(1000, 0.01).new_filter()
        f.insert_many(["a", "b"])
        assert pickle.loads(pickle.dumps(f)) == f and "a" in f
        try:
            f.insert_array(["a"])
        except TypeError:
            pass
        blocked = [m for m in ("pyarrow", "numpy", "pandas", "dask", "pyspark")
                   if m in sys.modules]
        assert not blocked, blocked
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_an_array_interface_that_is_not_numpys_is_refused():
    # Its data pointer could name any address (the interpreter crashed before): only
    # numpy.ndarray's own interface is read, and a subclass's override is ignored.
    class Fake:
        __array_interface__ = {"shape": (4,), "typestr": "<u8", "data": (8, False),
                               "version": 3}

    f = bloomwire.BloomFilter(1 << 16, 3)
    for call in (lambda: f.insert_array(Fake()), lambda: f.contains_array(Fake()),
                 lambda: bloomwire.Sender().next_frame_with_flips(Fake(), 3)):
        with pytest.raises(TypeError, match="not a numpy.ndarray"):
            call()

    class Sneaky(np.ndarray):
        @property
        def __array_interface__(self):
            return {"shape": (4,), "typestr": "<u8", "data": (8, False), "version": 3}

    values = np.arange(4, dtype="<u8")
    g = bloomwire.BloomFilter(1 << 16, 3)
    g.insert_array(values.view(Sneaky))
    f.insert_array(values)
    assert f == g and g.count_ones() > 0
