"""The versioned unit rubric of SPEC §5.1 as data, and the rubric prompt of the LLM judge.

Each :class:`Question` is asked of one kind of unit and answered with one of its labels; the
answer is stored as one or more scored criteria (``JudgeScore.criterion``), each score the
0/1 indicator that a SPEC §4 metric averages:

==============  ===============  ==================================  =========================
unit            question         labels                              stored criterion = score
==============  ===============  ==================================  =========================
sentence        ``assertive``    Y / N                               ``assertive`` 1 / 0
sentence        ``supported``    fully / partially / not             ``supported`` 1 / 1 / 0
sentence        ``relevant``     Y / N                               ``relevant`` 1 / 0
cited chunk     ``citation``     strict / lenient / not              ``citation_strict`` 1 / 0 / 0,
                                                                     ``citation_lenient`` 1 / 1 / 0
key element     ``key_element``  present_correct / present_wrong /   ``key_element_captured``
                                 absent                              1 / 0 / 0
guidance item   ``flagged``      Y / N                               ``flagged`` 1 / 0
==============  ===============  ==================================  =========================

"Partially supported counts as supported" (SPEC §4 hallucination_rate), so a sentence is
hallucinated when ``assertive`` is 1 and ``supported`` is 0; the label keeps the three-way
answer. Change :data:`RUBRIC_VERSION` whenever a question, label, score or the prompt changes:
stored scores name the judge version they were made under.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from audit.canonical import sha256_hex

RUBRIC_VERSION = "1"

SENTENCE = "sentence"
CITED_CHUNK = "cited_chunk"
KEY_ELEMENT = "key_element"
GUIDANCE_ITEM = "guidance_item"
UNIT_KINDS = (SENTENCE, CITED_CHUNK, KEY_ELEMENT, GUIDANCE_ITEM)

#: The list of the LLM judge's JSON reply that answers each kind of unit.
REPLY_SECTIONS: Mapping[str, str] = MappingProxyType(
    {
        SENTENCE: "sentences",
        CITED_CHUNK: "cited_chunks",
        KEY_ELEMENT: "key_elements",
        GUIDANCE_ITEM: "guidance",
    }
)


@dataclass(frozen=True)
class Question:
    """One rubric question asked of every unit of one kind."""

    name: str
    unit_kind: str
    text: str
    labels: tuple[str, ...]
    criteria: Mapping[str, Mapping[str, float]]

    def scores(self, label: str) -> dict[str, float]:
        """Return the stored score of each criterion for ``label``."""
        if label not in self.labels:
            raise ValueError(
                f"{self.name}: label must be one of {', '.join(self.labels)}, got {label!r}"
            )
        return {criterion: scores[label] for criterion, scores in self.criteria.items()}


def _question(
    name: str, unit_kind: str, text: str, criteria: dict[str, dict[str, float]]
) -> Question:
    labels = tuple(next(iter(criteria.values())))
    return Question(
        name=name,
        unit_kind=unit_kind,
        text=text,
        labels=labels,
        criteria=MappingProxyType({k: MappingProxyType(v) for k, v in criteria.items()}),
    )


QUESTIONS: tuple[Question, ...] = (
    _question(
        "assertive",
        SENTENCE,
        "Does the sentence assert a fact (a claim that could be true or false), rather than "
        "ask, hedge, abstain (e.g. 'not determinable from the sources') or head a section?",
        {"assertive": {"Y": 1.0, "N": 0.0}},
    ),
    _question(
        "supported",
        SENTENCE,
        "Is the sentence supported by the task's permitted sources? 'fully': every claim and "
        "figure is in the sources; 'partially': the main claim is, some detail is not; 'not': "
        "the main claim or any figure is absent from or contradicted by the sources.",
        {"supported": {"fully": 1.0, "partially": 1.0, "not": 0.0}},
    ),
    _question(
        "relevant",
        SENTENCE,
        "Is the sentence relevant to the task input (it serves what the task asks for)?",
        {"relevant": {"Y": 1.0, "N": 0.0}},
    ),
    _question(
        "citation",
        CITED_CHUNK,
        "Is the cited chunk used by the sentence that cites it? 'strict': the sentence's "
        "content is actually taken from the chunk; 'lenient': the chunk's content is at least "
        "reflected in the sentence; 'not': the chunk does not bear on the sentence.",
        {
            "citation_strict": {"strict": 1.0, "lenient": 0.0, "not": 0.0},
            "citation_lenient": {"strict": 1.0, "lenient": 1.0, "not": 0.0},
        },
    ),
    _question(
        "key_element",
        KEY_ELEMENT,
        "Is the gold key element in the output? 'present_correct': stated and correct; "
        "'present_wrong': addressed but with a wrong figure or fact; 'absent': not addressed.",
        {"key_element_captured": {"present_correct": 1.0, "present_wrong": 0.0, "absent": 0.0}},
    ),
    _question(
        "flagged",
        GUIDANCE_ITEM,
        "Does the output flag (raise, address or state its compliance with) the guidance item?",
        {"flagged": {"Y": 1.0, "N": 0.0}},
    ),
)

QUESTIONS_BY_KIND: Mapping[str, tuple[Question, ...]] = MappingProxyType(
    {kind: tuple(q for q in QUESTIONS if q.unit_kind == kind) for kind in UNIT_KINDS}
)
QUESTIONS_BY_NAME: Mapping[str, Question] = MappingProxyType({q.name: q for q in QUESTIONS})
#: Every stored criterion, with the unit kind it scores.
CRITERIA: Mapping[str, str] = MappingProxyType(
    {criterion: q.unit_kind for q in QUESTIONS for criterion in q.criteria}
)


# -- what a judge is given and what it returns ------------------------------------------------


@dataclass(frozen=True)
class SentenceUnit:
    key: str
    text: str
    cited_chunk_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class CitedChunkUnit:
    """One citation: the chunk ``chunk_id`` cited by the sentence ``sentence_key``.

    ``sentence_key`` is ``None`` when the output cites the chunk without a sentence link
    (e.g. an imported output that lists its cited chunk ids only); the citing text is then
    the whole output.
    """

    key: str
    chunk_id: str
    sentence_key: str | None = None


@dataclass(frozen=True)
class KeyElementUnit:
    key: str
    element_id: str
    text: str


@dataclass(frozen=True)
class GuidanceUnit:
    key: str
    item_id: str
    text: str


@dataclass(frozen=True)
class JudgeItem:
    """One output to judge, with its task's input and permitted sources, and all its units."""

    output_text: str
    task_input: str
    sources: Mapping[str, str] = field(default_factory=dict)
    sentences: tuple[SentenceUnit, ...] = ()
    cited_chunks: tuple[CitedChunkUnit, ...] = ()
    key_elements: tuple[KeyElementUnit, ...] = ()
    guidance: tuple[GuidanceUnit, ...] = ()

    def unit_keys(self) -> dict[str, list[str]]:
        """Return the unit keys of each kind, in order."""
        return {
            SENTENCE: [u.key for u in self.sentences],
            CITED_CHUNK: [u.key for u in self.cited_chunks],
            KEY_ELEMENT: [u.key for u in self.key_elements],
            GUIDANCE_ITEM: [u.key for u in self.guidance],
        }

    def unit_count(self) -> int:
        """Return the number of units."""
        return sum(len(keys) for keys in self.unit_keys().values())


