"""PyTorch peer for `npm run bench:model`: the same pre-LN decoder-only transformer (learned positions, tanh-GELU,
tied output projection) at the same sizes, timed the same way as the TypeScript engines.

Run by bench/model.ts with Debian's /usr/bin/python3 (python3-torch + OpenBLAS). Reads one JSON object of
arguments from argv[1] and prints one JSON line: {train_tokens_per_s, gen_tokens_per_s, params, peak_rss_mb}.
Threads: torch 2 intra-op threads, OPENBLAS_NUM_THREADS=1 (set by the caller; see ../shared/notes/stack.md).
"""
import json
import math
import resource
import sys
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d, h, f):
        super().__init__()
        self.h = h
        self.ln1 = torch.nn.LayerNorm(d, eps=1e-5)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.wo = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d, eps=1e-5)
        self.w1 = torch.nn.Linear(d, f)
        self.w2 = torch.nn.Linear(f, d)

    def forward(self, x, bias, past=None):
        B, S, d = x.shape
        dh = d // self.h
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = [t.view(B, S, self.h, dh).transpose(1, 2) for t in (q, k, v)]
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(dh)) + bias
        ctx = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, S, d)
        x = x + self.wo(ctx)
        x = x + self.w2(F.gelu(self.w1(self.ln2(x)), approximate="tanh"))
        return x, (k, v)


class LM(torch.nn.Module):
    def __init__(self, V, d, L, H, f, P):
        super().__init__()
        self.wte = torch.nn.Embedding(V, d)
        self.wpe = torch.nn.Embedding(P, d)
        self.blocks = torch.nn.ModuleList([Block(d, H, f) for _ in range(L)])
        self.lnf = torch.nn.LayerNorm(d, eps=1e-5)
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.normal_(p, 0.0, 0.02)

    def forward(self, ids, pos, bias, past=None):
        x = self.wte(ids) + self.wpe(pos)
        present = []
        for i, b in enumerate(self.blocks):
            x, kv = b(x, bias, None if past is None else past[i])
            present.append(kv)
        return self.lnf(x) @ self.wte.weight.t(), present


def main():
    a = json.loads(sys.argv[1])
    torch.manual_seed(0)
    torch.set_num_threads(a.get("threads", 2))
    V, d, L, H, f, P = a["vocab"], a["dModel"], a["nLayers"], a["nHeads"], a["dFF"], a["maxSeqLen"]
    model = LM(V, d, L, H, f, P)
    params = sum(p.numel() for p in model.parameters())

    # Training: rows of (prompt, response), loss on response tokens only, AdamW.
    N, T, R = a["trainRows"], a["trainLen"], a["respLen"]
    ids = torch.randint(0, V, (N, T + 1))
    pos = torch.arange(T).expand(N, T)
    causal = torch.full((T, T), -1e9).triu(1)
    mask = torch.zeros(N, T)
    mask[:, T - R:] = 1
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)

    def step():
        logits, _ = model(ids[:, :-1], pos, causal)
        lp = logits.log_softmax(-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        loss = -(lp * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(a["warmup"]):
        step()
    t0 = time.perf_counter()
    for _ in range(a["trainSteps"]):
        step()
    train_tps = N * T * a["trainSteps"] / (time.perf_counter() - t0)

    # Generation with a KV cache (eager): prefill, then one incremental step per token, multinomial sampling.
    B, Lp, G = a["genRows"], a["promptLen"], a["genTokens"]
    prompt = torch.randint(0, V, (B, Lp))

    @torch.no_grad()
    def generate():
        cbias = torch.full((Lp, Lp), -1e9).triu(1)
        logits, past = model(prompt, torch.arange(Lp).expand(B, Lp), cbias)
        for t in range(G):
            probs = logits[:, -1].softmax(-1)
            nxt = torch.multinomial(probs, 1)
            p = torch.full((B, 1), Lp + t, dtype=torch.long)
            logits, past = model(nxt, p, torch.zeros(1, 1), past)

    generate()
    t0 = time.perf_counter()
    for _ in range(a["genRepeats"]):
        generate()
    gen_tps = B * G * a["genRepeats"] / (time.perf_counter() - t0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"params": params, "train_tokens_per_s": train_tps, "gen_tokens_per_s": gen_tps, "peak_rss_mb": rss,
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
