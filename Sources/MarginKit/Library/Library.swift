import Foundation
import MarginCore

/// A user's library: the database of books and annotations plus the cache of PDFs.
/// Every command goes through one of these; none touches SQL or the cache layout itself.
public final class Library: Sendable {
    public let paths: LibraryPaths
    public let database: any LibraryStore
    /// The cached PDFs.
    public let blobs: any BlobStore
    /// Settings from outside the command line, read once by the executable.
    public let configuration: Configuration
    /// The only way the use cases reach the network.
    let downloader: any Downloader
    /// True for a library that isn't there yet, read as an empty one (`init(absentAt:)`).
    public let isAbsent: Bool
    /// Opened documents, kept for the life of the process (the memory tier of the cache).
    let documents = DocumentCache()
    var repository: any Repository { database.repository }

    /// Opens the library at `paths`, creating its folders (user-only); `openStore` opens (and
    /// upgrades) the database at the path it is given — the backend is the caller's choice.
    public init(
        paths: LibraryPaths, configuration: Configuration, downloader: any Downloader,
        openStore: (_ path: String) throws -> any LibraryStore
    ) throws {
        if !paths.location.isServer { try makeFolder((paths.database as NSString).deletingLastPathComponent) }
        self.paths = paths
        self.configuration = configuration
        self.downloader = downloader
        self.isAbsent = false
        let local = ContentStore(root: paths.cache)
        try local.prepare()
        let database = try openStore(paths.database)
        self.database = database
        // A store that keeps the PDFs itself (a team's database) has this cache hold local copies.
        self.blobs = database.fileKeeper?.blobStore(caching: local) ?? local
        // What processes that were killed or failed left behind is cleaned by the next one.
        blobs.removeStaleTemporaries()
    }

    /// Whether the library can't be written (a read-only mount, or no permission).
    public var isReadOnly: Bool {
        guard paths.database != ":memory:", !paths.location.isServer else { return false }
        let folder = (paths.database as NSString).deletingLastPathComponent
        return access(paths.database, W_OK) != 0 || access(folder, W_OK) != 0
    }

    /// A library over a store already open (in memory, for tests) and the given cache folder.
    public init(
        store database: any LibraryStore, cache: String, keyFile: String,
        configuration: Configuration = Configuration(),
        downloader: any Downloader
    ) throws {
        self.paths = LibraryPaths(database: database.path ?? ":memory:", cache: cache, keyFile: keyFile)
        self.configuration = configuration
        self.downloader = downloader
        self.blobs = ContentStore(root: cache)
        self.isAbsent = false
        try blobs.prepare()
        self.database = database
    }

    /// A library that isn't there (no database at `paths`), seen as an empty one over `store` (in
    /// memory): a command that only reads answers from it and creates nothing on disk.
    public init(
        absentAt paths: LibraryPaths, store database: any LibraryStore, configuration: Configuration,
        downloader: any Downloader
    ) {
        self.paths = paths
        self.configuration = configuration
        self.downloader = downloader
        self.blobs = ContentStore(root: paths.cache)
        self.database = database
        self.isAbsent = true
    }

    /// Finds the one book a selector names: a numeric id, a unique SHA-256 prefix (4+ hex
    /// digits), or a unique case-insensitive part of the title.
    public func resolve(_ selector: String) async throws -> Book {
        let trimmed = selector.trimmingWhitespace()
        guard !trimmed.isEmpty else {
            throw MarginError.invalidArgument("an empty book selector; give an id, SHA-256 prefix or part of a title")
        }
        return try await repository.read { store in
            if let id = Int64(trimmed), let book = try store.find(Book.self, id: id) {
                return book
            }
            let lower = trimmed.lowercased()
            if lower.count >= 4, lower.allSatisfy(\.isHexDigit) {
                let matches = try store.fetch(Query<Book>().filter(Book.Fields.sha256.hasPrefix(lower)).limit(20))
                if matches.count == 1 { return matches[0] }
                if matches.count > 1 { throw MarginError.ambiguousBook(selector, candidates: describe(matches)) }
            }
            // Titles are compared folded (case, accents, width), as search compares text.
            let wanted = folded(trimmed)
            let candidates = try store.fetch(Query<Book>().sorted(by: Book.Fields.id.ascending)).compactMap {
                book -> (book: Book, title: String)? in
                let title = folded(book.title)
                return title.contains(wanted) ? (book, title) : nil
            }
            let matches = candidates.map(\.book)
            if matches.count == 1 { return matches[0] }
            if matches.count > 1 {
                // An exact title wins over titles that merely contain it.
                let exact = candidates.filter { $0.title == wanted }
                if exact.count == 1 { return exact[0].book }
                throw MarginError.ambiguousBook(selector, candidates: describe(matches))
            }
            if try store.count(Query<Book>()) == 0 { throw MarginError.emptyLibrary }
            throw MarginError.bookNotFound(selector)
        }
    }

