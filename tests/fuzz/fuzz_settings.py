"""Settings of the fuzz suite (tests/fuzz): hypothesis drives hostile producers into
every public entry point.

Each example ends in a value that matches a Python oracle (NumPy computing the same thing)
or in a clean exception of an allowed type.  The normal run executes every fuzz test with a
small budget; ``DFBUFFER_FUZZ_EXAMPLES=N`` runs N examples per test instead (and
``DFBUFFER_FUZZ_SEED=S`` fixes hypothesis' seed to replay a CI run).  See
docs/requirements.md, "Fuzzing".
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("DFBUFFER_FUZZ_EXAMPLES", "15"))

settings.register_profile(
    "dfbuffer-fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
    # the producers print nothing; a failing example is replayed with its full repr
    print_blob=True,
    report_multiple_bugs=False,
)
if os.environ.get("DFBUFFER_FUZZ_SHRINK") == "0":  # while iterating on a strategy
    from hypothesis import Phase

    settings.register_profile(
        "dfbuffer-fuzz", settings.get_profile("dfbuffer-fuzz"),
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
FUZZ = settings.get_profile("dfbuffer-fuzz")
if os.environ.get("DFBUFFER_FUZZ_SEED"):
    from hypothesis import seed as _seed

    FUZZ_SEED = _seed(int(os.environ["DFBUFFER_FUZZ_SEED"]))
else:

    def FUZZ_SEED(f):  # noqa: N802 - a decorator, like hypothesis.seed(...)
        return f

