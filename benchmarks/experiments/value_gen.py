"""Scratch: standard_v7 self-play in lockstep; every PLAY decision's observation of the seat to act, and the
seat's final balance in the hand. Output: npz shards (packed bits + scalars, balance, role, tricks_played)."""
import random, sys, time
import numpy as np
from agents.players.ppo_agent import load_numpy_policy
from agents.search.policy_rollout import BatchPolicy
from agents.players.threads import one_thread
from agents.search import policy_kernel as pk
from agents.search.rollout_kernel import hand_balances
from sm_env.compiled import kernels as vk
from sm_env.compiled.loader import load_game
from sm_env.core.game import Game, PLAY
from sm_env.core.rules import RuleSet
from sm_env.observation import observation_size
from training.distill.data import _start_balances, pack_observation

rules = RuleSet.from_any("standard")
policy = BatchPolicy(load_numpy_policy("agents/policies/standard_v7.pt")[0])
size = observation_size(rules)
seed0, shards, per = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for shard in range(shards):
    t = time.time()
    rng = random.Random(seed0 * 1000 + shard)
    n = per
    st = np.zeros((n, vk.NUM_S), dtype=np.int32); cm = np.zeros((n, vk.NUM_C), dtype=np.uint64)
    for row in range(n):
        bal = _start_balances(rng, rules) if rng.random() < 0.7 else None
        g = Game(rules, seed=rng.getrandbits(63), first_dealer=row % 3, max_hands=1, start_balances=bal)
        load_game(st, cm, row, g, rules_checked=True)
    cfg = vk.rules_config(rules, 1)
    waiting = np.empty(n, dtype=np.int64); seats = np.full(n, -1, dtype=np.int64)
    obs = np.empty((n, size), dtype=np.float32)
    rec_obs, rec_row, rec_seat, rec_t = [], [], [], []
    explore = 0.05
    nprng = np.random.default_rng(seed0 * 1000 + shard)
    with one_thread():
        while True:
            m = pk.advance(st, cm, cfg, waiting)
            if m == 0:
                break
            rows = waiting[:m]
            vk.observe_games(st, cm, cfg, seats[:m], rows, obs[:m])
            logits = policy.logits(obs[:m])
            play = st[rows, vk.S_PHASE] == PLAY
            if play.any():
                rec_obs.append(obs[:m][play].copy()); rec_row.append(rows[play].copy())
                rec_seat.append(st[rows[play], vk.S_CUR].copy())
            # a little exploration: some rows play a random legal move (noise on the logits)
            noisy = nprng.random(m) < explore
            if noisy.any():
                logits = logits.copy(); logits[noisy] = nprng.random((int(noisy.sum()), logits.shape[1])) * 100
            pk.apply_best(st, cm, cfg, rows, logits)
    balances = np.stack([hand_balances(st, s) for s in range(3)], axis=1)
    O = np.concatenate(rec_obs); R = np.concatenate(rec_row); S = np.concatenate(rec_seat)
    bits, scal = zip(*(pack_observation(o) for o in O))
    np.savez(f"runs/vleaf/data/s{seed0}_{shard}.npz", bits=np.stack(bits), scalars=np.stack(scal),
             balance=balances[R, S].astype(np.int8), seat=S.astype(np.int8), row=R.astype(np.int32))
    print(shard, len(O), f"{time.time()-t:.1f}s", flush=True)
