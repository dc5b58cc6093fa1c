"""The built-in offline judge: lexical and numeric heuristics, deterministic, no network.

WEAK BY DESIGN. This judge reads words and numbers, not meaning. It exists so that a use case
can be scored end to end with no model provider (demos, tests, air-gapped trials) and as a
floor to compare LLM judges against; its scores must be calibrated against human grades
(SPEC §5.2) before they inform anything, and it should never be the judge of record for a
gated metric when an LLM judge is available. Known failure modes:

- **Support** is checked against the chunks the sentence *cites* only: an uncited sentence is
  "not" supported even if a permitted source states it. A paraphrase with few shared words
  looks "partially" or "not" supported (at least "partially" when all its figures match); a
  sentence that copies words but reverses their meaning ("revenue fell" vs "revenue rose")
  looks "fully" supported. Every figure must match
  a cited figure exactly after normalisation, so a correctly rounded figure ($204 million for
  $203.9 million) counts as unsupported and numbers written as words ("five") are not checked.
- **Assertive** is a surface test: no question mark, no hedge or abstention phrase, and a
  verb-like word, a figure, or at least five words ending in a full stop.
- **Relevant** means sharing content words or figures with the task input and its permitted
  sources: an on-topic but useless sentence is "relevant".
- **Citations**: "strict" when the citing sentence shares a figure or at least three content
  words with the chunk, "lenient" when it shares one content word.
- **Key elements**: "present_correct" when most of the element's content words and all its
  figures appear anywhere in the output; "present_wrong" when the words appear but a figure
  does not; else "absent". It cannot tell a captured element from one mentioned to be denied.
- **Guidance items**: "flagged" when the output mentions at least half the item's key terms.

Numbers are normalised before comparison: ``$45.0 million``, ``45m``, ``45 mn`` and
``45,000,000`` are the same amount; ``1.6%`` and ``1.6 per cent`` the same percentage;
``2.4x`` and ``2.4 times`` the same multiple; ``FY2024`` contains the year 2024. Citation
markers (``[G1-ar24-p41]``) are removed from sentences before reading their numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from runs.judges.rubric import (
    Answer,
    CitedChunkUnit,
    GuidanceUnit,
    JudgeItem,
    KeyElementUnit,
    SentenceUnit,
    UnitScore,
    answers_to_scores,
)

OFFLINE_JUDGE_VERSION = "1"

FULLY_SUPPORTED_COVERAGE = 0.6
PARTIALLY_SUPPORTED_COVERAGE = 0.3
STRICT_CITATION_WORDS = 3
KEY_ELEMENT_COVERAGE = 0.6
KEY_ELEMENT_WITH_FIGURES_COVERAGE = 0.3
GUIDANCE_TERM_SHARE = 0.5
MIN_DECLARATIVE_WORDS = 5

#: What the stored rubric of an offline judge says about its method (hashed with the rubric).
OFFLINE_METHOD = (
    f"Offline judge heuristics version {OFFLINE_JUDGE_VERSION} (runs/judges/offline.py): "
    "lexical and numeric checks, no model. supported: every normalised figure of the "
    "sentence appears in a cited chunk and the cited chunks hold "
    f"≥ {FULLY_SUPPORTED_COVERAGE:.0%} (fully) or ≥ {PARTIALLY_SUPPORTED_COVERAGE:.0%} "
    "(partially) of its content words (a sentence whose figures all match is at least "
    "partially supported); uncited → not. assertive: no question, hedge or "
    "abstention, and a verb-like word, a figure or ≥ 5 words ending in a full stop. "
    "relevant: shares a content word with the task input, or a figure or two content "
    "words with the permitted sources. citation: "
    f"strict if a shared figure or ≥ {STRICT_CITATION_WORDS} shared content words, lenient if "
    f"one. key element: ≥ {KEY_ELEMENT_COVERAGE:.0%} of its content words and all its figures "
    "in the output → present_correct; words but not figures → present_wrong. guidance: "
    f"flagged if ≥ {GUIDANCE_TERM_SHARE:.0%} of its key terms appear in the output."
)


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Function words and words that carry no claim; figures' scale words are read with the figure.
STOP_WORDS = _word_set(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves per cent percent million millions billion billions thousand thousands bn mn mm
    m b k x times approximately around roughly whose upon via within
    """
)

