"""Web layer: the local FastAPI server and the static browser front end (SVG board, no build step)."""

from xiangqi.web.server import create_app

__all__ = ["create_app"]
