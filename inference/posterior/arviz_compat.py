"""ArviZ 0.x (``InferenceData``) and ArviZ 1.x (``xarray.DataTree``) behind one small interface.

ArviZ 0.x keeps a fit's groups in an ``arviz.InferenceData``; ArviZ 1.x (arviz-base, arviz-stats,
arviz-plots; Python 3.12 and later) keeps them in an ``xarray.DataTree``, one child node per group.
Both read alike (``idata.posterior["beta"]``, ``.sizes``, ``.attrs``, ``idata.attrs``,
``to_netcdf``), but they differ in how they are built and changed: ``from_dict``'s signature,
``groups()`` (a method) against ``groups`` (paths), ``add_groups`` and ``setattr`` against item
assignment (on a ``DataTree``, ``setattr`` sets a Python attribute and changes no group), and the
diagnostics return a ``Dataset`` or an array on 0.x, a ``DataTree`` on 1.x. Every place in the
package that builds or changes such an object goes through the functions here, so the output is an
``InferenceData`` under ArviZ 0.x and a ``DataTree`` under ArviZ 1.x, with the same groups,
variables, dims, coords and attrs.

"The object" below is either. ``dataset(idata, group)`` always gives an ``xarray.Dataset``.
"""
from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def _az():
    import arviz  # on use: ArviZ is 1.3 s of the package's 3 s import
    return arviz


def arviz_major():
    """The installed ArviZ's major version (0 or 1)."""
    return int(str(_az().__version__).split(".")[0])


def is_datatree_api():
    """Whether the installed ArviZ keeps fits in an ``xarray.DataTree`` (ArviZ 1.x)."""
    return arviz_major() >= 1


def idata_type():
    """The class of the objects built here: ``arviz.InferenceData`` (0.x) or ``xarray.DataTree`` (1.x)."""
    if is_datatree_api():
        import xarray as xr
        return xr.DataTree
    return _az().InferenceData


def from_dict(groups, *, coords=None, dims=None):
    """The object with ``groups`` (group name -> {variable name -> array}); arrays of groups with
    samples carry the leading dims ``(chain, draw)``; ``observed_data`` has none. ``dims`` and
    ``coords`` name the dims of every group, ``predictions`` included (ArviZ 1.x reads those of
    ``predictions`` from ``pred_dims`` / ``pred_coords`` only)."""
    az = _az()
    groups = {g: v for g, v in groups.items() if v is not None}
    if is_datatree_api():
        return az.from_dict(groups, coords=coords, dims=dims, pred_dims=dims, pred_coords=coords)
    return az.from_dict(**groups, coords=coords, dims=dims)


def group_from_dict(group, values, *, coords=None, dims=None):
    """One group built as :func:`from_dict` builds it, as an ``xarray.Dataset``."""
    return dataset(from_dict({group: values}, coords=coords, dims=dims), group)


def from_datasets(groups, attrs=None):
    """A new object whose groups are the ``xarray.Dataset`` values of ``groups`` (name -> Dataset)."""
    if is_datatree_api():
        import xarray as xr
        out = xr.DataTree()
        for name, ds in groups.items():
            out[name] = ds
    else:
        with warnings.catch_warnings():  # ArviZ warns about groups outside its schema; ours are deliberate
            warnings.simplefilter("ignore", UserWarning)
            out = _az().InferenceData(**groups)
    out.attrs.update(attrs or {})
    return out


def groups(idata):
    """The names of ``idata``'s groups (``["posterior", "sample_stats", ...]``)."""
    if is_datatree_api():
        return list(idata.children)
    return list(idata.groups())


def has_group(idata, group):
    return group in groups(idata)


def dataset(idata, group):
    """Group ``group`` of ``idata`` as an ``xarray.Dataset`` (with the group's attrs)."""
    if is_datatree_api():
        return idata[group].to_dataset()
    return getattr(idata, group)


