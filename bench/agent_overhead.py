"""Agent overhead per step, with a scripted model that answers at once (so no model latency).

Each step of a turn = one model request (openai SDK → scripted server over HTTP on 127.0.0.1) + one tool call
(through the relay and the extension) + the loop's own work. Prints the split and writes JSON.

    .venv/bin/python bench/agent_overhead.py [--steps 50] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import webmcp_nb as wm
from webmcp_nb.demo.run import DEMO_SEARCH
from webmcp_nb.testing import ScriptedServer, call, say


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    n = args.steps

    with wm.serve_demo() as server, wm.launch() as browser:
        tab = browser.open(server.url("flights/"))
        tab.call("searchFlights", DEMO_SEARCH)
        tab.wait_for_tool("listFlights")
        for _ in range(20):
            tab.call("listFlights")  # warm up
        started = time.perf_counter()
        for _ in range(n):
            tab.call("listFlights")
        direct_ms = (time.perf_counter() - started) * 1000 / n

        script = [call("listFlights") for _ in range(n)] + [say("done")]
        with ScriptedServer(script) as model:
            agent = wm.Agent(
                tab, base_url=model.base_url, api_key="bench", model="scripted", max_tool_calls=n, turn_timeout=600
            )
            started = time.perf_counter()
            result = agent.run("List the flights again and again.")
            total_ms = (time.perf_counter() - started) * 1000

        events = result.events
        model_ms = [e.duration_ms for e in events if e.kind == "model.response"]
        tool_ms = [s.duration_ms for s in result.steps]
        per_step = total_ms / n
        report = {
            "steps": n,
            "turn_ms": round(total_ms, 1),
            "per_step_ms": round(per_step, 2),
            "model_request_ms_median": round(statistics.median(model_ms), 2),
            "tool_call_ms_median": round(statistics.median(tool_ms), 2),
            "direct_tab_call_ms_mean": round(direct_ms, 2),
            "loop_overhead_ms_per_step": round(per_step - statistics.mean(model_ms[:-1]) - statistics.mean(tool_ms), 2),
        }
    width = max(len(k) for k in report)
    print("Agent overhead per step (scripted model answering at once)")
    for key, value in report.items():
        print(f"  {key:<{width}}  {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
