"""Tiny Hugging Face checkpoints made by Hugging Face's own code, plus the reference outputs the lab's tfjs
implementation is cross-checked against (tests/*.integration.test.ts under src/core/llm and src/main/compute/models).

Run with the `llm` peer venv (tests/peers/venvs/llm.txt: Transformers 4.44.2 on Debian's PyTorch 1.13):

    .venvs/llm/bin/python tests/peers/make_hf_checkpoints.py OUT_DIR

Writes, under OUT_DIR:
  tokenizers/{chatml,llama}/     tokenizer.json + tokenizer_config.json (+ special_tokens_map.json) saved by
                                 PreTrainedTokenizerFast.save_pretrained from a byte-level BPE trained with `tokenizers`
  qwen2-fp32/                    Qwen2ForCausalLM, float32, one model.safetensors, tied embeddings, q/k/v biases
  llama-bf16-sharded/            LlamaForCausalLM, bfloat16, model.safetensors.index.json + shards, untied head,
                                 rope_scaling llama3, grouped-query attention
  qwen3-fp16/                    a Qwen3-shaped model (see QWEN3 below), float16, head_dim != hidden/heads, q/k norms,
                                 rope_scaling yarn
  each model folder: reference.json (logits, token log-probs, gradients, greedy tokens; all in float32 from the
  checkpoint's own weights upcast to float32, exactly what the lab loads)
  tokenizer_reference.json       ids / decodes of a few hundred strings and rendered chat templates, per tokenizer

QWEN3: Transformers 4.44 has no Qwen3 classes and Transformers >= 4.51 (which has them) cannot import its modelling
code on PyTorch 1.13 (`torch.distributed.tensor` is missing); PyPI's PyTorch 2 wheels need ~3 GB of NVIDIA wheels here.
So the Qwen3 checkpoint is Transformers 4.44's LlamaForCausalLM (eager attention, rotary embeddings from its own
rope utilities, which read config.head_dim) whose attention modules are replaced by `Qwen3Attention` below: the Llama
attention plus an explicit head_dim and an RMSNorm over head_dim applied to the per-head queries and keys before the
rotary embedding -- the two things Qwen3's attention adds (checked against Transformers 4.51.3's modeling_qwen3.py).
Weight names then coincide with Qwen3's (`self_attn.q_norm.weight`, ...); save_pretrained writes the safetensors and
config.json is rewritten in Qwen3Config's shape (model_type qwen3, architectures Qwen3ForCausalLM).

Everything is seeded; the same venv gives the same files.
"""
import json
import math
import os
import sys

import torch
from torch import nn
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, decoders, processors, trainers, Regex
from safetensors.torch import load_file
from transformers import (LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM)
from transformers.models.llama.modeling_llama import LlamaRMSNorm, apply_rotary_pos_emb, repeat_kv

torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))

# The split pattern of Qwen2's tokenizer.json (a published fact of that tokenizer): letters, single digits,
# punctuation runs, newlines and spaces become separate pre-tokens before byte-level BPE.
QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
              r"\s*[\r\n]+|\s+(?!\S)|\s+")

# Llama 3's split pattern (also a published fact of its tokenizer.json): as Qwen's but digits in runs of up to three.
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")

CHATML_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LLAMA_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
# Added but not special (Qwen3 has <think>/</think> this way): kept whole by the tokenizer, shown by decode.
ADDED_PLAIN = ["<think>", "</think>"]

