import Foundation
import MarginCore

/// What an import did (or, with --dry-run, would do), per kind and in total: added, updated
/// (the incoming copy was newer), unchanged, and conflicts (both differed; the newer kept,
/// counted among the others); and what was left out, and why (imports from other tools).
public struct ImportReport: Sendable, Encodable, Equatable {
    public typealias Counts = MergeCounts

    public struct Skipped: Sendable, Encodable, Equatable {
        /// What it is, in the other tool's words ("annotation ABCD2345 (ink) of …").
        public var what: String
        public var why: String

        public init(what: String, why: String) {
            self.what = what
            self.why = why
        }
    }

    public var books = Counts()
    public var bookmarks = Counts()
    public var highlights = Counts()
    public var memos = Counts()
    public var skipped = [Skipped]()
    public var dryRun = false

    public init() {}

    /// Annotations only (books are reported apart).
    public var total: Counts { bookmarks + highlights + memos }

    enum CodingKeys: String, CodingKey {
        case added, updated, unchanged, conflicts, skipped, books, bookmarks, highlights, memos, dryRun
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(total.added, forKey: .added)
        try c.encode(total.updated, forKey: .updated)
        try c.encode(total.unchanged, forKey: .unchanged)
        try c.encode(total.conflicts, forKey: .conflicts)
        try c.encode(skipped, forKey: .skipped)
        try c.encode(books, forKey: .books)
        try c.encode(bookmarks, forKey: .bookmarks)
        try c.encode(highlights, forKey: .highlights)
        try c.encode(memos, forKey: .memos)
        try c.encode(dryRun, forKey: .dryRun)
    }

    mutating func skip(_ what: String, _ why: String) { skipped.append(Skipped(what: what, why: why)) }
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

    /// Merges a backup into the library in one transaction (the store's `importBackup`): books
    /// matched by UUID or SHA-256 (a book not in the library is created from the backup and
    /// fetched from its sources when needed), annotations by UUID. Same content is unchanged;
    /// different content is a conflict, won by the newer `updatedAt`. A malformed entry imports
    /// nothing.
    public func importBackup(_ backup: Backup, dryRun: Bool) async throws -> ImportReport {
        // Only a book the library hasn't got is checked against the cache's copy of its PDF.
        let known = try await repository.read { store in
            (uuids: Set(try store.all(Book.self).map(\.uuid)), shas: Set(try store.all(Version.self).map(\.sha256)))
        }
        let books: [BackupBook]
        do {
            books = try backup.books.enumerated().map { index, entry in
                try backupBook(entry, place: "books[\(index)]", known: known)
            }
        } catch MarginError.invalidArgument(let message) {
            // A check shared with other commands refused part of the backup.
            throw MarginError.invalidBackup(message)
        }
        let merge = try await database.importBackup(books, dryRun: dryRun)
        var report = ImportReport()
        report.dryRun = dryRun
        report.books = merge.books
        report.bookmarks = merge.bookmarks
        report.highlights = merge.highlights
        report.memos = merge.memos
        return report
    }

