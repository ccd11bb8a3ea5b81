"""The progress line (cli/progress.py): what it draws, when, and that it fits the terminal."""

from cli import progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_nothing_is_drawn_in_the_first_second_then_the_line_is_redrawn_and_erased(capsys):
    clock = Clock()
    ticker = progress.Ticker("--text 'Order confirmed'", 30000, clock=clock)
    clock.now += 0.9
    ticker()
    assert capsys.readouterr().err == ""
    clock.now += 2.3
    ticker()
    ticker()  # the same text is not written twice
    assert capsys.readouterr().err == "\r… waiting for --text 'Order confirmed' (3.2 s of 30 s)\x1b[K"
    ticker.clear()
    assert capsys.readouterr().err == "\r\x1b[K"


def test_a_narrow_terminal_cuts_the_awaited_words_never_the_time():
    ticker = progress.Ticker("the browser to allow remote debugging (click Allow if asked)", 60000, clock=Clock())
    line = ticker.line(12.34, width=50)
    assert len(line) == 49 and line.endswith("… (12.3 s of 60 s)"), line
    assert ticker.line(1.0).endswith("(click Allow if asked) (1.0 s of 60 s)")


def test_control_characters_never_reach_the_terminal():
    ticker = progress.Ticker("--text 'a\x1b[2Jb\rc'", clock=Clock())
    assert ticker.line(1.5) == "… waiting for --text 'a?[2Jb?c' (1.5 s)"


def test_no_ticker_when_nothing_is_expected_or_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "_expected", None)
    assert progress.ticker() is None
    progress.expect("the PDF of the page", 5000)
    assert progress.ticker() is None  # pytest's captured stderr is no terminal
