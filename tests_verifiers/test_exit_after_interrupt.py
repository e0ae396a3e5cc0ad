"""vf-eval ends after an interrupt even when its loop ended before anyio's root task: the plugin asks
anyio's worker threads to stop as Python exits (``plugin.stop_anyio_workers``). Without it, a vf-eval
sent SIGTERM as rollouts started stayed idle in ``threading._shutdown`` for ever, waiting on them."""
from __future__ import annotations

import subprocess
import sys

# vf-eval's interrupt, as its handler makes it: a KeyboardInterrupt raised inside the loop, which ends the
# loop with its root task done but the root task's callbacks (anyio's stop of its worker threads) never run
ABANDONED = """
import asyncio, sys
import anyio.to_thread
if sys.argv[1] == "plugin":
    import econarena_evals.on_verifiers.plugin  # noqa: F401  (what vf-eval econarena_evals imports)

async def main():
    await anyio.to_thread.run_sync(lambda: None)  # a worker thread, idle from here on
    raise KeyboardInterrupt

loop = asyncio.new_event_loop()
try:
    loop.run_until_complete(main())
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def ended(*args: str, timeout: float) -> bool:
    proc = subprocess.Popen([sys.executable, "-c", ABANDONED, *args], stdout=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False
    finally:
        said = proc.stdout.read() if proc.stdout else ""
        if proc.stdout:
            proc.stdout.close()
    assert "interrupted" in said and proc.returncode == 0, (said, proc.returncode)
    return True


def test_the_plugin_lets_python_exit_after_an_interrupt_that_left_anyio_workers():
    assert ended("plugin", timeout=120)


def test_without_it_anyio_workers_keep_python_from_exiting():
    """The case the plugin mends, as anyio 4 has it: if this one ends, anyio stops its workers itself
    and ``stop_anyio_workers`` can go."""
    assert not ended("bare", timeout=10)
