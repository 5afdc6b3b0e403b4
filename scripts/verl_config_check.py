"""Check `arlarena remote verl` overrides against verl's own Hydra config, composing it without running anything.

Usage (a throwaway venv; verl's heavy dependencies are not needed to compose its config):
    python3 -m venv /tmp/verlcheck && /tmp/verlcheck/bin/pip install --no-deps verl && /tmp/verlcheck/bin/pip install hydra-core
    npx tsx bin/arlarena.mjs remote verl --env alfworld --model Qwen/Qwen2.5-1.5B-Instruct --json > /tmp/launch.json
    /tmp/verlcheck/bin/python scripts/verl_config_check.py /tmp/launch.json

Prints one line per override: OK when verl's trainer/config/ppo_trainer.yaml takes it, NOT IN UPSTREAM VERL when
composing refuses the key (verl-agent's env.*, algorithm.gigpo.*, the invalid-action penalty live in verl-agent's
config, not upstream verl's), then whether all accepted overrides compose together.
"""
import importlib.util
import json
import os
import sys

from hydra import compose, initialize_config_dir

launch = json.load(open(sys.argv[1]))
overrides = launch["overrides"] if isinstance(launch, dict) else launch
# verl's package root without importing it (its __init__ pulls numpy, torch, ...).
config_dir = os.path.join(os.path.dirname(importlib.util.find_spec("verl").origin), "trainer", "config")
with initialize_config_dir(config_dir=config_dir, version_base=None):
    accepted = []
    for o in overrides:
        try:
            compose(config_name="ppo_trainer", overrides=[o])
            accepted.append(o)
            print(f"OK                      {o}")
        except Exception as e:  # Hydra raises ConfigCompositionException for a key the config lacks
            print(f"NOT IN UPSTREAM VERL    {o}    ({type(e).__name__})")
    compose(config_name="ppo_trainer", overrides=accepted)
    print(f"{len(accepted)} of {len(overrides)} overrides compose together in upstream verl's ppo_trainer config")
