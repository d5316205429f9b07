"""The fit of the Q-network on play-out data, and the policies made from it: merge, combine, distil.

``fit``: a Q-network (a policy's hidden layers as the start, a fresh head) regressed on the labelled values,
centred over the legal moves of each decision (only the differences between moves matter, and the deal's luck,
common to them all, cancels). The last tenth of each data file is held out; for it the fit reports, per decision
type, the mean of ``values[argmax Q] - values[policy's move]``: the real-deal gain of taking the Q-network's move,
with its 95% interval. The network is written as a policy file whose logits are the Q values (in units of
:data:`Q_SCALE` tricks), so ``mix:base=trained;discard=ppo:q.pt`` plays its discards. ``game_weight`` W values a
move at its balance plus W times its result reward: the objective of whole games, where a hand that reaches 12
tricks wins.

``combine``: one policy file whose logits are ``weight`` times a prior policy's logits plus the Q-network's values
in tricks (the two networks side by side in one wider MLP, exact): the prior's move unless the play-outs rank
another move higher by more than the prior's preference for its own.

``merge``: a policy fine-tuned to take the Q-network's exchange, trump and discard moves, its play kept.

``distil``: a copy of a (combined, wider) policy in a smaller network, learnt from its move probabilities in its
own self-play, so that the next round plays, plays out and combines at the smaller network's cost.

The fit, the merge and the combination take their rule set from the files and the prior; files of two rule sets
are not fitted together. The fit, the merge and the copy train on ``device`` (the run's ``device``, ``--device``:
:mod:`training.common.device`): the networks and their updates are there, the data, the self-play that makes it
and the random draws stay on the CPU, each batch sent over; on ``cpu`` nothing moves. Progress (epochs) goes to
``log`` (stderr by default); the figures go to stdout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.players.ppo_agent import NumpyPolicy, export_policy, policy_from_torch
from sm_env.compiled.batch import VectorGame
from sm_env.core.game import PHASE_NAMES, PLAY
from sm_env.core.rules import RuleSet
from sm_env.observation import observed_phases
from training.common.device import module_device, resolve_device
from training.common.fixed_agents import PolicyOpponent
from training.common.progress import write_line
from training.distill.config_playouts import FIT_BATCH, LABELLED, STANDARD, TYPES, labelled_rules
from training.distill.data_playouts import PlayoutsError, load_rows, move_values
from training.distill.label_playouts import GAMES, policy_agent, trained_on
from training.distill.network import policy_network

TRAINER = "training.playouts"  # what the policy files record as their trainer (as before the package moved)
Q_SCALE = 4.0  # the Q-network regresses balances / 4; its outputs times this are tricks
Log = Callable[[str], None]
Stop = Callable[[], bool]  # asked between steps of a fit: True stops it (nothing is written)


def _never() -> bool:
    return False


def _centred(q: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    q = torch.where(legal, q, torch.zeros_like(q))
    mean = q.sum(dim=1, keepdim=True) / legal.sum(dim=1, keepdim=True)
    return torch.where(legal, q - mean, torch.zeros_like(q))


def _log_probs(network: nn.Sequential, x: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """The log-probabilities of ``network``'s moves on observations ``x``, the illegal moves masked out."""
    return torch.log_softmax(network(x).masked_fill(~legal, -1e9), dim=1)


def _network(spec: str, fresh_head: bool, rules: RuleSet = STANDARD) -> nn.Sequential:
    """The policy of ``spec`` (one for ``rules``) as a torch network (ReLU), its head replaced by a small fresh
    one if asked (:func:`training.distill.network.policy_network`)."""
    return policy_network(policy_agent(spec, rules).policy, fresh_head, where=spec)


def _q_moves(net: nn.Sequential, obs: np.ndarray, legal: np.ndarray, own: np.ndarray, margin: float) -> np.ndarray:
    """The network's best legal move where its value is more than ``margin`` tricks above that of ``own``
    (the policy's move), else ``own``."""
    out = own.copy()
    device = module_device(net)
    with torch.no_grad():
        for i in range(0, len(obs), 8192):
            x = torch.from_numpy(obs[i : i + 8192].astype(np.float32)).to(device)
            q = net(x).cpu().numpy() * Q_SCALE  # in tricks
            q[~legal[i : i + 8192]] = -np.inf
            best = q.argmax(axis=1)
            rows = np.arange(len(q))
            better = q[rows, best] > q[rows, own[i : i + 8192]] + margin
            out[i : i + 8192][better] = best[better]
    return out


