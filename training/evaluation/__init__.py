"""Duplicate evaluation of any agents: seatings, confidence intervals, ratings, and the same on Ray.

- :mod:`~training.evaluation.evaluate`: the duplicate evaluation (``sergeant-major eval``)
- :mod:`~training.evaluation.deals`: one deal played in every seating (what every worker runs)
- :mod:`~training.evaluation.statistics`: sums per deal, ratios and differences with bootstrap CIs, and the one
  rating system (Bradley-Terry, Elo scale) of eval, tournament and the leaderboard
- :mod:`~training.evaluation.config`: the eval section every trainer's config has, and the evaluation config of
  every backend (``configs/eval.yaml``: ``sergeant-major train --evaluate POLICY --eval-config FILE``)
- :mod:`~training.evaluation.ray_tasks`: its deals as Ray tasks, with retries (``eval --ray``)
- :mod:`~training.evaluation.tournament`: every table of any number of agents, stored one file per table,
  resumable (``sergeant-major tournament``)
- :mod:`~training.evaluation.leaderboard`: the tournament's leaderboard: Bradley-Terry ratings, balances,
  pairwise figures, Markdown, JSON and a plot
"""
