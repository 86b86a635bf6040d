import Foundation
import MarginCore

/// Ctrl-C without tearing anything: the work that places a file in the cache and records it in
/// the database runs as one critical section, and an interrupt waits for it to finish before
/// the process ends. The process then ends with `_exit`, which runs no destructors while other
/// threads may still be inside poppler.
public enum Interruption {
    private static let lock = NSRecursiveLock()

    /// Runs `body` so that an interrupt can't end the process in the middle of it.
    static func critical<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Ends the process with `code` once no critical section is running.
    public static func exit(_ code: Int32) -> Never {
        lock.lock()
        _exit(code)
    }
}
