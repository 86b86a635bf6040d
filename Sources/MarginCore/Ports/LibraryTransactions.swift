import Foundation

/// The library's writes, named for what they do; each is one transaction, all or nothing.
///
/// They are requirements of `LibraryStore` with one implementation here, over the store's
/// `Repository`, so every backend has them; a backend may implement any of them natively (in
/// its own SQL, say). Use cases decide *what* to write; these methods write it.
public protocol LibraryTransactions: Sendable {
    /// Saves a book just added, by its SHA-256: a new book with its first version, its source,
    /// tags and page text; or, when the library has the book already, the new source (an
    /// upsert by book and URL), the tags, a password it lacked and its text if it had none.
    func addBook(_ book: Book, source: Source, tags: [String], text: PagesText?, now: Date) async throws -> AddedBook
    /// Adds tags (already normalized) to a book; ones it has (whatever their case) are kept.
    func addTags(_ names: [String], toBook id: Int64, now: Date) async throws
    /// Changes a book (`change` edits it in memory, inside the transaction), adds and removes
    /// tags; the book's `updatedAt` becomes `now`.
    func updateBook(
        id: Int64, addTags: [String], removeTags: [String], now: Date,
        _ change: @escaping @Sendable (inout Book) -> Void
    ) async throws -> Book
    /// Notes that the book was opened now (for `recent`); nil when it is gone.
    func touchBook(id: Int64, at date: Date) async throws -> Book?
    /// Removes books with everything on them; with annotations only when `confirmed` (else
    /// nothing is removed). Says what went and which files (current and old versions) it used.
    func removeBooks(ids: [Int64], confirmed: Bool) async throws -> [RemovedBook]
    /// Replaces a book's page text and marks it indexed; nil when the book is gone.
    func replaceText(ofBook id: Int64, with text: PagesText, now: Date) async throws -> Book?
    /// Changes what a book is (title, authors, identifiers, citation key) in one transaction;
    /// `change` may read the store (a key must be the library's only one).
    func updateMetadata(
        ofBook id: Int64, now: Date, _ change: @escaping @Sendable (any StoreReader, inout Book) throws -> Void
    ) async throws -> Book
    /// Records a source's validators and when it was checked.
    func recordCheck(of source: Source) async throws
    /// Stores a version of a book (an upsert by book and SHA-256) with the source that served
    /// it; with `serving`, the book serves it from now on: its text, re-anchored highlights, and
    /// bookmarks and memos moved with their pages.
    func addVersion(_ version: Version, checked source: Source?, serving change: VersionChange?) async throws

    /// Saves new annotations; each gets its id.
    func addBookmark(_ bookmark: Bookmark) async throws -> Bookmark
    func addMemo(_ memo: Memo) async throws -> Memo
    func addHighlights(_ highlights: [Highlight]) async throws -> [Highlight]
    /// Saves the annotations whose UUID the library doesn't hold yet; the others are left as
    /// they are. Returns how many were added.
    func addNewAnnotations(highlights: [Highlight], memos: [Memo]) async throws -> (highlights: Int, memos: Int)
    /// Changes an annotation (`change` edits it in memory); its `updatedAt` becomes `now`.
    func updateMemo(id: Int64, now: Date, _ change: @escaping @Sendable (inout Memo) -> Void) async throws -> Memo
    func updateHighlight(
        id: Int64, now: Date, _ change: @escaping @Sendable (inout Highlight) -> Void
    ) async throws -> Highlight
    func updateBookmark(
        id: Int64, now: Date, _ change: @escaping @Sendable (inout Bookmark) -> Void
    ) async throws -> Bookmark
    /// Removes an annotation and returns it.
    func removeAnnotation<M: Model>(_ type: M.Type, id: Int64) async throws -> M

    /// Merges a backup: books matched by UUID or SHA-256 (of any version; a book the library
    /// hasn't got is created), annotations by UUID (the same content is unchanged; of two
    /// different versions the newer wins). A problem anywhere imports nothing; a dry run
    /// imports nothing and says what it would have done.
    func importBackup(_ books: [BackupBook], dryRun: Bool) async throws -> BackupMerge
}

/// The pages of a book's text, as extracted.
public struct PagesText: Sendable, Equatable {
    /// In order; `pages[0]` is page 1 (their `bookId` is set when stored).
    public var pages: [PageText]
    /// The book's outline and page labels, read with the text (`bookId` is set when stored);
    /// nil when they were not read, and the stored ones stay.
    public var guide: BookGuide?
    /// What the PDF says it is (its metadata, its first page), read with the text.
    public var found: FoundMetadata?

    public init(pages: [PageText], guide: BookGuide? = nil, found: FoundMetadata? = nil) {
        self.pages = pages
        self.guide = guide
        self.found = found
    }

