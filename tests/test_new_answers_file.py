"""``mt-eval new --answers FILE``: a file that cannot be opened is said to be that, not unreadable JSON; nothing is
written either way (exit 2)."""

from __future__ import annotations

from new_plugins import new


def test_an_answers_file_that_cannot_be_opened_says_why_and_what_to_give(tmp_path, capsys):
    """A missing file had been reported as "cannot read it as JSON: [Errno 2] No such file or directory: …"."""
    missing = tmp_path / "missing.json"
    assert new(str(tmp_path / "p"), "--no-input", "--answers", str(missing)) == 2
    err = capsys.readouterr().err
    assert (f"mt-eval new: --answers {missing}: cannot be read: No such file or directory; give a JSON file of "
            "answers, e.g. a plugin's .mt-eval-answers.json") in err
    assert "as JSON" not in err and "Errno" not in err
    assert new(str(tmp_path / "p"), "--no-input", "--answers", str(tmp_path)) == 2
    assert f"--answers {tmp_path}: cannot be read: Is a directory;" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()
