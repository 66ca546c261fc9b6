"""The command palette (ctrl+p): every action of the keys, plus "open mission X" and
"discard sandbox Y" for each one, with the exact ``uh-core`` command as help."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from uh_tui.launch import harness_cancel

if TYPE_CHECKING:
    from uh_tui.app import UhApp

Command = tuple[str, Callable[[], object], str]


class UhCommands(Provider):
    def _commands(self) -> list[Command]:
        app = cast("UhApp", self.app)
        if not app.snapshot.has_harness:
            return []
        root = app.root
        mission = app.current_mission()
        commands: list[Command] = []
        if mission:
            commands += [
                (f"Verify {mission}", app.action_verify, f"uh-core verify {mission} --root {root}"),
                (f"Run {mission} on a runtime…", app.action_run, "uh-core mission run"),
                (f"Run {mission} on every runtime", app.action_run_all, "uh-core mission run-all"),
                (
                    f"Cancel what {mission} is running",
                    app.action_cancel,
                    "uh-core harness cancel RUN (its harness run) or mission cancel",
                ),
                (
                    f"Review and promote what {mission} produced…",
                    app.action_review,
                    "uh-core promote",
                ),
                (
                    f"Harness run: only {mission}",
                    partial(app.harness_only, mission),
                    f"uh-core harness run --req {mission}",
                ),
            ]
        view = app.snapshot.mission(mission) if mission else None
        if view is not None and view.handover:
            commands.append(
                (
                    f"Answer {mission}'s hand-over…",
                    app.action_answer,
                    f'uh-core harness answer {mission} "…"',
                )
            )
        at_work = view is not None and (
            (view.harness is not None and view.harness.status == "running")
            or any(r.status == "running" for r in view.runtimes)
        )
        if at_work:
            commands.append(
                (
                    f"Steer the agent working on {mission}…",
                    app.action_steer,
                    f'uh-core mission steer {mission} "…"',
                )
            )
        running = app.snapshot.harness.running
        if running:
            commands.append(
                (
                    "Cancel the harness run in progress",
                    partial(app.start, harness_cancel(root, running)),
                    f"uh-core harness cancel {running}",
                )
            )
        commands += [
            ("Harness run: every pending mission", app.action_harness, "uh-core harness run"),
            ("Discard a sandbox…", app.action_discard, "uh-core sandbox discard"),
            ("Show missions", partial(app.show_view, "missions"), "view 1"),
            ("Show runtimes", partial(app.show_view, "runtimes"), "view 2"),
            ("Show harness", partial(app.show_view, "harness"), "view 3"),
            ("Show sandboxes", partial(app.show_view, "sandboxes"), "view 4"),
            ("Filter…", app.action_filter, "/"),
            ("Messages and command output", app.action_messages, "m"),
            ("Keys", app.action_help, "?"),
        ]
        for view in app.snapshot.missions:
            commands.append(
                (
                    f"Open mission {view.mission_id}",
                    partial(app.open_mission, view.mission_id),
                    view.title,
                )
            )
        for sandbox in app.snapshot.sandboxes:
            commands.append(
                (
                    f"Discard sandbox {sandbox.id}",
                    partial(app.confirm_discard, sandbox.id),
                    f"uh-core sandbox discard {sandbox.id}",
                )
            )
        return commands

    async def discover(self) -> Hits:
        for name, callback, help_text in self._commands():
            if name.startswith(("Open mission", "Discard sandbox")):
                continue
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
