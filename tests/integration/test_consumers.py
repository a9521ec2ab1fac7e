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


def test_scikit_learn_reads_to_arrow_through_numpy():
    pytest.importorskip("sklearn")
    from sklearn.preprocessing import StandardScaler

    out = dfbuffer.to_arrow(pa.table({"x": _X, "y": _Y}))
    got = StandardScaler().fit_transform(out)
    assert got.shape == (3, 2) and np.allclose(got.mean(axis=0), 0.0)
