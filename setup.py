"""Packaging for econarena-evals.

Two things here are not ordinary setuptools boilerplate:

* ``registry/`` lives at the top of the repository (the layout evals users know), and is
  copied into the wheel as ``econarena_evals/registry`` so an installed package carries it.
* ``econarena_evals_registry.pth`` is placed at the root of site-packages. evals has no plugin
  discovery; the .pth line runs a tiny hook at interpreter start-up that appends our registry
  to ``evals.registry.DEFAULT_PATHS`` when (and only when) evals is imported. That is what makes
  ``oaieval econarena/nash econarena.beauty_L`` work without ``--registry_path``.
"""
import os
import shutil

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PTH_NAME = "econarena_evals_registry.pth"
PTH_LINE = "import econarena_evals_hook; econarena_evals_hook.install()\n"


class build_py_with_registry(build_py):
    def run(self):
        super().run()
        with open(os.path.join(self.build_lib, PTH_NAME), "w", encoding="utf-8") as f:
            f.write(PTH_LINE)
        if not getattr(self, "editable_mode", False):
            dst = os.path.join(self.build_lib, "econarena_evals", "registry")
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(os.path.join(HERE, "registry"), dst)

    def get_outputs(self, *args, **kwargs):
        return super().get_outputs(*args, **kwargs) + [os.path.join(self.build_lib, PTH_NAME)]

    def get_output_mapping(self):
        mapping = super().get_output_mapping()
        mapping[os.path.join(self.build_lib, PTH_NAME)] = os.path.join(HERE, PTH_NAME)
        return mapping


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
    cmdclass={"build_py": build_py_with_registry},
    install_requires=LEAN_RUNTIME,
    extras_require={
        "evals": ["evals==3.0.1.post1"],
        # markdown-it-py: the CommonMark renderer the report.md escaping test renders with
        "test": ["pytest>=7", "hypothesis>=6", "pytest-xdist>=3", "markdown-it-py>=3", "ruff>=0.5"],
        "report": ["matplotlib>=3.5"],
    },
    entry_points={
        "console_scripts": [
            "econarena-summary=econarena_evals.report.summary:main",
            "econarena-report=econarena_evals.report.build:main",
            "econarena-plan=econarena_evals.run.plan:main",
        ]
    },
)
