"""The gateway's Prometheus metrics, kept in-process and written as the text exposition format.

One :class:`Metrics` per gateway process (with ``--workers N`` each worker has its own;
scrape each, or sum behind the load balancer). Series are labelled by API, HTTP status,
error kind and diagnostic code only: label values come from fixed sets or from the
parser's diagnostic codes (a fixed set in tokenparse), never from request data, so the
number of series is bounded. Histograms use fixed buckets.
"""
from __future__ import annotations

import bisect
from collections import defaultdict

__all__ = ["Metrics", "Histogram"]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Histogram:
    __slots__ = ("buckets", "counts", "total", "count")

    def __init__(self, buckets: tuple[float, ...] = _LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.count = 0

    def observe(self, value: float, n: int = 1) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += n
        self.total += value * n
        self.count += n

    def lines(self, name: str) -> list[str]:
        out, running = [], 0
        for bound, count in zip(self.buckets, self.counts):
            running += count
            out.append(f'{name}_bucket{{le="{bound:g}"}} {running}')
        out.append(f'{name}_bucket{{le="+Inf"}} {self.count}')
        out.append(f"{name}_sum {self.total:.6f}")
        out.append(f"{name}_count {self.count}")
        return out


def _labels(**labels: str) -> str:
    inner = ",".join(f'{k}="{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                     for k, v in labels.items())
    return "{" + inner + "}"


class Metrics:
    def __init__(self) -> None:
        self.requests: defaultdict[tuple[str, int], int] = defaultdict(int)  # (api, status)
        self.tokens: defaultdict[str, int] = defaultdict(int)  # prompt | completion
        self.upstream_errors: defaultdict[str, int] = defaultdict(int)  # unreachable | status | stream | timeout
        self.diagnostics: defaultdict[str, int] = defaultdict(int)  # parser diagnostic code
        self.rejected: defaultdict[str, int] = defaultdict(int)  # busy | too_large | unauthorized
        self.in_flight = 0
        self.ttft = Histogram()
        self.itl = Histogram()

    def render(self) -> str:
        lines = [
            "# HELP tokenparse_requests_total Requests answered, by API and HTTP status.",
            "# TYPE tokenparse_requests_total counter",
            *(f"tokenparse_requests_total{_labels(api=a, status=str(s))} {n}" for (a, s), n in sorted(self.requests.items())),
            "# HELP tokenparse_requests_in_flight Requests being served now.",
            "# TYPE tokenparse_requests_in_flight gauge",
            f"tokenparse_requests_in_flight {self.in_flight}",
            "# HELP tokenparse_tokens_total Prompt tokens sent to and completion tokens received from the engine.",
            "# TYPE tokenparse_tokens_total counter",
            *(f"tokenparse_tokens_total{_labels(kind=k)} {n}" for k, n in sorted(self.tokens.items())),
            "# HELP tokenparse_time_to_first_token_seconds Request received to first completion token.",
            "# TYPE tokenparse_time_to_first_token_seconds histogram",
            *self.ttft.lines("tokenparse_time_to_first_token_seconds"),
            "# HELP tokenparse_inter_token_latency_seconds Time between engine steps, per token.",
            "# TYPE tokenparse_inter_token_latency_seconds histogram",
            *self.itl.lines("tokenparse_inter_token_latency_seconds"),
            "# HELP tokenparse_upstream_errors_total Failed upstream requests, by kind.",
            "# TYPE tokenparse_upstream_errors_total counter",
            *(f"tokenparse_upstream_errors_total{_labels(kind=k)} {n}" for k, n in sorted(self.upstream_errors.items())),
            "# HELP tokenparse_parser_diagnostics_total Problems the parser recovered from, by kind.",
            "# TYPE tokenparse_parser_diagnostics_total counter",
            *(f"tokenparse_parser_diagnostics_total{_labels(kind=k)} {n}" for k, n in sorted(self.diagnostics.items())),
            "# HELP tokenparse_rejected_total Requests refused before reaching the engine, by reason.",
            "# TYPE tokenparse_rejected_total counter",
            *(f"tokenparse_rejected_total{_labels(reason=k)} {n}" for k, n in sorted(self.rejected.items())),
        ]
        return "\n".join(lines) + "\n"