    /// A backup's book read into models and checked: what can be checked without the library.
    private func backupBook(
        _ entry: Backup.BookEntry, place: String, known: (uuids: Set<UUID>, shas: Set<String>)
    ) throws -> BackupBook {
        let sha = entry.sha256.lowercased()
        guard sha.count == 64, sha.allSatisfy(\.isHexDigit) else {
            throw MarginError.invalidBackup("\(place).sha256: expected 64 hex digits")
        }
        guard entry.pages >= 1 else { throw MarginError.invalidBackup("\(place).pages: must be at least 1") }
        for (field, value) in [("title", entry.title), ("author", entry.author), ("folder", entry.folder)] {
            do { try checkNoNUL(value, what: "a \(field)", at: place + "." + field) } catch {
                throw MarginError.invalidBackup("\(place).\(field): can't hold a NUL character (U+0000)")
            }
        }
        guard entry.bytes >= 1 else { throw MarginError.invalidBackup("\(place).bytes: must be at least 1") }
        var book = Book(
            sha256: sha, title: singleLine(entry.title), author: entry.author.map(singleLine), pages: entry.pages,
            bytes: entry.bytes, folder: normalizedFolder(entry.folder))
        book.uuid = try uuid(entry.uuid, at: place)
        let memo = entry.memo.map(normalizedLineEnds)
        if let memo { try checkNoteSize(memo, what: "a memo", at: place + ".memo") }
        book.memo = memo
        book.doi = entry.doi.flatMap(Identifiers.parseDOI)
        book.arxiv = entry.arxiv.flatMap(Identifiers.parseArxiv)
        book.year = entry.year
        book.citationKey = entry.citationKey.flatMap { $0.isEmpty ? nil : $0 }
        book.venue = entry.venue
        book.publisher = entry.publisher
        book.workType = entry.workType.flatMap(WorkType.known)
        if let lang = entry.lang, Languages.known.contains(lang) {
            book.lang = lang
            book.userFields.append("lang")
        }
        if entry.year != nil { book.yearSource = YearSource.restored }
        book.addedAt = try date(entry.addedAt, at: place + ".addedAt")
        book.updatedAt = try date(entry.updatedAt, at: place + ".updatedAt")
        book.openedAt = try entry.openedAt.map { try date($0, at: place + ".openedAt") }
        // The cache's copy of these bytes, if any, is believed over the backup.
        var cachedFile: (pages: Int, bytes: Int64)?
        if !known.uuids.contains(book.uuid), !known.shas.contains(sha), blobs.contains(sha) {
            let path = blobs.path(for: sha)
            if let pages = (try? PDFEngines.current.open(path: path))?.pageCount {
                cachedFile = (pages, fileSize(path) ?? 0)
            }
        }
        let bookmarks = try entry.bookmarks.enumerated().map { i, e in
            let at = "\(place).bookmarks[\(i)]"
            try checkNoNUL(e.label, what: "a bookmark's label", at: at)
            return try stamped(
                Bookmark(bookId: 0, page: e.page, label: e.label), e.uuid, e.createdAt, e.updatedAt, at: at)
        }
        let highlights = try entry.highlights.enumerated().map { i, e in
            let at = "\(place).highlights[\(i)]"
            try checkNoteSize(e.text + (e.note ?? ""), what: "a highlight", at: at)
            guard e.rects.allSatisfy({ $0.count == 4 && $0.allSatisfy(\.isFinite) }) else {
                throw MarginError.invalidBackup("\(at).rects: each rect must be [x0, y0, x1, y1]")
            }
            var highlight = Highlight(
                bookId: 0, page: e.page, text: e.text, prefix: e.prefix, suffix: e.suffix, rects: e.rects,
                color: try HighlightColor.parse(e.color), note: e.note.map(normalizedLineEnds), author: e.author)
            highlight.orphaned = e.orphaned
            return try stamped(highlight, e.uuid, e.createdAt, e.updatedAt, at: at)
        }
        let memos = try entry.memos.enumerated().map { i, e in
            let at = "\(place).memos[\(i)]"
            try checkNoteSize(e.text, what: "a memo", at: at + ".text")
            return try stamped(
                Memo(bookId: 0, page: e.page, text: normalizedLineEnds(e.text), author: e.author), e.uuid, e.createdAt,
                e.updatedAt, at: at)
        }
        return BackupBook(
            place: place, book: book, sources: entry.sources, tags: normalizedTags(entry.tags), cachedFile: cachedFile,
            bookmarks: bookmarks, highlights: highlights, memos: memos)
    }
}

/// An annotation with the UUID and dates a backup gives it.
private func stamped<M: Annotation>(
    _ annotation: M, _ uuidText: String, _ created: String, _ updated: String, at place: String
) throws -> M {
    var annotation = annotation
    annotation.uuid = try uuid(uuidText, at: place)
    annotation.createdAt = try date(created, at: place + ".createdAt")
    annotation.updatedAt = try date(updated, at: place + ".updatedAt")
    return annotation
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
        // Foundation's own words ("The given data was not valid JSON.") are not Margin's.
        let said = context.underlyingError.flatMap { ($0 as NSError).userInfo[NSDebugDescriptionErrorKey] as? String }
        let detail =
            context.debugDescription.contains("not valid JSON")
            ? "it is not JSON" + (said.map { " (\($0))" } ?? "") + " ('margin export --format json' writes a backup)"
            : context.debugDescription
        return (location.isEmpty ? "" : location + ": ") + detail
    @unknown default:
        return "\(error)"
    }
}