def _batch_rows(
    rng: np.random.Generator, rows: np.ndarray, epochs: int, start: float, log: Log = write_line
) -> Iterator[np.ndarray]:
    """``epochs`` passes over ``rows`` in random order, :data:`FIT_BATCH` of them at a time (sorted; a last
    partial batch is dropped); logs the end of each pass with the seconds since ``start``."""
    for epoch in range(epochs):
        order = rng.permutation(rows)
        for i in range(0, len(order) - FIT_BATCH + 1, FIT_BATCH):
            yield np.sort(order[i : i + FIT_BATCH])
        log(f"epoch {epoch + 1}/{epochs}: {time.time() - start:.0f} s")


def _train(net: nn.Sequential, batches, steps: int, learning_rate: float, stop: Stop = _never) -> bool:
    """Adam over ``batches`` (an iterator of functions giving the loss), the rate decaying linearly to 0; False
    when ``stop()`` ended it early."""
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate, weight_decay=1e-5)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: max(0.0, 1 - step / steps))
    for loss_of in batches:
        if stop():
            return False
        loss = loss_of()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    return True


def fit(
    data: list[str],
    init: str,
    out: str,
    epochs: int,
    learning_rate: float,
    seed: int,
    game_weight: float = 0.0,
    fresh_head: bool = True,
    log: Log = write_line,
    stop: Stop = _never,
    device: str = "auto",
) -> dict[str, Any] | None:
    """Fit the Q-network on ``data``, report the held-out real-deal gains per decision type (and with a margin
    over the policy's move), write the network to ``out`` as a policy file (module docstring). ``init``'s hidden
    layers start it, with a fresh head unless ``fresh_head`` is False (``init`` a Q-network already). With
    ``game_weight`` W the value of a move is its balance plus W times its result reward (a hand that wins the
    game: +1; one that another seat wins: -1 shared by the losers; otherwise 0). Returns the held-out figures
    (``{"held_out": N, "gains": [{margin, type, decisions, mean, half_width, changed}, ...]}``), or None when
    ``stop()`` ended the fit (nothing written). ``device``: where the network trains (module docstring)."""
    rows, train, held, ruleset = load_rows(data, results=game_weight > 0)
    rows["values"] = move_values(rows, game_weight, data)
    valued = f"balance + {game_weight:g} x result reward" if game_weight else "balance"
    return fit_rows(
        rows, train, held, ruleset, init, out, epochs, learning_rate, seed, valued, fresh_head, log, stop, device=device
    )


