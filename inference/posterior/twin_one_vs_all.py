"""The posterior of a one-vs-all classifier: ``K`` independent binary posteriors, stacked on one dim.

A classifier fitted one-vs-all (Figueiredo 2003, 002 Sec. 4.2: the EM probit and logistic classifiers;
the Bernoulli RVM; the Gibbs and NUTS classifiers beyond two classes) fits, for each class ``k`` of
``K > 2``, a binary model of the indicator ``t_ik = [y_i = k]`` with its own weights ``β_k`` and the
same hierarchy, likelihood and design. Its model is therefore the product of ``K`` binary models,

    p(β_1, ..., β_K | y) = Π_k p(β_k | t_·k),

and its posterior is ``K`` independent binary posteriors: each class's part is sampled on its own, on
the record the estimator gives for the ``k``-vs-rest problem, with the seed :func:`class_seed` (so
class ``k``'s draws are those of the binary twin of the ``k``-vs-rest problem at that seed), and the
parts are stacked on the dim :data:`CLASS_DIM` (``"classifier"``, the dim of the estimators' own
``beta_`` in :meth:`to_inference_data`), coords the class labels. The draws at one ``(chain, draw)``
index are independent draws of the ``K`` parts: a draw of the product posterior.

The groups of the stacked ``InferenceData``:

``posterior``, ``sample_stats``
    Every part's sites and statistics on ``CLASS_DIM`` (``beta`` on ``(basis, classifier)``, an
    ``intercept`` or a hierarchy's ``gamma`` on ``classifier``); the posterior's ``sampling_seconds``,
    ``compile_seconds`` and ``n_divergences`` attrs are the ``K`` runs' sums, ``class_seeds`` their seeds.
``log_likelihood``
    ``y`` on ``obs``: ``Σ_k log p(t_ik | β_k)``, the log likelihood of row ``i`` under the model that was
    fitted, the product of the ``K`` binary models. It is what PSIS-LOO needs (Vehtari, Gelman & Gabry
    2017, eq. 7: the importance ratio of leaving row ``i`` out is ``1 / p(row i | θ)``, and row ``i``
    enters the product posterior through its ``K`` indicators), so ``az.loo`` on it is the
    leave-one-out predictive density of a row's ``K`` indicators. It is *not* ``log P(y_i | x_i)`` of
    the normalized one-vs-all probabilities (no model here has that likelihood), and it is not
    comparable with a multinomial model's elpd (SMLR's): the two predict different things.
``observed_data``
    ``y``: the class codes (indices into ``classes_``) on ``obs``.
``posterior_predictive``
    ``y``: a class code per draw and row, drawn from the class probabilities the estimator predicts
    with, the one-vs-all scores normalized over the classes at that draw,
    ``P(y = k | β) = F(η_k) / Σ_k' F(η_k')`` (``F`` the link; the estimators' ``predict_proba``): the
    check of the labels the estimator would predict. (The product model itself generates ``K``
    indicators that need not name one class.)
``predictions``
    With held-out rows, per draw: ``prob`` (on ``class_code``) those normalized probabilities, and
    ``log_lik`` the log of the held-out class's, the scores :mod:`sparsebayes.comparisons.compare_predictive`
    sets beside the point estimate's ``predict_proba``.

In :func:`sparsebayes.compare` the verdict has a row per (input, class) and projection predictive
selection runs per class, on class ``k``'s binary model (``select(classifier=k)``): the normalized
one-vs-all probabilities are no model's predictive distribution, so there is nothing to project jointly.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

#: The dim the one-vs-all parts are stacked on: the dim of the one-vs-all point estimate's ``beta``.
CLASS_DIM = "classifier"
#: What PSIS-LOO of a one-vs-all posterior measures (module docstring), for reports beside its numbers.
LOO_NOTE = ("one-vs-all: the log-likelihood of a row is the sum of its K binary terms log p([y_i = k] | β_k), the "
            "likelihood of the K independent models that were fitted, so elpd_loo scores the left-out row's K class "
            "indicators, not log P(y_i) of the normalized one-vs-all probabilities; it is not comparable with a "
            "multinomial model's (SMLR's) elpd")
#: Why projection selection refuses a one-vs-all posterior.
SELECTION_REFUSAL = ("projection selection projects one model's predictive distribution; a one-vs-all posterior is K "
                     "independent binary models whose normalized class probabilities are no model's predictive "
                     "distribution: select inputs per class, on its k-vs-rest binary model (select(classifier=k))")


def class_seed(seed, k):
    """The seed class ``k``'s part is sampled with for the run seeded ``seed``: distinct per class, so that
    the parts' Monte Carlo errors are independent, as the parts are (module docstring)."""
    return int(np.random.SeedSequence([int(seed), int(k)]).generate_state(1)[0] >> 1)


