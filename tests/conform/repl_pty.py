#!/usr/bin/env python3
"""Drives `acp-cli repl` in a pseudo-terminal for `acp-cli conform --client`, as a person would.

    acp-cli conform --client -- python3 tests/conform/repl_pty.py -- acp-cli repl -- {agent}

The REPL is interactive, so a person's part is played here: at the first prompt `hi` is
typed; a permission question is answered with `3` (reject once); the suite's ask_user
question ("Conform: your name?") gets `conform`; once the turn is over (finished, failed or
cancelled, or no agent) and the prompt is back, Ctrl-U Ctrl-D leaves the REPL. SIGINT (the
suite's Ctrl-C: stop the turn) is typed as Ctrl-C; when that Ctrl-C met a permission
question on screen, which it only rejects (`Rejected (cancelled)`), Ctrl-C is pressed once
more to stop the turn. The screen goes to stdout (and is appended to $REPL_PTY_LOG when
set); the exit status is the REPL's.

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


# The suite's SIGINT is a person pressing Ctrl-C to stop the turn.
interrupted = False


def on_sigint(*_):
    global interrupted
    interrupted = True
    type_keys("\x03")


signal.signal(signal.SIGINT, on_sigint)

PROMPT = b"> "
# Ctrl-C with a permission question on screen rejects the question (R-HOST-12), not the turn.
REJECTED_BY_CTRL_C = b"Rejected (cancelled)"
PERMISSION = b"Permission request from"
ASK = b"Conform: your name?"
TURN_ENDS = (
    b"turn finished (",
    b"Prompt failed:",
    b"Cancelled prompt",
    b"Main agent unavailable:",
    b"Send failed:",
)

# Only what came since the last read is searched (a 1 MiB answer arrives in thousands of
# reads), with the previous read's last bytes in front, for a marker cut between two reads.
KEEP = max(len(m) for m in (PROMPT, PERMISSION, ASK, REJECTED_BY_CTRL_C) + TURN_ENDS) - 1
tail = b""
typed = False
# What the screen showed after the turn's end (None: the turn is not over yet).
after_end = None
done = False
pressed_again = False


def fresh(window, marker):
    """The part of `window` where `marker` may be found that was not searched before."""
    return window[max(0, len(tail) - (len(marker) - 1)):]


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
    window = tail + chunk
    if not typed and PROMPT in fresh(window, PROMPT):
        typed = True
        type_keys("hi\r")
    for _ in range(fresh(window, PERMISSION).count(PERMISSION)):
        type_keys("3")
    for _ in range(fresh(window, ASK).count(ASK)):
        type_keys("conform\r")
    # A person whose Ctrl-C only rejected the question presses it again to stop the turn.
    if (
        interrupted
        and not pressed_again
        and after_end is None
        and REJECTED_BY_CTRL_C in fresh(window, REJECTED_BY_CTRL_C)
    ):
        pressed_again = True
        type_keys("\x03")
    if after_end is None:
        for end in TURN_ENDS:
            seen = fresh(window, end)
            at = seen.find(end)
            if at >= 0:
                after_end = seen[at + len(end):]
                break
    else:
        after_end = after_end[-(len(PROMPT) - 1):] + chunk
    # The prompt drawn after the turn's end: the line editor reads keys now.
    if not done and after_end is not None and PROMPT in after_end:
        done = True
        # Ctrl-U first: a key typed for a question already withdrawn may sit on the line.
        type_keys("\x15\x04")
    tail = window[-KEEP:]

_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
