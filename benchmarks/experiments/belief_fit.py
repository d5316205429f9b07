"""Scratch: fit a belief network: obs -> for each card, where it is (left hand, right hand, elsewhere)."""
import glob, sys, time
import numpy as np, torch
torch.set_num_threads(1); torch.manual_seed(0)
files = sorted(glob.glob("runs/vleaf/bdata/*.npz"))
B = [np.load(f) for f in files]
bits = np.concatenate([b["bits"] for b in B]); scal = np.concatenate([b["scalars"] for b in B])
left = np.concatenate([b["left"] for b in B]); right = np.concatenate([b["right"] for b in B])
n = len(left); print("rows", n, flush=True)
cards = np.arange(52, dtype=np.uint64)
def target(idx):
    l = ((left[idx][:, None] >> cards) & np.uint64(1)).astype(np.int64)
    r = ((right[idx][:, None] >> cards) & np.uint64(1)).astype(np.int64)
    return torch.from_numpy(np.where(l == 1, 0, np.where(r == 1, 1, 2)))
def batch(idx):
    b = np.unpackbits(bits[idx], axis=1, bitorder="little").astype(np.float32)
    return torch.from_numpy(np.concatenate([b, scal[idx]], axis=1)), target(idx)
rng = np.random.default_rng(0); perm = rng.permutation(n); nval = n // 50; val, tr = perm[:nval], perm[nval:]
net = torch.nn.Sequential(torch.nn.Linear(789, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 156))
epochs = int(sys.argv[1]); bs = 1024
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
steps = epochs * (len(tr) // bs); sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=5e-5)
ce = torch.nn.CrossEntropyLoss()
def evaluate():
    net.eval(); s = 0.0; k = 0
    with torch.no_grad():
        for i in range(0, nval, 8192):
            x, t = batch(val[i:i+8192]); s += ce(net(x).view(-1, 52, 3).transpose(1, 2), t).item(); k += 1
    net.train(); return s / k
t0 = time.time()
for ep in range(epochs):
    rng.shuffle(tr); tot = 0.0
    for k in range(len(tr) // bs):
        x, t = batch(np.sort(tr[k*bs:(k+1)*bs]))
        loss = ce(net(x).view(-1, 52, 3).transpose(1, 2), t)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step(); tot += loss.item()
        if k % 1000 == 0: print(ep, k, tot / (k + 1), f"{time.time()-t0:.0f}s", flush=True)
    print("epoch", ep, "train", tot / (len(tr) // bs), "val", evaluate(), f"{time.time()-t0:.0f}s", flush=True)
    torch.save(net.state_dict(), "runs/vleaf/belief.pt")
from agents.players.ppo_agent import policy_metadata
sd = net.state_dict()
names = {"0": "mlp_extractor.policy_net.0", "2": "mlp_extractor.policy_net.2", "4": "action_net"}
blob = policy_metadata([512, 512], "relu", shape=None, trainer="belief-scratch"); blob["action_count"] = 156
blob["state_dict"] = {f"{names[k.split('.')[0]]}.{k.split('.')[1]}": v for k, v in sd.items()}
torch.save(blob, "runs/vleaf/belief_policy.pt"); print("saved")