CHATML_TEMPLATE = (
    "{%- if messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)
LLAMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + m['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)

SYSTEM = ("You are an agent in a text game. Think inside <think></think>, then give exactly one action inside "
          "<action></action>.")


def corpus():
    lines = []
    words = ["up", "down", "left", "right", "push", "box", "wall", "target", "player", "step", "room", "search",
             "click", "buy", "price", "item", "think", "action", "the", "a", "to", "is", "of", "and", "you", "goal"]
    for i in range(400):
        w = [words[(i * 7 + j * 3) % len(words)] for j in range(6 + i % 5)]
        lines.append(" ".join(w) + (". " if i % 3 else "! ") + str(i * 37 % 1000))
        lines.append(f"<think>the box is {words[i % 4]} of the player</think><action>{words[i % 4]}</action>")
    lines += ["Héllo wörld — naïve café", "日本語のテキスト", "emoji 🙂🚀 ok", "Привет, мир", "x = y + 2; // note\n\tindent",
              "I'm sure they'll say we've done it", "  spaces   and\n\nnewlines\r\n"]
    return lines


def train_bpe():
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, min_frequency=2, show_progress=False,
                                  special_tokens=CHATML_SPECIALS + LLAMA_SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus(), trainer=trainer)
    tok.add_tokens(ADDED_PLAIN)
    return tok


def save_tokenizers(base, out):
    """Two tokenizer folders from one trained BPE: ChatML (Qwen: NFC, Qwen's split) and a Llama-3-style one (no
    normalizer, Llama 3's split, a post-processor that adds <bos>)."""
    chatml = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(base.to_str()), eos_token="<|im_end|>",
                                     pad_token="<|endoftext|>", additional_special_tokens=["<|im_start|>"],
                                     chat_template=CHATML_TEMPLATE, model_max_length=512)
    chatml.save_pretrained(os.path.join(out, "tokenizers", "chatml"))
    lt = Tokenizer.from_str(base.to_str())
    lt.normalizer = normalizers.Sequence([])  # none (tokenizers 0.19 cannot unset it)
    lt.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    bos = lt.token_to_id("<|begin_of_text|>")
    lt.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                                      pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                                      special_tokens=[("<|begin_of_text|>", bos)])
    llama = PreTrainedTokenizerFast(tokenizer_object=lt, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
                                    pad_token="<|end_of_text|>",
                                    additional_special_tokens=["<|start_header_id|>", "<|end_header_id|>"],
                                    chat_template=LLAMA_TEMPLATE, model_max_length=512)
    llama.save_pretrained(os.path.join(out, "tokenizers", "llama"))
    return {"chatml": chatml, "llama": llama}


def tokenizer_strings():
    """A few hundred strings: plain, Unicode (accents, combining marks, CJK, emoji, RTL), whitespace, specials."""
    base = ["", " ", "a", "hello world", "Hello World", "  leading", "trailing  ", "tab\there", "line\nbreak",
            "\n\n\n", "\r\n", "multiple   spaces   inside", "numbers 0 12 345 6789 3.14159 -42 1e-5",
            "punctuation!?.,;:'\"()[]{}<>", "I'm you're he's we've they'll I'd DON'T", "café naïve résumé coöperate",
            "e\u0301 (combining acute) vs \u00e9", "ﬁ ligature and ｆｕｌｌｗｉｄｔｈ", "日本語 中文 한국어",
            "emoji 🙂 🚀 👩‍👩‍👧 🏳️‍🌈", "العربية עברית", "Ελληνικά Русский", "math ∑ ∫ √ ≤ ≥ ≠ ∞",
            "<|im_start|>user\nhi<|im_end|>", "<|endoftext|>", "text<|im_end|>more", "<think>plan</think>",
            "<action>up</action>", "<|begin_of_text|>x<|eot_id|>", "<|start_header_id|>user<|end_header_id|>",
            "<|im_start|><|im_start|>", "<think></think><action>push</action>", "url https://example.com/a?b=c&d=e",
            "code: def f(x):\n    return x * 2\n", "json {\"a\": [1, 2, {\"b\": null}]}", "\u0000 nul and \u007f del",
            "zero\u200bwidth", "ZWJ\u200dJ", "\ufeffBOM", "surrogates 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "…—–‘’“”", "a" * 60,
            "ab " * 30, "🙂" * 10]
    words = corpus()
    out = list(base)
    for i in range(300):
        a = words[(i * 13) % len(words)]
        b = base[(i * 7) % len(base)]
        if i % 3 == 0:
            out.append(a)
        elif i % 3 == 1:
            out.append(a[: (i % 40) + 1] + " " + b)
        else:
            out.append(b + "<|im_end|>" + a[(i % 10):])
    return out


