"""Search distillation: label positions with a search, then fit a policy to the labels.

- :mod:`~training.distill.data`: search-labelled decisions (pimc action values) in resumable atomic shards
- :mod:`~training.distill.fit`: the fit, DAgger rounds and the export (``python -m training.distill``)
- :mod:`~training.distill.symmetry`: suit-permutation tables of the observation and actions (augmentation)
"""
