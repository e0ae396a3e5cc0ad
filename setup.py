"""Packaging for econarena-evals.

Two things here are not ordinary setuptools boilerplate:

* ``registry/`` lives at the top of the repository (the layout evals users know), and is
  copied into the wheel as ``econarena_evals/registry`` so an installed package carries it.
* ``econarena_evals_registry.pth`` is placed at the root of site-packages, by ``pip install .``
  (``build_py``) and ``pip install -e .`` (``editable_wheel``) alike. evals has no plugin
  discovery; the .pth line runs a tiny hook at interpreter start-up that patches evals when (and
  only when) ``evals.registry`` is imported. That is what makes ``oaieval econarena/nash
  econarena.beauty_L`` work without ``--registry_path``, and the exit statuses apply.
"""
import os
import shutil

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.editable_wheel import editable_wheel
except ImportError:  # setuptools < 64 has no PEP 660 editable wheels
    editable_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
PTH_NAME = "econarena_evals_registry.pth"
PTH_LINE = "import econarena_evals_hook; econarena_evals_hook.install()\n"


class build_py_with_registry(build_py):
    """The regular build: the .pth line and a copy of the registry go into the wheel. An editable
    build reads the checkout's ``registry/`` in place, and gets its .pth line from
    ``editable_wheel_with_hook`` (an editable wheel carries none of build_lib's files)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        with open(os.path.join(self.build_lib, PTH_NAME), "w", encoding="utf-8") as f:
            f.write(PTH_LINE)
        dst = os.path.join(self.build_lib, "econarena_evals", "registry")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(HERE, "registry"), dst)

    def get_outputs(self, *args, **kwargs):
        extra = [] if getattr(self, "editable_mode", False) else [os.path.join(self.build_lib, PTH_NAME)]
        return super().get_outputs(*args, **kwargs) + extra


class _WithStartUpLine:
    """An editable-wheel strategy that also writes the .pth line at the wheel's root (site-packages
    once installed). Its name sorts after setuptools' ``__editable__.*.pth``, which site runs first,
    so the hook module is importable from the checkout when the line runs."""

    def __init__(self, strategy):
        self.strategy = strategy

    def __call__(self, wheel, files, mapping):
        self.strategy(wheel, files, mapping)
        wheel.writestr(PTH_NAME, PTH_LINE.encode("utf-8"))

    def __enter__(self):
        self.strategy.__enter__()
        return self

    def __exit__(self, *exc_info):
        return self.strategy.__exit__(*exc_info)


CMDCLASS = {"build_py": build_py_with_registry}
if editable_wheel is not None:

    class editable_wheel_with_hook(editable_wheel):
        """``pip install -e .``: the same start-up line as a regular install (PEP 660 wheels are
        built by setuptools' own strategies, which carry only the package's path or finder)."""

        def _select_strategy(self, *args, **kwargs):
            return _WithStartUpLine(super()._select_strategy(*args, **kwargs))

    CMDCLASS["editable_wheel"] = editable_wheel_with_hook


LEAN_RUNTIME = [
    # What evals 3.0.1.post1 needs to run a custom eval, without its 4.3 GB of optional
    # dependencies (see README, "What gets installed"). evals itself is installed with --no-deps.
    "openai>=1.0",
    "pyyaml>=6",
    "numpy",
    "tqdm",
    "backoff",
    "tiktoken",
    "blobfile",
    "termcolor",
    "lz4",
    "zstandard",
]
# Ours: the logs' reader (``log.jsonl``) decodes with orjson, about twice as fast as json, for the
# report tools that read hundreds of logs (json stays the fallback).
OWN_RUNTIME = ["orjson>=3.9"]

setup(
    name="econarena-evals",
    version="0.1.0",
    description="EconArena (Guo et al. 2024) games as an OpenAI Evals plugin",
    long_description=open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    if os.path.exists(os.path.join(HERE, "README.md"))
    else "",
    long_description_content_type="text/markdown",
    license="MIT",
    # The Pythons set up and tested (scripts/setup.sh refuses others; constraints.txt pins each).
    python_requires=">=3.9, <3.14",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
    ]
    + [f"Programming Language :: Python :: 3.{minor}" for minor in range(9, 14)],
    packages=find_packages(include=["econarena_evals", "econarena_evals.*"]),
    py_modules=["econarena_evals_hook"],
    package_data={"econarena_evals.core": ["references.json"],
                  "econarena_evals.report": ["static/*.css", "static/*.js"]},  # report.html's style and script
    cmdclass=CMDCLASS,
    install_requires=LEAN_RUNTIME + OWN_RUNTIME,
    extras_require={
        "evals": ["evals==3.0.1.post1"],
        # markdown-it-py: the CommonMark renderer the report.md escaping test renders with
        "test": ["pytest>=7", "hypothesis>=6", "pytest-xdist>=3", "pytest-randomly>=3.16", "markdown-it-py>=3", "ruff>=0.5",
                 # the exact search that proves which tournament shapes have no balanced schedule
                 "python-sat==1.9.dev24"],
        "report": ["matplotlib>=3.5"],
        # the inspect_ai front end (docs/inspect.md): inspect eval econarena_evals/<cell>; no evals needed
        "inspect": ['inspect-ai==0.3.285; python_version >= "3.10"'],
        # the verifiers front end (docs/verifiers.md): vf-eval econarena_evals; no evals (its openai<3
        # pin cannot share a venv with evals' openai 3.x)
        "verifiers": ['verifiers==0.4.0; python_version >= "3.11"'],
    },
    entry_points={
        "console_scripts": [
            "econarena-summary=econarena_evals.report.summary:main",
            "econarena-report=econarena_evals.report.build:main",
            "econarena-plan=econarena_evals.run.plan:main",
            "econarena-run=econarena_evals.run.run_set:main",
            "econarena-senior=econarena_evals.run.senior:main",
            "econarena-roster=econarena_evals.fns.roster:main",
            # a built-in player as a local OpenAI-compatible endpoint (any harness; vf-eval's --client.base-url)
            "econarena-serve=econarena_evals.on_verifiers.serve:main",
        ],
        # inspect_ai loads this module before it resolves --model or a task name: the econarena/...
        # models and the econarena_evals/<cell> tasks (only inspect_ai ever loads it)
        "inspect_ai": ["econarena_evals = econarena_evals.on_inspect.entry"],
    },
)
