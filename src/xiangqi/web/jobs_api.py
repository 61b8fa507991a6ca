"""The page's setup jobs over HTTP (:mod:`xiangqi.app.tasks.jobs`): import the master games, make the tables.

- ``GET /api/jobs/{name}`` — the job's snapshot (:meth:`xiangqi.app.tasks.jobs.Job.snapshot`) plus what the
  page needs to decide whether to offer it: for ``masters`` ``{..., master_games}`` (master games in
  the games database now; 0 on a new install), for ``tablebases`` ``{..., tables, command}`` (tables
  present, and the command line that does the same work in a terminal, the README's).
- ``POST /api/jobs/{name}`` — start it (202 with the snapshot; 409 when it runs already).
- ``POST /api/jobs/{name}/cancel`` — ask it to stop (its finished part stays; 409 when nothing runs).

``name`` is ``masters`` or ``tablebases`` (anything else: 404). Local server only: the public server
(``xiangqi serve --public``) has no such routes (its operator sets it up from the command line), so
there they answer 404 like any unknown path.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse

from xiangqi.app.tasks.jobs import DEFAULT_TB_MAX_INDICES, Job, masters_job, tablebases_job

__all__ = ["create_router", "TB_COMMAND"]

#: The command of the README that generates the same tables in a terminal.
TB_COMMAND = f"xiangqi tb generate --default --max-indices {DEFAULT_TB_MAX_INDICES}"

JobName = Literal["masters", "tablebases"]


def create_router(app: Any, hub: Any, store: Any) -> APIRouter:
    """The jobs router of ``app``; the jobs become ``app.state.jobs`` (``{name: Job}``). Needs
    ``app.state.games_db`` (:func:`xiangqi.web.db_api.create_db_router` first)."""
    gate = hub.player.gate
    tb_dir = store.data_dir / "tablebases"
    jobs = {"masters": Job("masters", masters_job(app.state.games_db), gate),
            "tablebases": Job("tablebases", tablebases_job(tb_dir), gate)}
    app.state.jobs = jobs

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any):
        yield
        for job in jobs.values():  # stop at the next step; what is finished stays
            job.cancel()
        await asyncio.to_thread(lambda: [job.join(30) for job in jobs.values()])

    router = APIRouter(lifespan=lifespan)

    def extra(name: str) -> dict[str, Any]:
        if name == "masters":
            gdb = app.state.games_db
            if not gdb.exists():
                return {"master_games": 0}
            from sqlalchemy import func, select

            from xiangqi.db.schema import games
            from xiangqi.db.search import MINE

            with gdb.engine().connect() as conn:
                n = conn.execute(select(func.count()).select_from(games)
                                 .where(games.c.collection != MINE)).scalar_one()
            return {"master_games": int(n)}
        from xiangqi.engine.tablebase import Tablebase

        return {"tables": len(Tablebase(tb_dir).available()), "command": TB_COMMAND}

    async def view(name: str) -> dict[str, Any]:
        from xiangqi.db.database import DatabaseError

        snap = jobs[name].snapshot()
        try:
            snap.update(await asyncio.to_thread(extra, name))
        except DatabaseError as exc:
            raise HTTPException(503, f"the games database cannot be used: {exc}") from None
        return snap

    @router.get("/api/jobs/{name}")
    async def get_job(name: JobName) -> dict[str, Any]:
        return await view(name)

    @router.post("/api/jobs/{name}", status_code=202)
    async def start_job(name: JobName) -> dict[str, Any]:
        if not jobs[name].start():
            raise HTTPException(409, f"{name}: already running")
        return await view(name)

    @router.post("/api/jobs/{name}/cancel")
    async def cancel_job(name: JobName) -> JSONResponse:
        if not jobs[name].cancel():
            raise HTTPException(409, f"{name}: not running")
        return JSONResponse(await view(name))

    return router
