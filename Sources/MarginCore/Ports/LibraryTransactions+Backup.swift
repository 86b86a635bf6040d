import Foundation

// MARK: Backups

/// A book of a backup, read and checked (UUIDs, dates, sizes, colours), ready to merge.
public struct BackupBook: Sendable {
    /// Where it stands in the backup ("books[2]"), for messages.
    public var place: String
    /// The book as the backup has it (UUID, SHA-256, title, pages, bytes, dates…).
    public var book: Book
    public var sources: [String]
    /// Normalized.
    public var tags: [String]
    /// Pages and bytes of the cache's copy of this SHA-256, when the cache has one.
    public var cachedFile: (pages: Int, bytes: Int64)?
    /// Its annotations (`bookId` is set when merged).
    public var bookmarks: [Bookmark]
    public var highlights: [Highlight]
    public var memos: [Memo]

    public init(
        place: String, book: Book, sources: [String], tags: [String], cachedFile: (pages: Int, bytes: Int64)?,
        bookmarks: [Bookmark], highlights: [Highlight], memos: [Memo]
    ) {
        self.place = place
        self.book = book
        self.sources = sources
        self.tags = tags
        self.cachedFile = cachedFile
        self.bookmarks = bookmarks
        self.highlights = highlights
        self.memos = memos
    }
}

/// What merging did to one kind of thing. Every item counts once as added, updated or
/// unchanged; a conflict (both sides changed) is also counted among `conflicts`.
public struct MergeCounts: Sendable, Encodable, Equatable {
    public var added = 0
    public var updated = 0
    public var unchanged = 0
    public var conflicts = 0

    public init(added: Int = 0, updated: Int = 0, unchanged: Int = 0, conflicts: Int = 0) {
        self.added = added
        self.updated = updated
        self.unchanged = unchanged
        self.conflicts = conflicts
    }

    public static func + (a: MergeCounts, b: MergeCounts) -> MergeCounts {
        MergeCounts(
            added: a.added + b.added, updated: a.updated + b.updated, unchanged: a.unchanged + b.unchanged,
            conflicts: a.conflicts + b.conflicts)
    }
}

/// What merging a backup did (or, in a dry run, would do).
public struct BackupMerge: Sendable, Equatable {
    public var books = MergeCounts()
    public var bookmarks = MergeCounts()
    public var highlights = MergeCounts()
    public var memos = MergeCounts()

    public init() {}
}

extension LibraryTransactions where Self: LibraryStore {
    public func importBackup(_ books: [BackupBook], dryRun: Bool) async throws -> BackupMerge {
        do {
            return try await repository.write { store in
                var merge = BackupMerge()
                var seen = Set<UUID>()
                var merged = Set<Int64>()
                for entry in books {
                    let book = try mergeBook(entry, store, &merge.books)
                    let bookId = book.id ?? 0
                    guard merged.insert(bookId).inserted else {
                        throw MarginError.invalidBackup(
                            "\(entry.place): the same book as an earlier entry (by UUID or SHA-256)")
                    }
                    func place(_ kind: String, _ index: Int, page: Int?) throws -> String {
                        let at = "\(entry.place).\(kind)[\(index)]"
                        if let page, page < 1 || page > book.pages {
                            throw MarginError.invalidBackup(
                                "\(at).page: \(page) is outside the book's pages 1-\(book.pages)")
                        }
                        return at
                    }
                    for (index, var bookmark) in entry.bookmarks.enumerated() {
                        let at = try place("bookmarks", index, page: bookmark.page)
                        bookmark.bookId = bookId
                        try mergeAnnotation(bookmark, at: at, seen: &seen, store, &merge.bookmarks)
                    }
                    for (index, var highlight) in entry.highlights.enumerated() {
                        let at = try place("highlights", index, page: highlight.page)
                        highlight.bookId = bookId
                        try mergeAnnotation(highlight, at: at, seen: &seen, store, &merge.highlights)
                    }
                    for (index, var memo) in entry.memos.enumerated() {
                        let at = try place("memos", index, page: memo.page)
                        memo.bookId = bookId
                        try mergeAnnotation(memo, at: at, seen: &seen, store, &merge.memos)
                    }
                }
                // A dry run rolls everything back, carrying out what it would have done.
                if dryRun { throw DryRun(merge: merge) }
                return merge
            }
        } catch let dryRun as DryRun {
            return dryRun.merge
        }
    }
}

