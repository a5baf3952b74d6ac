"""learnability: which functions can a transformer learn, and why.

Boolean analysis (`learnability.boolean`), instrumented transformers (`learnability.models`), tasks,
one training engine (`learnability.train`), measurements (`learnability.measure`), sweeps with a
crash-safe store (`learnability.sweep`), reports (`learnability.report`) and the four paper studies
(`learnability.studies`). See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

__version__ = "0.1.0"
