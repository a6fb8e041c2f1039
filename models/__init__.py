"""What the papers write down: priors, likelihoods, NumPyro model functions, feature maps.

The public names are loaded on first access (PEP 562 ``__getattr__``): ``import
sparsebayes.models`` (which every engine module triggers through ``sparsebayes.models.X``)
then does not import NumPyro's distributions or scikit-learn before they are needed.
``from sparsebayes.models import LinearFeatures``, attribute access and ``dir()`` work as if
the names were imported eagerly; submodules load on first attribute access too.
"""
from sparsebayes._exports import lazy_exports as _lazy_exports

#: The public names, each once: name -> submodule that defines it (imported when first used).
_LAZY = {
    # feature maps
    "GaussianKernelFeatures": "features",
    "LinearFeatures": "features",
    "QuadraticFeatures": "features",
    "gaussian_kernel": "features",
    # NumPyro model functions
    "sparse_probit_model": "adaptive",
    "sparse_regression_model": "adaptive",
    "sparse_model": "model",
    # likelihoods and their registry
    "GaussianLikelihood": "likelihoods",
    "ProbitLikelihood": "likelihoods",
    "BernoulliLogisticLikelihood": "likelihoods",
    "PoissonLikelihood": "likelihoods",
    "StudentTLikelihood": "likelihoods",
    "NegativeBinomialLikelihood": "likelihoods",
    "MultinomialLogisticLikelihood": "likelihoods.multinomial",
    "LIKELIHOODS": "likelihoods",
    "register_likelihood": "likelihoods",
    "require_likelihood": "likelihoods",
    # hierarchies (priors) and their registry
    "HorseshoePrior": "priors.horseshoe",
    "ARDPrior": "priors.typeii",
    "LaplaceVariancePrior": "priors.typeii",
    "ScaledLaplacePrior": "priors.typeii",
    "FlatPrior": "priors.penalty",
    "GaussianPrior": "priors.penalty",
    "HIERARCHIES": "priors",
    "JeffreysPrior": "priors",
    "LaplacePrior": "priors",
    "make_prior": "priors",
    "register_hierarchy": "priors",
    "require": "priors",
}

__all__, __getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
