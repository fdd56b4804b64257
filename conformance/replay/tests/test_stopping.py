"""The stop rules of vLLM 0.33's scheduler (check_stop, applied per id of a step)."""

from __future__ import annotations

from toolcall_replay.stopping import Finish, StepOutcome, StopRules, take_step

EOS = 151645
STOP_ID = 151643


def rules(
    *, max_tokens: int | None = 100, prompt_len: int = 10, max_model_len: int = 4096
) -> StopRules:
    return StopRules.of(
        eos_token_id=EOS,
        stop_token_ids=[STOP_ID],
        max_tokens=max_tokens,
        prompt_len=prompt_len,
        max_model_len=max_model_len,
    )


def test_a_step_without_a_stop_is_kept_whole() -> None:
    assert take_step(rules(), [1, 2, 3], emitted=0) == StepOutcome((1, 2, 3), None)


def test_eos_stops_and_trims_the_rest_of_the_step() -> None:
    assert take_step(rules(), [1, EOS, 2], emitted=0) == StepOutcome((1, EOS), Finish.STOP)


def test_a_stop_token_id_stops_with_its_id_as_stop_reason() -> None:
    assert take_step(rules(), [7, STOP_ID, 8], emitted=3) == StepOutcome(
        (7, STOP_ID), Finish.STOP, STOP_ID
    )


def test_max_tokens_cuts_inside_a_step() -> None:
    # 4 ids out already; the 6th id reaches max_tokens=6
    assert take_step(rules(max_tokens=6), [1, 2, 3], emitted=4) == StepOutcome(
        (1, 2), Finish.LENGTH
    )


def test_max_model_len_counts_prompt_and_output() -> None:
    r = rules(max_tokens=None, prompt_len=4090, max_model_len=4096)
    assert take_step(r, [1, 2, 3], emitted=4) == StepOutcome((1, 2), Finish.LENGTH)


def test_eos_wins_over_length_on_the_same_id() -> None:
    # check_stop tests eos before the length limits
    assert take_step(rules(max_tokens=1), [EOS], emitted=0) == StepOutcome((EOS,), Finish.STOP)


def test_ignore_eos_means_no_eos_rule() -> None:
    r = StopRules.of(
        eos_token_id=None, stop_token_ids=None, max_tokens=10, prompt_len=0, max_model_len=100
    )
    assert take_step(r, [EOS, 5], emitted=0) == StepOutcome((EOS, 5), None)
