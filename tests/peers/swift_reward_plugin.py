"""A reward function registered the way ms-swift documents external plugins (`--external_plugins FILE`, an ORM
subclass put into `swift.rewards.orms`), used by swift_peer.py's GRPO run. ms-swift logs each reward under its class
name: rewards/DigitShare/mean and rewards/DigitShare/std. Graded, so that a tiny random model's completions get
different rewards within a group and GRPO's advantages, loss and KL are not all zero."""
from typing import List

from swift.rewards import ORM, orms


class DigitShare(ORM):

    def __call__(self, completions, **kwargs) -> List[float]:
        return [sum(ch.isdigit() for ch in c) / max(len(c), 1) for c in completions]


orms["digit_share"] = DigitShare
