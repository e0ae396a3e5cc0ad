"""llama-cpp-python's OpenAI-compatible server, started with the model loaded without llama.cpp's
extra buffer types. Run by the interpreter of the venv scripts/local_model.sh builds (not the
project's venv: it imports only llama_cpp and uvicorn).

    python scripts/llama_server.py --model FILE.gguf --port N [--threads N] [--ctx N]

Why not ``python -m llama_cpp.server``: on some CPUs that report AMX (``AMX_INT8 = 1`` in
llama.cpp's start-up line) the AMX instructions fault, and ggml's AMX kernels, reached through the
extra buffer types used for weight repacking, kill the server with a general-protection fault at
``ldtilecfg``. Loading with ``use_extra_bufts = False`` avoids them; llama-cpp-python 0.3.36 has no
setting for it, so the default model params are patched here before the model loads. Leaving the
repacked layouts out costs little on a model this small.
"""
from __future__ import annotations

import argparse
import os

import llama_cpp.llama_cpp as llama_cpp_lib


def _without_extra_buffer_types():
    default_params = llama_cpp_lib.llama_model_default_params

    def params():
        p = default_params()
        p.use_extra_bufts = False
        return p

    # llama_cpp.llama.Llama reads the function from this module at load time
    llama_cpp_lib.llama_model_default_params = params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ctx", type=int, default=4096, help="context size in tokens (prompt + reply)")
    opts = parser.parse_args()
    _without_extra_buffer_types()

    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    # the model answers to its file's name (it answers any name a request gives, too)
    alias = os.path.basename(opts.model).split(".")[0]
    model = ModelSettings(model=opts.model, model_alias=alias, n_ctx=opts.ctx, n_threads=opts.threads,
                          n_threads_batch=opts.threads, verbose=False)
    server = ServerSettings(host="127.0.0.1", port=opts.port)
    app = create_app(server_settings=server, model_settings=[model])
    uvicorn.run(app, host="127.0.0.1", port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
