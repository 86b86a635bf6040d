import Foundation
import MarginCore

/// Every trick margin's start-up plays for speed, in one place, each with a switch that turns
/// it off: `MARGIN_PLAIN=one-thread,quick-parse` (or `MARGIN_PLAIN=all`). What each saves is
/// measured by `bench/startup-tricks.py` (a command with all on, then with each off) and
/// reported in `bench/RESULTS.md`; a trick that saves less than a user would notice goes (so
/// went parsing without ArgumentParser's completion-script check, 0.2–0.6 ms; finding a parsed
/// command's type in a table instead of asking the runtime, 0.1–0.2 ms; and one malloc arena
/// for single-threaded commands, 0.0–0.3 ms).
///
/// Not switched here: the split into `margin` and `margin-full` (measured by the bench as
/// `margin` against `margin-full` running the same command) and poppler's lazy loading (bound
/// at link time; `lazy-poppler` off loads poppler before the command runs instead).
enum StartupTrick: String, CaseIterable, Sendable {
    /// `margin` runs its async work on its own thread (`OneThread`), not on Dispatch's threads.
    case oneThread = "one-thread"
    /// poppler-glib loaded when the first PDF is opened, not before every command.
    case lazyPoppler = "lazy-poppler"

    /// Whether this trick is played (it is unless `MARGIN_PLAIN` names it).
    var isOn: Bool { FastPaths.isOn(rawValue) }
}
