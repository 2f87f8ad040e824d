"""Where a review is evaluated: on the event loop when reviews like it were measured quick, otherwise in a thread.

A thread pool keeps the event loop free, but every hand-over to a thread and back, and the GIL passing between
them, costs more than a quick review itself and makes latency jump under concurrency; so quick reviews run on
the loop. But a review on the loop holds everything else, probes included, until it is done: only a review
known to be quick may run there.

What a review costs depends on which policies match it and on its content, not on its size alone: a pace learnt
from quick Pods once sent a 6 KB ConfigMap under a quadratic policy to the loop, where it held /healthz for a
second. So the pace is kept per *route*, what decides which policies' matchConstraints and bindings select a
review: /validate or /mutate, the resource and subresource (as the engine matches them: requestResource first),
the operation and the namespace (namespaceSelector, paramRef), within one policy generation. A review goes to
the loop only if all of these hold:

- its route was seen in this generation: a new policy set or a route never seen runs in a thread;
- its body is no larger than the largest of its route measured quick, give or take LARGER_SLACK (a longer name
  or uid): a policy's cost may grow faster than the body, so the pace of small objects says nothing of a larger
  one (a slack of an eighth lets a quadratic policy's time grow by at most 27% past one measured quick);
- its route's slowest recent time per byte (forgotten by PACE_DECAY per review of the route, so that one slow
  moment does not banish a route) predicts less than INLINE_SECONDS;
- no review of its route took HEAVY_SECONDS or more in this generation: what the size does not show (one long
  string instead of many short ones, an objectSelector or matchCondition that selects a slow policy) can make a
  review of a known route and size slow; that costs the loop once, then the route stays in threads.

Times are the evaluating thread's CPU time (time.thread_time): in a thread the wall time includes waiting for the
GIL while other threads run, and would call quick reviews slow whenever a heavy one runs beside them. At most
MAX_ROUTES routes are learnt per generation, each at most MAX_ROUTE_CHARS long; reviews of any other route run in
threads, so reviews with made-up namespaces or resources cannot grow the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

INLINE_SECONDS = 0.002  # a review expected to take less is evaluated on the event loop
HEAVY_SECONDS = 0.05  # a review that took as long keeps its route off the loop for the rest of the generation
PACE_DECAY = 0.9  # how fast a route's pace forgets a slow review, per review of that route observed
LARGER_SLACK = 8  # a body up to 1/LARGER_SLACK larger than the largest measured quick counts as no larger
PACE_OFFSET = 4096  # bytes a review's fixed cost counts as, so the pace of small bodies is not inflated
MAX_ROUTES = 4096  # routes learnt per policy generation
# No route the API server sends is longer: a group is a DNS subdomain (253), a version, resource, subresource and
# namespace DNS labels (63 each), the operation and mode a word. A longer one is made up and not learnt.
MAX_ROUTE_CHARS = 253 + 4 * 63 + 16


class Route(NamedTuple):
    """What decides which policies and bindings a review is matched against (a tuple: hashed at tuple speed)."""

    mode: str  # "validate" or "mutate"
    resource: str  # group/version/resource
    subresource: str
    operation: str
    namespace: str


def route_of(mode: str, request: Mapping[str, Any]) -> Route:
    """The route of an AdmissionReview `request`, read as the engine matches it (the request* fields first).

    >>> route_of("validate", {"resource": {"group": "apps", "version": "v1", "resource": "deployments"},
    ...                       "subResource": "scale", "operation": "UPDATE", "namespace": "team-a"})
    Route(mode='validate', resource='apps/v1/deployments', subresource='scale', operation='UPDATE', namespace='team-a')
    """
    resource = request.get("requestResource") or request.get("resource")
    gvr = "/".join(str(resource.get(k) or "") for k in ("group", "version", "resource")) if isinstance(
        resource, Mapping
    ) else ""  # fmt: skip
    subresource = request.get("requestSubResource") or request.get("subResource") or ""
    return Route(mode, gvr, str(subresource), str(request.get("operation")), str(request.get("namespace") or ""))


@dataclass
class _Record:
    """What was measured of one route."""

    seconds_per_byte: float  # the slowest recent pace, decaying
    largest_quick: int  # the largest body measured under INLINE_SECONDS; -1 while none was
    heavy: bool  # a review took HEAVY_SECONDS or more


class Pace:
    """How long reviews take under the served policy generation, per route (see the module's docstring).

    Only the event loop calls it, so it needs no lock."""

    def __init__(self, max_routes: int = MAX_ROUTES) -> None:
        self.generation = -1
        self.max_routes = max_routes
        self._routes: dict[Route, _Record] = {}

    def on_loop(self, generation: int, route: Route, size: int) -> bool:
        """Whether a review of `size` bytes on `route` is known quick enough for the event loop."""
        record = self._routes.get(route) if generation == self.generation else None
        return (
            record is not None
            and not record.heavy
            and size <= record.largest_quick + record.largest_quick // LARGER_SLACK
            and record.seconds_per_byte * (size + PACE_OFFSET) < INLINE_SECONDS
        )

    def observe(self, generation: int, route: Route, size: int, seconds: float) -> None:
        """Learn from a review of `size` bytes on `route` that took `seconds` of CPU time."""
        if generation != self.generation:
            if generation < self.generation:
                return  # a review of a set replaced meanwhile says nothing of the one in service
            self.generation, self._routes = generation, {}
        pace = seconds / (size + PACE_OFFSET)
        record = self._routes.get(route)
        if record is None:
            if len(self._routes) >= self.max_routes or sum(map(len, route)) > MAX_ROUTE_CHARS:
                return
            record = self._routes[route] = _Record(pace, -1, False)
        record.seconds_per_byte = max(pace, record.seconds_per_byte * PACE_DECAY)
        record.heavy = record.heavy or seconds >= HEAVY_SECONDS
        if seconds < INLINE_SECONDS:
            record.largest_quick = max(record.largest_quick, size)

    def routes(self) -> int:
        """How many routes are learnt for the generation in service."""
        return len(self._routes)
