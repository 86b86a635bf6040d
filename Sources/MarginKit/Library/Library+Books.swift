import Foundation
import MarginCore

/// Orders for `list`.
public enum BookSort: String, CaseIterable, Sendable {
    case added, title, author, opened
}

/// Which books `list` shows.
public struct BookFilter: Sendable {
    /// A folder; its subfolders (`folder/…`) match too.
    public var folder: String?
    public var tag: String?
    public var sort: BookSort = .added
    public var limit: Int?
    public var offset: Int?
    /// Whether each book's sources and cached file are looked up (a table of books shows
    /// neither; without them `sources` is empty, `cached` false and `file` nil).
    public var files: Bool

    public init(
        folder: String? = nil, tag: String? = nil, sort: BookSort = .added, limit: Int? = nil, offset: Int? = nil,
        files: Bool = true
    ) {
        self.folder = folder
        self.tag = tag
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.files = files
    }
}

/// Changes `edit` makes to a book; nil leaves a field as it is, "" clears folder, author or memo.
public struct BookChanges: Sendable {
    public var title: String?
    public var author: String?
    public var folder: String?
    public var memo: String?
    public var addTags: [String] = []
    public var removeTags: [String] = []
    /// The language its words are stemmed in (`Languages.known`), or "auto" to tell it from the
    /// text again.
    public var lang: String?

    public init(
        title: String? = nil, author: String? = nil, folder: String? = nil, memo: String? = nil, addTags: [String] = [],
        removeTags: [String] = []
    ) {
        self.title = title
        self.author = author
        self.folder = folder
        self.memo = memo
        self.addTags = addTags
        self.removeTags = removeTags
    }

    public var isEmpty: Bool {
        title == nil && author == nil && folder == nil && memo == nil && addTags.isEmpty && removeTags.isEmpty
            && lang == nil
    }
}

/// What removing books took with it.
public struct RemovalReport: Sendable, Encodable {
    public struct Removed: Sendable, Encodable {
        public var book: BookInfo
        public var bookmarks: Int
        public var highlights: Int
        public var memos: Int
    }

    public var removed: [Removed]
}

extension Library {
    /// The books matching the filter, in the requested order.
    public func list(_ filter: BookFilter = BookFilter()) async throws -> [BookInfo] {
        try await repository.read { store in
            var query = try self.booksIn(folder: filter.folder, tag: filter.tag, store)
            switch filter.sort {
            case .added: query = query.sorted(by: Book.Fields.addedAt.ascending, Book.Fields.id.ascending)
            case .title: query = query.sorted(by: Book.Fields.title.ascending, Book.Fields.id.ascending)
            case .author: query = query.sorted(by: Book.Fields.author.ascending, Book.Fields.title.ascending)
            case .opened: query = query.sorted(by: Book.Fields.openedAt.descending, Book.Fields.id.ascending)
            }
            query = query.limit(filter.limit, offset: filter.offset)
            let everyBook = query.predicate == nil && filter.limit == nil && (filter.offset ?? 0) == 0
            return try self.infos(store.fetch(query), store, everyBook: everyBook, files: filter.files)
        }
    }

    /// The books in `folder` (or a folder in it) with `tag`, each when given.
    func booksIn(folder: String?, tag: String?, _ store: any StoreReader) throws -> Query<Book> {
        var query = Query<Book>()
        if let trimmed = normalizedFolder(folder) {
            query = query.filter(Book.Fields.folder == trimmed || Book.Fields.folder.hasPrefix(trimmed + "/"))
        }
        if let tag = normalizedTags([tag ?? ""]).first {
            let ids = try store.fetch(Query<Tag>().filter(Tag.Fields.name == tag)).map(\.bookId)
            query = query.filter(Book.Fields.id.isIn(ids))
        }
        return query
    }

    /// The most recently opened books, newest first.
    public func recent(limit: Int = 10) async throws -> [BookInfo] {
        try await repository.read { store in
            let query = Query<Book>().filter(!Book.Fields.openedAt.isNull)
                .sorted(by: Book.Fields.openedAt.descending).limit(limit)
            return try self.infos(store.fetch(query), store)
        }
    }

    /// Applies `changes` to a book in one transaction.
    public func edit(_ book: Book, _ changes: BookChanges, now: Date = Date()) async throws -> BookInfo {
        var normalized = changes
        normalized.title = changes.title.map(singleLine)
        normalized.author = changes.author.map(singleLine)
        normalized.memo = changes.memo.map(normalizedLineEnds)
        let changes = normalized
        if let title = changes.title, nonEmpty(title) == nil {
            throw MarginError.invalidArgument("a title cannot be empty")
        }
        if let memo = changes.memo { try checkNoteSize(memo, what: "a memo") }
        try checkNoNUL(changes.title, what: "a title")
        try checkNoNUL(changes.author, what: "an author")
        try checkNoNUL(changes.folder, what: "a folder")
        for tag in changes.addTags { try checkNoNUL(tag, what: "a tag") }
        var detected: String?
        if let lang = changes.lang {
            if lang == "auto" {
                let texts = try await repository.read { store in
                    try store.fetch(
                        Query<PageText>().filter(PageText.Fields.bookId == (book.id ?? -1)).sorted(
                            by: PageText.Fields.number.ascending
                        ).limit(200)
                    ).map(\.text)
                }
                detected = Languages.detect(texts)
            } else if !Languages.known.contains(lang) {
                throw MarginError.invalidArgument(Languages.unknown(lang) + ", or auto (told from the text)")
            }
        }
        let told = detected
        let updated = try await database.updateBook(
            id: book.id ?? -1, addTags: normalizedTags(changes.addTags), removeTags: normalizedTags(changes.removeTags),
            now: now
        ) { current in
            // A title or author set by hand is the user's: what is found later keeps off it.
            if let title = changes.title {
                current.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
                if !current.userFields.contains("title") { current.userFields.append("title") }
            }
            if let author = changes.author {
                current.author = nonEmpty(author)
                if !current.userFields.contains("author") { current.userFields.append("author") }
            }
            if let folder = changes.folder { current.folder = normalizedFolder(folder) }
            if let memo = changes.memo { current.memo = memo.isEmpty ? nil : memo }
            // A language set by hand stays through a refresh; "auto" gives it back to the text.
            if let lang = changes.lang {
                current.lang = lang == "auto" ? told : lang
                current.userFields.removeAll { $0 == "lang" }
                if lang != "auto" { current.userFields.append("lang") }
            }
        }
        return try await info(updated)
    }

