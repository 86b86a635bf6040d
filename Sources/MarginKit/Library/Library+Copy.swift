import Foundation
import MarginCore

/// What `db copy` moved: rows written per kind (each an upsert: the same row copied again is
/// written with the same values) and the PDFs the destination did not have.
public struct CopyReport: Sendable, Encodable, Equatable {
    public var destination: String
    public var books = 0
    public var sources = 0
    public var tags = 0
    public var versions = 0
    public var pages = 0
    public var bookmarks = 0
    public var highlights = 0
    public var memos = 0
    public var guides = 0
    /// Pages read by OCR (kept by the PDF's SHA-256: never read again there).
    public var recognizedPages = 0
    /// PDFs placed in the destination (0 when it had them all).
    public var filesAdded = 0
    /// Books whose PDF neither library has here (their sources can fetch them).
    public var filesMissing: [Int64] = []
}

extension Library {
    /// Copies the whole library into `destination` (another backend, or another folder): books
    /// with their sources, tags, versions and page text, annotations with their UUIDs and dates,
    /// and the PDFs. Rows are matched by their natural keys (a book by its SHA-256, an annotation
    /// by its UUID), so copying again changes nothing, and copying into a library that has some
    /// of the books merges. The destination's write is one transaction.
    public func copy(to destination: Library) async throws -> CopyReport {
        // Everything this user may see (a team library's owner: everyone's annotations).
        (database as? any TeamStore)?.audience = .everything
        var reading = try await repository.read { store in
            LibrarySnapshot(
                user: store.user,
                books: try store.all(Book.self), sources: try store.all(Source.self),
                tags: try store.all(MarginCore.Tag.self), versions: try store.all(Version.self),
                pages: try store.all(PageText.self), bookmarks: try store.all(Bookmark.self),
                highlights: try store.all(Highlight.self), memos: try store.all(Memo.self),
                guides: try store.all(BookGuide.self), recognized: try store.all(OCRPage.self))
        }
        reading.adopt()
        // Passwords: sealed again the way the destination keeps them (a team library keeps none).
        for index in reading.books.indices {
            let book = reading.books[index]
            guard let stored = book.password, !stored.isEmpty, let password = try? password(of: book) else { continue }
            reading.books[index].password = try destination.secrets.seal(password, sha256: book.sha256)
        }
        let snapshot = reading
        var report = CopyReport(destination: destination.database.path ?? destination.paths.database)
        // The files first: a book is never recorded where its PDF can't be had.
        let shas = Set(snapshot.books.map(\.sha256) + snapshot.versions.map(\.sha256))
        // Asked of the destination's own store: a team library's cache on this machine may hold a
        // PDF its database (dropped and made again) no longer has.
        for sha in shas.sorted() where !destination.blobs.holds(sha) {
            guard blobs.contains(sha) else {
                report.filesMissing += snapshot.books.filter { $0.sha256 == sha }.compactMap(\.id)
                continue
            }
            let staged = try destination.blobs.makeTemporaryFile(suffix: ".copy")
            defer { try? FileManager.default.removeItem(atPath: staged) }
            try FileManager.default.removeItem(atPath: staged)
            try FileManager.default.copyItem(atPath: blobs.path(for: sha), toPath: staged)
            if try destination.blobs.place(staged, sha256: sha) { report.filesAdded += 1 }
        }
        let written = try await destination.repository.write { store in
            var counts = CopyReport(destination: "")
            var bookIds = [Int64: Int64]()
            for book in snapshot.books {
                var copy = book
                // A key another book holds there is made anew.
                if copy.citationKey != nil { copy.citationKey = try store.unusedCitationKey(for: copy) }
                try store.upsert(&copy)
                if let old = book.id, let new = copy.id { bookIds[old] = new }
                counts.books += 1
            }
            func moved<M: Model>(_ models: [M], _ bookId: WritableKeyPath<M, Int64>) throws -> Int {
                var count = 0
                for model in models {
                    guard let id = bookIds[model[keyPath: bookId]] else { continue }
                    var copy = model
                    copy[keyPath: bookId] = id
                    try store.upsert(&copy)
                    count += 1
                }
                return count
            }
            counts.sources = try moved(snapshot.sources, \.bookId)
            counts.tags = try moved(snapshot.tags, \.bookId)
            counts.versions = try moved(snapshot.versions, \.bookId)
            counts.pages = try moved(snapshot.pages, \.bookId)
            counts.bookmarks = try moved(snapshot.bookmarks, \.bookId)
            counts.highlights = try moved(snapshot.highlights, \.bookId)
            counts.memos = try moved(snapshot.memos, \.bookId)
            counts.guides = try moved(snapshot.guides, \.bookId)
            // After the books: a team library lets a member write what was read on a PDF of theirs.
            for page in snapshot.recognized {
                var copy = page
                copy.id = nil
                try store.upsert(&copy)
                counts.recognizedPages += 1
            }
            return counts
        }
        // A library written at once is searched with plans made from its statistics at once.
        try? (destination.database as? any TeamStore)?.settle()
        report.books = written.books
        report.sources = written.sources
        report.tags = written.tags
        report.versions = written.versions
        report.pages = written.pages
        report.bookmarks = written.bookmarks
        report.highlights = written.highlights
        report.memos = written.memos
        report.guides = written.guides
        report.recognizedPages = written.recognizedPages
        return report
    }
}

/// Every row of a library, read in one snapshot, as `user` (nil: a personal library) sees it.
private struct LibrarySnapshot: Sendable {
    var user: String?
    var books: [Book]
    var sources: [Source]
    var tags: [MarginCore.Tag]
    var versions: [Version]
    var pages: [PageText]
    var bookmarks: [Bookmark]
    var highlights: [Highlight]
    var memos: [Memo]
    var guides: [BookGuide]
    var recognized: [OCRPage]

    /// What the copying user made becomes the destination user's (nil: the destination says
    /// who: its role, or its one user); what others made keeps their name.
    mutating func adopt() {
        func adopted<M: Annotation>(_ models: [M]) -> [M] {
            models.map { model in
                var copy = model
                if copy.owner == user { copy.owner = nil }
                return copy
            }
        }
        bookmarks = adopted(bookmarks)
        highlights = adopted(highlights)
        memos = adopted(memos)
        books = books.map { book in
            var copy = book
            if copy.addedBy == user { copy.addedBy = nil }
            return copy
        }
    }
}
