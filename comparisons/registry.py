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
    tables = [("Ours", result.rows), ("Paper", result.paper)]
    if result.rows and result.paper:  # the two joined on their shared keys, as `reproduce` prints them
        tables.insert(0, ("Ours beside the paper", side_by_side({"rows": result.rows, "paper": result.paper})))
    for title, rows in tables:
        lines += [f"## {title}", ""]
        if len(rows):
            df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(jsonable(rows))
            df = df.astype(object).where(df.notna(), None)  # NaN as the missing value "–", as None is
            lines.append(df.to_markdown(index=False, floatfmt=".4g", missingval="–") if _has_tabulate()
                         else df.to_string(index=False, na_rep="–"))
        else:
            lines.append("(no figures)")
        lines.append("")
    if result.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in result.notes] + [""]
    for p in result.plots:
        lines.append(f"![{Path(p).name}]({Path(p).name})")
    return "\n".join(lines) + "\n"


def _has_tabulate():
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


def run_experiment(exp_id, *, reps=None, seed=0, out="results"):
    """Run one registered experiment and write ``out/ID.json``, ``out/ID.md`` (and plots)."""
    exps = registry()
    if exp_id not in exps:
        raise ValueError(f"unknown experiment {exp_id!r}; known: {', '.join(exps)}")
    exp = exps[exp_id]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result = exp.func(reps=reps if reps is not None else exp.default_reps, seed=seed, out=out)
    seconds = time.perf_counter() - t0
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


def side_by_side(payload, keys=("method", "sigma", "snr", "d", "k", "dataset")):
    """A DataFrame of ours beside the paper's, joined on the keys both share."""
    ours = pd.DataFrame(payload["rows"])
    paper = pd.DataFrame(payload["paper"])
    if paper.empty:
        return ours
    on = [k for k in keys if k in ours.columns and k in paper.columns]
    if not on:
        return pd.concat({"ours": ours, "paper": paper}, axis=1)
    return ours.merge(paper, on=on, how="outer", suffixes=("", " (paper)"))
