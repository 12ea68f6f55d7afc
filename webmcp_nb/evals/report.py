"""What an eval found, per model and per model and task: success rate with a Wilson interval, pass^k over repeats,
steps against the expected trajectory, tool-call accuracy, tokens and cost, latency split into model and tool
time, errors apart from failures, and each run's session. Shown in a notebook (a table and a plot), written as
one self-contained HTML file (inline styles and SVG: no script, no network) and as JSON; ``compare`` says what
got better or worse against an earlier report.

Every text in it (answers, tool names, arguments, results, errors) came from a model or a page: it is escaped.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.display import Markup, clip, escape, table, visible
from .job import RunRecord

__all__ = ["EvalReport", "Comparison", "wilson", "pass_hat_k", "percentile", "TIMING_FIELDS"]

TIMING_FIELDS = ("latency_p50_ms", "latency_p95_ms", "model_p50_ms", "model_p95_ms", "tool_p50_ms", "tool_p95_ms")
"""Report fields that measure time (left out by ``to_json(timings=False)``, with each run's ``timings``)."""

Z95 = 1.959963984540054


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval (95 %) of a success rate; ``None`` without trials."""
    if n <= 0:
        return None
    p = passes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pass_hat_k(passes: int, n: int, k: int) -> float | None:
    """pass^k: the chance that ``k`` runs drawn from the ``n`` made all pass (``C(c, k) / C(n, k)``)."""
    if n <= 0 or k > n or k <= 0:
        return None
    return math.comb(passes, k) / math.comb(n, k)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (linear interpolation); ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _stats(runs: Sequence[RunRecord], repeats_per_task: int) -> dict[str, Any]:
    """The numbers of a group of runs (one model, or one model on one task)."""
    judged = [r for r in runs if r.status != "error"]
    passes = sum(r.status == "pass" for r in judged)
    rows = [row for r in judged for row in r.trajectory if row.get("expected") is not None]
    calls = [c for r in judged for c in r.calls]
    by_task: dict[str, list[RunRecord]] = {}
    for r in judged:
        by_task.setdefault(r.task, []).append(r)
    k = repeats_per_task
    hats = [pass_hat_k(sum(x.status == "pass" for x in group), len(group), k) for group in by_task.values()]
    known = [h for h in hats if h is not None]
    totals = [float(r.timings.get("total_ms") or 0) for r in judged]
    model_ms = [float(r.timings.get("model_ms") or 0) for r in judged]
    tool_ms = [float(r.timings.get("tool_ms") or 0) for r in judged]
    costs = [r.cost for r in judged if r.cost is not None]
    interval = wilson(passes, len(judged))
    return {
        "runs": len(runs),
        "passed": passes,
        "failed": len(judged) - passes,
        "errors": len(runs) - len(judged),
        "browser_errors": sum(r.error_kind == "browser" for r in runs),
        "endpoint_errors": sum(r.error_kind == "endpoint" for r in runs),
        "setup_errors": sum(r.error_kind == "setup" for r in runs),
        "success_rate": passes / len(judged) if judged else None,
        "wilson_low": interval[0] if interval else None,
        "wilson_high": interval[1] if interval else None,
        "k": k,
        "pass_hat_k": _mean(known) if known else None,
        "steps_mean": _mean([float(r.steps) for r in judged]),
        "expected_steps_mean": _mean([float(r.expected_steps) for r in judged]),
        "tool_accuracy": _mean([1.0 if row.get("tool_ok") else 0.0 for row in rows]),
        "argument_accuracy": _mean([1.0 if row.get("arguments_ok") else 0.0 for row in rows]),
        "invalid_calls": sum(c.invalid for c in calls),
        "denied_calls": sum(c.denied for c in calls),
        "prompt_tokens": sum(r.prompt_tokens for r in judged),
        "completion_tokens": sum(r.completion_tokens for r in judged),
        "tokens_per_run": _mean([float(r.prompt_tokens + r.completion_tokens) for r in judged]),
        "cost": sum(costs) if costs else None,
        "latency_p50_ms": percentile(totals, 50),
        "latency_p95_ms": percentile(totals, 95),
        "model_p50_ms": percentile(model_ms, 50),
        "model_p95_ms": percentile(model_ms, 95),
        "tool_p50_ms": percentile(tool_ms, 50),
        "tool_p95_ms": percentile(tool_ms, 95),
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"


def _rate(s: Mapping[str, Any]) -> str:
    if s["success_rate"] is None:
        return "–"
    return f"{_pct(s['success_rate'])} [{_pct(s['wilson_low'])}–{_pct(s['wilson_high'])}]"


def _cost(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


SUMMARY_HEADERS = [
    "model", "runs", "pass", "fail", "errors (browser/endpoint)", "success [95% CI]", "pass^k", "steps / expected",
    "tool acc.", "args acc.", "invalid calls", "tokens / run", "cost", "latency p50 / p95", "model p50 / p95",
    "tool p50 / p95",
]  # fmt: skip


def _summary_cells(label: str, s: Mapping[str, Any]) -> list[Any]:
    steps = "–" if s["steps_mean"] is None else f"{s['steps_mean']:.1f} / {s['expected_steps_mean']:.1f}"
    tokens = "–" if s["tokens_per_run"] is None else f"{s['tokens_per_run']:,.0f}"
    return [
        label,
        s["runs"],
        s["passed"],
        s["failed"],
        f"{s['errors']} ({s['browser_errors']}/{s['endpoint_errors']})",
        _rate(s),
        "–" if s["pass_hat_k"] is None else f"{s['pass_hat_k']:.2f} (k={s['k']})",
        steps,
        _pct(s["tool_accuracy"]),
        _pct(s["argument_accuracy"]),
        s["invalid_calls"],
        tokens,
        _cost(s["cost"]),
        f"{_ms(s['latency_p50_ms'])} / {_ms(s['latency_p95_ms'])}",
        f"{_ms(s['model_p50_ms'])} / {_ms(s['model_p95_ms'])}",
        f"{_ms(s['tool_p50_ms'])} / {_ms(s['tool_p95_ms'])}",
    ]


def _plot(groups: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Success rate per group as horizontal bars with the Wilson interval as a whisker (inline SVG)."""
    width, bar, gap, left = 560, 16, 8, 220
    height = len(groups) * (bar + gap) + 24
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'style="font:11px sans-serif">'
    ]
    span = width - left - 50
    for i, (label, s) in enumerate(groups):
        y = i * (bar + gap) + 4
        parts.append(f'<text x="4" y="{y + bar - 4}">{escape(clip(label, 34))}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{span}" height="{bar}" fill="#eef1f4"></rect>')
        rate = s["success_rate"]
        if rate is None:
            parts.append(f'<text x="{left + 4}" y="{y + bar - 4}">no judged runs</text>')
            continue
        colour = "#1a7f37" if rate >= 0.8 else "#bf8700" if rate >= 0.5 else "#cf222e"
        parts.append(f'<rect x="{left}" y="{y}" width="{rate * span:.1f}" height="{bar}" fill="{colour}"></rect>')
        low, high = left + s["wilson_low"] * span, left + s["wilson_high"] * span
        mid = y + bar / 2
        parts.append(f'<line x1="{low:.1f}" y1="{mid}" x2="{high:.1f}" y2="{mid}" stroke="#1b1f24"></line>')
        for x in (low, high):
            parts.append(f'<line x1="{x:.1f}" y1="{y + 3}" x2="{x:.1f}" y2="{y + bar - 3}" stroke="#1b1f24"></line>')
        parts.append(f'<text x="{left + span + 6}" y="{y + bar - 4}">{_pct(rate)}</text>')
    parts.append(
        f'<text x="{left}" y="{height - 4}" fill="#57606a">success rate, with its 95% Wilson interval</text></svg>'
    )
    return "".join(parts)


