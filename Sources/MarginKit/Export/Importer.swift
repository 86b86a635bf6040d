import Foundation
import MarginCore
import Poppler

/// What an import did (or, with --dry-run, would do), per kind and in total.
public struct ImportReport: Sendable, Encodable, Equatable {
    public struct Counts: Sendable, Encodable, Equatable {
        public var added = 0
        public var updated = 0
        public var unchanged = 0
        public var conflicts = 0

        static func + (a: Counts, b: Counts) -> Counts {
            Counts(
                added: a.added + b.added, updated: a.updated + b.updated, unchanged: a.unchanged + b.unchanged,
                conflicts: a.conflicts + b.conflicts)
        }
    }

    public var books = Counts()
    public var bookmarks = Counts()
    public var highlights = Counts()
    public var memos = Counts()
    public var dryRun = false

    /// Annotations only (books are reported apart).
    public var total: Counts { bookmarks + highlights + memos }

    enum CodingKeys: String, CodingKey {
        case added, updated, unchanged, conflicts, books, bookmarks, highlights, memos, dryRun
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(total.added, forKey: .added)
        try c.encode(total.updated, forKey: .updated)
        try c.encode(total.unchanged, forKey: .unchanged)
        try c.encode(total.conflicts, forKey: .conflicts)
        try c.encode(books, forKey: .books)
        try c.encode(bookmarks, forKey: .bookmarks)
        try c.encode(highlights, forKey: .highlights)
        try c.encode(memos, forKey: .memos)
        try c.encode(dryRun, forKey: .dryRun)
    }
}

private struct DryRunRollback: Error {
    let report: ImportReport
}

extension Library {
    /// Parses a backup, saying where it is malformed.
    public static func parseBackup(_ data: Data, name: String) throws -> Backup {
        let backup: Backup
        do {
            backup = try JSONDecoder().decode(Backup.self, from: data)
        } catch let error as DecodingError {
            throw MarginError.invalidBackup(
                "\(name) is not a margin backup: \(describe(error))")
        } catch {
            throw MarginError.invalidBackup(
                "\(name) is not valid JSON: \(error.localizedDescription)")
        }
        guard backup.format == Backup.formatName else {
            throw MarginError.invalidBackup(
                "\(name) is not a margin backup: \"format\" is \"\(backup.format)\", expected \"\(Backup.formatName)\""
            )
        }
        guard backup.version <= Backup.currentVersion, backup.version >= 1 else {
            throw MarginError.invalidBackup(
                "\(name) is backup format version \(backup.version); this margin reads version \(Backup.currentVersion) (upgrade margin)"
            )
        }
        return backup
    }

    /// Merges a backup into the library in one transaction: books matched by SHA-256 (a book not
    /// in the library is created from the backup and fetched from its sources when needed),
    /// annotations by UUID. Same content is unchanged; different content is a conflict, won by
    /// the newer `updatedAt`. A malformed entry imports nothing.
    public func importBackup(_ backup: Backup, dryRun: Bool) async throws -> ImportReport {
        do {
            return try await repository.write { store in
                var report = ImportReport()
                report.dryRun = dryRun
                var seen = Set<UUID>()
                var books = Set<Int64>()
                for (bookIndex, entry) in backup.books.enumerated() {
                    let place = "books[\(bookIndex)]"
                    let book = try self.mergeBook(entry, place: place, store, &report.books)
                    let bookId = book.id ?? 0
                    guard books.insert(bookId).inserted else {
                        throw MarginError.invalidBackup(
                            "\(place): the same book as an earlier entry (by UUID or SHA-256)")
                    }
                    for (i, e) in entry.bookmarks.enumerated() {
                        let at = "\(place).bookmarks[\(i)]"
                        try checkImportedPage(e.page, pages: book.pages, at: at)
                        var model = Bookmark(bookId: bookId, page: e.page, label: e.label)
                        model.uuid = try uuid(e.uuid, at: at)
                        model.createdAt = try date(e.createdAt, at: at + ".createdAt")
                        model.updatedAt = try date(e.updatedAt, at: at + ".updatedAt")
                        try self.merge(model, at: at, seen: &seen, store, &report.bookmarks)
                    }
                    for (i, e) in entry.highlights.enumerated() {
                        let at = "\(place).highlights[\(i)]"
                        try checkNoteSize(e.text + (e.note ?? ""), what: "a highlight", at: at)
                        try checkImportedPage(e.page, pages: book.pages, at: at)
                        guard e.rects.allSatisfy({ $0.count == 4 && $0.allSatisfy(\.isFinite) }) else {
                            throw MarginError.invalidBackup("\(at).rects: each rect must be [x0, y0, x1, y1]")
                        }
                        _ = try HighlightColor.parse(e.color)
                        var model = Highlight(
                            bookId: bookId, page: e.page, text: e.text, prefix: e.prefix, suffix: e.suffix,
                            rects: e.rects,
                            color: try HighlightColor.parse(e.color), note: e.note, author: e.author)
                        model.orphaned = e.orphaned
                        model.uuid = try uuid(e.uuid, at: at)
                        model.createdAt = try date(e.createdAt, at: at + ".createdAt")
                        model.updatedAt = try date(e.updatedAt, at: at + ".updatedAt")
                        try self.merge(model, at: at, seen: &seen, store, &report.highlights)
                    }
                    for (i, e) in entry.memos.enumerated() {
                        let at = "\(place).memos[\(i)]"
                        try checkNoteSize(e.text, what: "a memo", at: at + ".text")
                        if let page = e.page { try checkImportedPage(page, pages: book.pages, at: at) }
                        var model = Memo(bookId: bookId, page: e.page, text: e.text, author: e.author)
                        model.uuid = try uuid(e.uuid, at: at)
                        model.createdAt = try date(e.createdAt, at: at + ".createdAt")
                        model.updatedAt = try date(e.updatedAt, at: at + ".updatedAt")
                        try self.merge(model, at: at, seen: &seen, store, &report.memos)
                    }
                }
                // A dry run rolls everything back, carrying out what it would have done.
                if dryRun { throw DryRunRollback(report: report) }
                return report
            }
        } catch let rollback as DryRunRollback {
            return rollback.report
        } catch MarginError.invalidArgument(let message) {
            // A check shared with other commands refused part of the backup.
            throw MarginError.invalidBackup(message)
        }
    }