def conversations():
    return [
        [{"role": "user", "content": "Where is the box?"}],
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Room:\n#####\n#@$.#\n#####\nYour move."}],
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "héllo 🙂 日本"},
         {"role": "assistant", "content": "<think>say hi</think><action>wave</action>"},
         {"role": "user", "content": "  again  "}],
    ]


def tokenizer_reference(toks):
    ref = {}
    strings = tokenizer_strings()
    for name, tok in toks.items():
        enc = []
        for s in strings:
            ids = tok(s, add_special_tokens=False)["input_ids"]
            ids_sp = tok(s, add_special_tokens=True)["input_ids"]
            enc.append({"text": s, "ids": ids, "idsWithSpecial": ids_sp,
                        "decoded": tok.decode(ids), "decodedSkip": tok.decode(ids, skip_special_tokens=True)})
        chats = []
        for conv in conversations():
            for gen in (True, False):
                text = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=gen)
                ids = tok.apply_chat_template(conv, tokenize=True, add_generation_prompt=gen)
                chats.append({"messages": conv, "addGenerationPrompt": gen, "text": text, "ids": ids})
        # A template variable beyond the standard ones (Qwen3's templates read enable_thinking this way).
        for conv in conversations()[:1]:
            text = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=True, enable_thinking=False)
            ids = tok.apply_chat_template(conv, tokenize=True, add_generation_prompt=True, enable_thinking=False)
            chats.append({"messages": conv, "addGenerationPrompt": True, "variables": {"enable_thinking": False}, "text": text, "ids": ids})
        ref[name] = {"strings": enc, "chats": chats, "vocabSize": len(tok)}
    return ref


class Qwen3Attention(nn.Module):
    """Llama attention (Transformers 4.44, eager) with Qwen3's additions: head_dim from the config and an RMSNorm
    over head_dim on the per-head queries and keys before the rotary embedding. See the module docstring."""

    def __init__(self, config, layer_idx):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.num_heads = config.num_attention_heads
        self.num_key_value_heads = config.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.head_dim = config.head_dim
        b = config.attention_bias
        self.q_proj = nn.Linear(config.hidden_size, self.num_heads * self.head_dim, bias=b)
        self.k_proj = nn.Linear(config.hidden_size, self.num_key_value_heads * self.head_dim, bias=b)
        self.v_proj = nn.Linear(config.hidden_size, self.num_key_value_heads * self.head_dim, bias=b)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, config.hidden_size, bias=b)
        self.q_norm = LlamaRMSNorm(self.head_dim, eps=config.rms_norm_eps)
        self.k_norm = LlamaRMSNorm(self.head_dim, eps=config.rms_norm_eps)

    def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_value=None,
                output_attentions=False, use_cache=False, cache_position=None, position_embeddings=None, **kwargs):
        bsz, q_len, _ = hidden_states.size()
        q = self.q_norm(self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim)).transpose(1, 2)
        k = self.k_norm(self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim)).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        if past_key_value is not None:
            k, v = past_key_value.update(k, v, self.layer_idx, {"sin": sin, "cos": cos, "cache_position": cache_position})
        k = repeat_kv(k, self.num_key_value_groups)
        v = repeat_kv(v, self.num_key_value_groups)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        if attention_mask is not None:
            w = w + attention_mask[:, :, :, : k.shape[-2]]
        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).reshape(bsz, q_len, -1)
        return self.o_proj(o), None, past_key_value


