"""Load what the lab exported with Transformers / PEFT themselves and print their logits (llm peer venv).

Usage: hf_export_peer.py BASE_DIR ADAPTER_DIR MERGED_DIR IDS_JSON
Prints one JSON object: {"adapter": logits of PeftModel.from_pretrained(base, adapter), "merged": logits of
AutoModelForCausalLM.from_pretrained(merged)}, each [T, V] for the single row IDS_JSON, in float32.
"""
import json
import sys

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

base_dir, adapter_dir, merged_dir, ids = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
x = torch.tensor([ids])
with torch.no_grad():
    base = AutoModelForCausalLM.from_pretrained(base_dir, torch_dtype=torch.float32, attn_implementation="eager")
    adapted = PeftModel.from_pretrained(base, adapter_dir).eval()
    a = adapted(input_ids=x).logits[0].tolist()
    merged = AutoModelForCausalLM.from_pretrained(merged_dir, torch_dtype=torch.float32, attn_implementation="eager").eval()
    m = merged(input_ids=x).logits[0].tolist()
print(json.dumps({"adapter": a, "merged": m}))