    private func mergeBook(
        _ entry: Backup.BookEntry, place: String, _ store: any StoreWriter, _ counts: inout ImportReport.Counts
    ) throws -> Book {
        let sha = entry.sha256.lowercased()
        guard sha.count == 64, sha.allSatisfy(\.isHexDigit) else {
            throw MarginError.invalidBackup("\(place).sha256: expected 64 hex digits")
        }
        guard entry.pages >= 1 else { throw MarginError.invalidBackup("\(place).pages: must be at least 1") }
        guard entry.bytes >= 1 else { throw MarginError.invalidBackup("\(place).bytes: must be at least 1") }
        let bookUUID = try uuid(entry.uuid, at: place)
        // The same book is the one with this UUID, or whose current or an older version has
        // these bytes (a backup made before or after a refresh).
        let byUUID = try store.first(Query<Book>().filter(Book.Fields.uuid == bookUUID))
        var bySHA = try store.first(Query<Book>().filter(Book.Fields.sha256 == sha))
        if bySHA == nil, let version = try store.first(Query<Version>().filter(Version.Fields.sha256 == sha)) {
            bySHA = try store.find(Book.self, id: version.bookId)
        }
        if let byUUID, let bySHA, byUUID.id != bySHA.id {
            throw MarginError.invalidBackup(
                "\(place).uuid: it is the UUID of '\(byUUID.title)' in the library, but the SHA-256 is that of '\(bySHA.title)'"
            )
        }
        if let known = try store.first(Query<Version>().filter(Version.Fields.sha256 == sha)),
            known.bookId == (bySHA ?? byUUID)?.id, known.pages != entry.pages || known.bytes != entry.bytes
        {
            throw MarginError.invalidBackup(
                "\(place): the PDF with this SHA-256 has \(known.pages) pages and \(known.bytes) bytes, not \(entry.pages) and \(entry.bytes)"
            )
        }
        if let existing = bySHA ?? byUUID {
            counts.unchanged += 1
            // Sources the backup knows are worth keeping.
            for url in entry.sources {
                var source = Source(bookId: existing.id ?? 0, url: url)
                if try store.first(
                    Query<Source>().filter(Source.Fields.bookId == (existing.id ?? 0) && Source.Fields.url == url))
                    == nil
                {
                    try store.insert(&source)
                }
            }
            return existing
        }
        guard nonEmpty(entry.title) != nil else {
            throw MarginError.invalidBackup("\(place).title: must not be empty")
        }
        if let memo = entry.memo { try checkNoteSize(memo, what: "a memo", at: place + ".memo") }
        if self.blobs.contains(sha) {
            // The PDF is in the cache: believe it, not the backup.
            let path = self.blobs.path(for: sha)
            let pages = (try? Document(path: path))?.pageCount
            let bytes = fileSize(path)
            if let pages, pages != entry.pages || bytes != entry.bytes {
                throw MarginError.invalidBackup(
                    "\(place): the PDF with this SHA-256 has \(pages) pages and \(bytes ?? 0) bytes, not \(entry.pages) and \(entry.bytes)"
                )
            }
        }
        var book = Book(
            sha256: sha, title: entry.title, author: entry.author, pages: entry.pages, bytes: entry.bytes,
            folder: normalizedFolder(entry.folder))
        book.uuid = bookUUID
        book.memo = entry.memo
        book.addedAt = try date(entry.addedAt, at: place + ".addedAt")
        book.updatedAt = try date(entry.updatedAt, at: place + ".updatedAt")
        try store.insert(&book)
        var version = Version(
            bookId: book.id ?? 0, sha256: sha, bytes: entry.bytes, pages: entry.pages, source: entry.sources.first)
        try store.insert(&version)
        for url in entry.sources {
            var source = Source(bookId: book.id ?? 0, url: url)
            try store.insert(&source)
        }
        try store.addTags(normalizedTags(entry.tags), toBook: book.id ?? 0, now: Date())
        counts.added += 1
        return book
    }