/// Ends a dry run's transaction (so it rolls back) with what it did.
private struct DryRun: Error {
    let merge: BackupMerge
}

/// The library's book for a backup's: the one with its UUID, or whose current or an older
/// version has its bytes (a backup made before or after a refresh); else a new book.
private func mergeBook(_ entry: BackupBook, _ store: any StoreWriter, _ counts: inout MergeCounts) throws -> Book {
    let incoming = entry.book
    let place = entry.place
    let byUUID = try store.first(Query<Book>().filter(Book.Fields.uuid == incoming.uuid))
    var bySHA = try store.first(Query<Book>().filter(Book.Fields.sha256 == incoming.sha256))
    let known = try store.first(Query<Version>().filter(Version.Fields.sha256 == incoming.sha256))
    if bySHA == nil, let known { bySHA = try store.find(Book.self, id: known.bookId) }
    if let byUUID, let bySHA, byUUID.id != bySHA.id {
        throw MarginError.invalidBackup(
            "\(place).uuid: it is the UUID of '\(byUUID.title)' in the library, but the SHA-256 is that of '\(bySHA.title)'"
        )
    }
    if let known, known.bookId == (bySHA ?? byUUID)?.id, known.pages != incoming.pages || known.bytes != incoming.bytes
    {
        throw MarginError.invalidBackup(
            "\(place): the PDF with this SHA-256 has \(known.pages) pages and \(known.bytes) bytes, "
                + "not \(incoming.pages) and \(incoming.bytes)")
    }
    if var existing = bySHA ?? byUUID {
        counts.unchanged += 1
        // The later of the two openings is when it was last opened.
        if let opened = incoming.openedAt, existing.openedAt.map({ $0 < opened }) ?? true {
            existing.openedAt = opened
            try store.update(existing)
        }
        // Sources the backup knows are worth keeping.
        let id = existing.id ?? 0
        for url in entry.sources
        where try store.first(Query<Source>().filter(Source.Fields.bookId == id && Source.Fields.url == url)) == nil {
            var source = Source(bookId: id, url: url)
            try store.insert(&source)
        }
        return existing
    }
    guard !incoming.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
        throw MarginError.invalidBackup("\(place).title: must not be empty")
    }
    // The PDF is in the cache: believe it, not the backup.
    if let file = entry.cachedFile, file.pages != incoming.pages || file.bytes != incoming.bytes {
        throw MarginError.invalidBackup(
            "\(place): the PDF with this SHA-256 has \(file.pages) pages and \(file.bytes) bytes, "
                + "not \(incoming.pages) and \(incoming.bytes)")
    }
    var book = incoming
    book.id = nil
    book.citationKey = try store.unusedCitationKey(for: book)
    try store.insert(&book)
    let id = book.id ?? 0
    var version = Version(
        bookId: id, sha256: book.sha256, bytes: book.bytes, pages: book.pages, source: entry.sources.first)
    try store.insert(&version)
    for url in entry.sources {
        var source = Source(bookId: id, url: url)
        try store.insert(&source)
    }
    try store.addTags(entry.tags, toBook: id, now: Date())
    counts.added += 1
    return book
}

/// Adds or updates one annotation, matched by UUID; of two different versions, the newer wins.
private func mergeAnnotation<M: Annotation>(
    _ incoming: M, at place: String, seen: inout Set<UUID>, _ store: any StoreWriter, _ counts: inout MergeCounts
) throws {
    guard seen.insert(incoming.uuid).inserted else {
        throw MarginError.invalidBackup(
            "\(place).uuid: \(incoming.uuid.uuidString.lowercased()) appears twice in the backup")
    }
    guard let existing = try store.first(Query<M>().filter(Field<M, UUID>("uuid") == incoming.uuid)) else {
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
    // The same content (database ids and dates aside) is unchanged.
    var comparable = existing
    comparable.id = incoming.id
    comparable.createdAt = incoming.createdAt
    comparable.updatedAt = incoming.updatedAt
    // A file that names no owner (another tool's, a personal library's) means whoever takes it in.
    if incoming.owner == nil { comparable.owner = nil }
    if comparable == incoming {
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
