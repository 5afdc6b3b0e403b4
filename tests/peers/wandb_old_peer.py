"""W&B's Python client before 0.10 (wandb 0.9.7, the `wandb-old` venv), in dry-run mode (nothing uploaded), as the
writer of the older run-folder layout the importer reads (src/main/imports/trackers.ts, "W&B before 0.10").

  python wandb_old_peer.py write DIR
      Writes DIR/wandb/dryrun-<date>-<id>/ run folders (wandb-history.jsonl, wandb-summary.json, config.yaml,
      wandb-metadata.json, wandb-events.jsonl, output.log), one per run, each written by its own process:
      - grpo-finished: 12 rows of verl-shaped keys (one with '@'), a nested dict, a string, NaN at step 3, +inf at
        step 4, -inf at step 5, a verl-shaped config (nested dicts, a list, None, booleans, 1e-6), a summary key set
        by hand;
      - grpo-failed: 5 rows, then the process exits with code 1 (the client records state "failed", exit code 1);
      - ppo-steps: rows at explicit steps 0, 10, 20, 30, the row at 20 built by two calls (commit=False first).
      and DIR/expected.json: per run name, its folder, state, exit code, config, steps, and values per step with
      NaN / ±inf as the strings "NaN" / "Infinity" / "-Infinity".
  python wandb_old_peer.py child DIR NAME
      One run (what `write` starts per run).

wandb 0.9.7's graphql-core 1.1 needs the collections aliases Python 3.10 removed: the sitecustomize in
wandb_old/ puts them back; PYTHONPATH carries it to the client's internal process too.
"""
import json
import math
import os
import subprocess
import sys

INF = float("inf")
HERE = os.path.dirname(os.path.abspath(__file__))


def enc(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
    return v


def config(name):
    return {
        "data": {"train_batch_size": 256, "max_prompt_length": 512, "train_files": ["~/data/gsm8k/train.parquet"]},
        "actor_rollout_ref": {"actor": {"clip_ratio": 0.2, "use_kl_loss": True, "optim": {"lr": 1e-6}}, "rollout": {"name": "vllm", "n": 5}},
        "algorithm": {"adv_estimator": "grpo", "use_kl_in_reward": False},
        "trainer": {"experiment_name": name, "seed": None},
    }


def row(step):
    s = float(step)
    grad = float("nan") if step == 3 else INF if step == 4 else -INF if step == 5 else 1.0 + 0.1 * s
    return {
        "actor/pg_loss": 0.5 / (1.0 + s),
        "actor/grad_norm": grad,
        "critic/score/mean": 0.1 * s,
        "val-core/gsm8k/reward/mean@1": 0.25 + 0.01 * s,
        "timing": {"gen": 1.5 + s, "update": 0.25},
        "note": "text",
    }


def child(d, name):
    import wandb

    run = wandb.init(project="arl-old", name=name, dir=d, config=config(name))
    if name == "grpo-finished":
        for s in range(12):
            wandb.log(row(s))
        run.summary["final_score"] = 0.75
    elif name == "grpo-failed":
        for s in range(5):
            wandb.log(row(s))
        sys.exit(1)
    elif name == "ppo-steps":
        for s in (0, 10, 20, 30):
            if s == 20:
                wandb.log({"actor/pg_loss": 0.5}, step=s, commit=False)
                wandb.log({"critic/score/mean": 2.0}, step=s)
            else:
                wandb.log({"actor/pg_loss": 1.0 / (1 + s), "critic/score/mean": 0.1 * s}, step=s)


def flat(prefix, o, out):
    for k, v in o.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            flat(f"{key}.", v, out)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = enc(float(v))
    return out


def write(d):
    os.makedirs(d, exist_ok=True)
    env = dict(os.environ, WANDB_MODE="dryrun", WANDB_SILENT="true", PYTHONPATH=os.path.join(HERE, "wandb_old"))
    expected = {}
    for name, code in (("grpo-finished", 0), ("grpo-failed", 1), ("ppo-steps", 0)):
        p = subprocess.run([sys.executable, __file__, "child", d, name], env=env, stdin=subprocess.DEVNULL, timeout=180)
        if p.returncode != code:
            raise SystemExit(f"{name}: exit code {p.returncode}, expected {code}")
        if name == "ppo-steps":
            steps = {0: {"actor/pg_loss": 1.0, "critic/score/mean": 0.0}, 10: {"actor/pg_loss": 1 / 11, "critic/score/mean": 1.0},
                     20: {"actor/pg_loss": 0.5, "critic/score/mean": 2.0}, 30: {"actor/pg_loss": 1 / 31, "critic/score/mean": 3.0}}
        else:
            steps = {s: flat("", row(s), {}) for s in range(12 if name == "grpo-finished" else 5)}
        expected[name] = {
            "state": "failed" if code else "finished",
            "exitcode": code,
            "config": config(name),
            "steps": {str(s): {k: enc(v) for k, v in vals.items()} for s, vals in steps.items()},
        }
    root = os.path.join(d, "wandb")
    for f in sorted(os.listdir(root)):
        md = os.path.join(root, f, "wandb-metadata.json")
        if os.path.isfile(md):
            with open(md) as fh:
                expected[json.load(fh)["name"]]["folder"] = f
    with open(os.path.join(d, "expected.json"), "w") as fh:
        json.dump(expected, fh, indent=1)


def main():
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
