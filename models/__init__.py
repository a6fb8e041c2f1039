"""What the papers write down: priors, likelihoods, NumPyro model functions, feature maps.

The names below are loaded on first access (PEP 562 ``__getattr__``): ``import
sparsebayes.models`` (which every engine module triggers through ``sparsebayes.models.X``)
then does not import NumPyro's distributions or scikit-learn before they are needed.
``from sparsebayes.models import LinearFeatures``, attribute access and ``dir()`` work as if
the names were imported eagerly; submodules load on first attribute access too.
"""
import sparsebayes  # noqa: F401  (enables float64 for every solver)

#: public name -> submodule that defines it (imported when the name is first used)
_LAZY = {
    "GaussianKernelFeatures": "features",
    "LinearFeatures": "features",
    "QuadraticFeatures": "features",
    "gaussian_kernel": "features",
    "sparse_probit_model": "adaptive",
    "sparse_regression_model": "adaptive",
    "GaussianLikelihood": "likelihoods",
    "ProbitLikelihood": "likelihoods",
    "BernoulliLogisticLikelihood": "likelihoods",
    "PoissonLikelihood": "likelihoods",
    "StudentTLikelihood": "likelihoods",
    "NegativeBinomialLikelihood": "likelihoods",
    "MultinomialLogisticLikelihood": "multinomial",
    "LIKELIHOODS": "likelihoods",
    "register_likelihood": "likelihoods",
    "require_likelihood": "likelihoods",
    "HorseshoePrior": "horseshoe",
    "ARDPrior": "typeii_hierarchies",
    "LaplaceVariancePrior": "typeii_hierarchies",
    "ScaledLaplacePrior": "typeii_hierarchies",
    "FlatPrior": "map_priors",
    "GaussianPrior": "map_priors",
    "HIERARCHIES": "priors",
    "JeffreysPrior": "priors",
    "LaplacePrior": "priors",
    "make_prior": "priors",
    "register_hierarchy": "priors",
    "require": "priors",
}

__all__ = [
    "GaussianKernelFeatures", "LinearFeatures", "QuadraticFeatures", "gaussian_kernel",
    "GaussianLikelihood", "HIERARCHIES", "HorseshoePrior", "JeffreysPrior", "LaplacePrior", "ProbitLikelihood",
    "ARDPrior", "FlatPrior", "GaussianPrior", "LaplaceVariancePrior", "ScaledLaplacePrior",
    "make_prior", "register_hierarchy", "require",
    "BernoulliLogisticLikelihood", "LIKELIHOODS", "MultinomialLogisticLikelihood", "PoissonLikelihood",
    "StudentTLikelihood", "NegativeBinomialLikelihood", "register_likelihood", "require_likelihood",
    "sparse_probit_model", "sparse_regression_model",
]


def __getattr__(name):
    return sparsebayes._lazy_attribute(__name__, globals(), _LAZY, name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