def set_group(idata, group, ds):
    """Put the ``xarray.Dataset`` ``ds`` in ``idata`` as group ``group`` (added, or replacing the
    group of that name); returns ``idata``, changed in place."""
    if is_datatree_api():
        idata[group] = ds
    elif group in idata.groups():
        setattr(idata, group, ds)
    else:
        with warnings.catch_warnings():  # ArviZ warns about groups outside its schema; ours are deliberate
            warnings.simplefilter("ignore", UserWarning)
            idata.add_groups({group: ds})
    return idata


def copy(idata):
    """A deep copy of ``idata``."""
    return idata.copy(deep=True) if is_datatree_api() else idata.copy()


def rename_dims(idata, mapping):
    """``idata`` with the dims (and their coords) named in ``mapping`` (old -> new) renamed in every
    group that has them; returns ``idata``, changed in place."""
    for group in groups(idata):
        ds = dataset(idata, group)
        here = {old: new for old, new in mapping.items() if old in ds.dims}
        if here:
            set_group(idata, group, ds.rename(here))
    return idata


def from_numpyro(mcmc, *, coords=None, dims=None):
    """``az.from_numpyro`` of a run (``numpyro.infer.MCMC``, or an object with its attributes:
    ``sampler.model``, ``_args``, ``_kwargs``, ``num_chains``, ``num_samples``, ``thinning``,
    ``get_samples`` and ``get_extra_fields``), without the log likelihood."""
    az = _az()
    if is_datatree_api():
        from numpyro.infer import MCMC
        source = mcmc if isinstance(mcmc, MCMC) else az.MCMCAdapter(mcmc)
        return az.from_numpyro(source, coords=coords, dims=dims, log_likelihood=False)
    return az.from_numpyro(mcmc, coords=coords, dims=dims, log_likelihood=False)


def _as_dataset(result):
    """A diagnostic's result as an ``xarray.Dataset`` (ArviZ 1.x returns a ``DataTree``)."""
    return result.to_dataset() if hasattr(result, "to_dataset") and hasattr(result, "children") else result


def rhat(idata, var_names=None):
    """Rank-normalized split R-hat (Vehtari et al. 2021) per variable of ``posterior``, as a ``Dataset``."""
    return _as_dataset(_az().rhat(idata, var_names=var_names))


#: The quantiles whose indicators the tail ESS follows (Vehtari et al. 2021, sec. 4.3: 5 % and 95 %);
#: ArviZ 1.x, not told, would take 11 % and 89 % (its ``stats.ci_prob`` of 0.89 and one minus it).
TAIL_ESS_QUANTILES = (0.05, 0.95)


def ess(idata, var_names=None, method="bulk"):
    """Bulk or tail effective sample size (Vehtari et al. 2021) per variable of ``posterior``, as a
    ``Dataset``; the tail ESS is the smaller of those of the indicators of the 5 % and 95 % quantiles
    (:data:`TAIL_ESS_QUANTILES`) under either ArviZ."""
    if is_datatree_api() and method == "tail":
        return _as_dataset(_az().ess(idata, var_names=var_names, method=method, prob=TAIL_ESS_QUANTILES))
    return _as_dataset(_az().ess(idata, var_names=var_names, method=method))


def bfmi(idata):
    """The Bayesian fraction of missing information per chain (Betancourt 2016) from
    ``sample_stats["energy"]``, as a 1-D array. Energies with a dim besides ``chain`` and ``draw`` (the
    ``K`` runs of a one-vs-all posterior, :mod:`~sparsebayes.inference.posterior.twin_one_vs_all`) give one
    value per chain of each run, each ArviZ's ``bfmi`` of that run's energies."""
    energy = dataset(idata, "sample_stats")["energy"]
    extra = [d for d in energy.dims if d not in ("chain", "draw")]
    if extra:
        runs = energy.stack(_run=extra).transpose("_run", "chain", "draw").values
        return np.concatenate([bfmi(from_dict({"sample_stats": {"energy": run}})) for run in runs])
    out = _az().bfmi(idata)
    if is_datatree_api():
        out = _as_dataset(out)["energy"]
    return np.asarray(out, dtype=np.float64).reshape(-1)


