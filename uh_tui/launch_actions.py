"""What the keys launch: ``uh-core`` subprocesses in thread workers (``uh_tui.launch``),
their pickers and confirmations; what the commands do arrives through the event log."""

from __future__ import annotations

import contextlib

from rich.text import Text
from textual import work

from uh_tui import launch as launches
from uh_tui.launch import Launch, LaunchResult
from uh_tui.live_app import LiveApp


class LaunchingApp(LiveApp):
    """Each launch key's action; a launch's start and end on the status line."""

    def start(self, launch: Launch) -> None:
        key = launch.target or launch.action
        self.launch_errors.pop(key, None)
        self.launching[key] = launch.action
        self.in_flight.append(launch)
        self.say(Text(f"▶ {launch.command}", style="cyan"))
        self.refresh_views()
        self._launch(launch)

    @work(thread=True, group="launch")
    def _launch(self, launch: Launch) -> None:
        result = self.launcher.launch(launch)
        with contextlib.suppress(RuntimeError):  # the app has gone (it quit, leaving it running)
            self.call_from_thread(self._launched, result)

    def _launched(self, result: LaunchResult) -> None:
        launch = result.launch
        key = launch.target or launch.action
        self.launching.pop(key, None)
        if launch in self.in_flight:
            self.in_flight.remove(launch)
        self.results.append(result)
        if not self.is_running:
            return  # it ended while the app shuts down: no screen to tell
        if result.error:
            self.launch_errors[key] = result.error
            self.say(Text(f"✗ {launch.title}: {result.error}", style="bold red"), result)
        else:
            note = f": {result.message}" if result.message else ""
            ended = f"■ {launch.title} ended (exit {result.returncode}){note}"
            self.say(Text(ended, style="dim"), result)
        self.refresh_views()
        self.action_reload()

    def action_verify(self) -> None:
        mission = self.current_mission()
        if mission:
            self.start(launches.verify(self.root, mission))

    def action_run(self) -> None:
        from uh_tui.screens.picker import PickerScreen, runtime_options

        mission = self.current_mission()
        if not mission:
            return
        options = runtime_options(self.root, self.snapshot.runtimes)
        if not options:
            self.say(Text("no runtimes: add a manifest in .harness/adapters/", style="bold red"))
            return

        def chosen(runtime: str | None) -> None:
            if runtime:
                self.start(launches.run(self.root, mission, runtime))

        self.push_screen(PickerScreen(f"Run {mission} on which runtime?", options), chosen)

    def action_run_all(self) -> None:
        mission = self.current_mission()
        if mission:
            self.start(launches.run_all(self.root, mission))

    def action_harness(self) -> None:
        self.start(launches.harness_run(self.root))

    def harness_only(self, mission: str) -> None:
        self.start(launches.harness_run(self.root, "--req", mission))

    def action_cancel(self) -> None:
        """``c``: stop what the selection is running — its harness run (a harness row, or a
        mission the harness is working on), else the mission's own run."""
        run_id = self.harness_run_to_cancel()
        if run_id is not None:
            self.start(launches.harness_cancel(self.root, run_id))
            return
        mission = self.current_mission()
        if mission:
            self.start(launches.cancel(self.root, mission))

    def harness_run_to_cancel(self) -> str | None:
        """The harness run ``c`` stops, from the snapshot (the audit log's
        ``harness.run.started``): "" when one is in progress but its id is not known yet;
        None when ``c`` is for the mission's own run (a runtime, a verify)."""
        mission_id = self.current_mission()
        board = self.dashboard()
        harness = self.snapshot.harness
        if board is not None and self.main_screen() is board and board.view == "harness":
            row = next((r for r in harness.requirements if r.mission_id == mission_id), None)
            if row is None or row.outcome not in ("running", "parked"):
                return None
            return row.run_id or harness.running or ""
        mission = self.snapshot.mission(mission_id)
        if mission is None or mission.harness is None or mission.harness.status != "running":
            return None
        if any(r.status == "running" for r in mission.runtimes):
            return None  # a runtime run of its own: mission cancel stops that
        return mission.harness.run_id or harness.running or ""

    def action_answer(self) -> None:
        """``A``: answer the selected mission's hand-over (``uh-core harness answer``)."""
        from uh_tui.screens.ask import AskScreen

        mission_id = self.current_mission()
        mission = self.snapshot.mission(mission_id) if mission_id else None
        if mission is None or not mission.handover:
            self.say(Text("nothing to answer: the selected mission is not handed over", "dim"))
            return
        row = next(
            (r for r in self.snapshot.harness.requirements if r.mission_id == mission.mission_id),
            None,
        )
        reason = row.reason if row is not None and row.outcome == "blocked" else None
        lines = (mission.handover, *((reason,) if reason else ()))

        def answered(text: str | None) -> None:
            if text:
                self.start(launches.answer(self.root, mission.mission_id, text))

        title = f"Answer {mission.mission_id}'s hand-over"
        hint = "what the agent should do next (Enter sends, Escape cancels)"
        self.push_screen(AskScreen(title, lines, hint), answered)

    def action_steer(self) -> None:
        """``s``: a message to the agent working on the selected mission now — its harness
        run's, or a ``mission run``'s (one of several picked first) — sent by ``uh-core
        mission steer``; its run delivers it when the agent's turn ends."""
        from uh_tui.screens.picker import PickerScreen

        mission_id = self.current_mission()
        mission = self.snapshot.mission(mission_id) if mission_id else None
        harness = mission.harness if mission is not None else None
        if mission is not None and harness is not None and harness.status == "running":
            self._ask_steer(mission.mission_id, None, f"harness run {harness.run_id}")
            return
        running = [r.runtime for r in mission.runtimes if r.status == "running"] if mission else []
        if mission is None or not running:
            self.say(Text("nothing to steer: no agent works on the selected mission", "dim"))
            return
        if len(running) == 1:
            self._ask_steer(mission.mission_id, running[0], f"mission run on {running[0]}")
            return

        def chosen(runtime: str | None) -> None:
            if runtime:
                self._ask_steer(mission.mission_id, runtime, f"mission run on {runtime}")

        options = [(name, name, True) for name in running]
        self.push_screen(PickerScreen(f"Steer which agent on {mission_id}?", options), chosen)

    def _ask_steer(self, mission_id: str, runtime: str | None, where: str) -> None:
        from uh_tui.screens.ask import AskScreen

        lines = (where, "delivered when the agent's turn ends: it continues in its sandbox")

        def said(text: str | None) -> None:
            if text:
                self.start(launches.steer(self.root, mission_id, text, runtime))

        title = f"Steer the agent on {mission_id}"
        hint = "what the agent should do now (Enter sends, Escape cancels)"
        self.push_screen(AskScreen(title, lines, hint), said)

    def action_discard(self) -> None:
        from uh_tui.screens.picker import PickerScreen

        screen = self.main_screen()
        sandbox = screen.selected_sandbox() if screen is not None else None  # type: ignore[attr-defined]
        if sandbox:
            self.confirm_discard(sandbox)
            return
        mission = self.current_mission()
        sandboxes = [s for s in self.snapshot.sandboxes if s.mission_id == mission] or list(
            self.snapshot.sandboxes
        )
        if not sandboxes:
            self.say(Text("no sandboxes to discard", style="dim"))
            return
        options = [
            (s.id, f"{s.id}  {s.runtime or '-'}" + ("  (in use)" if s.in_use else ""), True)
            for s in sandboxes
        ]

        def chosen(sandbox_id: str | None) -> None:
            if sandbox_id:
                self.confirm_discard(sandbox_id)

        self.push_screen(PickerScreen("Discard which sandbox?", options), chosen)

    def action_review(self) -> None:
        """``p``: review what the selected runtime (its sandbox), harness row (its
        ``harness/<id>`` branch) or sandbox produced; elsewhere the mission's only candidate."""
        from uh_tui.screens.review import ReviewScreen
        from uh_tui.screens.runtime import RuntimeScreen

        if isinstance(self.screen, ReviewScreen):
            return
        mission = self.current_mission()
        if not mission:
            return
        sandbox: str | None = None
        branch: str | None = None
        screen = self.main_screen()
        board = self.dashboard()
        if isinstance(screen, RuntimeScreen):
            sandbox = screen.selected_sandbox()
        elif screen is board and board is not None:
            if board.view == "harness":
                branch = f"harness/{mission}"
            elif board.view in ("runtimes", "sandboxes"):
                sandbox = board.selected_sandbox()
        self.push_screen(ReviewScreen(self.snapshot, mission, sandbox_id=sandbox, branch=branch))

    def confirm_discard(self, sandbox_id: str) -> None:
        from uh_tui.screens.confirm import ConfirmScreen

        found = next((s for s in self.snapshot.sandboxes if s.id == sandbox_id), None)
        detail = f"{found.worktree} and its index entry are removed." if found else ""
        if found and found.in_use:
            detail += " It is in use by a running run: uh-core will refuse."

        def answered(yes: bool | None) -> None:
            if yes:
                self.start(launches.discard(self.root, sandbox_id))

        self.push_screen(
            ConfirmScreen(f"Discard sandbox {sandbox_id}?", detail, yes="Discard", no="Keep"),
            answered,
        )
