"""Independent float64 PyTorch implementation of the probe functions (spec §1-§2 formulas, torch autograd),
used by algo-torch.test.ts to cross-check `arlarena algo` number for number, gradients included.

Reads a JSON list of probe cases on stdin, writes a JSON list of {"outputs": {...}} on stdout.
Run with Debian's /usr/bin/python3 (python3-torch).
"""
import json
import math
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


def masked_sum(x, m):
    """verl_F.masked_sum: a value outside the mask (NaN included) is replaced by 0 before the product."""
    return (torch.where(m.bool(), x, torch.zeros_like(x)) * m).sum()


def agg(L, m, mode):
    """verl's agg_loss (verl/trainer/ppo/core_algos.py at b178a3c) as a direct call leaves it, with no
    global_batch_info (dp_size 1; batch_num_tokens, global_batch_size, loss_scale_factor None) — what
    compute_policy_loss_bypass_mode and the legacy FSDP actor pass. The seq-mean modes divide by the rows with at
    least one token in the mask (since verl #3915), whatever emptied a row: padding, a rejection option, sequence
    masking. With no token at all, token-mean and the seq-mean modes are 0 / 0 = NaN here; the lab gives 0
    (docs/guides/rollout-correction.md, "Where the lab differs from verl's own code"), which the tests check."""
    if mode == "token-mean":
        return masked_sum(L, m) / m.sum()
    if mode == "seq-mean-token-sum":
        seq_losses = torch.sum(L * m, dim=-1)
        seq_mask = (torch.sum(m, dim=-1) > 0).double()
        return masked_sum(seq_losses, seq_mask) / seq_mask.sum()
    if mode == "seq-mean-token-mean":
        count = torch.sum(m, dim=-1)
        seq_losses = torch.sum(L * m, dim=-1) / (count + 1e-8)
        seq_mask = (count > 0).double()
        return masked_sum(seq_losses, seq_mask) / seq_mask.sum()
    if mode == "seq-mean-token-sum-norm":
        return torch.sum(torch.sum(L * m, dim=-1)) / m.shape[-1]
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
        if x.get("rollout_is_weights") is not None:
            # decoupled rollout correction: verl's pg_losses * rollout_is_weights before agg_loss
            L = L * T(x["rollout_is_weights"])
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


# ---- rollout correction (verl algorithm.rollout_correction; slime / OpenRLHF IcePop) ------------------------------
# Written from verl's definitions (verl/trainer/ppo/rollout_corr_helper.py, core_algos.py bypass mode): log-ratio
# r = log pi_train - log pi_rollout; exp taken after clamping to +-20; masked means divide by count + 1e-8.

BOUND = 20.0
RS_OPTIONS = ["token_k1", "token_k2", "token_k3", "seq_sum_k1", "seq_sum_k2", "seq_sum_k3",
              "seq_mean_k1", "seq_mean_k2", "seq_mean_k3", "seq_max_k2", "seq_max_k3"]


def msum(x, m, dim=None):
    v = torch.where(m.bool(), x, torch.zeros_like(x)) * m
    return v.sum() if dim is None else v.sum(dim)


def mmean(x, m, dim=None):
    return msum(x, m, dim) / ((m.sum() if dim is None else m.sum(dim)) + 1e-8)


def clamped_std(x, m, lo, hi):
    if m.sum() <= 1:
        return 0.0
    c = torch.clamp(x, min=lo, max=hi)
    return torch.sqrt(torch.clamp(mmean(c * c, m) - mmean(c, m) ** 2, min=0.0)).item()