    /// Adds or updates one annotation. Every annotation counts once as added, updated or
    /// unchanged; a conflict (both sides changed) is also counted among `conflicts`.
    private func merge<M: Model & Timestamped & Equatable>(
        _ incoming: M, at place: String, seen: inout Set<UUID>, _ store: any StoreWriter,
        _ counts: inout ImportReport.Counts
    ) throws {
        guard seen.insert(incoming.uuid).inserted else {
            throw MarginError.invalidBackup(
                "\(place).uuid: \(incoming.uuid.uuidString.lowercased()) appears twice in the backup")
        }
        let existing = try store.first(Query<M>().filter(Field<M, UUID>("uuid") == incoming.uuid))
        guard let existing else {
            var copy = incoming
            try store.insert(&copy)
            counts.added += 1
            return
        }
        guard existing.bookId == incoming.bookId else {
            let owner = try store.find(Book.self, id: existing.bookId)?.title ?? "another book"
            throw MarginError.invalidBackup(
                "\(place).uuid: this annotation belongs to '\(owner)' in the library, not to this book")
        }
        if sameContent(existing, incoming) {
            counts.unchanged += 1
            return
        }
        counts.conflicts += 1
        if incoming.updatedAt > existing.updatedAt {
            var copy = incoming
            copy.id = existing.id
            try store.update(copy)
            counts.updated += 1
        } else {
            counts.unchanged += 1
        }
    }
}

/// Models with creation and update times, for conflict resolution.
protocol Timestamped {
    var bookId: Int64 { get }
    var createdAt: Date { get set }
    var updatedAt: Date { get set }
}

extension Bookmark: Timestamped {}
extension Highlight: Timestamped {}
extension Memo: Timestamped {}

private func checkImportedPage(_ page: Int, pages: Int, at place: String) throws {
    guard page >= 1, page <= pages else {
        throw MarginError.invalidBackup(
            "\(place).page: \(page) is outside the book's pages 1-\(pages)")
    }
}

private func uuid(_ text: String, at place: String) throws -> UUID {
    guard let value = UUID(uuidString: text) else {
        throw MarginError.invalidBackup("\(place).uuid: '\(text)' is not a UUID")
    }
    return value
}

private func date(_ text: String, at place: String) throws -> Date {
    guard let value = parseISODate(text) else {
        throw MarginError.invalidBackup("\(place): '\(text)' is not an ISO-8601 date")
    }
    return value
}

/// "books[0].highlights[2].page: expected a number" from a DecodingError.
private func describe(_ error: DecodingError) -> String {
    func path(_ keys: [any CodingKey]) -> String {
        keys.reduce("") { result, key in
            if let index = key.intValue { return result + "[\(index)]" }
            return result.isEmpty ? key.stringValue : result + "." + key.stringValue
        }
    }
    switch error {
    case .typeMismatch(let type, let context):
        return "\(path(context.codingPath)): expected \(type)"
    case .valueNotFound(let type, let context):
        return "\(path(context.codingPath)): expected \(type), found null"
    case .keyNotFound(let key, let context):
        let parent = path(context.codingPath)
        return "\(parent.isEmpty ? "" : parent + ": ")missing field \"\(key.stringValue)\""
    case .dataCorrupted(let context):
        let location = path(context.codingPath)
        return (location.isEmpty ? "" : location + ": ") + context.debugDescription
    @unknown default:
        return "\(error)"
    }
}

/// Two annotations say the same thing (database ids and dates aside).
private func sameContent<M: Model & Timestamped & Equatable>(_ a: M, _ b: M) -> Bool {
    var left = a
    left.id = b.id
    left.createdAt = b.createdAt
    left.updatedAt = b.updatedAt
    return left == b
}
