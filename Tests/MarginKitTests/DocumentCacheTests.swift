import Foundation
import MarginCore
import Poppler
import TestSupport
import Testing

@testable import MarginKit

@Suite struct DocumentCacheTests {
    init() { PDFEngines.install(PopplerEngine()) }

    /// A command touching many pages of a book opens it once; the least recently used document
    /// goes when the cache is full.
    @Test func keepsAFewDocumentsOpen() throws {
        let cache = DocumentCache(capacity: 2)
        for _ in 0..<3 {
            _ = try cache.withDocument(path: Fixtures.pdf("sample.pdf"), password: nil) { $0.pageCount }
        }
        #expect(cache.count == 1)
        _ = try cache.withDocument(path: Fixtures.pdf("second.pdf"), password: nil) { $0.pageCount }
        _ = try cache.withDocument(path: Fixtures.pdf("mixed.pdf"), password: nil) { $0.pageCount }
        #expect(cache.count == 2)
        let pages = try cache.withDocument(path: Fixtures.pdf("encrypted.pdf"), password: "secret") { $0.pageCount }
        #expect(pages == 2)
        #expect(throws: (any Error).self) {
            try cache.withDocument(path: Fixtures.pdf("encrypted.pdf"), password: nil) { $0.pageCount }
        }
    }

    /// A server renders many books at once: work on one document waits for the work already on
    /// it (poppler's objects are not thread-safe), work on another document does not.
    @Test func workOnOneDocumentTakesTurnsOtherDocumentsRunAlongside() throws {
        let cache = DocumentCache(capacity: 4)
        let first = Fixtures.pdf("sample.pdf")
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let order = Events()
        DispatchQueue.global().async {
            _ = try? cache.withDocument(path: first, password: nil) { document in
                order.add("A in")
                holding.signal()
                release.wait()
                order.add("A out")
                return document.pageCount
            }
        }
        holding.wait()
        // Another book opens and is read while A is held; if documents shared one lock, this
        // would wait for A forever (the test's time limit would end it).
        let pages = try cache.withDocument(path: Fixtures.pdf("second.pdf"), password: nil) { $0.pageCount }
        order.add("B done")
        #expect(pages > 0)
        // The same book waits for A to finish.
        let sameDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? cache.withDocument(path: first, password: nil) { _ in order.add("A again") }
            sameDone.signal()
        }
        // Once the second user is seen waiting for its turn (A holds the document until it is let
        // go, so it must wait), A goes.
        while cache.waiting(path: first) == 0 { sched_yield() }
        release.signal()
        sameDone.wait()
        #expect(order.all == ["A in", "B done", "A out", "A again"])
    }
}

private final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events = [String]()
    func add(_ event: String) { lock.lock(); events.append(event); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return events }
}
