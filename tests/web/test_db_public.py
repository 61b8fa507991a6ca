"""The games database routes on the public server do not show the server's own library (the ``mine``
collection: the games played on this data dir, with their notes). Before, anyone could list them with
``GET /api/db/search?source=mine`` and read each with ``GET /api/db/games/{id}``."""

from __future__ import annotations

import pytest
from tests.webclient import api_client, bare_client

from xiangqi.web.server import create_app


@pytest.fixture
def data_dir(tmp_path):
    """A data dir whose library holds one finished game, indexed in the games database as ``mine``."""
    app = create_app(tmp_path, warmup=False, engine_delay_s=0)
    with api_client(app) as c:
        c.post("/api/game/new", json={"red": "human", "black": "human"})
        c.post("/api/game/move", json={"move": "h2e2"})
        c.post("/api/game/move", json={"move": "h9g7"})
        c.post("/api/game/resign")
        assert app.state.games_db.wait_idle()
        (hit,) = c.get("/api/db/search", params={"source": "mine"}).json()["games"]
        assert hit["collection"] == "mine"  # the local server shows its owner their games
        assert c.get(f"/api/db/games/{hit['id']}").status_code == 200
    return tmp_path, hit["id"]


def test_public_server_hides_the_owners_games(data_dir) -> None:
    path, game_id = data_dir
    app = create_app(path, warmup=False, public=True)
    with bare_client(app) as c:
        assert app.state.games_db.wait_idle()
        r = c.get("/api/db/search", params={"source": "mine"})
        assert r.status_code == 404
        assert r.json()["detail"] == ("source: the 'mine' games (the server's own library) are not available "
                                      "on a public server")
        both = c.get("/api/db/search").json()
        assert both["games"] == [] and both["total"] == 0
        assert c.get(f"/api/db/games/{game_id}").status_code == 404
        explored = c.get("/api/explore").json()
        assert explored["games"] == 0 and explored["top"] == [] and explored["source"] == "master"
        assert c.get("/api/explore", params={"source": "mine"}).status_code == 404
        info = c.get("/api/db/info").json()
        assert info["mine"] == 0 and info["games"] == info["master"]
