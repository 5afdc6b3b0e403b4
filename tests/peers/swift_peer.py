"""ms-swift's own trainer writes the lab's ms-swift test inputs: a tiny training, fully offline, on the CPU.

  python swift_peer.py DIR

Runs in the `swift` venv (tests/peers/venvs/swift.txt: ms-swift 4.6.0 on PyPI's torch 2.6.0). It writes
  DIR/model/          a tiny Qwen2 (2 layers, hidden 32) with a byte-level BPE ChatML tokenizer trained here, saved
                      with Transformers' save_pretrained: no hub is asked for anything
  DIR/sft.jsonl       a local chat dataset; DIR/grpo.jsonl its prompts with a `solution` column
  DIR/sft/…/logging.jsonl   what `swift sft` (full fine-tuning, 4 steps) wrote through its own callback
  DIR/grpo/…/logging.jsonl  what `swift rlhf --rlhf_type grpo` (4 steps, 4 generations per prompt, 2 updates per batch, rewards: its
                      built-in `accuracy` (MathAccuracy) and `format` (Format) and this folder's
                      swift_reward_plugin.py (DigitShare), beta 0.04) wrote
  DIR/expected.json   per run: the file's path and its records as Python's json module reads them back (NaN and
                      ±inf as the strings "NaN", "Infinity", "-Infinity"), and the versions that wrote them.
The `swift` command is ms-swift's own console script; its logging.jsonl is written by
swift/trainers/patcher.py (ProgressCallbackNew.on_log: the logs dict plus global_step/max_steps, elapsed_time,
remaining_time, memory(GiB) on a GPU, train_speed(s/it)) and, at the end, swift/pipelines/train/sft.py's run
summary (global_step, log_history, last/best checkpoint, memory).
"""
import glob
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = ("{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}")
# Offline everywhere: Transformers, the HF hub, datasets, and ModelScope (ms-swift's default hub) are told not to
# reach out; every path given to swift is a local one. CUDA_VISIBLE_DEVICES="" keeps a GPU machine on the CPU too,
# so the run is the same everywhere.
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "MODELSCOPE_OFFLINE": "1", "USE_HF": "1", "CUDA_VISIBLE_DEVICES": "", "WANDB_MODE": "disabled",
               "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


def make_model(d):
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    words = "the box is left right up down of player target wall push answer what sum two plus four five".split()
    corpus = [" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(8)) + f" {i}" for i in range(200)]
    corpus += ["<think>two plus two</think><answer>4</answer>", "<answer>12</answer>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=SPECIALS, show_progress=False,
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    t = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                additional_special_tokens=["<|im_start|>"], chat_template=CHATML, model_max_length=512)
    mdir = os.path.join(d, "model")
    t.save_pretrained(mdir)
    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=len(t), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                      tie_word_embeddings=True, bos_token_id=None, eos_token_id=t.eos_token_id,
                      pad_token_id=t.pad_token_id)
    Qwen2ForCausalLM(cfg).save_pretrained(mdir)
    return mdir


def make_data(d):
    with open(os.path.join(d, "sft.jsonl"), "w") as f:
        for i in range(16):
            f.write(json.dumps({"messages": [{"role": "user", "content": f"what is two plus {i}"},
                                             {"role": "assistant", "content": f"<answer>{i + 2}</answer>"}]}) + "\n")
    with open(os.path.join(d, "grpo.jsonl"), "w") as f:
        for i in range(16):
            f.write(json.dumps({"messages": [{"role": "user", "content": f"what is two plus {i}"}],
                                "solution": f"<answer>{i + 2}</answer>"}) + "\n")


def swift(d, args, log):
    cmd = [os.path.join(os.path.dirname(sys.executable), "swift")] + args
    # The caches go into DIR too (datasets' cache of the local JSONL files, under ModelScope's or HF's home): the
    # test removes DIR, and nothing is left in the user's ~/.cache.
    env = {**os.environ, **OFFLINE_ENV, "MODELSCOPE_CACHE": os.path.join(d, "cache", "modelscope"),
           "HF_HOME": os.path.join(d, "cache", "huggingface")}
    with open(os.path.join(d, log), "w") as out:
        r = subprocess.run(cmd, cwd=d, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        with open(os.path.join(d, log)) as f:
            tail = f.read()[-4000:]
        raise SystemExit(f"`swift {args[0]}` failed with exit code {r.returncode}; the end of its output:\n{tail}")


COMMON = ["--model", "model", "--model_type", "qwen2", "--template", "qwen2_5", "--system", "be brief",
          "--tuner_type", "full", "--logging_steps", "1", "--save_strategy", "no", "--report_to", "none",
          "--max_length", "200", "--dataloader_num_workers", "0", "--dataset_num_proc", "1", "--seed", "42",
          # ms-swift's trainer otherwise asks ModelScope whether the local model folder is the hub's latest
          # (modelscope.hub.check_model; it retries for ~7 s when offline).
          "--check_model", "false"]


def plain(v):
    """A value as JSON can carry it: non-finite floats as the strings Python's json writes for them."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def read_log(d, sub):
    found = glob.glob(os.path.join(d, sub, "*", "logging.jsonl"))
    if len(found) != 1:
        raise SystemExit(f"expected one logging.jsonl under {sub}/, found {found}")
    with open(found[0]) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return {"path": found[0], "records": plain(records)}


def main():
    d = os.path.abspath(sys.argv[1])
    os.makedirs(d, exist_ok=True)
    make_model(d)
    make_data(d)
    swift(d, ["sft", *COMMON, "--dataset", "sft.jsonl", "--max_steps", "4", "--per_device_train_batch_size", "2",
              "--learning_rate", "1e-3", "--output_dir", "sft"], "sft.log")
    swift(d, ["rlhf", "--rlhf_type", "grpo", *COMMON, "--dataset", "grpo.jsonl", "--max_steps", "4",
              "--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "12",
              "--temperature", "1.0", "--beta", "0.04", "--learning_rate", "1e-2",
              # Two updates per generation batch with a narrow clip range, so that the second update's ratios
              # leave [1 - eps, 1 + eps] and clip_ratio/* are not all zero.
              "--num_iterations", "2", "--epsilon", "0.02",
              "--external_plugins", os.path.join(HERE, "swift_reward_plugin.py"),
              "--reward_funcs", "accuracy", "format", "digit_share", "--output_dir", "grpo"], "grpo.log")
    import importlib.metadata as md
    versions = {p: md.version(p) for p in ["ms-swift", "torch", "transformers", "trl"]}
    with open(os.path.join(d, "expected.json"), "w") as f:
        json.dump({"versions": versions, "sft": read_log(d, "sft"), "grpo": read_log(d, "grpo")}, f)


if __name__ == "__main__":
    main()