# Words of an instruction that say what to do rather than what it is about.
INSTRUCTION_WORDS = _word_set(
    """
    state states stated cite cites cited do don't must should shall ensure include includes
    note notes mention mentions every each any all always never outside inside provide give
    make use used write written report
    """
)

AUXILIARY_VERBS = _word_set(
    """
    is are was were be been being am has have had will would shall should must can could may
    might does do did
    """
)

COMMON_VERBS = _word_set(
    """
    rose fell grew declined increased decreased remains remain requests request provides
    provide accounts account includes include shows show indicates indicate reports report
    operates operate serves serve covers cover exceeds exceed generates generate owns own
    totals total holds hold seeks seek plans plan expects expect supports support represents
    represent comprises comprise reached reach stood stands stand amounted amounts amount
    matures mature falls fall rises rise grows grow leads lead depends depend relies rely
    makes make takes take gives give became become began begin ran run met meet paid pay
    fund funds refinance refinances repays repay proposes propose founded
    """
)

HEDGE_PATTERN = re.compile(
    r"\b(may|might|could|perhaps|possibly|probably|likely|unclear|uncertain|unknown|"
    r"appears? to|seems?|not determinable|cannot be determined|can ?not determine|"
    r"not (?:stated|known|available|provided|disclosed)|insufficient information|"
    r"no information)\b",
    re.IGNORECASE,
)

# A bracketed list of chunk ids, as outputs cite them: [G1-ar24-p41] or [c1, c2].
CITATION_MARKER = re.compile(r"\[\s*([\w.:/#-]+(?:\s*[,;]\s*[\w.:/#-]+)*)\s*\]")

WORD = re.compile(r"[a-z][a-z0-9'’]*")

NUMBER = re.compile(
    r"""
    (?:(?<![\w.,])|(?<=FY)|(?<=CY)|(?<=fy)|(?<=cy))
    (?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)
    (?:
        \s*(?P<percent>%|per\s?cent\b|percent\b)
      | \s*(?P<scale_word>billion|million|thousand|bn|mn|mm)\b
      | \s+(?P<times>times)\b
      | (?P<attached>[xX×]|[mMbBkK])(?![\w])
    )?
    """,
    re.VERBOSE,
)

SCALES = {
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "million": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "m": 1e6,
    "thousand": 1e3,
    "k": 1e3,
}


@dataclass(frozen=True)
class Figure:
    """A normalised number: its value and kind (amount, percent or multiple)."""

    value: float
    kind: str
    text: str

    def matches(self, other: Figure) -> bool:
        return self.kind == other.kind and math.isclose(self.value, other.value, rel_tol=1e-9)


def figures(text: str) -> list[Figure]:
    """Return the normalised figures in ``text``, in order."""
    found: list[Figure] = []
    for match in NUMBER.finditer(text):
        value = float(match.group("number").replace(",", ""))
        kind = "amount"
        if match.group("percent"):
            kind = "percent"
        elif match.group("times"):
            kind = "multiple"
        elif match.group("scale_word"):
            value *= SCALES[match.group("scale_word").lower()]
        elif match.group("attached"):
            attached = match.group("attached").lower()
            if attached in ("x", "×"):
                kind = "multiple"
            else:
                value *= SCALES[attached]
        found.append(Figure(value, kind, match.group(0).strip()))
    return found


def strip_citations(text: str) -> str:
    """Return ``text`` without its bracketed chunk-id citation markers."""
    return CITATION_MARKER.sub(" ", text)


def cited_ids(text: str) -> list[str]:
    """Return the chunk ids cited by bracket markers in ``text``, in order."""
    ids: list[str] = []
    for match in CITATION_MARKER.finditer(text):
        ids.extend(part.strip() for part in re.split(r"[,;]", match.group(1)) if part.strip())
    return ids


