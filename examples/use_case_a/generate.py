"""Write every generated file of the Use Case A example (seed 003 §7.1; A2 / C3 / E3).

``python -m examples.use_case_a.generate`` rewrites ``tasks.jsonl``, the loopback model's
replies for the executed σ, the imported σ's outputs and both σ's planted truth; a test checks
that the committed files equal what the generators produce (same seed, same bytes).
"""

from __future__ import annotations

from examples.use_case_a import make_outputs, make_tasks


def expected_files() -> dict[str, str]:
    """Return file name → content of every generated file, the task set first."""
    return {"tasks.jsonl": make_tasks.render(make_tasks.make_tasks())} | (
        make_outputs.expected_files()
    )


def main() -> None:
    tasks = make_tasks.render(make_tasks.make_tasks())
    (make_tasks.HERE / "tasks.jsonl").write_text(tasks, encoding="utf-8")
    for name, content in make_outputs.expected_files().items():
        (make_tasks.HERE / name).write_text(content, encoding="utf-8")
    for name in expected_files():
        print(f"wrote examples/use_case_a/{name}")


if __name__ == "__main__":
    main()
