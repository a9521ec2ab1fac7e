"""Real consumers read dfbuffer's outputs: to_interchange's object and to_arrow's.
Each test skips when its library is missing (the `consumers` extra installs them)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import dfbuffer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

_X = [1, 2, 3]
_Y = [2.0, 3.0, 1.0]


def _sources():
    t = pa.table({"x": _X, "y": _Y, "s": ["a", "b", "a"]})
    return {"to_interchange": dfbuffer.to_interchange(t), "to_arrow": dfbuffer.to_arrow(t)}


@pytest.fixture(params=["to_interchange", "to_arrow"])
def out(request):
    return _sources()[request.param]


def test_pyarrow_reads(out):
    t = pa.table(out)
    assert t["x"].to_pylist() == _X and t["s"].to_pylist() == ["a", "b", "a"]


def test_polars_reads(out):
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(out)
    assert df["x"].to_list() == _X and df["y"].to_list() == _Y


def test_duckdb_reads(out):
    duckdb = pytest.importorskip("duckdb")
    src = out  # noqa: F841 - DuckDB finds the local by name
    assert duckdb.sql("select sum(x), max(s) from src").fetchall() == [(6, "b")]


def test_narwhals_reads(out):
    nw = pytest.importorskip("narwhals")
    df = nw.from_arrow(out, backend="pyarrow")
    assert df["x"].to_list() == _X


def test_narwhals_interchange_level_selects():
    nw1 = pytest.importorskip("narwhals.stable.v1")
    ix = _sources()["to_interchange"]
    df = nw1.from_native(ix, eager_or_interchange_only=True)
    assert df.select("x", "y").columns == ["x", "y"]


def test_plotly_builds_a_figure(out):
    px = pytest.importorskip("plotly.express")
    fig = px.scatter(out, x="x", y="y")
    assert list(fig.data[0].x) == _X
    assert np.allclose(list(fig.data[0].y), _Y)


def test_seaborn_plots(out):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    sns = pytest.importorskip("seaborn")
    import matplotlib.pyplot as plt

    ax = sns.scatterplot(data=out, x="x", y="y")
    try:
        assert ax.collections[0].get_offsets().tolist() == [[1, 2], [2, 3], [3, 1]]
    finally:
        plt.close("all")


@pytest.mark.parametrize("make", [dfbuffer.to_interchange, dfbuffer.to_arrow],
                         ids=["to_interchange", "to_arrow"])
def test_numpy_reads_a_matrix_and_refuses_copy_false(make):
    # numpy.asarray (what scikit-learn calls): to_matrix of the columns, always a copy
    src = make(pa.table({"x": _X, "y": _Y}))
    got = np.asarray(src, dtype=np.float32)
    assert got.dtype == np.float32 and got.tolist() == [[1, 2], [2, 3], [3, 1]]
    assert np.array_equal(np.asarray(src), dfbuffer.to_matrix(src))
    with pytest.raises(dfbuffer.CopyError, match="only by a copy.* copy=False forbids"):
        np.asarray(src, copy=False)


@pytest.mark.parametrize("make", [dfbuffer.to_interchange, dfbuffer.to_arrow],
                         ids=["to_interchange", "to_arrow"])
def test_scikit_learn_estimators_fit_the_outputs(make):
    pytest.importorskip("sklearn")
    from sklearn.linear_model import LinearRegression

    X = make(pa.table({"x": [0.0, 1.0, 2.0, 3.0], "y": [1.0, 0.0, 1.0, 0.0]}))
    target = np.array([1.0, 3.0, 5.0, 7.0])  # 2 x + 1
    model = LinearRegression().fit(X, target)
    assert np.allclose(model.coef_, [2.0, 0.0]) and np.isclose(model.intercept_, 1.0)
    assert np.allclose(model.predict(X), target)


def test_scikit_learn_reads_to_arrow_through_numpy():
    pytest.importorskip("sklearn")
    from sklearn.preprocessing import StandardScaler

    out = dfbuffer.to_arrow(pa.table({"x": _X, "y": _Y}))
    got = StandardScaler().fit_transform(out)
    assert got.shape == (3, 2) and np.allclose(got.mean(axis=0), 0.0)
