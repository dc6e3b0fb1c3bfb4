"""`kozyr play` at a real terminal: the command runs in a detached tmux session (its own
server socket, 120×40) against the table, matchmaking and bots processes; the test
reads the screen (`capture-pane`) and presses keys like a person at the keyboard of one
3-5-8 seat, two computer seats beside, until the whole game of 18 deals is over. The
final screen shows the game over with the places and points, and the table's log, as
`kozyr verify` reads it, says the game is over and everything holds.

Needs tmux (/usr/bin/tmux); skipped where there is none.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.moderation import kozyr_cli
from tests.e2e.play.conftest import PlayStack
from tests.support.tables import token

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

WIDTH, HEIGHT = 120, 40
START_SECONDS = 60.0
GAME_SECONDS = 480.0
"""A whole 3-5-8 game: ~300 moves at the keyboard and ~600 by the computers."""
RESEND_SECONDS = 15.0
"""The same turn still shown this long after Enter: press it again (a lost key)."""

YOUR_TURN = re.compile(r"YOUR TURN · .* · Turn (\d+)")
TABLE_ID = re.compile(r"Table ([0-9a-f-]{36}) ")


class Terminal:
    """A detached tmux session on a server socket of its own (`tmux -L`)."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.socket = f"kozyr-play-{uuid.uuid4().hex[:12]}"
        self.command = command
        self.cwd = cwd
        self.socket_path: Path | None = None

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def start(self) -> None:
        # LINES/COLUMNS of the test's own environment would override the pane's size
        shell = " ".join(
            shlex.quote(part) for part in ["env", "-u", "LINES", "-u", "COLUMNS", *self.command]
        )
        self._tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "play",
            "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(self.cwd),
            f"{shell}; echo EXITED $?; sleep 600",
        )  # fmt: skip
        self.socket_path = Path(self._tmux("display", "-p", "#{socket_path}").strip())

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "play")

    def press(self, key: str) -> None:
        self._tmux("send-keys", "-t", "play", key)

    def close(self) -> None:
        """Stop the server and remove its socket file (tmux leaves it behind)."""
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        if self.socket_path is not None:
            self.socket_path.unlink(missing_ok=True)


async def _until_screen(terminal: Terminal, pattern: re.Pattern[str], seconds: float) -> str:
    async with asyncio.timeout(seconds):
        while True:
            screen = terminal.screen()
            if pattern.search(screen):
                return screen
            assert "EXITED" not in screen, screen
            await asyncio.sleep(0.1)


async def test_a_whole_3_5_8_game_at_the_keyboard_against_two_computers(
    play_stack: PlayStack, tmp_path: Path
) -> None:
    ends = play_stack.endpoints("ana")
    command = [
        sys.executable, "-m", "kozyr.cli.main", "play",
        "--game", "358", "--private", "--computers", "easy", "--lang", "en",
        "--token", token("ana"),
        "--table-target", ends.table, "--matchmaking-target", ends.matchmaking,
        "--bots-target", ends.bots, "--clock-target", "none",
    ]  # fmt: skip
    terminal = Terminal(command, tmp_path)
    terminal.start()
    try:
        screen = await _until_screen(terminal, YOUR_TURN, START_SECONDS)
        (tmp_path / "first-screen.txt").write_text(screen)
        found = TABLE_ID.search(screen)
        assert found, screen
        table_id = found.group(1)
        # no clock here: nobody records her presence, so the screen says so
        assert "ana (you) [person · not seen yet]" in screen
        assert screen.count("[computer easy · online]") == 2

        moves = await _play_until_over(terminal)

        final = terminal.screen()
        (tmp_path / "final-screen.txt").write_text(final)  # kept with a failed run's files
        assert "GAME OVER" in final, final
        places = re.findall(r"(\d)\. place: (.+?) — (-?\d+) points", final)
        assert len(places) == 3, final
        assert {name for _, name, _ in places} == {"ana (you)", "computer 1", "computer 2"}
        assert sum(int(points) for _, _, points in places) == 0  # 3-5-8 is zero-sum
        assert moves > 100
    finally:
        terminal.close()
    verified = await kozyr_cli(play_stack.mm.table.database_url, "verify", table_id, "--json")
    report = verified.json()
    assert report["ok"] is True, report
    assert report["over"] is True


async def _play_until_over(terminal: Terminal) -> int:
    """Press Enter at every new turn of ours (the screen starts each turn on a legal
    move) until the screen says the game is over; returns the moves made."""
    moves, last_turn, pressed_at = 0, -1, 0.0
    async with asyncio.timeout(GAME_SECONDS):
        while True:
            screen = terminal.screen()
            if "GAME OVER" in screen:
                return moves
            assert "EXITED" not in screen, screen
            mine = YOUR_TURN.search(screen)
            if mine:
                turn = int(mine.group(1))
                stuck = turn == last_turn and time.monotonic() - pressed_at > RESEND_SECONDS
                if turn != last_turn or stuck:
                    terminal.press("Enter")
                    moves += turn != last_turn
                    last_turn, pressed_at = turn, time.monotonic()
            await asyncio.sleep(0.05)