def make_qwen3(cfg_kwargs):
    cfg = LlamaConfig(**cfg_kwargs, attn_implementation="eager")
    model = LlamaForCausalLM(cfg)
    for i, layer in enumerate(model.model.layers):
        layer.self_attn = Qwen3Attention(cfg, i)
    model.post_init()  # re-runs the seeded initialisation over the new modules
    with torch.no_grad():  # RMSNorm weights start at 1; perturb them so a missing q/k norm cannot go unnoticed
        for layer in model.model.layers:
            layer.self_attn.q_norm.weight.add_(0.1 * torch.randn(cfg.head_dim))
            layer.self_attn.k_norm.weight.add_(0.1 * torch.randn(cfg.head_dim))
    return model


def perturb_norms(model):
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n.endswith("norm.weight") and "q_norm" not in n and "k_norm" not in n:
                p.add_(0.1 * torch.randn(p.shape))
            if n.endswith(".bias"):
                p.add_(0.05 * torch.randn(p.shape))


def qwen3_config_json(cfg_kwargs, dtype):
    """config.json in Qwen3Config's shape (the fields a Qwen3 checkpoint on the Hub carries)."""
    c = dict(cfg_kwargs)
    out = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": c["attention_bias"],
           "attention_dropout": 0.0, "bos_token_id": c["bos_token_id"], "eos_token_id": c["eos_token_id"],
           "head_dim": c["head_dim"], "hidden_act": "silu", "hidden_size": c["hidden_size"],
           "initializer_range": c["initializer_range"], "intermediate_size": c["intermediate_size"],
           "max_position_embeddings": c["max_position_embeddings"], "max_window_layers": c["num_hidden_layers"],
           "num_attention_heads": c["num_attention_heads"], "num_hidden_layers": c["num_hidden_layers"],
           "num_key_value_heads": c["num_key_value_heads"], "rms_norm_eps": c["rms_norm_eps"],
           "rope_scaling": c["rope_scaling"], "rope_theta": c["rope_theta"], "sliding_window": None,
           "tie_word_embeddings": c["tie_word_embeddings"], "torch_dtype": dtype, "transformers_version": "4.51.3",
           "use_cache": True, "use_sliding_window": False, "vocab_size": c["vocab_size"]}
    return out


def rows_for(tok):
    """(prompt ids, response ids) pairs: chat-templated prompts and short agent-style responses."""
    convs = conversations()
    responses = ["<think>the box is left</think><action>left</action>", "<think>push it</think><action>push</action>",
                 "<action>up</action>"]
    end = tok.eos_token
    rows = []
    for conv, resp in zip(convs, responses):
        p = tok.apply_chat_template(conv, tokenize=True, add_generation_prompt=True)
        r = tok(resp + end, add_special_tokens=False)["input_ids"]
        rows.append((p, r))
    return rows


def reference(model, tok, grad_params):
    model = model.float().eval()
    pad = tok.pad_token_id
    rows = rows_for(tok)
    T = max(len(p) + len(r) for p, r in rows)
    out = {"rows": [{"promptIds": p, "responseIds": r} for p, r in rows], "padId": pad}

    # Right-padded teacher-forced batch: logits at every real position and the response tokens' log-probs.
    ids = torch.full((len(rows), T), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), T), dtype=torch.long)
    for i, (p, r) in enumerate(rows):
        ids[i, : len(p) + len(r)] = torch.tensor(p + r)
        mask[i, : len(p) + len(r)] = 1
    model.zero_grad()
    logits = model(input_ids=ids, attention_mask=mask).logits
    logp = torch.log_softmax(logits, dim=-1)
    lps, total, count = [], 0, 0
    for i, (p, r) in enumerate(rows):
        row = [logp[i, len(p) - 1 + j, r[j]] for j in range(len(r))]
        lps.append([float(x) for x in row])
        total = total + sum(row)
        count += len(r)
    loss = -total / count  # token-mean negative log-likelihood over every response token of the batch
    loss.backward()
    params = dict(model.named_parameters())
    out["logits"] = [logits[i, : len(p) + len(r)].detach().tolist() for i, (p, r) in enumerate(rows)]
    out["tokenLogProbs"] = lps
    out["loss"] = float(loss)
    out["grads"] = {n: {"shape": list(params[n].shape), "values": params[n].grad.detach().flatten().tolist()}
                    for n in grad_params}

    # Left-padded batch (the generation layout): explicit position ids from the attention mask, last-column logits.
    prompts = [p for p, _ in rows]
    L = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), L), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), L), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, L - len(p):] = torch.tensor(p)
        mask[i, L - len(p):] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        lg = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits
    out["leftPadded"] = {"prompts": prompts, "logits": [lg[i, L - len(p):].tolist() for i, p in enumerate(prompts)]}

    # Greedy generation, 32 new tokens, no stop token, from the left-padded batch (KV cache, Transformers' generate).
    model.generation_config.eos_token_id = None
    with torch.no_grad():
        g = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=32, min_new_tokens=32,
                           pad_token_id=pad, eos_token_id=None)
    out["greedy"] = {"prompts": prompts, "tokens": g[:, L:].tolist()}
    return out


