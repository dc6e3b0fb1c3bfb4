"""What a `kozyr` command and a container health probe cost: wall and CPU seconds.

    .venv/bin/python tests/bench/bench_cli.py [--runs 10] [--before DIR]

Runs `kozyr --help`, `kozyr token ana`, `kozyr health` and the containers' probe
`python -m kozyr.health` as processes, each `--runs` times, against a gRPC health
server in this process, and prints the median and best wall time and CPU time (user +
system of the process). Issue 23's targets: a probe ≲ 0.2 CPU-s; `--help`, `token`
and `health` ≤ 0.5 s wall on the 2-core development machine.

`--before DIR` also runs the same commands with the code of another commit —
`git archive <commit> libs services | tar -x -C DIR`, plus this checkout's generated
`libs/kozyr/api` copied into DIR/libs/kozyr (its probe was `kozyr health`) — first on
PYTHONPATH, interleaved run by run with this checkout's, so that both see one load.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.support.health import serving_health_port

BIN = Path(sys.executable).parent
KEY = "a-bench-secret-of-more-than-thirty-two-bytes-0123456789"


def commands(before: bool) -> dict[str, list[str]]:
    kozyr = str(BIN / "kozyr")
    probe = [kozyr, "health"] if before else [sys.executable, "-m", "kozyr.health"]
    return {
        "kozyr --help": [kozyr, "--help"],
        "kozyr token ana": [kozyr, "token", "ana"],
        "kozyr health": [kozyr, "health"],
        "container probe": probe,
    }


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd="/", capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{command} failed: {done.stderr.decode()[-400:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def report(name: str, label: str, runs: list[tuple[float, float]]) -> None:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    print(
        f"{name:<16} {label:<6} wall {statistics.median(walls):.2f} s"
        f" (best {min(walls):.2f})   CPU {statistics.median(cpus):.2f} s (best {min(cpus):.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--before", type=Path, help="another commit's libs and services")
    args = parser.parse_args()

    with serving_health_port() as port:
        measure(args.runs, args.before, port)


def measure(runs_each: int, before: Path | None, port: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    env.pop("PYTHONPATH", None)
    env.update(KOZYR_JWT_KEY=KEY, KOZYR_GRPC_PORT=str(port))
    setups = {"after": (commands(before=False), env)}
    if before is not None:
        path = f"{before / 'libs'}:{before / 'services'}"
        setups = {"before": (commands(before=True), {**env, "PYTHONPATH": path}), **setups}
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, {runs_each} runs")
    for name in commands(before=False):
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label in setups}
        for _ in range(runs_each):
            for label, (cmds, setup_env) in setups.items():
                runs[label].append(run_once(cmds[name], setup_env))
        for label, measured in runs.items():
            report(name, label, measured)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
