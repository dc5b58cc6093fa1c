"""The human grading rubric of SPEC §5.1 (seed 003 Table 8) as data.

Pure: no Django import. A grade is one ``(unit_key, field, value)`` of one assignment. The
unit keys are those of :func:`runs.segment.build_units` (``s3``, ``c3:chunk``, ``k:ke1``,
``g:CP-01``) plus :data:`ARTEFACT_KEY` for the artefact-level value-add score, and the
artefact-level questions a charter asks only when it needs them (its ``rubric_fields``, SPEC
§4.1): :data:`LABEL_KEY` ("Classification correct?", when classification is human-graded) and
:data:`ACCEPTABLE_KEY` ("Acceptable as is?", for the ``human_acceptable`` success rule). A
session freezes which of these it asks on each artefact (``SessionArtefact.asks``), so what
is asked, missing or agreed is decided by the artefact's units alone.

=============  =================  =====================================  ========  =======
unit           field              values                                 shortcut  level
=============  =================  =====================================  ========  =======
sentence       ``assertive``      Y / N                                  a: y n    nominal
sentence       ``supported``      fully / partially / not                s: f p n  ordinal
sentence       ``relevant``       Y / N                                  r: y n    nominal
cited chunk    ``citation``       strict / lenient / not                 c: s l n  ordinal
key element    ``key_element``    present_correct / present_wrong /      1 2 3     nominal
                                  absent
guidance item  ``guidance``       TP / FP / FN / correct                 t f m o   nominal
guidance item  ``severity``       low / medium / high (breaches only)    l m h     ordinal
artefact       ``value_add``      0 / 1 / 2                              0 1 2     ordinal
label          ``label_correct``  Y / N (the artefact's label is shown)  y n       nominal
label          ``correct_label``  the task set's labels (after N)        1 2 ...   nominal
acceptability  ``acceptable``     Y / N                                  y n       nominal
=============  =================  =====================================  ========  =======

``supported`` is asked only of assertive sentences, ``severity`` only of guidance items
graded TP or FN (a breach) and ``correct_label`` only of a label graded not correct: a
grade that is not asked is neither required nor kept.
:data:`DEPENDS_ON` names each such field's parent. Once the parent's final value (agreed or
adjudicated) does not ask for the dependent field, the field is *moot* (:func:`is_moot`): not
pending, not adjudicated, not a final label, whatever the graders who answered it said.

The human labels map onto the judge's stored criteria (``runs.judges.rubric``) so that judge
and human can be compared unit by unit (SPEC §5.2): :func:`criterion_scores`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from charters.catalogue import RUBRIC_ACCEPTABLE, RUBRIC_LABEL_CORRECT

RUBRIC_VERSION = "1"

SENTENCE = "sentence"
CITED_CHUNK = "cited_chunk"
KEY_ELEMENT = "key_element"
GUIDANCE_ITEM = "guidance_item"
ARTEFACT = "artefact"
ARTEFACT_KEY = "artefact"
LABEL = "label"
LABEL_KEY = "label"
ACCEPTABILITY = "acceptability"
ACCEPTABLE_KEY = "acceptable"
YES = "Y"
NO = "N"
LABEL_CORRECT = RUBRIC_LABEL_CORRECT
CORRECT_LABEL = "correct_label"
MAX_LABEL = 120  # a gold label's length (charters.Task.gold_label)
ACCEPTABLE = RUBRIC_ACCEPTABLE
#: The optional rubric fields a charter may ask (``rubric_fields``) → the unit asking it.
OPTIONAL_FIELDS: Mapping[str, str] = MappingProxyType(
    {LABEL_CORRECT: LABEL_KEY, ACCEPTABLE: ACCEPTABLE_KEY}
)

BREACH_LABELS = frozenset({"TP", "FN"})
FLAGGED_LABELS = frozenset({"TP", "FP"})


@dataclass(frozen=True)
class Field:
    """One rubric question asked of every unit of one kind."""

    name: str
    unit_kind: str
    question: str
    values: tuple[str, ...]
    labels: tuple[str, ...]
    keys: tuple[str, ...]
    level: str  # Krippendorff level of measurement: "nominal" or "ordinal"

    @property
    def open(self) -> bool:
        """Whether the values are the task set's label set rather than the rubric's own."""
        return not self.values

    def check(self, value: str, choices: Sequence[str] = ()) -> None:
        """Raise ``ValueError`` naming the field unless ``value`` is one of its values.

        An open field's values are ``choices`` (the task set's label set) when the caller
        knows them; without them any label of up to :data:`MAX_LABEL` characters passes here
        and the estimator refuses one outside the label set, naming the task.
        """
        allowed = self.values or tuple(choices)
        if allowed and value not in allowed:
            raise ValueError(
                f"{self.name}: value must be one of {', '.join(allowed)}, got {value!r}"
            )
        if not allowed and not 0 < len(value.strip()) <= MAX_LABEL:
            raise ValueError(f"{self.name}: value must be a label of the label set, got {value!r}")


FIELDS: tuple[Field, ...] = (
    Field(
        "assertive",
        SENTENCE,
        "Assertive? Does the sentence assert a fact that could be true or false?",
        ("Y", "N"),
        ("Yes", "No"),
        ("y", "n"),
        "nominal",
    ),
    Field(
        "supported",
        SENTENCE,
        "Supported by the permitted sources? Fully / Partially / Not",
        ("fully", "partially", "not"),
        ("Fully", "Partially", "Not"),
        ("f", "p", "x"),
        "ordinal",
    ),
    Field(
        "relevant",
        SENTENCE,
        "Relevant to the task?",
        ("Y", "N"),
        ("Yes", "No"),
        ("y", "n"),
        "nominal",
    ),
    Field(
        "citation",
        CITED_CHUNK,
        "Citation used? Strict (content taken from it) / Lenient (reflected) / Not",
        ("strict", "lenient", "not"),
        ("Strict", "Lenient", "Not"),
        ("s", "l", "x"),
        "ordinal",
    ),
    Field(
        "key_element",
        KEY_ELEMENT,
        "Key element in the artefact?",
        ("present_correct", "present_wrong", "absent"),
        ("Present and correct", "Present but wrong", "Absent"),
        ("1", "2", "3"),
        "nominal",
    ),
    Field(
        "guidance",
        GUIDANCE_ITEM,
        "Guidance item: flagged and truly breached (TP), flagged but sound (FP), "
        "breached but not flagged (FN), not flagged and sound (correct)",
        ("TP", "FP", "FN", "correct"),
        ("TP", "FP", "FN", "Correct"),
        ("t", "f", "m", "o"),
        "nominal",
    ),
    Field(
        "severity",
        GUIDANCE_ITEM,
        "Severity of the breach",
        ("low", "medium", "high"),
        ("Low", "Medium", "High"),
        ("l", "m", "h"),
        "ordinal",
    ),
    Field(
        "value_add",
        ARTEFACT,
        "Value added by the artefact: 0 none, 1 some, 2 substantial",
        ("0", "1", "2"),
        ("0 none", "1 some", "2 substantial"),
        ("0", "1", "2"),
        "ordinal",
    ),
    Field(
        LABEL_CORRECT,
        LABEL,
        "Classification correct? Is the label the artefact gives (shown) the right one?",
        ("Y", "N"),
        ("Yes", "No"),
        ("y", "n"),
        "nominal",
    ),
    Field(
        CORRECT_LABEL,
        LABEL,
        "If not, which label is right? (one of the task set's label set)",
        (),
        (),
        (),
        "nominal",
    ),
    Field(
        ACCEPTABLE,
        ACCEPTABILITY,
        "Acceptable as is? Could the artefact be used for its purpose without a change?",
        ("Y", "N"),
        ("Yes", "No"),
        ("y", "n"),
        "nominal",
    ),
)

UNIT_KINDS = (SENTENCE, CITED_CHUNK, KEY_ELEMENT, GUIDANCE_ITEM, ARTEFACT, LABEL, ACCEPTABILITY)
#: The fields with a fixed scale of values: agreement and graders' label rates are measured on
#: these (the right label of a wrong classification is read through ``label_correct``).
SCALED_FIELDS: tuple[Field, ...] = tuple(f for f in FIELDS if not f.open)
FIELDS_BY_NAME: Mapping[str, Field] = MappingProxyType({f.name: f for f in FIELDS})
FIELDS_BY_KIND: Mapping[str, tuple[Field, ...]] = MappingProxyType(
    {kind: tuple(f for f in FIELDS if f.unit_kind == kind) for kind in UNIT_KINDS}
)


def unit_kind_of(unit_key: str) -> str:
    """Return the unit kind a unit key names (see :func:`runs.segment.build_units`)."""
    if unit_key == ARTEFACT_KEY:
        return ARTEFACT
    if unit_key == LABEL_KEY:
        return LABEL
    if unit_key == ACCEPTABLE_KEY:
        return ACCEPTABILITY
    if unit_key.startswith("k:"):
        return KEY_ELEMENT
    if unit_key.startswith("g:"):
        return GUIDANCE_ITEM
    if unit_key.startswith("c") and ":" in unit_key:
        return CITED_CHUNK
    if unit_key.startswith("s") and unit_key[1:].isdigit():
        return SENTENCE
    raise ValueError(
        f"unit_key: {unit_key!r} is not a unit key (s3, c3:chunk, k:id, g:id, artefact, "
        "label, acceptable)"
    )


def field_for(unit_key: str, field: str) -> Field:
    """Return the rubric field ``field`` of the unit ``unit_key``; ``ValueError`` if not asked."""
    kind = unit_kind_of(unit_key)
    spec = FIELDS_BY_NAME.get(field)
    if spec is None:
        raise ValueError(f"field: {field!r} is not a rubric field ({', '.join(FIELDS_BY_NAME)})")
    if spec.unit_kind != kind:
        raise ValueError(f"field: {field!r} is not asked of a {kind.replace('_', ' ')}")
    return spec


#: A dependent field → the field whose value decides whether it is asked.
DEPENDS_ON: Mapping[str, str] = MappingProxyType(
    {"supported": "assertive", "severity": "guidance", CORRECT_LABEL: LABEL_CORRECT}
)


def asking_values(field: str) -> tuple[str, ...]:
    """Return the values of ``field``'s parent that ask for it (empty: not a dependent field)."""
    parent = DEPENDS_ON.get(field)
    if parent is None:
        return ()
    return tuple(v for v in FIELDS_BY_NAME[parent].values if is_asked(field, {parent: v}))