#: The column order of ArviZ 0.x's ``az.summary(kind="all")``; 1.x names the 94 % HDI ``hdi94_lb`` /
#: ``hdi94_ub`` and orders the columns otherwise.
SUMMARY_COLUMNS = ("mean", "sd", "hdi_3%", "hdi_97%", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat")
_SUMMARY_KINDS = {"all": slice(None), "stats": slice(0, 4), "diagnostics": slice(4, None)}


def summary(idata, var_names=None, kind="all", hdi_prob=0.94):
    """``az.summary`` unrounded, in ArviZ 0.x's layout under either version: one row per scalar
    (``beta[bmi]``), columns :data:`SUMMARY_COLUMNS` (``kind="all"``), their first four
    (``"stats"``: mean, sd and the HDI) or their last five (``"diagnostics"``). The HDI holds
    ``hdi_prob`` of the draws, its columns named as 0.x names them (``hdi_3%`` / ``hdi_97%`` at
    0.94, ``hdi_2.5%`` / ``hdi_97.5%`` at 0.95); 1.x would give an 89 % equal-tailed interval."""
    if kind not in _SUMMARY_KINDS:
        raise ValueError(f"kind must be one of {sorted(_SUMMARY_KINDS)}, got {kind!r}")
    if not (isinstance(hdi_prob, (int, float)) and 0 < hdi_prob < 1):
        raise ValueError(f"hdi_prob must be a number in (0, 1), got {hdi_prob!r}")
    az = _az()
    if not is_datatree_api():
        return az.summary(idata, var_names=var_names, kind=kind, hdi_prob=hdi_prob, round_to="none")
    tail = 100 * (1 - hdi_prob) / 2  # 0.x's column names: f"hdi_{100 * alpha / 2:g}%", alpha = 1 - hdi_prob
    lo, hi = f"hdi_{tail:g}%", f"hdi_{100 - tail:g}%"
    table = az.summary(idata, var_names=var_names, kind=kind, ci_kind="hdi", ci_prob=hdi_prob, round_to="none")
    table = table.rename(columns={c: lo if c.endswith("_lb") else hi for c in table.columns
                                  if c.startswith("hdi") and c.endswith(("_lb", "_ub"))})
    wanted = ("mean", "sd", lo, hi, *SUMMARY_COLUMNS[4:])[_SUMMARY_KINDS[kind]]
    return table[[c for c in wanted if c in table.columns]]


def psislw(log_ratios):
    """Pareto smoothed importance sampling (Vehtari et al. 2024) of the log importance ratios
    ``log_ratios`` (..., S) (one row per target, the last axis the draws): ``(log_weights, khat)``,
    the smoothed log weights normalized to sum to one over the last axis (..., S) and the estimated
    generalized Pareto shape ``k̂`` (...). ArviZ 0.x's ``az.psislw`` takes the log ratios; arviz-stats
    1.x's ``psislw`` takes a log-likelihood (its ratios are its negation) and leaves the weights
    unnormalized, so both are brought to 0.x's form here. A ``k̂`` that ArviZ cannot estimate (1.x
    returns NaN for ratios too heavy-tailed to fit, 0.x infinity) is ``inf``: no usable weights."""
    ratios = np.asarray(log_ratios, dtype=np.float64)
    with warnings.catch_warnings():  # ArviZ warns of a large k̂; the callers judge k̂ themselves
        warnings.simplefilter("ignore")
        if is_datatree_api():
            from arviz_stats.base import array_stats
            from scipy.special import logsumexp
            lw, k = array_stats.psislw(-ratios, axis=-1)
            lw = np.asarray(lw, dtype=np.float64)
            lw = lw - logsumexp(lw, axis=-1, keepdims=True)
        else:
            lw, k = _az().psislw(ratios)
    k = np.asarray(k, dtype=np.float64)
    return np.asarray(lw, dtype=np.float64), np.where(np.isnan(k), np.inf, k)


def from_netcdf(path):
    """The object written by ``to_netcdf`` at ``path``, read into memory."""
    return _az().from_netcdf(str(path))


def elpd_loo(idata):
    """PSIS-LOO's expected log pointwise predictive density (Vehtari, Gelman & Gabry 2017) from the
    ``log_likelihood`` group: ``az.loo``'s ``elpd_loo`` (0.x) or ``elpd`` (1.x)."""
    result = _az().loo(idata)
    return float(result.elpd if is_datatree_api() else result.elpd_loo)


def loo(idata):
    """``az.loo(idata, pointwise=True)`` (PSIS-LOO of the ``log_likelihood`` group; Vehtari, Gelman &
    Gabry 2017) under 0.x's names: ``{"elpd_loo", "se", "p_loo", "pareto_k"}``, the last an array of one
    Pareto ``k̂`` per observation (1.x names the first and third ``elpd`` and ``p``). ArviZ's warning of
    a large ``k̂`` is not repeated: ``pareto_k`` says it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _az().loo(idata, pointwise=True)
    new = is_datatree_api()
    return {"elpd_loo": float(res.elpd if new else res.elpd_loo), "se": float(res.se),
            "p_loo": float(res.p if new else res.p_loo),
            "pareto_k": np.asarray(res.pareto_k, dtype=np.float64).reshape(-1)}


def figure(plot, *, detach=False):
    """The ``matplotlib.figure.Figure`` of what an ArviZ plot returned: axes (0.x) or a
    ``PlotCollection`` (1.x). ``detach``: take the figure out of pyplot's list of open figures
    (arviz-plots opens its figures through pyplot), for a caller that leaves pyplot's state as it
    found it; the ``Figure`` still draws and saves."""
    fig = plot.viz["figure"].item() if hasattr(plot, "viz") else np.ravel(np.asarray(plot, dtype=object))[0].figure
    if detach:
        import sys
        plt = sys.modules.get("matplotlib.pyplot")  # not imported: pyplot holds no figure
        if plt is not None:
            plt.close(fig)  # a figure pyplot does not hold is left alone
    return fig


def plot_forest(fits, var_names=None, combined=True):
    """ArviZ's forest plot of several fits (name -> object) on matplotlib; returns its ``Figure``.
    ArviZ 1.x labels the rows by coordinate (``bmi``), 0.x by variable and coordinate (``beta[bmi]``)."""
    az = _az()
    if is_datatree_api():
        with warnings.catch_warnings():
            # arviz-plots concatenates the fits along a new dim; fits of other lengths (a point estimate,
            # one draw, beside a sampler's draws) are outer-joined on chain and draw, as wanted, and
            # xarray warns that its default join will change
            warnings.filterwarnings("ignore", message="In a future version of xarray the default value for join",
                                    category=FutureWarning)
            return figure(az.plot_forest(dict(fits), var_names=var_names, combined=combined, backend="matplotlib"))
    return figure(az.plot_forest(list(fits.values()), model_names=list(fits), var_names=var_names,
                                 combined=combined))


def plot_ppc(idata, num_samples=50):
    """ArviZ's posterior predictive check (``plot_ppc`` on 0.x, ``plot_ppc_dist`` on 1.x) of the
    ``posterior_predictive`` group against ``observed_data`` on matplotlib; returns its ``Figure``."""
    az = _az()
    if is_datatree_api():
        return figure(az.plot_ppc_dist(idata, num_samples=num_samples, backend="matplotlib"))
    return figure(az.plot_ppc(idata, num_pp_samples=num_samples))
