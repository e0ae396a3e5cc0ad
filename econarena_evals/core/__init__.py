"""The plain data every layer shares, and pure functions over it.

Sessions, cells and seats (``sessions``), a scored run (``outcome``), what a prompt states and how
it is read back (``prompts``), reading a seat's answer (``answers``), the depth-of-reasoning fit
(``depth``), the published reference figures (``references``), one spelling per arg value
(``argvalues``), the command-line options' domains (``option_domains``) and keeping secrets out of what is printed (``redact``).

Rule: nothing here imports evals, a network client, or any other folder of this package; nothing
here names a game. A game's own rules live in ``games/``.
"""