def is_weights(r, m, level, thr, normalize, clamp=True):
    out = {}
    lo = 1.0 / thr
    if level == "token":
        w = torch.exp(torch.clamp(r, -BOUND, BOUND) if clamp else r) * m
        out["rollout_is_mean"] = mmean(w, m).item()
        out["rollout_is_ratio_fraction_high"] = mmean((w > thr).double(), m).item()
        out["rollout_is_ratio_fraction_low"] = mmean((w < lo).double(), m).item()
        out["rollout_is_max"] = w.masked_fill(~m.bool(), float("-inf")).max().item()
        out["rollout_is_min"] = w.masked_fill(~m.bool(), float("inf")).min().item()
    else:
        s = msum(r, m, -1)
        w = torch.exp(torch.clamp(s, -BOUND, BOUND)).unsqueeze(-1).expand_as(r) * m
        out["rollout_is_max"] = math.exp(min(s.max().item(), BOUND))
        out["rollout_is_min"] = math.exp(s.min().item())
        out["rollout_is_mean"] = mmean(w, m).item()
        out["rollout_is_ratio_fraction_high"] = (s > math.log(thr)).double().mean().item()
        out["rollout_is_ratio_fraction_low"] = (s < math.log(lo)).double().mean().item()
    out["rollout_is_std"] = clamped_std(w, m, lo, thr)
    c = torch.clamp(w, min=lo, max=thr)
    out["rollout_is_eff_sample_size"] = 1.0 / mmean((c / (mmean(c, m) + 1e-8)) ** 2, m).item()
    sw = mmean(w, m, -1)
    out["rollout_is_seq_mean"] = sw.mean().item()
    out["rollout_is_seq_std"] = sw.std().item() if sw.numel() > 1 else 0.0
    out["rollout_is_seq_max"] = sw.max().item()
    out["rollout_is_seq_min"] = sw.min().item()
    out["rollout_is_seq_max_deviation"] = (sw - 1).abs().max().item()
    out["rollout_is_seq_fraction_high"] = (sw > thr).double().mean().item()
    out["rollout_is_seq_fraction_low"] = (sw < lo).double().mean().item()
    w = torch.clamp(w, max=thr)
    if normalize:
        if level == "token":
            mu = mmean(w, m)
        else:
            has = (m.sum(-1) > 0).double()
            mu = (mmean(w, m, -1) * has).sum() / has.sum().clamp_min(1e-8)
        if mu > 1e-8:
            w = w / mu
            out["rollout_is_batch_norm_factor"] = mu.item()
        else:
            out["rollout_is_batch_norm_factor"] = 1.0
    return w, out


def rs_bounds(options, spec):
    parts = [str(spec)] if isinstance(spec, (int, float)) else [p.strip() for p in spec.split(",") if p.strip()]
    if len(parts) == 1:
        parts = parts * len(options)
    b = {}
    for o, p in zip(options, parts):
        if o.endswith("k1"):
            up = float(p.split("_")[-1])
            b[o] = (float(p.split("_")[0]) if "_" in p else 1.0 / up, up)
        else:
            b[o] = (None, float(p))
    return b


def rs_mask(r, m, rs, spec):
    opts = []
    for o in [x.strip() for x in rs.split(",") if x.strip()]:
        if o not in opts:
            opts.append(o)
    bounds = rs_bounds(opts, spec)
    rc = torch.clamp(r, -BOUND, BOUND)
    k = {"k1": -rc, "k2": 0.5 * rc * rc, "k3": torch.exp(rc) - 1 - rc}
    valid = m.sum(-1) > 0
    out = {}
    total = torch.ones_like(m)
    for o in opts:
        est = o[-2:]
        lo, up = bounds[o]
        if est == "k1":
            lo_t, up_t = math.log(lo), math.log(up)
        else:
            lo_t, up_t = 0.0, up
        keep_fn = (lambda v: (v >= lo_t) & (v <= up_t)) if est == "k1" else (lambda v: v <= up_t)
        if o.startswith("token"):
            stat, seq = k[est], None
            keep = keep_fn(stat)
        else:
            if o.startswith("seq_sum"):
                seq = msum(k[est], m, -1)
            elif o.startswith("seq_mean"):
                seq = mmean(k[est], m, -1)
            else:
                mx = k[est].masked_fill(~m.bool(), float("-inf")).max(-1).values
                seq = torch.where(torch.isinf(mx), torch.zeros_like(mx), mx)
            stat = seq.unsqueeze(-1).expand_as(r)
            keep = keep_fn(seq).unsqueeze(-1).expand_as(r)
        pre = "rollout_rs_" + o
        seqv = (seq if seq is not None else mmean(stat, m, -1))[valid]
        out[pre + "_mean"] = mmean(stat, m).item()
        if seq is not None:
            out[pre + "_max"], out[pre + "_min"] = seqv.max().item(), seqv.min().item()
            out[pre + "_fraction_high"] = (seqv > up_t).double().mean().item()
            out[pre + "_fraction_low"] = (seqv < lo_t).double().mean().item() if est == "k1" else 0.0
        else:
            out[pre + "_max"] = stat.masked_fill(~m.bool(), float("-inf")).max().item()
            out[pre + "_min"] = stat.masked_fill(~m.bool(), float("inf")).min().item()
            out[pre + "_fraction_high"] = mmean((stat > up_t).double(), m).item()
            out[pre + "_fraction_low"] = mmean((stat < lo_t).double(), m).item() if est == "k1" else 0.0
        out[pre + "_std"] = clamped_std(stat, m, lo_t if est == "k1" else 0.0, up_t)
        out[pre + "_seq_mean"] = seqv.mean().item()
        out[pre + "_seq_std"] = seqv.std().item() if seqv.numel() > 1 else 0.0
        out[pre + "_seq_max"] = seqv.max().item()
        out[pre + "_seq_min"] = seqv.min().item()
        out[pre + "_seq_max_deviation"] = seqv.abs().max().item()
        out[pre + "_seq_fraction_high"] = (seqv > up_t).double().mean().item()
        if est == "k1":
            out[pre + "_seq_fraction_low"] = (seqv < lo_t).double().mean().item()
        kf = keep.double()
        total = total * kf
        out[pre + "_masked_fraction"] = mmean(1 - kf, m).item()
        rejected = ((kf == 0) & m.bool()).any(-1)
        out[pre + "_seq_masked_fraction"] = (rejected & valid).double().sum().item() / max(valid.double().sum().item(), 1) if valid.any() else 0.0
    out["rollout_rs_masked_fraction"] = mmean(1 - total, m).item()
    out["rollout_rs_seq_masked_fraction"] = (((total <= 0.5) & m.bool()).any(-1)).double().mean().item()
    return m * total, out