    /// Pages with no text at all (scans).
    public var textless: Int { pages.filter { $0.text.allSatisfy(\.isWhitespace) }.count }
}

/// What `addBook` saved.
public struct AddedBook: Sendable {
    public var book: Book
    /// The library had the book already (the same SHA-256).
    public var existed: Bool
}

/// A book `removeBooks` removed, with what went with it.
public struct RemovedBook: Sendable {
    public var book: Book
    public var sources: [String]
    public var tags: [String]
    public var bookmarks: Int
    public var highlights: Int
    public var memos: Int
    /// The SHA-256s of the files it used (its current file and every version's).
    public var files: Set<String>
}

/// What serving another version of a book changes.
public struct VersionChange: Sendable {
    /// The version's text.
    public var text: PagesText
    /// Highlights re-anchored on it (moved, or marked orphaned).
    public var highlights: [Highlight]
    /// Where each old page went (pages not found keep their number).
    public var pageMap: [Int: Int]

    public init(text: PagesText, highlights: [Highlight], pageMap: [Int: Int]) {
        self.text = text
        self.highlights = highlights
        self.pageMap = pageMap
    }
}

extension LibraryTransactions where Self: LibraryStore {
    public func addBook(_ book: Book, source: Source, tags: [String], text: PagesText?, now: Date) async throws
        -> AddedBook
    {
        try await repository.write { store in
            var source = source
            if var existing = try store.first(Query<Book>().filter(Book.Fields.sha256 == book.sha256)) {
                let id = existing.id ?? 0
                source.bookId = id
                try store.upsert(&source)
                try store.addTags(tags, toBook: id, now: now)
                if (existing.password ?? "").isEmpty, let password = book.password, !password.isEmpty {
                    existing.password = password
                    try store.update(existing)
                }
                if existing.indexedAt == nil, let text {
                    try storeText(text, for: &existing, store, now: now)
                }
                return AddedBook(book: existing, existed: true)
            }
            var new = book
            new.citationKey = try store.unusedCitationKey(for: new)
            try store.insert(&new)
            let id = new.id ?? 0
            var version = Version(
                bookId: id, sha256: new.sha256, bytes: new.bytes, pages: new.pages, source: source.url, now: now)
            try store.insert(&version)
            if let text { try storeText(text, for: &new, store, now: now) }
            source.bookId = id
            try store.insert(&source)
            try store.addTags(tags, toBook: id, now: now)
            return AddedBook(book: new, existed: false)
        }
    }

    public func addTags(_ names: [String], toBook id: Int64, now: Date) async throws {
        guard !names.isEmpty else { return }
        try await repository.write { store in try store.addTags(names, toBook: id, now: now) }
    }

    public func updateBook(
        id: Int64, addTags: [String], removeTags: [String], now: Date,
        _ change: @escaping @Sendable (inout Book) -> Void
    ) async throws -> Book {
        try await repository.write { store in
            guard var book = try store.find(Book.self, id: id) else { throw MarginError.bookNotFound(String(id)) }
            let old = book
            change(&book)
            try store.remakeCitationKey(of: &book, was: old)
            book.updatedAt = now
            try store.update(book)
            try store.addTags(addTags, toBook: id, now: now)
            for name in removeTags {
                try store.delete(Query<Tag>().filter(Tag.Fields.bookId == id && Tag.Fields.name == name))
            }
            return book
        }
    }

    public func touchBook(id: Int64, at date: Date) async throws -> Book? {
        try await repository.write { store in
            guard var book = try store.find(Book.self, id: id) else { return nil }
            book.openedAt = date
            try store.update(book)
            return book
        }
    }

    public func removeBooks(ids: [Int64], confirmed: Bool) async throws -> [RemovedBook] {
        try await repository.write { store in
            var removed = [RemovedBook]()
            for id in ids {
                guard let book = try store.find(Book.self, id: id) else { continue }
                let entry = RemovedBook(
                    book: book,
                    sources: try store.fetch(
                        Query<Source>().filter(Source.Fields.bookId == id).sorted(by: Source.Fields.addedAt.ascending)
                    ).map(\.url),
                    tags: try store.fetch(
                        Query<Tag>().filter(Tag.Fields.bookId == id).sorted(by: Tag.Fields.name.ascending)
                    ).map(\.name),
                    bookmarks: try store.count(Query<Bookmark>().filter(Bookmark.Fields.bookId == id)),
                    highlights: try store.count(Query<Highlight>().filter(Highlight.Fields.bookId == id)),
                    memos: try store.count(Query<Memo>().filter(Memo.Fields.bookId == id)),
                    files: Set(
                        try store.fetch(Query<Version>().filter(Version.Fields.bookId == id)).map(\.sha256)
                            + [book.sha256]))
                if !confirmed, entry.bookmarks + entry.highlights + entry.memos > 0 {
                    throw MarginError.removalNeedsConfirmation(
                        title: book.title, highlights: entry.highlights, memos: entry.memos, bookmarks: entry.bookmarks)
                }
                // A team library keeps a book others annotated (its row-level security does).
                guard try store.delete(book) == 1 else { throw MarginError.annotatedByOthers(title: book.title) }
                removed.append(entry)
            }
            return removed
        }
    }

