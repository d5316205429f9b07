"""Scratch: fit V(o) ~ the seat's final balance from standard_v7 self-play (runs/vleaf/data)."""
import glob, sys, time
import numpy as np, torch
torch.set_num_threads(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
torch.manual_seed(0)
files = sorted(glob.glob("runs/vleaf/data/*.npz"))
B = [np.load(f) for f in files]
bits = np.concatenate([b["bits"] for b in B]); scal = np.concatenate([b["scalars"] for b in B])
y = np.concatenate([b["balance"] for b in B]).astype(np.float32)
n = len(y); print("rows", n, flush=True)
rng = np.random.default_rng(0); perm = rng.permutation(n); nval = n // 50
val, tr = perm[:nval], perm[nval:]
BIN = bits.shape[1] * 8
def batch(idx):
    b = np.unpackbits(bits[idx], axis=1, bitorder="little")[:, :789 - scal.shape[1]].astype(np.float32)
    return torch.from_numpy(np.concatenate([b, scal[idx]], axis=1)), torch.from_numpy(y[idx])
net = torch.nn.Sequential(torch.nn.Linear(789, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
epochs = int(sys.argv[1]); bs = 1024
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
steps = epochs * (len(tr) // bs); sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=5e-5)
def evaluate():
    net.eval(); se = 0.0
    with torch.no_grad():
        for i in range(0, nval, 8192):
            x, t = batch(val[i:i+8192]); se += ((net(x).squeeze(1) - t) ** 2).sum().item()
    net.train(); return se / nval
print("val mse at start", evaluate(), "var", y[val].var(), flush=True)
t0 = time.time()
for ep in range(epochs):
    rng.shuffle(tr); tot = 0.0
    for k in range(len(tr) // bs):
        x, t = batch(np.sort(tr[k*bs:(k+1)*bs]))
        loss = ((net(x).squeeze(1) - t) ** 2).mean()
        opt.zero_grad(); loss.backward(); opt.step(); sched.step(); tot += loss.item()
        if k % 1000 == 0: print(ep, k, tot / (k + 1), f"{time.time()-t0:.0f}s", flush=True)
    print("epoch", ep, "train", tot / (len(tr) // bs), "val", evaluate(), f"{time.time()-t0:.0f}s", flush=True)
    torch.save(net.state_dict(), "runs/vleaf/value.pt")
from agents.players.ppo_agent import policy_metadata
sd = net.state_dict()
names = {"0": "mlp_extractor.policy_net.0", "2": "mlp_extractor.policy_net.2", "4": "action_net"}
blob = policy_metadata([512, 256], "relu", shape=None, trainer="value-scratch")
blob["action_count"] = 1
blob["state_dict"] = {f"{names[k.split('.')[0]]}.{k.split('.')[1]}": v for k, v in sd.items()}
torch.save(blob, "runs/vleaf/value_policy.pt")
print("saved")
