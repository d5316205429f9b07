"""Policy improvement by play-outs in the real deal (``sergeant-major improve``; docs/training.md).

- :mod:`~training.playouts.config`: the configuration of a run (``configs/real_deal_*.yaml``, ``kind: playouts``)
- :mod:`~training.playouts.label`: whole games of a policy, each legal move of its decisions played out in the
  real deal
- :mod:`~training.playouts.data`: the data files, read within bounds
- :mod:`~training.playouts.fit`: the Q-network's fit, and the policies made from it (combine, merge, distil)
- :mod:`~training.playouts.run`: a run's stages in its run folder, resumable (the run layer's backend)
- :mod:`~training.playouts.cli`: the command line (a run, or one step by hand)
"""