def offpolicy(train, roll, m):
    lt, lr_ = mmean(train, m, -1), mmean(roll, m, -1)
    r = train - roll
    d = lr_ - lt
    s = msum(r, m, -1)
    return {
        "training_ppl": torch.exp(-lt).mean().item(), "training_log_ppl": (-lt).mean().item(),
        "kl": mmean(roll - train, m).item(), "k3_kl": mmean(torch.exp(r) - r - 1, m).item(),
        "rollout_ppl": torch.exp(-lr_).mean().item(), "rollout_log_ppl": (-lr_).mean().item(),
        "log_ppl_diff": d.mean().item(), "log_ppl_abs_diff": d.abs().mean().item(),
        "log_ppl_diff_max": d.max().item(), "log_ppl_diff_min": d.min().item(), "ppl_ratio": torch.exp(d).mean().item(),
        "chi2_token": (mmean(torch.exp(torch.clamp(r, -BOUND, BOUND)) ** 2, m) - 1).item(),
        "chi2_seq": (torch.exp(2 * torch.clamp(s, -BOUND, BOUND)).mean() - 1).item(),
    }


def correction(train, roll, m, p):
    r = train - roll
    metrics = {}
    w = None
    if p.get("rollout_is") is not None and p.get("rollout_is_threshold", 2.0) is not None:
        w, mi = is_weights(r, m, p["rollout_is"], p.get("rollout_is_threshold", 2.0), p.get("rollout_is_batch_normalize", False))
        metrics.update(mi)
    mask = m.clone()
    if p.get("rollout_rs") is not None:
        mask, mr = rs_mask(r, m, p["rollout_rs"], p["rollout_rs_threshold"])
        metrics.update(mr)
    metrics.update(offpolicy(train, roll, m))
    return w, mask, {"rollout_corr/" + k: v for k, v in metrics.items()}


def rollout_correction(p, x):
    w, mask, metrics = correction(T(x["old_log_prob"]), T(x["rollout_log_prob"]), T(x["response_mask"]), p)
    return {"rollout_is_weights": None if w is None else w.tolist(), "modified_response_mask": mask.tolist(), "metrics": metrics}


def bypass(p, x):
    roll = T(x["old_log_prob"])
    lp = T(x["log_prob"], requires_grad=True)
    A = T(x["advantages"])
    if A.dim() == 1:
        A = A.unsqueeze(-1).expand_as(roll)
    m = T(x["response_mask"])
    with torch.no_grad():
        w, mask, metrics = correction(lp.detach(), roll, m, p)
    aggm = p.get("loss_agg_mode", "token-mean")
    if p.get("loss_type", "ppo_clip") == "reinforce":
        L = -A * lp * (w if w is not None else 1.0)
        loss = agg(L, mask, aggm)
        metrics["actor/ppo_kl"] = mmean(roll - lp.detach(), mask).item()
    else:
        clip = p.get("clip_ratio", 0.2)
        lo, hi = p.get("clip_ratio_low", clip), p.get("clip_ratio_high", clip)
        c = p.get("clip_ratio_c", 3.0)
        d = torch.clamp(lp - roll, -20.0, 20.0)
        ratio = torch.exp(d)
        l1, l2 = -A * ratio, -A * torch.clamp(ratio, 1 - lo, 1 + hi)
        c1 = torch.maximum(l1, l2)
        l3 = -A * c
        L = torch.where(A < 0, torch.min(l3, c1), c1)
        loss = agg(L, mask, aggm)
        metrics["actor/pg_clipfrac"] = mmean((l2 > l1).double(), mask).item()
        metrics["actor/ppo_kl"] = mmean(-d.detach(), mask).item()
        metrics["actor/pg_clipfrac_lower"] = mmean((c1 > l3).double() * (A < 0).double(), mask).item()
    return {"pg_loss": loss.item(), "metrics": metrics, "grad_log_prob": grad_of(loss, lp)}


