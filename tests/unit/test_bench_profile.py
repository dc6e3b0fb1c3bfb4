"""The bench's service profile reads the main thread, and says how much of the CPU that is.

py-spy counts grpc's poller thread busy whenever it waits in grpc's native completion
queue: 15 % of the samples, while /proc showed all threads but the main one spending
4–14 % of the CPU together; a profile that mixed those samples in charged a move's CPU
to a thread that was mostly waiting (docs/benchmarks.md, issue 25).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.bench_table import hotspots, main_thread_share, thread_cpu_seconds

BURNER = """
import sys, threading, time
def burn():
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
where = sys.argv[1]
if where == "thread":
    threading.Thread(target=burn).start()
    time.sleep(3)
else:
    threading.Thread(target=time.sleep, args=(3,)).start()
    burn()
    time.sleep(3)
"""


@pytest.mark.parametrize(("where", "main_burns"), [("main", True), ("thread", False)])
def test_the_main_threads_share_is_read_per_thread_from_proc(where: str, main_burns: bool) -> None:
    process = subprocess.Popen([sys.executable, "-c", BURNER, where])
    try:
        time.sleep(0.1)  # both threads started
        before = thread_cpu_seconds(process.pid)
        assert process.pid in before  # the main thread's id is the pid
        time.sleep(0.5)  # the burner spent (some of) its 0.3 s of CPU
        share = main_thread_share(process.pid, before, thread_cpu_seconds(process.pid))
    finally:
        process.kill()
        process.wait()
    assert (share > 0.8) if main_burns else (share < 0.2)


def test_the_profile_leaves_other_threads_samples_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    collapsed = tmp_path / "stacks.txt"
    main = "_run_module_as_main (<frozen runpy>:198);run (a/loop.py:3);move (table/app.py:9)"
    poller = "Thread._bootstrap (threading.py:995);Thread.run (threading.py:975)"
    collapsed.write_text(f"{main} 30\n{poller} 70\n")

    hotspots(collapsed, main_share=0.96, top=5)

    out = capsys.readouterr().out
    assert "30 busy samples of the main thread" in out
    assert "96 % of the process's CPU" in out
    assert "70 samples of other threads left out" in out
    assert "100.0%  move (table/app.py)" in out
    assert "Thread.run" not in out
