"""The statistics of duplicate deals: sums per deal, ratios and differences with bootstrap CIs, ratings.

Every figure of ``sergeant-major eval``, ``tournament`` and the leaderboard comes from here, so that they
agree:

- :func:`deal_sums`: a table's results summed per deal, agent and role (the deal is the unit: every seating
  of a deal plays the same cards);
- :func:`bootstrap_weights`: resamplings of the deals as weights; :func:`ratio_estimate` and
  :func:`difference_estimate`: a ratio of sums over the deals (balance per hand, ...) or the difference of
  two, with the 95% percentile interval over those resamplings;
- :func:`bradley_terry` and :func:`rate`: the one rating system, Bradley-Terry on the Elo scale (mean 0) over
  pairwise comparisons per deal (:func:`pairwise_wins`: who had the higher balance per hand; in game mode the
  higher share of games won first), with its CI refitted on every resampling of the deals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .deals import derive_seed

ELO = 400 / np.log(10)  # Elo points per unit of log-strength


@dataclass
class Estimate:
    """A figure with its 95% bootstrap confidence interval."""

    mean: float
    lo: float
    hi: float

    def text(self, signed: bool = True, digits: int = 3) -> str:
        fmt = f"{{:{'+' if signed else ''}.{digits}f}}"
        return f"{fmt.format(self.mean)} [{fmt.format(self.lo)}, {fmt.format(self.hi)}]"

    def to_dict(self) -> dict[str, float | None]:
        """``mean``, ``lo`` and ``hi`` as JSON data: None (null) for one that cannot be computed (NaN: no hand
        to estimate from, say a role an agent never held), since JSON holds finite numbers only."""
        values = {"mean": self.mean, "lo": self.lo, "hi": self.hi}
        return {key: value if math.isfinite(value) else None for key, value in values.items()}

    @classmethod
    def from_dict(cls, data: dict[str, float | None]) -> Estimate:
        """The estimate :meth:`to_dict` gave ``data`` for (None back to NaN)."""
        return cls(*(math.nan if data[key] is None else data[key] for key in ("mean", "lo", "hi")))


def bootstrap_weights(deals: int, seed: int, bootstrap: int) -> np.ndarray:
    """``bootstrap`` resamplings of the deals as weights (deal counts), drawn from ``seed``."""
    rng = np.random.default_rng(derive_seed(seed, 0xB007))
    return np.concatenate(
        [
            rng.multinomial(deals, np.full(deals, 1.0 / deals), size=min(500, bootstrap - b))
            for b in range(0, bootstrap, 500)
        ]
    ).astype(float)


def ratio_estimate(num: np.ndarray, den: np.ndarray, weights: np.ndarray) -> Estimate:
    """The ratio of the sums of ``num`` and ``den`` over the deals, with a 95% percentile CI from the resampled
    deal ``weights`` (:func:`bootstrap_weights`)."""
    total = den.sum()
    mean = float(num.sum() / total) if total else float("nan")
    if not total:
        return Estimate(mean, float("nan"), float("nan"))
    nums = weights @ num
    dens = weights @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = nums / dens
    ratios = ratios[np.isfinite(ratios)]
    lo, hi = np.percentile(ratios, [2.5, 97.5]) if len(ratios) else (float("nan"), float("nan"))
    return Estimate(mean, float(lo), float(hi))


def difference_estimate(
    na: np.ndarray, da: np.ndarray, nb: np.ndarray, db: np.ndarray, weights: np.ndarray
) -> Estimate:
    """``na/da - nb/db`` (ratios of sums over the deals), with a 95% percentile CI from the resampled deal
    ``weights``; NaN bounds when neither ratio can be resampled."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = float(na.sum() / da.sum() - nb.sum() / db.sum())
        diffs = (weights @ na) / (weights @ da) - (weights @ nb) / (weights @ db)
    diffs = diffs[np.isfinite(diffs)]
    if not len(diffs):  # a role neither agent played (the auction decides who deals)
        return Estimate(mean, float("nan"), float("nan"))
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return Estimate(mean, float(lo), float(hi))


@dataclass
class DealSums:
    """Per deal, agent and role of one table's results (:func:`deal_sums`), arrays ``[deal, agent, role]``
    with role ``players`` standing for all roles: sums of ``balance``, ``tricks`` and ``wins`` (games won,
    counted on the game's last hand), ``hands`` played; ``games[deal, agent]``, games played; and
    ``seat_balance`` and ``seat_hands`` ``[deal, agent, seat]``, seat by ``training.evaluation.result.SEATS``."""

    balance: np.ndarray
    tricks: np.ndarray
    wins: np.ndarray
    hands: np.ndarray
    games: np.ndarray
    seat_balance: np.ndarray
    seat_hands: np.ndarray


