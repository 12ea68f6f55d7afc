"""What an eval found, for a person to read: per model (and tool variant) the success rate with its Wilson
interval, pass^k over repeats, steps, tool-call accuracy, tokens, cost and latency, errors apart and named; per
task the runs side by side (a column per model, a mark per repeat), each a link to its session's report; every
run that did not pass with why (the first expected call not met beside what was called, a forbidden call, a page
check and what the page showed, the answer, why the agent stopped); and, with variants, which description of a
tool models use better — or that the runs show no clear difference — with each variant's text beside the page's.

Shown in a notebook (the same as the file), written as one self-contained HTML file (inline styles and SVG: no
script, no network) and as JSON; ``compare`` says what got better or worse against an earlier report, by exact
tests (:mod:`.stats`), never by noise.

Every text in it (answers, tool names, arguments, results, errors, reasons) came from a model or a page: HTML
escapes it, text makes its controls visible. Links are relative paths inside the eval's folder; a path from a
shared report.json that is not one is shown, never linked.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.describe import call_text
from ..core.display import Markup, clip, escape, table, visible
from .job import REPORT_FILE, RunRecord
from .stats import ALPHA, fisher_exact, mann_whitney, pass_hat_k, percentile, wilson

__all__ = [
    "EvalReport",
    "Comparison",
    "Change",
    "VariantComparison",
    "VariantResult",
    "wilson",
    "pass_hat_k",
    "percentile",
    "TIMING_FIELDS",
]

TIMING_FIELDS = ("latency_p50_ms", "latency_p95_ms", "model_p50_ms", "model_p95_ms", "tool_p50_ms", "tool_p95_ms")
"""Report fields that measure time (left out by ``to_json(timings=False)``, with each run's ``timings``)."""

SESSION = re.compile(r"runs/[A-Za-z0-9][A-Za-z0-9._-]{0,200}")
"""A run's session folder as engines name it; any other value (a shared report.json's) is never a link."""
SHORT = 240
"""Characters of a long text shown before the rest is folded away (``<details>``)."""
LONGEST = 20_000
"""Characters of one text a report holds at most."""

STYLE = "font:14px/1.45 system-ui,sans-serif;color:#1b1f24;max-width:80em"
GRID_CELL = "text-align:left;padding:2px 8px"
"""A cell of the runs-side-by-side table (left-aligned: JupyterLab right-aligns table cells by default)."""
BADGE = {"pass": ("✓", "#1a7f37", "#dafbe1"), "fail": ("✗", "#a40e26", "#ffebe9"), "error": ("!", "#7d4e00", "#fff8c5")}


# ----- numbers -----


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
        "other_errors": sum(r.status == "error" and r.error_kind not in ("browser", "endpoint", "setup") for r in runs),
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


# ----- words -----


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


def _errors(s: Mapping[str, Any]) -> str:
    """Errors by kind, in words: ``2 setup``, ``1 browser, 1 endpoint``, ``0``."""
    kinds = [
        (s["setup_errors"], "setup"),
        (s["browser_errors"], "browser"),
        (s["endpoint_errors"], "endpoint"),
        (s.get("other_errors", 0), "other"),
    ]
    named = [f"{n} {kind}" for n, kind in kinds if n]
    return ", ".join(named) if named else "0"


def _p(value: float) -> str:
    return f"p = {value:.3f}" if value >= 0.001 else "p < 0.001"


def _steps(s: Mapping[str, Any]) -> str:
    return "–" if s["steps_mean"] is None else f"{s['steps_mean']:.1f} / {s['expected_steps_mean']:.1f}"


def _pair(s: Mapping[str, Any], key: str) -> str:
    return f"{_ms(s[f'{key}_p50_ms'])} / {_ms(s[f'{key}_p95_ms'])}"


SUMMARY: list[tuple[str, Callable[[Mapping[str, Any]], Any]]] = [
    ("runs", lambda s: s["runs"]),
    ("pass", lambda s: s["passed"]),
    ("fail", lambda s: s["failed"]),
    ("errors", _errors),
    ("success [95% CI]", _rate),
    ("pass^k", lambda s: "–" if s["pass_hat_k"] is None else f"{s['pass_hat_k']:.2f} (k={s['k']})"),
    ("tokens / run", lambda s: "–" if s["tokens_per_run"] is None else f"{s['tokens_per_run']:,.0f}"),
    ("latency p50 / p95", lambda s: _pair(s, "latency")),
    ("cost", lambda s: _cost(s["cost"])),
]
"""The per-model table's columns (after the model): what the report shows at once."""
MORE_NUMBERS: list[tuple[str, Callable[[Mapping[str, Any]], Any]]] = [
    ("steps / expected", _steps),
    ("tool acc.", lambda s: _pct(s["tool_accuracy"])),
    ("args acc.", lambda s: _pct(s["argument_accuracy"])),
    ("invalid calls", lambda s: s["invalid_calls"]),
    ("model p50 / p95", lambda s: _pair(s, "model")),
    ("tool p50 / p95", lambda s: _pair(s, "tool")),
]
"""The rest of each model's numbers, folded under the table (``<details>``)."""


def _numbers(
    columns: Sequence[tuple[str, Callable[[Mapping[str, Any]], Any]]], models: Mapping[str, Mapping[str, Any]]
) -> str:
    """A table of ``columns`` for each model; every number and interval on one line (the names wrap instead)."""
    headers = ["model", *(name for name, _ in columns)]
    rows = [[model, *(cell(s) for _, cell in columns)] for model, s in models.items()]
    return table(headers, rows, nowrap=range(1, len(headers)))


def _long(text: str, short: int = SHORT) -> str:
    """Page or model text as HTML: whole when short, else its start with the rest folded away."""
    text = clip(text, LONGEST)
    if len(text) <= short:
        return f"<span style='white-space:pre-wrap'>{escape(text)}</span>"
    return (
        f"<details><summary style='cursor:pointer'>{escape(text[:short])}… "
        f"<i>({len(text) - short:,} more characters)</i></summary>"
        f"<div style='white-space:pre-wrap'>{escape(text)}</div></details>"
    )


def _labelled(label: str, body: str) -> str:
    """``label: body`` with every line of the body under its first (a numbered list of calls stays aligned)."""
    return (
        "<div style='font-size:12px;display:grid;grid-template-columns:auto 1fr;column-gap:.4em'>"
        f"<span>{escape(label)}:</span><div>{body}</div></div>"
    )


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _plot(groups: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Success rate per group as horizontal bars with the Wilson interval as a whisker (inline SVG). Each label
    stands on its own line above its bar, so no label runs into a bar however long it is."""
    width, bar, line, gap = 560, 14, 15, 9
    span = width - 60
    step = line + bar + gap
    height = len(groups) * step + 22
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'style="font:12px system-ui,sans-serif">'
    ]
    for i, (label, s) in enumerate(groups):
        top = i * step
        y = top + line
        parts.append(f'<text x="0" y="{top + 11}">{escape(clip(label, 90))}</text>')
        parts.append(f'<rect x="0" y="{y}" width="{span}" height="{bar}" fill="#eef1f4"></rect>')
        rate = s["success_rate"]
        if rate is None:
            parts.append(f'<text x="4" y="{y + bar - 3}" fill="#57606a">no judged runs ({_errors(s)} errors)</text>')
            continue
        colour = "#1a7f37" if rate >= 0.8 else "#bf8700" if rate >= 0.5 else "#cf222e"
        parts.append(f'<rect x="0" y="{y}" width="{rate * span:.1f}" height="{bar}" fill="{colour}"></rect>')
        low, high = s["wilson_low"] * span, s["wilson_high"] * span
        mid = y + bar / 2
        parts.append(f'<line x1="{low:.1f}" y1="{mid}" x2="{high:.1f}" y2="{mid}" stroke="#1b1f24"></line>')
        for x in (low, high):
            parts.append(f'<line x1="{x:.1f}" y1="{y + 2}" x2="{x:.1f}" y2="{y + bar - 2}" stroke="#1b1f24"></line>')
        parts.append(f'<text x="{span + 6}" y="{y + bar - 3}">{_pct(rate)}</text>')
    parts.append(
        f'<text x="0" y="{height - 5}" fill="#57606a">success rate, with its 95% Wilson interval (errors left out)'
        "</text></svg>"
    )
    return "".join(parts)


def _word_diff(before: str, after: str) -> str:
    """Two texts as one, words taken out struck through and words put in underlined (HTML)."""
    a, b = re.split(r"(\s+)", before), re.split(r"(\s+)", after)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            out.append(f"<del style='background:#ffebe9'>{escape(''.join(a[i1:i2]))}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins style='background:#dafbe1'>{escape(''.join(b[j1:j2]))}</ins>")
        if op == "equal":
            out.append(escape("".join(a[i1:i2])))
    return f"<div style='white-space:pre-wrap'>{''.join(out)}</div>"


def _line_diff(before: str, after: str, names: tuple[str, str]) -> str:
    return "\n".join(
        difflib.unified_diff(before.splitlines(), after.splitlines(), names[0], names[1], lineterm="", n=2)
    )


def _field_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True)


# ----- the report -----


class EvalReport:
    """The runs of one eval and their numbers. ``report.models`` / ``report.tasks`` are the tables (by model,
    or by model and variant when the eval had variants: ``"model [variant]"``), ``report.runs`` every run;
    ``save(folder)`` writes ``report.json`` and ``report.html``."""

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
        self.info: dict[str, Any] = dict(info or {})
        """How the eval ran: engine, concurrency, eval id, wall time, the variants it compared."""
        given = list(runs)
        tasks = list(dict.fromkeys(r.task for r in given))  # in the order the runs were planned: the suite's
        variants = self.info.get("variants")
        named = list(variants) if isinstance(variants, dict) else list(dict.fromkeys(r.variant for r in given))
        self.runs = sorted(
            given, key=lambda r: (r.model, named.index(r.variant) if r.variant in named else 0, tasks.index(r.task),
                                  r.repeat),
        )  # fmt: skip
        self.variants: list[str] = [str(v) for v in named if v is not None]
        """The names of the tool variants compared, in the order given (empty: the eval had none)."""
        self.task_names = tasks
        """The tasks, in the order they were planned."""
        self.suite = suite
        self.mode = mode
        self.repeats = repeats
        self.directory = Path(directory) if directory else None
        """Where the run's sessions (``runs/<run id>/``) and the report files are."""

    # ----- numbers -----

    @property
    def configs(self) -> list[str]:
        """The groups runs are counted in, in order: each model, or each model under each variant."""
        out: list[str] = []
        for r in self.runs:
            if r.config not in out:
                out.append(r.config)
        return out

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        """Per model (per model and variant, with variants): every number of the report."""
        return {c: _stats([r for r in self.runs if r.config == c], self.repeats) for c in self.configs}

    @property
    def tasks(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Per (model, task) — the model with its variant, with variants."""
        keys = [(c, t) for c in self.configs for t in self.task_names]
        found = {(r.config, r.task) for r in self.runs}
        return {
            key: _stats([r for r in self.runs if (r.config, r.task) == key], self.repeats)
            for key in keys
            if key in found
        }

    def success_rate(self, model: str | None = None) -> float:
        """Passed runs over judged runs (errors aside), of one model (or model [variant]) or all; 0 when none."""
        judged = [r for r in self.runs if r.status != "error" and (model is None or model in (r.model, r.config))]
        return sum(r.status == "pass" for r in judged) / len(judged) if judged else 0.0

    def ok(self, threshold: float = 1.0) -> bool:
        """Every model's success rate is at least ``threshold`` and no run ended in an error (what CI checks)."""
        return bool(self.runs) and not self.shortfalls(threshold)

    def shortfalls(self, threshold: float = 1.0) -> list[str]:
        """Why :meth:`ok` is false, a sentence per model that misses: how many runs passed against how many
        ``threshold`` requires, and the runs that ended in an error (any error fails)."""
        if not self.runs:
            return ["no run was made"]
        out = []
        for model, s in self.models.items():
            judged = s["passed"] + s["failed"]
            if judged and s["success_rate"] < threshold:
                needed = next(n for n in range(judged + 1) if n / judged >= threshold)
                out.append(
                    f"{model}: {s['passed']} of {judged} runs passed ({_pct(s['success_rate'])}); the threshold, "
                    f"{threshold:.0%}, requires {needed} of {judged}"
                )
            if s["errors"]:
                out.append(
                    f"{model}: {s['errors']} of {s['runs']} runs ended in an error ({_errors(s)}); any error "
                    "fails the check"
                )
        return out

    def run(self, run_id: str) -> RunRecord:
        return next(r for r in self.runs if r.run_id == run_id)

    def session_path(self, run: RunRecord) -> Path | None:
        """The folder of a run's recorded session (replay it with ``wm.replay_agent``)."""
        if self.directory is None or run.session is None:
            return None
        return self.directory / run.session

    def compare_variants(self, baseline: str | None = None) -> VariantComparison:
        """Each variant against ``baseline`` (default: the first variant), per model and task and per model:
        which is better, by Fisher's exact test on the success counts, or that there is no clear difference."""
        return VariantComparison(self, baseline)

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
        if self.variants:
            out["variants"] = self.compare_variants().to_json()
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
        """Read a ``report.json`` (or the folder that holds one); ``ValueError`` naming the file when it is not one."""
        file = Path(path)
        file = file / "report.json" if file.is_dir() else file
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
                raise ValueError("it has no list of runs")
            return cls.from_json(data, file.parent)
        except (ValueError, TypeError) as exc:  # (json's JSONDecodeError is a ValueError)
            raise ValueError(f"{file} is not an eval report webmcp-nb can read: {exc}") from None

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per run, for ``pandas.DataFrame(report.records())``."""
        return [
            {
                "run_id": r.run_id,
                "model": r.model,
                "variant": r.variant,
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
                "reasons": "; ".join(r.why),
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
        """What changed since ``previous``: per model and task (and per model), better or worse only where an
        exact test says the difference is beyond noise; otherwise no clear difference."""
        return Comparison(previous, self)

    # ----- views -----

    def _head(self) -> str:
        judged = sum(r.status != "error" for r in self.runs)
        passed = sum(r.status == "pass" for r in self.runs)
        engine = self.info.get("engine")
        errors = _errors(_stats(self.runs, self.repeats))
        models = len({r.model for r in self.runs})
        variants = f", {len(self.variants)} tool variants" if self.variants else ""
        return (
            f"Eval {self.suite} ({self.mode} mode{f', {engine} engine' if engine else ''}): {passed}/{judged} runs "
            f"passed, errors: {errors}, {models} model(s){variants}, {self.repeats} repeat(s)"
        )

    def _href(self, run: RunRecord, base: str) -> str | None:
        """The link to a run's session report, relative to ``base``; ``None`` when its session is not a folder of
        this eval (a shared report.json's value is shown, never followed)."""
        if run.session is None or not SESSION.fullmatch(run.session):
            return None
        folder = self.directory / run.session if self.directory is not None else None
        name = REPORT_FILE if folder is None or (folder / REPORT_FILE).is_file() else "session.jsonl"
        return f"./{base}{run.session}/{name}"

    def _mark(self, run: RunRecord, base: str | None) -> str:
        sign, colour, background = BADGE.get(run.status, ("?", "#57606a", "#eaeef2"))
        tip = f"{run.status} · repeat {run.repeat}: " + ("; ".join(run.why) or "passed")
        tip = escape(tip if len(tip) <= 300 else tip[:300] + "… (the whole reason is below)")
        style = (
            f"display:inline-block;min-width:1.5em;text-align:center;margin:1px;border-radius:3px;"
            f"color:{colour};background:{background};text-decoration:none;font-weight:600"
        )
        href = self._href(run, base) if base is not None else None
        if href is None:
            return f"<span title='{tip}' style='{style}'>{sign}</span>"
        return f"<a href='{escape(href)}' title='{tip}' style='{style}'>{sign}</a>"

    def _grid(self, base: str | None) -> str:
        """Per task, the runs side by side: a column per model (and variant), a mark per repeat."""
        configs = self.configs
        head = "".join(f"<th style='text-align:left;padding:2px 8px'>{escape(c)}</th>" for c in configs)
        rows = []
        for task in self.task_names:
            cells = []
            for config in configs:
                runs = [r for r in self.runs if r.task == task and r.config == config]
                judged = [r for r in runs if r.status != "error"]
                count = f"{sum(r.status == 'pass' for r in judged)}/{len(judged)}" if judged else "–"
                marks = "".join(self._mark(r, base) for r in sorted(runs, key=lambda r: r.repeat))
                cells.append(f"<td style='{GRID_CELL};white-space:nowrap'>{marks} <small>{count}</small></td>")
            rows.append(f"<tr><td style='{GRID_CELL}'>{escape(task)}</td>{''.join(cells)}</tr>")
        note = "Each mark is one repeat: ✓ passed, ✗ failed, ! an error. " + (
            "Click one for its session's report: the verdict, then the timeline." if base is not None else ""
        )
        return (
            f"<table style='border-collapse:collapse;font-size:13px'><thead><tr><th style='text-align:left;"
            f"padding:2px 8px'>task</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"<div style='color:#57606a;font-size:12px'>{escape(note)}</div>"
        )

    def _why(self, runs: Sequence[RunRecord], base: str | None) -> str:
        """Runs of one model on one task that did not pass for the same reasons: the reasons, the first expected
        call beside what was called, the calls and the answer (of the first), and a link to each one's timeline."""
        run = runs[0]
        sign, colour, background = BADGE.get(run.status, ("?", "#57606a", "#eaeef2"))
        links = []
        for each in runs:
            href = self._href(each, base) if base is not None else None
            label = escape(f"repeat {each.repeat}")  # a shared report.json says what its repeat is
            links.append(f"<a href='{escape(href)}'>{label}</a>" if href else label)
        same = " (the same reasons)" if len(runs) > 1 else ""
        head = (
            f"<div><b style='color:{colour};background:{background};padding:0 .4em;border-radius:3px'>"
            f"{sign} {escape(run.status)}</b> <b>{escape(run.config)}</b> · {escape(run.task)} · "
            f"{', '.join(links)}{same}</div>"
        )
        reasons = "".join(f"<li>{_long(reason, 400)}</li>" for reason in run.why)
        parts = [head, f"<ul style='margin:.2em 0'>{reasons}</ul>"]
        unmet = run.unmet
        if unmet and unmet.get("rows"):
            rows = [[row[0], row[1], row[2]] for row in unmet["rows"]]
            parts.append(table(["argument", "expected", "got"], rows, f"call {unmet.get('call')}: expected vs made"))
        if unmet and (unmet.get("expected") or unmet.get("got")):
            got = unmet.get("got")
            made = "(no call made)"
            if isinstance(got, dict):
                made = call_text(got.get("tool"), got.get("arguments"), LONGEST) + f" → {_json_text(got.get('result'))}"
            sides = [
                ["expected", _json_text(unmet.get("expected")) if unmet.get("expected") else "(no call expected)"],
                ["made", made],
            ]
            rows = [[side, Markup(_long(text, 300))] for side, text in sides]
            parts.append(table(["", "the call"], rows))
        if run.calls:
            made = "\n".join(
                f"{i}. {call_text(c.tool, c.arguments, LONGEST)}" + (f" ✗ {c.error}" if c.error else "")
                for i, c in enumerate(run.calls, 1)
            )
            parts.append(_labelled("calls", _long(made, 300)))
        if run.answer:
            parts.append(_labelled("answer", _long(run.answer, 300)))
        for note in run.notes:
            parts.append(f"<div style='font-size:12px;color:#57606a'>note: {escape(note)}</div>")
        return (
            "<div style='border-left:3px solid #cf222e;padding:.2em .7em;margin:.5em 0;background:#fffafa'>"
            f"{''.join(parts)}</div>"
        )

    def _failures(self) -> list[list[RunRecord]]:
        """The runs that did not pass, those of one model on one task with the same reasons together."""
        groups: dict[tuple[str, str, str, tuple[str, ...]], list[RunRecord]] = {}
        for r in self.runs:
            if r.status != "pass":
                groups.setdefault((r.config, r.task, r.status, tuple(r.why)), []).append(r)
        return list(groups.values())

    def _runs_table(self, base: str | None) -> str:
        rows = []
        for r in self.runs:
            calls = ", ".join(f"{c.tool}{'✗' if c.error or c.invalid or c.denied else ''}" for c in r.calls)
            href = self._href(r, base) if base is not None else None
            where: Any = r.session or ""
            if href:
                where = Markup(f"<a href='{escape(href)}'>session report</a>")
            tokens = r.prompt_tokens + r.completion_tokens
            rows.append([
                r.config, r.task, r.repeat, r.status, Markup(_long(calls, 160)), f"{tokens:,}",
                _ms(r.timings.get("total_ms")), where,
            ])  # fmt: skip
        headers = ["model", "task", "repeat", "status", "calls", "tokens", "time", "session"]
        return f"<div style='overflow-x:auto'>{table(headers, rows, nowrap=(2, 3, 5, 6, 7))}</div>"

    def _variants_html(self) -> str:
        if not self.variants:
            return ""
        comparison = self.compare_variants()
        parts = ["<h2>Tool variants</h2>", comparison._html()]
        for name in self.variants:
            parts.append(self._diff_html(name))
        return "".join(parts)

    def variant_changes(self, name: str) -> dict[str, dict[str, dict[str, Any]]]:
        """What variant ``name`` changed, tool by tool and field by field: ``{"page": ..., "variant": ...}`` (the
        page's own as a run saw it; ``None`` when no run saw the tool)."""
        given = self.info.get("variants", {}).get(name, {}) if isinstance(self.info.get("variants"), dict) else {}
        seen: dict[str, dict[str, dict[str, Any]]] = {}
        for r in self.runs:
            if r.variant == name:
                for tool, fields in r.overrides.items():
                    seen.setdefault(tool, fields)
        out = {tool: dict(fields) for tool, fields in seen.items()}
        for tool, fields in given.items():
            for key, value in fields.items():
                out.setdefault(tool, {}).setdefault(key, {"page": None, "variant": value})
        return out

    def _diff_html(self, name: str) -> str:
        changes = self.variant_changes(name)
        if not changes:
            return f"<div><b>{escape(name)}</b>: the page's own tools, unchanged</div>"
        parts = [f"<div style='margin:.6em 0'><b>{escape(name)}</b>: what it shows models instead of the page's text"]
        for tool, fields in changes.items():
            for key, change in fields.items():
                page, mine = change.get("page"), change.get("variant")
                label = f"{tool}.{key}"
                if page is None:
                    body = f"<div style='white-space:pre-wrap'>{escape(clip(_field_text(mine), LONGEST))}</div>"
                    label += " (the page's own was not seen by any run)"
                elif isinstance(page, str) and isinstance(mine, str):
                    body = _word_diff(clip(page, LONGEST), clip(mine, LONGEST))
                else:
                    diff = _line_diff(_field_text(page), _field_text(mine), ("page", name))
                    body = f"<pre style='white-space:pre-wrap;font-size:12px'>{escape(clip(diff, LONGEST))}</pre>"
                parts.append(
                    f"<div style='border:1px solid #d0d7de;border-radius:4px;padding:.3em .6em;margin:.3em 0'>"
                    f"<code>{escape(label)}</code>{body}</div>"
                )
        parts.append("</div>")
        return "".join(parts)

    def _diff_text(self, name: str) -> list[str]:
        lines = []
        for tool, fields in self.variant_changes(name).items():
            for key, change in fields.items():
                page, mine = change.get("page"), change.get("variant")
                lines.append(f"    {tool}.{key}:")
                if page is not None:
                    lines += [f"      - {line}" for line in clip(_field_text(page), 2000).splitlines()]
                lines += [f"      + {line}" for line in clip(_field_text(mine), 2000).splitlines()]
        return lines or ["    the page's own tools, unchanged"]

    def _body(self, base: str | None) -> str:
        """The report's HTML (inside the file's body, and the notebook's display): ``base`` prefixes links to the
        runs' session reports (``None``: no links)."""
        groups = list(self.models.items())
        groups += [(f"{c} · {t}", s) for (c, t), s in self.tasks.items()] if len(self.task_names) > 1 else []
        failing = [r for r in self.runs if r.status != "pass"]
        why = "".join(self._why(group, base) for group in self._failures()) or "<div>Every run passed.</div>"
        meta = [f"eval {self.info['eval_id']}"] if self.info.get("eval_id") else []
        if self.info.get("wall_ms") is not None:
            meta.append(f"{_ms(float(self.info['wall_ms']))} in all")
        return (
            f"<div style='{STYLE}'><h1 style='font-size:1.3em'>{escape(self._head())}</h1>"
            f"<div style='color:#57606a;font-size:12px'>{escape(' · '.join(meta))}</div>"
            f"{self._variants_html()}"
            f"<h2>Per model</h2>{self._per_model()}"
            f"<h2>Success</h2><div>{_plot(groups)}</div>"
            f"<h2>Per task: the runs side by side</h2>{self._grid(base)}"
            f"<h2>Why runs did not pass ({len(failing)})</h2>{why}"
            f"<h2>Every run</h2>{self._runs_table(base)}</div>"
        )

    def _per_model(self) -> str:
        """Each model's main numbers (cost only when some run had a price), the rest folded under them."""
        models = self.models
        costs = any(s["cost"] is not None for s in models.values())
        shown = [c for c in SUMMARY if c[0] != "cost" or costs]
        more = MORE_NUMBERS if costs else [*MORE_NUMBERS, *(c for c in SUMMARY if c[0] == "cost")]
        names = ", ".join(name for name, _ in more)
        return (
            f"<div style='overflow-x:auto'>{_numbers(shown, models)}</div>"
            f"<details style='margin:.3em 0'><summary style='cursor:pointer;color:#57606a'>more numbers: {names}"
            f"</summary><div style='overflow-x:auto'>{_numbers(more, models)}</div></details>"
        )

    def html(self) -> str:
        """The report as one self-contained HTML file (links: the runs' session reports, inside its folder)."""
        return (
            '<!doctype html><html><head><meta charset="utf-8"><title>'
            f"{escape('Eval ' + self.suite)}</title></head>"
            f'<body style="margin:1em">{self._body("")}</body></html>'
        )

    def _notebook_base(self) -> str | None:
        """Links from a notebook's output: the folder relative to the kernel's working folder (where the notebook
        usually is), or no links when the folder is elsewhere."""
        if self.directory is None:
            return None
        try:
            relative = os.path.relpath(self.directory.resolve(), Path.cwd())
        except ValueError:
            return None
        if relative.startswith(".."):
            return None
        return "" if relative == "." else relative.replace(os.sep, "/") + "/"

    def __repr__(self) -> str:
        return f"<EvalReport {self._head()}>"

    def __str__(self) -> str:
        lines = [self._head()]
        for model, s in self.models.items():
            lines.append(
                f"  {model}: {_rate(s)} success, pass^{s['k']} "
                f"{'–' if s['pass_hat_k'] is None else format(s['pass_hat_k'], '.2f')}, "
                f"errors: {_errors(s)}, {s['tokens_per_run'] or 0:,.0f} tokens/run, p50 {_ms(s['latency_p50_ms'])}"
            )
        if self.variants:
            lines.append(f"Tool variants (against {self.compare_variants().baseline}):")
            lines += [f"  {line}" for line in self.compare_variants().lines()]
            for name in self.variants:
                lines.append(f"  {name}:")
                lines += self._diff_text(name)
        for group in self._failures():
            r = group[0]
            repeats = ", ".join(f"#{each.repeat}" for each in group)
            lines.append(f"  {r.status.upper()} {r.config} · {r.task} {repeats}:")
            lines += [f"      {clip(reason, 2000)}" for reason in r.why]
        return visible("\n".join(lines))  # reasons and errors quote the page: no control or escape reaches a terminal

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": str(self), "text/html": self._body(self._notebook_base())}


# ----- comparisons -----


def _values(runs: Sequence[RunRecord], key: str) -> list[float]:
    judged = [r for r in runs if r.status != "error"]
    if key == "tokens":
        return [float(r.prompt_tokens + r.completion_tokens) for r in judged]
    return [float(r.timings.get("total_ms") or 0) for r in judged]


@dataclass(frozen=True)
class Change:
    """One group's runs before and after, and what the tests make of them."""

    model: str
    task: str | None
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    before_runs: tuple[RunRecord, ...] = ()
    after_runs: tuple[RunRecord, ...] = ()

    def delta(self, key: str) -> float | None:
        if not self.before or not self.after or self.before.get(key) is None or self.after.get(key) is None:
            return None
        return float(self.after[key]) - float(self.before[key])

    @property
    def tests(self) -> dict[str, float]:
        """The p-values: ``success`` (Fisher's exact test on passed/judged), ``tokens`` and ``latency``
        (Mann-Whitney U on each run's tokens and total time)."""
        b, a = self.before or {}, self.after or {}
        judged_b, judged_a = b.get("passed", 0) + b.get("failed", 0), a.get("passed", 0) + a.get("failed", 0)
        return {
            "success": fisher_exact(b.get("passed", 0), judged_b, a.get("passed", 0), judged_a),
            "tokens": mann_whitney(_values(self.before_runs, "tokens"), _values(self.after_runs, "tokens")),
            "latency": mann_whitney(_values(self.before_runs, "latency"), _values(self.after_runs, "latency")),
        }

    @property
    def verdict(self) -> str:
        """``better``, ``worse``, ``no clear difference``, ``new`` or ``gone``: by success (Fisher's exact test),
        then tokens per run, then latency (Mann-Whitney U), each counted only when p < 0.05."""
        if self.before is None:
            return "new"
        if self.after is None:
            return "gone"
        tests = self.tests
        for key, delta, sign in (
            ("success", self.delta("success_rate"), 1),
            ("tokens", self.delta("tokens_per_run"), -1),
            ("latency", self.delta("latency_p50_ms"), -1),
        ):
            if delta and tests[key] < ALPHA:
                return "better" if delta * sign > 0 else "worse"
        return "no clear difference"

    @property
    def why(self) -> str:
        """The evidence in words: counts, deltas and p-values."""
        if self.before is None or self.after is None:
            return ""
        b, a, tests = self.before, self.after, self.tests
        tokens, latency = self.delta("tokens_per_run"), self.delta("latency_p50_ms")
        return (
            f"passed {b['passed']}/{b['passed'] + b['failed']} → {a['passed']}/{a['passed'] + a['failed']} "
            f"({_p(tests['success'])}); tokens/run {'–' if tokens is None else f'{tokens:+,.0f}'} "
            f"({_p(tests['tokens'])}); p50 {'–' if latency is None else f'{latency:+,.0f} ms'} "
            f"({_p(tests['latency'])})"
        )


class Comparison:
    """``report.compare(previous)``: each model, and each model on each task, better, worse, or no clear
    difference."""

    def __init__(self, before: EvalReport, after: EvalReport) -> None:
        b_models, a_models = before.models, after.models
        b_tasks, a_tasks = before.tasks, after.tasks

        def runs(report: EvalReport, model: str, task: str | None) -> tuple[RunRecord, ...]:
            return tuple(r for r in report.runs if r.config == model and (task is None or r.task == task))

        self.changes = [
            Change(m, None, b_models.get(m), a_models.get(m), runs(before, m, None), runs(after, m, None))
            for m in sorted({*b_models, *a_models})
        ]
        self.changes += [
            Change(m, t, b_tasks.get((m, t)), a_tasks.get((m, t)), runs(before, m, t), runs(after, m, t))
            for m, t in sorted({*b_tasks, *a_tasks})
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

        return [
            [c.model, c.task or "(all tasks)", f"{rate(c.before)} → {rate(c.after)}", c.why, c.verdict]
            for c in self.changes
        ]

    def _summary(self) -> str:
        unclear = sum(c.verdict == "no clear difference" for c in self.changes)
        return f"{len(self.better)} better, {len(self.worse)} worse, {unclear} with no clear difference (p ≥ {ALPHA})"

    def __str__(self) -> str:
        lines = [self._summary()]
        lines += [f"  {r[4]}: {r[0]} · {r[1]}: success {r[2]}; {r[3]}" for r in self._rows()]
        return visible("\n".join(lines))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        head = f"<b>{escape(self._summary())}</b>"
        rows = self._rows()
        return {
            "text/plain": str(self),
            "text/html": head + table(["model", "task", "success", "evidence", "verdict"], rows, nowrap=(2,)),
        }


@dataclass(frozen=True)
class VariantResult:
    """One variant against the baseline, for one model on one task (or on all tasks: ``task`` is ``None``)."""

    model: str
    task: str | None
    variant: str
    baseline: str
    passed: int
    judged: int
    base_passed: int
    base_judged: int

    @property
    def p(self) -> float:
        return fisher_exact(self.base_passed, self.base_judged, self.passed, self.judged)

    @property
    def verdict(self) -> str:
        """``better``, ``worse`` or ``no clear difference`` (Fisher's exact test, p < 0.05)."""
        if not self.judged or not self.base_judged or self.p >= ALPHA:
            return "no clear difference"
        return "better" if self.passed / self.judged > self.base_passed / self.base_judged else "worse"

    def sentence(self) -> str:
        where = f"on {json.dumps(self.task, ensure_ascii=False)}" if self.task is not None else "over all tasks"
        counts = (
            f"{self.passed}/{self.judged} passed {_interval(self.passed, self.judged)} against "
            f"{self.base_passed}/{self.base_judged} {_interval(self.base_passed, self.base_judged)}"
        )
        if self.verdict == "no clear difference":
            return (
                f"{self.model} {where}: no clear difference between {self.variant} and {self.baseline} "
                f"({counts}; Fisher's exact test {_p(self.p)})"
            )
        return (
            f"{self.model} {where}: {self.variant} is {self.verdict} than {self.baseline} "
            f"({counts}; Fisher's exact test {_p(self.p)})"
        )


def _interval(passes: int, n: int) -> str:
    found = wilson(passes, n)
    return "" if found is None else f"[{_pct(found[0])}–{_pct(found[1])}]"


class VariantComparison:
    """``report.compare_variants()``: for each model, each variant against the baseline over all tasks and on each
    task, by Fisher's exact test on the success counts (errors left out)."""

    def __init__(self, report: EvalReport, baseline: str | None = None) -> None:
        names = report.variants
        if not names:
            raise ValueError("this eval compared no tool variants: run it with variants={...}")
        if baseline is not None and baseline not in names:
            raise ValueError(f"no variant {baseline!r}; the variants: {', '.join(names)}")
        self.baseline = baseline or names[0]
        self.tasks = list(report.task_names)
        self.results: list[VariantResult] = []
        models = sorted({r.model for r in report.runs})
        for model in models:
            for task in [None, *report.task_names]:
                mine = [r for r in report.runs if r.model == model and (task is None or r.task == task)]

                def count(variant: str, runs: list[RunRecord] = mine) -> tuple[int, int]:
                    judged = [r for r in runs if r.variant == variant and r.status != "error"]
                    return sum(r.status == "pass" for r in judged), len(judged)

                base = count(self.baseline)
                for variant in names:
                    if variant != self.baseline:
                        self.results.append(VariantResult(model, task, variant, self.baseline, *count(variant), *base))

    @property
    def overall(self) -> list[VariantResult]:
        """Each variant against the baseline over all tasks, per model."""
        return [r for r in self.results if r.task is None]

    def lines(self) -> list[str]:
        """The comparison in sentences, the clear differences first (over all tasks, then on a task), then over
        all tasks where there is none; each task is said only where a variant made a difference (or, when none
        did, each one)."""
        per_task = [r for r in self.results if r.task is not None]
        if len(self.tasks) == 1:
            return [r.sentence() for r in per_task]  # its one task's counts are the overall ones
        clear = [r for r in [*self.overall, *per_task] if r.verdict != "no clear difference"]
        unclear = [r for r in self.overall if r.verdict == "no clear difference"]
        if not any(r.task is not None for r in clear):
            unclear += per_task
        return [r.sentence() for r in [*clear, *unclear]]

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "results": [
                {
                    "model": r.model, "task": r.task, "variant": r.variant, "passed": r.passed, "judged": r.judged,
                    "baseline_passed": r.base_passed, "baseline_judged": r.base_judged, "p": r.p,
                    "verdict": r.verdict,
                }
                for r in self.results
            ],
        }  # fmt: skip

    def _html(self) -> str:
        sentences = "".join(f"<li>{escape(line)}</li>" for line in self.lines())
        rows = [
            [
                r.model, r.task if r.task is not None else "(all tasks)",
                f"{r.base_passed}/{r.base_judged} {_interval(r.base_passed, r.base_judged)}",
                f"{r.passed}/{r.judged} {_interval(r.passed, r.judged)}", _p(r.p), f"{r.variant}: {r.verdict}",
            ]
            for r in self.results
        ]  # fmt: skip
        headers = ["model", "task", f"{self.baseline} (baseline)", "variant", "Fisher's exact", "verdict"]
        return f"<ul>{sentences}</ul>" + table(headers, rows, nowrap=(2, 3, 4))

    def __str__(self) -> str:
        return visible("\n".join([f"against {self.baseline}:", *(f"  {line}" for line in self.lines())]))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": str(self), "text/html": self._html()}
