"""Search distillation: label positions with a search, then fit a policy to the labels.

- :mod:`~training.distill.data`: search-labelled decisions (pimc action values) in resumable atomic shards
- :mod:`~training.distill.config`: the configuration of a run (``configs/distill*.yaml``)
- :mod:`~training.distill.fit`: the fit, DAgger rounds and the export (``sergeant-major distill``)
- :mod:`~training.distill.symmetry`: suit-permutation tables of the observation and actions (augmentation)
"""
