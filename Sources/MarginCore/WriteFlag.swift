import Foundation

/// A flag set once, read from any thread (a write made, a time limit passed).
public final class WriteFlag: @unchecked Sendable {
    public init() {}
    private let lock = NSLock()
    private var value = false
    public func set() { lock.lock(); value = true; lock.unlock() }
    public var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    /// Runs `body` unless the flag is set, holding it meanwhile: a `set()` waits for it to end.
    public func unlessSet(_ body: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if !value { body() }
    }
}
