"""The notebooks and the documentation's Python examples run under ArviZ 0.x and 1.x: they call ArviZ
directly only where the call is the same in both, and otherwise go through
:mod:`sparsebayes.inference.posterior.arviz_compat`. ``tests/test_notebooks.py`` executes the notebooks on the
installed ArviZ; this check reads their code, so that a call that would break on the other major
version is caught on either."""
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "changelog.md")]

#: ArviZ functions whose name, arguments and use are the same in 0.x and 1.x (``print(az.loo(fit))``,
#: ``az.compare({name: fit})``). Every other ``az.<name>`` differs: ``summary``'s interval and
#: columns, ``plot_forest``'s list against dict, ``plot_ppc`` (``plot_ppc_dist`` in 1.x),
#: ``from_dict``'s signature, the plots' return values.
SAME_IN_BOTH = {"loo", "compare"}
#: Uses of the 0.x ``InferenceData`` object that a 1.x ``xarray.DataTree`` does not have.
ZERO_X_ONLY = (r"\.groups\(\)", r"\.elpd_loo\b", r"\bInferenceData\(", r"\.add_groups\(")


def _notebook_code(path):
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


def _page_code(path):
    return "\n".join(re.findall(r"^```python[ \t]*\n(.*?)^```[ \t]*$", path.read_text(encoding="utf-8"),
                                flags=re.S | re.M))


def _version_bound_calls(code):
    calls = [f"az.{name}" for name in re.findall(r"\baz\.(\w+)", code) if name not in SAME_IN_BOTH]
    return calls + [m.group(0) for pattern in ZERO_X_ONLY for m in re.finditer(pattern, code)]


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES, ids=[p.name for p in NOTEBOOKS + PAGES])
def test_arviz1_code_calls_arviz_only_as_both_versions_do(path):
    code = _notebook_code(path) if path.suffix == ".ipynb" else _page_code(path)
    found = _version_bound_calls(code)
    assert not found, (f"{path.name} calls {sorted(set(found))}, which differ between ArviZ 0.x and 1.x: use "
                       "sparsebayes.inference.posterior.arviz_compat (summary, plot_forest, plot_ppc, from_dict) instead")


def test_arviz1_the_calls_allowed_exist_in_the_installed_arviz():
    import arviz as az
    from sparsebayes.inference.posterior import arviz_compat as compat
    assert all(callable(getattr(az, name, None)) for name in SAME_IN_BOTH)
    used = set(re.findall(r"arviz_compat import ([\w, ]+)", "\n".join(map(_notebook_code, NOTEBOOKS))))
    names = {n.strip() for group in used for n in group.split(",")}
    assert names and all(callable(getattr(compat, n, None)) for n in names), names


def test_arviz1_the_check_sees_version_bound_calls():
    """The old notebooks' calls are caught (how this check fails)."""
    old = ('az.plot_forest([a, b], model_names=["x", "y"])\nprint(az.loo(a))\nt = az.summary(a, hdi_prob=0.95)\n'
           "az.plot_ppc(a, num_pp_samples=50)\nidata.groups()")
    assert _version_bound_calls(old) == ["az.plot_forest", "az.summary", "az.plot_ppc", ".groups()"]
