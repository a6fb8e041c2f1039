"""sparsebayes: sparse Bayesian learning with NumPyro models and fast custom inference.

Subpackages
-----------
sparsebayes.models       priors, likelihoods, NumPyro model functions, feature maps
sparsebayes.inference    EM, bound optimization, type-II ML, Gibbs and NUTS runners; estimators
sparsebayes.comparisons  datasets, paper reproductions, the ``sparsebayes`` CLI, benchmarks
"""
import jax

# Every solver of the suite runs in float64 (a test guards it).
jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"