def is_one_vs_all(record):
    """Whether a model record (:mod:`sparsebayes.inference.posterior.posterior_model`) is a one-vs-all one."""
    return getattr(record, "parts", None) is not None


def class_codes(est, y, n):
    """Labels ``y`` as indices into ``est.classes_``; ``ValueError`` naming the problem for ``y`` that is not
    ``n`` labels among the fitted classes."""
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n or not np.all(np.isin(y, est.classes_)):
        raise ValueError(f"y must hold {n} labels among the classifier's classes {list(est.classes_)}")
    return np.searchsorted(est.classes_, y)


def one_vs_all_model(est, n, y, binary, *, names, point=None, point_label=None, point_dims=None):
    """The record of ``est``'s one-vs-all model on ``n`` rows with labels ``y``: ``binary(t)`` is the
    record of one class's binary model with 0/1 targets ``t`` (the one the estimator gives for two
    classes, on the same design), called once per class of ``est.classes_``. ``names`` are the basis
    names; ``point`` the point estimate in the stacked layout (``beta`` on ``(basis, classifier)``,
    the others on ``point_dims``, e.g. ``{"intercept": ["classifier"]}``).

    ``y = None`` (with ``n = None``): the data-free record, whose samplers are one binary part's
    (``binary(None)``)."""
    classes = [str(c) for c in est.classes_]
    if y is None:
        part = binary(None)
        return SimpleNamespace(gibbs=getattr(part, "gibbs", None), point=point, point_label=point_label,
                               likelihood=getattr(part, "likelihood", None), one_vs_all=True,
                               point_dims=point_dims or {})
    codes = class_codes(est, y, n)
    parts = [binary((codes == k).astype(np.float64)) for k in range(len(classes))]
    first = parts[0]
    label = f"one-vs-all: {len(classes)} independent binary posteriors, each {first.label}"
    return SimpleNamespace(
        parts=parts, classes=classes, model=None, H=first.H, y=codes.astype(np.float64), kwargs={}, names=names,
        label=label, prior=getattr(first, "prior", None), likelihood=getattr(first, "likelihood", None),
        params=getattr(first, "params", None), gibbs=getattr(first, "gibbs", None), point=point,
        point_label=point_label, point_dims=point_dims or {}, centre=None, y_offset=0.0, nuts_kwargs={},
        weight_site="beta", to_weights=None, weight_dims=("basis", CLASS_DIM),
        weight_coords={"basis": list(names), CLASS_DIM: classes}, site_dims={}, site_coords={}, keep=None)


def _stack(datasets, classes):
    """The parts' ``xarray.Dataset`` stacked on :data:`CLASS_DIM`, ``chain`` and ``draw`` first."""
    import xarray as xr
    ds = xr.concat(datasets, dim=CLASS_DIM, coords="minimal", compat="override", combine_attrs="drop_conflicts")
    ds = ds.assign_coords({CLASS_DIM: np.asarray(classes, dtype=str)})  # the point estimate's coords, as numpy str
    lead = [d for d in ("chain", "draw") if d in ds.dims]
    return ds.transpose(*lead, ...)


def positive_log_probability(part, kwargs, posterior, H):
    """``log F(η_k)`` (S, m), the log probability of class ``k`` under its binary part at each draw of
    ``posterior`` (the part's sites) on the design ``H``: the part's own likelihood (or observed site)
    scored at target 1."""
    from sparsebayes.inference.posterior.twin_predictive import predictions, site_draws
    draws = site_draws(posterior)
    ones = np.ones(np.shape(H)[0])
    size = len(next(iter(draws.values())))
    return predictions(part.model, H, ones, kwargs, draws, likelihood=getattr(part, "likelihood", None),
                       log_lik_only=True, block=min(1000, size))["log_lik"]


def normalized_log_probabilities(log_f):
    """``log [F(η_k) / Σ_k' F(η_k')]`` over the last axis of ``log_f`` (the classes), in log space."""
    from scipy.special import logsumexp
    return log_f - logsumexp(log_f, axis=-1, keepdims=True)


