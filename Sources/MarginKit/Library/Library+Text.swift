import Foundation
import MarginCore

/// One page's text for `margin text`.
public struct PageTextOutput: Sendable, Encodable {
    public var page: Int
    public var text: String
}

extension Library {
    /// Re-extracts and re-indexes the text of the given books (all when empty), several books
    /// at a time so that small books keep every core busy too. `progress` is called after each
    /// book with (done, total), `observer` as pages are read from their image. Each book is
    /// replaced in one transaction.
    public func reindex(
        _ books: [Book], progress: (@Sendable (Int, Int) -> Void)? = nil, observer: (any RecognitionObserver)? = nil
    ) async throws -> [Book] {
        let targets = books.isEmpty ? try await allBooks() : books
        let width = max(1, ProcessInfo.processInfo.activeProcessorCount)
        return try await targets.concurrentMap(width: width, finished: { progress?($0, targets.count) }) { book in
            try await self.reindexOne(book, observer: observer)
        }
    }

    private func reindexOne(_ book: Book, observer: (any RecognitionObserver)?) async throws -> Book {
        let path = try await ensureCached(book)
        let extracted = try extractText(
            path: path, password: try password(of: book), pageCount: book.pages,
            known: try await recognizedPages(of: book.sha256), pagesRead: observer.pages(of: book.title))
        return try await database.replaceText(ofBook: book.id ?? -1, with: extracted, now: Date()) ?? book
    }

    /// Books whose text is not indexed yet (added by an older margin, or interrupted).
    public func unindexedBooks() async throws -> [Book] {
        try await repository.read { store in try store.fetch(Self.unindexed) }
    }

    static let unindexed = Query<Book>().filter(Book.Fields.indexedAt.isNull).sorted(by: Book.Fields.id.ascending)

    /// The text of the given 1-based pages (all when `pages` is nil), from the index.
    public func text(of book: Book, pages: [Int]?) async throws -> [PageTextOutput] {
        if let bad = pages?.first(where: { $0 < 1 || $0 > book.pages }) {
            throw MarginError.pageOutOfRange(page: bad, count: book.pages)
        }
        let stored: [PageText]
        if book.indexedAt == nil {
            // Not indexed (an old library's book): read from the cached PDF, storing nothing.
            do {
                stored = try extractText(
                    path: try cachedFile(book), password: try password(of: book), pageCount: book.pages
                ).pages
            } catch MarginError.io(let message) where message == PDFError.passwordRequired.localizedDescription {
                throw MarginError.passwordNotStored(title: book.title, book: book.id ?? 0)
            }
        } else {
            let id = book.id ?? -1
            stored = try await repository.read { store in
                try store.fetch(
                    Query<PageText>().filter(PageText.Fields.bookId == id).sorted(by: PageText.Fields.number.ascending))
            }
        }
        let byNumber = Dictionary(stored.map { ($0.number, $0.text) }, uniquingKeysWith: { first, _ in first })
        return (pages ?? Array(1...max(1, book.pages))).map { PageTextOutput(page: $0, text: byNumber[$0] ?? "") }
    }
}
