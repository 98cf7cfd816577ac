"""The event contract every package shares; the leaf layer (it imports nothing of ours, and
of third-party packages only pydantic, msgspec and numpy (the event parser's nesting-depth
scan); process-level policies such as retries
and heap tuning are in `stream.platform`).

- :mod:`stream.contract.events`: the RAG interaction event and its parsing (fast and careful
  paths, the exact reason for every rejection); the models live in
  :mod:`stream.contract.schema`, the fast path (msgspec decode, then pydantic-core
  validation of the same schema) in :mod:`stream.contract.fastparse`;
- :mod:`stream.contract.errors`: `RagpulseError`, the root of every error raised on purpose;
- :mod:`stream.contract.registry`: the one name -> factory registry behind every extension
  point (detectors, judge metrics, judges, drift detectors);
- :mod:`stream.contract.sections`: `Section` (a settings block) and `Component`
  (``{type: name, ...options}``), the two shapes every settings section is made of;
- :mod:`stream.contract.scales`: severity bands and gate tiers;
- :mod:`stream.contract.failure_modes`: the failure modes a scorecard can name;
- :mod:`stream.contract.reference`: the reference (expected answer, required
  information) a golden or labelled turn carries in `labels`.
"""

from stream.contract.errors import RagpulseError
from stream.contract.events import Event, EventLimits, InvalidEvent, parse_event
from stream.contract.failure_modes import FAILURE_MODES
from stream.contract.reference import REFERENCE_FIELDS, Reference, reference_of
from stream.contract.registry import Registry
from stream.contract.scales import GATES, SEVERITY_BANDS, severity
from stream.contract.sections import Component, ComponentSpec, Section

__all__ = [
    "FAILURE_MODES",
    "GATES",
    "REFERENCE_FIELDS",
    "SEVERITY_BANDS",
    "Component",
    "ComponentSpec",
    "Event",
    "EventLimits",
    "InvalidEvent",
    "RagpulseError",
    "Reference",
    "Registry",
    "Section",
    "parse_event",
    "reference_of",
    "severity",
]