    public func replaceText(ofBook id: Int64, with text: PagesText, now: Date) async throws -> Book? {
        try await repository.write { store in
            guard var book = try store.find(Book.self, id: id) else { return nil }
            try storeText(text, for: &book, store, now: now)
            return book
        }
    }

    public func updateMetadata(
        ofBook id: Int64, now: Date, _ change: @escaping @Sendable (any StoreReader, inout Book) throws -> Void
    ) async throws -> Book {
        try await repository.write { store in
            guard var book = try store.find(Book.self, id: id) else { throw MarginError.bookNotFound(String(id)) }
            let old = book
            try change(store, &book)
            try store.remakeCitationKey(of: &book, was: old)
            book.updatedAt = now
            try store.update(book)
            return book
        }
    }

    public func recordCheck(of source: Source) async throws {
        try await repository.write { store in try store.update(source) }
    }

    public func addVersion(_ version: Version, checked source: Source?, serving change: VersionChange?) async throws {
        try await repository.write { store in
            var version = version
            try store.upsert(&version)
            if let source { try store.update(source) }
            guard let change else { return }
            let id = version.bookId
            guard var book = try store.find(Book.self, id: id) else { throw MarginError.bookNotFound(String(id)) }
            let now = Date()
            book.sha256 = version.sha256
            book.bytes = version.bytes
            book.pages = version.pages
            book.updatedAt = now
            try storeText(change.text, for: &book, store, now: now)
            for highlight in change.highlights { try store.update(highlight) }
            // Bookmarks and memos follow their page's text; a page that can't be found keeps its
            // number (within the new page count).
            func moved(_ page: Int) -> Int { min(max(1, change.pageMap[page] ?? page), max(1, version.pages)) }
            for var bookmark in try store.fetch(Query<Bookmark>().filter(Bookmark.Fields.bookId == id)) {
                let page = moved(bookmark.page)
                guard page != bookmark.page else { continue }
                bookmark.page = page
                try store.update(bookmark)
            }
            for var memo in try store.fetch(Query<Memo>().filter(Memo.Fields.bookId == id)) {
                guard let old = memo.page, moved(old) != old else { continue }
                memo.page = moved(old)
                try store.update(memo)
            }
        }
    }

    public func addBookmark(_ bookmark: Bookmark) async throws -> Bookmark {
        try await insertAll([bookmark])[0]
    }

    public func addMemo(_ memo: Memo) async throws -> Memo {
        try await insertAll([memo])[0]
    }

    public func addHighlights(_ highlights: [Highlight]) async throws -> [Highlight] {
        try await insertAll(highlights)
    }

    public func addNewAnnotations(highlights: [Highlight], memos: [Memo]) async throws -> (highlights: Int, memos: Int)
    {
        try await repository.write { store in
            (try insertNew(highlights, store), try insertNew(memos, store))
        }
    }

    public func updateMemo(id: Int64, now: Date, _ change: @escaping @Sendable (inout Memo) -> Void) async throws
        -> Memo
    {
        try await modify(Memo.self, id: id) { memo in
            change(&memo)
            memo.updatedAt = now
        }
    }

    public func updateHighlight(
        id: Int64, now: Date, _ change: @escaping @Sendable (inout Highlight) -> Void
    ) async throws -> Highlight {
        try await modify(Highlight.self, id: id) { highlight in
            change(&highlight)
            highlight.updatedAt = now
        }
    }

    public func updateBookmark(
        id: Int64, now: Date, _ change: @escaping @Sendable (inout Bookmark) -> Void
    ) async throws -> Bookmark {
        try await modify(Bookmark.self, id: id) { bookmark in
            change(&bookmark)
            bookmark.updatedAt = now
        }
    }

    public func removeAnnotation<M: Model>(_ type: M.Type, id: Int64) async throws -> M {
        try await repository.write { store in
            guard let model = try store.find(M.self, id: id) else { throw try notFound(M.self, id: id, store) }
            try checkOwned(model, by: store)
            try store.delete(model)
            return model
        }
    }

    // MARK: Parts of the transactions above

    private func insertAll<M: Model>(_ models: [M]) async throws -> [M] {
        try await repository.write { store in
            try models.map { model in
                var copy = model
                try store.insert(&copy)
                return copy
            }
        }
    }

