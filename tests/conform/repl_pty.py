#!/usr/bin/env python3
"""Drives `acp-cli repl` in a pseudo-terminal for `acp-cli conform --client`, as a person would.

    acp-cli conform --client -- python3 tests/conform/repl_pty.py -- acp-cli repl -- {agent}

The REPL is interactive, so a person's part is played here: at the first prompt `hi` is
typed; a permission question is answered with `3` (reject once); the suite's ask_user
question ("Conform: your name?") gets `conform`; once the turn is over (finished, failed or
cancelled, or no agent) and the prompt is back, Ctrl-U Ctrl-D leaves the REPL. SIGINT (the
suite's Ctrl-C) is typed as Ctrl-C. The screen goes to stdout (and is appended to
$REPL_PTY_LOG when set); the exit status is the REPL's.

Ctrl-D is typed at the prompt, as a person does, not as soon as the turn's end shows: until
the line editor has put the terminal in raw mode, the terminal's own line discipline takes
Ctrl-D as end-of-file, which becomes a NUL byte once raw mode starts, so the REPL would never
see it (and keep running) whenever it was slower than this driver.
"""
import os
import pty
import select
import signal
import sys

argv = sys.argv[sys.argv.index("--") + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)


def type_keys(text):
    try:
        os.write(fd, text.encode())
    except OSError:
        pass


signal.signal(signal.SIGINT, lambda *_: type_keys("\x03"))

screen = b""
typed = False
answered = {b"Permission request from": 0, b"Conform: your name?": 0}
done = False
# Where the turn's end showed on the screen (None: not yet).
ended = None
TURN_ENDS = (
    b"turn finished (",
    b"Prompt failed:",
    b"Cancelled prompt",
    b"Main agent unavailable:",
    b"Send failed:",
)
PROMPT = b"> "
while True:
    try:
        ready, _, _ = select.select([fd], [], [], 0.2)
    except InterruptedError:
        continue
    if not ready:
        continue
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()
    if os.environ.get("REPL_PTY_LOG"):
        with open(os.environ["REPL_PTY_LOG"], "ab") as log:
            log.write(chunk)
    screen += chunk
    if not typed and PROMPT in screen:
        typed = True
        type_keys("hi\r")
    for marker, seen in answered.items():
        count = screen.count(marker)
        if count > seen:
            answered[marker] = count
            type_keys("3" if marker.startswith(b"Permission") else "conform\r")
    if ended is None:
        found = [screen.find(end) for end in TURN_ENDS if end in screen]
        if found:
            ended = min(found)
    # The prompt drawn after the turn's end: the line editor reads keys now.
    if not done and ended is not None and PROMPT in screen[ended:]:
        done = True
        # Ctrl-U first: a key typed for a question already withdrawn may sit on the line.
        type_keys("\x15\x04")
    # Keep only what a marker could still straddle: counts are of the whole screen.
    if len(screen) > (1 << 22):
        cut = len(screen) - (1 << 16)
        screen = screen[cut:]
        if ended is not None:
            ended = max(ended - cut, 0)
        answered = {k: screen.count(k) for k in answered}

_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
