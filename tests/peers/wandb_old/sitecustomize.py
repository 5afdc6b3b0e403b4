"""Loaded by Python at start-up when this folder is on PYTHONPATH (wandb_old_peer.py puts it there for itself and
for the W&B client's internal process): wandb 0.9.7's graphql-core 1.1 reads collections.Iterable and its
siblings, which Python 3.10 removed (they live in collections.abc)."""
import collections
import collections.abc

for _name in ("Callable", "Hashable", "Iterable", "Mapping", "MutableMapping", "MutableSequence", "MutableSet", "Sequence", "Set"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))
