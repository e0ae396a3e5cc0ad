"""A seat call as a value: everything one call of one seat needs, in one object that goes down to
the call engine and comes back with what the call found out.

The run makes it (``run.eval``): which seat of which run of which session it answers (``tag``),
what it asks (``prompt``), with which sampling args and seed (``kwargs``), and who answers
(``send``: the completion fn as one try that gives the reply's text, ``fns.endpoints.seat_send``,
or what hands over a batch's answer). The engine (``dispatch.call_all``) runs it, as any call,
once per try, on a worker in the context of the session that asked for it, gives it the lane it
goes through (``lane``), and hands its reply back to the run by return value: nothing here calls
up into the run.

While it runs it is the context's current seat call (``current``), the one channel between a
completion fn and the engine below it: evals' ``record_sampling`` inside the fn knows nothing of
seats, so the recorder (``integration.recorder``) tags each ``sampling`` event with the current
seat call's tag and notes on it what the fn recorded (``noted``); a fn that sees the HTTP answer
hands its headers to the current seat call (``heard``), whose lane learns the key's rate limits
from them. After the engine returns, the run reads what was noted (recorded, finish reason,
tokens) from the value itself.
"""
from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional


@dataclass
class SeatCall:
    tag: dict[str, Any]  # cell, session, run (from 0), seat (from 1), player: filed with each of its events
    prompt: Any
    kwargs: dict[str, Any]  # the sampling args, and the seed where the eval passes one
    send: Callable[..., Any]  # send(prompt, **kwargs) -> the reply: one try
    # who records the call's sampling event when the fn records none (``fns.endpoints.seat_send``),
    # a name of the log's the run hands down; None: nobody (a front end without an evals log)
    recorded_by: Optional[str] = None
    # what the fn recorded while answering (``noted``)
    recorded: int = 0
    finish_reason: Optional[str] = None
    completion_tokens: Optional[int] = None
    lane: Any = field(default=None, repr=False)  # the lanes.Lane it goes through (set by call_all)

    def __call__(self) -> Any:
        """One try: the engine calls it in the call's own context copy, so the current seat call set
        here stays this call's, whatever the worker thread serves next."""
        _CURRENT.set(self)
        try:
            return self.send(self.prompt, **self.kwargs)
        except TypeError as exc:
            if "keyword argument" not in str(exc) or not self.kwargs:  # none passed: the fn's own error
                raise
            raise TypeError(
                f"{exc}. The completion fn must accept the keyword arguments the eval passes "
                f"({', '.join(sorted(self.kwargs))}): define __call__(self, prompt, **kwargs)") from exc

    def noted(self, data: Mapping[str, Any]) -> None:
        """A ``sampling`` event the fn recorded for this call: its finish reason and completion tokens."""
        self.recorded += 1
        self.finish_reason = data.get("finish_reason")
        usage = data.get("usage")
        used = usage.get("completion_tokens") if isinstance(usage, Mapping) else getattr(usage, "completion_tokens", None)
        if isinstance(used, int) and not isinstance(used, bool) and used >= 0:  # what the reply cost, for the plan
            self.completion_tokens = used

    def heard(self, headers: Optional[Mapping[str, str]]) -> None:
        """The headers of an answer to this call: its lane learns the limits they state."""
        if self.lane is not None and headers is not None:
            self.lane.learn(headers)


# The one context channel left between a completion fn and the engine, and why: evals calls the
# user's fn with a prompt alone, so nothing of ours can be passed to it. What the fn's side needs of
# the run's calls it reaches through the seat call it answers (its lane, which belongs to its run's
# ``state.CallState``), never through a process-wide object.
_CURRENT: contextvars.ContextVar[Optional[SeatCall]] = contextvars.ContextVar("econarena_seat_call", default=None)


def current() -> Optional[SeatCall]:
    """The seat call this context is answering, None outside one."""
    return _CURRENT.get()


def heard(headers: Optional[Mapping[str, str]]) -> None:
    """What a completion fn that sees the HTTP answer calls with its headers (``SeatCall.heard``);
    nothing outside a seat call."""
    call = _CURRENT.get()
    if call is not None:
        call.heard(headers)
