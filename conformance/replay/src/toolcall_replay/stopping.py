"""When a replayed request stops: vLLM 0.33's scheduler rules, as a pure function.

vLLM appends a step's sampled ids one at a time and calls ``vllm.v1.core.sched.utils.check_stop``
after each; on a stop it trims the rest of the step (``Scheduler._update_request_with_output``).
``check_stop`` tests, in this order: the request's eos id (finish STOP), an id in
``sampling_params.stop_token_ids`` (STOP, ``stop_reason`` = that id), then the length limits
(``num_tokens >= max_model_len`` or ``num_output_tokens >= max_tokens``: LENGTH).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class Finish(enum.Enum):
    STOP = "stop"
    LENGTH = "length"


@dataclass(frozen=True)
class StopRules:
    eos_token_id: int | None  # None when the request sets ignore_eos
    stop_token_ids: frozenset[int]
    max_tokens: int | None
    prompt_len: int
    max_model_len: int

    @classmethod
    def of(
        cls,
        *,
        eos_token_id: int | None,
        stop_token_ids: Iterable[int] | None,
        max_tokens: int | None,
        prompt_len: int,
        max_model_len: int,
    ) -> StopRules:
        return cls(
            eos_token_id, frozenset(stop_token_ids or ()), max_tokens, prompt_len, max_model_len
        )


@dataclass(frozen=True)
class StepOutcome:
    token_ids: tuple[int, ...]  # the ids vLLM keeps from this step
    finish: Finish | None
    stop_reason: int | None = None


def take_step(rules: StopRules, step: Sequence[int], emitted: int) -> StepOutcome:
    """Apply ``check_stop`` to each id of ``step``; ``emitted``: ids output before this step."""
    kept: list[int] = []
    for token_id in step:
        kept.append(token_id)
        n_out = emitted + len(kept)
        if token_id == rules.eos_token_id:
            return StepOutcome(tuple(kept), Finish.STOP)
        if token_id in rules.stop_token_ids:
            return StepOutcome(tuple(kept), Finish.STOP, token_id)
        if rules.prompt_len + n_out >= rules.max_model_len or (
            rules.max_tokens is not None and n_out >= rules.max_tokens
        ):
            return StepOutcome(tuple(kept), Finish.LENGTH)
    return StepOutcome(tuple(kept), None)
