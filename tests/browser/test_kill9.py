"""The autosave survives ``kill -9`` of the server in the middle of a game: no move is lost."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from xiangqi.web.run import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.ci]  # a subprocess server: ~10 s

MOVES = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b0c2"]
MOVES_ZH = ["炮二平五", "马8进7", "马二进三", "车9平8", "车一平二", "马2进3", "马八进七"]


def serve(data_dir, port):
    env = {**os.environ, "XIANGQI_DATA_DIR": str(data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "xiangqi.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert "serving the game at" in line, line
    return proc


def test_kill_9_loses_no_move(tmp_path, driver, page):
    port = free_port()
    proc = serve(tmp_path, port)
    try:
        driver.open(f"http://127.0.0.1:{port}/")
        driver.new_game("two")
        for i, mv in enumerate(MOVES):
            driver.play(mv, i + 1)  # the page shows a move only after the server has committed it
        proc.kill()  # SIGKILL: no shutdown code runs
        proc.wait(timeout=60)
        page.wait_for_selector("body[data-connected='0']")
        proc = serve(tmp_path, port)
        page.wait_for_selector("body[data-connected='1']")
        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        assert driver.move_texts() == MOVES_ZH
        expect(page.locator(".xq-piece[data-sq='c2']")).to_have_attribute("data-piece", "N")
        driver.play("b7b3", 8)  # and the game goes on
        assert driver.move_texts()[-1] == "炮2进4"
    finally:
        proc.kill()
        proc.wait(timeout=60)