def sample_one_vs_all(t, t_test, draw_part, *, seed, log_likelihood=True):
    """The stacked ``InferenceData`` of one-vs-all record ``t`` (module docstring).

    ``draw_part(part, seed)`` samples one binary part and returns ``(idata, kwargs)``: its draws in the
    part's site layout (with its ``log_likelihood`` group when ``log_likelihood``) and the model's keyword
    arguments they were drawn with. ``t_test``: the held-out rows' one-vs-all record, or ``None``."""
    from sparsebayes.inference.posterior.arviz_compat import dataset, from_datasets, group_from_dict, groups
    from sparsebayes.inference.posterior.pointwise_loglik import GROUP, VARIABLE, DIM, defer_log_likelihood
    from sparsebayes.inference.posterior.twin_posterior import _to_weight_layout

    parts, site_posteriors, kwargs_list, log_f, log_f_test, pointwise = [], [], [], [], [], []
    for k, part in enumerate(t.parts):
        idata, kwargs = draw_part(part, class_seed(seed, k))
        post = dataset(idata, "posterior")
        site_posteriors.append(post)
        kwargs_list.append(kwargs)
        log_f.append(positive_log_probability(part, kwargs, post, part.H))
        if t_test is not None:
            log_f_test.append(positive_log_probability(t_test.parts[k], kwargs, post, t_test.parts[k].H))
        if log_likelihood:
            pointwise.append(np.asarray(dataset(idata, GROUP)[VARIABLE].values, dtype=np.float64))
        parts.append(_to_weight_layout(idata, part))
    post = _stack([dataset(p, "posterior") for p in parts], t.classes)
    post = post.assign(beta=post["beta"].transpose("chain", "draw", *t.weight_dims))  # the record's layout
    lead = (post.sizes["chain"], post.sizes["draw"])
    out = {"posterior": post}
    if all("sample_stats" in groups(p) for p in parts):
        out["sample_stats"] = _stack([dataset(p, "sample_stats") for p in parts], t.classes)
    if log_likelihood:
        out[GROUP] = group_from_dict(GROUP, {VARIABLE: np.sum(pointwise, axis=0)}, dims={VARIABLE: [DIM]})
    out["observed_data"] = group_from_dict("observed_data", {"y": np.asarray(t.y)}, dims={"y": [DIM]})
    log_p = normalized_log_probabilities(np.stack(log_f, axis=-1))  # (S, n, K)
    gumbel = np.random.default_rng([int(seed), 1]).gumbel(size=log_p.shape)
    codes = np.argmax(log_p + gumbel, axis=-1).astype(np.float64)  # a categorical draw per draw and row
    out["posterior_predictive"] = group_from_dict("posterior_predictive", {"y": codes.reshape(*lead, -1)},
                                                  dims={"y": [DIM]})
    if t_test is not None:
        log_p = normalized_log_probabilities(np.stack(log_f_test, axis=-1))  # (S, m, K)
        codes = np.asarray(t_test.y, dtype=int)
        held = np.take_along_axis(log_p, np.broadcast_to(codes[None, :, None], log_p.shape[:2] + (1,)), -1)[..., 0]
        out["predictions"] = group_from_dict(
            "predictions", {"log_lik": held.reshape(*lead, -1), "prob": np.exp(log_p).reshape(*lead, *log_p.shape[1:])},
            dims={"log_lik": ["test_obs"], "prob": ["test_obs", "class_code"]})
    idata = from_datasets(out)
    for key, kind in (("sampling_seconds", float), ("compile_seconds", float), ("n_divergences", int)):
        values = [dataset(p, "posterior").attrs.get(key) for p in parts]  # the K runs' together
        if all(v is not None for v in values):
            idata.posterior.attrs[key] = kind(np.sum(values))
    idata.posterior.attrs.update(inference=f"one-vs-all-{parts[0].posterior.attrs.get('inference', 'draws')}",
                                 one_vs_all=1, class_seeds=[class_seed(seed, k) for k in range(len(t.parts))])
    if not log_likelihood:  # computed from the parts' draws when asked (ensure_log_likelihood)
        defer_log_likelihood(idata, t, kwargs_list, posterior=site_posteriors)
    return idata


def one_vs_all_log_likelihood(t, kwargs_list, posteriors, compute):
    """``(S, n)``: ``Σ_k log p(t_ik | β_k)`` of the one-vs-all record ``t`` from its parts' draws
    (``posteriors``, one ``xarray.Dataset`` per class in the part's site layout, or the stacked posterior
    when the parts' weights are their sites), each part scored by ``compute(part, kwargs, posterior)``."""
    if not isinstance(posteriors, (list, tuple)):
        if any(part.to_weights is not None or part.weight_site != "beta" for part in t.parts):
            raise ValueError("the stacked one-vs-all draws are the parts' weights, not their model's sites: "
                             "compute the log-likelihood from the parts' own draws")
        posteriors = [posteriors.sel({CLASS_DIM: c}, drop=True) for c in t.classes]
    kwargs_list = kwargs_list if isinstance(kwargs_list, (list, tuple)) else [None] * len(t.parts)
    return np.sum([compute(part, kw, post) for part, kw, post in zip(t.parts, kwargs_list, posteriors)], axis=0)