    /// Removes books (with their sources, tags and annotations) and their cached files. A book
    /// with annotations goes only when `confirmed`; otherwise nothing is removed.
    public func remove(_ books: [Book], confirmed: Bool) async throws -> RemovalReport {
        let gone = try await database.removeBooks(ids: books.compactMap(\.id), confirmed: confirmed)
        let removed = gone.map { entry in
            RemovalReport.Removed(
                book: info(entry.book, sources: entry.sources, tags: entry.tags), bookmarks: entry.bookmarks,
                highlights: entry.highlights, memos: entry.memos)
        }
        let files = gone.reduce(into: Set<String>()) { $0.formUnion($1.files) }
        // Files go only after the database no longer points at them, and only those no other
        // book still uses (as its current file or an old version).
        try await removeUnreferencedFiles(files)
        return RemovalReport(removed: removed)
    }

    /// Removes the cached files of these SHA-256s that no book or version refers to.
    func removeUnreferencedFiles(_ shas: Set<String>) async throws {
        guard !shas.isEmpty else { return }
        let list = Array(shas)
        let used = try await repository.read { store in
            Set(try store.fetch(Query<Book>().filter(Book.Fields.sha256.isIn(list))).map(\.sha256))
                .union(try store.fetch(Query<Version>().filter(Version.Fields.sha256.isIn(list))).map(\.sha256))
        }
        for sha in shas where !used.contains(sha) { blobs.remove(sha) }
    }

    /// Every book, for `rm --all`.
    public func allBooks() async throws -> [Book] {
        try await repository.read { store in try store.fetch(Query<Book>().sorted(by: Book.Fields.id.ascending)) }
    }

    /// The cached PDF's path. Commands that only read use this: they never fetch, and a missing
    /// file is an error that says so (`ensureCached` fetches).
    public func cachedFile(_ book: Book) throws -> String {
        if blobs.contains(book.sha256) {
            do {
                return try blobs.checkedPath(for: book.sha256)
            } catch MarginError.corruptStoredFile(let sha256, let found, _) {
                throw MarginError.corruptStoredFile(sha256: sha256, found: found, title: book.title)
            }
        }
        throw MarginError.fileNotCached(title: book.title, book: book.id ?? 0)
    }

    /// The cached PDF's path, fetching it again from the book's sources if it is missing.
    public func ensureCached(
        _ book: Book, maxSize: Int64? = nil, timeout: Double? = nil, progress: (any DownloadProgress)? = nil
    ) async throws -> String {
        if blobs.contains(book.sha256) {
            do {
                return try blobs.checkedPath(for: book.sha256)
            } catch MarginError.corruptStoredFile(let sha256, let found, _) {
                throw MarginError.corruptStoredFile(sha256: sha256, found: found, title: book.title)
            }
        }
        let sources = try await repository.read { store in
            try store.fetch(Query<Source>().filter(Source.Fields.bookId == (book.id ?? -1)))
        }
        guard !sources.isEmpty else {
            throw MarginError.noSource(title: book.title)
        }
        var fetcher = Fetcher(store: blobs, maxSize: maxSize ?? max(book.bytes, 1 << 30), downloader: downloader)
        fetcher.progress = progress
        fetcher.timeout = timeout
        let result = await refetch(book, from: sources, fetcher: fetcher)
        return try result.get()
    }

    private func refetch(_ book: Book, from sources: [Source], fetcher: Fetcher) async -> Result<String, MarginError> {
        var reasons = [String]()
        for source in sources {
            do {
                let kind = try InputKind(source.url)
                let staged: StagedFile
                switch kind {
                case .remote(let url): staged = try await fetcher.stageDownload(url: url)
                case .local(let path): staged = try fetcher.stageLocal(path: path)
                }
                defer { try? FileManager.default.removeItem(atPath: staged.path) }
                guard staged.sha256 == book.sha256 else {
                    reasons.append("\(source.url) now has different content")
                    continue
                }
                _ = try blobs.place(staged.path, sha256: staged.sha256)
                return .success(blobs.path(for: book.sha256))
            } catch {
                reasons.append(error.localizedDescription)
            }
        }
        return .failure(.notCached(title: book.title, reason: reasons.joined(separator: "; ")))
    }
}