class EvalReport:
    """The runs of one eval and their numbers. ``report.models`` / ``report.tasks`` are the tables,
    ``report.runs`` every run; ``save(folder)`` writes ``report.json`` and ``report.html``."""

    def __init__(
        self,
        runs: Iterable[RunRecord],
        *,
        suite: str = "suite",
        mode: str = "browser",
        repeats: int = 1,
        directory: str | Path | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        self.runs = sorted(runs, key=lambda r: (r.model, r.task, r.repeat))
        self.suite = suite
        self.mode = mode
        self.repeats = repeats
        self.directory = Path(directory) if directory else None
        """Where the run's sessions (``runs/<run id>/``) and the report files are."""
        self.info: dict[str, Any] = dict(info or {})
        """How the eval ran: engine, concurrency, eval id, wall time."""

    # ----- numbers -----

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        """Per model: every number of the report."""
        labels = sorted({r.model for r in self.runs})
        return {m: _stats([r for r in self.runs if r.model == m], self.repeats) for m in labels}

    @property
    def tasks(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Per (model, task)."""
        keys = sorted({(r.model, r.task) for r in self.runs})
        return {key: _stats([r for r in self.runs if (r.model, r.task) == key], self.repeats) for key in keys}

    def success_rate(self, model: str | None = None) -> float:
        """Passed runs over judged runs (errors aside), of one model or all; 0 when none was judged."""
        judged = [r for r in self.runs if r.status != "error" and (model is None or r.model == model)]
        return sum(r.status == "pass" for r in judged) / len(judged) if judged else 0.0

    def ok(self, threshold: float = 1.0) -> bool:
        """Every model's success rate is at least ``threshold`` and no run ended in an error (what CI checks)."""
        return bool(self.runs) and all(
            s["errors"] == 0 and (s["success_rate"] or 0.0) >= threshold for s in self.models.values()
        )

    def run(self, run_id: str) -> RunRecord:
        return next(r for r in self.runs if r.run_id == run_id)

    def session_path(self, run: RunRecord) -> Path | None:
        """The folder of a run's recorded session (replay it with ``wm.replay_agent``)."""
        if self.directory is None or run.session is None:
            return None
        return self.directory / run.session

    # ----- data -----

    def to_json(self, *, timings: bool = True) -> dict[str, Any]:
        """The whole report as JSON data; ``timings=False`` leaves out everything that measures time or says
        where a run ran (two engines' reports on the same suite then compare equal)."""

        def numbers(stats: Mapping[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in stats.items() if timings or k not in TIMING_FIELDS}

        runs = []
        for r in self.runs:
            data = r.to_dict()
            if not timings:
                data.pop("timings")
                for call in data["calls"]:
                    call.pop("duration_ms")
            runs.append(data)
        out: dict[str, Any] = {
            "format": "webmcp-nb-evals-report",
            "version": 1,
            "suite": self.suite,
            "mode": self.mode,
            "repeats": self.repeats,
            "models": {m: numbers(s) for m, s in self.models.items()},
            "tasks": [{"model": m, "task": t, **numbers(s)} for (m, t), s in self.tasks.items()],
            "runs": runs,
        }
        if timings:
            out["info"] = self.info
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], directory: str | Path | None = None) -> EvalReport:
        return cls(
            [RunRecord.from_dict(r) for r in data["runs"]],
            suite=data.get("suite", "suite"),
            mode=data.get("mode", "browser"),
            repeats=int(data.get("repeats", 1)),
            directory=directory,
            info=data.get("info"),
        )

    @classmethod
    def load(cls, path: str | Path) -> EvalReport:
        """Read a ``report.json`` (or the folder that holds one)."""
        file = Path(path)
        file = file / "report.json" if file.is_dir() else file
        return cls.from_json(json.loads(file.read_text(encoding="utf-8")), file.parent)

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per run, for ``pandas.DataFrame(report.records())``."""
        return [
            {
                "run_id": r.run_id,
                "model": r.model,
                "task": r.task,
                "repeat": r.repeat,
                "status": r.status,
                "error_kind": r.error_kind,
                "steps": r.steps,
                "expected_steps": r.expected_steps,
                "prompt_tokens": r.prompt_tokens,
                "completion_tokens": r.completion_tokens,
                "cost": r.cost,
                "total_ms": r.timings.get("total_ms"),
                "model_ms": r.timings.get("model_ms"),
                "tool_ms": r.timings.get("tool_ms"),
                "reasons": "; ".join(r.reasons),
            }
            for r in self.runs
        ]

    def save(self, directory: str | Path | None = None) -> Path:
        """Write ``report.json`` and ``report.html`` (into the eval's folder by default); returns the folder."""
        target = Path(directory) if directory else self.directory
        if target is None:
            raise ValueError("save(directory): this report has no folder of its own")
        target.mkdir(parents=True, exist_ok=True)
        (target / "report.json").write_text(json.dumps(self.to_json(), indent=1, default=str), encoding="utf-8")
        (target / "report.html").write_text(self.html(), encoding="utf-8")
        return target

    def compare(self, previous: EvalReport) -> Comparison:
        """What changed since ``previous``: per model and task (and per model), the success rate, tokens per run and
        median latency, with each change marked better or worse."""
        return Comparison(previous, self)

    # ----- views -----

    def _summary_table(self) -> str:
        return table(SUMMARY_HEADERS, [_summary_cells(m, s) for m, s in self.models.items()], "per model")

    def _task_table(self) -> str:
        rows = [_summary_cells(f"{m} · {t}", s) for (m, t), s in self.tasks.items()]
        return table(["model · task", *SUMMARY_HEADERS[1:]], rows, "per model × task")

    def _runs_table(self, links: bool) -> str:
        rows = []
        for r in self.runs:
            calls = ", ".join(f"{c.tool}{'✗' if c.error or c.invalid or c.denied else ''}" for c in r.calls)
            session: Any = r.session or ""
            if links and r.session:
                session = Markup(f'<a href="{escape(r.session)}/session.jsonl">{escape(r.session)}</a>')
            why = "; ".join(r.reasons) or (r.error or "")
            rows.append([r.model, r.task, r.repeat, r.status, clip(why, 300), clip(calls, 300),
                         clip(r.answer or "", 300), session])  # fmt: skip
        return table(["model", "task", "repeat", "status", "why", "calls", "answer", "session"], rows, "runs")

    def _head(self) -> str:
        judged = sum(r.status != "error" for r in self.runs)
        passed = sum(r.status == "pass" for r in self.runs)
        engine = self.info.get("engine")
        return (
            f"Eval {self.suite} ({self.mode} mode{f', {engine} engine' if engine else ''}): {passed}/{judged} "
            "runs passed, "
            f"{len(self.runs) - judged} errors, {len(self.models)} model(s), {self.repeats} repeat(s)"
        )

    def html(self) -> str:
        """The report as one self-contained HTML file."""
        plot = _plot(list(self.models.items()) + [(f"{m} · {t}", s) for (m, t), s in self.tasks.items()])
        body = (
            f"<h1>{escape(self._head())}</h1>{self._summary_table()}<div>{plot}</div>{self._task_table()}"
            f"{self._runs_table(links=True)}"
        )
        return (
            '<!doctype html><html><head><meta charset="utf-8"><title>'
            f"{escape('Eval ' + self.suite)}</title></head>"
            f'<body style="font:14px system-ui,sans-serif;margin:1em">{body}</body></html>'
        )

    def __repr__(self) -> str:
        return f"<EvalReport {self._head()}>"

    def __str__(self) -> str:
        lines = [self._head()]
        for model, s in self.models.items():
            lines.append(
                f"  {model}: {_rate(s)} success, pass^{s['k']} "
                f"{'–' if s['pass_hat_k'] is None else format(s['pass_hat_k'], '.2f')}, "
                f"{s['errors']} error(s), {s['tokens_per_run'] or 0:,.0f} tokens/run, "
                f"p50 {_ms(s['latency_p50_ms'])}"
            )
        for r in self.runs:
            if r.status != "pass":
                lines.append(
                    f"  {r.status.upper()} {r.model} · {r.task} #{r.repeat}: {'; '.join(r.reasons) or r.error}"
                )
        return visible("\n".join(lines))  # reasons and errors quote the page: its text cannot read backwards

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        html = (
            f"<div><b>{escape(self._head())}</b>{self._summary_table()}<div>{_plot(list(self.models.items()))}</div>"
            f"<details><summary>per task and per run</summary>{self._task_table()}{self._runs_table(links=False)}"
            "</details></div>"
        )
        return {"text/plain": str(self), "text/html": html}


@dataclass(frozen=True)
class Change:
    """One group's numbers before and after."""

    model: str
    task: str | None
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None

    def delta(self, key: str) -> float | None:
        if not self.before or not self.after or self.before.get(key) is None or self.after.get(key) is None:
            return None
        return float(self.after[key]) - float(self.before[key])

    @property
    def verdict(self) -> str:
        """``better``, ``worse``, ``same``, ``new`` or ``gone``: by success rate (any change), then tokens per run
        (more than 10 %), then median latency (more than 25 % and 100 ms: timings are noisy)."""
        if self.before is None:
            return "new"
        if self.after is None:
            return "gone"
        for key, sign, share, floor in (
            ("success_rate", 1, 0.0, 1e-9),
            ("tokens_per_run", -1, 0.10, 1e-9),
            ("latency_p50_ms", -1, 0.25, 100.0),
        ):
            change = self.delta(key)
            if change is not None and abs(change) > max(share * abs(float(self.before.get(key) or 0)), floor):
                return "better" if change * sign > 0 else "worse"
        return "same"


class Comparison:
    """``report.compare(previous)``: each model, and each model on each task, better or worse."""

    def __init__(self, before: EvalReport, after: EvalReport) -> None:
        b_models, a_models = before.models, after.models
        b_tasks, a_tasks = before.tasks, after.tasks
        self.changes = [Change(m, None, b_models.get(m), a_models.get(m)) for m in sorted({*b_models, *a_models})]
        self.changes += [
            Change(m, t, b_tasks.get((m, t)), a_tasks.get((m, t))) for m, t in sorted({*b_tasks, *a_tasks})
        ]

    @property
    def better(self) -> list[Change]:
        return [c for c in self.changes if c.verdict == "better"]

    @property
    def worse(self) -> list[Change]:
        return [c for c in self.changes if c.verdict == "worse"]

    def _rows(self) -> list[list[Any]]:
        def rate(s: Mapping[str, Any] | None) -> str:
            return "–" if s is None else _pct(s.get("success_rate"))

        rows = []
        for c in self.changes:
            tokens = c.delta("tokens_per_run")
            latency = c.delta("latency_p50_ms")
            rows.append(
                [
                    c.model,
                    c.task or "(all tasks)",
                    f"{rate(c.before)} → {rate(c.after)}",
                    "–" if tokens is None else f"{tokens:+,.0f}",
                    "–" if latency is None else f"{latency:+,.0f} ms",
                    c.verdict,
                ]
            )
        return rows

    def __str__(self) -> str:
        lines = [f"{len(self.better)} better, {len(self.worse)} worse"]
        lines += [f"  {r[5]:6} {r[0]} · {r[1]}: success {r[2]}, tokens/run {r[3]}, p50 {r[4]}" for r in self._rows()]
        return visible("\n".join(lines))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        head = f"<b>{len(self.better)} better, {len(self.worse)} worse</b>"
        rows = self._rows()
        return {
            "text/plain": str(self),
            "text/html": head + table(["model", "task", "success", "Δ tokens/run", "Δ p50", "verdict"], rows),
        }
