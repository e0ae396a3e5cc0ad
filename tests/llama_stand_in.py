"""scripts/llama_server.py's stand-in for the scripts' tests: the project's OpenAI-compatible test
server, answering any model name on the port it is given, as llama.cpp's server does, until it is
terminated. Run as ``python tests/llama_stand_in.py scripts/llama_server.py --model F --port N ...``
(the real script's path stays on the command line, where ``local_model.sh`` looks for its server)."""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_server import OpenAIServer  # noqa: E402
from policies import scripted  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("script")  # scripts/llama_server.py, which this stands in for
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    server = OpenAIServer(scripted, models=(Path(args.model).stem,), latency_s=args.latency).start(args.port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        signal.pause()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
