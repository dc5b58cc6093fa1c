"""Splitting many outputs at once in worker processes gives the units of splitting each here."""

from __future__ import annotations

import os

import pytest

from runs.segment import build_units
from runs.segment_pool import Segmenter, default_processes, unit_rows, unit_rows_of

KEY_ELEMENTS = ("ke1", "ke2")
GUIDANCE = ("CP-01",)
TEXTS = [
    "Revenue was $203.9 million [c1]. Net leverage was 2.4x (covenant: 3.5x) [c2, c3].",
    "Kestrel Logistics Group Ltd. grew approx. 6.1% y/y [c1].\n\n- Cash: $13.0 million.\n"
    "- Debt [c2].",
    "",  # a failed output: its key-element and guidance units only
    "One sentence without a citation",
    "A long output. " * 400,  # 6,000 characters: the parts differ in size
    "Short [c9].",
]


def jobs() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return [(text, KEY_ELEMENTS, GUIDANCE) for text in TEXTS]


def reference() -> list[list[tuple]]:
    """Each text split on its own, here, by the splitter the product stores units from."""
    return [
        [
            (u.kind, u.key, u.position, u.text, u.ref_id, u.sentence_position)
            for u in build_units(text, key_element_ids=KEY_ELEMENTS, guidance_item_ids=GUIDANCE)
        ]
        for text in TEXTS
    ]


def test_a_unit_row_holds_the_fields_of_its_unit_in_the_models_order():
    rows = unit_rows(TEXTS[0], KEY_ELEMENTS, GUIDANCE)
    assert rows[0] == ("sentence", "s1", 1, "Revenue was $203.9 million.", "", 1)
    assert ("cited_chunk", "c2:c3", 3, rows[1][3], "c3", 2) in rows
    assert rows[-1] == ("guidance_item", "g:CP-01", 1, "", "CP-01", None)
    assert unit_rows("", (), ()) == []


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_worker_processes_return_every_jobs_units_in_the_order_submitted(processes):
    pending = Segmenter(processes, min_chars=0).submit(jobs())
    assert pending.result() == reference()


def test_batches_in_flight_at_once_each_get_their_own_units():
    segmenter = Segmenter(2, min_chars=0)
    batches = [jobs()[n:] for n in range(len(TEXTS))]
    pending = [segmenter.submit(batch) for batch in batches]
    for n, units in enumerate(pending):
        assert units.result() == reference()[n:]


def test_a_small_batch_is_split_in_this_process_with_the_same_result(monkeypatch):
    def no_pool(*_args, **_kwargs):
        raise AssertionError("a small batch must not go to the pool")

    monkeypatch.setattr("runs.segment_pool._pool", no_pool)
    assert Segmenter(2).submit(jobs()[:2]).result() == reference()[:2]
    assert Segmenter(0, min_chars=0).submit(jobs()).result() == reference()
    assert Segmenter(2, min_chars=0).submit([]).result() == []


def test_the_pool_is_reused_and_its_workers_are_other_processes():
    segmenter = Segmenter(2, min_chars=0)
    segmenter.warm()
    from runs import segment_pool

    pool = segment_pool._pool(2)
    assert segment_pool._pool(2) is pool
    assert os.getpid() not in {pool.submit(os.getpid).result() for _ in range(4)}


def test_a_broken_pool_is_replaced_on_the_next_batch():
    from runs import segment_pool

    pool = segment_pool._pool(2)
    with pytest.raises(Exception):  # noqa: B017 - the worker dies mid-task
        pool.submit(os._exit, 1).result()
    assert Segmenter(2, min_chars=0).submit(jobs()).result() == reference()
    assert segment_pool._pool(2) is not pool


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"processes": -1}, "processes must be a whole number ≥ 0, got -1"),
        ({"processes": True}, "processes must be a whole number ≥ 0, got True"),
        ({"processes": 2, "min_chars": -5}, "min_chars must be ≥ 0, got -5"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Segmenter(**kwargs)


def test_the_default_is_one_process_per_core_this_process_may_use():
    assert Segmenter().processes == default_processes() == len(os.sched_getaffinity(0))
    assert unit_rows_of([]) == []
