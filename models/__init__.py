"""What the papers write down: priors, likelihoods, NumPyro model functions, feature maps."""
import sparsebayes  # noqa: F401  (enables float64 for every solver)

from .features import GaussianKernelFeatures, LinearFeatures, QuadraticFeatures, gaussian_kernel

__all__ = ["GaussianKernelFeatures", "LinearFeatures", "QuadraticFeatures", "gaussian_kernel"]

from .adaptive import sparse_probit_model, sparse_regression_model
from .likelihoods import GaussianLikelihood, ProbitLikelihood
from .horseshoe import HorseshoePrior
from .priors import HIERARCHIES, JeffreysPrior, LaplacePrior, make_prior, register_hierarchy, require

__all__ += [
    "GaussianLikelihood", "HIERARCHIES", "HorseshoePrior", "JeffreysPrior", "LaplacePrior", "ProbitLikelihood",
    "make_prior", "register_hierarchy", "require",
    "sparse_probit_model", "sparse_regression_model",
]
