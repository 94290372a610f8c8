"""What the host keeps of a child's stderr: the last lines, and what came after a mark, without a character cut in
two (a program's message in Spanish or Japanese reads as it was written, with no U+FFFD at its start)."""

from __future__ import annotations

import logging

from mt_eval.child_stderr import StderrTail, last_lines


def tail_of(*chunks: bytes, max_bytes: int = 64) -> StderrTail:
    tail = StderrTail(logging.getLogger("test.child_stderr"), "child", max_bytes=max_bytes)
    for chunk in chunks:
        tail.feed(chunk)
    return tail


def test_the_tail_keeps_the_last_lines_and_drops_a_character_cut_at_its_start():
    tail = tail_of("ñ".encode() * 100, b"\nno se puede leer el diccionario\n")
    text = tail.tail()
    assert text.endswith("no se puede leer el diccionario")
    assert "\ufffd" not in text and text.startswith("ñ")


def test_what_came_after_a_mark_starts_at_a_whole_character():
    tail = tail_of("línea uno\n".encode())
    mark = tail.total
    tail.feed("辞書".encode() * 40 + b"\nreload\n")  # more than the kept bytes: the first character kept is cut
    since = tail.since(mark)
    assert "\ufffd" not in since and since.startswith("辞") and since.endswith("reload\n")


def test_a_mark_inside_a_character_gives_the_characters_after_it():
    tail = tail_of("é".encode()[:1])
    mark = tail.total
    tail.feed("é".encode()[1:] + "tat changé\n".encode())
    assert tail.since(mark) == "tat changé\n"


def test_nothing_after_the_last_mark_is_empty():
    tail = tail_of(b"done\n")
    assert tail.since(tail.total) == ""


def test_last_lines_joins_the_telling_lines_without_node_trace_hints():
    text = ("Error: no model\n(Use `node --trace-warnings ...` to show where the warning was created)\n"
            "    at load (translate.js:3)\n")
    assert last_lines(text) == "Error: no model /     at load (translate.js:3)"


def test_last_lines_leave_out_the_node_guests_report_of_a_call_it_answered_failed():
    """Its call's error says it already; a crash after it was explained by that call's stack frames."""
    text = ("mt-eval-guest: translate failed: Error: asked to raise\n"
            "mt-eval-guest:     at Object.translate (translate.js:13:44)\n"
            "mt-eval-guest:     at GuestServer.run (guest.js:352:42)\n"
            "mt-eval-guest: methodCard() failed: Error: no card\n"
            "exiting on purpose\n"
            "mt-eval-guest: decide failed: thrown: 3\n")
    assert last_lines(text) == "mt-eval-guest: methodCard() failed: Error: no card / exiting on purpose"


def test_last_lines_leave_out_the_whole_report_of_a_failed_call_whose_message_has_several_lines():
    """Each line of the report carries the kit's name; before, its second line and the frames under it were quoted
    as if the crash had said them. A kit line after the frames is not part of it."""
    text = ("mt-eval-guest: translate failed: Error: the service answered 503\n"
            "mt-eval-guest: retry later\n"
            "mt-eval-guest:     at Object.translate (translate.js:13:44)\n"
            "mt-eval-guest: methodCard() failed: Error: no card\n"
            "mt-eval-guest: decide failed: thrown: 3\n"
            "mt-eval-guest: still the thrown text\n"
            "exiting on purpose\n")
    assert last_lines(text) == ("mt-eval-guest: methodCard() failed: Error: no card / mt-eval-guest: still the thrown "
                                "text / exiting on purpose")


def test_a_tail_cut_in_a_shift_jis_or_gbk_character_shows_no_other_character_for_its_bytes_left():
    """In Shift_JIS the last byte of "デ" is an "f": before, a tail cut after its first byte began "fルが…"; in GBK
    the bytes left of a cut character turned the whole line into other characters ("薹ǘ寥…")."""
    tail = StderrTail(logging.getLogger("test.child_stderr"), "child", max_bytes=41, encoding="shift_jis")
    tail.feed("モデルがありません".encode("shift_jis") * 4 + "\nモデル\n".encode("shift_jis"))
    # (its last 41 bytes begin with the last byte of the third "デ")
    assert tail.tail() == "ルがありませんモデルがありません\nモデル"
    gbk = StderrTail(logging.getLogger("test.child_stderr"), "child", max_bytes=21, encoding="gbk")
    gbk.feed("无法读取词典".encode("gbk") * 4 + b"\nno model\n")
    # (its first 37 bytes are no longer kept: of the line cut, nothing tells where characters begin, it is left out)
    assert gbk.tail() == "\nno model"


def test_a_mark_inside_a_shift_jis_character_gives_the_characters_after_it():
    tail = StderrTail(logging.getLogger("test.child_stderr"), "child", encoding="shift_jis")
    tail.feed(b"reload: " + "デ".encode("shift_jis")[:1])
    mark = tail.total
    tail.feed("デ".encode("shift_jis")[1:] + "ータ\n".encode("shift_jis"))
    assert tail.since(mark) == "ータ\n"
    assert tail.since(mark - 1) == "データ\n"
