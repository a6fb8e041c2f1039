"""Registry of paper reproductions and the output contract of ``sparsebayes reproduce``.

Each experiment module in :mod:`sparsebayes.comparisons.experiments` decorates a function
``run(reps, seed, out) -> Result`` with :func:`experiment`. Modules are discovered
automatically, so adding a paper's experiments is adding a module.

The contract (``../shared/TARGETS.md``): ``DIR/ID.json`` =
``{"experiment", "settings", "seconds", "rows", "paper"}``; ``DIR/ID.md`` sets our rows
beside the paper's; plots are ``DIR/ID*.png``.
"""
from __future__ import annotations

import importlib
import json
import pkgutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

_REGISTRY: dict[str, "Experiment"] = {}


@dataclass
class Result:
    """What an experiment returns: its settings, our rows, the paper's rows, plots written."""

    settings: dict
    rows: list[dict]
    paper: list[dict]
    plots: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Experiment:
    id: str
    func: Callable
    default_reps: int | None
    description: str


def experiment(exp_id, *, default_reps=None, description=""):
    """Register ``func(reps, seed, out) -> Result`` under ``exp_id``."""

    def wrap(func):
        if exp_id in _REGISTRY:
            raise ValueError(f"experiment id {exp_id!r} registered twice")
        _REGISTRY[exp_id] = Experiment(exp_id, func, default_reps, description or (func.__doc__ or "").strip().split("\n")[0])
        return func

    return wrap


def _discover():
    from . import experiments

    for mod in pkgutil.iter_modules(experiments.__path__):
        importlib.import_module(f"{experiments.__name__}.{mod.name}")


def registry():
    """All registered experiments, id -> :class:`Experiment`."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def jsonable(obj):
    """``obj`` with NumPy values as Python ones and NaN / inf as ``None`` (strict JSON has no NaN)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):  # a NumPy NaN or inf becomes a Python float, then None
        return jsonable(obj.item())
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj


def _markdown(exp_id, result, seconds):
    lines = [f"# {exp_id}", "", f"Settings: `{json.dumps(jsonable(result.settings))}`", "",
             f"Wall time: {seconds:.1f} s", ""]
    joined = side_by_side({"rows": result.rows, "paper": result.paper}) if result.rows and result.paper else None
    if joined is not None and not isinstance(joined.columns, pd.MultiIndex):  # joined on shared keys
        table, said_once = _compact(joined)
        lines += ["## Ours beside the paper", "", _table_md(table), ""] + [f"- {t}" for t in said_once]
        lines += [""] if said_once else []
    else:
        for title, rows in (("Ours", result.rows), ("Paper", result.paper)):
            lines += [f"## {title}", ""]
            lines.append(_table_md(pd.DataFrame(jsonable(rows))) if len(rows) else
                         "(none)" if title == "Ours" else
                         "The paper gives no numbers for this experiment (its figure is a plot); see the notes.")
            lines.append("")
    if result.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    for p in result.plots:
        lines.append(f"![{Path(p).name}]({Path(p).name})")
    return "\n".join(lines) + "\n"


