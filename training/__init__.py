"""Training: the trainers, what they share, and evaluation.

- :mod:`training.common`: what every trainer shares: the typed-YAML config toolkit and every config's kind, run
  folders, resume, progress, the project's checkpoint format, worker processes, Ray
- :mod:`training.evaluation`: the duplicate evaluation of any agent specs (eval, tournament, leaderboard)
- the trainers, one layer and none importing another (tests/test_layers.py):

  - :mod:`training.sb3`: SB3's MaskablePPO on one learner seat (``--backend sb3``)
  - :mod:`training.vector`: over the batched engine, masked PPO (``--backend vector``) and deep Monte-Carlo
    (:mod:`training.vector.dmc`, ``--backend dmc``); a best response to a fixed agent
    (:mod:`training.vector.exploit`, ``sergeant-major exploit``)
  - :mod:`training.rllib`: PPO on Ray with a league (``--backend rllib``)
  - :mod:`training.distill`: the label -> fit -> policy pipeline (``sergeant-major distill``), its play-out part
    included (``sergeant-major improve``)

- :mod:`training.cli` (and :mod:`training.train`): ``sergeant-major train``, the command line of every backend
"""
