"""Judge metrics: registered by name, each declaring the event inputs it needs.

Reference-based metrics (``answer_correctness``, ``answer_correctness_analytic``, ``dece``)
need a turn's ``labels.expected_answer`` / ``labels.required_information`` and are
skipped without one. Importing this package registers the built-in metrics; add your own with
``@register_metric("name")`` on an async callable class (see `monitors.metrics.base`).
"""

from monitors.metrics.base import (
    INPUTS,
    SEVERITY_BANDS,
    JudgeMetric,
    MetricOutcome,
    available_metrics,
    create_metric,
    missing_inputs,
    register_metric,
    severity,
)
from monitors.metrics.bundles import CitationPolicy, MetricBundle, RagTriad
from monitors.metrics.case_aware import CRITERIA, CaseAware, CaseAwareWeights
from monitors.metrics.citations import CitationAccuracy, CitationCoverage
from monitors.metrics.common import TwoPathMetric, distinct_calls
from monitors.metrics.correctness import AnswerCorrectness
from monitors.metrics.correctness_analytic import AnswerCorrectnessAnalytic
from monitors.metrics.dece import DeCE
from monitors.metrics.gates import GATES, GateSettings, Threshold, evaluate_gates, gate_failures
from monitors.metrics.prompts import PromptLimits, available_prompts, load_prompt
from monitors.metrics.source_policy import SourcePolicyUsage
from monitors.metrics.tonality import Tonality
from monitors.metrics.triad import AnswerRelevance, ContextRelevance, Faithfulness

__all__ = [
    "CRITERIA",
    "GATES",
    "INPUTS",
    "SEVERITY_BANDS",
    "AnswerCorrectness",
    "AnswerCorrectnessAnalytic",
    "AnswerRelevance",
    "CaseAware",
    "CaseAwareWeights",
    "CitationAccuracy",
    "CitationCoverage",
    "CitationPolicy",
    "ContextRelevance",
    "DeCE",
    "Faithfulness",
    "GateSettings",
    "JudgeMetric",
    "MetricBundle",
    "MetricOutcome",
    "PromptLimits",
    "RagTriad",
    "SourcePolicyUsage",
    "Threshold",
    "Tonality",
    "TwoPathMetric",
    "available_metrics",
    "available_prompts",
    "create_metric",
    "distinct_calls",
    "evaluate_gates",
    "gate_failures",
    "load_prompt",
    "missing_inputs",
    "register_metric",
    "severity",
]
