"""Independent float64 PyTorch implementation of the probe functions (spec §1-§2 formulas, torch autograd),
used by algo-torch.test.ts to cross-check `arlarena algo` number for number, gradients included.

Reads a JSON list of probe cases on stdin, writes a JSON list of {"outputs": {...}} on stdout.
Run with Debian's /usr/bin/python3 (python3-torch).
"""
import json
import sys

import torch

torch.set_default_dtype(torch.float64)


def T(x, **kw):
    """JSON numbers may be integers: always build float64 tensors."""
    return torch.tensor(x, dtype=torch.float64, **kw)


def grad_of(loss, x):
    """d loss / d x; zeros when the loss is a constant (e.g. a fully masked batch)."""
    if not loss.requires_grad:
        return torch.zeros_like(x).tolist()
    loss.backward()
    return x.grad.tolist()


def masked_mean(x, m):
    return (x * m).sum() / (m.sum() + 1e-8)


def agg(L, m, mode):
    if mode == "token-mean":
        return masked_mean(L, m)
    if mode == "seq-mean-token-sum":
        return (L * m).sum(-1).mean() if L.shape[0] > 0 else torch.tensor(0.0)
    if mode == "seq-mean-token-mean":
        valid = m.sum(-1) > 0
        if not valid.any():
            return torch.tensor(0.0)
        Lv, mv = L[valid], m[valid]
        return ((Lv * mv).sum(-1) / mv.sum(-1)).mean()
    if mode == "seq-mean-token-sum-norm":
        return (L * m).sum() / m.shape[-1]
    raise ValueError(mode)


def seq_mask(old, lp, A, m, delta):
    lens = m.sum(-1).clamp(min=1)
    abar = (A * m).sum(-1) / lens
    drift = ((old - lp.detach()) * m).sum(-1) / lens
    keep = (abar >= 0) | (drift <= delta)
    n = ((~keep) & (m.sum(-1) > 0)).sum().double()
    return m * keep.double().unsqueeze(-1), n


def policy(mode, p, x):
    old = T(x["old_log_prob"])
    lp = T(x["log_prob"], requires_grad=True)
    A = T(x["advantages"])
    m = T(x["response_mask"])
    clip = p.get("clip_ratio", 0.2)
    lo, hi = p.get("clip_ratio_low", clip), p.get("clip_ratio_high", clip)
    aggm = p.get("loss_agg_mode", "token-mean")
    nmask = torch.tensor(0.0)
    if mode != "gspo" and p.get("use_seq_mask", False):
        m, nmask = seq_mask(old, lp, A, m, p.get("seq_mask_delta", 0.223))
    lower = torch.tensor(0.0)
    if mode == "gspo":
        d = lp - old
        ell = (d * m).sum(-1) / m.sum(-1).clamp(min=1)
        s = torch.exp(torch.clamp(lp - lp.detach() + ell.detach().unsqueeze(-1), max=10.0))
        l1, l2 = -A * s, -A * torch.clamp(s, 1 - lo, 1 + hi)
        loss = agg(torch.maximum(l1, l2), m, "seq-mean-token-mean")
        frac = masked_mean((l2 > l1).double(), m)
        kl = masked_mean(-d, m)
    else:
        d = torch.clamp(lp - old, -20.0, 20.0)
        w = torch.exp(d)
        kl = masked_mean(-d, m)
        if mode == "vanilla":
            c = p.get("clip_ratio_c", 3.0)
            l1, l2 = -A * w, -A * torch.clamp(w, 1 - lo, 1 + hi)
            c1 = torch.maximum(l1, l2)
            l3 = -A * c
            L = torch.where(A < 0, torch.min(l3, c1), c1)
            frac = masked_mean((l2 > l1).double(), m)
            lower = masked_mean((c1 > l3).double() * (A < 0).double(), m)
        elif mode == "cispo":
            L = -torch.clamp(w, 1 - lo, 1 + hi).detach() * A * lp
            frac = masked_mean(((w < 1 - lo) | (w > 1 + hi)).double(), m)
        else:
            abar = (A * T(x["response_mask"])).sum(-1) / T(x["response_mask"]).sum(-1).clamp(min=1)
            tau = torch.where(abar > 0, torch.tensor(p.get("tau_pos", 1.0)), torch.tensor(p.get("tau_neg", 1.05))).unsqueeze(-1)
            L = -(4.0 / tau) * torch.sigmoid(tau * (w - 1)) * A
            # ARLArena's diagnostics: the band by each token's own advantage sign, over the effective mask;
            # no dual clip, so the lower fraction stays 0.
            frac = masked_mean((((w > 1 + hi) & (A > 0)) | ((w < 1 - lo) & (A < 0))).double(), m)
        loss = agg(L, m, aggm)
    g = grad_of(loss, lp)
    return {"pg_loss": loss.item(), "pg_clipfrac": frac.item(), "ppo_kl": kl.item(), "pg_clipfrac_lower": lower.item(),
            "num_masked_seqs": nmask.item(), "grad_log_prob": g}