def stem(word: str) -> str:
    """Return a crude stem, the same for the usual inflections of a word."""
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Return the lower-case words of ``text`` (hyphenated words split), figures left out."""
    lowered = strip_citations(text).lower().replace("-", " ")
    result = []
    for token in WORD.findall(lowered):
        token = token.replace("’", "'")
        if token.endswith("'s"):
            token = token[:-2]
        token = token.strip("'")
        if token and not any(ch.isdigit() for ch in token):
            result.append(token)
    return result


def content_stems(text: str, extra_stop_words: frozenset[str] = frozenset()) -> set[str]:
    """Return the stems of the content words of ``text`` (stop words removed)."""
    return {
        stem(word)
        for word in words(text)
        if len(word) > 1 and word not in STOP_WORDS and word not in extra_stop_words
    }


def missing_figures(needed: Iterable[Figure], available: list[Figure]) -> list[Figure]:
    """Return the figures of ``needed`` that match none of ``available``."""
    return [f for f in needed if not any(f.matches(other) for other in available)]


def _figure_list(items: list[Figure]) -> str:
    return ", ".join(f.text for f in items)


@dataclass(frozen=True)
class _Evidence:
    stems: set[str]
    figures: list[Figure]


def _evidence(text: str) -> _Evidence:
    return _Evidence(content_stems(text), figures(strip_citations(text)))


class OfflineJudge:
    """Score every unit of an output with the heuristics of this module (see its docstring)."""

    kind = "offline"
    model_ref = ""

    def score(self, item: JudgeItem) -> list[UnitScore]:
        """Return the stored scores of every unit of ``item``."""
        return answers_to_scores(self.answers(item))

    def answers(self, item: JudgeItem) -> list[Answer]:
        """Return one answer per rubric question per unit of ``item``."""
        sources = {chunk_id: _evidence(text) for chunk_id, text in item.sources.items()}
        sentence_text = {s.key: s.text for s in item.sentences}
        output = _evidence(item.output_text)
        context = _Evidence(
            set().union(*(e.stems for e in sources.values())) if sources else set(),
            [f for e in sources.values() for f in e.figures],
        )
        task_stems = content_stems(item.task_input)
        task_figures = figures(item.task_input)
        answers: list[Answer] = []
        for sentence in item.sentences:
            answers += self._sentence(sentence, sources, task_stems, task_figures, context)
        for citation in item.cited_chunks:
            citing = (
                sentence_text.get(citation.sentence_key, item.output_text)
                if citation.sentence_key is not None
                else item.output_text
            )
            answers.append(self._citation(citation, citing, sources))
        for element in item.key_elements:
            answers.append(self._key_element(element, output))
        for guidance in item.guidance:
            answers.append(self._guidance(guidance, output))
        return answers

    def _sentence(
        self,
        sentence: SentenceUnit,
        sources: Mapping[str, _Evidence],
        task_stems: set[str],
        task_figures: list[Figure],
        context: _Evidence,
    ) -> list[Answer]:
        own = _evidence(sentence.text)
        return [
            Answer(sentence.key, "assertive", *_assertive(sentence.text, own)),
            Answer(sentence.key, "supported", *_supported(sentence, own, sources)),
            Answer(sentence.key, "relevant", *_relevant(own, task_stems, task_figures, context)),
        ]

    def _citation(
        self, citation: CitedChunkUnit, citing_text: str, sources: Mapping[str, _Evidence]
    ) -> Answer:
        chunk = sources.get(citation.chunk_id)
        if chunk is None:
            return Answer(
                citation.key,
                "citation",
                "not",
                f"{citation.chunk_id} is not a permitted source of this task",
            )
        citing = _evidence(citing_text)
        shared_figures = [f for f in citing.figures if any(f.matches(g) for g in chunk.figures)]
        shared_words = citing.stems & chunk.stems
        if shared_figures or len(shared_words) >= STRICT_CITATION_WORDS:
            what = (
                f"shares figure {_figure_list(shared_figures[:3])}"
                if shared_figures
                else f"shares {len(shared_words)} content words"
            )
            return Answer(citation.key, "citation", "strict", f"{what} with {citation.chunk_id}")
        if shared_words:
            return Answer(
                citation.key,
                "citation",
                "lenient",
                f"shares {len(shared_words)} content word(s) with {citation.chunk_id}",
            )
        return Answer(
            citation.key, "citation", "not", f"shares no content word with {citation.chunk_id}"
        )

    def _key_element(self, element: KeyElementUnit, output: _Evidence) -> Answer:
        element_evidence = _evidence(element.text)
        stems = element_evidence.stems
        coverage = len(stems & output.stems) / len(stems) if stems else 1.0
        missing = missing_figures(element_evidence.figures, output.figures)
        has_figures = bool(element_evidence.figures)
        words_found = f"{len(stems & output.stems)}/{len(stems)} content words"
        if coverage >= KEY_ELEMENT_COVERAGE and not missing:
            return Answer(element.key, "key_element", "present_correct", f"{words_found} found")
        if coverage >= KEY_ELEMENT_COVERAGE:
            return Answer(
                element.key,
                "key_element",
                "present_wrong",
                f"{words_found} found but not {_figure_list(missing)}",
            )
        if has_figures and not missing and coverage >= KEY_ELEMENT_WITH_FIGURES_COVERAGE:
            return Answer(
                element.key,
                "key_element",
                "present_correct",
                f"all figures and {words_found} found",
            )
        return Answer(element.key, "key_element", "absent", f"only {words_found} found")

    def _guidance(self, guidance: GuidanceUnit, output: _Evidence) -> Answer:
        terms = content_stems(guidance.text, INSTRUCTION_WORDS)
        if not terms:
            return Answer(guidance.key, "flagged", "N", "the item has no key terms to look for")
        found = terms & output.stems
        needed = max(1, math.ceil(GUIDANCE_TERM_SHARE * len(terms)))
        label = "Y" if len(found) >= needed else "N"
        return Answer(
            guidance.key,
            "flagged",
            label,
            f"{len(found)}/{len(terms)} key terms in the output (needs {needed})",
        )


def _assertive(text: str, own: _Evidence) -> tuple[str, str]:
    stripped = strip_citations(text).strip()
    if stripped.endswith("?"):
        return "N", "a question"
    hedge = HEDGE_PATTERN.search(stripped)
    if hedge:
        return "N", f"hedges or abstains ({hedge.group(0).lower()!r})"
    tokens = words(stripped)
    verb = next(
        (t for t in tokens if t in AUXILIARY_VERBS or t in COMMON_VERBS or _past_tense(t)),
        None,
    )
    if verb is not None:
        return "Y", f"states a claim (verb {verb!r})"
    if own.figures and own.stems:
        return "Y", f"states a figure ({own.figures[0].text})"
    if len(tokens) >= MIN_DECLARATIVE_WORDS and stripped.endswith((".", "!")):
        return "Y", f"a declarative sentence of {len(tokens)} words"
    return "N", "no verb, figure or full stop: a heading or fragment"


def _past_tense(token: str) -> bool:
    return len(token) > 4 and token.endswith("ed") and token not in STOP_WORDS


def _supported(
    sentence: SentenceUnit, own: _Evidence, sources: Mapping[str, _Evidence]
) -> tuple[str, str]:
    cited = list(dict.fromkeys([*sentence.cited_chunk_ids, *cited_ids(sentence.text)]))
    permitted = [chunk_id for chunk_id in cited if chunk_id in sources]
    if not permitted:
        if cited:
            return "not", f"cites no permitted source ({', '.join(cited[:3])} not permitted)"
        return "not", "cites no source chunk"
    evidence_figures = [f for chunk_id in permitted for f in sources[chunk_id].figures]
    evidence_stems: set[str] = set().union(*(sources[c].stems for c in permitted))
    named = ", ".join(permitted[:3])
    missing = missing_figures(own.figures, evidence_figures)
    if missing:
        return "not", f"{_figure_list(missing)} not in {named}"
    if not own.stems:
        if own.figures:
            return "fully", f"every figure is in {named}"
        return "not", "no content words or figures to check"
    shared = own.stems & evidence_stems
    coverage = len(shared) / len(own.stems)
    summary = f"{len(shared)}/{len(own.stems)} content words in {named}"
    if coverage >= FULLY_SUPPORTED_COVERAGE:
        return "fully", summary
    if coverage >= PARTIALLY_SUPPORTED_COVERAGE:
        return "partially", summary
    if own.figures:
        return "partially", f"every figure is in {named}, but only {summary}"
    return "not", summary


def _relevant(
    own: _Evidence, task_stems: set[str], task_figures: list[Figure], context: _Evidence
) -> tuple[str, str]:
    with_task = own.stems & task_stems
    if with_task:
        return "Y", f"shares {len(with_task)} content word(s) with the task input"
    shared_figures = [
        f for f in own.figures if any(f.matches(g) for g in [*task_figures, *context.figures])
    ]
    if shared_figures:
        return "Y", f"shares figure {shared_figures[0].text} with the task"
    with_sources = own.stems & context.stems
    if len(with_sources) >= 2:
        return "Y", f"shares {len(with_sources)} content words with the permitted sources"
    return "N", "shares nothing with the task input or its permitted sources"
