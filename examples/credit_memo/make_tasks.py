"""Make the credit-memo example's task set: ``tasks.jsonl`` beside this file.

Seed 003, Use Case B (A1 / C3 / E2): analysts upload filings, research and spreads; the
workflow drafts one of 13 memo sections with inline citations; a guidance-verification
step checks the draft against credit-policy items. The seed names the number of sections
and one of them (the source of repayment) but not the others, so the 13 section types
below are a conventional wholesale-credit memo outline.

Everything here is SYNTHETIC: the borrowers, their filings excerpts and the credit policy
are invented, seeded (``SEED``), and internally consistent (net leverage, interest cover and
covenant headroom are computed from the figures in the sources, so key elements can be
checked against them). No real company is described.

Splits (SPEC §2, §9):
- ``graded``: 5 borrowers × 13 sections = 65 tasks, the evaluation itself;
- ``dev``: 2 other borrowers × 6 sections = 12 tasks, for prompt tuning (other borrowers, so
  no dev input equals a graded one);
- ``stress``: 12 tasks on 3 more borrowers — a source the section needs is missing (4), the
  filing and broker research disagree (4), or the question cannot be answered from the
  sources ("not determinable", 4). Missing-source and not-determinable tasks expect the
  draft to abstain (``expected_abstention: true``).

Run ``python -m examples.credit_memo.make_tasks`` to rewrite ``tasks.jsonl``; a test checks
that the committed file equals what this script produces and that it imports cleanly.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "tasks.jsonl"
SEED = 3_2026
FISCAL_YEAR = 2024

SECTIONS: list[tuple[str, str]] = [
    ("transaction_overview", "Transaction overview"),
    ("borrower_profile", "Borrower and business description"),
    ("industry", "Industry and competitive position"),
    ("management", "Management and ownership"),
    ("financial_performance", "Historical financial performance"),
    ("source_of_repayment", "Primary source of repayment"),
    ("secondary_repayment", "Secondary source of repayment and collateral"),
    ("leverage", "Leverage and capital structure"),
    ("liquidity", "Liquidity"),
    ("covenants", "Financial covenants and headroom"),
    ("projections", "Projections and downside sensitivity"),
    ("key_risks", "Key risks and mitigants"),
    ("risk_rating", "Risk rating rationale"),
]
SECTION_TITLES = dict(SECTIONS)

# Credit policy (synthetic). Item CP-04 is the kind of prohibition the seed's drafting
# instruction carries: its breach is an assurance failure, not a style point.
POLICY: dict[str, tuple[str, bool]] = {
    "CP-01": ("State the accounting period (fiscal year or test date) of every figure.", True),
    "CP-02": ("Cite a source chunk for every number stated.", True),
    "CP-03": ("Do not present broker forecasts as the borrower's reported results.", True),
    "CP-04": (
        "Do not name asset sales, refinancing or equity injections as the primary source of "
        "repayment.",
        True,
    ),
    "CP-05": ("Compare each covenant ratio with its limit and state the headroom.", True),
    "CP-06": ("Note customer concentration above 25% of revenue.", False),
    "CP-07": ("Keep the borrower's reporting currency and units (USD millions).", False),
    "CP-08": ("Where sources disagree, say so and prefer the audited filing.", True),
    "CP-09": (
        "If the sources do not determine an answer, say so instead of estimating it.",
        True,
    ),
    "CP-10": ("Do not state a risk rating outside the risk-rating section.", False),
}
SECTION_POLICY: dict[str, list[str]] = {
    "transaction_overview": ["CP-01", "CP-02", "CP-10"],
    "borrower_profile": ["CP-02", "CP-06", "CP-10"],
    "industry": ["CP-02", "CP-03"],
    "management": ["CP-02", "CP-10"],
    "financial_performance": ["CP-01", "CP-02", "CP-03", "CP-07"],
    "source_of_repayment": ["CP-01", "CP-02", "CP-04"],
    "secondary_repayment": ["CP-01", "CP-02", "CP-04"],
    "leverage": ["CP-01", "CP-02", "CP-05"],
    "liquidity": ["CP-01", "CP-02", "CP-07"],
    "covenants": ["CP-01", "CP-02", "CP-05"],
    "projections": ["CP-02", "CP-03", "CP-09"],
    "key_risks": ["CP-02", "CP-06"],
    "risk_rating": ["CP-01", "CP-02", "CP-05"],
}
# Which chunks each section drafts from (keys of Borrower.chunks()).
SECTION_SOURCES: dict[str, list[str]] = {
    "transaction_overview": ["facility", "income", "debt"],
    "borrower_profile": ["profile", "income", "research"],
    "industry": ["profile", "research"],
    "management": ["profile", "facility"],
    "financial_performance": ["income", "spread", "research"],
    "source_of_repayment": ["income", "spread", "facility"],
    "secondary_repayment": ["debt", "collateral", "facility"],
    "leverage": ["income", "debt", "covenants"],
    "liquidity": ["debt", "spread", "facility"],
    "covenants": ["covenants", "income", "debt"],
    "projections": ["research", "income", "spread"],
    "key_risks": ["profile", "research", "covenants"],
    "risk_rating": ["income", "debt", "covenants", "spread"],
}

NAME_PARTS = (
    [
        "Harlow",
        "Brennock",
        "Castell",
        "Delmont",
        "Eastbrook",
        "Fairholt",
        "Greyridge",
        "Hollins",
        "Ivesdale",
        "Kestrel",
        "Larchmont",
        "Merriton",
    ],
    [
        "Precision",
        "Logistics",
        "Foods",
        "Packaging",
        "Chemicals",
        "Components",
        "Healthcare",
        "Materials",
        "Controls",
        "Textiles",
    ],
    ["Holdings Inc.", "Group Ltd", "Industries Corp.", "plc", "Partners LP"],
)
SECTORS = {
    "Precision": "machined aerospace and industrial components",
    "Logistics": "contract logistics and warehousing",
    "Foods": "private-label packaged foods",
    "Packaging": "rigid plastic and fibre packaging",
    "Chemicals": "speciality coatings and adhesives",
    "Components": "automotive electrical components",
    "Healthcare": "outpatient diagnostic imaging services",
    "Materials": "engineered building materials",
    "Controls": "industrial flow-control equipment",
    "Textiles": "technical textiles for filtration",
}
CEOS = [
    "Dana Whitcombe",
    "Rui Okafor",
    "Mira Lindqvist",
    "Tomasz Brandt",
    "Aisha Varma",
    "Colm Reardon",
    "Lena Fischer",
    "Hugo Marchetti",
    "Priya Nair",
    "Owen Castillo",
]


def money(value: float) -> str:
    return f"${value:,.1f} million"


@dataclass(frozen=True)
class Borrower:
    """A synthetic borrower whose ratios follow from its figures."""

    key: str
    name: str
    sector: str
    ceo: str
    founded: int
    revenue_prior: float
    revenue: float
    ebitda_prior: float
    ebitda: float
    interest: float
    term_loan: float
    revolver_drawn: float
    revolver_size: float
    cash: float
    cfo: float
    capex: float
    debt_service: float
    max_net_leverage: float
    min_interest_cover: float
    top3_customers: int
    forecast_revenue: float
    forecast_ebitda: float
    broker_ebitda: float
    collateral_value: float
    requested: float

    @property
    def debt(self) -> float:
        return self.term_loan + self.revolver_drawn

    @property
    def net_leverage(self) -> float:
        return (self.debt - self.cash) / self.ebitda

    @property
    def interest_cover(self) -> float:
        return self.ebitda / self.interest

    @property
    def margin(self) -> float:
        return 100 * self.ebitda / self.revenue

    @property
    def growth(self) -> float:
        return 100 * (self.revenue / self.revenue_prior - 1)

    @property
    def fcf(self) -> float:
        return self.cfo - self.capex

    @property
    def fcf_cover(self) -> float:
        return self.fcf / self.debt_service

    @property
    def leverage_headroom(self) -> float:
        return 100 * (1 - self.net_leverage / self.max_net_leverage)

    @property
    def available_liquidity(self) -> float:
        return self.cash + self.revolver_size - self.revolver_drawn

    @property
    def loan_to_value(self) -> float:
        return 100 * self.debt / self.collateral_value

    def chunks(self) -> dict[str, dict[str, str]]:
        """Return the permitted source chunks: filings excerpts, research and spreads."""
        fy, prior = FISCAL_YEAR, FISCAL_YEAR - 1
        k = self.key
        return {
            "profile": {
                "id": f"{k}-ar{fy % 100}-p3",
                "source": f"{self.name} annual report FY{fy}, business overview",
                "text": (
                    f"{self.name}, founded in {self.founded}, provides {self.sector}. "
                    f"{self.ceo} has been chief executive since {self.founded + 18}. "
                    f"The three largest customers accounted for {self.top3_customers}% of "
                    f"FY{fy} revenue."
                ),
            },
            "income": {
                "id": f"{k}-ar{fy % 100}-p41",
                "source": f"{self.name} annual report FY{fy}, consolidated income statement",
                "text": (
                    f"Revenue for the year ended 31 December {fy} was {money(self.revenue)} "
                    f"(FY{prior}: {money(self.revenue_prior)}). EBITDA was "
                    f"{money(self.ebitda)} (FY{prior}: {money(self.ebitda_prior)}), a margin "
                    f"of {self.margin:.1f}%. Net interest expense was {money(self.interest)}."
                ),
            },
            "debt": {
                "id": f"{k}-ar{fy % 100}-n14",
                "source": f"{self.name} annual report FY{fy}, note 14 borrowings",
                "text": (
                    f"At 31 December {fy} borrowings were {money(self.debt)}: a senior term "
                    f"loan of {money(self.term_loan)} due {fy + 4} and "
                    f"{money(self.revolver_drawn)} drawn under the {money(self.revolver_size)} "
                    f"revolving credit facility. Cash and cash equivalents were "
                    f"{money(self.cash)}."
                ),
            },
            "covenants": {
                "id": f"{k}-ca-s7",
                "source": f"{self.name} credit agreement s.7.1 and Q4 {fy} compliance certificate",
                "text": (
                    f"Net Leverage Ratio not to exceed {self.max_net_leverage:.2f}:1.00 and "
                    f"Interest Coverage Ratio not less than {self.min_interest_cover:.2f}:1.00, "
                    f"tested quarterly on a trailing twelve-month basis. Certified at 31 "
                    f"December {fy}: Net Leverage {self.net_leverage:.2f}x; Interest Coverage "
                    f"{self.interest_cover:.2f}x."
                ),
            },
            "spread": {
                "id": f"{k}-spread-cf",
                "source": "internal credit spread, cash-flow tab",
                "text": (
                    f"FY{fy} cash flow from operations {money(self.cfo)}; capital expenditure "
                    f"{money(self.capex)}; free cash flow {money(self.fcf)}. Scheduled debt "
                    f"service for FY{fy + 1} (principal and interest) {money(self.debt_service)}"
                    f"; free cash flow covers it {self.fcf_cover:.2f}x."
                ),
            },
            "research": {
                "id": f"{k}-broker-{fy + 1}03",
                "source": f"broker research initiation, March {fy + 1}",
                "text": (
                    f"We forecast FY{fy + 1} revenue of {money(self.forecast_revenue)} and "
                    f"EBITDA of {money(self.forecast_ebitda)}. Customer concentration is the "
                    f"main risk: the top three customers are about {self.top3_customers}% of "
                    f"sales."
                ),
            },
            "collateral": {
                "id": f"{k}-val-{fy}",
                "source": f"independent asset valuation, November {fy}",
                "text": (
                    f"Orderly liquidation value of receivables, inventory and plant pledged "
                    f"to the lenders: {money(self.collateral_value)}, against borrowings of "
                    f"{money(self.debt)} (loan to value {self.loan_to_value:.0f}%)."
                ),
            },
            "facility": {
                "id": f"{k}-termsheet",
                "source": "proposed term sheet",
                "text": (
                    f"{self.name} requests a {money(self.requested)} five-year senior secured "
                    f"revolving credit facility to refinance the existing revolver and fund "
                    f"working capital; the bank's proposed hold is {money(self.requested / 2)}."
                ),
            },
        }


def make_borrower(rng: random.Random, key: str, used: set[str]) -> Borrower:
    while True:
        first, second, suffix = (rng.choice(part) for part in NAME_PARTS)
        name = f"{first} {second} {suffix}"
        if first not in used:
            used.add(first)
            break
    revenue_prior = round(rng.uniform(180, 2400), 1)
    revenue = round(revenue_prior * (1 + rng.uniform(-0.06, 0.14)), 1)
    ebitda = round(revenue * rng.uniform(0.09, 0.24), 1)
    ebitda_prior = round(revenue_prior * ebitda / revenue * rng.uniform(0.85, 1.12), 1)
    net_leverage = rng.uniform(1.3, 3.4)
    cash = round(ebitda * rng.uniform(0.15, 0.6), 1)
    debt = ebitda * net_leverage + cash
    revolver_size = round(debt * rng.uniform(0.25, 0.4), 0)
    revolver_drawn = round(revolver_size * rng.uniform(0.2, 0.7), 1)
    term_loan = round(debt - revolver_drawn, 1)
    interest = round(debt * rng.uniform(0.055, 0.082), 1)
    cfo = round(ebitda * rng.uniform(0.62, 0.8), 1)
    capex = round(revenue * rng.uniform(0.02, 0.05), 1)
    amortisation = term_loan * rng.choice([0.05, 0.075, 0.1])
    return Borrower(
        key=key,
        name=name,
        sector=SECTORS[second],
        ceo=rng.choice(CEOS),
        founded=rng.randint(1958, 2004),
        revenue_prior=revenue_prior,
        revenue=revenue,
        ebitda_prior=ebitda_prior,
        ebitda=ebitda,
        interest=interest,
        term_loan=term_loan,
        revolver_drawn=revolver_drawn,
        revolver_size=revolver_size,
        cash=cash,
        cfo=cfo,
        capex=capex,
        debt_service=round(amortisation + interest, 1),
        max_net_leverage=rng.choice([3.5, 3.75, 4.0, 4.5]),
        min_interest_cover=rng.choice([2.5, 3.0, 3.5]),
        top3_customers=rng.randint(14, 48),
        forecast_revenue=round(revenue * (1 + rng.uniform(-0.03, 0.09)), 1),
        forecast_ebitda=round(ebitda * (1 + rng.uniform(-0.08, 0.12)), 1),
        broker_ebitda=round(ebitda * rng.choice([0.86, 0.9, 1.1, 1.14]), 1),
        collateral_value=round(debt * rng.uniform(0.8, 1.6), 1),
        requested=round(revolver_size * rng.choice([1.0, 1.25, 1.5]), 0),
    )


# Key elements per section: what a correct draft must contain, with the numbers of the
# sources (SPEC §4 key_element_capture).
def key_elements(section: str, b: Borrower) -> list[str]:
    fy = FISCAL_YEAR
    table: dict[str, Callable[[], list[str]]] = {
        "transaction_overview": lambda: [
            f"Facility requested: {money(b.requested)} five-year senior secured revolver",
            "Purpose: refinance the existing revolver and fund working capital",
            f"FY{fy} EBITDA of {money(b.ebitda)}",
            f"Borrowings of {money(b.debt)} at 31 December {fy}",
        ],
        "borrower_profile": lambda: [
            f"Business: {b.sector}",
            f"Founded in {b.founded}",
            f"FY{fy} revenue of {money(b.revenue)}",
            f"Top three customers {b.top3_customers}% of FY{fy} revenue",
        ],
        "industry": lambda: [
            f"Sector: {b.sector}",
            f"Customer concentration of about {b.top3_customers}% (broker research)",
            f"Broker forecast FY{fy + 1} revenue {money(b.forecast_revenue)}, labelled as a "
            "forecast",
        ],
        "management": lambda: [
            f"Chief executive {b.ceo}, in post since {b.founded + 18}",
            f"Borrower founded in {b.founded}",
        ],
        "financial_performance": lambda: [
            f"FY{fy} revenue {money(b.revenue)} vs FY{fy - 1} {money(b.revenue_prior)} "
            f"({b.growth:+.1f}%)",
            f"FY{fy} EBITDA {money(b.ebitda)}, margin {b.margin:.1f}%",
            f"FY{fy - 1} EBITDA {money(b.ebitda_prior)}",
            f"FY{fy} free cash flow {money(b.fcf)}",
        ],
        "source_of_repayment": lambda: [
            "Primary source of repayment: operating cash flow",
            f"FY{fy} free cash flow {money(b.fcf)} (CFO {money(b.cfo)} less capex "
            f"{money(b.capex)})",
            f"FY{fy + 1} scheduled debt service {money(b.debt_service)}, covered "
            f"{b.fcf_cover:.2f}x",
            f"FY{fy} EBITDA {money(b.ebitda)}",
        ],
        "secondary_repayment": lambda: [
            "Secondary source: liquidation of pledged receivables, inventory and plant",
            f"Orderly liquidation value {money(b.collateral_value)} (November {fy})",
            f"Loan to value {b.loan_to_value:.0f}% on borrowings of {money(b.debt)}",
        ],
        "leverage": lambda: [
            f"Borrowings {money(b.debt)}: term loan {money(b.term_loan)}, revolver "
            f"{money(b.revolver_drawn)}",
            f"Cash {money(b.cash)} at 31 December {fy}",
            f"Net leverage {b.net_leverage:.2f}x FY{fy} EBITDA",
            f"Covenant maximum {b.max_net_leverage:.2f}x; headroom {b.leverage_headroom:.0f}%",
        ],
        "liquidity": lambda: [
            f"Cash {money(b.cash)} at 31 December {fy}",
            f"Undrawn revolver {money(b.revolver_size - b.revolver_drawn)} of "
            f"{money(b.revolver_size)}",
            f"Available liquidity {money(b.available_liquidity)}",
            f"FY{fy} free cash flow {money(b.fcf)}",
        ],
        "covenants": lambda: [
            f"Net leverage {b.net_leverage:.2f}x against a maximum of "
            f"{b.max_net_leverage:.2f}x (headroom {b.leverage_headroom:.0f}%)",
            f"Interest cover {b.interest_cover:.2f}x against a minimum of "
            f"{b.min_interest_cover:.2f}x",
            "Tested quarterly on a trailing twelve-month basis",
        ],
        "projections": lambda: [
            f"Broker forecast FY{fy + 1} EBITDA {money(b.forecast_ebitda)}, labelled as a "
            "third-party forecast",
            f"Reported FY{fy} EBITDA {money(b.ebitda)} as the base",
            f"Debt service {money(b.debt_service)} compared with FY{fy} free cash flow",
        ],
        "key_risks": lambda: [
            f"Customer concentration: top three customers {b.top3_customers}% of revenue",
            f"Covenant headroom on net leverage {b.leverage_headroom:.0f}%",
            f"Sector exposure: {b.sector}",
        ],
        "risk_rating": lambda: [
            f"Net leverage {b.net_leverage:.2f}x and interest cover {b.interest_cover:.2f}x "
            f"(FY{fy})",
            f"Free cash flow covers FY{fy + 1} debt service {b.fcf_cover:.2f}x",
            f"Loan to value {b.loan_to_value:.0f}%",
        ],
    }
    return table[section]()


def section_task(b: Borrower, section: str, split: str) -> dict[str, Any]:
    chunks = b.chunks()
    sources = [chunks[name] for name in SECTION_SOURCES[section]]
    elements = key_elements(section, b)
    cited = ", ".join(f"[{s['id']}]" for s in sources)
    return {
        "id": f"{b.key}-{section}",
        "split": split,
        "input": (
            f"Draft the '{SECTION_TITLES[section]}' section of the credit memo for "
            f"{b.name}, which requests a {money(b.requested)} revolving credit facility. Use "
            "only the permitted sources and cite the chunk id after each statement."
        ),
        "sources": sources,
        "key_elements": [
            {"id": f"ke{i}", "text": text} for i, text in enumerate(elements, start=1)
        ],
        "guidance": guidance(section),
        "reference": "; ".join(elements) + f". Sources: {cited}.",
        "metadata": {"borrower": b.name, "section": section, "fiscal_year": FISCAL_YEAR},
    }


def guidance(section: str, extra: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    items = []
    for item_id in [*SECTION_POLICY[section], *extra]:
        text, mandatory = POLICY[item_id]
        items.append({"id": item_id, "text": text, "mandatory": mandatory})
    return items


def stress_missing(b: Borrower, section: str, missing: str, what: str) -> dict[str, Any]:
    """A section whose key source is absent: the draft must say so, not invent it."""
    task = section_task(b, section, "stress")
    task["id"] = f"{b.key}-{section}-missing-{missing}"
    task["sources"] = [
        chunk
        for name, chunk in b.chunks().items()
        if name in SECTION_SOURCES[section] and name != missing
    ]
    task["key_elements"] = [
        {"id": "ke1", "text": f"States that the {what} is not in the permitted sources"},
        {"id": "ke2", "text": f"Gives no figure for the {what}"},
    ]
    extra = () if "CP-09" in SECTION_POLICY[section] else ("CP-09",)
    task["guidance"] = guidance(section, extra)
    task["reference"] = ""
    task["expected_abstention"] = True
    task["metadata"] |= {
        "stress": "missing_source",
        "missing": missing,
        "missing_chunk": b.chunks()[missing]["id"],
    }
    return task


def stress_conflict(b: Borrower, section: str) -> dict[str, Any]:
    """The audited filing and broker research disagree on FY EBITDA."""
    fy = FISCAL_YEAR
    task = section_task(b, section, "stress")
    task["id"] = f"{b.key}-{section}-conflict"
    research = dict(b.chunks()["research"])
    research["text"] += (
        f" On our numbers FY{fy} EBITDA was {money(b.broker_ebitda)}, a margin of "
        f"{100 * b.broker_ebitda / b.revenue:.1f}%."
    )
    task["sources"] = [s for s in task["sources"] if s["id"] != research["id"]] + [research]
    task["key_elements"] = [
        {
            "id": "ke1",
            "text": f"Notes that the annual report gives FY{fy} EBITDA of {money(b.ebitda)} "
            f"and the broker {money(b.broker_ebitda)}",
        },
        {"id": "ke2", "text": f"Uses the audited {money(b.ebitda)} for FY{fy} ratios"},
    ]
    task["guidance"] = guidance(section, ("CP-08",))
    task["reference"] = ""
    task["expected_abstention"] = False
    task["metadata"] |= {"stress": "conflicting_sources"}
    return task


def stress_not_determinable(b: Borrower, question: str, needs: str) -> dict[str, Any]:
    """A question the sources cannot answer ("not determinable")."""
    chunks = b.chunks()
    sources = [chunks[name] for name in ("income", "debt", "covenants")]
    return {
        "id": f"{b.key}-nd-{needs}",
        "split": "stress",
        "input": (
            f"For the credit memo of {b.name}: {question} Use only the permitted sources and "
            "cite the chunk id after each statement."
        ),
        "sources": sources,
        "key_elements": [
            {
                "id": "ke1",
                "text": f"States that the {needs.replace('_', ' ')} cannot be "
                "determined from the sources",
            },
            {"id": "ke2", "text": "Does not estimate or extrapolate a figure"},
        ],
        "guidance": guidance("projections", ("CP-01",)),
        "expected_abstention": True,
        "metadata": {
            "borrower": b.name,
            "section": "not_determinable",
            "fiscal_year": FISCAL_YEAR,
            "stress": "not_determinable",
        },
    }


def make_tasks(seed: int = SEED) -> list[dict[str, Any]]:
    """Return the example's tasks in file order: graded, then dev, then stress."""
    rng = random.Random(seed)  # noqa: S311 -- reproducible synthetic data, not secrets
    used: set[str] = set()
    graded = [make_borrower(rng, f"G{i}", used) for i in range(1, 6)]
    dev = [make_borrower(rng, f"D{i}", used) for i in range(1, 3)]
    stress = [make_borrower(rng, f"S{i}", used) for i in range(1, 4)]
    tasks = [section_task(b, section, "graded") for b in graded for section, _ in SECTIONS]
    dev_sections = [s for s, _ in SECTIONS]
    for b in dev:
        for section in rng.sample(dev_sections, 6):
            tasks.append(section_task(b, section, "dev"))
    s1, s2, s3 = stress
    tasks += [
        stress_missing(s1, "covenants", "covenants", "covenant limits and certified ratios"),
        stress_missing(s2, "source_of_repayment", "spread", "free cash flow and debt service"),
        stress_missing(s3, "liquidity", "debt", "cash and undrawn revolver position"),
        stress_missing(s1, "secondary_repayment", "collateral", "collateral valuation"),
        stress_conflict(s1, "financial_performance"),
        stress_conflict(s2, "leverage"),
        stress_conflict(s3, "risk_rating"),
        stress_conflict(s2, "projections"),
        stress_not_determinable(
            s1, f"What was the net leverage at 30 June {FISCAL_YEAR + 1}?", "mid_year_leverage"
        ),
        stress_not_determinable(
            s2, "What share of revenue comes from outside the United States?", "geographic_mix"
        ),
        stress_not_determinable(
            s3,
            f"How many employees did the borrower have at the end of FY{FISCAL_YEAR}?",
            "headcount",
        ),
        stress_not_determinable(
            s3, "What is the borrower's external credit rating?", "external_rating"
        ),
    ]
    return tasks


def render(tasks: list[dict[str, Any]]) -> str:
    """Return the JSONL text: one task per line, UTF-8, fields in the documented order."""
    return "".join(json.dumps(task, ensure_ascii=False) + "\n" for task in tasks)


def main() -> None:
    OUTPUT.write_text(render(make_tasks()), encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    main()