def is_moot(field: str, finals: Mapping[str, str | None]) -> bool:
    """Return whether ``field`` is no longer asked given its unit's final values ``finals``.

    A field is moot when its parent (:data:`DEPENDS_ON`) has a final value that does not ask
    for it; a parent with no final value yet (still disputed) leaves it open.
    """
    parent = DEPENDS_ON.get(field)
    if parent is None:
        return False
    final = finals.get(parent)
    return final is not None and not is_asked(field, {parent: final})


def is_asked(field: str, unit_grades: Mapping[str, str]) -> bool:
    """Return whether ``field`` is asked given the unit's other grades."""
    if field == "supported":
        return unit_grades.get("assertive") != "N"
    if field == "severity":
        return unit_grades.get("guidance") in BREACH_LABELS
    if field == CORRECT_LABEL:
        return unit_grades.get(LABEL_CORRECT) == NO
    return True


def missing_fields(
    unit_keys: Sequence[str], grades: Mapping[str, Mapping[str, str]]
) -> list[tuple[str, str]]:
    """Return the ``(unit_key, field)`` pairs still to grade, in unit order.

    ``grades`` maps unit key to ``{field: value}``.
    """
    missing: list[tuple[str, str]] = []
    for key in unit_keys:
        unit = grades.get(key, {})
        for spec in FIELDS_BY_KIND[unit_kind_of(key)]:
            if spec.name not in unit and is_asked(spec.name, unit):
                missing.append((key, spec.name))
    return missing


def criterion_scores(field: str, value: str) -> dict[str, float]:
    """Return the judge criteria (``runs.judges.rubric``) a human label implies, as 0/1 scores.

    "Partially supported counts as supported" (SPEC §4); a guidance item is ``flagged`` when
    graded TP or FP and ``breached`` when graded TP or FN; the optional artefact fields
    (``label_correct``, ``acceptable``) score as themselves, 1 for yes.
    """
    FIELDS_BY_NAME[field].check(value)
    if field == "assertive":
        return {"assertive": float(value == "Y")}
    if field == "supported":
        return {"supported": float(value != "not")}
    if field == "relevant":
        return {"relevant": float(value == "Y")}
    if field == "citation":
        return {
            "citation_strict": float(value == "strict"),
            "citation_lenient": float(value != "not"),
        }
    if field == "key_element":
        return {"key_element_captured": float(value == "present_correct")}
    if field in OPTIONAL_FIELDS:
        return {field: float(value == YES)}
    if field == "guidance":
        return {
            "flagged": float(value in FLAGGED_LABELS),
            "breached": float(value in BREACH_LABELS),
        }
    return {}