@dataclass(frozen=True)
class Answer:
    """A judge's answer to one question about one unit."""

    unit_key: str
    question: str
    label: str
    rationale: str = ""


@dataclass(frozen=True)
class UnitScore:
    """One stored criterion's score of one unit (a future ``JudgeScore`` row)."""

    unit_key: str
    criterion: str
    score: float
    label: str
    rationale: str = ""


def answers_to_scores(answers: Iterable[Answer]) -> list[UnitScore]:
    """Return the stored scores that the answers imply, in answer order."""
    scores: list[UnitScore] = []
    for answer in answers:
        question = QUESTIONS_BY_NAME.get(answer.question)
        if question is None:
            raise ValueError(f"unknown rubric question {answer.question!r}")
        for criterion, score in question.scores(answer.label).items():
            scores.append(
                UnitScore(answer.unit_key, criterion, score, answer.label, answer.rationale)
            )
    return scores


def expected_criteria(item: JudgeItem) -> set[tuple[str, str]]:
    """Return every (unit key, criterion) a complete judgement of ``item`` stores."""
    return {
        (key, criterion)
        for kind, keys in item.unit_keys().items()
        for key in keys
        for question in QUESTIONS_BY_KIND[kind]
        for criterion in question.criteria
    }


# -- the LLM judge's rubric prompt ------------------------------------------------------------


def _prompt() -> str:
    lines = [
        f"You are an evaluation judge applying the unit rubric version {RUBRIC_VERSION} of a "
        "bank's model-risk team. You grade one output of an LLM workflow. You are given the "
        "task input, the task's permitted source chunks (the only admissible evidence; your "
        "own knowledge is not a source), the output text, and its units, each with a key.",
        "",
        "Answer every question below for every unit of the kind it names: every unit key "
        "exactly once, no other keys.",
        "",
    ]
    for question in QUESTIONS:
        lines.append(
            f"- {question.unit_kind} · {question.name} ({' | '.join(question.labels)}): "
            f"{question.text}"
        )
    lines += [
        "",
        "A figure that differs from the sources in any digit, unit or period makes a sentence "
        "'not' supported. A sentence citing no chunk may still be supported by a permitted "
        "source; judge support against all permitted sources, and judge each citation against "
        "the chunk it names.",
        "",
        "Reply with one JSON object and nothing else, of exactly this shape (lists may be "
        "empty; 'rationale' is optional, at most one short sentence):",
        '{"sentences": [{"key": "s1", "assertive": "Y", "supported": "fully", '
        '"relevant": "Y", "rationale": "..."}],',
        ' "cited_chunks": [{"key": "c1", "citation": "strict", "rationale": "..."}],',
        ' "key_elements": [{"key": "k1", "key_element": "present_correct", "rationale": "..."}],',
        ' "guidance": [{"key": "g1", "flagged": "N", "rationale": "..."}]}',
    ]
    return "\n".join(lines)


#: The system prompt of the LLM judge: the rubric as the judge reads it.
RUBRIC_PROMPT = _prompt()
RUBRIC_SHA256 = sha256_hex(RUBRIC_PROMPT)
