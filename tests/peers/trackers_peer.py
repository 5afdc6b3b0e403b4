"""The trackers' own Python packages, offline, as the importer's and exporter's peers.

  python trackers_peer.py write DIR [--only wandb,mlflow-file,mlflow-sqlite,trackio,swift]
      Writes, with the real writers and nothing uploaded: DIR/wandb (offline W&B runs: a finished one, a crashed one
      (the process dies without finishing), a failed one (exit code 1), a resumed one (two processes, one run id)),
      DIR/mlruns (MLflow file store), DIR/mlflow.db (MLflow SQLite store), DIR/trackio/<project>.db (Trackio),
      DIR/trackio-old/<project>.db (the same rows in Trackio's older schema without run_id), DIR/swift/logging.jsonl
      (ms-swift's line layout) and DIR/expected.json: per run, what was logged (steps, values, config), with
      NaN / ±inf as the strings "NaN" / "Infinity" / "-Infinity".
  python trackers_peer.py wandb-big FILE_DIR MB
      One offline W&B run of about MB megabytes of .wandb (the import benchmark's input).
  python trackers_peer.py mlflow-big DB ROWS
      One MLflow run with ROWS metric rows (100 keys a step) in the SQLite store DB (the import benchmark's input).
  python trackers_peer.py mlflow-exact DB
      One MLflow run "exact" in the SQLite store DB whose values need every digit of a double (0.1 + 0.2, 1/3, the
      smallest subnormal, the double below DBL_MAX, a float32 widened), NaN and ±inf, and a value logged twice at
      one step with its later timestamp written first; prints the steps MLflow's latest-value rule gives, as JSON.
  python trackers_peer.py mlflow-order DB
      Runs in the SQLite store DB whose rows lie in the orders the reader's chunks must handle, logged by MLflow's
      client: "inorder" (steps 0-59, 4 keys each, step 30 with 40 more, step 10 logged twice with its later
      timestamp written first), "alternate-a" and "alternate-b" (logged step by step in turn, so their rows
      interleave), "resumed" (steps 0-39, then 20-49 again with new values and later timestamps), "onestep" (200
      values at step 0, later timestamps later) and "nometrics" (no metric); prints {name: run_id} as JSON.
  python trackers_peer.py slow-write mlflow|trackio TARGET STEPS DELAY
      A run still being written (one step every DELAY s) into an MLflow SQLite store TARGET or a Trackio dir TARGET.
  python trackers_peer.py wide-write mlflow|trackio TARGET STEPS NEW_KEYS
      One run "wide" whose every step logs 2 recurring keys and NEW_KEYS keys never logged before (the per-run key
      bound's input), into an MLflow SQLite store TARGET or a Trackio dir TARGET.
  python trackers_peer.py read-mlflow URI
      MLflow's own client reads every run of a store: prints JSON {runs: [{name, experiment, params, tags,
      metrics: {key: [[step, value], …]}}]}.
  python trackers_peer.py read-wandb FILE.wandb
      Decodes a .wandb file with W&B's own protobuf classes (wandb.proto.wandb_internal_pb2.Record) over the
      LevelDB-log framing checked with Python's zlib.crc32, and prints JSON {run, config, history, summary,
      exit_code, bad_crc}. wandb 0.31 has no Python reader of its own any more (wandb-core, in Go, reads the
      file during `wandb sync`, which needs a server); `wandb beta sync --dry-run` is run too, to check that W&B's
      CLI lists the folder as a run to sync.
"""
import json
import math
import os
import subprocess
import sys

INF = float("inf")


