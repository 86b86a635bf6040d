import Foundation
import MarginCore

/// The memory tier of the cache: a few opened documents, least recently used dropped first, so
/// that a command touching many pages or books doesn't reopen and reparse files. Poppler
/// documents are not thread-safe: the body runs while holding the cache's lock.
final class DocumentCache: @unchecked Sendable {
    private let lock = NSLock()
    private let capacity: Int
    private var entries: [(key: String, entry: Entry)] = []

    /// One open document and the lock its users take turns with: work on one document is
    /// serialised, work on different documents runs in parallel.
    private final class Entry: @unchecked Sendable {
        let lock = NSLock()
        var document: (any PDFDocument)?
        /// Users waiting for their turn (counted under the cache's lock; for tests).
        var waiting = 0
    }

    init(capacity: Int = 4) {
        self.capacity = capacity
    }

    /// Runs `body` with the document at `path`, opened once per process while it stays in use.
    func withDocument<T>(path: String, password: String?, _ body: (any PDFDocument) throws -> T) throws -> T {
        let key = path + "\u{0}" + (password ?? "")
        lock.lock()
        let entry: Entry
        if let index = entries.firstIndex(where: { $0.key == key }) {
            let found = entries.remove(at: index)
            entries.append(found)
            entry = found.entry
        } else {
            entry = Entry()
            entries.append((key, entry))
            // One dropped while in use stays open for its user, then goes.
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
        entry.waiting += 1
        lock.unlock()
        entry.lock.lock()
        defer { entry.lock.unlock() }
        lock.withLock { entry.waiting -= 1 }
        if let document = entry.document { return try body(document) }
        let document: any PDFDocument
        do {
            document = try PDFEngines.current.open(path: path, password: password)
        } catch {
            // A file that can't be opened is not kept: the next caller tries again.
            lock.lock()
            entries.removeAll { $0.entry === entry }
            lock.unlock()
            throw error
        }
        entry.document = document
        return try body(document)
    }

    /// How many users wait for their turn with the document at `path` (for tests).
    func waiting(path: String, password: String? = nil) -> Int {
        let key = path + "\u{0}" + (password ?? "")
        return lock.withLock { entries.first { $0.key == key }?.entry.waiting ?? 0 }
    }

    /// How many documents are open (for tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.filter { $0.entry.document != nil }.count
    }
}