def decoupled(p, x):
    """Decoupled mode (verl's three policies): compute_rollout_correction_and_rejection_mask on pi_old vs
    pi_rollout, the rejection mask replacing response_mask, then compute_policy_loss_vanilla with the IS weights
    on the tokens and agg_loss over that mask."""
    w, mask, _ = correction(T(x["old_log_prob"]), T(x["rollout_log_prob"]), T(x["response_mask"]), p)
    y = {"old_log_prob": x["old_log_prob"], "log_prob": x["log_prob"], "advantages": x["advantages"],
         "response_mask": mask.tolist(), "rollout_is_weights": None if w is None else w.tolist()}
    out = policy("vanilla", p, y)
    return {"pg_loss": out["pg_loss"], "modified_response_mask": mask.tolist(), "grad_log_prob": out["grad_log_prob"]}


def icepop_weights(r, m, lo, hi):
    """IcePop's weights and metrics: verl's token-level rollout_is_* statistics taken on the unclamped ratio
    (IcePop has no +-20 clamp), with rollout_is_threshold = hi, plus slime's tis_clipfrac and tis_abs as masked
    means (rollout_corr/icepop_masked_fraction, icepop_ratio_abs_dev)."""
    rho = torch.exp(r)
    w = torch.where((rho >= lo) & (rho <= hi), rho, torch.zeros_like(rho)) * m
    _, out = is_weights(r, m, "token", hi, False, clamp=False)
    out["icepop_masked_fraction"] = mmean(((rho < lo) | (rho > hi)).double(), m).item()
    out["icepop_ratio_abs_dev"] = mmean((rho - 1).abs(), m).item()
    return w, out


def icepop(p, x):
    """slime icepop_function / OpenRLHF icepop: weight = ratio inside [tis_clip_low, tis_clip], else 0."""
    m = T(x["loss_masks"])
    r = T(x["train_log_probs"]) - T(x["rollout_log_probs"])
    rho = torch.exp(r)
    lo, hi = p.get("tis_clip_low", 0.0), p.get("tis_clip", 2.0)
    w, metrics = icepop_weights(r, m, lo, hi)
    return {"ice_weight": w.tolist(), "tis": (rho * m).tolist(), "tis_clipfrac": ((w != rho * m).double() * m).tolist(),
            "tis_abs": ((rho - 1).abs() * m).tolist(), "metrics": {"rollout_corr/" + k: v for k, v in metrics.items()}}


def icepop_correction(p, x):
    """The pipeline with IcePop as its IS level (the lab's rollout_is=icepop), chained with rejection options:
    verl's compute_rollout_correction_and_rejection_mask with IcePop's weights in place of verl's."""
    train, roll, m = T(x["old_log_prob"]), T(x["rollout_log_prob"]), T(x["response_mask"])
    r = train - roll
    w, metrics = icepop_weights(r, m, p["rollout_is_threshold_lower"], p["rollout_is_threshold"])
    mask = m.clone()
    if p.get("rollout_rs") is not None:
        mask, mr = rs_mask(r, m, p["rollout_rs"], p["rollout_rs_threshold"])
        metrics.update(mr)
    metrics.update(offpolicy(train, roll, m))
    return {"rollout_is_weights": w.tolist(), "modified_response_mask": mask.tolist(),
            "metrics": {"rollout_corr/" + k: v for k, v in metrics.items()}}


def run(case):
    fn, p, x = case["fn"], case.get("params", {}), case["inputs"]
    if fn.startswith("policy_loss_") and fn != "policy_loss_bypass_mode":
        return policy(fn[len("policy_loss_"):], p, x)
    if fn == "agg_loss":
        L = T(x["loss_mat"], requires_grad=True)
        loss = agg(L, T(x["loss_mask"]), p.get("loss_agg_mode", "token-mean"))
        return {"loss": loss.item(), "grad_loss_mat": grad_of(loss, L)}
    return {"kl_penalty": kl_penalty, "entropy": entropy, "compute_grpo_outcome_advantage": grpo,
            "compute_gigpo_outcome_advantage": gigpo, "rollout_correction": rollout_correction,
            "policy_loss_bypass_mode": bypass, "icepop_function": icepop, "icepop_correction": icepop_correction,
            "decoupled_policy_loss": decoupled}[fn](p, x)


def json_safe(v):
    """JSON has no NaN: verl's 0 / 0 losses travel as the string "NaN"."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return [json_safe(e) for e in v]
    if isinstance(v, dict):
        return {k: json_safe(e) for k, e in v.items()}
    return v


if __name__ == "__main__":
    print(json.dumps([{"outputs": json_safe(run(c))} for c in json.load(sys.stdin)], allow_nan=False))