    /// The books several selectors name, each once, in order; throws at the first that names
    /// no book or several.
    public func resolveAll(_ selectors: [String]) async throws -> [Book] {
        var books = [Book]()
        for selector in selectors {
            let book = try await resolve(selector)
            if !books.contains(where: { $0.id == book.id }) { books.append(book) }
        }
        return books
    }

    /// The full view of a book: its sources, tags and cache state.
    public func info(_ book: Book) async throws -> BookInfo {
        try await repository.read { store in try self.info(book, store) }
    }

    func info(_ book: Book, _ reader: any StoreReader) throws -> BookInfo {
        guard book.id != nil else { throw MarginError.bookNotFound(book.title) }
        return try infos([book], reader)[0]
    }

    /// The views of many books, with two queries (their sources, their tags) whatever their number.
    /// `everyBook`: `books` are all the library's books, so their sources and tags are all
    /// there are (read without a list of ids for the database to match). `files`: false leaves
    /// out the sources and whether each PDF is cached (a stat a book), for views that show
    /// neither (`sources` empty, `cached` false, `file` nil).
    func infos(_ books: [Book], _ reader: any StoreReader, everyBook: Bool = false, files: Bool = true) throws
        -> [BookInfo]
    {
        let ids = books.compactMap(\.id)
        var sources = [Int64: [String]]()
        var sourceQuery = Query<Source>().sorted(by: Source.Fields.addedAt.ascending, Source.Fields.id.ascending)
        var tagQuery = Query<Tag>().sorted(by: Tag.Fields.name.ascending)
        if !everyBook {
            sourceQuery = sourceQuery.filter(Source.Fields.bookId.isIn(ids))
            tagQuery = tagQuery.filter(Tag.Fields.bookId.isIn(ids))
        }
        if files {
            for source in try reader.fetch(sourceQuery) {
                sources[source.bookId, default: []].append(source.url)
            }
        }
        var tags = [Int64: [String]]()
        for tag in try reader.fetch(tagQuery) {
            tags[tag.bookId, default: []].append(tag.name)
        }
        let cached = files ? blobs.cachedHere(books.map(\.sha256)) : []
        return books.map { book in
            info(
                book, sources: book.id.flatMap { sources[$0] } ?? [], tags: book.id.flatMap { tags[$0] } ?? [],
                cached: cached.contains(book.sha256))
        }
    }

    /// The view of a book whose sources (URLs as stored) and tags are known.
    func info(_ book: Book, sources: [String], tags: [String], cached: Bool? = nil) -> BookInfo {
        let cached = cached ?? blobs.cachedHere([book.sha256]).contains(book.sha256)
        return BookInfo(
            book: book, sources: sources.map(redactedURL), tags: tags, cached: cached,
            file: cached ? blobs.path(for: book.sha256) : nil)
    }

    /// Records that the user opened the book now (for `recent`).
    @discardableResult
    public func touch(_ book: Book, now: Date = Date()) async throws -> Book {
        // Reading a read-only library works; it just isn't remembered.
        guard !isReadOnly else { return book }
        do {
            return try await database.touchBook(id: book.id ?? -1, at: now) ?? book
        } catch StoreError.unreachable {
            // The change it follows is stored; only when the book was last opened is not.
            return book
        }
    }
}

/// "12  Title — Author" for lists of candidates.
func describe(_ book: Book) -> String {
    let author = book.author.map { " — \($0)" } ?? ""
    return "\(book.id ?? 0)  \(book.title)\(author)  [\(book.sha256.prefix(12))]"
}

/// Candidates, one a line, in columns: ids right-aligned, SHA-256 prefixes lined up after the
/// titles (by the columns a terminal shows).
func describe(_ books: [Book]) -> [String] {
    let ids = books.map { String($0.id ?? 0) }
    let names = books.map { book in book.title + (book.author.map { " — \($0)" } ?? "") }
    let idWidth = ids.map(\.count).max() ?? 0
    let nameWidth = names.map(displayWidth).max() ?? 0
    return zip(books, zip(ids, names)).map { book, parts in
        String(repeating: " ", count: idWidth - parts.0.count) + parts.0 + "  " + parts.1
            + String(repeating: " ", count: nameWidth - displayWidth(parts.1)) + "  [\(book.sha256.prefix(12))]"
    }
}