LORA = {"r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj", "o_proj", "down_proj"]}


def lora_reference(model, tok, d):
    """PEFT's LoRA on the loaded checkpoint: adapters saved with PeftModel.save_pretrained (lora/), the response
    log-probs and token-mean loss through them, and the loss gradient w.r.t. a few adapter tensors (the base frozen).
    lora_B starts at zero in PEFT; it is drawn at random here so that every adapter tensor has a gradient."""
    from peft import LoraConfig, get_peft_model
    for p in model.parameters():
        p.grad = None  # left from the base reference's backward pass
    torch.manual_seed(5)
    pm = get_peft_model(model, LoraConfig(lora_dropout=0.0, task_type="CAUSAL_LM", **LORA))
    with torch.no_grad():
        for n, p in pm.named_parameters():
            if "lora_B" in n:
                p.normal_(0.0, 0.05)
    pm.save_pretrained(os.path.join(d, "lora"))
    rows = rows_for(tok)
    pad = tok.pad_token_id
    T = max(len(p) + len(r) for p, r in rows)
    ids = torch.full((len(rows), T), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), T), dtype=torch.long)
    for i, (p, r) in enumerate(rows):
        ids[i, : len(p) + len(r)] = torch.tensor(p + r)
        mask[i, : len(p) + len(r)] = 1
    logp = torch.log_softmax(pm(input_ids=ids, attention_mask=mask).logits, dim=-1)
    lps, total, count = [], 0, 0
    for i, (p, r) in enumerate(rows):
        row = [logp[i, len(p) - 1 + j, r[j]] for j in range(len(r))]
        lps.append([float(x) for x in row])
        total = total + sum(row)
        count += len(r)
    loss = -total / count
    loss.backward()
    params = dict(pm.named_parameters())
    frozen_with_grad = [n for n, p in params.items() if "lora_" not in n and p.grad is not None]
    assert not frozen_with_grad, frozen_with_grad
    picks = [n for n in params if "lora_" in n and (".layers.0.self_attn.q_proj." in n or ".layers.1.mlp.down_proj." in n)]
    grads = {n.replace(".default", ""): {"shape": list(params[n].shape), "values": params[n].grad.flatten().tolist()} for n in picks}
    return {"settings": LORA, "tokenLogProbs": lps, "loss": float(loss), "grads": grads}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "hf-checkpoints"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    base = train_bpe()
    toks = save_tokenizers(base, out)
    # > tokenizer size, as real Qwen checkpoints pad their embedding rows. Weights are drawn wider than Transformers'
    # default (std 0.02) so that greedy decoding of these random models does not collapse onto one token.
    vocab = 448
    assert len(toks["chatml"]) <= vocab
    with open(os.path.join(out, "tokenizer_reference.json"), "w") as f:
        json.dump(tokenizer_reference(toks), f)

    specs = []
    torch.manual_seed(1)
    q2 = Qwen2ForCausalLM(Qwen2Config(vocab_size=vocab, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                                      rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
                                      initializer_range=0.2, bos_token_id=None, eos_token_id=toks["chatml"].eos_token_id,
                                      attn_implementation="eager"))
    perturb_norms(q2)
    specs.append(("qwen2-fp32", q2, "chatml", torch.float32, None,
                  ["model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                   "model.layers.0.self_attn.k_proj.bias", "model.layers.1.mlp.down_proj.weight", "model.norm.weight"]))

    torch.manual_seed(2)
    ll = LlamaForCausalLM(LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=512,
                                      rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=False, initializer_range=0.1,
                                      rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                    "high_freq_factor": 4.0, "original_max_position_embeddings": 32},
                                      bos_token_id=toks["llama"].bos_token_id, eos_token_id=toks["llama"].eos_token_id,
                                      attn_implementation="eager"))
    perturb_norms(ll)
    specs.append(("llama-bf16-sharded", ll, "llama", torch.bfloat16, "60KB",
                  ["lm_head.weight", "model.layers.0.self_attn.v_proj.weight", "model.layers.1.mlp.gate_proj.weight",
                   "model.layers.0.input_layernorm.weight"]))

    torch.manual_seed(3)
    q3kw = dict(vocab_size=vocab, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, head_dim=32, max_position_embeddings=512, rope_theta=1000000.0,
                rms_norm_eps=1e-6, tie_word_embeddings=True, attention_bias=False, initializer_range=0.2,
                # yarn without original_max_position_embeddings: Transformers 4.44 and >= 4.51 then agree (factor 4 over
                # max_position_embeddings); with it, 4.51 replaces factor by max / original and 4.44 ignores it.
                rope_scaling={"rope_type": "yarn", "factor": 4.0},
                bos_token_id=None, eos_token_id=toks["chatml"].eos_token_id)
    q3 = make_qwen3(q3kw)
    perturb_norms(q3)
    specs.append(("qwen3-fp16", q3, "chatml", torch.float16, None,
                  ["model.embed_tokens.weight", "model.layers.0.self_attn.q_norm.weight",
                   "model.layers.1.self_attn.k_norm.weight", "model.layers.0.self_attn.o_proj.weight",
                   "model.layers.1.post_attention_layernorm.weight"]))

    for name, model, tokname, dtype, shard, grads in specs:
        d = os.path.join(out, name)
        model.to(dtype)
        kw = {"max_shard_size": shard} if shard else {}
        model.save_pretrained(d, safe_serialization=True, **kw)
        toks[tokname].save_pretrained(d)
        if name.startswith("qwen3"):
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(qwen3_config_json(q3kw, "float16"), f, indent=2)
        # The reference runs on the checkpoint as loaded back in float32 (what the lab does), not on the in-memory
        # model: converting a model to bf16/fp16 also rounds its rotary inv_freq buffer, which a fresh load recomputes.
        if name.startswith("qwen3"):
            fresh = make_qwen3(q3kw)
            state = load_file(os.path.join(d, "model.safetensors"))
            missing, unexpected = fresh.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
            assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
            fresh.tie_weights()
        else:
            fresh = type(model).from_pretrained(d, torch_dtype=torch.float32, attn_implementation="eager")
        ref = reference(fresh, toks[tokname], grads)
        ref["lora"] = lora_reference(fresh, toks[tokname], d)
        ref["name"] = name
        ref["dtype"] = str(dtype).replace("torch.", "")
        with open(os.path.join(d, "reference.json"), "w") as f:
            json.dump(ref, f)
        print(f"{name}: {sum(p.numel() for p in model.parameters())} params, loss {ref['loss']:.6f}, "
              f"files {sorted(os.listdir(d))}")


if __name__ == "__main__":
    main()
