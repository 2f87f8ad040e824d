"""Results counted as they come, so that memory stays flat in the number of objects: per policy, rule and
operation, the count of each outcome and the first few examples; and, when PolicyReports are wanted, every result
that is not a pass (a report lists those; passes are counted in its summary)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kcel.audit.checks import PASS, Result

EXAMPLES = 5  # per policy, rule, operation and outcome


@dataclass
class Tally:
    """One policy, rule and operation's outcomes: a count of each, the first few that are not a pass."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[Result]] = field(default_factory=dict)  # by outcome


POLICY_KINDS = ("ValidatingAdmissionPolicy/", "MutatingAdmissionPolicy/")  # results of policies, not of CRDs


@dataclass
class Summary:
    """A scan's results counted per policy, rule and operation; with `keep`, also what PolicyReports need."""

    objects: int = 0
    checked: int = 0  # objects some policy or the CRD applied to
    problems: list[str] = field(default_factory=list)  # objects that could not be read
    tallies: dict[tuple[str, str, str], Tally] = field(default_factory=dict)  # (policy, rule, operation)
    keep: bool = False  # keep every result that is not a pass (for PolicyReports)
    kept: list[Result] = field(default_factory=list)
    passes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (namespace, policy): passes, for reports
    namespaces: set[str] = field(default_factory=set)  # those of the objects a policy applied to

    def add(self, results: Iterable[Result]) -> None:
        """One object's results."""
        self.objects += 1
        applied = False
        for result in results:
            applied = True
            if result.subject.namespace and result.policy.startswith(POLICY_KINDS):
                self.namespaces.add(result.subject.namespace)
            tally = self.tallies.setdefault((result.policy, result.rule, result.operation), Tally())
            tally.counts[result.result] += 1
            examples = tally.examples.setdefault(result.result, [])
            if result.result != PASS and len(examples) < EXAMPLES:
                examples.append(result)
            if self.keep:
                if result.result == PASS:
                    self.passes[(result.subject.namespace, result.policy)] += 1
                else:
                    self.kept.append(result)
        self.checked += applied

    def merge(self, other: Summary) -> None:
        """Another worker's summary of other objects, into this one."""
        self.objects += other.objects
        self.checked += other.checked
        self.problems += other.problems
        for key, theirs in other.tallies.items():
            tally = self.tallies.setdefault(key, Tally())
            tally.counts.update(theirs.counts)
            for outcome, examples in theirs.examples.items():
                mine = tally.examples.setdefault(outcome, [])
                mine[:] = sorted(mine + examples, key=lambda r: r.order)[:EXAMPLES]  # the first in the snapshot
        self.kept += other.kept
        self.passes.update(other.passes)
        self.namespaces |= other.namespaces

    def totals(self) -> Counter[str]:
        """Results by outcome over every policy and operation."""
        found: Counter[str] = Counter()
        for tally in self.tallies.values():
            found.update(tally.counts)
        return found