def fit_rows(
    rows: dict[str, np.ndarray],
    train: np.ndarray,
    held: np.ndarray,
    ruleset: RuleSet,
    init: str,
    out: str,
    epochs: int,
    learning_rate: float,
    seed: int,
    valued: str = "balance",
    fresh_head: bool = True,
    log: Log = write_line,
    stop: Stop = _never,
    renamings: tuple[np.ndarray, np.ndarray] | None = None,
    device: str = "auto",
) -> dict[str, Any] | None:
    """:func:`fit` on rows already loaded (:func:`~training.distill.data_playouts.load_rows`' layout; ``values`` each
    move's value in tricks, ``valued`` saying what it is): ``train`` and ``held`` index them. Also the fit of a
    search's values (training/distill, ``fit.method: q``). ``renamings``: gather tables of the rule set's suit
    renamings (observation [k, O], actions [k, A]; training.distill.symmetry.index_tables), one drawn for each
    training row of each batch. ``device``: where the network trains (module docstring)."""
    if len(train) < FIT_BATCH:
        raise PlayoutsError(f"fit: {len(train)} training decisions, fewer than one batch of {FIT_BATCH}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    legal = rows["mask"].astype(bool)
    values = np.nan_to_num(rows["values"])
    values /= Q_SCALE  # balances run about -8..+8
    net = _network(init, fresh_head=fresh_head, rules=ruleset).to(resolve_device(device, "device"))
    dev = module_device(net)

    tables = None if renamings is None else tuple(torch.from_numpy(t.astype(np.int64)) for t in renamings)

    def batches():
        for idx in _batch_rows(rng, train, epochs, start, log):
            x, m = torch.from_numpy(rows["obs"][idx].astype(np.float32)), torch.from_numpy(legal[idx])
            y = torch.from_numpy(values[idx])
            if tables is not None:
                pick = torch.from_numpy(rng.integers(len(tables[0]), size=len(idx)))
                x = torch.gather(x, 1, tables[0][pick])
                m, y = torch.gather(m, 1, tables[1][pick]), torch.gather(y, 1, tables[1][pick])
            x, m, y = x.to(dev), m.to(dev), y.to(dev)
            yield lambda x=x, m=m, y=y: ((_centred(net(x), m) - _centred(y, m)) ** 2).sum() / m.sum()

    start = time.time()
    if not _train(net, batches(), epochs * (len(train) // FIT_BATCH), learning_rate, stop):
        return None
    report: dict[str, Any] = {
        "held_out": len(held),
        "gains": [],
        "suit_renamings": 0 if tables is None else len(tables[0]),
    }
    own, kinds, real = rows["policy_move"][held].astype(np.int64), rows["phase"][held], rows["values"][held]
    print(f"held out: {len(held)} decisions; gain ({valued}) of the Q-network's move over the policy's:")
    for margin in (0.0, 0.1, 0.2):
        choice = _q_moves(net, rows["obs"][held], legal[held], own, margin)
        gain = real[np.arange(len(held)), choice] - real[np.arange(len(held)), own]
        for kind in TYPES.values():
            sel = kinds == kind
            if sel.any():
                half = 1.96 * gain[sel].std() / np.sqrt(sel.sum())
                changed = (choice[sel] != own[sel]).mean()
                print(
                    f"  margin {margin:.1f}  {PHASE_NAMES[kind]:<9} {sel.sum():>7} decisions  {gain[sel].mean():+.4f} "
                    f"+- {half:.4f}  (move changed in {changed:.1%})"
                )
                report["gains"].append(
                    {
                        "margin": margin,
                        "type": PHASE_NAMES[kind],
                        "decisions": int(sel.sum()),
                        "mean": float(gain[sel].mean()),
                        "half_width": float(half),
                        "changed": float(changed),
                    }
                )
                if "results" in rows:  # a fit for the game (game_weight > 0)
                    results = rows["results"][held]
                    won = results[np.arange(len(held)), choice] - results[np.arange(len(held)), own]
                    half = 1.96 * won[sel].std() / np.sqrt(sel.sum())
                    print(f"{'':24}of which the result reward: {won[sel].mean():+.5f} +- {half:.5f}")
    export_policy(policy_from_torch([net], "relu"), out, rules=ruleset, trainer=TRAINER)
    print(f"wrote {out}")
    return report


def merge(
    data: list[str],
    init: str,
    teacher: str,
    kinds: list[str],
    margin: float,
    out: str,
    epochs: int,
    learning_rate: float,
    seed: int,
    log: Log = write_line,
    device: str = "auto",
) -> None:
    """One policy network: ``init`` fine-tuned so that its moves of the decision types ``kinds`` on ``data``'s
    decisions are the Q-network ``teacher``'s (where it is ``margin`` tricks better than ``init``'s own move),
    its other exchange, trump and discard moves its own, while its play keeps ``init``'s move
    probabilities (cross-entropy to ``init``'s distribution on as many play decisions of ``init``'s self-play).
    Reports the agreement on the held-out rows; writes ``out``. ``device``: where the networks run (module
    docstring)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    rows, train, held, ruleset = load_rows(data, results=False)
    legal = rows["mask"].astype(bool)
    dev = resolve_device(device, "device")
    q_net, start_net, net = (_network(spec, False, ruleset).to(dev) for spec in (teacher, init, init))
    own = rows["policy_move"].astype(np.int64)
    taught = np.isin(rows["phase"], [PHASE_NAMES.index(kind) for kind in kinds])
    target = np.where(taught, _q_moves(q_net, rows["obs"], legal, own, margin), own)
    play_obs, play_legal = _play_decisions(init, len(rows["obs"]), seed, ruleset)
    play_held = np.arange(len(play_obs) - len(play_obs) // 10, len(play_obs))
    play_train = np.arange(play_held[0])
    batch = 512

    def batches():
        for epoch in range(epochs):
            order, play_order = rng.permutation(train), rng.permutation(play_train)
            for i in range(0, min(len(order), len(play_order)) - batch + 1, batch):
                a, b = np.sort(order[i : i + batch]), np.sort(play_order[i : i + batch])
                x, m = torch.from_numpy(rows["obs"][a].astype(np.float32)).to(dev), torch.from_numpy(legal[a]).to(dev)
                y = torch.from_numpy(target[a]).to(dev)
                px, pm = torch.from_numpy(play_obs[b]).to(dev), torch.from_numpy(play_legal[b]).to(dev)
                with torch.no_grad():
                    keep = _log_probs(start_net, px, pm).exp()

                def loss_of(x=x, m=m, y=y, px=px, pm=pm, keep=keep) -> torch.Tensor:
                    moved = -_log_probs(net, x, m).gather(1, y[:, None]).mean()
                    kept = -(keep * _log_probs(net, px, pm)).sum(dim=1).mean()
                    return moved + kept

                yield loss_of
            log(f"epoch {epoch + 1}/{epochs}: {time.time() - start:.0f} s")

    start = time.time()
    _train(net, batches(), epochs * (min(len(train), len(play_train)) // batch), learning_rate)
    with torch.no_grad():
        x, m = torch.from_numpy(rows["obs"][held].astype(np.float32)).to(dev), torch.from_numpy(legal[held]).to(dev)
        moves = _log_probs(net, x, m).argmax(dim=1).cpu().numpy()
        px, pm = torch.from_numpy(play_obs[play_held]).to(dev), torch.from_numpy(play_legal[play_held]).to(dev)
        moved_play, start_play = _log_probs(net, px, pm).argmax(dim=1), _log_probs(start_net, px, pm).argmax(dim=1)
        same_play = (moved_play == start_play).float().mean()
    for kind in LABELLED:
        sel = rows["phase"][held] == kind
        if sel.any():
            agree = (moves[sel] == target[held][sel]).mean()
            print(f"  {PHASE_NAMES[kind]:<9} held out: the teacher's move in {agree:.1%}")
    print(f"  play      held out: {init}'s move in {float(same_play):.1%}")
    export_policy(policy_from_torch([net], "relu"), out, rules=ruleset, trainer=f"{TRAINER} merge")
    print(f"wrote {out}")


def combine(prior: str, teacher: str, weight: float, out: str) -> None:
    """One policy network whose logits are ``weight`` times ``prior``'s logits plus the Q-network ``teacher``'s
    values in tricks: the prior's move unless the real-deal values rank another move higher by more than the
    prior's preference for its own (in tricks, ``weight`` per unit of log-probability). Exact, no training: the two
    networks side by side in one wider MLP (first layers stacked, the next ones block-diagonal, the heads summed),
    so it loads and plays as any policy file; with ``weight`` 0, the Q-network alone (its values in tricks).
    Writes ``out``."""
    ruleset = trained_on(prior)
    a, q = policy_agent(prior, ruleset).policy, policy_agent(teacher, ruleset).policy
    if weight == 0:  # the Q-network alone, its values in tricks: no prior beside it
        head = (Q_SCALE * q.head[0].T, Q_SCALE * q.head[1])
        hidden = [(w.T, b) for w, b in q.hidden]
        export_policy(NumpyPolicy(hidden, head, q.activation), out, rules=ruleset, trainer=f"{TRAINER} combine")
        print(f"wrote {out}: {teacher} in tricks (weight 0: no prior)")
        return
    if len(a.hidden) != len(q.hidden) or a.activation != "relu" or q.activation != "relu":
        raise PlayoutsError(f"combine: needs two ReLU networks of the same depth, got {a.net_arch} and {q.net_arch}")
    hidden = []  # (weight [out, in], bias), NumpyPolicy's constructor layout
    for k, ((wa, ba), (wq, bq)) in enumerate(zip(a.hidden, q.hidden, strict=True)):
        if k == 0:
            w = np.concatenate([wa.T, wq.T])
        else:
            w = np.zeros((wa.shape[1] + wq.shape[1], wa.shape[0] + wq.shape[0]), dtype=np.float32)
            w[: wa.shape[1], : wa.shape[0]], w[wa.shape[1] :, wa.shape[0] :] = wa.T, wq.T
        hidden.append((w, np.concatenate([ba, bq])))
    head = (
        np.concatenate([weight * a.head[0].T, Q_SCALE * q.head[0].T], axis=1),
        weight * a.head[1] + Q_SCALE * q.head[1],
    )
    export_policy(NumpyPolicy(hidden, head, "relu"), out, rules=ruleset, trainer=f"{TRAINER} combine")
    print(f"wrote {out}: {weight} x {prior} + {teacher} (hidden layers {[w.shape[0] for w, _ in hidden]})")


def _play_decisions(spec: str, count: int, seed: int, rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """``count`` play decisions with a choice from the self-play of ``spec`` (observations, bool masks)."""
    obs, legal, _ = _decisions(spec, count, seed, (PLAY,), rules)
    return obs.astype(np.float32), legal


def _decisions(
    spec: str, count: int, seed: int, phases: tuple[int, ...], rules: RuleSet = STANDARD
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` decisions with a choice, of the ``phases``, from the self-play of ``spec`` in whole games of
    ``rules`` (30 hands at most): observations (f16), bool masks, phases."""
    policy = PolicyOpponent(policy_agent(spec, rules))
    games = VectorGame(GAMES, rules, seed=seed + 1000, episode="game", max_hands=30)
    games.reset()
    obs, legal, kinds, found = [], [], [], 0
    while found < count:
        observations, masks = games.observe(), games.legal_mask()
        phase = observed_phases(observations, rules.num_players)
        chosen = np.flatnonzero(np.isin(phase, phases) & (masks.sum(axis=1) > 1))
        obs.append(observations[chosen].astype(np.float16))
        legal.append(masks[chosen].astype(bool))
        kinds.append(phase[chosen])
        found += len(chosen)
        games.step(policy.act(games, np.arange(GAMES), masks, observations))
    return np.concatenate(obs)[:count], np.concatenate(legal)[:count], np.concatenate(kinds)[:count]


def distil(
    teacher: str,
    init: str,
    decisions: int,
    out: str,
    epochs: int,
    learning_rate: float,
    seed: int,
    rules: RuleSet | str | dict = "standard",
    log: Log = write_line,
    stop: Stop = _never,
    device: str = "auto",
) -> bool:
    """A copy of the policy ``teacher`` in the network of ``init`` (its shape and weights as the start): the
    move probabilities of ``teacher`` on ``decisions`` decisions of its own self-play under ``rules`` (every
    decision type), learnt by the KL divergence. Keeps a combined policy (``combine``) from growing wider with
    each round: the copy plays, is played out and is the next prior. Reports the held-out agreement of the two policies'
    most probable moves per decision type; writes ``out``. False when ``stop()`` ended it (nothing written).
    ``device``: where the two networks run (module docstring)."""
    ruleset = labelled_rules(rules)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    start = time.time()
    obs, legal, kinds = _decisions(teacher, decisions, seed, tuple(TYPES.values()), ruleset)
    log(f"{len(obs)} decisions of {teacher}'s self-play: {time.time() - start:.0f} s")
    dev = resolve_device(device, "device")
    teacher_net, net = _network(teacher, False, ruleset).to(dev), _network(init, False, ruleset).to(dev)

    def log_probs(x: np.ndarray, m: np.ndarray, network: nn.Sequential) -> torch.Tensor:
        return _log_probs(network, torch.from_numpy(x.astype(np.float32)).to(dev), torch.from_numpy(m).to(dev))

    held = np.arange(len(obs) - len(obs) // 10, len(obs))
    train = np.arange(held[0])

    def batches():
        for idx in _batch_rows(rng, train, epochs, start, log):
            x, m = obs[idx], legal[idx]
            with torch.no_grad():
                target = log_probs(x, m, teacher_net)

            def loss_of(x=x, m=m, target=target) -> torch.Tensor:
                gap = (target - log_probs(x, m, net)).masked_fill(~torch.from_numpy(m).to(dev), 0.0)
                return (target.exp() * gap).sum(dim=1).mean()

            yield loss_of

    if not _train(net, batches(), epochs * (len(train) // FIT_BATCH), learning_rate, stop):
        return False
    with torch.no_grad():
        same = np.concatenate(
            [
                (log_probs(obs[i], legal[i], net).argmax(1) == log_probs(obs[i], legal[i], teacher_net).argmax(1))
                .cpu()
                .numpy()
                for i in np.array_split(held, max(1, len(held) // 8192))
            ]
        )
    for kind in TYPES.values():
        sel = kinds[held] == kind
        if sel.any():
            agree = same[sel].mean()
            print(f"  {PHASE_NAMES[kind]:<9} held out {sel.sum():>7}: the teacher's most probable move in {agree:.1%}")
    export_policy(policy_from_torch([net], "relu"), out, rules=ruleset, trainer=f"{TRAINER} distil")
    print(f"wrote {out}")
    return True
