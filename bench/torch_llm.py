"""PyTorch + Transformers side of `npm run bench:llm` (run with the llm peer venv: .venvs/llm/bin/python).

Usage: torch_llm.py JSON  where JSON = {"config": {...Qwen2Config kwargs...}, "work": {...}, "threads": n}
Prints one JSON line: forward-backward tokens/s (token-mean NLL over every token but the first, full backward),
greedy generation tokens/s with the KV cache (prefill included, no stop token) per wall second and per CPU second of
the process (all its threads), peak RSS, parameter count.
Random weights, seeded; eager attention (the implementation the lab's numbers are compared with).
"""
import json
import resource
import sys
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

spec = json.loads(sys.argv[1])
torch.set_num_threads(spec["threads"])
torch.manual_seed(0)
w = spec["work"]
model = Qwen2ForCausalLM(Qwen2Config(**spec["config"], attn_implementation="eager")).float()
V = spec["config"]["vocab_size"]
g = torch.Generator().manual_seed(1)
ids = torch.randint(0, V, (w["trainRows"], w["trainLen"]), generator=g)


def fb():
    model.zero_grad(set_to_none=True)
    logits = model(input_ids=ids).logits[:, :-1]
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
    loss.backward()
    return float(loss)


model.train()
for _ in range(w["warmup"]):
    fb()
t0 = time.perf_counter()
for _ in range(w["trainSteps"]):
    fb()
train_s = (time.perf_counter() - t0) / w["trainSteps"]

model.eval()
model.generation_config.eos_token_id = None
prompts = torch.randint(0, V, (w["genRows"], w["promptLen"]), generator=g)
kw = dict(do_sample=False, max_new_tokens=w["genTokens"], min_new_tokens=w["genTokens"], pad_token_id=0, eos_token_id=None, use_cache=True)
with torch.no_grad():
    model.generate(input_ids=prompts, **{**kw, "max_new_tokens": 2, "min_new_tokens": 2})
    t0, c0 = time.perf_counter(), time.process_time()
    out = model.generate(input_ids=prompts, **kw)
    gen_s, gen_cpu_s = time.perf_counter() - t0, time.process_time() - c0
assert out.shape[1] == w["promptLen"] + w["genTokens"], out.shape
print(json.dumps({
    "params": sum(p.numel() for p in model.parameters()),
    "train_tokens_per_s": w["trainRows"] * w["trainLen"] / train_s,
    "gen_tokens_per_s": w["genRows"] * w["genTokens"] / gen_s,
    "gen_tokens_per_cpu_s": w["genRows"] * w["genTokens"] / gen_cpu_s,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "note": f"torch {torch.__version__}, {spec['threads']} thread(s), eager attention",
}))