def deal_sums(deals: list[dict[str, Any]], n: int) -> DealSums:
    """The sums of :class:`DealSums` over the seatings of every deal (``play_deal`` results) of ``n`` agents."""
    d = len(deals)
    players = len(deals[0]["seatings"][0]["seating"])
    every = players  # the role index of "all"
    bal = np.zeros((d, n, players + 1))
    tricks = np.zeros((d, n, players + 1))
    wins = np.zeros((d, n, players + 1))
    hands = np.zeros((d, n, players + 1))
    games = np.zeros((d, n))
    seat_bal = np.zeros((d, n, players))
    seat_hands = np.zeros((d, n, players))
    for i, deal in enumerate(deals):
        for seating in deal["seatings"]:
            who = seating["seating"]
            winners = set(seating["winners"])
            last = len(seating["hands"]) - 1
            first = seating.get("first_dealer", seating["hands"][0][0] if seating["hands"] else 0)
            for h, (dealer, won, balances) in enumerate(seating["hands"]):
                for s in range(players):
                    a, r = who[s], (s - dealer) % players
                    seat_bal[i, a, (s - first) % players] += balances[s]
                    seat_hands[i, a, (s - first) % players] += 1
                    for role in (r, every):
                        bal[i, a, role] += balances[s]
                        tricks[i, a, role] += won[s]
                        hands[i, a, role] += 1
                        if h == last and s in winners:
                            wins[i, a, role] += 1
            for s in range(players):
                games[i, who[s]] += 1
    return DealSums(bal, tricks, wins, hands, games, seat_bal, seat_hands)


def bradley_terry(wins: np.ndarray, iterations: int = 2000, tolerance: float = 1e-10) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale, mean 0) from ``wins[..., a, b]`` (a's wins over b), batched over
    the leading axes; one tie added to every pair compared (see the module docstring)."""
    compared = (wins + np.swapaxes(wins, -1, -2)) > 0
    wins = wins + 0.5 * compared
    games = wins + np.swapaxes(wins, -1, -2)
    total = wins.sum(axis=-1)
    n = wins.shape[-1]
    log_p = np.zeros(wins.shape[:-1])
    for _ in range(iterations):
        p = np.exp(log_p)
        with np.errstate(invalid="ignore", divide="ignore"):
            den = np.where(games > 0, games / (p[..., :, None] + p[..., None, :]), 0.0).sum(axis=-1)
            new = np.log(np.where(den > 0, total / den, 1.0))
        new -= new.mean(axis=-1, keepdims=True)
        done = np.max(np.abs(new - log_p)) < tolerance
        log_p = new
        if done:
            break
    return ELO * log_p if n else log_p


def deal_figure(sums: Any, mode: str, every: int) -> np.ndarray:
    """Per deal and agent of one table, what a comparison ranks by: balance per hand (game mode: share of
    games won, then balance per hand, as one sortable number)."""
    balance = sums.balance[:, :, every] / np.maximum(sums.hands[:, :, every], 1)
    if mode == "hand":
        return balance
    won = sums.wins[:, :, every] / np.maximum(sums.games, 1)
    return won * 1e6 + balance  # a balance per hand is far below 1e6 in size


def pairwise_wins(sums: DealSums, mode: str, who: list[int], n: int) -> np.ndarray:
    """``wins[deal, a, b]``: a's wins over b on each deal of one table (ties half each), for the ``n`` agents of
    a field; ``who[k]`` is the field index of the table's agent ``k``."""
    players = sums.balance.shape[2] - 1
    figure = deal_figure(sums, mode, players)
    wins = np.zeros((sums.balance.shape[0], n, n))
    for k in range(len(who)):
        for m in range(len(who)):
            if k != m:
                wins[:, who[k], who[m]] += (figure[:, k] > figure[:, m]) + 0.5 * (figure[:, k] == figure[:, m])
    return wins


def rate(wins: np.ndarray, weights: np.ndarray) -> list[Estimate]:
    """Each agent's Bradley-Terry rating (Elo scale, mean 0) from ``wins[deal, a, b]``, with the 95% interval of
    the ratings refitted on every resampling of the deals (``weights``)."""
    rating = bradley_terry(wins.sum(axis=0))
    resampled = bradley_terry(np.einsum("bd,dxy->bxy", weights, wins))
    lo, hi = np.percentile(resampled, [2.5, 97.5], axis=0)
    return [Estimate(float(rating[a]), float(lo[a]), float(hi[a])) for a in range(wins.shape[1])]