def enc(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
    return v


def verl_config(name):
    """A config shaped like verl's Hydra config (nested dicts, lists, None, booleans)."""
    return {
        "data": {"train_batch_size": 256, "max_prompt_length": 512, "max_response_length": 1024, "train_files": ["~/data/gsm8k/train.parquet"]},
        "actor_rollout_ref": {
            "model": {"path": "Qwen/Qwen2.5-0.5B-Instruct", "use_remove_padding": True},
            "actor": {"ppo_mini_batch_size": 64, "clip_ratio": 0.2, "loss_agg_mode": "token-mean", "use_kl_loss": True, "kl_loss_coef": 0.001, "optim": {"lr": 1e-6}},
            "rollout": {"name": "vllm", "n": 5, "temperature": 1.0},
        },
        "algorithm": {"adv_estimator": "grpo", "kl_ctrl": {"type": "fixed", "kl_coef": 0.001}, "use_kl_in_reward": False},
        "trainer": {"project_name": "arl-peer", "experiment_name": name, "total_training_steps": 20, "logger": ["console", "wandb"], "seed": None},
    }


def series(run_index, step):
    """The values of one step: verl keys (with '@'), a nested dict, and planted NaN / ±inf."""
    s = float(step)
    vals = {
        "actor/pg_loss": 0.5 / (1.0 + s) - 0.01 * run_index,
        "actor/entropy": 1.2 - 0.03 * s + 0.001 * run_index,
        "critic/score/mean": 0.1 + 0.02 * s,
        "val-core/gsm8k/reward/mean@1": 0.25 + 0.01 * s,
        "response_length/mean": 100.0 + 3 * s,
    }
    if step == 3:
        vals["actor/grad_norm"] = float("nan")
    elif step == 4:
        vals["actor/grad_norm"] = INF
    elif step == 5:
        vals["actor/grad_norm"] = -INF
    else:
        vals["actor/grad_norm"] = 1.0 + 0.1 * s
    return vals


def flat_nested(step):
    return {"timing": {"gen": 1.5 + step, "update": {"actor": 0.25 * step}}}


# ---------------------------------------------------------------- W&B


def wandb_child(root, mode, run_id, name, start, end, run_index, group, tags, exit_code):
    import wandb

    run = wandb.init(
        dir=root, project="arl-peer", id=run_id, name=name, group=group, tags=tags, config=verl_config(name),
        resume="allow" if mode == "resume" else None, mode="offline", settings=wandb.Settings(console="off", x_disable_stats=True),
    )
    for step in range(start, end):
        vals = series(run_index, step)
        vals.update(flat_nested(step))
        run.log(vals, step=step)
    run.summary["final/score"] = 0.75 + run_index
    if mode == "crash":
        # Dies as a killed job does: no exit record. wandb-core writes what reached it; give it a moment, as a job
        # that ran on after its last log would.
        import time

        time.sleep(3)
        sys.stdout.flush()
        os._exit(3)
    run.finish(exit_code=exit_code)


def write_wandb(d, expected):
    root = os.path.join(d)
    plan = [
        # (mode, id, name, start, end, run_index, group, tags, exit_code)
        ("plain", "peerfin1", "finished", 0, 12, 0, "sweep-a", ["grpo", "peer"], 0),
        ("crash", "peercrs2", "crashed", 0, 400, 1, "sweep-a", ["grpo"], 0),
        ("plain", "peerfail", "failed", 0, 4, 2, "sweep-b", [], 1),
        ("plain", "peerres3", "resumed", 0, 6, 3, "sweep-b", [], 0),
        ("resume", "peerres3", "resumed", 6, 10, 3, "sweep-b", [], 0),
    ]
    for mode, rid, name, start, end, idx, group, tags, code in plan:
        env = dict(os.environ, WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true", WANDB_API_KEY="", WANDB_DIR=root)
        args = [sys.executable, __file__, "wandb-child", root, mode, rid, name, str(start), str(end), str(idx), group, json.dumps(tags), str(code)]
        subprocess.run(args, env=env, check=(mode != "crash"))
    for mode, rid, name, start, end, idx, group, tags, code in plan:
        e = expected.setdefault("wandb", {}).setdefault(rid, {"name": name, "group": group, "tags": tags, "config": verl_config(name), "steps": {}, "state": None})
        if mode == "crash":
            e["state"] = "crashed"
        elif e["state"] != "crashed":
            e["state"] = "finished" if code == 0 else "failed"
        e["summary"] = {"final/score": 0.75 + idx}
        for step in range(start, end):
            vals = {k: enc(v) for k, v in series(idx, step).items()}
            vals["timing.gen"] = 1.5 + step
            vals["timing.update.actor"] = 0.25 * step
            e["steps"][str(step)] = vals


def wandb_big(root, mb):
    import wandb

    os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true")
    run = wandb.init(dir=root, project="arl-bench", id="benchbig", name="big", config=verl_config("big"), mode="offline", settings=wandb.Settings(console="off", x_disable_stats=True))
    keys = [f"bench/metric_{i:03d}" for i in range(100)]
    step = 0
    target = mb * 1024 * 1024
    path = None
    while True:
        run.log({k: (step * 0.001 + i) for i, k in enumerate(keys)}, step=step)
        step += 1
        if step % 2000 == 0:
            path = path or next(os.path.join(dp, f) for dp, _, fs in os.walk(root) for f in fs if f.endswith(".wandb"))
            if os.path.getsize(path) >= target:
                break
    run.finish()
    print(json.dumps({"steps": step}))


# ---------------------------------------------------------------- MLflow


def write_mlflow(uri, expected, tag):
    import mlflow
    from mlflow.tracking import MlflowClient

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    mlflow.set_tracking_uri(uri)
    client = MlflowClient(uri)
    out = expected.setdefault(tag, {})
    for exp_name, runs in (("arl-peer", ["grpo-a", "grpo-b"]), ("arl-other", ["ppo-c"])):
        exp_id = mlflow.set_experiment(exp_name).experiment_id
        for idx, name in enumerate(runs):
            with mlflow.start_run(run_name=name, experiment_id=exp_id) as run:
                cfg = verl_config(name)
                # verl's MLflow adapter logs the flattened config as params and rewrites '@' in metric keys to '_at_'.
                params = {}

                def flat(prefix, o):
                    for k, v in o.items():
                        key = f"{prefix}/{k}" if prefix else k
                        if isinstance(v, dict):
                            flat(key, v)
                        else:
                            params[key] = v

                flat("", cfg)
                mlflow.log_params(params)
                mlflow.set_tag("verl.peer", "yes")
                steps = {}
                for step in range(8):
                    vals = series(idx, step)
                    mlflow.log_metrics({k.replace("@", "_at_"): v for k, v in vals.items()}, step=step)
                    steps[str(step)] = {k: enc(v) for k, v in vals.items()}
                out[run.info.run_id] = {"name": name, "experiment": exp_name, "steps": steps, "params": {k: str(v) for k, v in params.items()}}


def mlflow_exact(path):
    """See the usage text. Values are logged through MLflow's client (log_batch, explicit timestamps and steps)."""
    import struct
    import time

    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    client = MlflowClient("sqlite:///" + os.path.abspath(path))
    run = client.create_run(client.create_experiment("arl-exact"), run_name="exact")
    rid = run.info.run_id
    hard = [
        0.1 + 0.2,
        1 / 3,
        5e-324,
        2.2250738585072014e-308,
        1.7976931348623155e308,
        -123456789.12345679,
        6.02214076e23,
        struct.unpack("f", struct.pack("f", 0.1))[0],
        2.0**53 + 2,
        3e-300,
    ]
    now = int(time.time() * 1000)
    steps = {}
    for step, v in enumerate(hard):
        vals = {"exact/value": v, "exact/neg": -v, "exact/third": step / 3}
        vals["actor/grad_norm"] = float("nan") if step == 3 else INF if step == 4 else -INF if step == 5 else 1.0 + step
        client.log_batch(rid, metrics=[Metric(k, x, now + step, step * 10) for k, x in vals.items()])
        steps[str(step * 10)] = {k: enc(x) for k, x in vals.items()}
    # Step 20 again: the later value (timestamp + 60000) is written first, the earlier one after it.
    client.log_batch(rid, metrics=[Metric("exact/relogged", 2.5, now + 60_000, 20)])
    client.log_batch(rid, metrics=[Metric("exact/relogged", 1.5, now + 30_000, 20)])
    steps["20"]["exact/relogged"] = 2.5
    client.set_terminated(rid)
    print(json.dumps({"run_id": rid, "steps": steps}, allow_nan=False))


def mlflow_order(path):
    """See the usage text. Rows are written in the order logged (log_batch inserts a batch's metrics in order)."""
    import time

    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    client = MlflowClient("sqlite:///" + os.path.abspath(path))
    exp = client.create_experiment("arl-order")
    ids = {}

    def run(name):
        ids[name] = client.create_run(exp, run_name=name).info.run_id
        return ids[name]

    now = int(time.time() * 1000)

    def step_metrics(step, keys, base, ts):
        return [Metric(f"order/k{i}", base + step + i / 8, ts, step) for i in range(keys)]

    rid = run("inorder")
    for step in range(60):
        ms = step_metrics(step, 4, 0.25, now + step)
        if step == 30:
            ms += [Metric(f"order/wide{i:02d}", i * 0.5, now + step, step) for i in range(40)]
        client.log_batch(rid, metrics=ms)
        if step == 10:
            client.log_batch(rid, metrics=[Metric("order/relogged", 2.5, now + 60_000, 10)])
            client.log_batch(rid, metrics=[Metric("order/relogged", 1.5, now + 30_000, 10)])
    a, b = run("alternate-a"), run("alternate-b")
    for step in range(30):
        client.log_batch(a, metrics=step_metrics(step, 3, 100.0, now + step))
        client.log_batch(b, metrics=step_metrics(step, 3, 200.0, now + step))
    rid = run("resumed")
    for step in range(40):
        client.log_batch(rid, metrics=step_metrics(step, 3, 300.0, now + step))
    for step in range(20, 50):
        client.log_batch(rid, metrics=step_metrics(step, 3, 400.0, now + 1000 + step))
    rid = run("onestep")
    client.log_batch(rid, metrics=[Metric(f"order/k{i % 7}", float(i), now + i, 0) for i in range(200)])
    run("nometrics")
    for rid in ids.values():
        client.set_terminated(rid)
    print(json.dumps(ids))


def mlflow_big(path, rows):
    """One MLflow run with `rows` metric rows (100 keys per step) in a SQLite store. MLflow's client writes the
    first 20 000 rows (schema, run, experiment and rows all MLflow's own); the rest are copies of those rows with
    steps and timestamps shifted, inserted in SQL — MLflow's client takes about 9 minutes per million rows here
    (one SQLite commit per 1000-metric batch)."""
    import sqlite3
    import time

    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    client = MlflowClient("sqlite:///" + os.path.abspath(path))
    exp = client.create_experiment("arl-bench")
    run = client.create_run(exp, run_name="big")
    keys = [f"bench/metric_{i:03d}" for i in range(100)]
    now = int(time.time() * 1000)
    seed_steps = min(rows, 20000) // len(keys)
    batch = []
    for step in range(seed_steps):
        for i, k in enumerate(keys):
            batch.append(Metric(k, step * 0.001 + i, now + step, step))
        if len(batch) >= 1000:
            client.log_batch(run.info.run_id, metrics=batch)
            batch = []
    if batch:
        client.log_batch(run.info.run_id, metrics=batch)
    client.set_terminated(run.info.run_id)
    total_steps = rows // len(keys)
    db = sqlite3.connect(path)
    shift = seed_steps
    while shift < total_steps:
        n = min(seed_steps, total_steps - shift)
        db.execute("INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) SELECT key, value + ?, timestamp + ?, run_uuid, step + ?, is_nan FROM metrics WHERE step < ?", (shift * 0.001, shift, shift, n))
        shift += n
    db.commit()
    print(json.dumps({"rows": db.execute("SELECT count(*) FROM metrics").fetchone()[0]}))


def slow_write(kind, target, steps, delay):
    """A run still being written: one step every `delay` seconds into an MLflow SQLite store or a Trackio
    directory (live-follow tests). Prints "started" once the first step is committed."""
    import time

    if kind == "mlflow":
        import mlflow

        mlflow.set_tracking_uri("sqlite:///" + os.path.abspath(target))
        mlflow.set_experiment("arl-live")
        with mlflow.start_run(run_name="live"):
            for step in range(steps):
                mlflow.log_metrics({k.replace("@", "_at_"): v for k, v in series(0, step).items()}, step=step)
                if step == 0:
                    print("started", flush=True)
                time.sleep(delay)
    else:
        os.environ["TRACKIO_DIR"] = os.path.abspath(target)
        import trackio

        trackio.init(project="arl-live", name="live", config={"algo": "grpo"})
        for step in range(steps):
            trackio.log(series(0, step), step=step)
            if step == 0:
                print("started", flush=True)
            time.sleep(delay)
        trackio.finish()


def wide_write(kind, target, steps, new_keys):
    """One run whose every step brings `new_keys` keys never seen before, beside 2 that every step logs."""

    def values(step):
        v = {"actor/grad_norm": 1.0 + step, "critic/score/mean": 0.1 * step}
        v.update({f"wide/s{step}/k{i:05d}": step + i * 1e-4 for i in range(new_keys)})
        return v

    if kind == "mlflow":
        import mlflow

        mlflow.set_tracking_uri("sqlite:///" + os.path.abspath(target))
        mlflow.set_experiment("arl-wide")
        with mlflow.start_run(run_name="wide"):
            for step in range(steps):
                mlflow.log_metrics(values(step), step=step)
    else:
        os.environ["TRACKIO_DIR"] = os.path.abspath(target)
        import trackio

        trackio.init(project="arl-wide", name="wide", config={"algo": "grpo"})
        for step in range(steps):
            trackio.log(values(step), step=step)
        trackio.finish()


def read_mlflow(uri):
    from mlflow.tracking import MlflowClient

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    client = MlflowClient(uri)
    runs = []
    for exp in client.search_experiments():
        for r in client.search_runs([exp.experiment_id]):
            metrics = {}
            for key in r.data.metrics:
                hist = client.get_metric_history(r.info.run_id, key)
                metrics[key] = [[m.step, enc(m.value)] for m in sorted(hist, key=lambda m: (m.step, m.timestamp))]
            runs.append({"id": r.info.run_id, "name": r.info.run_name, "experiment": exp.name, "status": r.info.status, "params": dict(r.data.params), "tags": {k: v for k, v in r.data.tags.items() if not k.startswith("mlflow.")}, "metrics": metrics})
    print(json.dumps({"runs": runs}))


# ---------------------------------------------------------------- Trackio


def write_trackio(d, expected):
    os.environ["TRACKIO_DIR"] = d
    import trackio

    out = expected.setdefault("trackio", {})
    for idx, name in enumerate(["tr-a", "tr-b"]):
        trackio.init(project="arl-peer", name=name, config={"lr": 1e-6 * (idx + 1), "algo": "grpo", "nested": {"n": 5}})
        steps = {}
        for step in range(6):
            vals = series(idx, step)
            trackio.log(vals, step=step)
            steps[str(step)] = {k: enc(v) for k, v in vals.items()}
        trackio.finish()
        out[name] = {"name": name, "steps": steps}


def trackio_old_schema(src, dst):
    """The same rows in Trackio's older layout (metrics/configs without run_id), as releases before it wrote."""
    import sqlite3

    os.makedirs(os.path.dirname(dst), exist_ok=True)
    a = sqlite3.connect(src)
    b = sqlite3.connect(dst)
    b.execute("CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL)")
    b.execute("CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, config TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE(run_name))")
    b.executemany("INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES (?,?,?,?)", a.execute("SELECT timestamp, run_name, step, metrics FROM metrics ORDER BY id"))
    b.executemany("INSERT INTO configs (run_name, config, created_at) VALUES (?,?,?)", a.execute("SELECT run_name, config, created_at FROM configs ORDER BY id"))
    b.commit()


# ---------------------------------------------------------------- ms-swift


def write_swift(d, expected):
    """ms-swift's logging.jsonl lines: its trainer callback writes json.dumps of the logs dict plus its progress
    fields (global_step/max_steps, percentage, elapsed/remaining time, memory(GiB), train_speed(iter/s))."""
    os.makedirs(d, exist_ok=True)
    steps = {}
    with open(os.path.join(d, "logging.jsonl"), "w") as f:
        for step in range(1, 6):
            logs = {
                "loss": 0.3 / step, "grad_norm": 1.0 + step, "learning_rate": 1e-6,
                "completions/mean_length": 120.0 + step, "completions/clipped_ratio": 0.1,
                "rewards/accuracy_reward/mean": 0.2 * step / 5, "rewards/accuracy_reward/std": 0.1,
                "rewards/format_reward/mean": 0.9, "reward": 0.5 + 0.1 * step, "reward_std": 0.2,
                "frac_reward_zero_std": 0.25, "kl": 0.001 * step, "clip_ratio/region_mean": 0.02, "epoch": step / 10,
            }
            if step == 3:
                logs["kl"] = float("nan")
            line = dict(logs)
            line.update({"global_step/max_steps": f"{step}/5", "percentage": f"{step * 20:.2f}%", "elapsed_time": f"{step}m {step}s", "remaining_time": "1m 2s", "memory(GiB)": 21.5, "train_speed(iter/s)": 0.12})
            f.write(json.dumps(line) + "\n")
            steps[str(step)] = {k: enc(v) for k, v in logs.items()}
    expected["swift"] = {"logging": {"steps": steps}}


def read_wandb(path):
    import struct
    import zlib

    from wandb.proto import wandb_internal_pb2 as pb

    data = open(path, "rb").read()
    ident, magic, version = struct.unpack("<4sHB", data[:7])
    assert ident == b":W&B" and magic == 0xBEE1 and version == 0, (ident, magic, version)
    pos, buf, bad = 7, b"", 0
    out = {"run": None, "config": {}, "history": [], "summary": {}, "exit_code": None, "bad_crc": 0}
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        if left < 7:
            pos += left
            continue
        crc, ln, t = struct.unpack("<IHB", data[pos : pos + 7])
        payload = data[pos + 7 : pos + 7 + ln]
        pos += 7 + ln
        if zlib.crc32(payload, zlib.crc32(bytes([t]))) & 0xFFFFFFFF != crc:
            bad += 1
            continue
        buf = payload if t in (1, 2) else buf + payload
        if t not in (1, 4):
            continue
        rec = pb.Record()
        rec.ParseFromString(buf)
        kind = rec.WhichOneof("record_type")
        key = lambda it: ".".join(it.nested_key) if it.nested_key else it.key
        if kind == "run":
            r = rec.run
            out["run"] = {"id": r.run_id, "project": r.project, "name": r.display_name, "tags": list(r.tags), "start": r.start_time.seconds}
            for it in r.config.update:
                out["config"][key(it)] = json.loads(it.value_json)
        elif kind == "history":
            row = {key(it): json.loads(it.value_json) for it in rec.history.item}
            out["history"].append({"step": row.pop("_step"), "values": {k: enc(v) for k, v in row.items() if k != "_timestamp"}})
        elif kind == "summary":
            for it in rec.summary.update:
                out["summary"][key(it)] = enc(json.loads(it.value_json))
        elif kind == "exit":
            out["exit_code"] = rec.exit.exit_code
    out["bad_crc"] = bad
    dry = subprocess.run([os.path.join(os.path.dirname(sys.executable), "wandb"), "beta", "sync", "--dry-run", os.path.dirname(os.path.dirname(path))], capture_output=True, text=True, env=dict(os.environ, WANDB_MODE="offline"))
    out["dry_run"] = dry.stdout + dry.stderr
    print(json.dumps(out, allow_nan=False))


def main():
    cmd = sys.argv[1]
    if cmd == "wandb-child":
        root, mode, rid, name, start, end, idx, group, tags, code = sys.argv[2:12]
        wandb_child(root, mode, rid, name, int(start), int(end), int(idx), group, json.loads(tags), int(code))
    elif cmd == "write":
        d = os.path.abspath(sys.argv[2])
        only = set(sys.argv[4].split(",")) if len(sys.argv) > 4 and sys.argv[3] == "--only" else {"wandb", "mlflow-file", "mlflow-sqlite", "trackio", "swift"}
        os.makedirs(d, exist_ok=True)
        expected = {}
        if "wandb" in only:
            write_wandb(d, expected)
        if "mlflow-file" in only:
            write_mlflow("file://" + os.path.join(d, "mlruns"), expected, "mlflow-file")
        if "mlflow-sqlite" in only:
            write_mlflow("sqlite:///" + os.path.join(d, "mlflow.db"), expected, "mlflow-sqlite")
        if "trackio" in only:
            write_trackio(os.path.join(d, "trackio"), expected)
            trackio_old_schema(os.path.join(d, "trackio", "arl-peer.db"), os.path.join(d, "trackio-old", "arl-peer.db"))
        if "swift" in only:
            write_swift(os.path.join(d, "swift"), expected)
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump(expected, f, allow_nan=False)
    elif cmd == "wandb-big":
        wandb_big(os.path.abspath(sys.argv[2]), int(sys.argv[3]))
    elif cmd == "mlflow-big":
        mlflow_big(sys.argv[2], int(sys.argv[3]))
    elif cmd == "mlflow-exact":
        mlflow_exact(sys.argv[2])
    elif cmd == "mlflow-order":
        mlflow_order(sys.argv[2])
    elif cmd == "slow-write":
        slow_write(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    elif cmd == "wide-write":
        wide_write(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "read-mlflow":
        read_mlflow(sys.argv[2])
    elif cmd == "read-wandb":
        read_wandb(sys.argv[2])
    else:
        raise SystemExit(f"unknown command {cmd!r}; known: write, wandb-big, mlflow-big, mlflow-exact, mlflow-order, slow-write, wide-write, read-mlflow, read-wandb")


if __name__ == "__main__":
    main()
