import Foundation
import MarginCore
import Poppler
import TestSupport
import Testing

@testable import MarginKit

@Suite struct DocumentCacheTests {
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
}
