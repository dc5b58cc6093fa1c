"""`egi-bench import` stores its aggregated result in the app's database as well as on disk."""

from __future__ import annotations

import json

import pytest
from test_egi_cli import inputs, run_import, stored

from egibench.models import EgiResult
from egibench.selectors import latest_egi_for_model


@pytest.mark.django_db
def test_import_stores_the_result_in_the_database_too(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EGI_BENCH_DB", "1")
    assert run_import(tmp_path, inputs(tmp_path)) == 0
    (artifact,) = stored(tmp_path / "agg")
    row = EgiResult.objects.get()
    assert row.model_id == "gpt-4o"
    assert row.egi == pytest.approx(artifact["egi"])
    assert latest_egi_for_model("openai/gpt-4o") == row
    assert f"stored in the database: EGI result {row.pk}" in capsys.readouterr().out


def test_a_database_that_cannot_take_the_result_leaves_the_file_and_warns(
    tmp_path, monkeypatch, capsys
):
    # No database access in this test: the store fails and the command still succeeds.
    monkeypatch.setenv("EGI_BENCH_DB", "1")
    assert run_import(tmp_path, inputs(tmp_path)) == 0
    (artifact,) = stored(tmp_path / "agg")
    assert json.loads(json.dumps(artifact))["model"] == "gpt-4o"
    err = capsys.readouterr().err
    assert "is not stored in the database" in err
    assert "egi_import_results" in err
