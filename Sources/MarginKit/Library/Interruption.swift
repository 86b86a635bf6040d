import Foundation
import MarginCore

/// Ctrl-C without tearing anything: the work that places a file in the cache and records it in
/// the database runs as one critical section, and an interrupt waits for it to finish before
/// the process ends. The process then ends with `_exit`, which runs no destructors while other
/// threads may still be inside poppler.
public enum Interruption {
    private static let lock = NSLock()
    /// Critical sections running now (they may suspend, and several tasks may be in one).
    nonisolated(unsafe) private static var running = 0
    /// Set once the process is ending: no critical section starts after it.
    nonisolated(unsafe) private static var ending = false

    /// Runs `body` so that an interrupt can't end the process in the middle of it.
    static func critical<T>(_ body: () async throws -> T) async rethrows -> T {
        guard enter() else {
            // The process is ending: this section never starts. The task waits without holding
            // a thread, so the sections already running can finish and let the process end.
            while true { await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in } }
        }
        defer { leave() }
        return try await body()
    }

    /// Counts a section in, unless the process is ending.
    private static func enter() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !ending else { return false }
        running += 1
        return true
    }

    private static func leave() {
        lock.lock()
        running -= 1
        lock.unlock()
    }

    /// Ends the process with `code` once no critical section is running.
    public static func exit(_ code: Int32) -> Never {
        lock.lock()
        ending = true
        lock.unlock()
        while true {
            lock.lock()
            let busy = running > 0
            lock.unlock()
            if !busy { _exit(code) }
            usleep(2_000)
        }
    }
}
