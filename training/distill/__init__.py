"""The label -> fit -> policy pipeline (``sergeant-major distill``; ``sergeant-major improve``: its play-out part).

Labellers:

- :mod:`~training.distill.data`: a search (pimc's values of each legal move) on hands played, in resumable atomic
  shards; the one label file format of both labellers, its one writer and its one reader (within bounds)
- :mod:`~training.distill.label_playouts`: real-deal play-outs (each legal move played out by the policy);
  :mod:`~training.distill.data_playouts`: their entries, the rows the Q-network's fit reads, and the conversion of
  files of the old format

Fits:

- :mod:`~training.distill.fit`: imitation of the search's labels (DAgger, expert iteration, ``fit.method: q``),
  the search run
- :mod:`~training.distill.fit_q`: the Q-network on play-out values, and the policies made from it (combine,
  merge, distil)
- :mod:`~training.distill.belief`: a belief network from a policy's self-play, for pimc's deals

Shared: :mod:`~training.distill.network` (every network, built in one place), :mod:`~training.distill.npy` (the
one ``.npy`` header reader), :mod:`~training.distill.symmetry` (suit renamings: augmentation). Runs:
:mod:`~training.distill.config` (``kind: distill``), :mod:`~training.distill.config_playouts` (``kind:
playouts``), :mod:`~training.distill.run_playouts` (the play-out run's stages); :mod:`~training.distill.cli`: the
one command (the config's kind picks the part; the play-out steps by hand).
"""
