"""One module per paper's experiments; each registers its ids with ``@experiment``."""
