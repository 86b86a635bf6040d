import Foundation

// The writes every store shares: one transaction each, over the repository port.

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
        try await repository.write { store in try store.noteOpened(bookId: id, at: date) }
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

    public func keepRecognized(_ pages: [OCRPage], of sha256: String) async throws {
        guard !pages.isEmpty else { return }
        try await repository.write { store in
            for var page in pages {
                page.id = nil
                page.sha256 = sha256
                try store.upsert(&page)
            }
        }
    }

    public func checkMayKeepRecognized(of sha256: String) async throws {
        // A page kept and taken back: the store says no as it would to the real pages.
        do {
            try await repository.write { store in
                var probe = OCRPage(sha256: sha256, page: 0, words: [], engine: "", languages: "", dpi: 0)
                try store.upsert(&probe)
                throw ProbeTakenBack()
            }
        } catch is ProbeTakenBack {}
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
            let oldCount = book.pages
            book.sha256 = version.sha256
            book.bytes = version.bytes
            book.pages = version.pages
            book.updatedAt = now
            try storeText(change.text, for: &book, store, now: now)
            // Bookmarks and memos follow their page's text; a page that can't be found keeps its
            // number (within the new page count).
            let oldPages = Set(change.pageMap.keys).union(1...max(1, oldCount))
            var moved = [Int: Int]()
            for page in oldPages {
                let new = min(max(1, change.pageMap[page] ?? page), max(1, version.pages))
                if new != page { moved[page] = new }
            }
            try store.moveAnnotations(bookId: id, highlights: change.highlights, moved: moved)
        }
    }

    public func addAnnotations<M: Model>(_ annotations: [M], of bookId: Int64, openedAt: Date?) async throws
        -> (saved: [M], guide: BookGuide?)
    {
        try await repository.write { store in
            if let openedAt { _ = try store.noteOpened(bookId: bookId, at: openedAt) }
            return try saved(annotations, of: bookId, store)
        }
    }

    public func addAnnotations<M: Model>(
        toBook bookId: Int64, openedAt: Date, _ make: @escaping @Sendable (Book) throws -> [M]
    ) async throws -> (saved: [M], guide: BookGuide?)? {
        try await repository.write { store in
            guard let book = try store.noteOpened(bookId: bookId, at: openedAt) else { return nil }
            return try saved(try make(book), of: bookId, store)
        }
    }

    /// Inserts a book's new annotations (each gets its id) and reads the book's guide, to show
    /// them with.
    private func saved<M: Model>(_ annotations: [M], of bookId: Int64, _ store: any StoreWriter) throws
        -> (saved: [M], guide: BookGuide?)
    {
        let saved = try annotations.map { annotation in
            var copy = annotation
            try store.insert(&copy)
            return copy
        }
        return (saved, try store.first(Query<BookGuide>().filter(BookGuide.Fields.bookId == bookId)))
    }

    public func addBookmark(_ bookmark: Bookmark, openedAt: Date? = nil) async throws -> Bookmark {
        try await addAnnotations([bookmark], of: bookmark.bookId, openedAt: openedAt).saved[0]
    }

    public func addMemo(_ memo: Memo, openedAt: Date? = nil) async throws -> Memo {
        try await addAnnotations([memo], of: memo.bookId, openedAt: openedAt).saved[0]
    }

    public func addHighlights(_ highlights: [Highlight], openedAt: Date? = nil) async throws -> [Highlight] {
        guard let first = highlights.first else { return [] }
        return try await addAnnotations(highlights, of: first.bookId, openedAt: openedAt).saved
    }

    public func addNewAnnotations(highlights: [Highlight], memos: [Memo]) async throws -> (highlights: Int, memos: Int)
    {
        try await repository.write { store in
            (try insertNew(highlights, store), try insertNew(memos, store))
        }
    }

    public func updateAnnotation<M: Annotation>(
        _ type: M.Type, id: Int64, now: Date, _ change: @escaping @Sendable (inout M) -> Void
    ) async throws -> M {
        try await modify(M.self, id: id) { annotation in
            change(&annotation)
            annotation.updatedAt = now
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
    // Pages read before (found in the store, so with an id) are there already.
    for var page in text.ocr where page.id == nil || page.sha256 != book.sha256 {
        page.id = nil
        page.sha256 = book.sha256
        try store.upsert(&page)
    }
    // Pages where recognition found nothing legible count as textless, not as recognized.
    let read = text.ocr.filter { $0.confidence > 0 }
    book.ocrPages = read.count
    book.ocrConfidence = read.isEmpty ? nil : read.map(\.confidence).reduce(0, +) / Double(read.count)
    book.textlessPages = text.textless
    if !book.userFields.contains("lang") { book.lang = Languages.detect(text.pages.map(\.text)) }
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

/// Thrown to roll back a write made only to hear whether the store accepts it.
private struct ProbeTakenBack: Error {}
