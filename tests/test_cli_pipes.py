"""Every command behaves on a closed pipe (`kcel ... | head`) and on Ctrl-C: no traceback, a conventional status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"
KCEL = [sys.executable, "-m", "kcel.cli"]

# One invocation per command that writes to stdout, and each command's help.
COMMANDS = [
    ["eval", "[1, 2, 3].map(x, x * 2)"],
    ["parse", "a.b + 1"],
    ["check", str(EXAMPLES)],
    ["validate", "--crd", str(EXAMPLES / "widget-crd.yaml"), str(EXAMPLES / "widget.yaml")],
    ["test", str(EXAMPLES)],
    ["admit", "--policy", str(EXAMPLES / "admission"), str(EXAMPLES / "deployment.yaml")],
    ["--help"],
    *([name, "--help"] for name in ("eval", "parse", "check", "validate", "admit", "match-webhooks",
                                    "select-devices", "authenticate", "authorize", "test", "serve", "repl")),
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_a_closed_pipe_ends_the_command_quietly(command: list[str]) -> None:
    """The reader is gone before anything is written: the first write fails (EPIPE), and kcel stops with 141, as a
    process killed by SIGPIPE, without a traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*KCEL, *command], stdout=write, stderr=subprocess.PIPE, timeout=120, check=False)
    finally:
        os.close(write)
    stderr = done.stderr.decode()
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    # argparse writes help itself and ignores a failed write: then the command ends as it would have
    assert done.returncode == (0 if "--help" in command else 141), stderr


@pytest.mark.parametrize("command", [["check", "-"], ["validate", "--crd", str(EXAMPLES / "widget-crd.yaml"), "-"]])
def test_ctrl_c_ends_the_command_with_130(command: list[str]) -> None:
    """SIGINT while the command waits for its standard input: status 130, no traceback."""
    process = subprocess.Popen([*KCEL, *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=_interruptible)  # fmt: skip
    _wait_until_reading(process.pid)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert "Traceback" not in stderr.decode(), stderr.decode()
    assert process.returncode == 130, stderr.decode()


@pytest.mark.parametrize(
    "command",
    [["check", "-"], ["validate", "--crd", str(EXAMPLES / "widget-crd.yaml"), "-"], ["admit", "--policy",
     str(EXAMPLES / "admission" / "policies"), "-"]],
)  # fmt: skip
def test_standard_input_is_a_file_named_dash(command: list[str]) -> None:
    """`helm template . | kcel validate --crd crds/ -`: the documents come from standard input, named `-`."""
    text = (EXAMPLES / ("widget-crd.yaml" if command[0] == "check" else "widget.yaml")).read_text(encoding="utf-8")
    if command[0] == "admit":
        text = (EXAMPLES / "deployment.yaml").read_text(encoding="utf-8")
    done = subprocess.run([*KCEL, *command], input=text.encode(), capture_output=True, timeout=120, check=False)
    output = done.stdout.decode() + done.stderr.decode()
    assert "no such file" not in output and "Traceback" not in output, output
    assert done.returncode in (0, 1), output
    if command[0] != "check":
        assert output.startswith("-: document 0"), output


def _wait_until_reading(pid: int) -> None:
    """Until the process blocks reading its standard input (Linux tells by /proc/PID/wchan), so that the signal
    comes while it waits, not while it is still importing on a busy machine; elsewhere, two seconds."""
    wchan = Path(f"/proc/{pid}/wchan")
    if not wchan.exists():
        time.sleep(2)
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if "pipe" in wchan.read_text(errors="replace"):
            time.sleep(0.2)  # and still there a moment later
            if "pipe" in wchan.read_text(errors="replace"):
                return
        time.sleep(0.05)


@pytest.mark.parametrize("delay", [0, 0.005, 0.02, 0.1])
def test_ctrl_c_while_the_command_starts_ends_it_quietly(delay: float) -> None:
    """A Ctrl-C while kcel imports its engine: 130, no traceback. The clock starts once the package's first import,
    kcel.interrupts, is done (Python's -X importtime reports it): before that, Python itself is starting, and any
    Python program interrupted there prints a traceback."""
    process = subprocess.Popen([sys.executable, "-X", "importtime", *KCEL[1:], "check", "-"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_interruptible)  # fmt: skip
    assert process.stderr is not None
    watchdog = threading.Timer(60, process.kill)  # never a hang, whatever the child does
    watchdog.start()
    try:
        seen = b""
        while not seen or seen.splitlines()[-1].split(b"|")[-1].strip() != b"kcel.interrupts":
            line = process.stderr.readline()
            assert line, seen.decode()
            seen += line
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        watchdog.cancel()
    assert "Traceback" not in stderr.decode(), stderr.decode()
    # 130, or ended by the signal itself (a shell reports that as 130 too): seen about once in 40 runs at 0.1 s,
    # with nothing on stderr, in an interpreter whose SIGINT disposition was the default at that instant (the cause
    # is not found yet: strace's slower timing hides it)
    assert process.returncode in (130, -signal.SIGINT)


def _interruptible() -> None:
    """In the child: Ctrl-C as a terminal delivers it, even when this test runs where SIGINT is ignored (a shell's
    background job), which the child would inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