def _cell(value):
    """A table cell: ``–`` for a missing value, 4 significant digits for a float."""
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _compact(joined):
    """:func:`side_by_side`'s table made narrow for Markdown: a metric and its ``*_sd`` are one
    cell ``mean (sd)``; a metric the paper also gives is one column of ``ours / paper`` cells;
    and a text column with one value wherever it is given (the paper's claim about a curve, say)
    is taken out of the table and returned as a sentence to say once. Returns ``(table, sentences)``."""
    joined = joined.astype(object).where(joined.notna(), None)
    cols = list(joined.columns)

    def cells(col, suffix=""):
        values = [_cell(v) for v in joined[col + suffix]]
        if f"{col}_sd{suffix}" in cols:
            values = [v if sd is None or v == "–" else f"{v} ({_cell(sd)})"
                      for v, sd in zip(values, joined[f"{col}_sd{suffix}"])]
        return values

    table, sentences = pd.DataFrame(index=joined.index), []
    for col in cols:
        base = col[:-len(" (paper)")] if col.endswith(" (paper)") else col
        if base != col and base in cols or base.endswith("_sd") and (base[:-3] in cols or base[:-3] + " (paper)" in cols):
            continue  # shown in the column of its metric
        with_sd = " (sd)" if f"{col}_sd" in cols else ""
        if f"{col} (paper)" in cols:
            table[f"{col}{with_sd}: ours / paper"] = [f"{a} / {b}" for a, b in zip(cells(col), cells(col, " (paper)"))]
            continue
        given = [v for v in joined[col] if v is not None]
        if (col not in JOIN_KEYS and len(joined) > 3 and given and all(isinstance(v, str) for v in given)
                and len(set(given)) == 1):
            with_it = sorted({str(m) for m, v in zip(joined.get("method", [None] * len(joined)), joined[col])
                              if v is not None})
            sentences.append(f"{col} (the paper, for {', '.join(with_it)}): {given[0]}")
            continue
        table[f"{col}{with_sd}"] = cells(col)
    return table, sentences


def _table_md(df):
    df = df.astype(object).where(df.notna(), None)  # NaN as the missing value "–", as None is
    if _has_tabulate():
        return df.to_markdown(index=False, floatfmt=".4g", missingval="–")
    return df.to_string(index=False, na_rep="–")


def _has_tabulate():
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


def run_experiment(exp_id, *, reps=None, seed=0, out="results", n_jobs=None):
    """Run one registered experiment and write ``out/ID.json``, ``out/ID.md`` (and plots).

    Rows with a paper counterpart get each shared figure's standard error over the repetitions
    and its z-distance from the paper's (:func:`sparsebayes.comparisons.spread.add_spread`).
    ``n_jobs`` (joblib's convention) runs the experiment's repetitions, splits and CV folds as
    parallel tasks; ``None`` leaves joblib's active configuration as it is (serial by default,
    or the backend of an enclosing ``joblib.parallel_backend``, e.g. ``"dask"``). The figures do
    not depend on it.
    """
    import contextlib

    import joblib

    from .spread import add_spread

    exps = registry()
    if exp_id not in exps:
        raise ValueError(f"unknown experiment {exp_id!r}; known: {', '.join(exps)}")
    exp = exps[exp_id]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    reps = reps if reps is not None else exp.default_reps
    t0 = time.perf_counter()
    with joblib.parallel_config(n_jobs=n_jobs) if n_jobs is not None else contextlib.nullcontext():
        result = exp.func(reps=reps, seed=seed, out=out)
    seconds = time.perf_counter() - t0
    add_spread(result.rows, result.paper, reps)
    payload = {
        "experiment": exp_id,
        "settings": jsonable(result.settings),
        "seconds": seconds,
        "rows": jsonable(result.rows),
        "paper": jsonable(result.paper),
    }
    (out / f"{exp_id}.json").write_text(json.dumps(payload, indent=2, allow_nan=False))  # strict JSON
    (out / f"{exp_id}.md").write_text(_markdown(exp_id, result, seconds))
    return payload, result


#: The columns on which :func:`side_by_side` joins our rows to the paper's.
JOIN_KEYS = ("method", "sigma", "snr", "d", "k", "dataset")


def side_by_side(payload, keys=JOIN_KEYS):
    """A DataFrame of ours beside the paper's, joined on the keys both share."""
    ours = pd.DataFrame(payload["rows"])
    paper = pd.DataFrame(payload["paper"])
    if paper.empty:
        return ours
    on = [k for k in keys if k in ours.columns and k in paper.columns]
    if not on:
        return pd.concat({"ours": ours, "paper": paper}, axis=1)
    return ours.merge(paper, on=on, how="outer", suffixes=("", " (paper)"))
