"""Transformers' own Qwen3ForCausalLM (4.51.3, the llm-qwen3 peer venv) on a Qwen3 checkpoint folder: logits of the
folder's reference rows (right-padded, with the attention mask), the token-mean loss gradient w.r.t. the weights
reference.json names, 32 greedy tokens after each of its greedy prompts through the model's own KV cache, and with the
folder's LoRA adapter (lora/) the token log-probs and the adapters' gradient, as JSON on stdout.

Usage: .venvs/llm-qwen3/bin/python tests/peers/qwen3_transformers.py FOLDER

Transformers >= 4.51 expects PyTorch 2; here it runs on Debian's PyTorch 1.13 with three import-time stubs (below)
and the weights loaded with load_state_dict (from_pretrained's tied-weight search needs torch 2). None of the stubbed
names is used by an eager single-process forward or backward on the CPU.
"""
import json
import os
import sys
import types

import torch

# 1. torch.distributed.tensor (DTensor, tensor parallelism): imported by modeling_utils at module level.
_dt = types.ModuleType("torch.distributed.tensor")
_dt.DTensor = type("DTensor", (), {})
sys.modules["torch.distributed.tensor"] = _dt
import torch.distributed  # noqa: E402

torch.distributed.tensor = _dt
# 2. torch.compiler (is_compiling / disable decorators).
_tc = types.ModuleType("torch.compiler")
_tc.is_compiling = lambda: False
_tc.disable = lambda fn=None, recursive=True: (fn if fn is not None else (lambda f: f))
sys.modules["torch.compiler"] = _tc
torch.compiler = _tc
# 3. dtypes that PyTorch 1.13 lacks, named in dtype tables only.
for _name in ["float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64"]:
    if not hasattr(torch, _name):
        setattr(torch, _name, torch.float32 if _name.startswith("float") else torch.int64)

import transformers  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from transformers import Qwen3Config, Qwen3ForCausalLM  # noqa: E402

torch.set_num_threads(1)
folder = sys.argv[1]
cfg = Qwen3Config.from_json_file(f"{folder}/config.json")
cfg._attn_implementation = "eager"
model = Qwen3ForCausalLM(cfg).float()
state = {k: v.float() for k, v in load_file(f"{folder}/model.safetensors").items()}
missing, unexpected = model.load_state_dict(state, strict=False)
assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
if cfg.tie_word_embeddings:
    model.lm_head.weight = model.model.embed_tokens.weight
model.eval()

ref = json.load(open(f"{folder}/reference.json"))
rows, pad = ref["rows"], ref["padId"]
T = max(len(r["promptIds"]) + len(r["responseIds"]) for r in rows)
ids = torch.full((len(rows), T), pad, dtype=torch.long)
mask = torch.zeros((len(rows), T), dtype=torch.long)
for i, r in enumerate(rows):
    seq = r["promptIds"] + r["responseIds"]
    ids[i, : len(seq)] = torch.tensor(seq)
    mask[i, : len(seq)] = 1
logits = model(input_ids=ids, attention_mask=mask).logits
logp = torch.log_softmax(logits, dim=-1)
total, count = 0, 0
for i, r in enumerate(rows):
    P = len(r["promptIds"])
    for j, t in enumerate(r["responseIds"]):
        total = total + logp[i, P - 1 + j, t]
        count += 1
loss = -total / count
loss.backward()
params = dict(model.named_parameters())

# Greedy decoding through the model's own KV cache (its DynamicCache): prefill the prompt, then one token a step.
# Written out rather than model.generate(), which imports torch.distributed.fsdp, and that fails to import on
# Debian's PyTorch 1.13 under Python 3.11 (a dataclass with a mutable default).
greedy = []
with torch.no_grad():
    for prompt in ref["greedy"]["prompts"]:
        out = model(input_ids=torch.tensor([prompt]), use_cache=True)
        tokens = []
        for _ in range(32):
            tokens.append(int(out.logits[0, -1].argmax()))
            out = model(input_ids=torch.tensor([[tokens[-1]]]), past_key_values=out.past_key_values, use_cache=True)
        greedy.append(tokens)

# The folder's PEFT adapter (lora/) on this class, applied as PEFT's LoraLayer computes it in eval with dropout 0 and
# no bias (PEFT 0.12 is in the 4.44 venv only): y = W x + (lora_alpha / r) * B (A x), the base frozen. Token
# log-probs of the reference rows and the token-mean loss gradient w.r.t. the adapters reference.json names.
lora_out = None
if os.path.exists(f"{folder}/lora/adapter_config.json"):
    acfg = json.load(open(f"{folder}/lora/adapter_config.json"))
    assert acfg["lora_dropout"] == 0 and acfg["bias"] == "none" and not acfg.get("use_rslora"), acfg
    scale = acfg["lora_alpha"] / acfg["r"]
    adapters = {k: v.float().clone().requires_grad_(True) for k, v in load_file(f"{folder}/lora/adapter_model.safetensors").items()}
    for p in model.parameters():
        p.requires_grad_(False)
    for name, module in model.named_modules():
        a = adapters.get(f"base_model.model.{name}.lora_A.weight")
        if a is None:
            continue
        b = adapters[f"base_model.model.{name}.lora_B.weight"]
        module.register_forward_hook(lambda m, inp, out, a=a, b=b: out + scale * (inp[0] @ a.T @ b.T))
    logp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits, dim=-1)
    lora_lp = [[float(logp[i, len(r["promptIds"]) - 1 + j, t]) for j, t in enumerate(r["responseIds"])] for i, r in enumerate(rows)]
    lora_loss = -sum(sum(x) for x in lora_lp) / sum(len(x) for x in lora_lp)
    picked = torch.stack([logp[i, len(r["promptIds"]) - 1 + j, t] for i, r in enumerate(rows) for j, t in enumerate(r["responseIds"])])
    (-picked.mean()).backward()
    lora_out = {"tokenLogProbs": lora_lp, "loss": lora_loss, "grads": {n: adapters[n].grad.flatten().tolist() for n in ref["lora"]["grads"]}}

print(json.dumps({
    "transformers": transformers.__version__,
    "logits": [logits[i, : len(r["promptIds"]) + len(r["responseIds"])].tolist() for i, r in enumerate(rows)],
    "loss": float(loss),
    "grads": {n: params[n].grad.flatten().tolist() for n in ref["grads"]},
    "greedy": greedy,
    "lora": lora_out,
}))