    private func modify<M: Model>(
        _ type: M.Type, id: Int64, _ change: @escaping @Sendable (inout M) -> Void
    ) async throws -> M {
        try await repository.write { store in
            guard var model = try store.find(M.self, id: id) else { throw try notFound(M.self, id: id, store) }
            try checkOwned(model, by: store)
            change(&model)
            try store.update(model)
            return model
        }
    }
}

/// An annotation this user can't change: another user's shared one says whose it is; anything
/// else (absent, or another user's private one) is not found.
private func notFound<M: Model>(_ type: M.Type, id: Int64, _ store: any StoreReader) throws -> MarginError {
    if let owner = try store.hiddenAnnotationOwner(M.entity, id: id) {
        return .notYours(kind: M.entity, id: id, owner: owner)
    }
    return .annotationNotFound(kind: M.entity, id: id)
}

/// Refuses to change another user's annotation in a team library (the database refuses it too,
/// by row-level security; this says so in words).
private func checkOwned<M: Model>(_ model: M, by store: any StoreReader) throws {
    guard let annotation = model as? any Annotation, let owner = annotation.owner, let user = store.user,
        owner != user
    else { return }
    throw MarginError.notYours(kind: M.entity, id: model.id ?? 0, owner: owner)
}

extension StoreReader {
    /// A citation key made from placeholders (no author; a title that is the file's name or an
    /// identifier) is made again when real metadata replaces them; a key made from real
    /// metadata, or chosen by the user, stays.
    public func remakeCitationKey(of book: inout Book, was old: Book) throws {
        guard let key = old.citationKey, book.citationKey == key, let id = book.id else { return }
        let oldBase = CitationKey.base(author: old.author, year: old.year, title: old.title)
        guard key.hasPrefix(oldBase), key.dropFirst(oldBase.count).allSatisfy({ $0.isASCII && $0.isLowercase })
        else { return }
        let fileTitles = Set(
            try fetch(Query<Source>().filter(Source.Fields.bookId == id)).flatMap {
                Identifiers.fileTitles(ofSource: $0.url)
            })
        func isPlaceholder(_ title: String) -> Bool {
            Identifiers.isIdentifierTitle(title) || fileTitles.contains(title)
        }
        let better =
            (old.author == nil && book.author != nil) || (isPlaceholder(old.title) && !isPlaceholder(book.title))
        guard better, CitationKey.base(author: book.author, year: book.year, title: book.title) != oldBase else {
            return
        }
        var fresh = book
        fresh.citationKey = nil
        book.citationKey = try unusedCitationKey(for: fresh)
    }

    /// A citation key for `book` no other book of the library has: `CitationKey.base`, with
    /// "a", "b", … appended when taken. The book's own key when it has one no other book has.
    public func unusedCitationKey(for book: Book) throws -> String {
        if let key = book.citationKey {
            let holder = try first(Query<Book>().filter(Book.Fields.citationKey == key))
            if holder == nil || holder?.uuid == book.uuid || holder?.sha256 == book.sha256 { return key }
        }
        let base = CitationKey.base(author: book.author, year: book.year, title: book.title)
        let taken = Set(
            try fetch(Query<Book>().filter(Book.Fields.citationKey.hasPrefix(base))).compactMap(\.citationKey))
        return CitationKey.first(base, notIn: taken)
    }
}

extension StoreWriter {
    /// Adds the tags (already normalized) the book hasn't got, in the caller's transaction; the
    /// store compares tag names case-insensitively.
    public func addTags(_ names: [String], toBook bookId: Int64, now: Date) throws {
        for name in names {
            let existing = try first(Query<Tag>().filter(Tag.Fields.bookId == bookId && Tag.Fields.name == name))
            guard existing == nil else { continue }
            var tag = Tag(bookId: bookId, name: name, now: now)
            try insert(&tag)
        }
    }
}

/// Replaces the book's pages with `text` and marks it indexed (the caller's transaction).
private func storeText(_ text: PagesText, for book: inout Book, _ store: any StoreWriter, now: Date) throws {
    let id = book.id ?? 0
    try store.delete(Query<PageText>().filter(PageText.Fields.bookId == id))
    for var page in text.pages {
        page.bookId = id
        try store.insert(&page)
    }
    if var guide = text.guide {
        guide.bookId = id
        try store.upsert(&guide)
    }
    book.textlessPages = text.textless
    book.indexedAt = now
    try store.update(book)
}

/// Inserts the models whose UUID the store doesn't hold; returns how many.
private func insertNew<M: Model>(_ models: [M], _ store: any StoreWriter) throws -> Int {
    var added = 0
    for model in models where try store.first(Query<M>().filter(Field<M, UUID>("uuid") == model.uuid)) == nil {
        var copy = model
        try store.insert(&copy)
        added += 1
    }
    return added
}

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
