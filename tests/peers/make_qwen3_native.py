"""A tiny Qwen3 checkpoint made by Transformers' own Qwen3ForCausalLM (4.51.3, the llm-qwen3 peer venv) and its
save_pretrained, for the end-to-end training test (tests/hfModelRun.integration.test.ts).

Usage: .venvs/llm-qwen3/bin/python tests/peers/make_qwen3_native.py TOKENIZER_DIR OUT_DIR

TOKENIZER_DIR is a tokenizer folder that make_hf_checkpoints.py wrote (tokenizers/chatml: a byte-level BPE trained
with `tokenizers`, with a ChatML chat template); it is loaded with AutoTokenizer and saved into OUT_DIR with
save_pretrained, beside the model's config.json and model.safetensors (bfloat16, as Qwen3 checkpoints ship).

Unlike make_hf_checkpoints.py's qwen3-fp16 (Transformers 4.44's Llama with a Qwen3-style attention and a rewritten
config.json), every file here is written by Transformers' Qwen3 code itself. Transformers 4.51 imports PyTorch 2
modules; on Debian's PyTorch 1.13 three import-time names are stubbed as in qwen3_transformers.py, except that the
dtype names PyTorch 1.13 lacks become placeholder objects rather than aliases of float32/int64: safetensors' save keys
its dtype table by torch dtype, and an alias would overwrite float32's entry ("invalid shape, data type, or offset").
"""
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
# 3. dtypes that PyTorch 1.13 lacks, named in dtype tables only: distinct placeholders (see above).
for _name in ["float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64"]:
    if not hasattr(torch, _name):
        setattr(torch, _name, type(_name, (), {})())

import transformers  # noqa: E402
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM  # noqa: E402

torch.set_num_threads(1)
tok_dir, out = sys.argv[1], sys.argv[2]
tok = AutoTokenizer.from_pretrained(tok_dir)
torch.manual_seed(35)
cfg = Qwen3Config(vocab_size=len(tok), hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=32, max_position_embeddings=512, rope_theta=1000000.0,
                  rms_norm_eps=1e-6, tie_word_embeddings=True, initializer_range=0.1, use_sliding_window=False,
                  bos_token_id=None, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
model = Qwen3ForCausalLM(cfg)
# RMSNorm weights start at 1; perturb them (q/k norms included) so a loader that skipped one would be caught.
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            p.add_(0.1 * torch.randn_like(p))
model.to(torch.bfloat16)
model.save_pretrained(out, safe_serialization=True)
tok.save_pretrained(out)
print(f"Qwen3ForCausalLM (Transformers {transformers.__version__}): {sum(p.numel() for p in model.parameters())} params")
