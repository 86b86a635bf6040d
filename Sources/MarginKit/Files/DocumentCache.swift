import Foundation
import MarginCore
import Poppler

/// The memory tier of the cache: a few opened documents, least recently used dropped first, so
/// that a command touching many pages or books doesn't reopen and reparse files. Poppler
/// documents are not thread-safe: the body runs while holding the cache's lock.
final class DocumentCache: @unchecked Sendable {
    private let lock = NSLock()
    private let capacity: Int
    private var entries: [(key: String, document: Document)] = []

    init(capacity: Int = 4) {
        self.capacity = capacity
    }

    /// Runs `body` with the document at `path`, opened once per process while it stays in use.
    func withDocument<T>(path: String, password: String?, _ body: (Document) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        let key = path + "\u{0}" + (password ?? "")
        if let index = entries.firstIndex(where: { $0.key == key }) {
            let entry = entries.remove(at: index)
            entries.append(entry)
            return try body(entry.document)
        }
        let document = try Document(path: path, password: password)
        entries.append((key, document))
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        return try body(document)
    }

    /// How many documents are open (for tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
