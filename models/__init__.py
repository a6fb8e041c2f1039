"""What the papers write down: priors, likelihoods, NumPyro model functions, feature maps."""
import sparsebayes  # noqa: F401  (enables float64 for every solver)

from .features import GaussianKernelFeatures, LinearFeatures, QuadraticFeatures, gaussian_kernel

__all__ = ["GaussianKernelFeatures", "LinearFeatures", "QuadraticFeatures", "gaussian_kernel"]