def kl_penalty(p, x):
    lp = T(x["log_prob"], requires_grad=True)
    ref = T(x["ref_log_prob"])
    m = T(x.get("response_mask", [[1.0] * len(r) for r in x["log_prob"]]))
    t = p.get("kl_penalty", "low_var_kl")
    if t == "kl":
        k = lp - ref
    elif t == "abs":
        k = (lp - ref).abs()
    elif t == "mse":
        k = 0.5 * (lp - ref).square()
    else:
        d = torch.clamp(ref - lp, -20, 20)
        k = torch.clamp(torch.exp(d) - d - 1, -10, 10)
    loss = agg(k, m, p.get("loss_agg_mode", "token-mean"))
    g = grad_of(loss, lp)
    return {"kld": k.tolist(), "kl_loss": loss.item(), "grad_log_prob": g}


def entropy(p, x):
    z = T(x["logits"], requires_grad=True)
    pd = torch.softmax(z, -1)
    h = torch.logsumexp(z, -1) - (pd * z).sum(-1)
    m = T(x["response_mask"])
    loss = agg(h, m, p.get("loss_agg_mode", "token-mean"))
    g = grad_of(loss, z)
    return {"entropy": h.tolist(), "entropy_loss": loss.item(), "grad_logits": g}


def group_norm(scores, ids, eps, std_norm):
    out = []
    for i, s in enumerate(scores):
        g = [scores[j] for j in range(len(scores)) if ids[j] == ids[i]]
        if len(g) == 1:
            mu, sd = 0.0, 1.0
        else:
            t = T(g)
            mu, sd = t.mean().item(), t.std().item()
        out.append((s - mu) / (sd + eps) if std_norm else s - mu)
    return out


def group_norm_traj(scores, ids, traj, eps, std_norm):
    """compute_mean_std_cross_steps=False: each (group, trajectory) gives one sample, its rows' mean score."""
    rows = {}
    for s, u, t in zip(scores, ids, traj):
        rows.setdefault((u, t), []).append(s)
    samples = {}
    for (u, _), ss in rows.items():
        samples.setdefault(u, []).append(T(ss).mean().item())
    out = []
    for s, u in zip(scores, ids):
        g = samples[u]
        mu, sd = (0.0, 1.0) if len(g) == 1 else (T(g).mean().item(), T(g).std().item())
        out.append((s - mu) / (sd + eps) if std_norm else s - mu)
    return out


def grpo(p, x):
    scores = [sum(r) for r in x["token_level_rewards"]]
    ids = [str(u) for u in x["uid"]]
    if not p.get("compute_mean_std_cross_steps", True):
        adv = group_norm_traj(scores, ids, [str(t) for t in x["traj_uid"]], p.get("epsilon", 1e-6), p.get("norm_adv_by_std_in_grpo", True))
        return {"row_advantage": adv, "advantages": [[a * mm for mm in row] for a, row in zip(adv, x["response_mask"])]}
    adv = group_norm(scores, ids, p.get("epsilon", 1e-6), p.get("norm_adv_by_std_in_grpo", True))
    return {"row_advantage": adv, "advantages": [[a * mm for mm in row] for a, row in zip(adv, x["response_mask"])]}


def gigpo(p, x):
    eps = p.get("epsilon", 1e-6)
    std_norm = p.get("mode", "mean_norm") == "mean_std_norm"
    scores = [sum(r) for r in x["token_level_rewards"]]
    uid = [str(u) for u in x["uid"]]
    ep = group_norm(scores, uid, eps, std_norm)
    keys = [json.dumps([u, a]) for u, a in zip(uid, x["anchor_obs"])]
    g = x["step_rewards"]
    st = []
    for i in range(len(g)):
        grp = [g[j] for j in range(len(g)) if keys[j] == keys[i]]
        if len(grp) == 1:
            st.append(0.0)
            continue
        t = T(grp)
        mu, sd = t.mean().item(), t.std().item()
        st.append((g[i] - mu) / (sd + eps) if std_norm else g[i] - mu)
    w = p.get("step_advantage_w", 1.0)
    adv = [e + w * s for e, s in zip(ep, st)]
    return {"episode_advantage": ep, "step_advantage": st, "advantages": [[a * mm for mm in row] for a, row in zip(adv, x["response_mask"])]}


def run(case):
    fn, p, x = case["fn"], case.get("params", {}), case["inputs"]
    if fn.startswith("policy_loss_"):
        return policy(fn[len("policy_loss_"):], p, x)
    if fn == "agg_loss":
        L = T(x["loss_mat"], requires_grad=True)
        loss = agg(L, T(x["loss_mask"]), p.get("loss_agg_mode", "token-mean"))
        return {"loss": loss.item(), "grad_loss_mat": grad_of(loss, L)}
    return {"kl_penalty": kl_penalty, "entropy": entropy, "compute_grpo_outcome_advantage": grpo,
            "compute_gigpo_outcome_advantage": gigpo}[fn](p, x)


if __name__ == "__main__":
    print(json.dumps([{"outputs": run(c)} for c in json.load(sys.stdin)]))
